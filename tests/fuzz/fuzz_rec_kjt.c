/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fuzz_rec_kjt.c - feeds: the rec pack's KeyedJaggedTensor checks. The
** input is a script of parameters: the op (from_lengths_sync,
** from_offsets_sync, permute, split, to_dict, dedup, concat), the dtypes
** of values and lengths (i32 or i64), the keys (generated names, or raw
** bytes that may hold commas, empties and repeats), the stride attribute,
** and then the sizes and every element of values, lengths, offsets,
** weights, stride_per_key_per_rank and inverse_indices (each optional one
** present or not), and permute's indices / split's segments / concat's
** key_segments - all straight from the fuzzer, so lengths that do not sum to
** the values, negative or huge entries, offsets that go backwards, strides
** that disagree with the lengths and indices out of range all reach the
** checks.
** Asserts: no sanitizer report (every input tensor is an exact-size heap
** block); a refused call sets a message; an accepted one gives outputs
** whose every byte is read, with offsets that are non-decreasing from 0
** to the values' length (the KJT contract of docs/rec-kjt.md).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

#define MAX_KEYS 8
#define MAX_LEN 96
#define MAX_VALUES 384
#define MAX_OUT 16

static const char *const ops[] = { "rec.kjt_from_lengths_sync", "rec.kjt_from_offsets_sync", "rec.kjt_permute",
                                   "rec.kjt_split", "rec.kjt_to_dict", "rec.kjt_dedup", "rec.kjt_concat" };

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init("core,fbgemm,rec");
    FZ_CHECK(loom_op_find("rec.kjt_permute") != NULL, "the rec pack did not load");
    return 0;
}

/* A small signed number, mostly in [-2, 61], sometimes extreme. */
static int64_t take_int(fz_cursor *c)
{
    uint8_t b = fz_u8(c);
    if (b == 0xff)
        return (int64_t)(int32_t)fz_u32(c);      /* any 32-bit value */
    if (b == 0xfe)
        return INT64_MAX - (int64_t)fz_u8(c);    /* near the top of i64 */
    return (int64_t)(b % 64) - 2;
}

/* A 1-D (or 2-D with cols > 0) tensor of `dtype` with n elements from the input. */
static loom_tensor *take_tensor(fz_cursor *c, loom_dtype dtype, int64_t rows, int64_t cols)
{
    int64_t shape[2] = { rows, cols };
    loom_tensor *t = NULL;
    FZ_CHECK(loom_tensor_new(&t, dtype, cols > 0 ? 2 : 1, shape, NULL) == LOOM_OK, "tensor_new");
    const int64_t n = cols > 0 ? rows * cols : rows;
    for (int64_t i = 0; i < n; i++) {
        int64_t v = take_int(c);
        if (dtype == LOOM_DTYPE_I32)
            ((int32_t *)loom_data(t))[i] = (int32_t)v;
        else if (dtype == LOOM_DTYPE_I64)
            ((int64_t *)loom_data(t))[i] = v;
        else
            ((float *)loom_data(t))[i] = (float)v * 0.25f;
    }
    return t;
}

static int64_t take_count(fz_cursor *c, int64_t max)
{
    return (int64_t)(fz_u8(c) % (max + 1));
}

static void set_ints(loom_attrs *a, const char *name, fz_cursor *c)
{
    int64_t v[MAX_KEYS + 2];
    const int64_t n = take_count(c, MAX_KEYS + 1);
    for (int64_t i = 0; i < n; i++)
        v[i] = take_int(c);
    FZ_CHECK(loom_attrs_set_ints(a, name, v, n) == LOOM_OK, "set %s", name);
}

/* The offsets outputs (i32 or i64) of an accepted call: non-decreasing from 0. */
static void check_offsets(const loom_arg_def *def, const loom_tensor *t)
{
    /* the offsets of jagged outputs, and the KJT's own offsets; a jagged
    ** "offsets" output (split, to_dict) restarts from 0 in every row */
    const int whole = strcmp(def->name, "offsets") == 0 && !(def->flags & LOOM_ARG_JAGGED);
    if (!(def->flags & LOOM_ARG_OFFSETS) && !whole)
        return;
    if (loom_numel(t) == 0)
        return;
    const loom_dtype dt = loom_tensor_dtype_of(t);
    int64_t prev = 0;
    for (int64_t i = 0; i < loom_numel(t); i++) {
        int64_t v = dt == LOOM_DTYPE_I32 ? ((const int32_t *)loom_data(t))[i] : ((const int64_t *)loom_data(t))[i];
        FZ_CHECK(i > 0 || v == 0, "%s starts at %lld", def->name, (long long)v);
        FZ_CHECK(v >= prev, "%s decreases at %lld", def->name, (long long)i);
        prev = v;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_cursor c = { data, size };
    const int op = fz_u8(&c) % (int)(sizeof ops / sizeof ops[0]);
    const uint8_t types = fz_u8(&c), present = fz_u8(&c);
    const loom_dtype vdt = types & 1 ? LOOM_DTYPE_I64 : LOOM_DTYPE_I32;
    const loom_dtype ldt = types & 2 ? LOOM_DTYPE_I64 : LOOM_DTYPE_I32;

    loom_attrs *a = NULL;
    FZ_CHECK(loom_attrs_new(&a) == LOOM_OK, "attrs");
    const int64_t n_keys = take_count(&c, MAX_KEYS);
    if (types & 4) {                               /* raw key bytes: commas, empties, repeats */
        char *keys = fz_str(&c, 0xff, 64);
        FZ_CHECK(loom_attrs_set_string(a, "keys", keys) == LOOM_OK, "keys");
        free(keys);
    } else {
        char keys[MAX_KEYS * 8] = "";
        for (int64_t k = 0; k < n_keys; k++)
            snprintf(keys + strlen(keys), sizeof keys - strlen(keys), "%sf%lld", k ? "," : "", (long long)k);
        FZ_CHECK(loom_attrs_set_string(a, "keys", keys) == LOOM_OK, "keys");
    }
    if (types & 8)
        FZ_CHECK(loom_attrs_set_int(a, "stride", take_int(&c)) == LOOM_OK, "stride");
    if (op == 2)
        set_ints(a, "indices", &c);
    else if (op == 3)
        set_ints(a, "segments", &c);
    else if (op == 6)
        set_ints(a, "key_segments", &c);

    const int64_t n_len = take_count(&c, MAX_LEN), n_val = take_count(&c, 255) + (types & 16 ? 128 : 0);
    loom_tensor *values = take_tensor(&c, vdt, n_val > MAX_VALUES ? MAX_VALUES : n_val, 0);
    loom_tensor *lengths = take_tensor(&c, ldt, n_len, 0);
    loom_tensor *offsets = present & 1 ? take_tensor(&c, ldt, n_len + 1 - (present & 2 ? 1 : 0), 0) : NULL;
    loom_tensor *weights =
        present & 4 ? take_tensor(&c, LOOM_DTYPE_F32, loom_numel(values) + (present & 8 ? 1 : 0), 0) : NULL;
    loom_tensor *spkpr = NULL, *inverse = NULL, *segs = NULL;
    if (present & 16) {
        const int64_t ranks = 1 + take_count(&c, 3);
        spkpr = take_tensor(&c, ldt, n_keys, ranks);
    }
    if (present & 32) {
        const int64_t b = 1 + take_count(&c, 8);
        inverse = take_tensor(&c, vdt, n_keys, b);
    }

    const loom_tensor *in[6] = { 0 };
    int32_t n_in;
    switch (op) {
    case 0:   /* values, lengths, weights, spkpr, inverse */
    case 1:   /* values, offsets, ... */
        in[0] = values, in[1] = op == 0 ? lengths : (offsets != NULL ? offsets : lengths);
        in[2] = weights, in[3] = spkpr, in[4] = inverse;
        n_in = 5;
        break;
    case 6: { /* values, lengths, lengths_offsets (i64), weights, spkpr, inverse */
        const int64_t s = take_count(&c, 4);
        segs = take_tensor(&c, LOOM_DTYPE_I64, s + 1, 0);
        in[0] = values, in[1] = lengths, in[2] = segs, in[3] = weights, in[4] = spkpr, in[5] = inverse;
        n_in = 6;
        break;
    }
    default:  /* values, lengths, offsets, weights, spkpr, inverse */
        in[0] = values, in[1] = present & 64 ? NULL : lengths, in[2] = offsets, in[3] = weights;
        in[4] = spkpr, in[5] = inverse;
        n_in = 6;
        break;
    }

    const loom_op *o = loom_op_find(ops[op]);
    const loom_op_schema *s = loom_op_schema_of(o);
    FZ_CHECK(s != NULL && s->n_outputs <= MAX_OUT, "%s's schema", ops[op]);
    loom_tensor *out[MAX_OUT] = { 0 };
    loom_status st = loom_op_run(o, in, n_in, a, out, (int32_t)s->n_outputs, NULL);
    if (st != LOOM_OK) {
        FZ_CHECK(loom_last_error()[0] != '\0', "%s refused without a message", ops[op]);
        fz_debug("%s refused: %s", ops[op], loom_last_error());
    } else {
        for (uint32_t i = 0; i < s->n_outputs; i++) {
            FZ_CHECK(out[i] != NULL, "%s gave no output %u", ops[op], i);
            fz_touch_tensor(out[i]);
            check_offsets(&s->outputs[i], out[i]);
        }
    }
    for (int i = 0; i < MAX_OUT; i++)
        loom_tensor_free(out[i]);
    loom_tensor *mine[] = { values, lengths, offsets, weights, spkpr, inverse, segs };
    for (size_t i = 0; i < sizeof mine / sizeof mine[0]; i++)
        loom_tensor_free(mine[i]);
    loom_attrs_free(a);
    return 0;
}
