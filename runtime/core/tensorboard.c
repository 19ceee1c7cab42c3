/* TensorBoard event files (rt_tensorboard.h): the record framing with masked CRC32Cs and the
 * few Event fields a scalar needs, in protobuf's wire format (varints, fixed64/fixed32,
 * length-delimited), flushed per record like metrics.jsonl. */
#include "rt_tensorboard.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "rt_core.h"

uint32_t rt_crc32c(const void *data, size_t n) {
    static uint32_t table[256];
    static int ready;
    if (!ready) {   /* reflected Castagnoli polynomial */
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
            table[i] = c;
        }
        ready = 1;
    }
    const unsigned char *p = data;
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
    return c ^ 0xffffffffu;
}

uint32_t rt_tb_masked_crc(const void *data, size_t n) {
    uint32_t c = rt_crc32c(data, n);
    return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

typedef struct {
    unsigned char b[512];
    size_t n;
} pb;

static void put_varint(pb *m, uint64_t v) {
    while (v >= 0x80) m->b[m->n++] = (unsigned char)(v | 0x80), v >>= 7;
    m->b[m->n++] = (unsigned char)v;
}
static void put_le(pb *m, uint64_t v, int bytes) {
    for (int k = 0; k < bytes; k++) m->b[m->n++] = (unsigned char)(v >> (8 * k));
}
static void put_bytes(pb *m, int field, const void *p, size_t len) {   /* length-delimited */
    put_varint(m, (uint64_t)field << 3 | 2);
    put_varint(m, len);
    memcpy(m->b + m->n, p, len);
    m->n += len;
}

static double wall_time(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + 1e-6 * (double)tv.tv_usec;
}

/* Event { wall_time = 1 (double), step = 2 (int64) } plus the caller's fields. */
static void event_head(pb *e, int64_t step) {
    double t = wall_time();
    uint64_t bits;
    memcpy(&bits, &t, 8);
    put_varint(e, 1 << 3 | 1), put_le(e, bits, 8);
    put_varint(e, 2 << 3 | 0), put_varint(e, (uint64_t)step);
}

static void write_record(rt_tensorboard *tb, const pb *e) {
    if (!tb->f) return;
    unsigned char len[8];
    for (int k = 0; k < 8; k++) len[k] = (unsigned char)((uint64_t)e->n >> (8 * k));
    uint32_t c1 = rt_tb_masked_crc(len, 8), c2 = rt_tb_masked_crc(e->b, e->n);
    unsigned char crc1[4], crc2[4];
    for (int k = 0; k < 4; k++) crc1[k] = (unsigned char)(c1 >> (8 * k)), crc2[k] = (unsigned char)(c2 >> (8 * k));
    if (fwrite(len, 1, 8, tb->f) != 8 || fwrite(crc1, 1, 4, tb->f) != 4 || fwrite(e->b, 1, e->n, tb->f) != e->n ||
        fwrite(crc2, 1, 4, tb->f) != 4 || fflush(tb->f) != 0)
        rt_die_hint("free space on that filesystem or pass another --tensorboard folder (metrics.jsonl is the "
                    "run's record)", "writing %s failed: %s", tb->path, strerror(errno));
}

void rt_tb_open(rt_tensorboard *tb, const char *dir, int64_t resumed_at) {
    memset(tb, 0, sizeof *tb);
    char d[4096];
    snprintf(d, sizeof d, "%s", dir);
    for (char *p = d + 1; *p; p++)
        if (*p == '/') *p = '\0', mkdir(d, 0777), *p = '/';
    if (mkdir(d, 0777) != 0 && errno != EEXIST)
        rt_die_hint("pass a folder that can be created", "cannot create --tensorboard folder '%s': %s", dir,
                    strerror(errno));
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    snprintf(tb->path, sizeof tb->path, "%s/events.out.tfevents.%ld.%s.%ld", dir, (long)wall_time(), host,
             (long)getpid());
    tb->f = fopen(tb->path, "wb");
    if (!tb->f) rt_die_hint("pass a writable --tensorboard folder", "cannot write %s: %s", tb->path, strerror(errno));
    pb e = { .n = 0 };
    event_head(&e, resumed_at > 0 ? resumed_at : 0);
    put_bytes(&e, 3, "brain.Event:2", 13);   /* file_version: what TensorBoard's reader expects first */
    write_record(tb, &e);
    if (resumed_at >= 0) {   /* session_log { status: START }: later steps of an earlier file are dropped */
        pb s = { .n = 0 }, log = { .n = 0 };
        put_varint(&log, 1 << 3 | 0), put_varint(&log, 1);
        event_head(&s, resumed_at);
        put_bytes(&s, 6, log.b, log.n);
        write_record(tb, &s);
    }
}

void rt_tb_scalar(rt_tensorboard *tb, const char *tag, int64_t step, double value) {
    if (!tb->f || !isfinite(value)) return;   /* a null in metrics.jsonl: no point here */
    size_t tl = strlen(tag);
    if (tl > 200) tl = 200;
    pb v = { .n = 0 }, sum = { .n = 0 }, e = { .n = 0 };
    put_bytes(&v, 1, tag, tl);
    float f = (float)value;
    uint32_t bits;
    memcpy(&bits, &f, 4);
    put_varint(&v, 2 << 3 | 5), put_le(&v, bits, 4);   /* simple_value, fixed32 */
    put_bytes(&sum, 1, v.b, v.n);
    event_head(&e, step);
    put_bytes(&e, 5, sum.b, sum.n);
    write_record(tb, &e);
}

void rt_tb_close(rt_tensorboard *tb) {
    if (tb->f && fclose(tb->f) != 0)
        rt_die_hint("free space on that filesystem", "writing %s failed: %s", tb->path, strerror(errno));
    tb->f = NULL;
}
