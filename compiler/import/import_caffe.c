/* `trainc import caffe`: reads the net (and solver) prototxt with the spec parser, and
 * prints one trainc spec: notes, the net one layer a line, the input batch, the solver. */
#include "import_caffe.h"

#include <stdlib.h>
#include <string.h>

#include "import_caffe_internal.h"
#include "parse.h"

/* Reads a prototxt from disk, or from `text` when it is not NULL (the fuzzer). */
static const ast_node *load_prototxt(ic_ctx *ic, const char *path, const char *text, size_t len) {
    src_file *file;
    if (text) {
        file = ast_arena_alloc(ic->arena, sizeof *file);
        memset(file, 0, sizeof *file);
        file->path = ast_arena_strdup(ic->arena, path);
        file->text = ast_arena_strndup(ic->arena, text, len);
        file->len = strlen(file->text);
    } else {
        file = source_load(ic->arena, ic->diag, path, NULL, (src_loc){ 0 });
    }
    return file ? parse_source(ic->arena, ic->diag, file) : NULL;
}

static const char *base_name(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* A layer reads the previous one unless it says otherwise. */
static void print_layer(FILE *out, const ic_layer *t, const char *previous) {
    fprintf(out, "  %s { name: \"%s\"", t->type, t->name);
    if (t->n_inputs > 1) {
        fputs(" inputs: [", out);
        for (int i = 0; i < t->n_inputs; i++) fprintf(out, "%s\"%s\"", i ? ", " : "", t->inputs[i]);
        fputs("]", out);
    } else if (t->n_inputs == 1 && strcmp(t->inputs[0], previous) != 0) {
        fprintf(out, " input: \"%s\"", t->inputs[0]);
    }
    fprintf(out, "%s }\n", t->args);
}

static void print_spec(FILE *out, const ic_ctx *ic, const char *solver_text) {
    const import_caffe_options *opt = ic->opt;
    fprintf(out, "# Imported by 'trainc import caffe%s' from %s", opt->approximate ? " --approximate" : "",
            base_name(opt->net_path));
    if (opt->solver_path) fprintf(out, " and %s", base_name(opt->solver_path));
    fputs(".\n", out);
    for (int i = 0; i < ic->n_notes; i++) fprintf(out, "# %s\n", ic->notes[i]);
    if (ic->net_name) fprintf(out, "name: \"%s\"\n", ic->net_name);
    fputs("\nnet {\n", out);
    fprintf(out, "  input_shape: [%lld, %lld, %lld]\n", (long long)ic->in_c, (long long)ic->in_h, (long long)ic->in_w);
    fprintf(out, "  classes: %lld\n", (long long)ic->classes);
    const char *previous = "data";
    for (int i = 0; i < ic->n_layers; i++) {
        print_layer(out, &ic->layers[i], previous);
        previous = ic->layers[i].name;
    }
    fputs("}\n", out);
    ic_print_data((ic_ctx *)ic, out);
    if (ic->precision[0]) fprintf(out, "\n# NVCaffe's default_forward_type / default_backward_type and global_grad_scale\n%s\n", ic->precision);
    if (solver_text) fputs(solver_text, out);
}

/* One data layer's line of the summary. */
static void summarize_data(FILE *f, const char *phase, const ic_data *d, const char *split) {
    if (strcmp(d->type, "DummyData") == 0)
        fprintf(f, "  data %s: DummyData \"%s\" -> data.%s, synthetic, batch %lld\n", phase, d->name, split,
                (long long)d->batch);
    else if (strcmp(d->type, "HDF5Data") == 0)
        fprintf(f, "  data %s: HDF5Data \"%s\" -> data.%s, hdf5 %s (%ld samples of %dx%dx%d), batch %lld\n", phase,
                d->name, split, d->source, d->records, d->c, d->h, d->w, (long long)d->batch);
    else if (strcmp(d->type, "ImageData") == 0)
        fprintf(f, "  data %s: ImageData \"%s\" -> data.%s, image-list %s (%ld images%s%s), %dx%dx%d%s, batch %lld%s%s%s%s%s\n",
                phase, d->name, split, d->source, d->records, d->root[0] ? " under " : "", d->root, d->c, d->h, d->w,
                d->gray ? " gray" : "", (long long)d->batch, d->new_h ? ", resized as cv::resize (OPENCV_LINEAR)" : "",
                d->mean_file ? ", mean image " : "", d->mean_file ? d->mean_file : "",
                d->scale != 1 || d->n_mean ? ", normalize" : "", d->mirror ? ", flip" : "");
    else
        fprintf(f, "  data %s: Data \"%s\" -> data.%s, %s %s (%ld records of %dx%dx%d), batch %lld%s%s%s%s%s%s\n", phase,
                d->name, split, d->leveldb ? "leveldb" : "lmdb", d->source, d->records, d->c, d->db_h ? d->db_h : d->h,
                d->db_w ? d->db_w : d->w, (long long)d->batch, d->db_h ? (strcmp(split, "train") ? ", center crop " : ", random crop ")
                : "", d->db_h ? ic_num((double)d->crop) : "", d->mean_file ? ", mean image " : "", d->mean_file ? d->mean_file : "",
                d->scale != 1 || d->n_mean ? ", normalize" : "", d->mirror ? ", flip" : "");
}

/* What the import did, for the person who ran it: data sources and phases, each Caffe
 * layer's trainc layer, the solver, and how many notes and approximations the spec holds. */
static void print_summary(FILE *f, const ic_ctx *ic, const char *spec_path) {
    fprintf(f, "trainc import caffe: %s%s%s -> %s\n", base_name(ic->opt->net_path), ic->opt->solver_path ? " + " : "",
            ic->opt->solver_path ? base_name(ic->opt->solver_path) : "", spec_path ? spec_path : "the spec");
    if (ic->train_data.set) summarize_data(f, "TRAIN", &ic->train_data, "train");
    else fprintf(f, "  data: an Input layer, batch %lld (give data.train's source and path in a spec that extends this one)\n",
                 (long long)ic->batch);
    if (ic->val_data.set) summarize_data(f, "TEST", &ic->val_data, "val");
    fprintf(f, "  net \"%s\": input [%lld, %lld, %lld], %lld classes; %d Caffe layers, %d trainc layers:\n",
            ic->net_name ? ic->net_name : "", (long long)ic->in_c, (long long)ic->in_h, (long long)ic->in_w,
            (long long)ic->classes, ic->n_caffe_layers, ic->n_layers);
    for (int i = 0; i < ic->n_layers; i++) {
        const ic_layer *t = &ic->layers[i];
        fprintf(f, "    %s (%s)%s%s%s -> %s\n", t->name, t->caffe_type ? t->caffe_type : "?", t->folded ? " + " : "",
                t->folded ? t->folded : "", t->folded ? " (Scale)" : "", t->type);
    }
    if (ic->solver_summary) fprintf(f, "  solver: %s\n", ic->solver_summary);
    if (ic->precision[0]) fprintf(f, "  NVCaffe precision: %s\n", ic->precision);
    fprintf(f, "  notes at the top of the spec: %d, of them approximations: %d\n", ic->n_notes, ic->n_approximations);
}

/* A Slice's part that no layer reads (Caffe lets it end in a Silence layer or the net's
 * outputs) is left out with a note: trainc refuses unused layers. */
static void drop_unread_slices(ic_ctx *ic) {
    int kept = 0;
    for (int i = 0; i < ic->n_layers; i++) {
        ic_layer *t = &ic->layers[i];
        int read = !t->unread_ok || i + 1 == ic->n_layers;
        for (int j = i + 1; !read && j < ic->n_layers; j++) {
            const ic_layer *u = &ic->layers[j];
            if (u->n_inputs == 0 && j == i + 1) read = 1;   /* reads the previous layer */
            for (int k = 0; !read && k < u->n_inputs; k++) read = strcmp(u->inputs[k], t->name) == 0;
        }
        if (!read) {
            ast_node at = { .loc = t->loc };
            ic_note(ic, &at, "layer \"%s\": no layer reads this part of the Slice (Caffe's Silence or a net output); "
                    "left out", t->name);
            continue;
        }
        ic->layers[kept++] = *t;
    }
    ic->n_layers = kept;
}

int import_caffe_text(FILE *out, FILE *err, const import_caffe_options *opt, const char *net_text,
                      size_t net_len, const char *solver_text, size_t solver_len) {
    diag_ctx diag;
    diag_init(&diag, err);
    ic_ctx ic = { .diag = &diag, .arena = ast_arena_new(), .opt = opt };
    if (!ic.arena) return -1;
    int bad = 0;
    const ast_node *net = load_prototxt(&ic, opt->net_path, net_text, net_len);
    const ast_node *solver = NULL;
    if (opt->solver_path) solver = load_prototxt(&ic, opt->solver_path, solver_text, solver_len);
    if (!net || (opt->solver_path && !solver)) bad = -1;
    if (!bad) bad = ic_import_net(&ic, net);
    if (!bad) drop_unread_slices(&ic);
    char *solver_spec = NULL;
    size_t solver_spec_len = 0;
    if (!bad && solver) {
        FILE *s = open_memstream(&solver_spec, &solver_spec_len);
        bad = s ? ic_import_solver(&ic, s, solver) : -1;
        if (s) fclose(s);
    }
    if (!bad) print_spec(out, &ic, solver_spec);
    if (!bad && !diag.n_errors && opt->summary) print_summary(opt->summary, &ic, opt->spec_path);
    free(solver_spec);
    free(ic.layers);
    free(ic.blobs);
    ast_arena_free(ic.arena);
    return bad || diag.n_errors ? -1 : 0;
}

int import_caffe(FILE *out, FILE *err, const import_caffe_options *opt) {
    return import_caffe_text(out, err, opt, NULL, 0, NULL, 0);
}
