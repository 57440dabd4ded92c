/* SPDX-License-Identifier: BSD-3-Clause */
/*
** format.c - text forms of schema pieces (dtype masks, shapes, attribute
** types and values) for `loom list`, `info`, `run` and their JSON output.
**
** Every function writes a NUL-terminated string into the caller's buffer and
** truncates rather than overflows.
*/
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* Append to buf at *len, keeping the terminator; stops quietly when full. */
static void append(char *buf, size_t size, size_t *len, const char *fmt, ...) LOOM_PRINTF(4, 5);
static void append(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
    va_list ap;
    int n;
    if (*len >= size)
        return;
    va_start(ap, fmt);
    n = vsnprintf(buf + *len, size - *len, fmt, ap);
    va_end(ap);
    if (n > 0)
        *len = (size_t)n >= size - *len ? size - 1 : *len + (size_t)n;
}

char *cli_dtype_list(uint64_t mask, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    if (mask == 0) {
        append(buf, size, &len, "any");
        return buf;
    }
    for (int d = 1; d < LOOM_DTYPE_COUNT; d++) {
        if (mask & LOOM_DTYPE_BIT(d))
            append(buf, size, &len, "%s%s", len > 0 ? "," : "", loom_dtype_name((loom_dtype)d));
    }
    return buf;
}

char *cli_shape(const loom_tensor *t, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    append(buf, size, &len, "[");
    for (int32_t i = 0; i < t->ndim; i++)
        append(buf, size, &len, "%s%lld", i > 0 ? "," : "", (long long)t->shape[i]);
    append(buf, size, &len, "]");
    return buf;
}

const char *cli_attr_type_name(int32_t type)
{
    switch (type) {
    case LOOM_ATTR_INT:    return "int";
    case LOOM_ATTR_FLOAT:  return "float";
    case LOOM_ATTR_BOOL:   return "bool";
    case LOOM_ATTR_STRING: return "string";
    case LOOM_ATTR_INTS:   return "ints";
    case LOOM_ATTR_FLOATS: return "floats";
    case LOOM_ATTR_TENSOR: return "tensor";
    default:               return "?";
    }
}

char *cli_attr_value(const loom_attr_value *v, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    if (!v->is_set) {
        append(buf, size, &len, "none");
        return buf;
    }
    switch (v->type) {
    case LOOM_ATTR_INT:    append(buf, size, &len, "%lld", (long long)v->u.i); break;
    case LOOM_ATTR_FLOAT:  append(buf, size, &len, "%g", v->u.f); break;
    case LOOM_ATTR_BOOL:   append(buf, size, &len, "%s", v->u.b ? "true" : "false"); break;
    case LOOM_ATTR_STRING: append(buf, size, &len, "%s", v->u.s != NULL ? v->u.s : ""); break;
    case LOOM_ATTR_INTS:
        for (int64_t i = 0; i < v->count && v->u.ints != NULL; i++)
            append(buf, size, &len, "%s%lld", i > 0 ? "," : "", (long long)v->u.ints[i]);
        break;
    case LOOM_ATTR_FLOATS:
        for (int64_t i = 0; i < v->count && v->u.floats != NULL; i++)
            append(buf, size, &len, "%s%g", i > 0 ? "," : "", v->u.floats[i]);
        break;
    case LOOM_ATTR_TENSOR: append(buf, size, &len, "tensor"); break;
    default:               append(buf, size, &len, "?"); break;
    }
    return buf;
}

const char *cli_kernel_note(const loom_kernel_info *k)
{
    if (k->excluded)
        return "  (excluded by LOOM_BACKENDS)";
    if (!k->device_present)
        return "  (no device: cannot run here)";
    return "";
}

const char *cli_device_name(int32_t device_type)
{
    switch (device_type) {
    case LOOM_DEVICE_CPU:          return "cpu";
    case LOOM_DEVICE_CUDA:         return "cuda";
    case LOOM_DEVICE_CUDA_HOST:    return "cuda_host";
    case LOOM_DEVICE_CUDA_MANAGED: return "cuda_managed";
    default:                       return "unknown";
    }
}
