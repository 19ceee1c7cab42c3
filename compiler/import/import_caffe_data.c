/* Caffe importer: the data layers. A Data layer over an LMDB or a LevelDB becomes the data
 * block (source "lmdb" or "leveldb", its path, batch and transform_param) and the net's
 * input, whose shape and training set size come from the database itself (its first record
 * and its record count); the TRAIN-phase layer gives data.train, the TEST-phase one
 * data.val. ImageData becomes the
 * image-list source (its list, root_folder, new_height/new_width as resize_to with OpenCV's
 * linear filter, crop_size as random_crop or center_crop, in Caffe's B, G, R channel order, or
 * one gray channel for is_color: false); HDF5Data the hdf5 source
 * (its list of .h5 files, whose shape and sample count are read from them); DummyData the
 * synthetic source. The data layers trainc has no reader for say what to do instead. */
#include <stdlib.h>
#include <string.h>

#include "import_caffe_internal.h"
#include "rt_data.h"

/* mean_file: Caffe subtracts the mean image pixel by pixel, and so does trainc on Data and
 * ImageData layers (normalize.mean_file: the stored image, or the image resized to new_height x
 * new_width). */
/* rt_caffe_mean_file where trainc links the reader (WITH_LMDB=1, mk/lmdb.mk); otherwise (and
 * in the fuzzer) a refusal that says so. */
static rt_status mean_file_of(const char *path, int *c, int *h, int *w, double m[4], rt_err *err) {
#ifdef TRAINC_WITH_LMDB
    return rt_caffe_mean_file(path, c, h, w, m, err);
#else
    (void)c, (void)h, (void)w, (void)m;
    snprintf(err->msg, sizeof err->msg, "this trainc was built without protobuf-c and cannot read the mean file %.300s", path);
    snprintf(err->hint, sizeof err->hint, "build trainc with libprotobuf-c-dev and protobuf-c-compiler (WITH_LMDB=1)");
    return RT_E_ARG;
#endif
}

static int read_mean_file(ic_ctx *ic, const ast_node *tp, const char *name, ic_data *d) {
    const char *path = NULL;
    const ast_node *at = ic_get(tp, "mean_file");
    if (ic_word(ic, tp, "mean_file", &path) < 0) return -1;
    if (ic_get(tp, "mean_value")) return ic_error(ic, at, "give one of them", "both mean_file and mean_value");
    int c = 0, h = 0, w = 0;
    double m[4] = { 0 };
    rt_err err;
    const char *found = path;
    if (mean_file_of(path, &c, &h, &w, m, &err) != RT_OK) {
        char beside[4096];   /* relative to Caffe's folder, else beside the prototxt */
        const char *slash = strrchr(ic->opt->net_path, '/');
        if (path[0] == '/' || !slash) return ic_error(ic, at, err.hint, "%s layer \"%s\": %s", d->type, name, err.msg);
        snprintf(beside, sizeof beside, "%.*s/%s", (int)(slash - ic->opt->net_path), ic->opt->net_path, path);
        if (mean_file_of(beside, &c, &h, &w, m, &err) != RT_OK)
            return ic_error(ic, at, err.hint, "%s layer \"%s\": %s", d->type, name, err.msg);
        found = ast_arena_strdup(ic->arena, beside);
    }
    (void)m;   /* the trainer subtracts the image itself: a database's stored image, or ImageData's resized one */
    d->mean_file = found, d->mean_c = c, d->mean_h = h, d->mean_w = w;
    return 0;
}

/* ImageData's mean_file: Caffe subtracts it from the image resized to new_height x new_width (or
 * the image as decoded), so that size must be the mean's; without new_height the spec resizes to
 * the mean's size, which changes only images Caffe would refuse. */
static int image_mean_size(ic_ctx *ic, const ast_node *L, const char *name, ic_data *d) {
    const ast_node *at = ic_get(ic_get(L, "transform_param")->a, "mean_file");
    if (!d->new_h) {
        d->new_h = d->mean_h, d->new_w = d->mean_w;
        ic_note(ic, at, "layer \"%s\": no new_height/new_width; the images are read at the mean image's %dx%d "
                "(resize_to), where Caffe refuses images of another size", name, d->mean_h, d->mean_w);
    }
    if (d->mean_c != d->c || d->mean_h != d->new_h || d->mean_w != d->new_w)
        return ic_error(ic, at, "compute the mean of the resized images (Caffe's compute_image_mean), or set new_height "
                        "and new_width to its size", "ImageData layer \"%s\": the mean file %s is a %dx%dx%d image, the "
                        "resized images %dx%lldx%lld (Caffe refuses them too)", name, d->mean_file, d->mean_c, d->mean_h,
                        d->mean_w, d->c, (long long)d->new_h, (long long)d->new_w);
    if (d->crop > d->new_h || d->crop > d->new_w)
        return ic_error(ic, ic_get(ic_get(L, "transform_param")->a, "crop_size"), NULL, "ImageData layer \"%s\": "
                        "crop_size %lld is larger than the mean image's %dx%d", name, (long long)d->crop, d->mean_h,
                        d->mean_w);
    return 0;
}

/* transform_param: scale, mean_value (one per channel, or one for all), mirror, crop_size,
 * mean_file (a per-pixel mean image). */
static int read_transform(ic_ctx *ic, const ast_node *L, const char *name, ic_data *d) {
    const ast_node *tp = NULL;
    d->scale = 1;
    if (ic_msg(ic, L, "transform_param", &tp) < 0) return -1;
    if (!tp) return 0;
    if (ic_only_fields(ic, tp, "transform_param",
                       KNOWN("scale", "mirror", "crop_size", "mean_file", "mean_value", "force_color", "force_gray",
                             "img_rand_resize_lower", "img_rand_resize_upper", "rand_resize_ratio_lower",
                             "rand_resize_ratio_upper", "vertical_stretch_lower", "vertical_stretch_upper",
                             "horizontal_stretch_lower", "horizontal_stretch_upper", "interpolation_algo_down",
                             "interpolation_algo_up", "allow_upscale", "use_gpu_transform", "random_seed", "display",
                             "forward_packing", "random_aspect_ratio_param", "random_resize_param")) < 0 ||
        ic_float(ic, tp, "scale", &d->scale) < 0 || ic_bool(ic, tp, "mirror", &d->mirror) < 0 ||
        ic_int(ic, tp, "crop_size", &d->crop) < 0)
        return -1;
    if (d->scale <= 0) return ic_error(ic, ic_get(tp, "scale"), NULL, "transform_param scale must be > 0");
    /* NVCaffe's resize augmentation of stored images: off at its defaults (0, and 1 for the stretches) */
    static const char *const resize[] = { "img_rand_resize_lower", "img_rand_resize_upper", "rand_resize_ratio_lower",
                                          "rand_resize_ratio_upper", "vertical_stretch_lower", "vertical_stretch_upper",
                                          "horizontal_stretch_lower", "horizontal_stretch_upper", NULL };
    for (const char *const *f = resize; *f; f++) {
        double v = strstr(*f, "stretch") ? 1 : 0, off = v;
        if (ic_float(ic, tp, *f, &v) < 0) return -1;
        if (v != off)
            return ic_error(ic, ic_get(tp, *f), "remove the img_rand_resize / rand_resize_ratio fields (Caffe's plain "
                            "random crop), or read the images as files (ImageData) and write augment { "
                            "random_resized_crop } by hand", "%s layer \"%s\": NVCaffe's %s resizes each stored image "
                            "at random before the crop; trainc crops a database's records as they are stored", d->type,
                            name, *f);
    }
    static const char *const intel[] = { "random_aspect_ratio_param", "random_resize_param", NULL };
    for (const char *const *f = intel; *f; f++)   /* Intel Caffe's Inception-style crops of stored images */
        if (ic_get(tp, *f))
            return ic_error(ic, ic_get(tp, *f), "remove it (Caffe's plain random crop), or read the images as files "
                            "(ImageData) and write augment { random_resized_crop } by hand", "%s layer \"%s\": Intel "
                            "Caffe's %s crops a random area and aspect ratio of each stored image and resizes it; trainc "
                            "crops a database's records as they are stored", d->type, name, *f);
    static const char *const how[] = { "interpolation_algo_down", "interpolation_algo_up", "allow_upscale",
                                       "use_gpu_transform", "random_seed", "display", "forward_packing", NULL };
    for (const char *const *f = how; *f; f++)   /* how NVCaffe resizes (off here), computes or logs */
        if (ic_get(tp, *f))
            ic_note(ic, ic_get(tp, *f), "layer \"%s\": transform_param %s: how NVCaffe computes its transform; no "
                    "effect on what trainc reads", name, *f);
    if (ic_get(tp, "mean_file") && read_mean_file(ic, tp, name, d) < 0) return -1;
    if (!strcmp(d->type, "ImageData") && (ic_get(tp, "force_color") || ic_get(tp, "force_gray")))
        /* Caffe's DataTransformer applies them to encoded Datum records only; ImageData reads its
         * files with image_data_param's is_color */
        ic_note(ic, ic_get(tp, ic_get(tp, "force_gray") ? "force_gray" : "force_color"), "layer \"%s\": transform_param "
                "%s has no effect on ImageData (Caffe applies it to encoded Datum records); is_color chooses colour or "
                "gray", name, ic_get(tp, "force_gray") ? "force_gray" : "force_color");
    else if (ic_get(tp, "force_gray"))
        return ic_error(ic, ic_get(tp, "force_gray"), "write the database with the channels the net reads (convert_imageset "
                        "--gray writes gray records)", "%s layer \"%s\": force_gray re-decodes encoded images to gray; "
                        "trainc reads raw Datum pixels", d->type, name);
    else if (ic_get(tp, "force_color"))
        return ic_error(ic, ic_get(tp, "force_color") ? ic_get(tp, "force_color") : ic_get(tp, "force_gray"),
                        "write the database with the channels the net reads", "%s layer \"%s\": force_color / "
                        "force_gray re-decode encoded images; trainc reads raw Datum pixels", d->type, name);
    for (int i = 0; i < tp->n_kids; i++) {
        const ast_node *f = tp->kids[i];
        if (strcmp(f->text, "mean_value") != 0) continue;
        if (f->a->kind != AST_INT && f->a->kind != AST_FLOAT) return ic_error(ic, f->a, NULL, "'mean_value' must be a number");
        if (d->n_mean == 4) return ic_error(ic, f, NULL, "more than 4 mean_value entries");
        d->mean[d->n_mean++] = f->a->kind == AST_INT ? (double)f->a->ival : f->a->fval;
    }
    return 0;
}

/* data_param: an LMDB's source, batch_size and backend (Caffe's default is LEVELDB). */
static int read_data_param(ic_ctx *ic, const ast_node *L, const char *name, ic_data *d) {
    const ast_node *p = NULL;
    if (ic_msg(ic, L, "data_param", &p) < 0) return -1;
    if (!p) return ic_error(ic, L, NULL, "Data layer \"%s\" needs data_param { source batch_size backend }", name);
    if (ic_only_fields(ic, p, "data_param", KNOWN("source", "batch_size", "backend", "rand_skip", "prefetch",
                                                  "force_encoded_color", "cache", "shuffle", "precache", "threads",
                                                  "parser_threads")) < 0 ||
        ic_word(ic, p, "source", &d->source) < 0 || ic_int(ic, p, "batch_size", &d->batch) < 0)
        return -1;
    const char *backend = "LEVELDB";   /* Caffe's default */
    if (ic_word(ic, p, "backend", &backend) < 0) return -1;
    if (strcmp(backend, "LMDB") != 0 && strcmp(backend, "LEVELDB") != 0)
        return ic_error(ic, ic_get(p, "backend"), "set backend: LMDB or LEVELDB",
                        "Data layer \"%s\": backend %s; Caffe's databases are LMDB or LEVELDB", name, backend);
    d->leveldb = strcmp(backend, "LEVELDB") == 0;
    if (!d->source) return ic_error(ic, p, NULL, "Data layer \"%s\" needs data_param source", name);
    if (d->batch < 1) return ic_error(ic, p, NULL, "Data layer \"%s\" needs batch_size >= 1", name);
    if (ic_get(p, "rand_skip"))
        ic_note(ic, ic_get(p, "rand_skip"), "layer \"%s\": rand_skip: trainc shuffles the whole set every epoch", name);
    /* NVCaffe's reader: cache holds the records in memory (as trainc does), shuffle (with cache)
     * reorders them every epoch (as trainc does, from its seed); the threads are its own plan */
    int cache = 0, shuffle = 0;
    if (ic_bool(ic, p, "cache", &cache) < 0 || ic_bool(ic, p, "shuffle", &shuffle) < 0) return -1;
    d->shuffled = cache && shuffle;
    static const char *const threads[] = { "threads", "parser_threads", "precache", NULL };
    for (const char *const *f = threads; *f; f++)
        if (ic_get(p, *f))
            ic_note(ic, ic_get(p, *f), "layer \"%s\": %s: how NVCaffe reads in parallel; trainc's loader plans its own",
                    name, *f);
    return 0;
}

#ifdef TRAINC_WITH_LMDB
/* rt_lmdb_probe or rt_leveldb_probe, as this trainc was built (mk/lmdb.mk, mk/leveldb.mk). */
static rt_status probe_db(int leveldb, const char *path, long *n, int *c, int *h, int *w, rt_err *err) {
#ifdef TRAINC_WITH_LEVELDB
    if (leveldb) return rt_leveldb_probe(path, n, c, h, w, err);
#else
    if (leveldb) {
        (void)n, (void)c, (void)h, (void)w;
        snprintf(err->msg, sizeof err->msg, "this trainc was built without libleveldb and cannot read %.300s", path);
        snprintf(err->hint, sizeof err->hint, "build trainc with libleveldb-dev installed (WITH_LEVELDB=1), or convert "
                 "the database to LMDB (convert_imageset -backend lmdb) and set backend: LMDB");
        return RT_E_ARG;
    }
#endif
    return rt_lmdb_probe(path, n, c, h, w, err);
}
#endif

/* The database's shape and record count; a relative source is Caffe's, relative to where
 * Caffe runs, so it is looked up there (the current folder), then beside the prototxt. */
static int probe_lmdb(ic_ctx *ic, const ast_node *L, const char *name, ic_data *d) {
#ifdef TRAINC_WITH_LMDB
    rt_err err;
    int c = 0, h = 0, w = 0;
    if (probe_db(d->leveldb, d->source, &d->records, &c, &h, &w, &err) == RT_OK) {
        d->c = c, d->h = h, d->w = w;
        return 0;
    }
    const char *slash = strrchr(ic->opt->net_path, '/');
    if (d->source[0] != '/' && slash) {
        char beside[4096];
        snprintf(beside, sizeof beside, "%.*s/%s", (int)(slash - ic->opt->net_path), ic->opt->net_path, d->source);
        rt_err err2;
        if (probe_db(d->leveldb, beside, &d->records, &c, &h, &w, &err2) == RT_OK) {
            d->c = c, d->h = h, d->w = w;
            d->source = ast_arena_strdup(ic->arena, beside);
            return 0;
        }
    }
    return ic_error(ic, ic_get(ic_get(L, "data_param")->a, "source"),
                    "run the import where Caffe would run (its paths are relative to that folder), or give the "
                    "database's path; the input shape and the training-set size are read from it",
                    "Data layer \"%s\": %s", name, err.msg);
#else
    return ic_error(ic, L, "build trainc with liblmdb-dev, libprotobuf-c-dev and protobuf-c-compiler (WITH_LMDB=1)",
                    "Data layer \"%s\": this trainc was built without liblmdb and cannot read the database for the "
                    "input shape", name);
#endif
}

/* A file Caffe names relative to where it runs: there (the current folder), else beside the
 * prototxt; the path found, or NULL. */
static const char *caffe_relative(ic_ctx *ic, const char *path, FILE **f) {
    *f = fopen(path, "r");
    if (*f) return path;
    const char *slash = strrchr(ic->opt->net_path, '/');
    if (path[0] == '/' || !slash) return NULL;
    char beside[4096];
    snprintf(beside, sizeof beside, "%.*s/%s", (int)(slash - ic->opt->net_path), ic->opt->net_path, path);
    *f = fopen(beside, "r");
    return *f ? ast_arena_strdup(ic->arena, beside) : NULL;
}

/* ImageData: image_data_param's list (its lines are the set's size), batch, root_folder,
 * new_height/new_width, is_color (false: one gray channel, decoded as cv::imread's
 * IMREAD_GRAYSCALE), the list shuffled as trainc shuffles. */
static int read_image_data(ic_ctx *ic, const ast_node *L, const char *name, ic_data *d) {
    const ast_node *p = NULL;
    if (ic_msg(ic, L, "image_data_param", &p) < 0) return -1;
    if (!p) return ic_error(ic, L, NULL, "ImageData layer \"%s\" needs image_data_param { source batch_size }", name);
    int is_color = 1, shuffle = 0;
    d->root = "";
    if (ic_only_fields(ic, p, "image_data_param", KNOWN("source", "batch_size", "rand_skip", "shuffle", "new_height",
                                                        "new_width", "is_color", "root_folder")) < 0 ||
        ic_word(ic, p, "source", &d->source) < 0 || ic_int(ic, p, "batch_size", &d->batch) < 0 ||
        ic_bool(ic, p, "is_color", &is_color) < 0 || ic_bool(ic, p, "shuffle", &shuffle) < 0 ||
        ic_int(ic, p, "new_height", &d->new_h) < 0 || ic_int(ic, p, "new_width", &d->new_w) < 0 ||
        ic_word(ic, p, "root_folder", &d->root) < 0)
        return -1;
    if (!d->source) return ic_error(ic, p, NULL, "ImageData layer \"%s\" needs image_data_param source", name);
    if (d->batch < 1) return ic_error(ic, p, NULL, "ImageData layer \"%s\" needs batch_size >= 1", name);
    d->gray = !is_color;
    if ((d->new_h > 0) != (d->new_w > 0) || d->new_h < 0 || d->new_w < 0)
        return ic_error(ic, ic_get(p, d->new_h > 0 ? "new_height" : "new_width"), "give both new_height and new_width",
                        "ImageData layer \"%s\": new_height and new_width resize together (as Caffe requires)", name);
    if (!d->new_h && !d->crop)
        return ic_error(ic, L, "give new_height/new_width or transform_param crop_size: the net's input size",
                        "ImageData layer \"%s\": the images' own size is the input; trainc needs it in the spec", name);
    FILE *f = NULL;
    const char *found = caffe_relative(ic, d->source, &f);
    if (!found)
        return ic_error(ic, ic_get(p, "source"), "run the import where Caffe would run (its paths are relative to that "
                        "folder), or give the list's path; the training-set size is its line count",
                        "ImageData layer \"%s\": cannot read the image list %s", name, d->source);
    d->source = found;
    char line[8192];
    d->records = 0;
    while (fgets(line, sizeof line, f))
        if (line[strspn(line, " \t\r\n")]) d->records++;
    fclose(f);
    if (d->records == 0) return ic_error(ic, ic_get(p, "source"), NULL, "ImageData layer \"%s\": %s lists no images", name, d->source);
    d->c = d->gray ? 1 : 3;
    d->h = (int)(d->crop ? d->crop : d->new_h), d->w = (int)(d->crop ? d->crop : d->new_w);
    if (d->crop && d->new_h && (d->crop > d->new_h || d->crop > d->new_w))
        return ic_error(ic, ic_get(ic_get(L, "transform_param")->a, "crop_size"), NULL, "ImageData layer \"%s\": "
                        "crop_size %lld is larger than new_height x new_width %lldx%lld", name, (long long)d->crop,
                        (long long)d->new_h, (long long)d->new_w);
    if (!shuffle)
        ic_note(ic, ic_get(p, "shuffle") ? ic_get(p, "shuffle") : p, "layer \"%s\": shuffle false reads the list in "
                "order; trainc shuffles it every epoch from the run's seed", name);
    if (ic_get(p, "rand_skip"))
        ic_note(ic, ic_get(p, "rand_skip"), "layer \"%s\": rand_skip: trainc shuffles the whole set every epoch", name);
    return 0;
}

/* rt_hdf5_probe where trainc links libhdf5 (WITH_HDF5=1, mk/hdf5.mk); otherwise a refusal. */
static rt_status hdf5_probe(const char *list, long *n, int *c, int *h, int *w, rt_err *err) {
#ifdef TRAINC_WITH_HDF5
    return rt_hdf5_probe(list, n, c, h, w, err);
#else
    (void)n, (void)c, (void)h, (void)w;
    snprintf(err->msg, sizeof err->msg, "this trainc was built without libhdf5 and cannot read %.300s", list);
    snprintf(err->hint, sizeof err->hint, "build trainc with libhdf5-dev installed (WITH_HDF5=1)");
    return RT_E_ARG;
#endif
}

/* HDF5Data: hdf5_data_param's list of .h5 files (relative to where Caffe runs, else beside
 * the prototxt), batch and shuffle; the samples' shape and count come from the files. Caffe
 * applies no transform_param to it. */
static int read_hdf5_data(ic_ctx *ic, const ast_node *L, const char *name, ic_data *d) {
    const ast_node *p = NULL;
    if (ic_msg(ic, L, "hdf5_data_param", &p) < 0) return -1;
    if (!p) return ic_error(ic, L, NULL, "HDF5Data layer \"%s\" needs hdf5_data_param { source batch_size }", name);
    int shuffle = 0;
    if (ic_only_fields(ic, p, "hdf5_data_param", KNOWN("source", "batch_size", "shuffle")) < 0 ||
        ic_word(ic, p, "source", &d->source) < 0 || ic_int(ic, p, "batch_size", &d->batch) < 0 ||
        ic_bool(ic, p, "shuffle", &shuffle) < 0)
        return -1;
    if (ic_get(L, "transform_param"))
        return ic_error(ic, ic_get(L, "transform_param"), "remove transform_param (Caffe refuses it here too)",
                        "HDF5Data layer \"%s\": HDF5 samples go to the net as they are", name);
    if (!d->source) return ic_error(ic, p, NULL, "HDF5Data layer \"%s\" needs hdf5_data_param source", name);
    if (d->batch < 1) return ic_error(ic, p, NULL, "HDF5Data layer \"%s\" needs batch_size >= 1", name);
    FILE *f = NULL;
    const char *found = caffe_relative(ic, d->source, &f);
    if (f) fclose(f);
    rt_err err;
    if (!found || hdf5_probe(found, &d->records, &d->c, &d->h, &d->w, &err) != RT_OK) {
        if (!found) snprintf(err.msg, sizeof err.msg, "cannot read the list %.300s", d->source), err.hint[0] = 0;
        return ic_error(ic, ic_get(p, "source"), err.hint[0] ? err.hint : "run the import where Caffe would run (its "
                        "paths are relative to that folder); the input shape and the set's size are read from the files",
                        "HDF5Data layer \"%s\": %s", name, err.msg);
    }
    d->source = found;
    if (!shuffle)
        ic_note(ic, ic_get(p, "shuffle") ? ic_get(p, "shuffle") : p, "layer \"%s\": shuffle false reads the files in "
                "order; trainc shuffles the samples every epoch from the run's seed", name);
    return 0;
}

/* DummyData: its first shape (or num/channels/height/width) is [N, C, H, W]. */
static int read_dummy(ic_ctx *ic, const ast_node *L, const char *name, ic_data *d) {
    const ast_node *p = NULL, *shape = NULL;
    if (ic_msg(ic, L, "dummy_data_param", &p) < 0) return -1;
    if (!p) return ic_error(ic, L, NULL, "DummyData layer \"%s\" needs dummy_data_param { shape { dim ... } }", name);
    if (ic_only_fields(ic, p, "dummy_data_param", KNOWN("shape", "data_filler", "num", "channels", "height", "width")) < 0)
        return -1;
    int64_t dims[4] = { 0 };
    int n = 0;
    if (ic_get(p, "shape")) {
        shape = ic_get(p, "shape")->a;
        if (shape->kind != AST_MESSAGE) return ic_error(ic, shape, NULL, "'shape' must be a message { dim: N ... }");
        for (int i = 0; i < shape->n_kids && n < 4; i++)
            if (strcmp(shape->kids[i]->text, "dim") == 0 && shape->kids[i]->a->kind == AST_INT)
                dims[n++] = shape->kids[i]->a->ival;
    } else {
        static const char *const f[] = { "num", "channels", "height", "width" };
        for (n = 0; n < 4; n++)
            if (ic_int(ic, p, f[n], &dims[n]) <= 0) break;
    }
    if (n != 4 || dims[0] < 1 || dims[1] < 1 || dims[2] < 1 || dims[3] < 1)
        return ic_error(ic, shape ? shape : p, "give the data top's shape as [N, C, H, W]",
                        "DummyData layer \"%s\": trainc nets read images [N, C, H, W]", name);
    d->batch = dims[0], d->c = (int)dims[1], d->h = (int)dims[2], d->w = (int)dims[3];
    d->records = d->batch;
    ic_note(ic, L, "layer \"%s\" (DummyData): trainc's synthetic source, one batch of %lld generated images, each "
            "a class-dependent blob plus noise, not Caffe's filler values (for timing, as DummyData is used)",
            name, (long long)d->batch);
    return 0;
}

/* Data layers trainc reads nothing for: what to do instead. */
static int refuse(ic_ctx *ic, const ast_node *L, const char *type, const char *name) {
    const ast_node *at = ic_get(L, "type");
    if (strcmp(type, "MemoryData") == 0)
        return ic_error(ic, at, "write the samples into an LMDB and read it with a Data layer (backend: LMDB)",
                        "MemoryData layer \"%s\" takes arrays from the program that runs Caffe; a trainer reads "
                        "its data itself", name);
    if (strcmp(type, "WindowData") == 0 || strcmp(type, "AnnotatedData") == 0 || strcmp(type, "VideoData") == 0)
        return ic_error(ic, at, "trainc trains classifiers on whole images: crop the windows or frames into an "
                        "LMDB of labelled images and read it with a Data layer (backend: LMDB)",
                        "%s layer \"%s\" reads %s; trainc has no such reader", type, name,
                        strcmp(type, "VideoData") == 0 ? "video frames" : "boxes within images (detection data)");
    return ic_error(ic, at, "read the data with a Data layer (backend: LMDB) or an Input layer",
                    "%s layer \"%s\": trainc has no reader for it", type, name);
}

int ic_data_layer(ic_ctx *ic, const ast_node *L, const char *type, const char *name, int train) {
    int image = strcmp(type, "ImageData") == 0, hdf5 = strcmp(type, "HDF5Data") == 0;
    if (strcmp(type, "Data") != 0 && strcmp(type, "DummyData") != 0 && !image && !hdf5) return refuse(ic, L, type, name);
    if (ic_only_fields(ic, L, "the data layer", KNOWN("name", "type", "top", "include", "exclude", "transform_param",
                                                      "data_param", "dummy_data_param", "image_data_param",
                                                      "hdf5_data_param")) < 0)
        return -1;
    ic_data d = { .layer = L, .name = name, .type = type, .set = 1 };
    if (read_transform(ic, L, name, &d) < 0) return -1;
    if (strcmp(type, "Data") == 0) {
        if (read_data_param(ic, L, name, &d) < 0 || probe_lmdb(ic, L, name, &d) < 0) return -1;
        if (train && !d.shuffled)
            ic_note(ic, ic_get(L, "data_param"), "layer \"%s\": Caffe reads the database in key order (convert_imageset "
                    "--shuffle writes it shuffled once); trainc shuffles the whole set every epoch from the run's seed", name);
    } else if (image) {
        if (read_image_data(ic, L, name, &d) < 0 || (d.mean_file && image_mean_size(ic, L, name, &d) < 0)) return -1;
        if (!ic->resize_noted++)   /* decoded and resized as Caffe's OpenCV (3.1 and later) does */
            ic_note(ic, ic_get(L, "image_data_param"), "layer \"%s\": the images are decoded as cv::imread and resized "
                    "as cv::resize (INTER_LINEAR) do, bit for bit (interpolation: OPENCV_LINEAR%s), turned upright by "
                    "their EXIF orientation tag as OpenCV 3.1 and later turn them (OpenCV 2.4 did not)", name,
                    d.gray ? ", gray: cv::imread's IMREAD_GRAYSCALE" : "");
    } else if (hdf5) {
        if (read_hdf5_data(ic, L, name, &d) < 0) return -1;
    } else if (read_dummy(ic, L, name, &d) < 0) {
        return -1;
    }
    const ic_data *other = train ? &ic->val_data : &ic->train_data;
    if (other->set && ((strcmp(other->type, "ImageData") == 0) != image || (strcmp(other->type, "HDF5Data") == 0) != hdf5))
        return ic_error(ic, ic_get(L, "type"), "read both phases from the same kind of source (ImageData lists, or "
                        "databases, or HDF5 lists)", "%s layer \"%s\" beside the %s layer \"%s\": trainc reads its training and test "
                        "images the same way", type, name, other->type, other->name);
    if (other->set && !strcmp(type, "Data") && !strcmp(other->type, "Data") && other->leveldb != d.leveldb)
        return ic_error(ic, ic_get(L, "type"), "convert one database so that both phases have the same backend",
                        "Data layer \"%s\" reads a%s beside the %s of \"%s\": trainc reads its training and test "
                        "databases the same way", name, d.leveldb ? " LevelDB" : "n LMDB",
                        other->leveldb ? "LevelDB" : "LMDB", other->name);
    if (d.n_mean > 1 && d.n_mean != d.c)
        return ic_error(ic, ic_get(ic_get(L, "transform_param")->a, "mean_value"), NULL, "%s layer \"%s\": %d mean_value "
                        "entries for %d channels (one, or one per channel)", type, name, d.n_mean, d.c);
    if (d.mean_file && !image && (d.mean_c != d.c || d.mean_h != d.h || d.mean_w != d.w))
        return ic_error(ic, ic_get(ic_get(L, "transform_param")->a, "mean_file"), "compute the mean of this database "
                        "(Caffe's compute_image_mean)", "%s layer \"%s\": the mean file %s is a %dx%dx%d image, the "
                        "database's images %dx%dx%d (Caffe refuses them too)", type, name, d.mean_file, d.mean_c,
                        d.mean_h, d.mean_w, d.c, d.h, d.w);
    if (!image && d.crop == d.h && d.crop == d.w) {   /* the whole image: no window */
        d.crop = 0;
    } else if (!image && d.crop && strcmp(type, "Data") == 0) {   /* Caffe's window: random in TRAIN, the center in TEST */
        if (d.crop > d.h || d.crop > d.w)
            return ic_error(ic, ic_get(ic_get(L, "transform_param")->a, "crop_size"), NULL, "%s layer \"%s\": crop_size "
                            "%lld is larger than the database's %dx%d images", type, name, (long long)d.crop, d.h, d.w);
        d.db_h = d.h, d.db_w = d.w;
        d.h = d.w = (int)d.crop;
    } else if (!image && d.crop && (d.crop != d.h || d.crop != d.w)) {
        return ic_error(ic, ic_get(ic_get(L, "transform_param")->a, "crop_size"), "leave crop_size out",
                        "%s layer \"%s\": crop_size %lld of %dx%d samples; Caffe crops only images",
                        type, name, (long long)d.crop, d.h, d.w);
    }
    if (d.mirror && !train)
        return ic_error(ic, ic_get(ic_get(L, "transform_param")->a, "mirror"), "remove mirror from the TEST-phase layer",
                        "%s layer \"%s\": Caffe mirrors test images at random; trainc evaluates them as they are",
                        type, name);
    const ast_node *top = ic_get(L, "top");
    if (!top || top->a->kind != AST_STRING) return ic_error(ic, L, NULL, "%s layer \"%s\" needs a top", type, name);
    ic_data *slot = train ? &ic->train_data : &ic->val_data;
    if (slot->set)
        return ic_error(ic, L, "keep one data layer per phase", "a second %s-phase data layer (\"%s\" came first)",
                        train ? "TRAIN" : "TEST", slot->name);
    *slot = d;
    if (!train) return 0;
    if (ic->have_input) return ic_error(ic, L, "trainc nets read one input image", "a data layer beside an Input layer");
    ic->batch = d.batch, ic->in_c = d.c, ic->in_h = d.h, ic->in_w = d.w;
    ic->have_input = 1;
    return ic_blob_set(ic, top->a->text, "data", d.c, d.h, d.w) ? 0 : -1;
}

/* One split of the data block. */
static void print_split(FILE *out, const char *split, const ic_data *d) {
    int image = strcmp(d->type, "ImageData") == 0, train = !strcmp(split, "train"), hdf5 = !strcmp(d->type, "HDF5Data");
    fprintf(out, "  %s { source: \"%s\"", split, strcmp(d->type, "DummyData") == 0 ? "synthetic" : image ? "image-list"
            : hdf5 ? "hdf5" : d->leveldb ? "leveldb" : "lmdb");
    if (strcmp(d->type, "Data") == 0 || image || hdf5) fprintf(out, " path: \"%s\"", d->source);
    else if (train) fprintf(out, " samples: %lld", (long long)d->records);
    if (image && d->root[0]) fprintf(out, " root_folder: \"%s\"", d->root);
    fprintf(out, " batch_per_rank: %lld", (long long)d->batch);
    if (image) {   /* Caffe: resize, then a random crop (TRAIN) or the center (TEST); OpenCV's B, G, R */
        if (d->new_h) fprintf(out, " resize_to: [%lld, %lld]", (long long)d->new_h, (long long)d->new_w);
        fputs(" interpolation: OPENCV_LINEAR", out);
        fputs(d->gray ? " gray: true" : " bgr: true", out);
        if (d->crop && !train) fprintf(out, " center_crop: %lld", (long long)d->crop);
    }
    if (!image && d->db_h && !train) fprintf(out, " center_crop: %lld", (long long)d->crop);
    if ((image || d->db_h) && train && (d->crop || d->mirror)) {
        fputs(" augment {", out);
        if (d->crop) fprintf(out, " random_crop { size: %lld }", (long long)d->crop);
        if (d->mirror) fputs(" flip: true", out);
        fputs(" }", out);
    } else if (d->mirror) {
        fputs(" augment { flip: true }", out);
    }
    if (d->mean_file) {   /* (x - the mean image at the pixel's stored place) * scale */
        fprintf(out, " normalize { mean_file: \"%s\" scale: %s }", d->mean_file, ic_num(d->scale));
    } else if (d->n_mean || d->scale != 1) {   /* (x - mean_value) * scale, Caffe's order of channels */
        fputs(" normalize { mean_value: [", out);
        for (int i = 0; i < d->c; i++) fprintf(out, "%s%s", i ? ", " : "", ic_num(d->n_mean ? d->mean[d->n_mean > 1 ? i : 0] : 0));
        fprintf(out, "] scale: %s }", ic_num(d->scale));
    }
    fputs(" }\n", out);
}

int ic_print_data(ic_ctx *ic, FILE *out) {
    const ic_data *t = &ic->train_data, *v = &ic->val_data;
    if (!t->set) {
        fputs("\n# Caffe's data layers become the data block: the batch is the Input layer's first dim;\n"
              "# say where the images are (source, path) in a spec that extends this one.\n", out);
        fprintf(out, "data {\n  train { batch_per_rank: %lld }\n}\n", (long long)ic->batch);
        return 0;
    }
    int image = strcmp(t->type, "ImageData") == 0;
    fprintf(out, "\n# Caffe's data layers: \"%s\" (TRAIN) and %s%s%s%s\n", t->name, v->set ? "\"" : "no TEST-phase one",
            v->set ? v->name : "", v->set ? "\" (TEST)" : "",
            strcmp(t->type, "Data") == 0 ? "; the trainer's --data replaces the training database's path."
            : image || !strcmp(t->type, "HDF5Data") ? "; the trainer's --data replaces the training list's path." : ".");
    fputs("data {\n", out);
    if (strcmp(t->type, "Data") == 0) fprintf(out, "  train_samples: %ld   # the records in %s\n", t->records, t->source);
    if (image) fprintf(out, "  train_samples: %ld   # the images %s lists\n", t->records, t->source);
    if (!strcmp(t->type, "HDF5Data"))
        fprintf(out, "  train_samples: %ld   # the samples of the files %s lists\n", t->records, t->source);
    print_split(out, "train", t);
    if (v->set) print_split(out, "val", v);
    fputs("}\n", out);
    return 0;
}
