/* Private to runtime/core/checkpoint_*.c: byte layout helpers for the checkpoint format
 * documented in rt_checkpoint.h. */
#ifndef CHECKPOINT_FORMAT_H
#define CHECKPOINT_FORMAT_H
#include <stdint.h>
#include "rt_checkpoint.h"

#define CKPT_MAGIC "TRAINCKP"
#define CKPT_TRAILER_MAGIC "TCKPEND"   /* 8 bytes with its NUL */
#define CKPT_HEADER_BYTES 112
#define CKPT_HEADER_CRC_AT 108
#define CKPT_TRAILER_BYTES 16

void ckpt_put_u32(uint8_t *p, uint32_t v);
void ckpt_put_u64(uint8_t *p, uint64_t v);
uint32_t ckpt_get_u32(const uint8_t *p);
uint64_t ckpt_get_u64(const uint8_t *p);
/* crc32 over any length (zlib's crc32 takes 32-bit lengths). */
uint32_t ckpt_crc(uint32_t crc, const void *data, size_t n);

void ckpt_encode_header(uint8_t out[CKPT_HEADER_BYTES], const rt_ckpt_header *h);
/* Section header bytes: 4 + name length + 8 + 4. */
size_t ckpt_section_header_bytes(const char *name);
size_t ckpt_encode_section_header(uint8_t *out, const char *name, uint64_t bytes, uint32_t crc);

/* mkdir -p; returns 0 or -1 with errno set. */
int ckpt_mkdir_p(const char *dir);
/* Parses "ckpt-<digits>.bin"; returns 1 and the step if name is a final checkpoint name. */
int ckpt_parse_name(const char *name, int64_t *step);
/* Deletes all but the newest keep_last checkpoints, never the one named keep_path. */
void ckpt_prune(const char *dir, int keep_last, const char *keep_path);

#endif
