/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_tbe_bags.c - the whole-bag FP32 path of the cpu fbgemm.tbe forward
** (tbe_bags.c: accumulators in registers, AVX-512 or AVX2) gives the bits
** of the row-by-row formula, acc = fma(w, x, acc) in row order from +0 and
** MEAN's one multiply by 1/L, computed here in plain C. Exact equality,
** not a tolerance: tbe_bags.h promises the row functions' bits, so results
** never depend on the ISA. Tables of D = 8, 24, 128, 136 and 200 cover one
** partial vector (AVX-512's 8-lane mask), several column blocks and their
** tails; bags of 0 to 150 rows cover the 64-row chunks, with pruned (-1)
** ids, sum and mean, with and without per-sample weights, i32 and i64
** ids. meson runs it at the native ISA, capped at avx2 and capped at sse4
** (the portable row functions), so every path is held to the same bits.
** An f16 output (the path through the accumulator and the store) is within
** one f16 rounding of the f32 one.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tbe_test_util.h"

enum { NT = 5, ROWS = 64, B = 7 };
static const int64_t dims[NT] = { 8, 24, 128, 136, 200 };

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static uint64_t next_rand(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static float tables[NT][ROWS * 200];

static loom_object *make_object(const char *output_dtype)
{
    static char names[NT][16];
    static loom_tensor *tt[NT];
    static loom_named_tensor named[NT];
    for (int t = 0; t < NT; t++) {
        if (tt[t] == NULL) {
            /* values whose sums round: the order of the additions shows in the bits */
            for (int64_t i = 0; i < ROWS * dims[t]; i++)
                tables[t][i] = (float)((int64_t)(next_rand() % 2000001) - 1000000) * 1.37e-7f;
            const int64_t shape[2] = { ROWS, dims[t] };
            assert_int_equal(loom_tensor_wrap(&tt[t], tables[t], LOOM_DTYPE_F32, 2, shape, NULL, NULL), LOOM_OK);
            snprintf(names[t], sizeof names[t], "table.%d", t);
        }
        named[t] = (loom_named_tensor){ names[t], tt[t] };
    }
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    tt_set_str(a, "weights_tys", "fp32,fp32,fp32,fp32,fp32");
    const int64_t ftm[NT] = { 0, 1, 2, 3, 4 };
    tt_set_ints(a, "feature_table_map", ftm, NT);
    tt_set_str(a, "output_dtype", output_dtype);
    loom_object_options oo = LOOM_OBJECT_OPTIONS_INIT;
    oo.n_tensors = NT;
    oo.tensors = named;
    loom_object *o = NULL;
    if (loom_object_create_ex(&o, "fbgemm.tbe", a, &oo) != LOOM_OK)
        fail_msg("creating fbgemm.tbe over in-memory tables: %s", loom_last_error());
    loom_attrs_free(a);
    return o;
}

/* One batch: NT features x B bags; lengths 0..150 (bag 0 of each feature
** empty, bag 1 of 150 rows), every 9th id pruned. */
static void make_batch(loom_dtype idt, loom_tensor **ind, loom_tensor **off, loom_tensor **psw)
{
    int64_t lens[NT * B], n = 0, nb = NT * B + 1;
    for (int64_t k = 0; k < NT * B; k++)
        n += lens[k] = k % B == 0 ? 0 : k % B == 1 ? 150 : (int64_t)(next_rand() % 90);
    assert_int_equal(loom_tensor_new(ind, idt, 1, &n, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(off, idt, 1, &nb, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(psw, LOOM_DTYPE_F32, 1, &n, NULL), LOOM_OK);
    float *W = loom_data(*psw);
    int64_t pos = 0;
    for (int64_t k = 0; k <= NT * B; k++) {
        if (idt == LOOM_DTYPE_I64)
            ((int64_t *)loom_data(*off))[k] = pos;
        else
            ((int32_t *)loom_data(*off))[k] = (int32_t)pos;
        if (k == NT * B)
            break;
        for (int64_t l = 0; l < lens[k]; l++, pos++) {
            const uint64_t r = next_rand();
            const int64_t id = pos % 9 == 4 ? -1 : (int64_t)((r >> 11) % ROWS);
            if (idt == LOOM_DTYPE_I64)
                ((int64_t *)loom_data(*ind))[pos] = id;
            else
                ((int32_t *)loom_data(*ind))[pos] = (int32_t)id;
            W[pos] = (float)(r % 1000) * 1.9e-3f - 0.7f;
        }
    }
}

static int64_t get_id(const loom_tensor *t, int64_t i)
{
    return loom_tensor_dtype_of(t) == LOOM_DTYPE_I64 ? ((const int64_t *)loom_data(t))[i]
                                                     : ((const int32_t *)loom_data(t))[i];
}

/* The row-by-row formula, [B, sum D]. */
static void reference(const loom_tensor *ind, const loom_tensor *off, const float *w, int mean, float *out)
{
    int64_t total_d = 0;
    for (int t = 0; t < NT; t++)
        total_d += dims[t];
    int64_t col = 0;
    for (int t = 0; t < NT; t++) {
        for (int64_t b = 0; b < B; b++) {
            const int64_t k = t * B + b, s = get_id(off, k), e = get_id(off, k + 1);
            float *o = out + b * total_d + col;
            for (int64_t d = 0; d < dims[t]; d++)
                o[d] = 0.0f;
            for (int64_t i = s; i < e; i++) {
                const int64_t id = get_id(ind, i);
                if (id < 0)
                    continue;
                for (int64_t d = 0; d < dims[t]; d++)
                    o[d] = fmaf(w ? w[i] : 1.0f, tables[t][id * dims[t] + d], o[d]);
            }
            if (mean && e > s) {
                const float scale = 1.0f / (float)(e - s);
                for (int64_t d = 0; d < dims[t]; d++)
                    o[d] *= scale;
            }
        }
        col += dims[t];
    }
}

static void test_bits(void **state)
{
    (void)state;
    loom_object *o = make_object("fp32"), *h = make_object("fp16");
    static float want[B * 496];
    for (int c = 0; c < 8; c++) {
        const int mean = c & 1, weighted = (c >> 1) & 1;
        const loom_dtype idt = c & 4 ? LOOM_DTYPE_I32 : LOOM_DTYPE_I64;
        loom_tensor *ind, *off, *psw, *got = NULL, *got16 = NULL;
        make_batch(idt, &ind, &off, &psw);
        loom_attrs *a;
        assert_int_equal(loom_attrs_new(&a), LOOM_OK);
        tt_set_str(a, "pooling_mode", mean ? "mean" : "sum");
        if (tt_run("fbgemm.tbe", o, ind, off, weighted ? psw : NULL, NULL, a, &got) != LOOM_OK ||
            tt_run("fbgemm.tbe", h, ind, off, weighted ? psw : NULL, NULL, a, &got16) != LOOM_OK)
            fail_msg("case %d: %s", c, loom_last_error());
        reference(ind, off, weighted ? loom_data(psw) : NULL, mean, want);
        assert_int_equal(loom_numel(got), B * 496);
        const float *g = loom_data(got);
        for (int64_t i = 0; i < B * 496; i++)
            if (memcmp(&g[i], &want[i], sizeof g[i]) != 0)
                fail_msg("case %d (%s, %s, %s ids): element %lld is %a, the row-by-row formula gives %a", c,
                         mean ? "mean" : "sum", weighted ? "weighted" : "unweighted",
                         idt == LOOM_DTYPE_I64 ? "i64" : "i32", (long long)i, g[i], want[i]);
        /* f16 output: one f16 rounding (2^-11 relative) of the f32 result, plus its subnormal step */
        tt_assert_close(got16, got, 1.0 / 2048, 1e-7, "f16 output vs f32 output");
        loom_tensor_free(got);
        loom_tensor_free(got16);
        loom_tensor_free(ind);
        loom_tensor_free(off);
        loom_tensor_free(psw);
        loom_attrs_free(a);
    }
    loom_object_free(o);
    loom_object_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bits),
    };
    return cmocka_run_group_tests_name("fbgemm-tbe-bags", tests, tu_setup, tu_teardown);
}
