/* SPDX-License-Identifier: BSD-3-Clause */
/*
** npy.c - NumPy .npy files: read (versions 1.0, 2.0, 3.0) and write.
**
** A file is: "\x93NUMPY", major, minor, a little-endian header length (u16
** for 1.0, u32 for 2.0 and 3.0), the header (a Python dict literal with
** exactly the keys 'descr', 'fortran_order' and 'shape'), then the raw data.
**
** Reading is a bounds-checked parse of bytes that may be anything: every
** read goes through a cursor that stops at the end of the header, the shape
** product and byte count are computed with overflow checks, and the data must
** be exactly numel * itemsize bytes. Trailing bytes after the data are
** refused: np.save never writes them, and a header whose shape is smaller
** than the data it precedes is more likely corrupt than deliberate.
** Anything unexpected fails with LOOM_EFORMAT and a message naming the file.
**
** The result is always a new compact row-major tensor on the CPU in host byte
** order: Fortran-ordered data are transposed and big-endian data byteswapped
** (complex numbers per component). bf16 travels as '|V2' and f8e4m3 as '|V1'
** (see loom.h); void types carry no byte order, so '<V2' and '>V2' read the
** same. Descriptors without a byte-order character, or with '=' or '|', mean
** host order, as in NumPy.
**
** Writing emits version 1.0, or 2.0 when the header exceeds 65535 bytes,
** with NumPy's layout: sorted keys, a trailing ", }", spaces and a newline
** padding the preamble to a multiple of 64 bytes. Tensors on other devices
** and strided tensors are first copied to a compact host tensor.
*/
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_ALIGN 64
#define DESCR_MAX 32

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define HOST_ORDER '>'
#else
#define HOST_ORDER '<'
#endif

typedef struct npy_header {
    loom_dtype dtype;
    char order;                 /* '<' or '>' after resolving '=', '|' and none */
    bool fortran;
    int32_t ndim;
    int64_t shape[LOOM_MAX_NDIM];
} npy_header;

/* A read position inside the header text; never moves past end. */
typedef struct cursor {
    const char *p, *end;
    const char *what;           /* file name for messages */
} cursor;

/* ------------------------------------------------------------ dtype names */

/* The descriptor of a dtype without its byte-order character ("f4"). */
static const char *descr_code(const loom__dtype_info *info)
{
    const char *d = info->npy_descr;
    if (d == NULL)
        return NULL;
    return (d[0] == '<' || d[0] == '>' || d[0] == '|' || d[0] == '=') ? d + 1 : d;
}

static loom_dtype dtype_from_code(const char *code)
{
    for (int d = LOOM_DTYPE_INVALID + 1; d < LOOM_DTYPE_COUNT; d++) {
        const loom__dtype_info *info = loom__dtype((loom_dtype)d);
        const char *c = info ? descr_code(info) : NULL;
        if (c != NULL && strcmp(c, code) == 0)
            return (loom_dtype)d;
    }
    return LOOM_DTYPE_INVALID;
}

/* Bytes per byteswapped unit: the component size for complex numbers, 1 for
** single-byte and void types (which have no byte order). */
static size_t swap_unit(loom_dtype dtype)
{
    const loom__dtype_info *info = loom__dtype(dtype);
    const char *code = descr_code(info);
    if (code != NULL && code[0] == 'V')
        return 1;
    return info->dl.code == LOOM_DL_COMPLEX ? info->size / 2 : info->size;
}

/* -------------------------------------------------------- header parsing */

static loom_status bad_header(const cursor *c, const char *problem)
{
    return loom__fail(LOOM_EFORMAT, "%s: invalid .npy header: %s", c->what, problem);
}

static void skip_space(cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static bool accept(cursor *c, char ch)
{
    skip_space(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return true;
    }
    return false;
}

static bool accept_word(cursor *c, const char *word)
{
    size_t n = strlen(word);
    skip_space(c);
    if ((size_t)(c->end - c->p) >= n && memcmp(c->p, word, n) == 0) {
        c->p += n;
        return true;
    }
    return false;
}

/* A quoted string without escapes (no descr or key needs one), into buf. */
static loom_status parse_string(cursor *c, char *buf, size_t size, const char *context)
{
    skip_space(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
        return loom__fail(LOOM_EFORMAT, "%s: invalid .npy header: expected a quoted string for %s",
                          c->what, context);
    char quote = *c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != quote) {
        if (*c->p == '\\' || *c->p == '\n')
            return loom__fail(LOOM_EFORMAT, "%s: invalid .npy header: unsupported character in %s",
                              c->what, context);
        if (n + 1 >= size)
            return loom__fail(LOOM_EFORMAT, "%s: invalid .npy header: %s is too long", c->what,
                              context);
        buf[n++] = *c->p++;
    }
    if (c->p >= c->end)
        return loom__fail(LOOM_EFORMAT, "%s: invalid .npy header: unterminated string in %s",
                          c->what, context);
    c->p++;
    buf[n] = '\0';
    return LOOM_OK;
}

static loom_status parse_descr(cursor *c, npy_header *h)
{
    char descr[DESCR_MAX];
    skip_space(c);
    if (c->p < c->end && *c->p == '[')
        return bad_header(c, "structured dtypes (record arrays) are not supported");
    loom_status s = parse_string(c, descr, sizeof descr, "'descr'");
    if (s != LOOM_OK)
        return s;
    const char *code = descr;
    char order = HOST_ORDER;
    if (descr[0] == '<' || descr[0] == '>') {
        order = descr[0];
        code++;
    } else if (descr[0] == '=' || descr[0] == '|') {
        code++;
    }
    h->dtype = dtype_from_code(code);
    if (h->dtype == LOOM_DTYPE_INVALID)
        return loom__fail(LOOM_EFORMAT,
                          "%s: unsupported .npy dtype '%s' (loom reads f4 f8 f2 i1 u1 i2 u2 i4 u4 i8 b1 "
                          "c8 c16, V2 as bf16 and V1 as f8e4m3)", c->what, descr);
    h->order = order;
    return LOOM_OK;
}

static loom_status parse_bool(cursor *c, npy_header *h)
{
    if (accept_word(c, "True"))
        h->fortran = true;
    else if (accept_word(c, "False"))
        h->fortran = false;
    else
        return bad_header(c, "'fortran_order' must be True or False");
    return LOOM_OK;
}

/* A non-negative decimal integer, with the 'L' suffix Python 2 wrote. */
static loom_status parse_dim(cursor *c, int64_t *out)
{
    skip_space(c);
    if (c->p < c->end && *c->p == '-')
        return bad_header(c, "negative dimension in 'shape'");
    if (c->p >= c->end || *c->p < '0' || *c->p > '9')
        return bad_header(c, "'shape' must be a tuple of non-negative integers");
    int64_t v = 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        int digit = *c->p++ - '0';
        if (v > (INT64_MAX - digit) / 10)
            return bad_header(c, "dimension in 'shape' overflows 64 bits");
        v = v * 10 + digit;
    }
    if (c->p < c->end && (*c->p == 'L' || *c->p == 'l'))
        c->p++;
    *out = v;
    return LOOM_OK;
}

/* A Python tuple literal: "()", "(3,)", "(2, 3)", "(2, 3,)". "(3)" is an
** int in Python, so NumPy refuses it and so does this. */
static loom_status parse_shape(cursor *c, npy_header *h)
{
    if (!accept(c, '('))
        return bad_header(c, "'shape' must be a tuple");
    h->ndim = 0;
    if (accept(c, ')'))
        return LOOM_OK;
    bool comma = false;
    for (;;) {
        if (h->ndim == LOOM_MAX_NDIM)
            return loom__fail(LOOM_EFORMAT, "%s: .npy array has more than %d dimensions",
                              c->what, LOOM_MAX_NDIM);
        loom_status s = parse_dim(c, &h->shape[h->ndim]);
        if (s != LOOM_OK)
            return s;
        h->ndim++;
        comma = accept(c, ',');
        if (accept(c, ')'))
            break;
        if (!comma)
            return bad_header(c, "expected ',' or ')' in 'shape'");
    }
    if (h->ndim == 1 && !comma)
        return bad_header(c, "'shape' (n) is not a tuple: a 1-d shape is written (n,)");
    return LOOM_OK;
}

enum { KEY_DESCR = 1, KEY_FORTRAN = 2, KEY_SHAPE = 4 };

/* The dict literal: keys in any order, each exactly once, optional
** trailing comma, then only whitespace up to the end of the header. */
static loom_status parse_header(cursor *c, npy_header *h)
{
    unsigned seen = 0;
    if (!accept(c, '{'))
        return bad_header(c, "expected a dict starting with '{'");
    for (;;) {
        if (accept(c, '}'))
            break;
        char key[DESCR_MAX];
        loom_status s = parse_string(c, key, sizeof key, "a key");
        if (s != LOOM_OK)
            return s;
        if (!accept(c, ':'))
            return bad_header(c, "expected ':' after a key");
        unsigned bit = strcmp(key, "descr") == 0 ? KEY_DESCR
                     : strcmp(key, "fortran_order") == 0 ? KEY_FORTRAN
                     : strcmp(key, "shape") == 0 ? KEY_SHAPE : 0;
        if (bit == 0)
            return loom__fail(LOOM_EFORMAT, "%s: invalid .npy header: unexpected key '%s'",
                              c->what, key);
        if (seen & bit)
            return loom__fail(LOOM_EFORMAT, "%s: invalid .npy header: key '%s' appears twice",
                              c->what, key);
        seen |= bit;
        s = bit == KEY_DESCR ? parse_descr(c, h) : bit == KEY_FORTRAN ? parse_bool(c, h)
                                                                       : parse_shape(c, h);
        if (s != LOOM_OK)
            return s;
        if (accept(c, ','))
            continue;
        if (accept(c, '}'))
            break;
        return bad_header(c, "expected ',' or '}' after a value");
    }
    skip_space(c);
    if (c->p != c->end)
        return bad_header(c, "unexpected text after the closing '}'");
    if (!(seen & KEY_DESCR))
        return bad_header(c, "missing key 'descr'");
    if (!(seen & KEY_FORTRAN))
        return bad_header(c, "missing key 'fortran_order'");
    if (!(seen & KEY_SHAPE))
        return bad_header(c, "missing key 'shape'");
    return LOOM_OK;
}

/* ------------------------------------------------------------ data layout */

/* dst (C order) from src (Fortran order) of the same shape. */
static void fortran_to_c(char *dst, const char *src, const int64_t *shape, int32_t ndim,
                         size_t size, int64_t numel)
{
    int64_t cstride[LOOM_MAX_NDIM], idx[LOOM_MAX_NDIM] = { 0 };
    int64_t acc = 1;
    for (int32_t k = ndim - 1; k >= 0; k--) {
        cstride[k] = acc;
        acc *= shape[k];
    }
    int64_t off = 0;    /* element offset in dst of idx */
    for (int64_t i = 0; i < numel; i++) {
        memcpy(dst + (size_t)off * size, src + (size_t)i * size, size);
        /* advance idx in Fortran order: first index fastest */
        for (int32_t k = 0; k < ndim; k++) {
            off += cstride[k];
            if (++idx[k] < shape[k])
                break;
            off -= cstride[k] * shape[k];
            idx[k] = 0;
        }
    }
}

static void byteswap(char *p, size_t nbytes, size_t unit)
{
    for (size_t i = 0; i + unit <= nbytes; i += unit)
        for (size_t a = i, b = i + unit - 1; a < b; a++, b--) {
            char tmp = p[a];
            p[a] = p[b];
            p[b] = tmp;
        }
}

/* ------------------------------------------------------------------ read */

static uint32_t read_le(const unsigned char *p, int n)
{
    uint32_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

LOOM_API loom_status loom_npy_read_memory(loom_tensor **out, const void *data, size_t nbytes,
                                        const char *what)
{
    if (out == NULL)
        return loom__fail(LOOM_EINVAL, "npy_read: out must not be NULL");
    *out = NULL;
    if (what == NULL)
        what = "<memory>";
    if (data == NULL && nbytes > 0)
        return loom__fail(LOOM_EINVAL, "npy_read %s: data is NULL", what);
    const unsigned char *b = data;

    if (nbytes < NPY_MAGIC_LEN + 2 || memcmp(b, NPY_MAGIC, NPY_MAGIC_LEN) != 0)
        return loom__fail(LOOM_EFORMAT, "%s: not a .npy file (bad magic)", what);
    unsigned major = b[6], minor = b[7];
    if ((major != 1 && major != 2 && major != 3) || minor != 0)
        return loom__fail(LOOM_EFORMAT, "%s: unsupported .npy version %u.%u (loom reads 1.0, 2.0, 3.0)",
                          what, major, minor);
    size_t len_bytes = major == 1 ? 2 : 4;
    size_t start = NPY_MAGIC_LEN + 2 + len_bytes;
    if (nbytes < start)
        return loom__fail(LOOM_EFORMAT, "%s: truncated .npy preamble", what);
    size_t hlen = read_le(b + NPY_MAGIC_LEN + 2, (int)len_bytes);
    if (hlen > nbytes - start)
        return loom__fail(LOOM_EFORMAT, "%s: .npy header length %zu runs past the end of the "
                          "file (%zu bytes)", what, hlen, nbytes);

    npy_header h = { 0 };
    cursor c = { (const char *)b + start, (const char *)b + start + hlen, what };
    loom_status s = parse_header(&c, &h);
    if (s != LOOM_OK)
        return s;

    size_t size = loom__dtype(h.dtype)->size;
    int64_t numel = 1;
    size_t need;
    for (int32_t k = 0; k < h.ndim; k++)
        if (__builtin_mul_overflow(numel, h.shape[k], &numel))
            return loom__fail(LOOM_EFORMAT, "%s: .npy shape overflows 64 bits", what);
    if (__builtin_mul_overflow((uint64_t)numel, (uint64_t)size, &need))
        return loom__fail(LOOM_EFORMAT, "%s: .npy shape overflows the address space", what);
    size_t have = nbytes - start - hlen;
    if (have < need)
        return loom__fail(LOOM_EFORMAT, "%s: truncated .npy data: the shape needs %zu bytes, "
                          "%zu present", what, need, have);
    if (have > need)
        return loom__fail(LOOM_EFORMAT, "%s: %zu unexpected bytes after the .npy data (the "
                          "shape needs %zu)", what, have - need, need);

    loom_tensor *t = NULL;
    s = loom__tensor_alloc(&t, h.dtype, h.ndim, h.shape, loom__cpu(), false);
    if (s != LOOM_OK)
        return s;
    if (need > 0) {
        char *dst = loom_data(t);
        const char *src = (const char *)b + start + hlen;
        if (h.fortran && h.ndim > 1)
            fortran_to_c(dst, src, h.shape, h.ndim, size, numel);
        else
            memcpy(dst, src, need);
        size_t unit = swap_unit(h.dtype);
        if (h.order != HOST_ORDER && unit > 1)
            byteswap(dst, need, unit);
    }
    *out = t;
    return LOOM_OK;
}

LOOM_API loom_status loom_npy_read(loom_tensor **out, const char *path)
{
    if (out != NULL)
        *out = NULL;
    if (out == NULL || path == NULL)
        return loom__fail(LOOM_EINVAL, "npy_read: out and path must not be NULL");
    const void *data;
    size_t nbytes;
    loom_status s = loom__map_file(path, &data, &nbytes);
    if (s != LOOM_OK)
        return s;
    s = loom_npy_read_memory(out, data, nbytes, path);
    loom__unmap_file(data, nbytes);
    return s;
}

/* ----------------------------------------------------------------- write */

/* NumPy's header text for a dtype and shape, padded so that the preamble
** plus header is a multiple of 64 bytes and ends with '\n'. Returns the
** header length in *hlen and the format major version in *major. */
static void format_header(char *buf, size_t size, loom_dtype dtype, const loom_tensor *t,
                          size_t *hlen, int *major)
{
    const loom__dtype_info *info = loom__dtype(dtype);
    const char *code = descr_code(info);
    char order = (info->size == 1 || code[0] == 'V') ? '|' : HOST_ORDER;
    size_t n = (size_t)snprintf(buf, size, "{'descr': '%c%s', 'fortran_order': False, 'shape': (",
                                order, code);
    for (int32_t k = 0; k < t->ndim; k++)
        n += (size_t)snprintf(buf + n, size - n, k ? ", %lld" : "%lld", (long long)t->shape[k]);
    n += (size_t)snprintf(buf + n, size - n, "%s), }", t->ndim == 1 ? "," : "");
    /* the final newline counts towards the header; pad with spaces before
    ** it. Version 2.0 only when the length no longer fits in 16 bits. */
    size_t pad = (NPY_ALIGN - (NPY_MAGIC_LEN + 4 + n + 1) % NPY_ALIGN) % NPY_ALIGN;
    *major = 1;
    if (n + pad + 1 > 65535) {
        *major = 2;
        pad = (NPY_ALIGN - (NPY_MAGIC_LEN + 6 + n + 1) % NPY_ALIGN) % NPY_ALIGN;
    }
    memset(buf + n, ' ', pad);
    n += pad;
    buf[n++] = '\n';
    *hlen = n;
}

LOOM_API loom_status loom_npy_write(const char *path, const loom_tensor *t)
{
    if (path == NULL)
        return loom__fail(LOOM_EINVAL, "npy_write: path must not be NULL");
    char what[256];
    snprintf(what, sizeof what, "tensor written to '%s'", path);
    loom_status s = loom__tensor_check(t, what);
    if (s != LOOM_OK)
        return s;
    loom_dtype dtype = loom_tensor_dtype_of(t);

    loom_tensor *host = NULL;
    if (!loom__is_host(t->device) || !loom_is_contiguous(t)) {
        loom_dl_device cpu = loom__cpu();
        s = loom_tensor_copy_to(&host, t, &cpu);
        if (s != LOOM_OK)
            return s;
        t = host;
    }

    /* 12 dims of 19 digits plus ", " fit easily; 64 more for padding */
    char header[128 + LOOM_MAX_NDIM * 24 + NPY_ALIGN];
    size_t hlen;
    int major;
    format_header(header, sizeof header, dtype, t, &hlen, &major);
    unsigned char pre[12];
    memcpy(pre, NPY_MAGIC, NPY_MAGIC_LEN);
    pre[6] = (unsigned char)major;
    pre[7] = 0;
    size_t pre_len = major == 1 ? 10 : 12;
    for (size_t i = 8; i < pre_len; i++)
        pre[i] = (unsigned char)(hlen >> (8 * (i - 8)));

    size_t nbytes = loom__tensor_nbytes(t);
    const void *chunks[3] = { pre, header, nbytes ? loom_data(t) : NULL };
    size_t sizes[3] = { pre_len, hlen, nbytes };
    s = loom__write_file(path, chunks, sizes, 3);
    loom_tensor_free(host);
    return s;
}
