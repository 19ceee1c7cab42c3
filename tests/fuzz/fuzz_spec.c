/* libFuzzer harness over the front end: parse + resolve (spec_load_buffer), then sema and the
 * canonical printer on whatever resolved. Any crash, leak or sanitizer report is a bug: the
 * compiler must answer every input with diagnostics. Built by mk/golden.mk with
 * clang -fsanitize=fuzzer,address,undefined; run by tests/fuzz/fuzz_test.sh. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resolve.h"

/* mk/golden.mk defines FUZZ_WITH_SEMA once a compiler source file defines sema_analyze. */
#ifdef FUZZ_WITH_SEMA
#include "sema.h"
#endif

static FILE *sink(void) {
    static FILE *devnull;
    if (!devnull) devnull = fopen("/dev/null", "w");
    return devnull;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    diag_ctx diag;
    diag_init(&diag, sink());
    spec_doc doc;
    if (spec_load_buffer(&doc, &diag, "fuzz.spec", (const char *)data, size) == 0) {
        char *text = spec_print_to_string(doc.root);
        free(text);
#ifdef FUZZ_WITH_SEMA
        sema_result res;
        memset(&res, 0, sizeof res);
        sema_analyze(&res, &diag, doc.root);
        sema_result_free(&res);
#endif
    }
    spec_doc_free(&doc);
    return 0;
}
