# Caffe import: the importer's fuzzer (same sanitized compiler archive as the spec fuzzer,
# mk/golden.mk), and the LeNet training check alone (it is part of make test).

FUZZ_CAFFE_BIN := $(BUILD)/fuzz/fuzz_caffe
$(FUZZ_CAFFE_BIN): tests/fuzz/fuzz_caffe.c $(FUZZ_LIB) $(COMPILER_HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_LIB) -o $@ -lm

.PHONY: fuzz-caffe test-caffe-train
fuzz-caffe: $(FUZZ_CAFFE_BIN)
TEST_EXTRA_DEPS += $(FUZZ_CAFFE_BIN)

# BVLC's MNIST example, imported as it is, trains from LMDBs of Fashion-MNIST to >= 90% test top-1.
test-caffe-train: all
	BUILD=$(BUILD) bash tests/caffe/lenet_train_test.sh
