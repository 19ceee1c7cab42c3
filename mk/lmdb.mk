# Caffe's files: the runtime's LMDB reader (runtime/data/lmdb_datum.c) decodes Datum records,
# and its caffemodel reader and writer (runtime/data/caffemodel.c) NetParameters, with
# runtime/data/caffe_datum.proto compiled by protoc-c into build/gen (its code is
# caffe_proto.c's object); `trainc import caffe` counts a database's records
# (compiler/import/import_caffe_data.c) and `trainc export --format caffemodel` writes one.
# WITH_LMDB=0 (a machine without liblmdb-dev, libprotobuf-c-dev and protobuf-c-compiler, such
# as a GPU machine set up by tests/gpu/device_prep.sh) builds them without these: the readers
# then refuse with a message, and the importer leaves data.train_samples to the user.
WITH_LMDB ?= 1
CAFFE_PB_SRCS := runtime/data/lmdb_datum runtime/data/caffe_proto runtime/data/caffemodel runtime/data/caffe_datum
CAFFE_PB_RT_OBJS := $(foreach s,$(CAFFE_PB_SRCS),$(BUILD)/obj/$(s).o $(BUILD)/asan/$(s).o)
CAFFE_PB_C_OBJS := $(foreach s,$(CAFFE_PB_SRCS),$(BUILD)/cobj/$(s).o)
CAFFE_PB_COMPILER := $(BUILD)/cobj/compiler/import/import_caffe_data.o $(BUILD)/cobj/compiler/emit/init_match.o \
                     $(BUILD)/cobj/compiler/cmd/export.o $(BUILD)/cobj/compiler/cmd/build.o
# Switching WITH_LMDB in one build directory rebuilds what it changes (as .with-mpi does).
$(BUILD)/.with-lmdb: FORCE
	@mkdir -p $(dir $@)
	@echo '$(WITH_LMDB)' | cmp -s - $@ || echo '$(WITH_LMDB)' > $@
$(CAFFE_PB_RT_OBJS) $(CAFFE_PB_C_OBJS) $(CAFFE_PB_COMPILER): $(BUILD)/.with-lmdb
# trainc probes a Data layer's database (its record count and image shape) with the reader,
# and writes caffemodels with the writer (stubs that say why not, WITH_LMDB=0)
$(TRAINC): $(CAFFE_PB_C_OBJS)
ifeq ($(WITH_LMDB),1)
LMDB_GEN := $(BUILD)/gen/caffe_datum.pb-c.c $(BUILD)/gen/caffe_datum.pb-c.h
$(LMDB_GEN) &: runtime/data/caffe_datum.proto | deps-check
	@mkdir -p $(BUILD)/gen
	protoc-c --c_out=$(BUILD)/gen --proto_path=runtime/data $<
$(CAFFE_PB_RT_OBJS) $(CAFFE_PB_C_OBJS): $(LMDB_GEN)
$(CAFFE_PB_RT_OBJS) $(CAFFE_PB_C_OBJS): CFLAGS_COMMON += -DRT_WITH_LMDB
$(CAFFE_PB_COMPILER): CFLAGS_COMMON += -DTRAINC_WITH_LMDB
PACK_LIBS += -llmdb -lprotobuf-c
endif
