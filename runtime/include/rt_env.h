/* The TRAINC_* environment variables, read only through this table (rt_env.def): each has a
 * kind, its allowed values and a default, and a bad value stops the program with one message
 * naming the variable, the value and what it allows, instead of being ignored.
 *
 *   if (rt_env_is(RT_ENV_TRAINC_CONV_C1, "off")) ...        an ENUM: unset is its first value
 *   long cap = rt_env_long(RT_ENV_TRAINC_CUDNN_WORKSPACE_MB); an INT: unset is its default
 *
 * A variable is named by its id (RT_ENV_ + its name), so reading one that is not in the table
 * does not compile; reading one as another kind (rt_env_bool on an ENUM) or asking rt_env_is
 * about a value it does not allow aborts at the first call. Unset and empty mean the same.
 * Shared by the runtime (plain C, and the .cu files), trainc and the unit tests. */
#ifndef RT_ENV_H
#define RT_ENV_H
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { RT_ENV_KIND_BOOL, RT_ENV_KIND_ENUM, RT_ENV_KIND_INT, RT_ENV_KIND_NUM, RT_ENV_KIND_PATH } rt_env_kind;

/* Who reads a variable (rt_env.def's READERS). */
enum { RT_ENV_TRAINER = 1, RT_ENV_CPU = 2, RT_ENV_CUDA = 4, RT_ENV_MPI = 8, RT_ENV_COMPILER = 16 };
#define RT_ENV_ANY_TRAINER (RT_ENV_TRAINER | RT_ENV_CPU | RT_ENV_CUDA | RT_ENV_MPI)

typedef enum {
#define RT_ENV(name, kind, values, lo, hi, dflt, readers, meaning) RT_ENV_##name,
#include "rt_env.def"
#undef RT_ENV
    RT_ENV_COUNT
} rt_env_id;

typedef struct {
    const char *name;
    rt_env_kind kind;
    const char *values;    /* BOOL, ENUM: "a|b|c" */
    double lo, hi;         /* INT, NUM */
    const char *dflt;
    unsigned readers;
    const char *meaning;
} rt_env_var;

extern const rt_env_var rt_env_table[RT_ENV_COUNT];

/* The accessors: the value, or the default when unset or empty; a bad value stops the
 * program (rt_env_on_error). */
int rt_env_bool(rt_env_id id);
const char *rt_env_enum(rt_env_id id);              /* one of VALUES */
int rt_env_is(rt_env_id id, const char *value);     /* rt_env_enum(id) is value */
long rt_env_long(rt_env_id id);                     /* INT; -1 when unset and the default is words */
double rt_env_num(rt_env_id id);                    /* NUM; 0 when unset and the default is words */
const char *rt_env_path(rt_env_id id);              /* PATH; NULL when unset or empty */

/* Checks text against id's kind: 0, or -1 with what is wrong in why and the fix in hint. */
int rt_env_parse(rt_env_id id, const char *text, char *why, size_t why_cap, char *hint, size_t hint_cap);

/* At start-up: every set variable read by one of readers must hold an allowed value (so a
 * typo stops the run even where the op that reads it never runs), and a TRAINC_* name not in
 * the table draws a warning naming the closest one (a warning, not an error: one environment
 * serves trainers and trainc builds of other versions, whose names may differ from this
 * table's; a bad value of a known name is wrong for this program whatever else runs). */
void rt_env_check(unsigned readers);

/* How a bad value stops the program: by default rt_die_status(2, hint, msg), a usage error
 * like a bad option; trainc sets its own diagnostic style. fn must not return. */
typedef void (*rt_env_error_fn)(const char *msg, const char *hint);
void rt_env_on_error(rt_env_error_fn fn);
/* How an unknown name is reported: by default rt_warn. */
typedef void (*rt_env_warn_fn)(const char *msg);
void rt_env_on_warning(rt_env_warn_fn fn);

/* The table for --help-env (markdown 0) or README (markdown 1). */
void rt_env_print(FILE *out, int markdown);

#ifdef __cplusplus
}
#endif
#endif
