/* The TRAINC_* table (rt_env.def, runtime/core/env.c): every row well formed, each kind's
 * accessor reading good values and defaults, a bad value refused with a message naming the
 * variable, the value and the allowed values, the start-up check by reader, the warning for
 * an unknown name, and a read that does not match the table aborting. */
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rt_env.h"
#include "testlib.h"

static jmp_buf stopped;
static char last_msg[1024], last_hint[1024], last_warning[1024];
static int warnings;

static void catch_error(const char *msg, const char *hint) {
    snprintf(last_msg, sizeof last_msg, "%s", msg);
    snprintf(last_hint, sizeof last_hint, "%s", hint);
    longjmp(stopped, 1);
}

static void catch_warning(const char *msg) {
    snprintf(last_warning, sizeof last_warning, "%s", msg);
    warnings++;
}

/* Every name starts with TRAINC_ and appears once; defaults and ranges agree with the kind. */
static void test_table(void) {
    for (int i = 0; i < RT_ENV_COUNT; i++) {
        const rt_env_var *v = &rt_env_table[i];
        CHECK(!strncmp(v->name, "TRAINC_", 7));
        CHECK(v->meaning && *v->meaning && !strchr(v->meaning, '|'));
        CHECK(v->dflt && *v->dflt && !strchr(v->dflt, '|'));
        CHECK(v->readers != 0);
        for (int j = 0; j < i; j++) CHECK(strcmp(v->name, rt_env_table[j].name) != 0);
        char why[512], hint[512];
        switch (v->kind) {
        case RT_ENV_KIND_BOOL:
            CHECK(!strcmp(v->values, "0|1"));
            CHECK(!strcmp(v->dflt, "0") || !strcmp(v->dflt, "1"));
            break;
        case RT_ENV_KIND_ENUM: {
            /* the first value is the default, and there is a second to choose */
            size_t first = strcspn(v->values, "|");
            CHECK(v->values[first] == '|' && strlen(v->dflt) == first && !strncmp(v->values, v->dflt, first));
            break;
        }
        case RT_ENV_KIND_INT:
        case RT_ENV_KIND_NUM: {
            CHECK(v->values == NULL && v->lo <= v->hi && v->lo >= 0);
            char *end;
            double d = strtod(v->dflt, &end);
            if (!*end) CHECK(d >= v->lo && d <= v->hi && rt_env_parse((rt_env_id)i, v->dflt, why, sizeof why,
                                                                     hint, sizeof hint) == 0);
            break;
        }
        case RT_ENV_KIND_PATH: CHECK(v->values == NULL); break;
        }
    }
    CHECK(RT_ENV_COUNT >= 20);
}

/* Unset and empty give the default; each allowed value reads back. */
static void test_accessors(void) {
    unsetenv("TRAINC_SGEMM");
    CHECK(!strcmp(rt_env_enum(RT_ENV_TRAINC_SGEMM), "auto"));
    CHECK(rt_env_is(RT_ENV_TRAINC_SGEMM, "auto") && !rt_env_is(RT_ENV_TRAINC_SGEMM, "openblas"));
    setenv("TRAINC_SGEMM", "", 1);
    CHECK(rt_env_is(RT_ENV_TRAINC_SGEMM, "auto"));
    setenv("TRAINC_SGEMM", "onednn", 1);
    CHECK(rt_env_is(RT_ENV_TRAINC_SGEMM, "onednn"));
    unsetenv("TRAINC_SGEMM");

    unsetenv("TRAINC_CUDA_GRAPH");
    CHECK(rt_env_bool(RT_ENV_TRAINC_CUDA_GRAPH) == 1);   /* default 1 */
    setenv("TRAINC_CUDA_GRAPH", "0", 1);
    CHECK(rt_env_bool(RT_ENV_TRAINC_CUDA_GRAPH) == 0);
    unsetenv("TRAINC_CUDA_GRAPH");
    CHECK(rt_env_bool(RT_ENV_TRAINC_CPU_NO_BF16) == 0);
    setenv("TRAINC_CPU_NO_BF16", "1", 1);
    CHECK(rt_env_bool(RT_ENV_TRAINC_CPU_NO_BF16) == 1);
    unsetenv("TRAINC_CPU_NO_BF16");

    CHECK(rt_env_long(RT_ENV_TRAINC_CUDNN_WORKSPACE_MB) == 1024);
    setenv("TRAINC_CUDNN_WORKSPACE_MB", "16", 1);
    CHECK(rt_env_long(RT_ENV_TRAINC_CUDNN_WORKSPACE_MB) == 16);
    unsetenv("TRAINC_CUDNN_WORKSPACE_MB");
    CHECK(rt_env_long(RT_ENV_TRAINC_CUDA_DEVICE) == -1);   /* the default is words: the reader decides */
    setenv("TRAINC_CUDA_DEVICE", "3", 1);
    CHECK(rt_env_long(RT_ENV_TRAINC_CUDA_DEVICE) == 3);
    unsetenv("TRAINC_CUDA_DEVICE");

    CHECK(rt_env_num(RT_ENV_TRAINC_HANG_TIMEOUT) == 0);
    setenv("TRAINC_HANG_TIMEOUT", "2.5", 1);
    CHECK(rt_env_num(RT_ENV_TRAINC_HANG_TIMEOUT) == 2.5);
    unsetenv("TRAINC_HANG_TIMEOUT");

    CHECK(rt_env_path(RT_ENV_TRAINC_HOME) == NULL);
    setenv("TRAINC_HOME", "", 1);
    CHECK(rt_env_path(RT_ENV_TRAINC_HOME) == NULL);
    setenv("TRAINC_HOME", "/opt/trainc", 1);
    CHECK(rt_env_path(RT_ENV_TRAINC_HOME) && !strcmp(rt_env_path(RT_ENV_TRAINC_HOME), "/opt/trainc"));
    unsetenv("TRAINC_HOME");
}

/* rt_env_parse's verdicts and the words of its message. */
static void test_parse(void) {
    char why[512], hint[512];
    struct { rt_env_id id; const char *text; int ok; const char *says; } cases[] = {
        { RT_ENV_TRAINC_SGEMM, "foo", 0, "TRAINC_SGEMM='foo' is not allowed: TRAINC_SGEMM takes auto, openblas or onednn" },
        { RT_ENV_TRAINC_SGEMM, "OpenBLAS", 0, "auto, openblas or onednn" },
        { RT_ENV_TRAINC_CONV_C1, "maybe", 0, "TRAINC_CONV_C1='maybe' is not allowed: TRAINC_CONV_C1 takes on or off" },
        { RT_ENV_TRAINC_CONV_C1, "off", 1, NULL },
        { RT_ENV_TRAINC_CUDA_GRAPH, "yes", 0, "TRAINC_CUDA_GRAPH takes 0 or 1" },
        { RT_ENV_TRAINC_CUDA_GRAPH, "2", 0, "takes 0 or 1" },
        { RT_ENV_TRAINC_HANG_TIMEOUT, "abc", 0, "TRAINC_HANG_TIMEOUT='abc' is not allowed: TRAINC_HANG_TIMEOUT takes a number from 0 to 86400" },
        { RT_ENV_TRAINC_HANG_TIMEOUT, "1e3", 1, NULL },
        { RT_ENV_TRAINC_HANG_TIMEOUT, "nan", 0, "from 0 to 86400" },
        { RT_ENV_TRAINC_HANG_TIMEOUT, "-1", 0, "from 0 to 86400" },
        { RT_ENV_TRAINC_COMM_POLL_US, "100000", 1, NULL },
        { RT_ENV_TRAINC_COMM_POLL_US, "100001", 0, "a whole number from 0 to 100000" },
        { RT_ENV_TRAINC_COMM_POLL_US, "20us", 0, "a whole number from 0 to 100000" },
        { RT_ENV_TRAINC_COMM_POLL_US, "-1", 0, "a whole number from 0 to 100000" },
        { RT_ENV_TRAINC_COMM_TIMEOUT, "0", 0, "a whole number from 1 to" },
        { RT_ENV_TRAINC_CUDA_PROFILE_STEP, "99999999999999999999", 0, "a whole number from 0 to 2147483647" },
        { RT_ENV_TRAINC_CUDA_ENV, "any text at all", 1, NULL },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        why[0] = hint[0] = '\0';
        int rc = rt_env_parse(cases[i].id, cases[i].text, why, sizeof why, hint, sizeof hint);
        CHECK((rc == 0) == cases[i].ok);
        if (!cases[i].ok && !strstr(why, cases[i].says)) {
            fprintf(stderr, "  %s='%s': \"%s\" does not say \"%s\"\n", rt_env_table[cases[i].id].name, cases[i].text,
                    why, cases[i].says);
            test_failures++;
        }
        if (!cases[i].ok) CHECK(strstr(hint, "unset it for the default") && strstr(hint, "--help-env"));
    }
    /* the hint names the default */
    rt_env_parse(RT_ENV_TRAINC_COMM_POLL_US, "x", why, sizeof why, hint, sizeof hint);
    CHECK(strstr(hint, "default (20)") != NULL);
}

/* A bad value read through an accessor reaches the error handler, which stops the program. */
static void test_refusal(void) {
    rt_env_on_error(catch_error);
    setenv("TRAINC_CONV_STRIDED_WINOGRAD", "of", 1);
    int refused = 0;
    if (setjmp(stopped) == 0) rt_env_is(RT_ENV_TRAINC_CONV_STRIDED_WINOGRAD, "off");
    else refused = 1;
    CHECK(refused && strstr(last_msg, "TRAINC_CONV_STRIDED_WINOGRAD='of'") && strstr(last_msg, "on or off"));
    unsetenv("TRAINC_CONV_STRIDED_WINOGRAD");

    /* the start-up check reads only the given readers' variables */
    setenv("TRAINC_CUDA_BN", "older", 1);
    refused = 0;
    if (setjmp(stopped) == 0) rt_env_check(RT_ENV_CPU | RT_ENV_COMPILER);
    else refused = 1;
    CHECK(!refused);
    if (setjmp(stopped) == 0) rt_env_check(RT_ENV_ANY_TRAINER);
    else refused = 1;
    CHECK(refused && strstr(last_msg, "TRAINC_CUDA_BN='older'") && strstr(last_msg, "new or old"));
    unsetenv("TRAINC_CUDA_BN");
    rt_env_on_error(NULL);
}

/* A TRAINC_* name outside the table warns, naming a close known one. */
static void test_unknown_names(void) {
    rt_env_on_warning(catch_warning);
    warnings = 0;
    rt_env_check(RT_ENV_ANY_TRAINER);
    CHECK(warnings == 0);
    setenv("TRAINC_SGEM", "openblas", 1);
    rt_env_check(RT_ENV_ANY_TRAINER);
    CHECK(warnings == 1 && strstr(last_warning, "TRAINC_SGEM is not") && strstr(last_warning, "did you mean TRAINC_SGEMM?"));
    unsetenv("TRAINC_SGEM");
    setenv("TRAINC_WHATEVER", "1", 1);
    rt_env_check(RT_ENV_ANY_TRAINER);
    CHECK(warnings == 2 && strstr(last_warning, "TRAINC_WHATEVER") && !strstr(last_warning, "did you mean"));
    unsetenv("TRAINC_WHATEVER");
    rt_env_on_warning(NULL);
}

/* fn run in a child: whether it ended on abort(). */
static int aborts(void (*fn)(void)) {
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stderr)) _exit(3);
        fn();
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

static void enum_as_bool(void) { (void)rt_env_bool(RT_ENV_TRAINC_SGEMM); }
static void value_not_allowed(void) { (void)rt_env_is(RT_ENV_TRAINC_SGEMM, "mkl"); }
static void int_as_path(void) { (void)rt_env_path(RT_ENV_TRAINC_COMM_TIMEOUT); }
static void good_read(void) { (void)rt_env_is(RT_ENV_TRAINC_SGEMM, "openblas"); }

static void test_misuse(void) {
    CHECK(aborts(enum_as_bool));
    CHECK(aborts(value_not_allowed));
    CHECK(aborts(int_as_path));
    CHECK(!aborts(good_read));
}

/* The listings name every row. */
static void test_listing(void) {
    for (int markdown = 0; markdown < 2; markdown++) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        rt_env_print(f, markdown);
        fclose(f);
        for (int i = 0; i < RT_ENV_COUNT; i++) CHECK(strstr(text, rt_env_table[i].name) != NULL);
        if (markdown) CHECK(strstr(text, "| `TRAINC_SGEMM` | `auto`, `openblas`, `onednn` | auto |") != NULL);
        free(text);
    }
}

/* The checks assume no TRAINC_* set: make test-cpu-paths runs the unit tests with some. */
static void clear_trainc_env(void) {
    extern char **environ;
    for (int again = 1; again;) {
        again = 0;
        for (char **e = environ; *e; e++)
            if (!strncmp(*e, "TRAINC_", 7)) {
                char name[128];
                size_t len = strcspn(*e, "=");
                snprintf(name, sizeof name, "%.*s", (int)len, *e);
                unsetenv(name);
                again = 1;   /* unsetenv moves environ's entries: scan again */
                break;
            }
    }
}

int main(void) {
    clear_trainc_env();
    test_table();
    test_accessors();
    test_parse();
    test_refusal();
    test_unknown_names();
    test_misuse();
    test_listing();
    return test_finish("test_env");
}
