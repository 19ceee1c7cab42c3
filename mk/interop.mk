# `make bench-interop` (not in `make test`): ONNX Runtime and TensorBoard's own reader, from
# PyPI into build/bench-interop/venv, on what tests/interop/ exports (bench/interop_check.sh).
.PHONY: bench-interop
bench-interop: all
	@BUILD=$(BUILD) bash bench/interop_check.sh
