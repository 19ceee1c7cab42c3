/* SHA-256 against the FIPS 180-4 / NIST CAVP vectors, incremental vs one-shot, params hash. */
#include <string.h>
#include "rt_core.h"
#include "testlib.h"

static void check_hex(const char *msg, size_t len, const char *want) {
    char got[RT_SHA256_HEX_LEN + 1];
    rt_sha256_hex(msg, len, got);
    if (strcmp(got, want) != 0) {
        fprintf(stderr, "sha256 of %zu bytes:\n  got  %s\n  want %s\n", len, got, want);
        test_failures++;
    }
}

int main(void) {
    check_hex("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    check_hex("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    check_hex(m448, strlen(m448),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    const char *m896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
                       "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
    check_hex(m896, strlen(m896),
              "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");

    /* One million 'a', fed in odd-sized pieces to exercise block boundaries. */
    static char a[1000000];
    memset(a, 'a', sizeof a);
    check_hex(a, sizeof a, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    rt_sha256_ctx c;
    rt_sha256_init(&c);
    size_t done = 0, piece = 1;
    while (done < sizeof a) {
        size_t take = piece < sizeof a - done ? piece : sizeof a - done;
        rt_sha256_update(&c, a + done, take);
        done += take;
        piece = piece * 3 % 1031 + 1;
    }
    uint8_t d[32];
    char hex[65];
    rt_sha256_final(&c, d);
    rt_hex_encode(d, 32, hex);
    CHECK(strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0);

    /* 55 and 56 bytes straddle the padding boundary (length must move to a new block). */
    check_hex(a, 55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
    check_hex(a, 56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");

    /* Params hash: FNV-1a of the bytes; 16 hex chars, sensitive to one bit. */
    float p[4] = {1.0f, -2.0f, 0.5f, 3.0f};
    char h1[17], h2[17];
    rt_params_hash(p, 4, h1);
    CHECK(strlen(h1) == 16);
    p[2] = 0.50000006f;
    rt_params_hash(p, 4, h2);
    CHECK(strcmp(h1, h2) != 0);
    rt_params_hash(NULL, 0, h2);
    CHECK(strcmp(h2, "cbf29ce484222325") == 0);   /* FNV-1a 64 offset basis = hash of "" */
    CHECK(rt_fnv1a64("a", 1, RT_FNV1A64_INIT) == 0xaf63dc4c8601ec8cull);
    return test_finish("test_core_sha256");
}
