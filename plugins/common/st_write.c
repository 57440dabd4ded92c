/* SPDX-License-Identifier: BSD-3-Clause */
/*
** st_write.c - pk_safetensors_write (st_write.h).
*/
#include "st_write.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *st_dtype_name(loom_dtype d)
{
    switch (d) {
    case LOOM_DTYPE_F32:  return "F32";
    case LOOM_DTYPE_F16:  return "F16";
    case LOOM_DTYPE_BF16: return "BF16";
    case LOOM_DTYPE_F64:  return "F64";
    case LOOM_DTYPE_I64:  return "I64";
    case LOOM_DTYPE_I32:  return "I32";
    case LOOM_DTYPE_I16:  return "I16";
    case LOOM_DTYPE_I8:   return "I8";
    case LOOM_DTYPE_U8:   return "U8";
    case LOOM_DTYPE_U16:  return "U16";
    case LOOM_DTYPE_U32:  return "U32";
    case LOOM_DTYPE_BOOL: return "BOOL";
    default:              return NULL;
    }
}

/* A growing string for the header. */
typedef struct st_buf {
    char *p;
    size_t len, cap;
    int oom;
} st_buf;

static void st_put(st_buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *q = realloc(b->p, cap);
        if (q == NULL) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void st_putf(st_buf *b, const char *fmt, long long v)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, fmt, v);
    st_put(b, tmp, (size_t)n);
}

/* A JSON string: quotes, backslashes and control characters escaped. */
static void st_put_name(st_buf *b, const char *s)
{
    st_put(b, "\"", 1);
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            char e[2] = { '\\', (char)c };
            st_put(b, e, 2);
        } else if (c < 0x20) {
            st_putf(b, "\\u%04llx", c);
        } else {
            st_put(b, s, 1);
        }
    }
    st_put(b, "\"", 1);
}

loom_status pk_safetensors_write(const loom_host_api *host, const char *path, const pk_st_entry *e, int64_t n,
                               const char *what)
{
    if (path == NULL || path[0] == '\0')
        return host->fail(LOOM_EINVAL, "%s: no path to save to", what);
    st_buf h = { 0 };
    int64_t *bytes = calloc((size_t)(n > 0 ? n : 1), sizeof *bytes);
    if (bytes == NULL)
        return host->fail(LOOM_ENOMEM, "%s: out of memory", what);
    int64_t off = 0;
    st_put(&h, "{", 1);
    for (int64_t i = 0; i < n; i++) {
        const char *dn = st_dtype_name(e[i].dtype);
        if (dn == NULL || e[i].ndim < 0 || e[i].ndim > 4 || e[i].name == NULL) {
            free(bytes);
            free(h.p);
            return host->fail(LOOM_EINVAL, "%s: entry %lld cannot be saved as safetensors", what, (long long)i);
        }
        int64_t numel = 1;
        for (int32_t d = 0; d < e[i].ndim; d++)
            numel *= e[i].shape[d];
        bytes[i] = numel * (int64_t)host->dtype_size(e[i].dtype);
        if (i > 0)
            st_put(&h, ",", 1);
        st_put_name(&h, e[i].name);
        st_put(&h, ":{\"dtype\":\"", 11);
        st_put(&h, dn, strlen(dn));
        st_put(&h, "\",\"shape\":[", 11);
        for (int32_t d = 0; d < e[i].ndim; d++)
            st_putf(&h, d > 0 ? ",%lld" : "%lld", (long long)e[i].shape[d]);
        st_put(&h, "],\"data_offsets\":[", 18);
        st_putf(&h, "%lld,", (long long)off);
        st_putf(&h, "%lld]}", (long long)(off + bytes[i]));
        off += bytes[i];
    }
    st_put(&h, "}", 1);
    while (!h.oom && h.len % 8 != 0)
        st_put(&h, " ", 1);
    if (h.oom) {
        free(bytes);
        free(h.p);
        return host->fail(LOOM_ENOMEM, "%s: out of memory", what);
    }
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 5);
    FILE *f = NULL;
    if (tmp != NULL) {
        memcpy(tmp, path, plen);
        memcpy(tmp + plen, ".tmp", 5);
        f = fopen(tmp, "wb");
    }
    int ok = f != NULL;
    unsigned char len8[8];
    for (int k = 0; k < 8; k++)
        len8[k] = (unsigned char)((uint64_t)h.len >> (8 * k));
    ok = ok && fwrite(len8, 1, 8, f) == 8 && fwrite(h.p, 1, h.len, f) == h.len;
    for (int64_t i = 0; ok && i < n; i++)
        ok = bytes[i] == 0 || fwrite(e[i].data, 1, (size_t)bytes[i], f) == (size_t)bytes[i];
    const int err = errno;
    if (f != NULL && fclose(f) != 0)
        ok = 0;
    if (ok && rename(tmp, path) != 0)
        ok = 0;
    loom_status st = LOOM_OK;
    if (!ok) {
        if (tmp != NULL)
            remove(tmp);
        st = host->fail(LOOM_EIO, "%s: cannot write '%s': %s", what, path, strerror(err ? err : errno));
    }
    free(tmp);
    free(bytes);
    free(h.p);
    return st;
}
