# Debian packages the build needs; installed automatically when run as root.
DEB_PACKAGES := flex bison libopenblas-dev zlib1g-dev libopenmpi-dev openmpi-bin \
                libturbojpeg0-dev libpng-dev dataset-fashion-mnist clang libclang-rt-14-dev \
                libdnnl2 libdnnl-dev python3-torchvision python3-pil python3-numpy \
                protobuf-c-compiler libprotobuf-c-dev python3-onnx
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
