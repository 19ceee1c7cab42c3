/* compiler/emit/template.c: placeholders are filled, and a missing value, an unused value or an
 * unknown template is an error rather than a silently wrong model.c. */
#include "testlib.h"
#include "template.h"

#include <stdlib.h>
#include <string.h>

static char *fill(const char *name, const template_var *vars, int n, int *rc) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    *rc = template_fill(f, name, vars, n);
    fclose(f);
    return buf;
}

int main(void) {
    int rc;
    template_var run[] = { { "RUN_CONFIG", "    .epochs = 3,\n" } };
    char *out = fill("model_main.c.in", run, 1, &rc);
    CHECK(rc == 0);
    CHECK(strstr(out, "static const rt_run_config run = {\n    .epochs = 3,\n};") != NULL);
    CHECK(strstr(out, "rt_trainer_main(&model, &run, argc, argv)") != NULL);
    CHECK(strchr(out, '@') == NULL);
    free(out);

    /* every placeholder of the header, with one value left out */
    template_var header[] = { { "NAME", "n" }, { "VERSION", "v" }, { "SPEC_PATH", "p" } };
    out = fill("model_header.c.in", header, 3, &rc);
    CHECK(rc == -1);   /* @SPEC_HASH@ has no value */
    free(out);

    template_var extra[] = { { "RUN_CONFIG", "" }, { "NOT_IN_TEMPLATE", "x" } };
    out = fill("model_main.c.in", extra, 2, &rc);
    CHECK(rc == -1);   /* a value nobody asked for */
    free(out);

    out = fill("no_such_template.in", run, 1, &rc);
    CHECK(rc == -1);
    free(out);
    CHECK(template_text("model_descriptor.c.in") != NULL);
    return test_finish("test_template");
}
