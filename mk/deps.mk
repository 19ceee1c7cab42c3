# Debian packages the build needs; installed automatically when run as root.
# Every program and Python module a test, the demo or CI runs comes from one of these (or
# from what they depend on, or from the base system): tests/deps/external_commands_test.sh.
DEB_PACKAGES := make gcc g++ flex bison libopenblas-dev zlib1g-dev libopenmpi-dev openmpi-bin \
                libturbojpeg0-dev libjpeg-turbo-progs libpng-dev dataset-fashion-mnist clang libclang-rt-14-dev \
                libdnnl2 libdnnl-dev python3 python3-torchvision python3-pil python3-numpy procps librsvg2-bin \
                liblmdb-dev libprotobuf-c-dev protobuf-c-compiler python3-lmdb python3-protobuf \
                python3-onnx munge slurmctld slurmd slurm-client libhdf5-dev python3-h5py libleveldb-dev \
                python3-plyvel python3-opencv
DEPS_STAMP   := $(BUILD)/.deps-ok

.PHONY: deps-check
deps-check: $(DEPS_STAMP)
$(DEPS_STAMP): mk/deps.mk
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing missing Debian packages:$$missing"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing) >/dev/null || \
	      { echo "error: apt-get install failed for:$$missing" >&2; exit 1; }; \
	  else \
	    echo "error: missing Debian packages:$$missing" >&2; \
	    echo "HINT: run: sudo apt-get install -y$$missing" >&2; exit 1; \
	  fi; \
	fi
	@mkdir -p $(BUILD) && touch $@
