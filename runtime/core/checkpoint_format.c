/* Checkpoint byte layout: little-endian integer encoding, header and section headers, CRC. */
#include <string.h>
#include <zlib.h>
#include "checkpoint_format.h"

void ckpt_put_u32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

void ckpt_put_u64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

uint32_t ckpt_get_u32(const uint8_t *p) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v |= (uint32_t)p[i] << (8 * i);
    return v;
}

uint64_t ckpt_get_u64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

uint32_t ckpt_crc(uint32_t crc, const void *data, size_t n) {
    /* zlib returns the initial CRC (0) for a NULL buffer, which would reset a running CRC. */
    if (n == 0) return crc;
    return (uint32_t)crc32_z(crc, (const Bytef *)data, n);
}

void ckpt_encode_header(uint8_t out[CKPT_HEADER_BYTES], const rt_ckpt_header *h) {
    memset(out, 0, CKPT_HEADER_BYTES);
    memcpy(out, CKPT_MAGIC, 8);
    ckpt_put_u32(out + 8, h->version);
    ckpt_put_u32(out + 12, h->n_sections);
    ckpt_put_u64(out + 16, (uint64_t)h->step);
    ckpt_put_u64(out + 24, (uint64_t)h->epoch);
    ckpt_put_u64(out + 32, h->total_bytes);
    memcpy(out + 40, h->spec_hash, strnlen(h->spec_hash, RT_CKPT_MAX_HASH));
    ckpt_put_u32(out + CKPT_HEADER_CRC_AT, ckpt_crc(0, out, CKPT_HEADER_CRC_AT));
}

size_t ckpt_section_header_bytes(const char *name) { return 4 + strlen(name) + 8 + 4; }

size_t ckpt_encode_section_header(uint8_t *out, const char *name, uint64_t bytes, uint32_t crc) {
    size_t len = strlen(name);
    ckpt_put_u32(out, (uint32_t)len);
    memcpy(out + 4, name, len);
    ckpt_put_u64(out + 4 + len, bytes);
    ckpt_put_u32(out + 12 + len, crc);
    return 16 + len;
}
