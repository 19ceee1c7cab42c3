/* Reads safetensors files (huggingface/safetensors, "Format"): an 8-byte little-endian header
 * length N, N bytes of JSON (per tensor: dtype, shape, data_offsets into the data after the
 * header; an optional "__metadata__" object of strings), then the data. Every offset and size
 * is checked against the file, so a damaged or hostile file is one message, never a crash.
 *
 *   rt_safetensors st;
 *   if (rt_safetensors_open(&st, path, &err) != RT_OK) rt_die_err(&err);
 *   const rt_st_tensor *t = rt_safetensors_find(&st, "conv1.weight");
 *   if (t) rt_safetensors_read_f32(&st, t, dst, &err);   // F32, F16, BF16 or F64 to float
 *   rt_safetensors_close(&st);
 */
#ifndef RT_SAFETENSORS_H
#define RT_SAFETENSORS_H
#include <stdint.h>
#include <stdio.h>
#include "rt_core.h"

#define RT_ST_MAX_DIMS 8

typedef struct {
    char *name;
    char dtype[8];            /* "F32", "F16", "BF16", "F64", "I64", ... */
    int ndim;
    long shape[RT_ST_MAX_DIMS];
    uint64_t begin, end;      /* byte offsets into the data */
} rt_st_tensor;

typedef struct {
    FILE *f;
    char path[4096];
    uint64_t data_start, data_bytes;
    int n;
    rt_st_tensor *t;
} rt_safetensors;

/* Whether the file starts as a safetensors file does (a plausible length, then '{'). */
int rt_safetensors_sniff(const char *path);
rt_status rt_safetensors_open(rt_safetensors *s, const char *path, rt_err *err);
const rt_st_tensor *rt_safetensors_find(const rt_safetensors *s, const char *name);
long rt_st_numel(const rt_st_tensor *t);
/* The tensor's values as floats (F32, F16, BF16, F64; other dtypes are refused). */
rt_status rt_safetensors_read_f32(const rt_safetensors *s, const rt_st_tensor *t, float *dst, rt_err *err);
void rt_safetensors_close(rt_safetensors *s);

#endif
