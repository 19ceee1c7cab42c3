/* The spec schema as data: message and field tables generated from schema.def, plus lookups
 * and default parsing. Everything that needs to know a field (sema, show, diff, docs) asks here. */
#ifndef TRAINC_SCHEMA_H
#define TRAINC_SCHEMA_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>

typedef enum {
#define SCHEMA_MESSAGE(id, name, doc) id,
#include "schema.def"
#undef SCHEMA_MESSAGE
    SM_COUNT
} schema_msg_id;

typedef enum {
    SF_INT, SF_FLOAT, SF_BOOL, SF_STRING, SF_ENUM, SF_INT_PAIR,
    SF_INT_LIST, SF_FLOAT_LIST, SF_STRING_LIST, SF_MSG,
    SF_TYPE_COUNT
} schema_type;

enum {
    SF_REQUIRED = 1 << 0,
    SF_REPEATED = 1 << 1,
    SF_LO_OPEN = 1 << 2,        /* the range excludes lo */
    SF_HI_OPEN = 1 << 3,        /* the range excludes hi */
    SF_PRESENCE = 1 << 4,       /* a message whose presence turns a feature on (solver.ema, warmup, init,
                                   data.val, a filler instead of PyTorch's default): `diff`
                                   does not expand it to its defaults when absent */
};

typedef struct schema_msg {
    schema_msg_id id;
    const char *name;
    const char *doc;
} schema_msg;

typedef struct schema_field {
    schema_msg_id msg;          /* the message the field belongs to */
    const char *name;
    schema_type type;
    schema_msg_id sub;          /* SF_MSG: the nested message */
    int flags;
    const char *group;          /* "" or the mutual-exclusion group */
    const char *def;            /* default as spec text; "" = none; may be descriptive */
    double lo, hi;              /* range of the value or of each list item */
    int list_len;               /* exact list length, 0 = any */
    const char *values;         /* "A|B|C" for enums and closed string sets, else "" */
    const char *units;
    const char *doc;
} schema_field;

extern const schema_msg schema_msgs[SM_COUNT];
extern const schema_field schema_fields[];
extern const int schema_field_count;

const schema_field *schema_find(schema_msg_id msg, const char *name);
/* NULL-terminated names of msg's fields (static storage, for diag_suggest). */
const char *const *schema_field_names(schema_msg_id msg);
const char *schema_type_name(schema_type type);
/* 1 if `word` is one of the '|'-separated values. */
int schema_value_allowed(const schema_field *f, const char *word);
/* The field's default as a number / bool / string; fails (returns 0) when it has none or
 * it is descriptive ("global batch"). */
int schema_default_number(const schema_field *f, double *out);
/* A list default ("[0.08, 1.0]") into out[0..cap); returns the item count, or -1 when the
 * field has no list default. */
int schema_default_list(const schema_field *f, double *out, int cap);
/* A default that depends on another field's value, written "key: value, key: value"
 * (data.train_samples by source): copies the value for `key` into buf; 0 when there is none. */
int schema_default_for(const schema_field *f, const char *key, char *buf, size_t cap);
/* A range bound or value as text: whole numbers as integers (2147483647, not 2.14748e+09),
 * others with %g. */
void schema_format_number(char *buf, size_t cap, double v);
/* Prints the field reference as a Markdown document (specs/REFERENCE.md, `trainc schema --markdown`). */
void schema_print_markdown(FILE *out);

#endif
