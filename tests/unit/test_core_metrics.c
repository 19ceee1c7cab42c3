/* metrics.jsonl lines verbatim (escaping, NaN -> null, the rewind of a resumed log) and
 * progress output in terminal and log modes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "rt_metrics.h"
#include "testlib.h"

static void check_line(const char *got, const char *want) {
    if (strcmp(got, want) != 0) {
        fprintf(stderr, "  line mismatch:\n    got  %s\n    want %s\n", got, want);
        test_failures++;
    }
}

/* The file holds exactly these lines. */
static void check_file(const char *path, const char *const *want, int n_want) {
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    char line[1024];
    int n = 0;
    while (f && fgets(line, sizeof line, f)) {
        if (n < n_want) check_line(line, want[n]);
        n++;
    }
    CHECK(n == n_want);
    if (f) fclose(f);
}

int main(void) {
    char root[] = "/tmp/test_core_metrics.XXXXXX";
    CHECK(mkdtemp(root) != NULL);
    char out[600];
    snprintf(out, sizeof out, "%s/run/out", root);

    rt_json j;
    rt_json_init(&j);
    rt_json_begin(&j);
    rt_json_str(&j, "s", "a\"b\\c\nd\te\x01 caf\xc3\xa9");
    rt_json_num(&j, "nan", NAN);
    rt_json_num(&j, "inf", -INFINITY);
    rt_json_num(&j, "x", 0.1);
    rt_json_int(&j, "big", 9007199254740993LL);
    rt_json_bool(&j, "t", 1);
    rt_json_str(&j, "none", NULL);
    check_line(rt_json_end(&j),
               "{\"s\":\"a\\\"b\\\\c\\nd\\te\\u0001 caf\xc3\xa9\",\"nan\":null,\"inf\":null,"
               "\"x\":0.1,\"big\":9007199254740993,\"t\":true,\"none\":null}");
    rt_json_free(&j);

    rt_metrics m;
    rt_err e;
    CHECK(rt_metrics_open(&m, out, "metrics.jsonl", -1, &e) == RT_OK);
    rt_metrics_start(&m, &(rt_start_record){.name = "net", .spec_hash = "abc", .batch = 32, .ranks = 2,
                                            .params = 1234, .resumed_at = -1});
    rt_metrics_train(&m, &(rt_train_record){.epoch = 1, .step = 100, .lr = 0.1, .loss = 0.5, .top1 = 0.25,
                                            .images_per_s = 1234.5, .comm_wait_ms = NAN});
    rt_metrics_train(&m, &(rt_train_record){.epoch = 1, .step = 200, .lr = 0.1, .loss = 0.5, .top1 = 0.25,
                                            .images_per_s = 1234.5, .comm_wait_ms = 1.5});
    rt_metrics_eval(&m, 1, 200, NAN, 0.875, 0.99, 12.5);
    rt_metrics_summary(&m, &(rt_summary_record){.step = 200, .loss = 0.25, .top1 = 0.9, .top5 = NAN,
                                                .wall_s = 10, .params_hash = "0123456789abcdef"});
    rt_metrics_close(&m);
    /* A run resumed at step 100 drops what came after its checkpoint, and the summary. */
    CHECK(rt_metrics_open(&m, out, "metrics.jsonl", 100, &e) == RT_OK);
    rt_metrics_benchmark(&m, &(rt_benchmark_record){.steps = 40, .batch = 128, .ranks = 2, .overlap = 1,
                                                    .seconds = 2, .images_per_s = 2560, .comm_wait_ms = 3.5,
                                                    .comm_exposed_ms = NAN});
    rt_metrics_close(&m);

    char path[700];
    snprintf(path, sizeof path, "%s/metrics.jsonl", out);
    const char *want[] = {
        "{\"event\":\"start\",\"name\":\"net\",\"spec_hash\":\"abc\",\"batch\":32,\"ranks\":2,"
        "\"global_batch\":64,\"params\":1234,\"resumed_at\":-1}\n",
        "{\"event\":\"train\",\"epoch\":1,\"step\":100,\"lr\":0.1,\"loss\":0.5,\"top1\":0.25,"
        "\"images_per_s\":1234.5}\n",
        "{\"event\":\"benchmark\",\"steps\":40,\"batch\":128,\"ranks\":2,\"overlap\":true,\"seconds\":2,"
        "\"images_per_s\":2560,\"comm_wait_ms\":3.5,\"comm_exposed_ms\":null}\n",
    };
    check_file(path, want, 3);
    /* The records a run without resume writes, verbatim. */
    CHECK(rt_metrics_open(&m, out, "metrics.jsonl", -1, &e) == RT_OK);
    rt_metrics_train(&m, &(rt_train_record){.epoch = 0, .step = 5, .lr = 0.05, .loss = 2.5, .top1 = 0.125,
                                            .images_per_s = 99, .comm_wait_ms = 1.5});
    rt_metrics_eval(&m, 1, 200, NAN, 0.875, 0.99, 12.5);
    rt_metrics_summary(&m, &(rt_summary_record){.step = 200, .loss = 0.25, .top1 = 0.9, .top5 = NAN,
                                                .wall_s = 10, .params_hash = "0123456789abcdef"});
    rt_metrics_close(&m);
    const char *want2[] = {
        "{\"event\":\"train\",\"epoch\":0,\"step\":5,\"lr\":0.05,\"loss\":2.5,\"top1\":0.125,"
        "\"images_per_s\":99,\"comm_wait_ms\":1.5}\n",
        "{\"event\":\"eval\",\"epoch\":1,\"step\":200,\"loss\":null,\"top1\":0.875,\"top5\":0.99,"
        "\"wall_s\":12.5}\n",
        "{\"event\":\"summary\",\"step\":200,\"loss\":0.25,\"top1\":0.9,\"top5\":null,\"wall_s\":10,"
        "\"params_hash\":\"0123456789abcdef\"}\n",
    };
    check_file(path, want2, 3);

    /* Unwritable output: a regular file where the directory should be. */
    snprintf(path, sizeof path, "%s/plain", root);
    fclose(fopen(path, "w"));
    CHECK(rt_metrics_open(&m, path, "metrics.jsonl", -1, &e) == RT_E_IO && strstr(e.msg, "metrics.jsonl"));

    /* Progress. */
    char buf[256];
    rt_progress_format(buf, sizeof buf, 1200, 5000, 3, 0.43214, 0.1, 12345.4, NAN, 185);
    check_line(buf, "epoch 3 step 1200/5000  loss 0.4321  lr 0.10000  12345 img/s  ETA 3m05s");
    rt_progress_format(buf, sizeof buf, 1200, 5000, 3, 0.43214, 0.1, 12345.4, 2.345, 185);
    check_line(buf, "epoch 3 step 1200/5000  loss 0.4321  lr 0.10000  12345 img/s  comm wait 2.35 ms/step  ETA 3m05s");
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    rt_progress p;
    rt_progress_init(&p, mem, 0, 10);
    CHECK(p.tty == 0);
    rt_progress_update(&p, 1, 0, 1.0, 0.1, 100, NAN);    /* a log gets every update */
    rt_progress_note(&p, "epoch %d: a note", 1);
    rt_progress_update(&p, 10, 0, 1.0, 0.1, 100, NAN);
    rt_progress_finish(&p);
    fflush(mem);
    CHECK(strchr(text, '\r') == NULL);
    CHECK(strstr(text, "step 1/10") && strstr(text, "\nepoch 1: a note\n") && strstr(text, "step 10/10"));
    fclose(mem);
    free(text);
    mem = open_memstream(&text, &len);
    rt_progress_init(&p, mem, 0, 10);
    p.tty = 1;   /* as if stdout were a terminal */
    rt_progress_update(&p, 1, 0, 1.0, 0.1, 100, NAN);
    rt_progress_update(&p, 2, 0, 1.0, 0.1, 100, NAN);    /* suppressed: within 0.25 s */
    rt_progress_update(&p, 10, 0, 1.0, 0.1, 100, NAN);   /* the last step always shows */
    rt_progress_finish(&p);
    fflush(mem);
    CHECK(text[0] == '\r' && !strstr(text, "step 2/10") && strstr(text + 1, "\repoch 0 step 10/10") &&
          text[len - 1] == '\n');
    CHECK(strchr(text, '\n') == text + len - 1);   /* one newline, at the very end */
    fclose(mem);
    free(text);
    rt_progress_init(&p, NULL, 0, 10);   /* off: a rank other than 0 */
    rt_progress_update(&p, 1, 0, 1.0, 0.1, 100, NAN);
    rt_progress_note(&p, "nothing");
    rt_progress_finish(&p);

    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    CHECK(system(cmd) == 0);
    return test_finish("test_core_metrics");
}
