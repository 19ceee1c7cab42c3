/* `trainc import FORMAT ...`: the command line of the importers (Caffe today). The spec is
 * written to a temporary file and renamed into place, so a failed import leaves OUT as it was. */
#include "import_cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import_caffe.h"

static int import_usage(const char *fmt, const char *arg) {
    fputs("trainc: error: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\n  hint: trainc import caffe NET.prototxt [SOLVER.prototxt] -o SPEC [--approximate]\n", stderr);
    return 2;
}

static int write_atomically(const char *path, const char *text, size_t len) {
    size_t n = strlen(path) + 16;
    char *tmp = malloc(n);
    if (!tmp) return -1;
    snprintf(tmp, n, "%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    int ok = f && fwrite(text, 1, len, f) == len;
    if (f && fclose(f) != 0) ok = 0;
    if (ok && rename(tmp, path) != 0) ok = 0;
    if (!ok) {
        int e = errno;
        fprintf(stderr, "trainc: error: cannot write the spec to '%s': %s\n", path, strerror(e));
        if (e == ENOENT) fputs("  hint: the folder it names does not exist; create it first (mkdir -p)\n", stderr);
        else fputs("  hint: choose a file in a folder you can write to\n", stderr);
        remove(tmp);
    }
    free(tmp);
    return ok ? 0 : -1;
}

/* 1 if a and b name the same existing file. */
static int same_file(const char *a, const char *b) {
    struct stat sa, sb;
    return b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int import_main(int argc, char **argv) {
    if (argc < 1) return import_usage("import needs a FORMAT (caffe)%s", "");
    if (strcmp(argv[0], "caffe") != 0) return import_usage("unknown import format '%s' (caffe)", argv[0]);
    import_caffe_options opt = { 0 };
    const char *out_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) out_path = argv[++i];
        else if (strcmp(argv[i], "--approximate") == 0) opt.approximate = 1;
        else if (argv[i][0] == '-') return import_usage("unknown or incomplete option '%s' for import caffe", argv[i]);
        else if (!opt.net_path) opt.net_path = argv[i];
        else if (!opt.solver_path) opt.solver_path = argv[i];
        else return import_usage("import caffe takes one NET and at most one SOLVER; '%s' is a third file", argv[i]);
    }
    if (!opt.net_path) return import_usage("import caffe needs the NET prototxt%s", "");
    if (!out_path) return import_usage("import caffe needs -o SPEC%s", "");
    if (same_file(out_path, opt.net_path) || same_file(out_path, opt.solver_path))
        return import_usage("-o %s would overwrite an input; write the spec to a new file", out_path);
    char *text = NULL, *summary = NULL;
    size_t len = 0, summary_len = 0;
    FILE *mem = open_memstream(&text, &len), *sum = open_memstream(&summary, &summary_len);
    if (!mem || !sum) return 2;
    opt.summary = sum, opt.spec_path = out_path;
    int rc = import_caffe(mem, stderr, &opt);
    fclose(mem);
    fclose(sum);
    /* an -o that cannot be written is not a usage mistake: the import failed (1) */
    rc = rc == 0 && write_atomically(out_path, text, len) == 0 ? 0 : 1;
    if (rc == 0) fputs(summary, stdout);   /* only once the spec is in place */
    free(summary);
    free(text);
    return rc;
}
