/* SPDX-License-Identifier: BSD-3-Clause */
/*
** jagged_checks.c - argument checks and output allocation of the jagged
** ops, shared by the cpu and cuda kernels (see jagged.h). Every message
** names the argument and what was expected; the core prefixes the op.
** After a jg_prepare_* returns LOOM_OK the offsets in the plan index only
** rows that exist, so kernels need no further bounds checks.
*/
#include <math.h>
#include <string.h>

#include "jagged.h"

#define DESC(t, buf) fbgemm_describe((t), (buf), sizeof(buf))

loom_status jg_check_tensor(const char *arg, const loom_tensor *t, int32_t min_rank)
{
    char b[160];
    if (t->ndim < min_rank)
        return pk_host->fail(LOOM_EINVAL, "'%s' must have rank >= %d, got %s", arg, (int)min_rank,
                             DESC(t, b));
    if (!loom_is_contiguous(t))
        return pk_host->fail(LOOM_EINVAL, "'%s' %s must be compact row-major", arg, DESC(t, b));
    return LOOM_OK;
}

int64_t jg_inner(const loom_tensor *t, int32_t from)
{
    int64_t n = 1;
    for (int32_t d = from; d < t->ndim; d++)
        if (__builtin_mul_overflow(n, t->shape[d], &n))
            return -1;
    return n;
}

/* *D = jg_inner(t, from), refused when it overflows (a tensor with a zero
** leading dim may have inner dims whose product does not fit an int64). */
static loom_status inner_of(const char *arg, const loom_tensor *t, int32_t from, int64_t *D)
{
    char b[160];
    *D = jg_inner(t, from);
    if (*D < 0)
        return pk_host->fail(LOOM_EINVAL, "'%s' %s: the product of its inner dims overflows an int64", arg,
                             DESC(t, b));
    return LOOM_OK;
}

void jg_cost_bytes(const loom_call *call, double *flops, double *bytes)
{
    double total = 0;
    (void)flops;
    for (int32_t i = 0; i < call->n_inputs; i++)
        if (call->inputs[i] != NULL)
            total += (double)loom_numel(call->inputs[i]) *
                     (double)pk_host->dtype_size(loom_tensor_dtype_of(call->inputs[i]));
    for (int32_t i = 0; i < call->n_outputs; i++)
        if (call->outputs[i] != NULL)
            total += (double)loom_numel(call->outputs[i]) *
                     (double)pk_host->dtype_size(loom_tensor_dtype_of(call->outputs[i]));
    *bytes = total;
}

loom_status jg_check_offsets_tensor(const char *arg, const loom_tensor *t, int64_t *count)
{
    char b[160];
    loom_dtype dt = loom_tensor_dtype_of(t);
    if (dt != LOOM_DTYPE_I32 && dt != LOOM_DTYPE_I64)
        return pk_host->fail(LOOM_EINVAL, "'%s' must be int32 or int64, got %s", arg, DESC(t, b));
    if (t->ndim != 1 || t->shape[0] < 1)
        return pk_host->fail(LOOM_EINVAL, "'%s' must be 1-D [B+1] with B >= 0, got %s", arg, DESC(t, b));
    if (!loom_is_contiguous(t))
        return pk_host->fail(LOOM_EINVAL, "'%s' %s must be compact", arg, DESC(t, b));
    *count = t->shape[0];
    return LOOM_OK;
}

loom_status jg_read_offsets(const char *arg, const loom_tensor *t, const void *host_data, int64_t rows,
                            int64_t *dst)
{
    const int64_t n = t->shape[0];
    const int is32 = loom_tensor_dtype_of(t) == LOOM_DTYPE_I32;
    int64_t prev = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t v = is32 ? (int64_t)((const int32_t *)host_data)[i] : ((const int64_t *)host_data)[i];
        if (v < prev)
            return pk_host->fail(LOOM_EINVAL,
                                 i == 0 ? "'%s'[%lld] is %lld: offsets must be >= 0"
                                            : "'%s' must be non-decreasing: entry %lld is %lld, below %lld",
                                     arg, (long long)i, (long long)v, (long long)prev);
        dst[i] = prev = v;
    }
    if (rows >= 0 && prev != rows)
        return pk_host->fail(LOOM_EINVAL,
                             "'%s' ends at %lld but must end at %lld (the rows of the jagged values, or the "
                             "entries of the next offsets level)", arg, (long long)prev, (long long)rows);
    /* -(rows + 1), not -rows - 1: rows may be INT64_MIN (total_L = INT64_MAX) */
    if (rows < 0 && prev > -(rows + 1))
        return pk_host->fail(LOOM_EINVAL, "'%s' ends at %lld, past total_L = %lld", arg, (long long)prev,
                             (long long)-(rows + 1));
    return LOOM_OK;
}

loom_status jg_read_host(loom_call *call, const char *arg, const loom_tensor *t, int64_t rows, int64_t *dst)
{
    (void)call;
    return jg_read_offsets(arg, t, loom_data(t), rows, dst);
}

loom_status jg_check_indices(const loom_tensor *t, const void *host_data, int64_t count, int64_t rows)
{
    const int is32 = loom_tensor_dtype_of(t) == LOOM_DTYPE_I32;
    for (int64_t i = 0; i < count; i++) {
        int64_t v = is32 ? (int64_t)((const int32_t *)host_data)[i] : ((const int64_t *)host_data)[i];
        if (v < 0 || v >= rows)
            return pk_host->fail(LOOM_EINVAL, "'indices'[%lld] is %lld, outside [0, %lld) of 'input'",
                                 (long long)i, (long long)v, (long long)rows);
    }
    return LOOM_OK;
}

/* The float dtypes of the dtype table: v in the compute type, rounded to
** nearest even into storage. */
#define PAD_FLOAT_(sfx, DTYPE, S, C)      \
    case DTYPE: {                         \
        const S s = PK_TO(sfx)((C)v);     \
        memcpy(out, &s, sizeof s);        \
        return LOOM_OK;                   \
    }

loom_status jg_padding_bytes(loom_dtype dtype, double v, unsigned char out[8])
{
    memset(out, 0, 8);
    switch (dtype) {
        PK_FLOAT_DTYPES(PAD_FLOAT_)
    case LOOM_DTYPE_I32:
        if (!(v == trunc(v) && v >= -2147483648.0 && v <= 2147483647.0))
            break;
        { int32_t i = (int32_t)v; memcpy(out, &i, 4); }
        return LOOM_OK;
    case LOOM_DTYPE_I64:
        if (!(v == trunc(v) && fabs(v) < 9.2e18))
            break;
        { int64_t i = (int64_t)v; memcpy(out, &i, 8); }
        return LOOM_OK;
    default:
        return pk_host->fail(LOOM_EINVAL, "unsupported dtype %s", pk_host->dtype_name(dtype));
    }
    return pk_host->fail(LOOM_EINVAL, "'padding_value' %g is not representable in %s", v,
                         pk_host->dtype_name(dtype));
}

/* ------------------------------------------------------------- helpers */

static const loom_dl_device host_device = { LOOM_DEVICE_CPU, 0 };

/* Host memory for the offsets: the call's scratch on the CPU; for a device
** call (whose scratch is device memory) an allocation jg_plan_release frees. */
static int64_t *offsets_buffer(loom_call *call, int64_t n, jg_plan *p, int32_t level)
{
    size_t bytes = (size_t)n * sizeof(int64_t);
    if (call->ctx->device.device_type == LOOM_DEVICE_CPU)
        return pk_host->scratch(call->ctx, bytes);
    p->host_owned[level] = pk_host->alloc(host_device, bytes, 64);
    if (p->host_owned[level] == NULL)
        pk_host->fail(LOOM_ENOMEM, "out of host memory for %lld offsets", (long long)n);
    return p->host_owned[level];
}

void jg_plan_release(jg_plan *p)
{
    for (int32_t k = 0; k < JG_MAX_LEVELS; k++) {
        if (p->host_owned[k] != NULL)
            pk_host->free(host_device, p->host_owned[k]);
        p->host_owned[k] = NULL;
    }
}

/* Reads offsets `arg` (input index `idx`) of B+1 entries into a host
** buffer as level `level`; B+1 must equal expect_count when that is >= 0. */
static loom_status read_level(loom_call *call, jg_offsets_reader read, int idx, const char *arg, int32_t level,
                              int64_t expect_count, int64_t rows, jg_plan *p)
{
    char b[160];
    int64_t n;
    const loom_tensor *t = call->inputs[idx];
    loom_status st = jg_check_offsets_tensor(arg, t, &n);
    if (st != LOOM_OK)
        return st;
    if (expect_count >= 0 && n != expect_count)
        return pk_host->fail(LOOM_EINVAL, "'%s' %s must have B+1 = %lld entries", arg, DESC(t, b),
                             (long long)expect_count);
    int64_t *dst = offsets_buffer(call, n, p, level);
    if (dst == NULL)
        return LOOM_ENOMEM;
    st = read(call, arg, t, rows, dst);
    p->offs[level] = dst;
    p->offs_count[level] = n;
    if (level == 0) {
        p->B = n - 1;
        p->off = dst;
    }
    return st;
}

/* One jagged dimension. */
static loom_status read_offsets(loom_call *call, jg_offsets_reader read, int idx, const char *arg,
                                int64_t expect_count, int64_t rows, jg_plan *p)
{
    p->levels = 1;
    p->outer = 1;
    return read_level(call, read, idx, arg, 0, expect_count, rows, p);
}

/* The offsets list at inputs first.. (names[k] for level k, the later ones
** optional): counts the levels, checks each level's entry count against
** the next level, reads them all; the last level ends at `rows` (see
** jg_read_offsets). expect_count: entries of level 0, or -1. */
static loom_status read_offsets_list(loom_call *call, jg_offsets_reader read, int first, const char *const *names,
                                     int64_t expect_count, int64_t rows, jg_plan *p)
{
    int64_t n;
    int32_t levels = 1;
    while (levels < JG_MAX_LEVELS && first + levels < call->n_inputs && call->inputs[first + levels] != NULL)
        levels++;
    for (int32_t k = levels; k < JG_MAX_LEVELS && first + k < call->n_inputs; k++)
        if (call->inputs[first + k] != NULL)
            return pk_host->fail(LOOM_EINVAL, "'%s' given without '%s'", names[k], names[levels]);
    for (int32_t k = 0; k < levels; k++) {
        loom_status st = jg_check_offsets_tensor(names[k], call->inputs[first + k], &n);
        if (st != LOOM_OK)
            return st;
    }
    p->levels = levels;
    for (int32_t k = 0; k < levels; k++) {
        /* level k ends at the entry count of level k+1 */
        int64_t end = k + 1 < levels ? call->inputs[first + k + 1]->shape[0] - 1 : rows;
        loom_status st = read_level(call, read, first + k, names[k], k, k == 0 ? expect_count : -1, end, p);
        if (st != LOOM_OK)
            return st;
    }
    return LOOM_OK;
}

/* max_Ls of every level set: outer = product of the levels above the last. */
static loom_status set_outer(jg_plan *p)
{
    p->outer = 1;
    for (int32_t k = 0; k + 1 < p->levels; k++) {
        if (p->max_Ls[k] > 0 && p->outer > INT64_MAX / p->max_Ls[k])
            return pk_host->fail(LOOM_EINVAL, "the padded dims are too large");
        p->outer *= p->max_Ls[k];
    }
    p->max_L = p->max_Ls[p->levels - 1];
    return LOOM_OK;
}

static loom_status same_dtype(const char *an, const loom_tensor *a, const char *bn, const loom_tensor *b)
{
    char ba[160], bb[160];
    if (loom_tensor_dtype_of(a) != loom_tensor_dtype_of(b))
        return pk_host->fail(LOOM_EINVAL, "'%s' %s and '%s' %s must have the same dtype", an, DESC(a, ba),
                             bn, DESC(b, bb));
    return LOOM_OK;
}

static void set_dtype(jg_plan *p, const loom_tensor *t)
{
    p->dtype = loom_tensor_dtype_of(t);
    p->es = pk_host->dtype_size(p->dtype);
}

/* shape = [lead..., inner dims of t from `from`] */
static int32_t shape_with(int64_t *shape, const int64_t *lead, int32_t n_lead, const loom_tensor *t, int32_t from)
{
    int32_t nd = 0;
    for (int32_t i = 0; i < n_lead; i++)
        shape[nd++] = lead[i];
    for (int32_t d = from; d < t->ndim; d++)
        shape[nd++] = t->shape[d];
    return nd;
}

/* y [B, max_L, inner...] must carry x [L, inner...]'s inner dims. */
static loom_status check_dense_inner(const char *xn, const loom_tensor *x, const char *yn, const loom_tensor *y)
{
    char bx[160], by[160];
    int ok = y->ndim == x->ndim + 1;
    for (int32_t d = 1; ok && d < x->ndim; d++)
        ok = y->shape[d + 1] == x->shape[d];
    if (!ok)
        return pk_host->fail(LOOM_EINVAL, "'%s' %s must be [B, max_L] + the inner dims of '%s' %s", yn,
                             DESC(y, by), xn, DESC(x, bx));
    return LOOM_OK;
}

static loom_status check_max_l(const char *name, int64_t v)
{
    if (v < 0)
        return pk_host->fail(LOOM_EINVAL, "'%s' must be >= 0, got %lld", name, (long long)v);
    return LOOM_OK;
}

/* ------------------------------------------------------------ prepares */

static const char *const offsets_names[] = { "offsets", "offsets_1", "offsets_2" };
static const char *const x_offsets_names[] = { "x_offsets", "x_offsets_1", "x_offsets_2" };

/* Output shape [B, max_Ls..., inner dims of t from `from`]. */
static loom_status dense_shape(const jg_plan *p, const loom_tensor *t, int32_t from, int64_t *shape, int32_t *nd)
{
    if (1 + p->levels + (t->ndim - from) > LOOM_MAX_NDIM)
        return pk_host->fail(LOOM_EINVAL, "too many dims: %d jagged + %d inner", (int)p->levels,
                             (int)(t->ndim - from));
    int64_t lead[1 + JG_MAX_LEVELS] = { p->B };
    for (int32_t k = 0; k < p->levels; k++)
        lead[1 + k] = p->max_Ls[k];
    *nd = shape_with(shape, lead, 1 + p->levels, t, from);
    return LOOM_OK;
}

loom_status jg_prepare_to_padded(loom_call *call, jg_offsets_reader read, jg_plan *p, loom_tensor **out)
{
    const loom_tensor *v = call->inputs[0];
    const loom_attr_value *ml = &call->attrs[PK_ATTR(jg_to_padded, max_lengths)];
    int64_t shape[LOOM_MAX_NDIM];
    int32_t nd = 0;
    loom_status st = jg_check_tensor("values", v, 1);
    if (st != LOOM_OK)
        return st;
    set_dtype(p, v);
    if ((st = inner_of("values", v, 1, &p->D)) != LOOM_OK)
        return st;
    p->total_L = v->shape[0];
    const double padding = call->attrs[PK_ATTR(jg_to_padded, padding_value)].u.f;
    if ((st = jg_padding_bytes(p->dtype, padding, p->pad)) != LOOM_OK ||
        (st = read_offsets_list(call, read, 1, offsets_names, -1, p->total_L, p)) != LOOM_OK)
        return st;
    if (ml->count != p->levels)
        return pk_host->fail(LOOM_EINVAL, "'max_lengths' must have one entry per offsets tensor (%d), got %lld",
                             (int)p->levels, (long long)ml->count);
    for (int32_t k = 0; k < p->levels; k++) {
        p->max_Ls[k] = ml->u.ints[k];
        if ((st = check_max_l("max_lengths", p->max_Ls[k])) != LOOM_OK)
            return st;
    }
    if ((st = set_outer(p)) != LOOM_OK || (st = dense_shape(p, v, 1, shape, &nd)) != LOOM_OK)
        return st;
    return pk_host->alloc_output(call, 0, p->dtype, nd, shape, out);
}

/* dense [B, max_Ls..., inner...] against the offsets list at inputs 1..:
** the levels come from the offsets given, the max lengths from dense. */
static loom_status prepare_from_dense(loom_call *call, jg_offsets_reader read, const char *dense_name,
                                      const char *const *names, int64_t rows, jg_plan *p)
{
    const loom_tensor *d = call->inputs[0];
    char b[160];
    loom_status st = jg_check_tensor(dense_name, d, 2);
    if (st != LOOM_OK)
        return st;
    set_dtype(p, d);
    if ((st = read_offsets_list(call, read, 1, names, d->shape[0] + 1, rows, p)) != LOOM_OK)
        return st;
    if (d->ndim < 1 + p->levels)
        return pk_host->fail(LOOM_EINVAL, "'%s' %s must be [B, max_L x %d, inner...]", dense_name,
                             DESC(d, b), (int)p->levels);
    for (int32_t k = 0; k < p->levels; k++)
        p->max_Ls[k] = d->shape[1 + k];
    if ((st = inner_of(dense_name, d, 1 + p->levels, &p->D)) != LOOM_OK)
        return st;
    return set_outer(p);
}

loom_status jg_prepare_to_padded_backward(loom_call *call, jg_offsets_reader read, jg_plan *p,
                                          loom_tensor **out)
{
    const loom_tensor *g = call->inputs[0];
    int64_t shape[LOOM_MAX_NDIM];
    loom_status st;
    p->total_L = call->attrs[PK_ATTR(jg_to_padded_backward, total_L)].u.i;
    if ((st = check_max_l("total_L", p->total_L)) != LOOM_OK ||
        (st = prepare_from_dense(call, read, "grad_output", offsets_names, -p->total_L - 1, p)) != LOOM_OK)
        return st;
    int32_t nd = shape_with(shape, &p->total_L, 1, g, 1 + p->levels);
    return pk_host->alloc_output(call, 0, p->dtype, nd, shape, out);
}

loom_status jg_prepare_to_jagged(loom_call *call, jg_offsets_reader read, jg_plan *p, loom_tensor **out)
{
    const loom_tensor *d = call->inputs[0];
    const loom_attr_value *tl = &call->attrs[PK_ATTR(jg_to_jagged, total_L)];
    int64_t shape[LOOM_MAX_NDIM];
    loom_status st;
    if (tl->is_set && (st = check_max_l("total_L", tl->u.i)) != LOOM_OK)
        return st;
    /* without total_L the output has as many rows as the last offset */
    int64_t limit = tl->is_set ? -tl->u.i - 1 : -INT64_MAX;
    if ((st = prepare_from_dense(call, read, "dense", x_offsets_names, limit, p)) != LOOM_OK)
        return st;
    const int64_t *last = p->offs[p->levels - 1];
    p->total_L = tl->is_set ? tl->u.i : last[p->offs_count[p->levels - 1] - 1];
    int32_t nd = shape_with(shape, &p->total_L, 1, d, 1 + p->levels);
    return pk_host->alloc_output(call, 0, p->dtype, nd, shape, out);
}

loom_status jg_prepare_elementwise(loom_call *call, jg_offsets_reader read, int dense_out, jg_plan *p,
                                   loom_tensor **out)
{
    const loom_tensor *x = call->inputs[0], *y = call->inputs[2];
    loom_status st;
    if ((st = jg_check_tensor("x_values", x, 1)) != LOOM_OK || (st = jg_check_tensor("y", y, 2)) != LOOM_OK ||
        (st = same_dtype("x_values", x, "y", y)) != LOOM_OK ||
        (st = check_dense_inner("x_values", x, "y", y)) != LOOM_OK)
        return st;
    set_dtype(p, x);
    p->max_L = y->shape[1];
    if ((st = inner_of("x_values", x, 1, &p->D)) != LOOM_OK)
        return st;
    p->total_L = x->shape[0];
    if ((st = read_offsets(call, read, 1, "x_offsets", y->shape[0] + 1, p->total_L, p)) != LOOM_OK)
        return st;
    const loom_tensor *like = dense_out ? y : x;
    return pk_host->alloc_output(call, 0, p->dtype, like->ndim, like->shape, out);
}

loom_status jg_prepare_mul_backward(loom_call *call, jg_offsets_reader read, jg_plan *p, loom_tensor *outs[2])
{
    const loom_tensor *g = call->inputs[0], *y = call->inputs[2], *x = call->inputs[3];
    char bg[160], bx[160];
    loom_status st;
    if ((st = jg_check_tensor("grad_output", g, 1)) != LOOM_OK ||
        (st = jg_check_tensor("y", y, 2)) != LOOM_OK || (st = jg_check_tensor("x_values", x, 1)) != LOOM_OK ||
        (st = same_dtype("grad_output", g, "y", y)) != LOOM_OK ||
        (st = same_dtype("grad_output", g, "x_values", x)) != LOOM_OK ||
        (st = check_dense_inner("grad_output", g, "y", y)) != LOOM_OK)
        return st;
    int same = g->ndim == x->ndim;
    for (int32_t d = 0; same && d < g->ndim; d++)
        same = g->shape[d] == x->shape[d];
    if (!same)
        return pk_host->fail(LOOM_EINVAL, "'x_values' %s must have the shape of 'grad_output' %s",
                             DESC(x, bx), DESC(g, bg));
    set_dtype(p, g);
    p->max_L = y->shape[1];
    if ((st = inner_of("grad_output", g, 1, &p->D)) != LOOM_OK)
        return st;
    p->total_L = g->shape[0];
    if ((st = read_offsets(call, read, 1, "x_offsets", y->shape[0] + 1, p->total_L, p)) != LOOM_OK)
        return st;
    st = pk_host->alloc_output(call, 0, p->dtype, g->ndim, g->shape, &outs[0]);
    if (st == LOOM_OK)
        st = pk_host->alloc_output(call, 1, p->dtype, y->ndim, y->shape, &outs[1]);
    return st;
}

loom_status jg_prepare_dense_bmm(loom_call *call, jg_offsets_reader read, jg_plan *p, loom_tensor **out)
{
    const loom_tensor *x = call->inputs[0], *y = call->inputs[2];
    char bx[160], by[160];
    loom_status st;
    if ((st = jg_check_tensor("x_values", x, 2)) != LOOM_OK || (st = jg_check_tensor("y", y, 3)) != LOOM_OK ||
        (st = same_dtype("x_values", x, "y", y)) != LOOM_OK)
        return st;
    if (x->ndim != 2 || y->ndim != 3 || y->shape[1] != x->shape[1])
        return pk_host->fail(LOOM_EINVAL, "'x_values' %s must be [total_L, K] and 'y' %s [B, K, N]",
                             DESC(x, bx), DESC(y, by));
    set_dtype(p, x);
    p->total_L = x->shape[0];
    p->K = x->shape[1];
    p->N = y->shape[2];
    p->max_L = call->attrs[PK_ATTR(jg_bmm, max_L)].u.i;
    if ((st = check_max_l("max_L", p->max_L)) != LOOM_OK ||
        (st = read_offsets(call, read, 1, "x_offsets", y->shape[0] + 1, p->total_L, p)) != LOOM_OK)
        return st;
    return pk_host->alloc_output(call, 0, p->dtype, 2, (int64_t[]){ p->total_L, p->N }, out);
}

loom_status jg_prepare_jagged_bmm(loom_call *call, jg_offsets_reader read, jg_plan *p, loom_tensor **out)
{
    const loom_tensor *x = call->inputs[0], *y = call->inputs[1];
    char bx[160], by[160];
    loom_status st;
    if ((st = jg_check_tensor("x_values", x, 2)) != LOOM_OK ||
        (st = jg_check_tensor("y_values", y, 2)) != LOOM_OK ||
        (st = same_dtype("x_values", x, "y_values", y)) != LOOM_OK)
        return st;
    if (x->ndim != 2 || y->ndim != 2 || y->shape[0] != x->shape[0])
        return pk_host->fail(LOOM_EINVAL, "'x_values' %s must be [total_L, M] and 'y_values' %s [total_L, N]",
                             DESC(x, bx), DESC(y, by));
    set_dtype(p, x);
    p->total_L = x->shape[0];
    p->M = x->shape[1];
    p->N = y->shape[1];
    p->max_L = call->attrs[PK_ATTR(jg_bmm, max_L)].u.i;
    if ((st = check_max_l("max_L", p->max_L)) != LOOM_OK ||
        (st = read_offsets(call, read, 2, "x_offsets", -1, p->total_L, p)) != LOOM_OK)
        return st;
    return pk_host->alloc_output(call, 0, p->dtype, 3, (int64_t[]){ p->B, p->M, p->N }, out);
}

loom_status jg_prepare_permute102(loom_call *call, jg_plan *p, loom_tensor **out)
{
    const loom_tensor *bias = call->inputs[0], *a = call->inputs[1], *b = call->inputs[2];
    char b0[160], b1[160], b2[160];
    loom_status st;
    if ((st = jg_check_tensor("bias", bias, 2)) != LOOM_OK || (st = jg_check_tensor("A", a, 3)) != LOOM_OK ||
        (st = jg_check_tensor("B", b, 3)) != LOOM_OK || (st = same_dtype("A", a, "B", b)) != LOOM_OK ||
        (st = same_dtype("A", a, "bias", bias)) != LOOM_OK)
        return st;
    if (bias->ndim != 2 || a->ndim != 3 || b->ndim != 3 || b->shape[0] != a->shape[1] ||
        b->shape[1] != a->shape[2] || bias->shape[0] != a->shape[1] || bias->shape[1] != b->shape[2])
        return pk_host->fail(LOOM_EINVAL, "'bias' %s, 'A' %s and 'B' %s must be [b, n], [m, b, k] and [b, k, n]",
                             DESC(bias, b0), DESC(a, b1), DESC(b, b2));
    set_dtype(p, a);
    p->M = a->shape[0];
    p->B = a->shape[1];
    p->K = a->shape[2];
    p->N = b->shape[2];
    return pk_host->alloc_output(call, 0, p->dtype, 3, (int64_t[]){ p->M, p->B, p->N }, out);
}

loom_status jg_prepare_index_select(loom_call *call, jg_plan *p, loom_tensor **out)
{
    const loom_tensor *in = call->inputs[0], *idx = call->inputs[1];
    char b[160];
    int64_t shape[LOOM_MAX_NDIM];
    loom_status st = jg_check_tensor("input", in, 1);
    if (st != LOOM_OK)
        return st;
    loom_dtype it = loom_tensor_dtype_of(idx);
    if ((it != LOOM_DTYPE_I32 && it != LOOM_DTYPE_I64) || idx->ndim != 1 || !loom_is_contiguous(idx))
        return pk_host->fail(LOOM_EINVAL, "'indices' must be compact 1-D int32 or int64, got %s", DESC(idx, b));
    if (call->attrs[PK_ATTR(jg_index_select, consecutive_range_start)].u.i < 0 ||
        call->attrs[PK_ATTR(jg_index_select, consecutive_range_length)].u.i < 0)
        return pk_host->fail(LOOM_EINVAL, "'consecutive_range_start' and 'consecutive_range_length' must be >= 0");
    set_dtype(p, in);
    if (p->es == 0)
        return pk_host->fail(LOOM_EINVAL, "'input' has an unknown dtype");
    p->B = idx->shape[0];
    p->total_L = in->shape[0];
    if ((st = inner_of("input", in, 1, &p->D)) != LOOM_OK)
        return st;
    int32_t nd = shape_with(shape, &p->B, 1, in, 1);
    return pk_host->alloc_output(call, 0, p->dtype, nd, shape, out);
}
