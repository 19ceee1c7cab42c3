/* The trainer's image-data entry points: where a run's image sets are (--data DIR or the
 * spec's paths), the loader settings of each split, the class list written beside the run's
 * metrics, and the decode-failure cap every rank applies to the same global count. */
#include <stdio.h>
#include "image_set.h"
#include "rt_data.h"
#include "rt_trainer.h"

void rt_data_open_images(const rt_run_config *run, const char *data_dir, int in_c, int in_h, int in_w,
                         int classes, rt_dataset *train, rt_dataset *val) {
    char tpath[4096], vpath[4096];
    snprintf(tpath, sizeof tpath, "%s%s", data_dir ? data_dir : run->data_path, data_dir ? "/train" : "");
    snprintf(vpath, sizeof vpath, "%s%s", data_dir ? data_dir : run->val_path, data_dir ? "/val" : "");
    const int gray = run->train_image.gray;   /* the spec check gives val the same (the net's input) */
    if (in_c != (gray ? 1 : 3))
        rt_die_hint(gray ? "set net.input_shape to [1, H, W]" : "set net.input_shape to [3, H, W]",
                    "image data is %s, but the net takes %d channels", gray ? "gray (one channel)" : "RGB", in_c);
    /* ImageData lists: --data replaces the training list, as it does an LMDB */
    if (run->train_root) snprintf(tpath, sizeof tpath, "%s", data_dir ? data_dir : run->data_path);
    if (run->val_root) snprintf(vpath, sizeof vpath, "%s", run->val_path);
    if (run->train_root) rt_dataset_open_image_list(train, tpath, run->train_root, in_h, in_w, classes, NULL);
    else rt_dataset_open_images(train, tpath, NULL, in_h, in_w, classes, NULL);
    if (run->val_root) rt_dataset_open_image_list(val, vpath, run->val_root, in_h, in_w, classes, NULL);
    else rt_dataset_open_images(val, vpath, train, in_h, in_w, classes, NULL);
    train->c = val->c = in_c;   /* 3 planes, or the one gray plane */
}

void rt_data_image_loader_config(const rt_run_config *run, int train, int decode_threads, int in_h, int in_w,
                                 rt_loader_config *cfg) {
    cfg->image = train ? run->train_image : run->val_image;
    cfg->image.out_h = in_h, cfg->image.out_w = in_w;
    if (!train) cfg->image.flip = 0;
    /* No resize given: the shorter side becomes the input size, then the center crop; Caffe's
     * images (OpenCV's filter) keep their own size, as its TEST crop takes the center of the
     * image as decoded. */
    if (cfg->image.mode == RT_IMG_CENTER && cfg->image.resize == 0 && cfg->image.filter != RT_IMG_CV_LINEAR)
        cfg->image.resize = in_h > in_w ? in_h : in_w;
    cfg->decode_threads = decode_threads > 0 ? decode_threads : run->decode_threads;
    cfg->slots = run->loader_slots;
}

void rt_data_write_classes(const rt_dataset *train, const char *out_dir) {
    if (!train->encoded) return;
    char path[4096];
    snprintf(path, sizeof path, "%s/classes.txt", out_dir);
    FILE *f = fopen(path, "w");
    if (!f) rt_die("cannot write %s", path);
    for (int k = 0; k < train->classes; k++) fprintf(f, "%d %s\n", k, rt_dataset_class_name(train, k));
    if (fclose(f)) rt_die("cannot write %s", path);
}

int rt_data_failures_over_cap(const rt_run_config *run, long *total, long new_failures) {
    *total += new_failures;
    return run->source == RT_DATA_IMAGES && *total > run->max_decode_failures;
}
