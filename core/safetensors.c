/* SPDX-License-Identifier: BSD-3-Clause */
/*
** safetensors.c - safetensors weight files: mapped, validated reading and
** atomic writing.
**
** A file is: N as a little-endian u64, N bytes of JSON header, then the data
** area. The header is an object whose keys are tensor names (plus an optional
** "__metadata__" object of string values) and whose values are
** {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, offsets
** relative to the data area.
**
** loom_safetensors_open validates as strictly as the reference
** implementation, and a little more: N at most 100 MB and inside the file,
** UTF-8 JSON starting with '{' and followed only by whitespace, no duplicate
** keys (neither tensor names nor the keys of one entry), no unknown keys in
** an entry, known dtypes, at most LOOM_MAX_NDIM non-negative integer dims,
** end - begin == numel * itemsize (overflow-checked), and the tensors, taken
** by offset, tile the data area exactly: no overlap, no hole, nothing after
** the last one. Nothing of a file that fails is kept.
**
** Invariants of an open loom_safetensors:
**  - entries[0..count) are sorted by name (strcmp), so index order for
**    loom_safetensors_name() is the same for any writer, and lookup is a
**    binary search;
**  - each entry's tensor is a compact CPU tensor (strides NULL, byte_offset
**    0) whose data point into the read-only mapping, except when the data
**    there are not aligned to the element size (safetensors does not align):
**    such a tensor is copied once at open into 64-byte aligned memory owned by
**    the entry, so every reader may dereference typed pointers. Files written
**    by the Python library are aligned and cost no copy.
**  - the data must not be written through (the mapping is read-only).
**
** loom_safetensors_write keeps the caller's order for header keys and data,
** pads the header with spaces to a multiple of 8 bytes, and writes no
** metadata. safetensors has no complex types, so c64 and c128 are refused.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "internal.h"

#define MAX_HEADER ((uint64_t)100 * 1000 * 1000)
#define MAX_EXACT_DOUBLE 9007199254740992.0      /* 2^53 */
#define NAME_FMT "%.200s"                        /* bound names echoed in messages */

typedef struct st_entry {
    char *name;
    loom_tensor t;
    int64_t shape[LOOM_MAX_NDIM];
    uint64_t begin, end;        /* byte offsets in the data area */
    void *copy;                 /* aligned copy of misaligned data, else NULL */
} st_entry;

struct loom_safetensors {
    char *path;
    const void *map;
    size_t map_size;
    int64_t count;
    st_entry *entries;          /* sorted by name */
};

/* ------------------------------------------------------------- helpers */

static bool utf8_valid(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t len;
        uint32_t cp, min;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            len = 2, cp = c & 0x1F, min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3, cp = c & 0x0F, min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            len = 4, cp = c & 0x07, min = 0x10000;
        } else {
            return false;
        }
        if (n - i < len)
            return false;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return false;
            cp = cp << 6 | (s[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += len;
    }
    return true;
}

static loom_dtype dtype_from_name(const char *name)
{
    for (int d = LOOM_DTYPE_INVALID + 1; d < LOOM_DTYPE_COUNT; d++) {
        const loom__dtype_info *info = loom__dtype((loom_dtype)d);
        if (info && info->safetensors && strcmp(info->safetensors, name) == 0)
            return (loom_dtype)d;
    }
    return LOOM_DTYPE_INVALID;
}

/* A JSON number that is an integer in [0, 2^53]: larger values are not
** exact in a double, so they cannot be trusted as offsets or dims. */
static bool json_index(const cJSON *item, uint64_t *out)
{
    if (!cJSON_IsNumber(item))
        return false;
    double v = item->valuedouble;
    if (!(v >= 0.0 && v <= MAX_EXACT_DOUBLE) || (double)(uint64_t)v != v)
        return false;
    *out = (uint64_t)v;
    return true;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(((const st_entry *)a)->name, ((const st_entry *)b)->name);
}

static int cmp_offsets(const void *a, const void *b)
{
    const st_entry *x = *(const st_entry *const *)a, *y = *(const st_entry *const *)b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* ---------------------------------------------------------------- open */

static void free_entries(st_entry *e, int64_t count)
{
    for (int64_t i = 0; e && i < count; i++) {
        free(e[i].name);
        free(e[i].copy);
    }
    free(e);
}

static loom_status check_metadata(const cJSON *meta, const char *path)
{
    if (!cJSON_IsObject(meta))
        return loom__fail(LOOM_EFORMAT, "%s: invalid safetensors header: '__metadata__' must be "
                          "an object of strings", path);
    for (const cJSON *m = meta->child; m; m = m->next)
        if (!cJSON_IsString(m))
            return loom__fail(LOOM_EFORMAT, "%s: invalid safetensors header: '__metadata__' "
                              "value '" NAME_FMT "' is not a string", path, m->string);
    return LOOM_OK;
}

/* One tensor entry of the header into e (name, dtype, shape, offsets). */
static loom_status parse_entry(const cJSON *item, st_entry *e, uint64_t data_size,
                               const char *path)
{
    const char *name = item->string;
    if (!cJSON_IsObject(item))
        return loom__fail(LOOM_EFORMAT, "%s: tensor '" NAME_FMT "': entry must be an object with "
                          "dtype, shape and data_offsets", path, name);
    const cJSON *dt = NULL, *shape = NULL, *offs = NULL;
    for (const cJSON *k = item->child; k; k = k->next) {
        const cJSON **slot = strcmp(k->string, "dtype") == 0 ? &dt
                           : strcmp(k->string, "shape") == 0 ? &shape
                           : strcmp(k->string, "data_offsets") == 0 ? &offs : NULL;
        if (slot == NULL)
            return loom__fail(LOOM_EFORMAT, "%s: tensor '" NAME_FMT "': unexpected key '" NAME_FMT
                              "'", path, name, k->string);
        if (*slot != NULL)
            return loom__fail(LOOM_EFORMAT, "%s: tensor '" NAME_FMT "': key '%s' appears twice",
                              path, name, k->string);
        *slot = k;
    }
    if (!dt || !shape || !offs)
        return loom__fail(LOOM_EFORMAT, "%s: tensor '" NAME_FMT "': missing '%s'", path, name,
                          !dt ? "dtype" : !shape ? "shape" : "data_offsets");

    loom_dtype dtype = cJSON_IsString(dt) ? dtype_from_name(dt->valuestring) : LOOM_DTYPE_INVALID;
    if (dtype == LOOM_DTYPE_INVALID)
        return loom__fail(LOOM_EFORMAT, "%s: tensor '" NAME_FMT "': unsupported dtype '" NAME_FMT
                          "' (loom reads F64 F32 F16 BF16 F8_E4M3 I64 I32 I16 I8 U8 BOOL)", path,
                          name, cJSON_IsString(dt) ? dt->valuestring : "(not a string)");
    const loom__dtype_info *info = loom__dtype(dtype);

    if (!cJSON_IsArray(shape))
        return loom__fail(LOOM_EFORMAT, "%s: tensor '" NAME_FMT "': shape must be an array", path,
                          name);
    int ndim = cJSON_GetArraySize(shape);
    if (ndim > LOOM_MAX_NDIM)
        return loom__fail(LOOM_EFORMAT, "%s: tensor '" NAME_FMT "': %d dimensions, loom allows %d",
                          path, name, ndim, LOOM_MAX_NDIM);
    uint64_t nbytes = info->size;
    int k = 0;
    for (const cJSON *d = shape->child; d; d = d->next, k++) {
        uint64_t v;
        if (!json_index(d, &v))
            return loom__fail(LOOM_EFORMAT, "%s: tensor '" NAME_FMT "': shape[%d] is not a "
                              "non-negative integer", path, name, k);
        e->shape[k] = (int64_t)v;
        if (__builtin_mul_overflow(nbytes, v, &nbytes))
            return loom__fail(LOOM_EFORMAT, "%s: tensor '" NAME_FMT "': shape overflows 64 bits",
                              path, name);
    }

    uint64_t begin, end;
    if (!cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2 || !json_index(offs->child, &begin)
        || !json_index(offs->child->next, &end))
        return loom__fail(LOOM_EFORMAT, "%s: tensor '" NAME_FMT "': data_offsets must be two "
                          "non-negative integers", path, name);
    if (begin > end || end > data_size)
        return loom__fail(LOOM_EFORMAT, "%s: tensor '" NAME_FMT "': data_offsets [%llu, %llu] "
                          "outside the data area of %llu bytes", path, name,
                          (unsigned long long)begin, (unsigned long long)end,
                          (unsigned long long)data_size);
    if (end - begin != nbytes)
        return loom__fail(LOOM_EFORMAT, "%s: tensor '" NAME_FMT "': data_offsets span %llu bytes "
                          "but dtype %s and its shape need %llu", path, name,
                          (unsigned long long)(end - begin), dt->valuestring,
                          (unsigned long long)nbytes);

    e->name = strdup(name);
    if (e->name == NULL)
        return loom__fail(LOOM_ENOMEM, "%s: out of memory", path);
    e->begin = begin;
    e->end = end;
    e->t.ndim = ndim;
    e->t.dtype = info->dl;
    e->t.device = loom__cpu();
    return LOOM_OK;
}

/* Sorted by offset, the tensors must follow each other exactly from 0 to
** the end of the data area (the reference implementation's rule). */
static loom_status check_tiling(st_entry *entries, int64_t count, uint64_t data_size,
                                const char *path)
{
    st_entry **by_off = malloc((size_t)(count ? count : 1) * sizeof *by_off);
    if (by_off == NULL)
        return loom__fail(LOOM_ENOMEM, "%s: out of memory", path);
    for (int64_t i = 0; i < count; i++)
        by_off[i] = &entries[i];
    qsort(by_off, (size_t)count, sizeof *by_off, cmp_offsets);
    uint64_t cursor = 0;
    loom_status s = LOOM_OK;
    for (int64_t i = 0; i < count && s == LOOM_OK; i++) {
        const st_entry *e = by_off[i];
        if (e->begin < cursor)
            s = loom__fail(LOOM_EFORMAT, "%s: tensor '" NAME_FMT "' (bytes %llu..%llu) overlaps "
                           "tensor '" NAME_FMT "'", path, e->name, (unsigned long long)e->begin,
                           (unsigned long long)e->end, by_off[i - 1]->name);
        else if (e->begin > cursor)
            s = loom__fail(LOOM_EFORMAT, "%s: unused bytes %llu..%llu in the data area before "
                           "tensor '" NAME_FMT "'", path, (unsigned long long)cursor,
                           (unsigned long long)e->begin, e->name);
        cursor = e->end;
    }
    if (s == LOOM_OK && cursor != data_size)
        s = loom__fail(LOOM_EFORMAT, "%s: the tensors cover %llu bytes of a %llu-byte data area",
                       path, (unsigned long long)cursor, (unsigned long long)data_size);
    free(by_off);
    return s;
}

/* Point each tensor at its bytes, copying those that are misaligned. */
static loom_status bind_data(st_entry *entries, int64_t count, const char *data, const char *path)
{
    for (int64_t i = 0; i < count; i++) {
        st_entry *e = &entries[i];
        const char *p = data + e->begin;
        size_t n = (size_t)(e->end - e->begin);
        size_t size = e->t.dtype.bits / 8u;
        e->t.shape = e->shape;
        e->t.strides = NULL;
        e->t.byte_offset = 0;
        e->t.data = (void *)p;
        if (n > 0 && (uintptr_t)p % size != 0) {
            if (posix_memalign(&e->copy, 64, n) != 0) {
                e->copy = NULL;
                return loom__fail(LOOM_ENOMEM, "%s: out of memory copying tensor '" NAME_FMT "'",
                                  path, e->name);
            }
            memcpy(e->copy, p, n);
            e->t.data = e->copy;
        }
    }
    return LOOM_OK;
}

/* Offset of the first \u0000 escape inside a JSON string of text[n], or
** -1. Only escapes count: a backslash escaped itself ("\\u0000") is text. */
static int64_t escaped_nul_offset(const char *text, size_t n)
{
    bool in_string = false;
    for (size_t i = 0; i < n; i++) {
        if (!in_string) {
            in_string = text[i] == '"';
        } else if (text[i] == '"') {
            in_string = false;
        } else if (text[i] == '\\' && i + 1 < n) {
            if (text[i + 1] == 'u' && i + 5 < n && text[i + 2] == '0' && text[i + 3] == '0'
                && text[i + 4] == '0' && text[i + 5] == '0')
                return (int64_t)i;
            i++;   /* skip the escaped character */
        }
    }
    return -1;
}

/* Parse and validate the header; fill st->entries and st->count. */
static loom_status load_header(loom_safetensors *st)
{
    const char *path = st->path;
    const unsigned char *b = st->map;
    size_t size = st->map_size;
    if (size < 8)
        return loom__fail(LOOM_EFORMAT, "%s: %zu bytes is too short for a safetensors file", path,
                          size);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = n << 8 | b[i];
    if (n > MAX_HEADER)
        return loom__fail(LOOM_EFORMAT, "%s: safetensors header length %llu exceeds the %llu "
                          "byte limit", path, (unsigned long long)n,
                          (unsigned long long)MAX_HEADER);
    if (n > size - 8)
        return loom__fail(LOOM_EFORMAT, "%s: safetensors header length %llu runs past the end "
                          "of the file (%zu bytes)", path, (unsigned long long)n, size);
    const unsigned char *h = b + 8;
    if (n == 0 || h[0] != '{')
        return loom__fail(LOOM_EFORMAT, "%s: safetensors header does not start with '{'", path);
    if (!utf8_valid(h, (size_t)n))
        return loom__fail(LOOM_EFORMAT, "%s: safetensors header is not valid UTF-8", path);

    /* a NUL-terminated copy, so the parser can never read past the header */
    char *text = malloc((size_t)n + 1);
    if (text == NULL)
        return loom__fail(LOOM_ENOMEM, "%s: out of memory for a %llu-byte header", path,
                          (unsigned long long)n);
    memcpy(text, h, (size_t)n);
    text[n] = '\0';
    /* cJSON decodes "\u0000" and then cuts the string there, so a key
    ** "a\u0000b" would be served as "a": refuse NUL before parsing. */
    int64_t nul_at = escaped_nul_offset(text, (size_t)n);
    if (nul_at >= 0) {
        free(text);
        return loom__fail(LOOM_EFORMAT, "%s: safetensors header has an escaped NUL (\\u0000) at byte %lld; "
                          "tensor names and metadata cannot contain NUL", path, (long long)nul_at);
    }
    const char *stop = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, (size_t)n, &stop, 0);
    loom_status s = LOOM_OK;
    if (root == NULL) {
        size_t at = stop && stop >= text ? (size_t)(stop - text) : 0;
        s = loom__fail(LOOM_EFORMAT, "%s: safetensors header is not valid JSON (near byte %zu)",
                       path, at);
    } else {
        for (const char *q = stop; q < text + n; q++)
            if (*q != ' ' && *q != '\t' && *q != '\n' && *q != '\r') {
                s = loom__fail(LOOM_EFORMAT, "%s: unexpected bytes after the safetensors header "
                               "JSON (at byte %zu)", path, (size_t)(q - text));
                break;
            }
        if (s == LOOM_OK && !cJSON_IsObject(root))
            s = loom__fail(LOOM_EFORMAT, "%s: safetensors header is not a JSON object", path);
    }

    uint64_t data_size = size - 8 - n;
    int64_t count = 0;
    bool meta_seen = false;
    for (const cJSON *c = root && s == LOOM_OK ? root->child : NULL; c; c = c->next) {
        if (strcmp(c->string, "__metadata__") != 0) {
            count++;
        } else if (meta_seen) {
            s = loom__fail(LOOM_EFORMAT, "%s: '__metadata__' appears twice", path);
            break;
        } else {
            meta_seen = true;
            if ((s = check_metadata(c, path)) != LOOM_OK)
                break;
        }
    }
    st_entry *entries = NULL;
    if (s == LOOM_OK) {
        entries = calloc((size_t)(count ? count : 1), sizeof *entries);
        if (entries == NULL)
            s = loom__fail(LOOM_ENOMEM, "%s: out of memory for %lld tensors", path,
                           (long long)count);
    }
    int64_t filled = 0;
    for (const cJSON *c = s == LOOM_OK ? root->child : NULL; c && s == LOOM_OK; c = c->next)
        if (strcmp(c->string, "__metadata__") != 0) {
            s = parse_entry(c, &entries[filled], data_size, path);
            filled++;
        }
    cJSON_Delete(root);
    free(text);

    if (s == LOOM_OK) {
        qsort(entries, (size_t)count, sizeof *entries, cmp_name);
        for (int64_t i = 1; i < count && s == LOOM_OK; i++)
            if (strcmp(entries[i - 1].name, entries[i].name) == 0)
                s = loom__fail(LOOM_EFORMAT, "%s: tensor '" NAME_FMT "' appears twice", path,
                               entries[i].name);
    }
    if (s == LOOM_OK)
        s = check_tiling(entries, count, data_size, path);
    if (s == LOOM_OK)
        s = bind_data(entries, count, (const char *)b + 8 + n, path);
    if (s != LOOM_OK) {
        free_entries(entries, filled);
        return s;
    }
    st->entries = entries;
    st->count = count;
    return LOOM_OK;
}

LOOM_API loom_status loom_safetensors_open(loom_safetensors **out, const char *path)
{
    if (out != NULL)
        *out = NULL;
    if (out == NULL || path == NULL)
        return loom__fail(LOOM_EINVAL, "safetensors_open: out and path must not be NULL");
    loom_safetensors *st = calloc(1, sizeof *st);
    if (st == NULL || (st->path = strdup(path)) == NULL) {
        free(st);
        return loom__fail(LOOM_ENOMEM, "safetensors_open '%s': out of memory", path);
    }
    loom_status s = loom__map_file(path, &st->map, &st->map_size);
    if (s == LOOM_OK)
        s = load_header(st);
    if (s != LOOM_OK) {
        loom_safetensors_close(st);
        return s;
    }
    *out = st;
    return LOOM_OK;
}

LOOM_API void loom_safetensors_close(loom_safetensors *st)
{
    if (st == NULL)
        return;
    free_entries(st->entries, st->count);
    if (st->map)
        loom__unmap_file(st->map, st->map_size);
    free(st->path);
    free(st);
}

LOOM_API int64_t loom_safetensors_count(const loom_safetensors *st)
{
    return st ? st->count : 0;
}

LOOM_API const char *loom_safetensors_name(const loom_safetensors *st, int64_t index)
{
    if (st == NULL || index < 0 || index >= st->count)
        return NULL;
    return st->entries[index].name;
}

loom_status loom__safetensors_get(const loom_safetensors *st, const char *name,
                                const loom_tensor **out)
{
    if (out != NULL)
        *out = NULL;
    if (st == NULL || name == NULL || out == NULL)
        return loom__fail(LOOM_EINVAL, "safetensors_get: file, name and out must not be NULL");
    st_entry key = { .name = (char *)name };
    const st_entry *e = bsearch(&key, st->entries, (size_t)st->count, sizeof *e, cmp_name);
    if (e == NULL)
        return loom__fail(LOOM_ENOENT, "no tensor '" NAME_FMT "' in '%s'", name, st->path);
    *out = &e->t;
    return LOOM_OK;
}

LOOM_API loom_status loom_safetensors_get(const loom_safetensors *st, const char *name,
                                        const loom_tensor **out)
{
    return loom__safetensors_get(st, name, out);
}

/* ----------------------------------------------------- from memory (1.3) */

/* A loom_safetensors over named tensors in memory (loom_object_options.tensors,
** host->object_create), so that a class reads them exactly as a file. The
** invariants of an opened file hold: entries sorted by name, unique, each a
** compact CPU tensor aligned to its element size. A compact aligned tensor
** is borrowed (its data must outlive the view); another (strided, offset to
** a misaligned address) is gathered once into an aligned copy the entry
** owns. `what` names the tensors' owner in messages and in the view's path. */
loom_status loom__safetensors_from_tensors(loom_safetensors **out, const loom_named_tensor *tensors,
                                           int32_t n, const char *what)
{
    char where[256];
    *out = NULL;
    if (n < 0 || (n > 0 && tensors == NULL))
        return loom__fail(LOOM_EINVAL, "%s: %d tensors but no table", what, n);
    loom_safetensors *st = calloc(1, sizeof *st);
    if (st == NULL || (st->path = strdup(what)) == NULL
        || (n > 0 && (st->entries = calloc((size_t)n, sizeof *st->entries)) == NULL)) {
        if (st != NULL)
            free(st->path);
        free(st);
        return loom__fail(LOOM_ENOMEM, "%s: out of memory", what);
    }
    loom_status s = LOOM_OK;
    for (int32_t i = 0; i < n && s == LOOM_OK; i++) {
        const loom_tensor *t = tensors[i].tensor;
        st_entry *e = &st->entries[i];
        if (tensors[i].name == NULL || tensors[i].tensor == NULL) {
            s = loom__fail(LOOM_EINVAL, "%s: tensor %d has no name or no tensor", what, i);
            break;
        }
        snprintf(where, sizeof where, "%s: tensor '" NAME_FMT "'", what, tensors[i].name);
        if ((s = loom__tensor_check(t, where)) != LOOM_OK)
            break;
        if (!loom__is_host(t->device)) {
            s = loom__fail(LOOM_EINVAL, "%s is on device type %d; weights must be CPU tensors", where,
                           t->device.device_type);
            break;
        }
        if ((e->name = strdup(tensors[i].name)) == NULL) {
            s = loom__fail(LOOM_ENOMEM, "%s: out of memory", where);
            break;
        }
        st->count = i + 1;
        e->t = *t;
        for (int32_t d = 0; d < t->ndim; d++)
            e->shape[d] = t->shape[d];
        e->t.shape = e->shape;
        const size_t esize = t->dtype.bits >= 8 ? t->dtype.bits / 8u : 1u;
        const char *p = (const char *)t->data + t->byte_offset;
        size_t nbytes = loom__tensor_nbytes(t);
        if (nbytes > 0 && (!loom_is_contiguous(t) || (uintptr_t)p % esize != 0)) {
            if (posix_memalign(&e->copy, 64, nbytes) != 0) {
                e->copy = NULL;
                s = loom__fail(LOOM_ENOMEM, "%s: out of memory copying it", where);
                break;
            }
            loom_tensor src = *t;
            if (src.strides == NULL)
                memcpy(e->copy, p, nbytes);         /* compact but misaligned */
            else
                loom__tensor_gather(e->copy, &src, esize);
            p = e->copy;
        }
        e->t.data = (void *)p;
        e->t.strides = NULL;
        e->t.byte_offset = 0;
        e->end = nbytes;
    }
    if (s == LOOM_OK) {
        qsort(st->entries, (size_t)st->count, sizeof *st->entries, cmp_name);
        for (int64_t i = 1; i < st->count && s == LOOM_OK; i++)
            if (strcmp(st->entries[i - 1].name, st->entries[i].name) == 0)
                s = loom__fail(LOOM_EINVAL, "%s: two tensors are named '" NAME_FMT "'", what, st->entries[i].name);
    }
    if (s != LOOM_OK) {
        loom_safetensors_close(st);
        return s;
    }
    /* the tensors were sorted after binding: shape points into each entry */
    for (int64_t i = 0; i < st->count; i++)
        st->entries[i].t.shape = st->entries[i].shape;
    *out = st;
    return LOOM_OK;
}

/* --------------------------------------------------------------- write */

/* A growing string; `failed` sticks once an allocation fails. */
typedef struct strbuf {
    char *p;
    size_t n, cap;
    bool failed;
} strbuf;

static void sb_put(strbuf *sb, const char *s, size_t n)
{
    if (sb->failed)
        return;
    if (sb->n + n + 1 > sb->cap) {
        size_t cap = sb->cap ? sb->cap : 256;
        while (cap < sb->n + n + 1)
            cap *= 2;
        char *p = realloc(sb->p, cap);
        if (p == NULL) {
            sb->failed = true;
            return;
        }
        sb->p = p;
        sb->cap = cap;
    }
    memcpy(sb->p + sb->n, s, n);
    sb->n += n;
    sb->p[sb->n] = '\0';
}

static void sb_str(strbuf *sb, const char *s) { sb_put(sb, s, strlen(s)); }

static void sb_u64(strbuf *sb, uint64_t v)
{
    char num[24];
    sb_put(sb, num, (size_t)snprintf(num, sizeof num, "%llu", (unsigned long long)v));
}

/* A JSON string literal of s (valid UTF-8, checked by the caller). */
static void sb_json_string(strbuf *sb, const char *s)
{
    sb_put(sb, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            char esc[2] = { '\\', (char)c };
            sb_put(sb, esc, 2);
        } else if (c < 0x20) {
            char esc[8];
            sb_put(sb, esc, (size_t)snprintf(esc, sizeof esc, "\\u%04x", c));
        } else {
            sb_put(sb, (const char *)&c, 1);
        }
    }
    sb_put(sb, "\"", 1);
}

static int cmp_str_ptr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every argument checked before anything is copied or written. */
static loom_status check_write_args(const char *path, const char *const *names,
                                    const loom_tensor *const *tensors, int64_t count)
{
    if (path == NULL)
        return loom__fail(LOOM_EINVAL, "safetensors_write: path must not be NULL");
    if (count < 0 || count > INT32_MAX - 2 || (count > 0 && (names == NULL || tensors == NULL)))
        return loom__fail(LOOM_EINVAL, "safetensors_write '%s': invalid tensor list (count %lld)",
                          path, (long long)count);
    for (int64_t i = 0; i < count; i++) {
        const char *name = names[i];
        if (name == NULL || !utf8_valid((const unsigned char *)name, strlen(name)))
            return loom__fail(LOOM_EINVAL, "safetensors_write '%s': name %lld is %s", path,
                              (long long)i, name ? "not valid UTF-8" : "NULL");
        if (strcmp(name, "__metadata__") == 0)
            return loom__fail(LOOM_EINVAL, "safetensors_write '%s': '__metadata__' is reserved "
                              "and cannot name a tensor", path);
        char what[320];
        snprintf(what, sizeof what, "tensor '" NAME_FMT "' written to '%s'", name, path);
        loom_status s = loom__tensor_check(tensors[i], what);
        if (s != LOOM_OK)
            return s;
        loom_dtype dtype = loom_tensor_dtype_of(tensors[i]);
        const loom__dtype_info *info = loom__dtype(dtype);
        if (info->safetensors == NULL)
            return loom__fail(LOOM_ENOTSUP, "safetensors_write '%s': tensor '" NAME_FMT "' has "
                              "dtype %s, which safetensors cannot store", path, name, info->name);
    }
    const char **sorted = malloc((size_t)(count ? count : 1) * sizeof *sorted);
    if (sorted == NULL)
        return loom__fail(LOOM_ENOMEM, "safetensors_write '%s': out of memory", path);
    for (int64_t i = 0; i < count; i++)
        sorted[i] = names[i];
    qsort(sorted, (size_t)count, sizeof *sorted, cmp_str_ptr);
    loom_status s = LOOM_OK;
    for (int64_t i = 1; i < count && s == LOOM_OK; i++)
        if (strcmp(sorted[i - 1], sorted[i]) == 0)
            s = loom__fail(LOOM_EINVAL, "safetensors_write '%s': tensor name '" NAME_FMT "' "
                           "appears twice", path, sorted[i]);
    free(sorted);
    return s;
}

LOOM_API loom_status loom_safetensors_write(const char *path, const char *const *names,
                                          const loom_tensor *const *tensors, int64_t count)
{
    loom_status s = check_write_args(path, names, tensors, count);
    if (s != LOOM_OK)
        return s;

    size_t n_chunks = (size_t)count + 2;
    loom_tensor **hosts = calloc((size_t)count + 1, sizeof *hosts);
    const void **chunks = calloc(n_chunks, sizeof *chunks);
    size_t *sizes = calloc(n_chunks, sizeof *sizes);
    strbuf sb = { 0 };
    if (hosts == NULL || chunks == NULL || sizes == NULL) {
        s = loom__fail(LOOM_ENOMEM, "safetensors_write '%s': out of memory", path);
        goto done;
    }

    sb_str(&sb, "{");
    uint64_t offset = 0;
    for (int64_t i = 0; i < count; i++) {
        const loom_tensor *t = tensors[i];
        if (!loom__is_host(t->device) || !loom_is_contiguous(t)) {
            loom_dl_device cpu = loom__cpu();
            if ((s = loom_tensor_copy_to(&hosts[i], t, &cpu)) != LOOM_OK)
                goto done;
            t = hosts[i];
        }
        size_t nbytes = loom__tensor_nbytes(t);
        chunks[i + 2] = nbytes ? loom_data(t) : NULL;
        sizes[i + 2] = nbytes;

        sb_str(&sb, i ? "," : "");
        sb_json_string(&sb, names[i]);
        sb_str(&sb, ":{\"dtype\":\"");
        sb_str(&sb, loom__dtype(loom_tensor_dtype_of(t))->safetensors);
        sb_str(&sb, "\",\"shape\":[");
        for (int32_t k = 0; k < t->ndim; k++) {
            sb_str(&sb, k ? "," : "");
            sb_u64(&sb, (uint64_t)t->shape[k]);
        }
        sb_str(&sb, "],\"data_offsets\":[");
        sb_u64(&sb, offset);
        sb_str(&sb, ",");
        offset += nbytes;
        sb_u64(&sb, offset);
        sb_str(&sb, "]}");
    }
    sb_str(&sb, "}");
    while (!sb.failed && sb.n % 8 != 0)
        sb_str(&sb, " ");
    if (sb.failed) {
        s = loom__fail(LOOM_ENOMEM, "safetensors_write '%s': out of memory for the header", path);
        goto done;
    }

    unsigned char len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (unsigned char)((uint64_t)sb.n >> (8 * i));
    chunks[0] = len;
    sizes[0] = 8;
    chunks[1] = sb.p;
    sizes[1] = sb.n;
    s = loom__write_file(path, chunks, sizes, (int)n_chunks);

done:
    for (int64_t i = 0; hosts && i < count; i++)
        loom_tensor_free(hosts[i]);
    free(hosts);
    free(chunks);
    free(sizes);
    free(sb.p);
    return s;
}
