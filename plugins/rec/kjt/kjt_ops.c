/* SPDX-License-Identifier: BSD-3-Clause */
/*
** kjt_ops.c - the cpu kernels of the KeyedJaggedTensor ops (kjt.h). Each
** reads and checks its KJT (kjt_view.c), moves whole per-key segments of
** lengths, values and weights (memcpy: these ops are bandwidth-bound and
** their segments long), and writes the output block.
*/
#include <string.h>

#include "kjt.h"

#define ATTR_S(op, name) call->attrs[PK_ATTR(op, name)].u.s
#define ATTR_I(op, name) call->attrs[PK_ATTR(op, name)].u.i

static void *scratch(loom_call *call, int64_t n, size_t size)
{
    return rec_scratch(call, (size_t)(n > 0 ? n : 1) * size);
}

/* The result that is the KJT itself (the sync ops) */
static rec_kjt_result result_of(const rec_kjt *kjt)
{
    rec_kjt_result r = {
        .n_keys = kjt->n_keys, .keys = kjt->keys,
        .values_dtype = loom_tensor_dtype_of(kjt->values), .n_values = loom_numel(kjt->values),
        .values = loom_numel(kjt->values) ? loom_data(kjt->values) : NULL,
        .weights = kjt->weights && loom_numel(kjt->weights) ? loom_data(kjt->weights) : NULL,
        .lengths_dtype = kjt->lengths_dtype, .n_lengths = kjt->n_lengths, .lengths = kjt->lengths,
        .stride = kjt->stride, .n_ranks = kjt->variable_stride ? kjt->n_ranks : 0,
        .stride_per_key_per_rank = kjt->stride_per_key_per_rank, .stride_per_key = kjt->stride_per_key,
        .inverse_indices = kjt->inverse_indices,
    };
    if (kjt->weights && !r.weights)
        r.weights = (const float *)"";      /* weighted with no values: an empty weights output, not absent */
    return r;
}

/* ------------------------------------------------------------ sync */

static loom_status run_from_sync(loom_call *call, int from_offsets)
{
    rec_scratch_begin();
    rec_kjt_inputs in = {
        .values = call->inputs[REC_SYNC_IN_VALUES],
        .lengths = from_offsets ? NULL : call->inputs[REC_SYNC_IN_JAGGED],
        .offsets = from_offsets ? call->inputs[REC_SYNC_IN_JAGGED] : NULL,
        .weights = call->inputs[REC_SYNC_IN_WEIGHTS],
        .stride_per_key_per_rank = call->inputs[REC_SYNC_IN_SPKPR],
        .inverse_indices = call->inputs[REC_SYNC_IN_INVERSE],
    };
    rec_kjt kjt;
    loom_status st = rec_kjt_read(call, &in, ATTR_S(rec_kjt_sync, keys), ATTR_I(rec_kjt_sync, stride), &kjt);
    if (st != LOOM_OK)
        return st;
    rec_kjt_result r = result_of(&kjt);
    return rec_kjt_write(call, 0, &r);
}

static loom_status run_from_lengths_sync(loom_call *call) { return run_from_sync(call, 0); }
static loom_status run_from_offsets_sync(loom_call *call) { return run_from_sync(call, 1); }

/* ------------------------------------------------------------ permute */

static loom_status run_permute(loom_call *call)
{
    rec_scratch_begin();
    rec_kjt_inputs in = rec_kjt_inputs_of(call);
    rec_kjt kjt;
    loom_status st = rec_kjt_read(call, &in, ATTR_S(rec_kjt_permute, keys), ATTR_I(rec_kjt_permute, stride), &kjt);
    if (st != LOOM_OK)
        return st;
    const loom_attr_value *ia = &call->attrs[PK_ATTR(rec_kjt_permute, indices)];
    const int64_t P = ia->count, R = kjt.n_ranks;
    int64_t n_lengths = 0, n_values = 0;
    for (int64_t j = 0; j < P; j++) {
        int64_t k = ia->u.ints[j];
        if (k < 0 || k >= kjt.n_keys)
            return pk_host->fail(LOOM_EINVAL, "'indices'[%lld] = %lld is not a key: the KJT has %lld keys",
                                 (long long)j, (long long)k, (long long)kjt.n_keys);
        n_lengths += kjt.stride_per_key[k];
        n_values += kjt.length_per_key[k];
    }
    const size_t vsize = pk_host->dtype_size(loom_tensor_dtype_of(kjt.values));
    const char **keys = scratch(call, P, sizeof *keys);
    int64_t *lengths = scratch(call, n_lengths, sizeof(int64_t));
    int64_t *spk = scratch(call, P, sizeof(int64_t));
    int64_t *spkpr = scratch(call, P * (R > 0 ? R : 1), sizeof(int64_t));
    char *values = scratch(call, n_values, vsize);
    float *weights = kjt.weights ? scratch(call, n_values, sizeof(float)) : NULL;
    if (!keys || !lengths || !spk || !spkpr || !values || (kjt.weights && !weights))
        return LOOM_ENOMEM;
    const char *src_v = loom_numel(kjt.values) ? loom_data(kjt.values) : NULL;
    const float *src_w = kjt.weights && loom_numel(kjt.weights) ? loom_data(kjt.weights) : NULL;
    int64_t lpos = 0, vpos = 0;
    for (int64_t j = 0; j < P; j++) {
        int64_t k = ia->u.ints[j];
        keys[j] = kjt.keys[k];
        spk[j] = kjt.stride_per_key[k];
        for (int64_t r = 0; r < R; r++)
            spkpr[j * R + r] = kjt.stride_per_key_per_rank[k * R + r];
        if (spk[j] > 0)
            memcpy(lengths + lpos, kjt.lengths + kjt.lengths_offset_per_key[k], (size_t)spk[j] * sizeof(int64_t));
        int64_t n = kjt.length_per_key[k];
        if (n > 0) {
            memcpy(values + (size_t)vpos * vsize, src_v + (size_t)kjt.offset_per_key[k] * vsize, (size_t)n * vsize);
            if (weights)
                memcpy(weights + vpos, src_w + kjt.offset_per_key[k], (size_t)n * sizeof(float));
        }
        lpos += spk[j];
        vpos += n;
    }
    rec_kjt_result r = {
        .n_keys = P, .keys = keys, .values_dtype = loom_tensor_dtype_of(kjt.values), .n_values = n_values,
        .values = values, .weights = weights, .lengths_dtype = kjt.lengths_dtype, .n_lengths = n_lengths,
        .lengths = lengths, .stride = kjt.stride, .n_ranks = kjt.variable_stride ? R : 0,
        .stride_per_key_per_rank = spkpr, .stride_per_key = spk, .inverse_indices = NULL,
    };
    return rec_kjt_write(call, 0, &r);
}

/* ------------------------------------------------------------ split */

static loom_status run_split(loom_call *call)
{
    rec_scratch_begin();
    rec_kjt_inputs in = rec_kjt_inputs_of(call);
    rec_kjt kjt;
    loom_status st = rec_kjt_read(call, &in, ATTR_S(rec_kjt_split, keys), ATTR_I(rec_kjt_split, stride), &kjt);
    if (st != LOOM_OK)
        return st;
    const loom_attr_value *sa = &call->attrs[PK_ATTR(rec_kjt_split, segments)];
    const int64_t S = sa->count, K = kjt.n_keys, R = kjt.n_ranks;
    int64_t *key_splits = scratch(call, S + 1, sizeof(int64_t));
    int64_t *values_splits = scratch(call, S + 1, sizeof(int64_t));
    int64_t *lengths_splits = scratch(call, S + 1, sizeof(int64_t));
    int64_t *offsets_splits = scratch(call, S + 1, sizeof(int64_t));
    if (!key_splits || !values_splits || !lengths_splits || !offsets_splits)
        return LOOM_ENOMEM;
    key_splits[0] = values_splits[0] = lengths_splits[0] = offsets_splits[0] = 0;
    int whole = 0;
    for (int64_t s = 0; s < S; s++) {
        int64_t seg = sa->u.ints[s];     /* >= 0: LOOM_ATTR_NONNEG */
        if (seg > K - key_splits[s])
            /* the message names seg and what is left, never key_splits[s] + seg: seg may be near INT64_MAX */
            return pk_host->fail(LOOM_EINVAL, "'segments'[%lld] asks for %lld keys, but only %lld of the KJT's %lld "
                                 "keys are left", (long long)s, (long long)seg, (long long)(K - key_splits[s]),
                                 (long long)K);
        int64_t e = key_splits[s] + seg;
        key_splits[s + 1] = e;
        values_splits[s + 1] = kjt.offset_per_key[e];
        lengths_splits[s + 1] = kjt.lengths_offset_per_key[e];
        /* torchrec: a split of 0 keys has empty offsets; any other has lengths + 1 */
        offsets_splits[s + 1] = offsets_splits[s]
                                + (seg == 0 ? 0 : lengths_splits[s + 1] - lengths_splits[s] + 1);
        whole |= seg == K;
    }
    const int64_t Ku = key_splits[S], Nu = values_splits[S], Lu = lengths_splits[S], Ou = offsets_splits[S];
    int64_t *off = scratch(call, Ou, sizeof(int64_t));
    int64_t *ko = scratch(call, Ku + 1, sizeof(int64_t));
    if (!off || !ko)
        return LOOM_ENOMEM;
    for (int64_t s = 0; s < S; s++) {
        if (key_splits[s + 1] == key_splits[s])
            continue;
        int64_t *o = off + offsets_splits[s];
        int64_t base = kjt.offsets[lengths_splits[s]];
        for (int64_t i = 0; i <= lengths_splits[s + 1] - lengths_splits[s]; i++)
            o[i] = kjt.offsets[lengths_splits[s] + i] - base;
    }
    /* keys */
    ko[0] = 0;
    for (int64_t k = 0; k < Ku; k++)
        ko[k + 1] = ko[k] + (int64_t)strlen(kjt.keys[k]);
    loom_tensor *t;
    int64_t shape[2] = { ko[Ku], 0 };
    if ((st = pk_host->alloc_output(call, REC_SPLIT_OUT_KEYS, LOOM_DTYPE_U8, 1, shape, &t)) != LOOM_OK)
        return st;
    for (int64_t k = 0; k < Ku; k++)
        memcpy((char *)loom_data(t) + ko[k], kjt.keys[k], (size_t)(ko[k + 1] - ko[k]));
    shape[0] = Ku + 1;
    if ((st = rec_write_index(call, REC_SPLIT_OUT_KEYS_OFFSETS, LOOM_DTYPE_I64, 1, shape, ko)) != LOOM_OK)
        return st;
    shape[0] = S + 1;
    if ((st = rec_write_index(call, REC_SPLIT_OUT_KEY_SPLITS, LOOM_DTYPE_I64, 1, shape, key_splits)) != LOOM_OK ||
        (st = rec_write_index(call, REC_SPLIT_OUT_VALUES_OFFSETS, LOOM_DTYPE_I64, 1, shape, values_splits)) != LOOM_OK ||
        (st = rec_write_index(call, REC_SPLIT_OUT_LENGTHS_OFFSETS, LOOM_DTYPE_I64, 1, shape, lengths_splits)) != LOOM_OK ||
        (st = rec_write_index(call, REC_SPLIT_OUT_OFFSETS_OFFSETS, LOOM_DTYPE_I64, 1, shape, offsets_splits)) != LOOM_OK)
        return st;
    const loom_dtype vd = loom_tensor_dtype_of(kjt.values);
    shape[0] = Nu;
    if ((st = pk_host->alloc_output(call, REC_SPLIT_OUT_VALUES, vd, 1, shape, &t)) != LOOM_OK)
        return st;
    if (Nu > 0)
        memcpy(loom_data(t), loom_data(kjt.values), (size_t)Nu * pk_host->dtype_size(vd));
    shape[0] = kjt.weights ? Nu : 0;
    if ((st = pk_host->alloc_output(call, REC_SPLIT_OUT_WEIGHTS, LOOM_DTYPE_F32, 1, shape, &t)) != LOOM_OK)
        return st;
    if (kjt.weights && Nu > 0)
        memcpy(loom_data(t), loom_data(kjt.weights), (size_t)Nu * sizeof(float));
    shape[0] = Lu;
    if ((st = rec_write_index(call, REC_SPLIT_OUT_LENGTHS, kjt.lengths_dtype, 1, shape, kjt.lengths)) != LOOM_OK)
        return st;
    shape[0] = Ou;
    if ((st = rec_write_index(call, REC_SPLIT_OUT_OFFSETS, kjt.lengths_dtype, 1, shape, off)) != LOOM_OK)
        return st;
    if (kjt.variable_stride) {
        shape[0] = Ku;
        shape[1] = R;
        st = rec_write_index(call, REC_SPLIT_OUT_SPKPR, LOOM_DTYPE_I32, 2, shape, kjt.stride_per_key_per_rank);
    } else {
        shape[0] = 0;
        st = rec_write_index(call, REC_SPLIT_OUT_SPKPR, LOOM_DTYPE_I32, 1, shape, NULL);
    }
    if (st != LOOM_OK)
        return st;
    const loom_tensor *ii = whole ? kjt.inverse_indices : NULL;
    if (ii) {
        if ((st = pk_host->alloc_output(call, REC_SPLIT_OUT_INVERSE, loom_tensor_dtype_of(ii), 2, ii->shape, &t))
            != LOOM_OK)
            return st;
        if (loom_numel(ii) > 0)
            memcpy(loom_data(t), loom_data(ii), (size_t)loom_numel(ii) * pk_host->dtype_size(loom_tensor_dtype_of(ii)));
        return LOOM_OK;
    }
    shape[0] = 0;
    return rec_write_index(call, REC_SPLIT_OUT_INVERSE, LOOM_DTYPE_I64, 1, shape, NULL);
}

/* ------------------------------------------------------------ concat */

/* torchrec's _kjt_concat: every KJT VBE or none, weighted or not (one
** weights tensor: all or none), inverse indices all or none (one tensor),
** and without VBE one stride for all ("strides must be consistent"). */
static loom_status run_concat(loom_call *call)
{
    rec_scratch_begin();
    const loom_tensor *lo = call->inputs[REC_CONCAT_IN_LENGTHS_OFFSETS];
    const loom_tensor *lengths = call->inputs[REC_CONCAT_IN_LENGTHS];
    const loom_attr_value *ka = &call->attrs[PK_ATTR(rec_kjt_concat, key_segments)];
    const int64_t S = ka->count, L = loom_numel(lengths);
    char b[160];
    if (S == 0)
        return pk_host->fail(LOOM_EINVAL, "'key_segments' is empty: torchrec cannot concat an empty KJT list");
    if (loom_numel(lo) != S + 1)
        return pk_host->fail(LOOM_EINVAL, "'lengths_offsets' %s must have one entry per KJT + 1 = %lld",
                             pk_describe(pk_host, lo, b, sizeof b), (long long)(S + 1));
    if (!loom_is_contiguous(lo))
        return pk_host->fail(LOOM_EINVAL, "'lengths_offsets' %s must be contiguous", pk_describe(pk_host, lo, b, sizeof b));
    const int64_t *lop = loom_data(lo);
    if (lop[0] != 0 || lop[S] != L)
        return pk_host->fail(LOOM_EINVAL, "'lengths_offsets' must run from 0 to the %lld 'lengths' (they are %lld .. %lld)",
                             (long long)L, (long long)lop[0], (long long)lop[S]);
    const int vbe = call->inputs[REC_CONCAT_IN_SPKPR] != NULL;
    int64_t stride = -1;
    for (int64_t s = 0; s < S; s++) {
        int64_t n = lop[s + 1] - lop[s], ks = ka->u.ints[s];
        if (n < 0)
            return pk_host->fail(LOOM_EINVAL, "'lengths_offsets' are not monotonic at KJT %lld (%lld > %lld)",
                                 (long long)s, (long long)lop[s], (long long)lop[s + 1]);
        if (vbe)
            continue;
        int64_t st_s = ks > 0 ? n / ks : 0;
        if (ks * st_s != n)
            return pk_host->fail(LOOM_EINVAL, "KJT %lld has %lld lengths for %lld keys: not a whole stride",
                                 (long long)s, (long long)n, (long long)ks);
        if (stride >= 0 && st_s != stride)
            return pk_host->fail(LOOM_EINVAL, "strides must be consistent for all KJTs: KJT 0 has stride %lld, "
                                 "KJT %lld has %lld", (long long)stride, (long long)s, (long long)st_s);
        stride = st_s;
    }
    int64_t given = ATTR_I(rec_kjt_concat, stride);
    rec_kjt_inputs in = {
        .values = call->inputs[REC_CONCAT_IN_VALUES], .lengths = lengths,
        .weights = call->inputs[REC_CONCAT_IN_WEIGHTS],
        .stride_per_key_per_rank = call->inputs[REC_CONCAT_IN_SPKPR],
        .inverse_indices = call->inputs[REC_CONCAT_IN_INVERSE],
    };
    rec_kjt kjt;
    loom_status st = rec_kjt_read(call, &in, ATTR_S(rec_kjt_concat, keys), given >= 0 ? given : stride, &kjt);
    if (st != LOOM_OK)
        return st;
    int64_t k0 = 0;
    for (int64_t s = 0; s < S; s++) {
        int64_t ks = ka->u.ints[s];
        if (ks > kjt.n_keys - k0)
            return pk_host->fail(LOOM_EINVAL, "'key_segments' sum past the %lld 'keys'", (long long)kjt.n_keys);
        if (kjt.lengths_offset_per_key[k0] != lop[s])
            return pk_host->fail(LOOM_EINVAL, "KJT %lld: its lengths start at %lld in 'lengths_offsets' but its "
                                 "keys' strides put them at %lld (feature '%s')", (long long)s, (long long)lop[s],
                                 (long long)kjt.lengths_offset_per_key[k0], k0 < kjt.n_keys ? kjt.keys[k0] : "?");
        k0 += ks;
    }
    if (k0 != kjt.n_keys)
        return pk_host->fail(LOOM_EINVAL, "'key_segments' sum to %lld, but there are %lld 'keys'", (long long)k0,
                             (long long)kjt.n_keys);
    rec_kjt_result r = result_of(&kjt);
    return rec_kjt_write(call, 0, &r);
}

/* ------------------------------------------------------------ to_dict */

static loom_status run_to_dict(loom_call *call)
{
    rec_scratch_begin();
    rec_kjt_inputs in = rec_kjt_inputs_of(call);
    rec_kjt kjt;
    loom_status st = rec_kjt_read(call, &in, ATTR_S(rec_kjt_sync, keys), ATTR_I(rec_kjt_sync, stride), &kjt);
    if (st != LOOM_OK)
        return st;
    const int64_t K = kjt.n_keys, L = kjt.n_lengths, N = loom_numel(kjt.values);
    int64_t *off = scratch(call, L + K, sizeof(int64_t));
    int64_t *off_rows = scratch(call, K + 1, sizeof(int64_t));
    int64_t *ko = scratch(call, K + 1, sizeof(int64_t));
    if (!off || !off_rows || !ko)
        return LOOM_ENOMEM;
    off_rows[0] = 0;
    ko[0] = 0;
    for (int64_t k = 0; k < K; k++) {
        int64_t a = kjt.lengths_offset_per_key[k], n = kjt.stride_per_key[k];
        for (int64_t i = 0; i <= n; i++)
            off[off_rows[k] + i] = kjt.offsets[a + i] - kjt.offsets[a];
        off_rows[k + 1] = off_rows[k] + n + 1;
        ko[k + 1] = ko[k] + (int64_t)strlen(kjt.keys[k]);
    }
    loom_tensor *t;
    int64_t shape[1] = { ko[K] };
    if ((st = pk_host->alloc_output(call, REC_DICT_OUT_KEYS, LOOM_DTYPE_U8, 1, shape, &t)) != LOOM_OK)
        return st;
    for (int64_t k = 0; k < K; k++)
        memcpy((char *)loom_data(t) + ko[k], kjt.keys[k], (size_t)(ko[k + 1] - ko[k]));
    shape[0] = K + 1;
    if ((st = rec_write_index(call, REC_DICT_OUT_KEYS_OFFSETS, LOOM_DTYPE_I64, 1, shape, ko)) != LOOM_OK ||
        (st = rec_write_index(call, REC_DICT_OUT_VALUES_OFFSETS, LOOM_DTYPE_I64, 1, shape, kjt.offset_per_key))
            != LOOM_OK ||
        (st = rec_write_index(call, REC_DICT_OUT_LENGTHS_OFFSETS, LOOM_DTYPE_I64, 1, shape,
                              kjt.lengths_offset_per_key)) != LOOM_OK ||
        (st = rec_write_index(call, REC_DICT_OUT_OFFSETS_OFFSETS, LOOM_DTYPE_I64, 1, shape, off_rows)) != LOOM_OK)
        return st;
    const loom_dtype vd = loom_tensor_dtype_of(kjt.values);
    shape[0] = N;
    if ((st = pk_host->alloc_output(call, REC_DICT_OUT_VALUES, vd, 1, shape, &t)) != LOOM_OK)
        return st;
    if (N > 0)
        memcpy(loom_data(t), loom_data(kjt.values), (size_t)N * pk_host->dtype_size(vd));
    shape[0] = kjt.weights ? N : 0;
    if ((st = pk_host->alloc_output(call, REC_DICT_OUT_WEIGHTS, LOOM_DTYPE_F32, 1, shape, &t)) != LOOM_OK)
        return st;
    if (kjt.weights && N > 0)
        memcpy(loom_data(t), loom_data(kjt.weights), (size_t)N * sizeof(float));
    shape[0] = L;
    if ((st = rec_write_index(call, REC_DICT_OUT_LENGTHS, kjt.lengths_dtype, 1, shape, kjt.lengths)) != LOOM_OK)
        return st;
    shape[0] = L + K;
    return rec_write_index(call, REC_DICT_OUT_OFFSETS, kjt.lengths_dtype, 1, shape, off);
}

/* ------------------------------------------------------------ dedup */

/* Sample (key k, row i) equals sample (k, j): same ids, same weights (bits). */
static int same_sample(const rec_kjt *kjt, size_t vsize, const char *v, const float *w, int64_t i, int64_t j)
{
    int64_t a = kjt->offsets[i], c = kjt->offsets[j], n = kjt->lengths[i];
    if (n != kjt->lengths[j])
        return 0;
    if (n == 0)
        return 1;
    return memcmp(v + (size_t)a * vsize, v + (size_t)c * vsize, (size_t)n * vsize) == 0 &&
           (!w || memcmp(w + a, w + c, (size_t)n * sizeof(float)) == 0);
}

static uint64_t sample_hash(const rec_kjt *kjt, size_t vsize, const char *v, const float *w, int64_t i)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)kjt->lengths[i];      /* FNV-1a over the bytes */
    if (kjt->lengths[i] == 0)
        return h;   /* (no values at all: v may be NULL, and NULL + 0 is undefined) */
    const unsigned char *p = (const unsigned char *)v + (size_t)kjt->offsets[i] * vsize;
    for (size_t b = 0; b < (size_t)kjt->lengths[i] * vsize; b++)
        h = (h ^ p[b]) * 1099511628211ull;
    if (w) {
        p = (const unsigned char *)(w + kjt->offsets[i]);
        for (size_t b = 0; b < (size_t)kjt->lengths[i] * sizeof(float); b++)
            h = (h ^ p[b]) * 1099511628211ull;
    }
    return h;
}

static loom_status run_dedup(loom_call *call)
{
    rec_scratch_begin();
    rec_kjt_inputs in = rec_kjt_inputs_of(call);
    rec_kjt kjt;
    loom_status st = rec_kjt_read(call, &in, ATTR_S(rec_kjt_sync, keys), ATTR_I(rec_kjt_sync, stride), &kjt);
    if (st != LOOM_OK)
        return st;
    if (kjt.variable_stride)
        return pk_host->fail(LOOM_EINVAL, "the KJT is already VBE ('stride_per_key_per_rank' given): dedup takes "
                             "one stride for every key");
    const int64_t K = kjt.n_keys, B = kjt.stride, N = loom_numel(kjt.values);
    const size_t vsize = pk_host->dtype_size(loom_tensor_dtype_of(kjt.values));
    const char *v = N ? loom_data(kjt.values) : NULL;
    const float *w = kjt.weights && N ? loom_data(kjt.weights) : NULL;
    /* K x B = the lengths' count was checked, so B is a real size when
    ** K > 0; with no keys the stride attribute alone (any value) sets B */
    int64_t cap = 16;
    while (K > 0 && cap < 2 * B)
        cap *= 2;
    int64_t *table = scratch(call, cap, sizeof(int64_t));      /* global row of a unique sample, -1: free */
    int64_t *slot_of = scratch(call, cap, sizeof(int64_t));    /* its unique index within the key */
    int64_t *inverse = scratch(call, K * B, sizeof(int64_t));
    int64_t *keep = scratch(call, K * B, sizeof(int64_t));     /* kept global rows, key-major */
    int64_t *spk = scratch(call, K, sizeof(int64_t));
    if (!table || !slot_of || !inverse || !keep || !spk)
        return LOOM_ENOMEM;
    int64_t n_keep = 0, n_values = 0;
    for (int64_t k = 0; k < K; k++) {
        for (int64_t s = 0; s < cap; s++)
            table[s] = -1;
        int64_t u = 0;
        for (int64_t b = 0; b < B; b++) {
            int64_t row = k * B + b;
            int64_t s = (int64_t)(sample_hash(&kjt, vsize, v, w, row) & (uint64_t)(cap - 1));
            while (table[s] >= 0 && !same_sample(&kjt, vsize, v, w, table[s], row))
                s = (s + 1) & (cap - 1);
            if (table[s] < 0) {
                table[s] = row;
                slot_of[s] = u++;
                keep[n_keep++] = row;
                n_values += kjt.lengths[row];
            }
            inverse[k * B + b] = slot_of[s];
        }
        spk[k] = u;
    }
    int64_t *lengths = scratch(call, n_keep, sizeof(int64_t));
    char *values = scratch(call, n_values, vsize);
    float *weights = kjt.weights ? scratch(call, n_values, sizeof(float)) : NULL;
    if (!lengths || !values || (kjt.weights && !weights))
        return LOOM_ENOMEM;
    int64_t vpos = 0;
    for (int64_t i = 0; i < n_keep; i++) {
        int64_t row = keep[i], n = kjt.lengths[row];
        lengths[i] = n;
        if (n > 0) {
            memcpy(values + (size_t)vpos * vsize, v + (size_t)kjt.offsets[row] * vsize, (size_t)n * vsize);
            if (weights)
                memcpy(weights + vpos, w + kjt.offsets[row], (size_t)n * sizeof(float));
        }
        vpos += n;
    }
    rec_kjt_result r = {
        .n_keys = K, .keys = kjt.keys, .values_dtype = loom_tensor_dtype_of(kjt.values), .n_values = n_values,
        .values = values, .weights = weights, .lengths_dtype = kjt.lengths_dtype, .n_lengths = n_keep,
        .lengths = lengths, .stride = B, .n_ranks = 1, .stride_per_key_per_rank = spk, .stride_per_key = spk,
        .inverse_i64 = inverse, .inverse_b = B,
    };
    if (K == 0) {                         /* no keys: nothing to deduplicate, a plain empty KJT */
        r.n_ranks = 0;
        r.inverse_i64 = NULL;
    }
    return rec_kjt_write(call, 0, &r);
}

/* ------------------------------------------------------------ module */

#define REC_KJT_DTYPES (REC_ID_MASK | REC_WEIGHT_MASK)

static const loom_kernel_desc rec_kjt_cpu_kernels[] = {
    PK_KERNEL_CPU(rec_kjt_from_lengths_sync_schema, "cpu:kjt", REC_KJT_DTYPES, run_from_lengths_sync),
    PK_KERNEL_CPU(rec_kjt_from_offsets_sync_schema, "cpu:kjt", REC_KJT_DTYPES, run_from_offsets_sync),
    PK_KERNEL_CPU(rec_kjt_permute_schema, "cpu:kjt", REC_KJT_DTYPES, run_permute),
    PK_KERNEL_CPU(rec_kjt_split_schema, "cpu:kjt", REC_KJT_DTYPES, run_split),
    PK_KERNEL_CPU(rec_kjt_concat_schema, "cpu:kjt", REC_KJT_DTYPES, run_concat),
    PK_KERNEL_CPU(rec_kjt_to_dict_schema, "cpu:kjt", REC_KJT_DTYPES, run_to_dict),
    PK_KERNEL_CPU(rec_kjt_dedup_schema, "cpu:kjt", REC_KJT_DTYPES, run_dedup),
};

const pk_module rec_kjt_cpu = PK_MODULE("kjt", rec_kjt_ops, rec_kjt_cpu_kernels, NULL);
