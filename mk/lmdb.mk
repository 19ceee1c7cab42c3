# Caffe's LMDB databases: the runtime's reader (runtime/data/lmdb_datum.c) decodes Datum
# records with runtime/data/caffe_datum.proto compiled by protoc-c into build/gen, and
# `trainc import caffe` counts a database's records (compiler/import/import_caffe_data.c).
# WITH_LMDB=0 (a machine without liblmdb-dev, libprotobuf-c-dev and protobuf-c-compiler, such
# as a GPU machine set up by tests/gpu/device_prep.sh) builds both without them: the reader
# then refuses with a message, and the importer leaves data.train_samples to the user.
WITH_LMDB ?= 1
# Switching WITH_LMDB in one build directory rebuilds what it changes (as .with-mpi does).
$(BUILD)/.with-lmdb: FORCE
	@mkdir -p $(dir $@)
	@echo '$(WITH_LMDB)' | cmp -s - $@ || echo '$(WITH_LMDB)' > $@
$(BUILD)/obj/runtime/data/lmdb_datum.o $(BUILD)/asan/runtime/data/lmdb_datum.o: $(BUILD)/.with-lmdb
$(BUILD)/cobj/compiler/import/import_caffe_data.o: $(BUILD)/.with-lmdb
ifeq ($(WITH_LMDB),1)
LMDB_GEN := $(BUILD)/gen/caffe_datum.pb-c.c $(BUILD)/gen/caffe_datum.pb-c.h
$(LMDB_GEN) &: runtime/data/caffe_datum.proto | deps-check
	@mkdir -p $(BUILD)/gen
	protoc-c --c_out=$(BUILD)/gen --proto_path=runtime/data $<
$(BUILD)/obj/runtime/data/lmdb_datum.o $(BUILD)/asan/runtime/data/lmdb_datum.o: $(LMDB_GEN)
$(BUILD)/obj/runtime/data/lmdb_datum.o $(BUILD)/asan/runtime/data/lmdb_datum.o: CFLAGS_COMMON += -DRT_WITH_LMDB
$(BUILD)/cobj/runtime/data/lmdb_datum.o: $(LMDB_GEN)
$(BUILD)/cobj/runtime/data/lmdb_datum.o: CFLAGS_COMMON += -DRT_WITH_LMDB
$(BUILD)/cobj/compiler/import/import_caffe_data.o: CFLAGS_COMMON += -DTRAINC_WITH_LMDB
# trainc probes a Data layer's database (its record count and image shape) with the reader
$(TRAINC): $(BUILD)/cobj/runtime/data/lmdb_datum.o
PACK_LIBS += -llmdb -lprotobuf-c
endif
