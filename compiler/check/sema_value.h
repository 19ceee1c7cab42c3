/* Typed reads of a resolved, schema-checked message, with schema defaults for absent fields.
 * Asking for a field the schema does not declare is a compiler bug and aborts. */
#ifndef TRAINC_SEMA_VALUE_H
#define TRAINC_SEMA_VALUE_H

#include <stdbool.h>
#include <stdint.h>
#include "ast.h"
#include "schema.h"

const ast_node *sv_get(const ast_node *msg, schema_msg_id id, const char *field);  /* NULL: absent */
bool sv_has(const ast_node *msg, schema_msg_id id, const char *field);
int64_t sv_int(const ast_node *msg, schema_msg_id id, const char *field);
double sv_float(const ast_node *msg, schema_msg_id id, const char *field);
bool sv_bool(const ast_node *msg, schema_msg_id id, const char *field);
const char *sv_str(const ast_node *msg, schema_msg_id id, const char *field);   /* string or enum */
/* int or [a, b] into out[0..1]; the default when absent. */
void sv_pair(const ast_node *msg, schema_msg_id id, const char *field, int64_t out[2]);
/* A list of numbers into out[0..cap), or the schema's list default when absent; returns the
 * item count (-1: absent without a list default). */
int sv_floats(const ast_node *msg, schema_msg_id id, const char *field, double *out, int cap);
/* An enum field as the C enum whose spellings are names[0..n) (run_config.h). Every value the
 * schema allows must be among them, which is checked on each call: a miss aborts. */
int sv_enum(const ast_node *msg, schema_msg_id id, const char *field, const char *const *names, int n);
#define SV_ENUM(msg, id, field, names) sv_enum(msg, id, field, names, (int)(sizeof names / sizeof names[0]))
/* A message-valued field, or NULL when absent. */
const ast_node *sv_msg(const ast_node *msg, schema_msg_id id, const char *field);
/* Where the field is written, or the message's own location when it is absent. */
src_loc sv_loc(const ast_node *msg, schema_msg_id id, const char *field);
double sv_number(const ast_node *v);   /* INT or FLOAT literal as a double */

#endif
