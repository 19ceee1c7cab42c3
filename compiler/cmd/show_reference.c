/* `trainc show`: the published result a spec reproduces (its reference block), printed next
 * to the run that sema derived, so the two can be read side by side. */
#include "show.h"

#include <string.h>

/* Published accuracies are written as fractions (0.763) or percents (76.3). */
static double as_percent(double v) { return v <= 1.0 ? 100.0 * v : v; }

static bool has_reference(const run_config *r) {
    return r->reference.source[0] || r->reference.url[0] || r->reference.time[0] || r->reference.notes[0] ||
           r->reference.top1 >= 0 || r->reference.top5 >= 0 || r->reference.gpus > 0;
}

void show_reference(FILE *out, const run_config *r) {
    if (!has_reference(r)) return;
    fputs("\nreference (published; outside the training hash):\n", out);
    if (r->reference.source[0]) fprintf(out, "  source            %s\n", r->reference.source);
    if (r->reference.url[0]) fprintf(out, "  url               %s\n", r->reference.url);
    if (r->reference.top1 >= 0 || r->reference.top5 >= 0) {
        fputs("  accuracy         ", out);
        if (r->reference.top1 >= 0) fprintf(out, " top-1 %.2f%%", as_percent(r->reference.top1));
        if (r->reference.top5 >= 0) fprintf(out, " top-5 %.2f%%", as_percent(r->reference.top5));
        fputc('\n', out);
    }
    if (r->reference.gpus > 0) {
        fprintf(out, "  GPUs              %lld", (long long)r->reference.gpus);
        if (r->has_run && r->ranks != r->reference.gpus)
            fprintf(out, " (this spec runs %lld rank%s)", (long long)r->ranks_for_show, r->ranks_for_show == 1 ? "" : "s");
        fputc('\n', out);
    }
    if (r->reference.time[0]) fprintf(out, "  time to train     %s\n", r->reference.time);
    if (r->reference.notes[0]) fprintf(out, "  notes             %s\n", r->reference.notes);
}

static void json_text(FILE *out, const char *key, const char *s, bool *first) {
    if (!s[0]) return;
    fprintf(out, "%s\"%s\": \"", *first ? "" : ", ", key);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(out, "\\%c", *p);
        else if (*p < 32 || *p >= 127) fprintf(out, "\\u%04x", *p);
        else fputc(*p, out);
    }
    fputc('"', out);
    *first = false;
}

void show_reference_json(FILE *out, const run_config *r) {
    if (!has_reference(r)) { fputs("  \"reference\": null,\n", out); return; }
    bool first = true;
    fputs("  \"reference\": {", out);
    json_text(out, "source", r->reference.source, &first);
    json_text(out, "url", r->reference.url, &first);
    json_text(out, "time", r->reference.time, &first);
    json_text(out, "notes", r->reference.notes, &first);
    if (r->reference.top1 >= 0) fprintf(out, "%s\"top1_percent\": %.4g", first ? "" : ", ", as_percent(r->reference.top1)), first = false;
    if (r->reference.top5 >= 0) fprintf(out, "%s\"top5_percent\": %.4g", first ? "" : ", ", as_percent(r->reference.top5)), first = false;
    if (r->reference.gpus > 0) fprintf(out, "%s\"gpus\": %lld", first ? "" : ", ", (long long)r->reference.gpus);
    fputs("},\n", out);
}
