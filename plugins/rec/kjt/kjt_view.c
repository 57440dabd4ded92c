/* SPDX-License-Identifier: BSD-3-Clause */
/*
** kjt_view.c - reading and checking a KeyedJaggedTensor from an op's
** inputs, and writing one as the output block (kjt.h).
**
** torchrec does not validate a KJT ("We will NOT do input validation"): a
** bad one fails later inside a view, a split or an fbgemm kernel, or reads
** out of bounds. loom refuses it up front, naming the argument and the
** feature at fault: lengths that are negative or do not sum to the values,
** offsets that do not start at 0, decrease or do not end at the values,
** a lengths count that is not keys x stride, VBE strides that do not add
** up, inverse indices outside a feature's deduplicated samples.
*/
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kjt.h"

/* The bump allocator of the kernel running on this thread (kernels of this
** module run on the calling thread only: no parallel_for) */
static _Thread_local struct {
    char *cur;
    size_t left, chunk;
} rec_arena;

void rec_scratch_begin(void)
{
    rec_arena.cur = NULL;
    rec_arena.left = 0;
    rec_arena.chunk = (size_t)1 << 16;
}

void *rec_scratch(loom_call *call, size_t nbytes)
{
    size_t need = (nbytes + 63) & ~(size_t)63;
    if (nbytes > SIZE_MAX / 4)
        return pk_host->scratch(call->ctx, nbytes);      /* fails with the core's message */
    if (need > rec_arena.left) {
        size_t c = rec_arena.chunk;
        while (c < need)
            c *= 2;
        char *p = pk_host->scratch(call->ctx, c);
        if (!p)
            return NULL;
        rec_arena.cur = p;
        rec_arena.left = c;
        rec_arena.chunk = c < SIZE_MAX / 4 ? c * 2 : c;
    }
    void *p = rec_arena.cur;
    rec_arena.cur += need;
    rec_arena.left -= need;
    return p;
}

rec_kjt_inputs rec_kjt_inputs_of(const loom_call *call)
{
    rec_kjt_inputs in = {
        call->inputs[REC_KJT_IN_VALUES],  call->inputs[REC_KJT_IN_LENGTHS], call->inputs[REC_KJT_IN_OFFSETS],
        call->inputs[REC_KJT_IN_WEIGHTS], call->inputs[REC_KJT_IN_SPKPR],   call->inputs[REC_KJT_IN_INVERSE],
    };
    return in;
}

static void *scratch_i64(loom_call *call, int64_t n)
{
    return rec_scratch(call, (size_t)(n > 0 ? n : 1) * sizeof(int64_t));
}

static loom_status need_compact(const loom_tensor *t, const char *name)
{
    char b[160];
    if (t && loom_numel(t) > 0 && !loom_is_contiguous(t))
        return pk_host->fail(LOOM_EINVAL, "'%s' %s must be contiguous (compact row-major)", name,
                             pk_describe(pk_host, t, b, sizeof b));
    return LOOM_OK;
}

/* Splits "a,b,c" into names; "" is no keys. A name may not be empty. */
static loom_status read_keys(loom_call *call, const char *keys, rec_kjt *kjt)
{
    size_t n = strlen(keys);
    int64_t count = n == 0 ? 0 : 1;
    for (size_t i = 0; i < n; i++)
        count += keys[i] == ',';
    char *copy = rec_scratch(call, n + 1);
    const char **names = rec_scratch(call, (size_t)(count > 0 ? count : 1) * sizeof(char *));
    if (!copy || !names)
        return LOOM_ENOMEM;
    memcpy(copy, keys, n + 1);
    int64_t k = 0;
    char *start = copy;
    for (size_t i = 0; n > 0 && i <= n; i++) {
        if (copy[i] == ',' || copy[i] == '\0') {
            copy[i] = '\0';
            if (*start == '\0')
                return pk_host->fail(LOOM_EINVAL, "'keys' \"%s\": key %lld is an empty name", keys, (long long)k);
            names[k++] = start;
            start = copy + i + 1;
        }
    }
    kjt->n_keys = count;
    kjt->keys = names;
    return LOOM_OK;
}

static const char *key_name(const rec_kjt *kjt, int64_t k)
{
    return k >= 0 && k < kjt->n_keys ? kjt->keys[k] : "?";
}

/* The feature whose lengths hold entry i of lengths (the last one when i is past them) */
static int64_t key_of_length(const rec_kjt *kjt, int64_t i)
{
    int64_t k = 0;
    while (k + 1 < kjt->n_keys && kjt->lengths_offset_per_key[k + 1] <= i)
        k++;
    return k;
}

/* Strides: torchrec's _maybe_compute_stride_kjt and _maybe_compute_stride_per_key */
static loom_status read_strides(loom_call *call, const rec_kjt_inputs *in, int64_t stride, int64_t n_lengths,
                                int from_offsets, rec_kjt *kjt)
{
    const int64_t K = kjt->n_keys;
    char b[160];
    kjt->stride_per_key = scratch_i64(call, K);
    kjt->lengths_offset_per_key = scratch_i64(call, K + 1);
    if (!kjt->stride_per_key || !kjt->lengths_offset_per_key)
        return LOOM_ENOMEM;
    const loom_tensor *sp = in->stride_per_key_per_rank;
    if (sp) {
        if (sp->ndim != 2 || sp->shape[0] != K || sp->shape[1] < 1)
            return pk_host->fail(LOOM_EINVAL, "'stride_per_key_per_rank' %s must be [keys = %lld, ranks >= 1]",
                                 pk_describe(pk_host, sp, b, sizeof b), (long long)K);
        loom_status st = need_compact(sp, "stride_per_key_per_rank");
        if (st != LOOM_OK)
            return st;
        kjt->variable_stride = 1;
        kjt->n_ranks = sp->shape[1];
        kjt->stride_per_key_per_rank = scratch_i64(call, K * kjt->n_ranks);
        if (!kjt->stride_per_key_per_rank)
            return LOOM_ENOMEM;
        int64_t max_stride = 0, counted = 0;
        for (int64_t k = 0; k < K; k++) {
            int64_t s = 0;
            for (int64_t r = 0; r < kjt->n_ranks; r++) {
                int64_t v = rec_get_index(sp, k * kjt->n_ranks + r);
                if (v < 0)
                    return pk_host->fail(LOOM_EINVAL, "feature '%s' (key %lld): 'stride_per_key_per_rank'[%lld][%lld] "
                                         "= %lld is negative", key_name(kjt, k), (long long)k, (long long)k,
                                         (long long)r, (long long)v);
                if (v > n_lengths - counted - s)   /* before the sum can overflow */
                    return pk_host->fail(LOOM_EINVAL, "'stride_per_key_per_rank' sums to more samples than the %lld "
                                         "entries of '%s' (feature '%s', key %lld)",
                                         (long long)(n_lengths + from_offsets), from_offsets ? "offsets" : "lengths",
                                         key_name(kjt, k), (long long)k);
                kjt->stride_per_key_per_rank[k * kjt->n_ranks + r] = v;
                s += v;
            }
            kjt->stride_per_key[k] = s;
            counted += s;
            max_stride = s > max_stride ? s : max_stride;
        }
        const loom_tensor *ii = in->inverse_indices;
        kjt->stride = stride >= 0 ? stride : (ii && loom_numel(ii) > 0) ? ii->shape[ii->ndim - 1] : max_stride;
    } else {
        kjt->variable_stride = 0;
        kjt->n_ranks = 0;
        kjt->stride_per_key_per_rank = NULL;
        if (stride >= 0)
            kjt->stride = stride;
        else if (K == 0)
            kjt->stride = 0;
        else
            kjt->stride = n_lengths / K;      /* torchrec: (offsets.numel() - 1) // len(keys), or lengths' */
        for (int64_t k = 0; k < K; k++)
            kjt->stride_per_key[k] = kjt->stride;
        int64_t entries;
        if (__builtin_mul_overflow(K, kjt->stride, &entries) || n_lengths != entries)
            return pk_host->fail(LOOM_EINVAL, "'%s' has %lld entries, not keys x stride = %lld x %lld "
                                 "(a KJT without stride_per_key_per_rank has stride entries per feature)",
                                 from_offsets ? "offsets" : "lengths",
                                 (long long)(n_lengths + from_offsets), (long long)K, (long long)kjt->stride);
    }
    kjt->lengths_offset_per_key[0] = 0;
    for (int64_t k = 0; k < K; k++)
        kjt->lengths_offset_per_key[k + 1] = kjt->lengths_offset_per_key[k] + kjt->stride_per_key[k];
    if (kjt->variable_stride && kjt->lengths_offset_per_key[K] != n_lengths)
        return pk_host->fail(LOOM_EINVAL, "'stride_per_key_per_rank' sums to %lld samples but '%s' has %lld "
                             "entries for them", (long long)kjt->lengths_offset_per_key[K],
                             from_offsets ? "offsets" : "lengths", (long long)(n_lengths + from_offsets));
    return LOOM_OK;
}

static loom_status read_inverse(const rec_kjt_inputs *in, rec_kjt *kjt)
{
    const loom_tensor *ii = in->inverse_indices;
    char b[160];
    kjt->inverse_indices = NULL;
    if (!ii)
        return LOOM_OK;
    if (ii->ndim != 2 || ii->shape[0] != kjt->n_keys)
        return pk_host->fail(LOOM_EINVAL, "'inverse_indices' %s must be [keys = %lld, batch]",
                             pk_describe(pk_host, ii, b, sizeof b), (long long)kjt->n_keys);
    loom_status st = need_compact(ii, "inverse_indices");
    if (st != LOOM_OK)
        return st;
    const int64_t B = ii->shape[1];
    for (int64_t k = 0; k < kjt->n_keys; k++)
        for (int64_t j = 0; j < B; j++) {
            int64_t v = rec_get_index(ii, k * B + j);
            if (v < 0 || v >= kjt->stride_per_key[k])
                return pk_host->fail(LOOM_EINVAL, "feature '%s' (key %lld): 'inverse_indices'[%lld][%lld] = %lld is "
                                     "outside its %lld samples", key_name(kjt, k), (long long)k, (long long)k,
                                     (long long)j, (long long)v, (long long)kjt->stride_per_key[k]);
        }
    kjt->inverse_indices = ii;
    return LOOM_OK;
}

loom_status rec_kjt_read(loom_call *call, const rec_kjt_inputs *in, const char *keys, int64_t stride, rec_kjt *kjt)
{
    char b[160];
    memset(kjt, 0, sizeof *kjt);
    loom_status st = read_keys(call, keys, kjt);
    if (st != LOOM_OK)
        return st;
    const loom_tensor *v = in->values;
    if (v->ndim != 1)
        return pk_host->fail(LOOM_EINVAL, "'values' %s must be 1-D", pk_describe(pk_host, v, b, sizeof b));
    const char *names[] = { "values", "lengths", "offsets", "weights" };
    const loom_tensor *ts[] = { in->values, in->lengths, in->offsets, in->weights };
    for (int i = 0; i < 4; i++) {
        if ((st = need_compact(ts[i], names[i])) != LOOM_OK)
            return st;
        if (ts[i] && ts[i]->ndim != 1)
            return pk_host->fail(LOOM_EINVAL, "'%s' %s must be 1-D", names[i], pk_describe(pk_host, ts[i], b, sizeof b));
    }
    if (!in->lengths && !in->offsets)
        return pk_host->fail(LOOM_EINVAL, "a KJT needs 'lengths' or 'offsets'");
    const int64_t N = loom_numel(v);
    kjt->values = v;
    if (in->weights && loom_numel(in->weights) != N)
        return pk_host->fail(LOOM_EINVAL, "'weights' %s must have one weight per value (%lld)",
                             pk_describe(pk_host, in->weights, b, sizeof b), (long long)N);
    kjt->weights = in->weights;
    if (in->offsets && loom_numel(in->offsets) < 1)
        return pk_host->fail(LOOM_EINVAL, "'offsets' %s must have at least one entry (lengths + 1)",
                             pk_describe(pk_host, in->offsets, b, sizeof b));
    const int64_t L = in->lengths ? loom_numel(in->lengths) : loom_numel(in->offsets) - 1;
    if (in->lengths && in->offsets && loom_numel(in->offsets) != L + 1)
        return pk_host->fail(LOOM_EINVAL, "'offsets' %s must have lengths + 1 = %lld entries",
                             pk_describe(pk_host, in->offsets, b, sizeof b), (long long)(L + 1));
    kjt->n_lengths = L;
    kjt->lengths_dtype = loom_tensor_dtype_of(in->lengths ? in->lengths : in->offsets);
    if ((st = read_strides(call, in, stride, L, !in->lengths, kjt)) != LOOM_OK)
        return st;

    kjt->lengths = scratch_i64(call, L);
    kjt->offsets = scratch_i64(call, L + 1);
    kjt->length_per_key = scratch_i64(call, kjt->n_keys);
    kjt->offset_per_key = scratch_i64(call, kjt->n_keys + 1);
    if (!kjt->lengths || !kjt->offsets || !kjt->length_per_key || !kjt->offset_per_key)
        return LOOM_ENOMEM;
    kjt->offsets[0] = 0;
    if (in->offsets) {
        int64_t o0 = rec_get_index(in->offsets, 0);
        if (o0 != 0)
            return pk_host->fail(LOOM_EINVAL, "feature '%s' (key 0): 'offsets'[0] = %lld, not 0", key_name(kjt, 0),
                                 (long long)o0);
    }
    for (int64_t i = 0; i < L; i++) {
        int64_t len;
        if (in->offsets) {
            int64_t a = rec_get_index(in->offsets, i), c = rec_get_index(in->offsets, i + 1);
            if (c < a) {
                int64_t k = key_of_length(kjt, i);
                return pk_host->fail(LOOM_EINVAL, "feature '%s' (key %lld): 'offsets' are not monotonic: "
                                     "offsets[%lld] = %lld > offsets[%lld] = %lld (sample %lld)",
                                     key_name(kjt, k), (long long)k, (long long)i, (long long)a, (long long)(i + 1),
                                     (long long)c, (long long)(i - kjt->lengths_offset_per_key[k]));
            }
            len = c - a;
            if (in->lengths && rec_get_index(in->lengths, i) != len) {
                int64_t k = key_of_length(kjt, i);
                return pk_host->fail(LOOM_EINVAL, "feature '%s' (key %lld): 'lengths'[%lld] = %lld but 'offsets' "
                                     "give %lld", key_name(kjt, k), (long long)k, (long long)i,
                                     (long long)rec_get_index(in->lengths, i), (long long)len);
            }
        } else {
            len = rec_get_index(in->lengths, i);
            if (len < 0) {
                int64_t k = key_of_length(kjt, i);
                return pk_host->fail(LOOM_EINVAL, "feature '%s' (key %lld): 'lengths'[%lld] = %lld is negative "
                                     "(sample %lld)", key_name(kjt, k), (long long)k, (long long)i, (long long)len,
                                     (long long)(i - kjt->lengths_offset_per_key[k]));
            }
        }
        kjt->lengths[i] = len;
        /* no overflow: each length <= N once the running sum is checked below */
        if (len > N - kjt->offsets[i]) {
            int64_t k = key_of_length(kjt, i);
            return pk_host->fail(LOOM_EINVAL, "feature '%s' (key %lld): its lengths run past the %lld 'values' "
                                 "(sample %lld starts at %lld with length %lld)", key_name(kjt, k), (long long)k,
                                 (long long)N, (long long)(i - kjt->lengths_offset_per_key[k]),
                                 (long long)kjt->offsets[i], (long long)len);
        }
        kjt->offsets[i + 1] = kjt->offsets[i] + len;
    }
    if (kjt->offsets[L] != N)
        return pk_host->fail(LOOM_EINVAL, "the %s of the features sum to %lld, but 'values' has %lld entries "
                             "(feature '%s' is the last)", in->lengths ? "'lengths'" : "'offsets'",
                             (long long)kjt->offsets[L], (long long)N, key_name(kjt, kjt->n_keys - 1));
    kjt->offset_per_key[0] = 0;
    for (int64_t k = 0; k < kjt->n_keys; k++) {
        kjt->offset_per_key[k + 1] = kjt->offsets[kjt->lengths_offset_per_key[k + 1]];
        kjt->length_per_key[k] = kjt->offset_per_key[k + 1] - kjt->offset_per_key[k];
    }
    return read_inverse(in, kjt);
}

/* ------------------------------------------------------------ writing */

loom_status rec_write_index(loom_call *call, int32_t index, loom_dtype dtype, int32_t ndim, const int64_t *shape,
                            const int64_t *src)
{
    loom_tensor *o;
    loom_status st = pk_host->alloc_output(call, index, dtype, ndim, shape, &o);
    if (st != LOOM_OK)
        return st;
    int64_t n = loom_numel(o);
    if (n == 0)
        return LOOM_OK;
    if (dtype == LOOM_DTYPE_I32) {
        int32_t *d = loom_data(o);
        for (int64_t i = 0; i < n; i++)
            d[i] = (int32_t)src[i];
    } else {
        memcpy(loom_data(o), src, (size_t)n * sizeof(int64_t));
    }
    return LOOM_OK;
}

static loom_status write_bytes(loom_call *call, int32_t index, loom_dtype dtype, int32_t ndim, const int64_t *shape,
                               const void *src)
{
    loom_tensor *o;
    loom_status st = pk_host->alloc_output(call, index, dtype, ndim, shape, &o);
    if (st != LOOM_OK)
        return st;
    size_t n = (size_t)loom_numel(o) * pk_host->dtype_size(dtype);
    if (n > 0)
        memcpy(loom_data(o), src, n);
    return LOOM_OK;
}

loom_status rec_kjt_write(loom_call *call, int32_t first, const rec_kjt_result *r)
{
    const int64_t K = r->n_keys, L = r->n_lengths;
    loom_status st;
    /* keys: jagged strings */
    int64_t *ko = scratch_i64(call, K + 1);
    if (!ko)
        return LOOM_ENOMEM;
    ko[0] = 0;
    for (int64_t k = 0; k < K; k++)
        ko[k + 1] = ko[k] + (int64_t)strlen(r->keys[k]);
    char *kb = rec_scratch(call, (size_t)ko[K] + 1);
    if (!kb)
        return LOOM_ENOMEM;
    for (int64_t k = 0; k < K; k++)
        memcpy(kb + ko[k], r->keys[k], (size_t)(ko[k + 1] - ko[k]));
    int64_t shape[2] = { ko[K], 0 };
    if ((st = write_bytes(call, first + REC_KJT_OUT_KEYS, LOOM_DTYPE_U8, 1, shape, kb)) != LOOM_OK)
        return st;
    shape[0] = K + 1;
    if ((st = rec_write_index(call, first + REC_KJT_OUT_KEYS_OFFSETS, LOOM_DTYPE_I64, 1, shape, ko)) != LOOM_OK)
        return st;
    shape[0] = r->n_values;
    if ((st = write_bytes(call, first + REC_KJT_OUT_VALUES, r->values_dtype, 1, shape, r->values)) != LOOM_OK)
        return st;
    shape[0] = L;
    if ((st = rec_write_index(call, first + REC_KJT_OUT_LENGTHS, r->lengths_dtype, 1, shape, r->lengths)) != LOOM_OK)
        return st;
    int64_t *off = scratch_i64(call, L + 1);
    if (!off)
        return LOOM_ENOMEM;
    off[0] = 0;
    for (int64_t i = 0; i < L; i++)
        off[i + 1] = off[i] + r->lengths[i];
    shape[0] = L + 1;
    if ((st = rec_write_index(call, first + REC_KJT_OUT_OFFSETS, r->lengths_dtype, 1, shape, off)) != LOOM_OK)
        return st;
    shape[0] = r->weights ? r->n_values : 0;
    if ((st = write_bytes(call, first + REC_KJT_OUT_WEIGHTS, LOOM_DTYPE_F32, 1, shape, r->weights)) != LOOM_OK)
        return st;
    if (r->n_ranks > 0) {
        shape[0] = K;
        shape[1] = r->n_ranks;
        st = rec_write_index(call, first + REC_KJT_OUT_SPKPR, LOOM_DTYPE_I32, 2, shape, r->stride_per_key_per_rank);
    } else {
        shape[0] = 0;
        st = rec_write_index(call, first + REC_KJT_OUT_SPKPR, LOOM_DTYPE_I32, 1, shape, NULL);
    }
    if (st != LOOM_OK)
        return st;
    if (r->inverse_indices) {
        const loom_tensor *ii = r->inverse_indices;
        st = write_bytes(call, first + REC_KJT_OUT_INVERSE, loom_tensor_dtype_of(ii), ii->ndim, ii->shape,
                         loom_data(ii));
    } else if (r->inverse_i64) {
        shape[0] = K;
        shape[1] = r->inverse_b;
        st = rec_write_index(call, first + REC_KJT_OUT_INVERSE, LOOM_DTYPE_I64, 2, shape, r->inverse_i64);
    } else {
        shape[0] = 0;
        st = rec_write_index(call, first + REC_KJT_OUT_INVERSE, LOOM_DTYPE_I64, 1, shape, NULL);
    }
    if (st != LOOM_OK)
        return st;
    shape[0] = 1;
    if ((st = rec_write_index(call, first + REC_KJT_OUT_STRIDE, LOOM_DTYPE_I64, 1, shape, &r->stride)) != LOOM_OK)
        return st;
    shape[0] = K;
    if ((st = rec_write_index(call, first + REC_KJT_OUT_STRIDE_PER_KEY, LOOM_DTYPE_I64, 1, shape,
                              r->stride_per_key)) != LOOM_OK)
        return st;
    /* length_per_key / offset_per_key from the lengths, key by key */
    int64_t *lpk = scratch_i64(call, K), *opk = scratch_i64(call, K + 1);
    if (!lpk || !opk)
        return LOOM_ENOMEM;
    opk[0] = 0;
    int64_t pos = 0;
    for (int64_t k = 0; k < K; k++) {
        pos += r->stride_per_key[k];
        opk[k + 1] = off[pos];
        lpk[k] = opk[k + 1] - opk[k];
    }
    if ((st = rec_write_index(call, first + REC_KJT_OUT_LENGTH_PER_KEY, LOOM_DTYPE_I64, 1, shape, lpk)) != LOOM_OK)
        return st;
    shape[0] = K + 1;
    return rec_write_index(call, first + REC_KJT_OUT_OFFSET_PER_KEY, LOOM_DTYPE_I64, 1, shape, opk);
}
