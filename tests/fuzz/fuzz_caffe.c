/* libFuzzer harness over `trainc import caffe`: the input is a net prototxt, or a net and a
 * solver separated by a line "---"; without one it is also tried as the solver of a small
 * valid net. Imported with and without --approximate. Any crash, leak or sanitizer report is
 * a bug: the importer must answer every input with diagnostics. Built by mk/caffe.mk. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import_caffe.h"

static const char valid_net[] =
    "layer { name: \"data\" type: \"Input\" top: \"data\" input_param { shape { dim: 2 dim: 1 dim: 8 dim: 8 } } }\n"
    "layer { name: \"fc\" type: \"InnerProduct\" bottom: \"data\" top: \"fc\" inner_product_param { num_output: 3 } }\n"
    "layer { name: \"loss\" type: \"SoftmaxWithLoss\" bottom: \"fc\" bottom: \"label\" top: \"loss\" }\n";

static FILE *sink(void) {
    static FILE *devnull;
    if (!devnull) devnull = fopen("/dev/null", "w");
    return devnull;
}

static void import(const char *net, size_t net_len, const char *solver, size_t solver_len) {
    for (int approximate = 0; approximate < 2; approximate++) {
        import_caffe_options opt = { "net.prototxt", solver ? "solver.prototxt" : NULL, approximate };
        import_caffe_text(sink(), sink(), &opt, net, net_len, solver, solver_len);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *text = (const char *)data;
    const char *sep = memmem(text, size, "\n---\n", 5);
    if (sep) {
        size_t net_len = (size_t)(sep - text);
        import(text, net_len, sep + 5, size - net_len - 5);
    } else {
        import(text, size, NULL, 0);
        import(valid_net, sizeof valid_net - 1, text, size);
    }
    return 0;
}
