# Caffe's LevelDB databases (a Data layer's backend LEVELDB, Caffe's default): the runtime's
# reader (runtime/data/leveldb_datum.c) through libleveldb's C API (Debian's libleveldb-dev),
# decoding the records with the LMDB reader's Datum code (so it needs protobuf-c too); trainc
# links it to read a database's shape and record count at import. Trainers link libleveldb
# only when their spec reads one (BIN.src/link_libs.txt). WITH_LEVELDB=0 (the default where
# WITH_LMDB=0) builds without it: the reader and the import then refuse with a message.
# (lmdb.mk, which sets WITH_LMDB, is read after this file: WITH_LMDB is empty here unless given)
WITH_LEVELDB ?= $(or $(WITH_LMDB),1)
LEVELDB_OBJS := $(foreach d,obj asan cobj,$(BUILD)/$(d)/runtime/data/leveldb_datum.o)
LEVELDB_COMPILER := $(BUILD)/cobj/compiler/import/import_caffe_data.o $(BUILD)/cobj/compiler/cmd/build.o
$(BUILD)/.with-leveldb: FORCE
	@mkdir -p $(dir $@)
	@echo '$(WITH_LEVELDB)' | cmp -s - $@ || echo '$(WITH_LEVELDB)' > $@
$(LEVELDB_OBJS) $(LEVELDB_COMPILER): $(BUILD)/.with-leveldb
$(TRAINC): $(BUILD)/cobj/runtime/data/leveldb_datum.o
ifeq ($(WITH_LEVELDB),1)
$(LEVELDB_OBJS): CFLAGS_COMMON += -DRT_WITH_LEVELDB
$(LEVELDB_COMPILER): CFLAGS_COMMON += -DTRAINC_WITH_LEVELDB
PACK_LIBS += -lleveldb
endif
