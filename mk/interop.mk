# `make bench-interop` (not in `make test`): ONNX Runtime and TensorBoard's own reader, from
# PyPI into build/bench-interop/venv, on what tests/interop/ exports (bench/interop_check.sh).
.PHONY: bench-interop
bench-interop: all
	@BUILD=$(BUILD) bash bench/interop_check.sh

# `make bench-timm` (not in `make test`): timm from PyPI (no dependencies: Debian's torch and
# torchvision) into build/bench-timm/venv; its ResNet-50 state_dict as a .pth starts
# specs/models/resnet50.spec, and the export loads back into timm (bench/timm_check.sh).
.PHONY: bench-timm
bench-timm: all
	@BUILD=$(BUILD) bash bench/timm_check.sh
