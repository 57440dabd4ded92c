/* SPDX-License-Identifier: BSD-3-Clause */
/*
** describe.c - see describe.h.
*/
#include <stdio.h>

#include "describe.h"

char *pk_describe(const loom_host_api *host, const loom_tensor *t, char *buf, size_t size)
{
    if (t == NULL) {
        snprintf(buf, size, "(none)");
        return buf;
    }
    loom_dtype d = loom_tensor_dtype_of(t);
    const char *name = d != LOOM_DTYPE_INVALID ? host->dtype_name(d) : "?";
    int n = snprintf(buf, size, "%s[", name);
    for (int32_t i = 0; i < t->ndim && n > 0 && (size_t)n < size; i++)
        n += snprintf(buf + n, size - (size_t)n, i ? ",%lld" : "%lld", (long long)t->shape[i]);
    if (n > 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, "]");
    return buf;
}
