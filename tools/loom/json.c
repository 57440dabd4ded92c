/* SPDX-License-Identifier: BSD-3-Clause */
/*
** json.c - cJSON helpers for the --json output of the `loom` commands.
** cJSON escapes every string, so op docs and file paths with quotes or
** control characters still give valid JSON.
*/
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "json.h"

int json_emit(cJSON *root)
{
    char *text = root != NULL ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (text == NULL) {
        fprintf(stderr, "loom: out of memory while writing JSON\n");
        return CLI_FAIL;
    }
    puts(text);
    cJSON_free(text);
    return CLI_OK;
}

cJSON *json_str(const char *s)
{
    return s != NULL ? cJSON_CreateString(s) : cJSON_CreateNull();
}

void json_add_str(cJSON *obj, const char *key, const char *s)
{
    cJSON_AddItemToObject(obj, key, json_str(s));
}

void json_add_num(cJSON *obj, const char *key, double v)
{
    cJSON_AddItemToObject(obj, key, cJSON_CreateNumber(v));
}

cJSON *json_dtype_array(uint64_t mask)
{
    cJSON *a = cJSON_CreateArray();
    for (int d = 1; d < LOOM_DTYPE_COUNT && a != NULL; d++) {
        if (mask & LOOM_DTYPE_BIT(d))
            cJSON_AddItemToArray(a, cJSON_CreateString(loom_dtype_name((loom_dtype)d)));
    }
    return a;
}

cJSON *json_shape(const loom_tensor *t)
{
    cJSON *a = cJSON_CreateArray();
    for (int32_t i = 0; i < t->ndim && a != NULL; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)t->shape[i]));
    return a;
}

cJSON *json_attr_value(const loom_attr_value *v)
{
    cJSON *a;
    if (!v->is_set)
        return cJSON_CreateNull();
    switch (v->type) {
    case LOOM_ATTR_INT:    return cJSON_CreateNumber((double)v->u.i);
    case LOOM_ATTR_FLOAT:  return cJSON_CreateNumber(v->u.f);
    case LOOM_ATTR_BOOL:   return cJSON_CreateBool(v->u.b);
    case LOOM_ATTR_STRING: return json_str(v->u.s);
    case LOOM_ATTR_INTS:
        a = cJSON_CreateArray();
        for (int64_t i = 0; i < v->count && a != NULL && v->u.ints != NULL; i++)
            cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v->u.ints[i]));
        return a;
    case LOOM_ATTR_FLOATS:
        a = cJSON_CreateArray();
        for (int64_t i = 0; i < v->count && a != NULL && v->u.floats != NULL; i++)
            cJSON_AddItemToArray(a, cJSON_CreateNumber(v->u.floats[i]));
        return a;
    default:
        return cJSON_CreateNull();
    }
}
