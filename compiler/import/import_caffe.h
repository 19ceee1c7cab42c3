/* `trainc import caffe`: translates a Caffe net prototxt (and optionally its solver) into a
 * trainc spec. Caffe settings with no trainc equivalent are errors at their file:line; with
 * `approximate`, the ones that change only how training proceeds (lr_mult, BN averaging,
 * filler types trainc lacks) are replaced by trainc's behaviour and noted in the spec instead. */
#ifndef TRAINC_IMPORT_CAFFE_H
#define TRAINC_IMPORT_CAFFE_H

#include <stddef.h>
#include <stdio.h>

typedef struct import_caffe_options {
    const char *net_path;       /* the net prototxt (required) */
    const char *solver_path;    /* the solver prototxt, or NULL */
    int approximate;            /* accept the settings listed above, with a note each */
    FILE *summary;              /* after a successful import, what it did (NULL: nothing) */
    const char *spec_path;      /* where the spec goes, for the summary */
} import_caffe_options;

/* Writes the spec to `out`. Returns 0 on success; otherwise every error has been printed to
 * `err` (file:line:col, the source line, a hint) and nothing was written to `out`. */
int import_caffe(FILE *out, FILE *err, const import_caffe_options *opt);
/* The same over texts in memory (the paths name them in messages); a NULL text is read from
 * its path. For the fuzzer. */
int import_caffe_text(FILE *out, FILE *err, const import_caffe_options *opt, const char *net_text,
                      size_t net_len, const char *solver_text, size_t solver_len);

#endif
