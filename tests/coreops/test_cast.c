/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_cast.c - core.cast against torch's Tensor.to() for every pair of
** loom dtypes, bit for bit, on edge values (zeros, subnormals, limits,
** infinities, NaN, rounding ties; all 256 float8 patterns). Float -> integer
** pairs use only values whose truncation torch defines (no NaN, in range).
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tu_ops.h"

static const char *const names[] = { "f32", "f64", "f16", "bf16", "f8e4m3", "i8", "u8", "i16",
                                     "i32", "i64", "bool", "c64", "c128", "u16", "u32" };
#define N_NAMES (sizeof names / sizeof names[0])

static int is_int(const char *n) { return n[0] == 'i' || n[0] == 'u'; }

static loom_tensor *cast(const loom_tensor *in, const char *dtype, loom_status *st)
{
    loom_attrs *a;
    loom_tensor *out = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "dtype", dtype), LOOM_OK);
    *st = tu_call("core.cast", (const loom_tensor *[]){ in }, 1, a, NULL, &out);
    loom_attrs_free(a);
    return out;
}

/* every (src, dst) pair, bit-exact against the torch golden */
static void cast_matches_torch_for_every_pair(void **state)
{
    (void)state;
    int pairs = 0;
    for (size_t s = 0; s < N_NAMES; s++) {
        char name[64];
        snprintf(name, sizeof name, "coreops/cast_in_%s", names[s]);
        loom_tensor *all = tu_npy(name);
        snprintf(name, sizeof name, "coreops/cast_in_%s_intsafe", names[s]);
        loom_tensor *safe = tu_npy_exists(name) ? tu_npy(name) : NULL;
        for (size_t d = 0; d < N_NAMES; d++) {
            const loom_tensor *in = is_int(names[d]) && safe != NULL ? safe : all;
            loom_status st;
            snprintf(name, sizeof name, "coreops/cast_%s_to_%s", names[s], names[d]);
            loom_tensor *want = tu_npy(name);
            loom_tensor *got = cast(in, names[d], &st);
            if (st != LOOM_OK)
                fail_msg("%s: %s", name, loom_last_error());
            tu_assert_identical(got, want, name);
            loom_tensor_free(got);
            loom_tensor_free(want);
            pairs++;
        }
        loom_tensor_free(all);
        loom_tensor_free(safe);
    }
    assert_int_equal(pairs, (int)(N_NAMES * N_NAMES));
}

/* a transposed view is read through its strides */
static void cast_reads_strided_input(void **state)
{
    (void)state;
    float data[6] = { 1.5f, -2.5f, 3.25f, 65520.0f, -0.0f, 7.0f };
    int64_t shape[2] = { 3, 2 }, strides[2] = { 1, 3 };   /* view of a [2,3] matrix, transposed */
    loom_tensor *in, *out;
    loom_status st;
    assert_int_equal(loom_tensor_wrap(&in, data, LOOM_DTYPE_F32, 2, shape, strides, NULL), LOOM_OK);
    out = cast(in, "float16", &st);          /* torch spelling accepted */
    assert_int_equal(st, LOOM_OK);
    assert_int_equal(loom_tensor_dtype_of(out), LOOM_DTYPE_F16);
    const uint16_t *h = loom_data(out);
    /* row-major [3,2] of the transpose: 1.5 65520(inf) -2.5 -0 3.25 7 */
    const uint16_t want[6] = { 0x3E00, 0x7C00, 0xC100, 0x8000, 0x4280, 0x4700 };
    for (int i = 0; i < 6; i++)
        assert_int_equal(h[i], want[i]);
    loom_tensor_free(out);
    loom_tensor_free(in);
}

static void unknown_dtype_name_is_rejected(void **state)
{
    (void)state;
    float x = 1.0f;
    int64_t shape[1] = { 1 };
    loom_tensor *in, *out;
    loom_status st;
    assert_int_equal(loom_tensor_wrap(&in, &x, LOOM_DTYPE_F32, 1, shape, NULL, NULL), LOOM_OK);
    out = cast(in, "float12", &st);
    assert_int_equal(st, LOOM_EINVAL);
    assert_null(out);
    assert_non_null(strstr(loom_last_error(), "float12"));
    assert_non_null(strstr(loom_last_error(), "dtype"));
    loom_tensor_free(in);
}

/* The dtype names the core reads (host->dtype_from_name, ABI 1.6): loom's,
** NumPy's and torch's spellings, "torch." prefixed, case ignored; the same
** ones loom_dtype_from_name accepts. */
static void dtype_names_are_the_cores(void **state)
{
    static const struct { const char *name; loom_dtype dtype; } cases[] = {
        { "f16", LOOM_DTYPE_F16 }, { "float16", LOOM_DTYPE_F16 }, { "half", LOOM_DTYPE_F16 },
        { "torch.float16", LOOM_DTYPE_F16 }, { "Half", LOOM_DTYPE_F16 }, { "F64", LOOM_DTYPE_F64 },
        { "double", LOOM_DTYPE_F64 }, { "float", LOOM_DTYPE_F32 }, { "torch.long", LOOM_DTYPE_I64 },
        { "INT64", LOOM_DTYPE_I64 }, { "int", LOOM_DTYPE_I32 }, { "short", LOOM_DTYPE_I16 },
        { "uint8", LOOM_DTYPE_U8 }, { "torch.bool", LOOM_DTYPE_BOOL }, { "bfloat16", LOOM_DTYPE_BF16 },
        { "fp8", LOOM_DTYPE_F8E4M3 }, { "float8_e4m3fn", LOOM_DTYPE_F8E4M3 }, { "cfloat", LOOM_DTYPE_C64 },
        { "complex128", LOOM_DTYPE_C128 }, { "uint16", LOOM_DTYPE_U16 }, { "torch.uint32", LOOM_DTYPE_U32 },
    };
    float x = 1.0f;
    int64_t shape[1] = { 1 };
    loom_tensor *in, *out;
    loom_status st;
    (void)state;
    assert_int_equal(loom_tensor_wrap(&in, &x, LOOM_DTYPE_F32, 1, shape, NULL, NULL), LOOM_OK);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(loom_dtype_from_name(cases[i].name), cases[i].dtype);
        out = cast(in, cases[i].name, &st);
        if (st != LOOM_OK || loom_tensor_dtype_of(out) != cases[i].dtype)
            fail_msg("core.cast to '%s': %s", cases[i].name, st != LOOM_OK ? loom_last_error() : "another dtype");
        loom_tensor_free(out);
    }
    assert_int_equal(loom_dtype_from_name("torch."), LOOM_DTYPE_INVALID);
    assert_int_equal(loom_dtype_from_name("f32 "), LOOM_DTYPE_INVALID);
    assert_int_equal(loom_dtype_from_name(NULL), LOOM_DTYPE_INVALID);
    out = cast(in, "torch.float12", &st);
    assert_int_equal(st, LOOM_EINVAL);
    assert_null(out);
    loom_tensor_free(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cast_matches_torch_for_every_pair),
        cmocka_unit_test(cast_reads_strided_input),
        cmocka_unit_test(unknown_dtype_name_is_rejected),
        cmocka_unit_test(dtype_names_are_the_cores),
    };
    return cmocka_run_group_tests_name("coreops_cast", tests, tu_setup, tu_teardown);
}
