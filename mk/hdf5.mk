# Caffe's HDF5Data source: the runtime's reader (runtime/data/hdf5_data.c) through libhdf5
# (Debian's libhdf5-dev, the serial build, found by pkg-config), which `trainc import caffe`
# also links to read a list's sample shape and count. Trainers link it only when their spec
# reads HDF5 (BIN.src/link_libs.txt, compiler/cmd/build.c). WITH_HDF5=0 builds both without
# it: the reader then refuses with a message, and the importer refuses HDF5Data saying why.
WITH_HDF5 ?= 1
HDF5_CFLAGS := $(or $(shell pkg-config --cflags hdf5 2>/dev/null),-I/usr/include/hdf5/serial)
HDF5_LIBS := $(or $(shell pkg-config --libs hdf5 2>/dev/null),-L/usr/lib/x86_64-linux-gnu/hdf5/serial -lhdf5)
HDF5_RT_OBJS := $(BUILD)/obj/runtime/data/hdf5_data.o $(BUILD)/asan/runtime/data/hdf5_data.o
HDF5_COMPILER := $(BUILD)/cobj/compiler/import/import_caffe_data.o $(BUILD)/cobj/compiler/cmd/build.o
$(BUILD)/.with-hdf5: FORCE
	@mkdir -p $(dir $@)
	@echo '$(WITH_HDF5) $(HDF5_LIBS)' | cmp -s - $@ || echo '$(WITH_HDF5) $(HDF5_LIBS)' > $@
$(HDF5_RT_OBJS) $(BUILD)/cobj/runtime/data/hdf5_data.o $(HDF5_COMPILER): $(BUILD)/.with-hdf5
$(TRAINC): $(BUILD)/cobj/runtime/data/hdf5_data.o
ifeq ($(WITH_HDF5),1)
$(HDF5_RT_OBJS) $(BUILD)/cobj/runtime/data/hdf5_data.o: CFLAGS_COMMON += -DRT_WITH_HDF5 $(HDF5_CFLAGS)
$(HDF5_COMPILER): CFLAGS_COMMON += -DTRAINC_WITH_HDF5 -DTRAINC_HDF5_LIBS='"$(HDF5_LIBS)"'
PACK_LIBS += $(HDF5_LIBS)
endif
