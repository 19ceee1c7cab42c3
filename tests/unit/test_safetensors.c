/* The safetensors reader (runtime/core/safetensors.c): a well-formed file reads back its
 * tensors (F32, F16, BF16, F64 to float), each damaged header is refused with its own message,
 * and 3000 deterministic mutations of a valid file (byte flips, truncations, digits changed
 * in the header) are read or refused, never crash (this binary runs under ASan and UBSan). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "rt_safetensors.h"
#include "testlib.h"

static char path[] = "/tmp/test_safetensors.XXXXXX";

static void write_file(const void *bytes, size_t n) {
    FILE *f = fopen(path, "wb");
    fwrite(bytes, 1, n, f);
    fclose(f);
}

/* header text + data, the header length prefixed */
static size_t build(unsigned char *out, const char *header, const void *data, size_t data_bytes) {
    uint64_t n = strlen(header);
    for (int k = 0; k < 8; k++) out[k] = (unsigned char)(n >> (8 * k));
    memcpy(out + 8, header, n);
    memcpy(out + 8 + n, data, data_bytes);
    return 8 + n + data_bytes;
}

static void expect_refused(const char *what, const char *header, size_t data_bytes, const char *fragment) {
    static unsigned char buf[4096], zeros[512];
    size_t n = build(buf, header, zeros, data_bytes);
    write_file(buf, n);
    rt_safetensors st;
    rt_err err;
    rt_status s = rt_safetensors_open(&st, path, &err);
    if (s == RT_OK) {
        fprintf(stderr, "  %s: accepted\n", what);
        test_failures++;
        rt_safetensors_close(&st);
        return;
    }
    if (!strstr(err.msg, fragment)) {
        fprintf(stderr, "  %s: message lacks \"%s\": %s\n", what, fragment, err.msg);
        test_failures++;
    }
    fprintf(stderr, "ok %s: %s\n", what, err.msg);
}

int main(void) {
    int fd = mkstemp(path);
    close(fd);
    /* a: F32 [2, 3]; h: F16 [2] (1.0, -2.5); b: BF16 [1] (3.0); d: F64 [1] (0.25) */
    unsigned char data[24 + 4 + 2 + 8];
    float a[6] = { 1, 2, 3, 4, 5, 6 };
    memcpy(data, a, 24);
    uint16_t h[2] = { 0x3c00, 0xc100 }, b = 0x4040;
    memcpy(data + 24, h, 4);
    memcpy(data + 28, &b, 2);
    double d = 0.25;
    memcpy(data + 30, &d, 8);
    const char *good = "{\"__metadata__\":{\"format\":\"pt\",\"x\":[1,{\"y\":null}]},"
                       "\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
                       "\"h\":{\"shape\":[2],\"dtype\":\"F16\",\"data_offsets\":[24,28]},"
                       "\"b\":{\"dtype\":\"BF16\",\"shape\":[1],\"data_offsets\":[28,30]},"
                       "\"d\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[30,38]}}";
    static unsigned char file[4096];
    size_t n = build(file, good, data, sizeof data);
    write_file(file, n);
    CHECK(rt_safetensors_sniff(path));
    rt_safetensors st;
    rt_err err;
    CHECK(rt_safetensors_open(&st, path, &err) == RT_OK);
    if (st.n == 4) {
        float out[6];
        const rt_st_tensor *t = rt_safetensors_find(&st, "a");
        CHECK(t && t->ndim == 2 && t->shape[1] == 3 && rt_st_numel(t) == 6);
        CHECK(t && rt_safetensors_read_f32(&st, t, out, &err) == RT_OK && out[5] == 6.0f);
        t = rt_safetensors_find(&st, "h");
        CHECK(t && rt_safetensors_read_f32(&st, t, out, &err) == RT_OK && out[0] == 1.0f && out[1] == -2.5f);
        t = rt_safetensors_find(&st, "b");
        CHECK(t && rt_safetensors_read_f32(&st, t, out, &err) == RT_OK && out[0] == 3.0f);
        t = rt_safetensors_find(&st, "d");
        CHECK(t && rt_safetensors_read_f32(&st, t, out, &err) == RT_OK && out[0] == 0.25f);
        CHECK(rt_safetensors_find(&st, "__metadata__") == NULL && rt_safetensors_find(&st, "zz") == NULL);
        rt_safetensors_close(&st);
    } else {
        CHECK(st.n == 4);
    }

    expect_refused("offsets past the data", "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 4,
                   "a truncated file?");
    expect_refused("size vs shape", "{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8, "needs 12 bytes");
    expect_refused("unknown dtype", "{\"a\":{\"dtype\":\"Q7\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1, "not one of the format's");
    expect_refused("missing field", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4, "malformed");
    expect_refused("not json", "{\"a\":[1,2", 4, "malformed");
    expect_refused("negative dimension", "{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4,
                   "malformed");
    expect_refused("overflowing shape",
                   "{\"a\":{\"dtype\":\"F32\",\"shape\":[1099511627776,1099511627776,1099511627776],\"data_offsets\":[0,4]}}",
                   4, "too large");
    static unsigned char big[16] = { 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, '{', '}' };
    write_file(big, sizeof big);
    CHECK(rt_safetensors_open(&st, path, &err) == RT_E_FORMAT && strstr(err.msg, "header length"));
    fprintf(stderr, "ok header length: %s\n", err.msg);
    write_file("abc", 3);
    CHECK(rt_safetensors_open(&st, path, &err) == RT_E_TRUNCATED);
    CHECK(!rt_safetensors_sniff(path));
    CHECK(rt_safetensors_open(&st, "/nonexistent/x.safetensors", &err) != RT_OK);

    /* Mutations of the good file: each is read whole or refused, never a crash. */
    uint64_t r = 0x9e3779b97f4a7c15ull;
    int read_ok = 0;
    static unsigned char m[4096];
    for (int it = 0; it < 3000; it++) {
        memcpy(m, file, n);
        size_t len = n;
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        int kind = (int)(r % 3);
        if (kind == 0) m[r / 3 % n] ^= (unsigned char)(1u << (r >> 40) % 8);
        else if (kind == 1) len = (size_t)(r / 3 % n);
        else {   /* a digit of the header changed: offsets, shapes, the length */
            size_t at = 8 + r / 3 % (strlen(good));
            if (m[at] >= '0' && m[at] <= '9') m[at] = (unsigned char)('0' + (r >> 32) % 10);
            else m[(r >> 20) % 8] = (unsigned char)(r >> 48);
        }
        write_file(m, len);
        if (rt_safetensors_open(&st, path, &err) == RT_OK) {
            float out[64];
            for (int i = 0; i < st.n; i++)
                if (rt_st_numel(&st.t[i]) <= 64) rt_safetensors_read_f32(&st, &st.t[i], out, &err);
            rt_safetensors_close(&st);
            read_ok++;
        }
    }
    printf("mutations: %d of 3000 still read whole, the rest refused\n", read_ok);
    unlink(path);
    return test_finish("test_safetensors");
}
