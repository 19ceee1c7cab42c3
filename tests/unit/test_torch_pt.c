/* The torch.save reader (runtime/core/torch_pt.c, torch_pickle.c) on a zip and pickle put
 * together here byte by byte as torch.save lays them out: the state_dict's tensors read back
 * (an offset into a float storage, a half storage); a pickle that calls another function, an
 * opcode state_dicts do not use, a missing storage record and a tensor past its storage are
 * refused with their own message; 3000 deterministic mutations of the file (byte flips,
 * truncations) are read or refused, never crash (this binary runs under ASan and UBSan).
 * tests/interop/torch_pth_init_test.sh reads the files torchvision writes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "rt_torch_pt.h"
#include "testlib.h"

static char path[] = "/tmp/test_torch_pt.XXXXXX";

static void write_file(const void *bytes, size_t n) {
    FILE *f = fopen(path, "wb");
    fwrite(bytes, 1, n, f);
    fclose(f);
}

static size_t put(unsigned char *b, size_t at, uint64_t v, int n) {
    for (int k = 0; k < n; k++) b[at + (size_t)k] = (unsigned char)(v >> (8 * k));
    return at + (size_t)n;
}

/* A stored zip of the named records (local headers, central directory, end record). */
static size_t build_zip(unsigned char *out, const char *const *names, const unsigned char *const *data,
                        const size_t *sizes, int n) {
    size_t at = 0, local[8];
    for (int k = 0; k < n; k++) {
        local[k] = at;
        size_t nl = strlen(names[k]);
        memcpy(out + at, "PK\3\4", 4);
        at = put(out, at + 4, 20, 2), at = put(out, at, 0, 2), at = put(out, at, 0, 2);   /* version, flags, stored */
        at = put(out, at, 0, 4), at = put(out, at, 0, 4);                                    /* time+date, CRC */
        at = put(out, at, sizes[k], 4), at = put(out, at, sizes[k], 4);
        at = put(out, at, nl, 2), at = put(out, at, 0, 2);
        memcpy(out + at, names[k], nl), at += nl;
        memcpy(out + at, data[k], sizes[k]), at += sizes[k];
    }
    size_t dir = at;
    for (int k = 0; k < n; k++) {
        size_t nl = strlen(names[k]);
        memcpy(out + at, "PK\1\2", 4);
        at = put(out, at + 4, 20, 2), at = put(out, at, 20, 2), at = put(out, at, 0, 2), at = put(out, at, 0, 2);
        at = put(out, at, 0, 4), at = put(out, at, 0, 4);
        at = put(out, at, sizes[k], 4), at = put(out, at, sizes[k], 4);
        at = put(out, at, nl, 2), at = put(out, at, 0, 2), at = put(out, at, 0, 2);   /* name, extra, comment */
        at = put(out, at, 0, 2), at = put(out, at, 0, 2), at = put(out, at, 0, 4);    /* disk, attributes */
        at = put(out, at, local[k], 4);
        memcpy(out + at, names[k], nl), at += nl;
    }
    size_t dir_size = at - dir;
    memcpy(out + at, "PK\5\6", 4);
    at = put(out, at + 4, 0, 4), at = put(out, at, (uint64_t)n, 2), at = put(out, at, (uint64_t)n, 2);
    at = put(out, at, dir_size, 4), at = put(out, at, dir, 4);
    return put(out, at, 0, 2);
}

/* protocol 2, as torch.save writes {"w": float storage "0" from element 2, [2, 3];
 * "v": half storage "1", [2]} */
static size_t pickle(unsigned char *p, const char *fn, const char *key0, int offset, int extra_op) {
    size_t at = 0;
#define B(...) do { const unsigned char b_[] = { __VA_ARGS__ }; memcpy(p + at, b_, sizeof b_); at += sizeof b_; } while (0)
#define TXT(s) do { size_t l_ = strlen(s); memcpy(p + at, s, l_); at += l_; } while (0)
#define UNI(s) do { B('X'); at = put(p, at, strlen(s), 4); TXT(s); } while (0)
    B(0x80, 2);
    if (extra_op) B((unsigned char)extra_op);
    B('c'); TXT(fn); B('q', 0, ')', 'R', 'q', 1, '(');
    UNI("w");
    B('c'); TXT("torch._utils\n_rebuild_tensor_v2\n"); B('q', 2, '(', '(');
    UNI("storage"); B('c'); TXT("torch\nFloatStorage\n"); UNI(key0); UNI("cpu"); B('K', 8, 't', 'Q');
    B('K', (unsigned char)offset, 'K', 2, 'K', 3, 0x86, 'K', 3, 'K', 1, 0x86, 0x89, 'h', 0, ')', 'R', 't', 'R');
    UNI("v");
    B('h', 2, '(', '(');
    UNI("storage"); B('c'); TXT("torch\nHalfStorage\n"); UNI("1"); UNI("cpu"); B('K', 2, 't', 'Q');
    B('K', 0, 'K', 2, 0x85, 'K', 1, 0x85, 0x89, 'h', 0, ')', 'R', 't', 'R');
    B('u', '.');
    return at;
}

static size_t build(unsigned char *out, const char *fn, const char *key0, int offset, int extra_op) {
    static unsigned char pkl[1024];
    static float f[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
    static const uint16_t h[2] = { 0x3c00, 0xc100 };
    size_t pn = pickle(pkl, fn, key0, offset, extra_op);
    const char *names[] = { "sd/data.pkl", "sd/data/0", "sd/data/1", "sd/version" };
    const unsigned char *data[] = { pkl, (const unsigned char *)f, (const unsigned char *)h, (const unsigned char *)"3\n" };
    size_t sizes[] = { pn, sizeof f, sizeof h, 2 };
    return build_zip(out, names, data, sizes, 4);
}

static void expect_refused(const char *what, size_t n, const unsigned char *file, const char *fragment) {
    write_file(file, n);
    rt_safetensors st;
    rt_err err;
    if (rt_torch_pt_open(&st, path, &err) == RT_OK) {
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
    static unsigned char file[4096], bad[4096];
    size_t n = build(file, "collections\nOrderedDict\n", "0", 2, 0);
    write_file(file, n);
    CHECK(rt_torch_pt_sniff(path) == 1);
    rt_safetensors st;
    rt_err err;
    CHECK(rt_torch_pt_open(&st, path, &err) == RT_OK);
    if (st.n == 2) {
        float out[6];
        const rt_st_tensor *t = rt_safetensors_find(&st, "w");
        CHECK(t && t->ndim == 2 && t->shape[0] == 2 && t->shape[1] == 3 && !strcmp(t->dtype, "F32"));
        CHECK(t && rt_safetensors_read_f32(&st, t, out, &err) == RT_OK && out[0] == 2.0f && out[5] == 7.0f);
        t = rt_safetensors_find(&st, "v");
        CHECK(t && !strcmp(t->dtype, "F16") && rt_safetensors_read_f32(&st, t, out, &err) == RT_OK && out[0] == 1.0f &&
              out[1] == -2.5f);
        rt_safetensors_close(&st);
    } else {
        fprintf(stderr, "read %d tensors: %s\n", st.n, err.msg);
        CHECK(st.n == 2);
    }

    expect_refused("another function", build(bad, "os\nsystem\n", "0", 2, 0), bad, "the pickle calls os.system");
    expect_refused("opcode", build(bad, "collections\nOrderedDict\n", "0", 2, 0x81), bad, "opcode 0x81 NEWOBJ at byte 2");
    expect_refused("missing storage", build(bad, "collections\nOrderedDict\n", "7", 2, 0), bad, "'sd/data/7', which the zip lacks");
    expect_refused("past the storage", build(bad, "collections\nOrderedDict\n", "0", 3, 0), bad, "lies outside its storage");
    write_file("\x80\x02\x8a\x0a", 4);
    CHECK(rt_torch_pt_sniff(path) == 2);
    CHECK(rt_torch_pt_open(&st, path, &err) == RT_E_FORMAT && strstr(err.msg, "before PyTorch 1.6"));
    CHECK(rt_torch_pt_open(&st, "/nonexistent/x.pth", &err) != RT_OK);

    /* Mutations of the good file: each is read whole or refused, never a crash. */
    uint64_t r = 0x2545f4914f6cdd1dull;
    int read_ok = 0;
    for (int it = 0; it < 3000; it++) {
        memcpy(bad, file, n);
        size_t len = n;
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        if (r % 4 == 0) len = (size_t)(r / 4 % n);
        else bad[r / 4 % n] ^= (unsigned char)(1u << (r >> 40) % 8);
        write_file(bad, len);
        if (rt_torch_pt_open(&st, path, &err) == RT_OK) {
            float out[64];
            for (int i = 0; i < st.n; i++)
                if (rt_st_numel(&st.t[i]) <= 64) rt_safetensors_read_f32(&st, &st.t[i], out, &err);
            rt_safetensors_close(&st);
            read_ok++;
        }
    }
    printf("mutations: %d of 3000 still read whole, the rest refused\n", read_ok);
    unlink(path);
    return test_finish("test_torch_pt");
}
