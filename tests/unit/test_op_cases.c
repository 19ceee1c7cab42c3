/* The op-case table (tests/op_cases.def) has a row for every op kind of IR_OPS, each with at
 * least one CPU net and one CUDA op test. With --list, prints "kind<TAB>nets" per row for
 * tests/emu/op_cases_emu_test.sh, which runs the nets on both backends. */
#include "testlib.h"
#include "ir.h"

#include <stdio.h>
#include <string.h>

typedef struct { const char *nets, *cuda; } op_case;

static const op_case cases[IR_OP_COUNT] = {
#define OP_CASE(kind, nets, cuda) [IR_##kind] = { nets, cuda },
#include "../op_cases.def"
#undef OP_CASE
};

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--list") == 0) {
        for (int k = 0; k < IR_OP_COUNT; k++)
            if (cases[k].nets) printf("%s\t%s\n", ir_ops[k].name, cases[k].nets);
        return 0;
    }
    for (int k = 0; k < IR_OP_COUNT; k++) {
        if (!cases[k].nets) {
            fprintf(stderr, "op \"%s\" has no row in tests/op_cases.def: add its CPU nets and CUDA op tests\n", ir_ops[k].name);
            CHECK(0);
            continue;
        }
        CHECK(cases[k].nets[0] != '\0');
        CHECK(cases[k].cuda && cases[k].cuda[0] != '\0');
    }
    return test_finish("test_op_cases");
}
