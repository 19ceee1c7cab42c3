/* Checkpoints: versioned, checksummed, crash-safe files holding a run's whole state.
 *
 * Usage (the trainer passes err = NULL and dies with the message on failure):
 *   rt_ckpt_section secs[] = {
 *       {"params", params, n_params * sizeof(float)},
 *       {"momentum", mom, n_params * sizeof(float)},
 *       {"rng", &rng, sizeof rng},
 *   };
 *   char path[4096];
 *   rt_ckpt_save(out_dir, spec_hash, step, epoch, secs, 3, keep_last, path, sizeof path, NULL);
 *   ...
 *   if (rt_ckpt_find_latest(out_dir, path, sizeof path))
 *       rt_ckpt_load(path, spec_hash, &step, &epoch, secs, 3, NULL);
 *
 * File layout (integers little-endian; section bytes as in memory):
 *   header, 112 bytes:
 *     0  "TRAINCKP"            8  u32 format version (RT_CKPT_VERSION)
 *     12 u32 section count     16 i64 step          24 i64 epoch
 *     32 u64 total file bytes  40 spec hash, 64 bytes, NUL-padded
 *     104 u32 reserved (0)     108 u32 CRC32 of bytes [0, 108)
 *   per section: u32 name length (1..255), name, u64 byte size, u32 CRC32 of the bytes, bytes
 *   trailer, 16 bytes: "TCKPEND\0", u32 CRC32 of everything before the trailer, u32 reserved
 * The header carries the total size so truncation is named as such (expected vs actual),
 * and its own CRC so a damaged header is never mistaken for a spec-hash mismatch.
 *
 * Saving writes DIR/.ckpt-<step>.tmp.XXXXXX, fsyncs it, renames it to DIR/ckpt-<step,
 * 12 digits>.bin and fsyncs DIR: a crash leaves either the old set or the new file, never
 * a partial file under a final name. */
#ifndef RT_CHECKPOINT_H
#define RT_CHECKPOINT_H
#include <stddef.h>
#include <stdint.h>
#include "rt_core.h"

#define RT_CKPT_VERSION 1
#define RT_CKPT_MAX_HASH 64
#define RT_CKPT_MAX_NAME 255

typedef struct {
    const char *name;
    void *data;      /* save: read from here; load: filled */
    size_t bytes;    /* must match the file exactly on load */
} rt_ckpt_section;

/* What the header says, for `trainc diff` against a checkpoint and for messages. */
typedef struct {
    uint32_t version;
    uint32_t n_sections;
    int64_t step;
    int64_t epoch;
    uint64_t total_bytes;
    char spec_hash[RT_CKPT_MAX_HASH + 1];
} rt_ckpt_header;

/* Writes DIR/ckpt-<step>.bin (creating DIR if missing), then deletes all but the newest
 * keep_last checkpoints by step (keep_last <= 0 keeps all; the file just written is always
 * kept). saved_path (may be NULL) receives the final path. On failure nothing under a
 * final name changes and the temp file is removed. Returns RT_OK or the failure's status. */
rt_status rt_ckpt_save(const char *dir, const char *spec_hash, int64_t step, int64_t epoch,
                       const rt_ckpt_section *secs, int n, int keep_last, char *saved_path,
                       size_t cap, rt_err *err);

/* Verifies and loads: every requested section must exist with exactly the requested size;
 * extra sections in the file are ignored. expected_spec_hash may be NULL to skip that check
 * (e.g. `--resume --force`). On failure the buffers may be partly overwritten. */
rt_status rt_ckpt_load(const char *path, const char *expected_spec_hash, int64_t *step,
                       int64_t *epoch, rt_ckpt_section *secs, int n, rt_err *err);

/* Reads and checks only the header (magic, version, header CRC, size vs file size). */
rt_status rt_ckpt_read_header(const char *path, rt_ckpt_header *h, rt_err *err);

/* Newest checkpoint (highest step) in dir: writes its path and returns 1, or returns 0
 * when dir is missing or holds none. */
int rt_ckpt_find_latest(const char *dir, char *buf, size_t cap);

/* The final file name for a step: DIR/ckpt-000000001200.bin. */
void rt_ckpt_path(const char *dir, int64_t step, char *buf, size_t cap);
/* Deletes the temp files (.ckpt-<step>.tmp.*) that writes interrupted by a crash or kill -9
 * left in dir; returns how many. Call it once at the start of a run, before any write. */
int rt_ckpt_remove_temps(const char *dir);

#endif
