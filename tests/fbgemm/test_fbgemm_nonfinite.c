/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_fbgemm_nonfinite.c - attribute values and extreme sizes through the
** ops of the fbgemm pack (the object class's attributes are in
** tbe/test_tbe_files.c).
**
** Attributes: every constrained int attribute (the LOOM_ATTR_POSITIVE /
** NONNEG flags, checked by the core, and the kernels' range checks) refuses
** 0 or negative values, and INT64_MAX / INT32_MAX where a size computed from
** it would overflow (dequantize_rows dim=INT64_MAX once overflowed before it
** was refused), with LOOM_EINVAL and a message naming the attribute. CI runs
** this suite under UBSan with halt_on_error=1, so an overflow on the way to
** the refusal fails the test.
**
** Sizes: inputs of 0 rows whose other dims are huge (a valid tensor: it has
** no elements) are refused where a row size or inner size would overflow;
** NaN and inf rows quantise without undefined behaviour.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tu_ops.h"
#include "op_cases.h"

/* the tables below leave trailing members of their entries to their zero default */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define T OC_T
#define TV OC_TV

#define BIG "9223372036854775807", "2147483647"
#define HUGE_DIM (INT64_C(1) << 40)

static const double off_013[3] = { 0, 1, 3 };

static const oc_attr_family families[] = {
    { "fbgemm.quantize_rows", { T(F32, 2, 2, 8) }, "weight_type=int8", "row_alignment", { "0", "-1", BIG } },
    { "fbgemm.quantize_rows", { T(F32, 2, 2, 8) }, "weight_type=fp8", "fp8_exponent_bits",
      { "0", "-1", BIG } },
    { "fbgemm.quantize_rows", { T(F32, 2, 2, 8) }, "weight_type=fp8", "fp8_exponent_bias",
      { "-1", BIG, "-9223372036854775808" } },
    { "fbgemm.dequantize_rows", { T(U8, 2, 2, 12) }, "weight_type=int8", "dim",
      { "0", "-1", "9223372036854775807", "-9223372036854775808", "4611686018427387904" } },
    /* dim = 2^31 - 1 is a valid dim, just not the rows' */
    { "fbgemm.dequantize_rows", { T(U8, 2, 2, 12) }, "weight_type=int8", "dim", { "2147483647" },
      "bytes per row" },
    { "fbgemm.dequantize_rows", { T(U8, 2, 2, 12) }, "weight_type=int4", "row_alignment", { "0", BIG } },
    { "fbgemm.jagged_to_padded_dense", { T(F32, 2, 3, 3), TV(I64, off_013, 1, 3) }, NULL, "max_lengths",
      { "-1", "-9223372036854775808" } },
    /* [2, 2^63 - 1, 3]: refused by the output's allocation, without overflow before it */
    { "fbgemm.jagged_to_padded_dense", { T(F32, 2, 3, 3), TV(I64, off_013, 1, 3) }, NULL, "max_lengths",
      { "9223372036854775807", "4611686018427387904" }, "overflow" },
    { "fbgemm.jagged_to_padded_dense_backward", { T(F32, 3, 2, 2, 3), TV(I64, off_013, 1, 3) }, NULL, "total_L",
      { "-1", "-9223372036854775808" } },
    { "fbgemm.jagged_to_padded_dense_backward", { T(F32, 3, 2, 2, 3), TV(I64, off_013, 1, 3) }, NULL, "total_L",
      { "9223372036854775807" }, "overflow" },
    { "fbgemm.dense_to_jagged", { T(F32, 3, 2, 2, 3), TV(I64, off_013, 1, 3) }, NULL, "total_L",
      { "-1" } },
    { "fbgemm.dense_to_jagged", { T(F32, 3, 2, 2, 3), TV(I64, off_013, 1, 3) }, NULL, "total_L",
      { "9223372036854775807" }, "overflow" },
    { "fbgemm.jagged_dense_bmm", { T(F32, 2, 3, 5), TV(I64, off_013, 1, 3), T(F32, 3, 2, 5, 6) }, NULL, "max_L",
      { "-1", "-9223372036854775808" } },
    { "fbgemm.jagged_jagged_bmm", { T(F32, 2, 3, 5), T(F32, 2, 3, 6), TV(I64, off_013, 1, 3) }, NULL, "max_L",
      { "-1" } },
    { "fbgemm.index_select_dim0", { T(F32, 2, 4, 3), TV(I64, off_013, 1, 3) }, NULL, "consecutive_range_start",
      { "-1" } },
    { "fbgemm.index_select_dim0", { T(F32, 2, 4, 3), TV(I64, off_013, 1, 3) }, NULL, "consecutive_range_length",
      { "-1" } },
};

/* rows of NaN, +-inf, huge and ordinary values */
static const double nan_rows[16] = { NAN, 1, 2, 3, INFINITY, -INFINITY, 0, 1, 1e38, -1e38, 3e38, 0,
                                     -1, NAN, INFINITY, 2 };

static const oc_case extra[] = {
    /* a bound only: a huge max length keeps every row */
    { "fbgemm.jagged_dense_bmm", "max_L = INT64_MAX", { T(F32, 2, 3, 5), TV(I64, off_013, 1, 3), T(F32, 3, 2, 5, 6) },
      "max_L=9223372036854775807", { T(F32, 2, 3, 6) }, .zeros = 1 },
    { "fbgemm.jagged_jagged_bmm", "max_L = INT64_MAX", { T(F32, 2, 3, 5), T(F32, 2, 3, 6), TV(I64, off_013, 1, 3) },
      "max_L=9223372036854775807", { T(F32, 3, 2, 5, 6) }, .zeros = 1 },
    { "fbgemm.index_select_dim0", "consecutive range INT64_MAX", { T(F32, 2, 4, 3), TV(I64, off_013, 1, 3) },
      "consecutive_range_start=9223372036854775807;consecutive_range_length=9223372036854775807",
      { T(F32, 2, 3, 3) }, .zeros = 1 },
    /* 0 rows of 2^40 elements: fbgemm holds D in an int32 */
    { "fbgemm.quantize_rows", "0 rows of 2^40", { T(F32, 2, 0, HUGE_DIM) }, "weight_type=int8",
      .expect = LOOM_EINVAL, .message = "above fbgemm's limit" },
    { "fbgemm.dequantize_rows", "0 rows of 2^62 bytes", { T(U8, 2, 0, INT64_C(1) << 62) }, "weight_type=int8",
      .expect = LOOM_EINVAL, .message = "larger than" },
    { "fbgemm.dequantize_rows", "0 rows of 2^61 f32", { T(F32, 2, 0, INT64_C(1) << 61) }, "weight_type=fp32",
      .expect = LOOM_EINVAL, .message = "larger than" },
    /* inner dims whose product overflows an int64 (the tensor has no elements) */
    { "fbgemm.jagged_to_padded_dense", "inner dims overflow",
      { T(F32, 3, 0, HUGE_DIM, HUGE_DIM), T(I64, 1, 1) }, "max_lengths=2", .expect = LOOM_EINVAL,
      .message = "overflows" },
    { "fbgemm.dense_to_jagged", "inner dims overflow", { T(F32, 4, 0, 2, HUGE_DIM, HUGE_DIM), T(I64, 1, 1) }, NULL,
      .expect = LOOM_EINVAL, .message = "overflows" },
    { "fbgemm.jagged_dense_elementwise_add", "inner dims overflow",
      { T(F32, 3, 0, HUGE_DIM, HUGE_DIM), T(I64, 1, 1), T(F32, 4, 0, 2, HUGE_DIM, HUGE_DIM) }, NULL,
      .expect = LOOM_EINVAL, .message = "overflows" },
    { "fbgemm.index_select_dim0", "inner dims overflow", { T(F32, 3, 0, HUGE_DIM, HUGE_DIM), T(I64, 1, 0) }, NULL,
      .expect = LOOM_EINVAL, .message = "overflows" },
    /* NaN and inf rows: the quantisers' float-to-int steps stay defined */
    { "fbgemm.quantize_rows", "NaN and inf rows, int8", { TV(F32, nan_rows, 2, 4, 4) }, "weight_type=int8",
      { T(U8, 2, 4, 8) } },
    { "fbgemm.quantize_rows", "NaN and inf rows, int8 fused", { TV(F32, nan_rows, 2, 4, 4) },
      "weight_type=int8;layout=fused", { T(U8, 2, 4, 12) } },
    { "fbgemm.quantize_rows", "NaN and inf rows, int4", { TV(F32, nan_rows, 2, 4, 4) }, "weight_type=int4",
      { T(U8, 2, 4, 6) } },
    { "fbgemm.quantize_rows", "NaN and inf rows, int2 fused", { TV(F32, nan_rows, 2, 4, 4) },
      "weight_type=int2;layout=fused", { T(U8, 2, 4, 5) } },
    { "fbgemm.quantize_rows", "NaN and inf rows, fp8", { TV(F32, nan_rows, 2, 4, 4) }, "weight_type=fp8",
      { T(U8, 2, 4, 4) } },
    { "fbgemm.quantize_rows", "NaN and inf rows, fp16", { TV(F32, nan_rows, 2, 4, 4) }, "weight_type=fp16",
      { T(F16, 2, 4, 4) } },
    { "fbgemm.quantize_rows", "NaN and inf rows, bf16", { TV(F32, nan_rows, 2, 4, 4) }, "weight_type=bf16",
      { T(BF16, 2, 4, 4) } },
};

int main(void)
{
    size_t n, n_extra = sizeof extra / sizeof extra[0];
    oc_case *all = oc_attr_cases(families, sizeof families / sizeof families[0], extra, n_extra, &n);
    int rc = oc_run_group("fbgemm_nonfinite", NULL, all, n, tu_setup, tu_teardown);
    oc_free_cases(all, n, n_extra);
    return rc;
}
