/* trainc command line: check, show, diff, build. */
#include <stdio.h>
#include <string.h>
#include "resolve.h"

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: trainc check|print SPEC\n"); return 2; }
    diag_ctx diag;
    diag_init(&diag, stderr);
    spec_doc doc;
    int rc = spec_load(&doc, &diag, argv[2]);
    if (rc == 0 && strcmp(argv[1], "print") == 0) spec_print(stdout, doc.root);
    spec_doc_free(&doc);
    return rc == 0 ? 0 : 1;
}
