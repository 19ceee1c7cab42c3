# BF16 convolutions on oneDNN (runtime/cpu/conv2d_dnnl_bf16*.c): the runtime dlopens libdnnl.so.2,
# but a sanitized test that runs its primitives links it at start-up instead, because
# LeakSanitizer (GCC 12) crashed scanning the dynamic TLS that a dlopen'ed libdnnl leaves in
# OpenMP's worker threads ("Tracer caught signal 11" after "test_grad_bf16: ok").
$(BUILD)/tests/test_grad_bf16 $(BUILD)/tests/test_conv_c1: LDLIBS += -Wl,--no-as-needed -l:libdnnl.so.2 -Wl,--as-needed
