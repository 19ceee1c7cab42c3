/* Template filling for the code generators: the fixed text lives in the .in files of
 * templates/, the emitters supply the values. Strict both ways, so a renamed placeholder
 * cannot silently leave "@KEY@" in generated code or drop a value. */
#include "template.h"

#include <stdlib.h>
#include <string.h>

/* build/gen/templates.c, generated from templates/ by mk/compiler.mk */
extern const char *const trainc_template_names[];
extern const char *const trainc_template_texts[];

const char *template_text(const char *name) {
    for (int i = 0; trainc_template_names[i]; i++)
        if (!strcmp(trainc_template_names[i], name)) return trainc_template_texts[i];
    return NULL;
}

/* A placeholder is '@', one or more of [A-Z0-9_], '@'. */
static size_t key_length(const char *p) {
    size_t n = 0;
    while ((p[n] >= 'A' && p[n] <= 'Z') || (p[n] >= '0' && p[n] <= '9') || p[n] == '_') n++;
    return n && p[n] == '@' ? n : 0;
}

int template_fill(FILE *out, const char *name, const template_var *vars, int n_vars) {
    const char *text = template_text(name);
    if (!text) {
        fprintf(stderr, "trainc: internal error: no template '%s' in this build\n", name);
        return -1;
    }
    char *used = calloc((size_t)n_vars + 1, 1);
    int rc = 0;
    for (const char *p = text; *p; p++) {
        size_t n = *p == '@' ? key_length(p + 1) : 0;
        if (!n) {
            fputc(*p, out);
            continue;
        }
        int found = -1;
        for (int i = 0; i < n_vars && found < 0; i++)
            if (strlen(vars[i].key) == n && !strncmp(vars[i].key, p + 1, n)) found = i;
        if (found < 0) {
            fprintf(stderr, "trainc: internal error: template '%s' has @%.*s@, which its emitter does not fill\n",
                    name, (int)n, p + 1);
            rc = -1;
        } else {
            fputs(vars[found].value, out);
            used[found] = 1;
        }
        p += n + 1;   /* past the closing '@' */
    }
    for (int i = 0; i < n_vars; i++)
        if (!used[i]) {
            fprintf(stderr, "trainc: internal error: template '%s' has no @%s@ for the value its emitter supplies\n",
                    name, vars[i].key);
            rc = -1;
        }
    free(used);
    return rc;
}
