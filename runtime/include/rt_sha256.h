/* SHA-256 (FIPS 180-4), dependency-free so the compiler can link runtime/core/sha256.c alone. */
#ifndef RT_SHA256_H
#define RT_SHA256_H
#include <stddef.h>
#include <stdint.h>

/* Incremental use:
 *   rt_sha256_ctx c; rt_sha256_init(&c);
 *   rt_sha256_update(&c, buf, n);  ... more updates ...
 *   uint8_t digest[32]; rt_sha256_final(&c, digest);
 * One-shot hex (the spec hash everything else carries around):
 *   char hex[RT_SHA256_HEX_LEN + 1]; rt_sha256_hex(text, len, hex); */
#define RT_SHA256_HEX_LEN 64

typedef struct {
    uint32_t state[8];
    uint64_t total_bytes;
    uint8_t block[64];
    size_t block_len;
} rt_sha256_ctx;

void rt_sha256_init(rt_sha256_ctx *c);
void rt_sha256_update(rt_sha256_ctx *c, const void *data, size_t n);
void rt_sha256_final(rt_sha256_ctx *c, uint8_t digest[32]);
/* out must hold 65 chars (64 lowercase hex digits + NUL); returns out. */
char *rt_sha256_hex(const void *data, size_t n, char out[RT_SHA256_HEX_LEN + 1]);
/* Lowercase hex of any byte string; out holds 2*n+1 chars. */
void rt_hex_encode(const uint8_t *bytes, size_t n, char *out);

#endif
