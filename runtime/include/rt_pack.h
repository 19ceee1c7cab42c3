/* `trainc pack SRC -o DST`: an image folder (SRC/train/<class>/..., SRC/val/<class>/... or a
 * flat SRC/val with labels.txt) into sharded record files with an index, which the trainer
 * reads as it reads the folder (runtime/data/image_set.h has the format). Every record holds
 * the label, the encoded image and its crc32. Files that are not RGB JPEGs are converted
 * where possible (PNG content, CMYK, grayscale) and skipped otherwise (truncated, empty,
 * not an image), each reported by path and reason. Shards are packed by all cores; a shard
 * is complete once its .idx file exists, so an interrupted pack resumes where it stopped.
 *
 *   trainc pack /data/imagenet -o /scratch/imagenet-packed --max-side 500 --quality 90
 */
#ifndef RT_PACK_H
#define RT_PACK_H

/* argv: the arguments after "pack". Returns the process exit status. */
int rt_pack_main(const char *prog, int argc, char **argv);

#endif
