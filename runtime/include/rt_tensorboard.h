/* TensorBoard event files: OUT/tb/events.out.tfevents.<seconds>.<host>.<pid> holding the
 * scalars metrics.jsonl logs (which stays the record of the run), so a TensorBoard pointed at
 * the folder plots them. The format is TensorFlow's record format: per record a u64 length,
 * the masked CRC32C of those 8 bytes, the bytes, their masked CRC32C (all little-endian), each
 * record one Event protocol buffer (event.proto: wall_time 1, step 2, file_version 3,
 * summary 5 of Summary.Value {tag 1, simple_value 2}, session_log 6), encoded here by hand.
 *
 *   rt_tensorboard tb;
 *   rt_tb_open(&tb, dir, resumed_at);   // resumed_at >= 0: TensorBoard drops later events
 *   rt_tb_scalar(&tb, "train/loss", step, loss);
 *   rt_tb_close(&tb);
 */
#ifndef RT_TENSORBOARD_H
#define RT_TENSORBOARD_H
#include <stdint.h>
#include <stdio.h>

typedef struct {
    FILE *f;                  /* NULL: off */
    char path[4200];
} rt_tensorboard;

/* Opens a new event file in dir (created if needed); dies with one message if it cannot.
 * resumed_at >= 0 writes a SessionLog START at that step: TensorBoard then discards the
 * events an interrupted run logged after it. */
void rt_tb_open(rt_tensorboard *tb, const char *dir, int64_t resumed_at);
void rt_tb_scalar(rt_tensorboard *tb, const char *tag, int64_t step, double value);
void rt_tb_close(rt_tensorboard *tb);
/* CRC32C (Castagnoli) of the bytes, and the record format's mask of it. */
uint32_t rt_crc32c(const void *data, size_t n);
uint32_t rt_tb_masked_crc(const void *data, size_t n);

#endif
