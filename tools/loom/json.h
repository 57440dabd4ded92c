/* SPDX-License-Identifier: BSD-3-Clause */
/*
** json.h - JSON output of the `loom` commands, built as a cJSON tree.
**
** Contract: every --json command builds one object and hands it to
** json_emit, which prints it to stdout followed by a newline and frees it.
** Strings that may be NULL go through json_str so a missing value becomes
** JSON null instead of a crash.
*/
#ifndef LOOM_CLI_JSON_H
#define LOOM_CLI_JSON_H

#include <cjson/cJSON.h>

#include "loom/loom.h"

/* Print root to stdout and free it. Returns 0, or 1 when memory ran out
** while building or printing (a NULL root counts as that). */
int json_emit(cJSON *root);

/* A string item, or null for NULL. */
cJSON *json_str(const char *s);
/* Add a string (null for NULL) / a number to obj under key. */
void json_add_str(cJSON *obj, const char *key, const char *s);
void json_add_num(cJSON *obj, const char *key, double v);
/* An array of the dtype names in mask (empty for "any"). */
cJSON *json_dtype_array(uint64_t mask);
/* The shape of t as an array of numbers. */
cJSON *json_shape(const loom_tensor *t);
/* An attribute value as its natural JSON type (null when unset). */
cJSON *json_attr_value(const loom_attr_value *v);

#endif /* LOOM_CLI_JSON_H */
