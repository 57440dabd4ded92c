/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_fbgemm_empty.c - every op of the fbgemm pack on inputs without
** elements: a batch of 0 (B = 0), empty bags, tables of zero rows, zero
** indices, zero-length jagged rows and values, max lengths of 0, empty
** matrices: fbgemm_gpu's output shapes, no error, no read of the (NULL)
** data of an empty tensor, no division by zero (mean of an empty bag is 0).
** The walk over the registry fails for any fbgemm op without a case here.
**
** Where fbgemm raises on such an input, loom refuses it with LOOM_EINVAL;
** each of those cases says what fbgemm does.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "tu_ops.h"
#include "op_cases.h"

/* the table below leaves trailing members of its cases to their zero default */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define T OC_T
#define TV OC_TV
#define NONE { 0 }

static const double off_013[3] = { 0, 1, 3 };
static const double off_012[3] = { 0, 1, 2 };
static const double off_011[3] = { 0, 1, 1 };

/* objects (oc_objects[k - 1] for .object = k) */
enum { PLAIN = 1, CACHED = 2, INT8 = 3, TRAIN = 4 };

static const oc_case cases[] = {
    /* ------------------------------------------------------------- tbe */
    { "fbgemm.tbe", "B = 0", { T(I64, 1, 0), TV(I64, off_013, 1, 1) }, NULL, { T(F32, 2, 0, 8) }, .object = PLAIN },
    { "fbgemm.tbe", "empty bags", { T(I64, 1, 0), T(I64, 1, 5) }, NULL, { T(F32, 2, 2, 8) }, .zeros = 1,
      .object = PLAIN },
    /* fbgemm: an empty bag pools to 0, also with mean (no 0 / 0) */
    { "fbgemm.tbe", "empty bags, mean", { T(I32, 1, 0), T(I32, 1, 7), T(F32, 1, 0) }, "pooling_mode=mean",
      { T(F32, 2, 3, 8) }, .zeros = 1, .object = PLAIN },
    { "fbgemm.tbe", "no indices, pooling none", { T(I64, 1, 0), T(I64, 1, 3) }, "pooling_mode=none",
      { T(F32, 2, 0, 4) }, .object = PLAIN },
    { "fbgemm.tbe", "VBE, batch sizes 0", { T(I64, 1, 0), T(I64, 1, 1), NONE, T(I64, 2, 2, 1) }, NULL,
      { T(F32, 1, 0) }, .object = PLAIN },
    { "fbgemm.tbe", "B = 0, fp16 output", { T(I64, 1, 0), T(I64, 1, 1) }, "output_dtype=fp16",
      { T(F16, 2, 0, 8) }, .object = PLAIN },
    { "fbgemm.tbe", "cached, B = 0", { T(I64, 1, 0), T(I64, 1, 1) }, NULL, { T(F32, 2, 0, 8) }, .object = CACHED },
    { "fbgemm.tbe", "cached, empty bags", { T(I64, 1, 0), T(I64, 1, 9) }, "pooling_mode=mean",
      { T(F32, 2, 4, 8) }, .zeros = 1, .object = CACHED },
    { "fbgemm.tbe", "int8 table of 0 rows, empty bag", { T(I32, 1, 0), T(I32, 1, 2) }, NULL, { T(F32, 2, 1, 4) },
      .zeros = 1, .object = INT8 },
    /* fbgemm's bounds check: an index into a table of 0 rows is out of range */
    { "fbgemm.tbe", "index into a table of 0 rows", { T(I64, 1, 1), TV(I64, off_011, 1, 3) },
      "bounds_check_mode=fatal", .expect = LOOM_EINVAL, .message = "outside [0, 0)", .object = PLAIN },
    { "fbgemm.tbe_prefetch", "B = 0", { T(I64, 1, 0), T(I64, 1, 1) }, NULL, .object = CACHED },
    { "fbgemm.tbe_prefetch", "empty bags, no cache", { T(I64, 1, 0), T(I64, 1, 3) }, NULL, .object = PLAIN },
    { "fbgemm.tbe_cache_stats", "an object that saw only empty batches", { NONE }, NULL, { T(I64, 1, 8) },
      .object = PLAIN, .zeros = 1 },
    /* training: a step over no indices updates nothing (and counts) */
    { "fbgemm.tbe_backward", "B = 0", { T(F32, 2, 0, 8), T(I64, 1, 0), T(I64, 1, 1) }, NULL, .object = TRAIN },
    { "fbgemm.tbe_backward", "empty bags, mean", { T(F32, 2, 2, 8), T(I32, 1, 0), T(I32, 1, 5), T(F32, 1, 0) },
      "pooling_mode=mean", .object = TRAIN },
    { "fbgemm.tbe_state", "table of 0 rows", { NONE }, "name=weight;table=0", { T(F32, 2, 0, 4) },
      .object = TRAIN },
    { "fbgemm.tbe_state", "row-wise state of 0 rows", { NONE }, "name=momentum1;table=0", { T(F32, 1, 0) },
      .object = TRAIN },
    { "fbgemm.tbe_save", "an inference object", { NONE }, "path=unused.safetensors", .expect = LOOM_EINVAL,
      .message = "optimizer none", .object = PLAIN },

    /* ------------------------------------------------------ quantisers */
    { "fbgemm.quantize_rows", "no rows, int8", { T(F32, 2, 0, 8) }, "weight_type=int8", { T(U8, 2, 0, 12) } },
    { "fbgemm.quantize_rows", "no rows, int4 fused", { T(F32, 2, 0, 6) }, "weight_type=int4;layout=fused",
      { T(U8, 2, 0, 7) } },
    { "fbgemm.quantize_rows", "no rows, fp16", { T(F32, 2, 0, 8) }, "weight_type=fp16", { T(F16, 2, 0, 8) } },
    { "fbgemm.quantize_rows", "no rows, fp8 aligned", { T(F32, 2, 0, 5) }, "weight_type=fp8;row_alignment=16",
      { T(U8, 2, 0, 16) } },
    /* fbgemm's TBE rows need D > 0 (a row of no elements has no scale either) */
    { "fbgemm.quantize_rows", "rows of 0 elements", { T(F32, 2, 3, 0) }, "weight_type=int8",
      .expect = LOOM_EINVAL, .message = "D > 0" },
    { "fbgemm.dequantize_rows", "no rows, int8", { T(U8, 2, 0, 12) }, "weight_type=int8", { T(F32, 2, 0, 8) } },
    { "fbgemm.dequantize_rows", "no rows, bf16", { T(BF16, 2, 0, 8) }, "weight_type=bf16", { T(F32, 2, 0, 8) } },
    { "fbgemm.dequantize_rows", "no rows, int2, dim", { T(U8, 2, 0, 6) }, "weight_type=int2;dim=8",
      { T(F32, 2, 0, 8) } },
    { "fbgemm.dequantize_rows", "rows of 0 bytes", { T(U8, 2, 2, 0) }, "weight_type=int8",
      .expect = LOOM_EINVAL, .message = "bytes per row" },

    /* ---------------------------------------------------------- jagged */
    { "fbgemm.jagged_to_padded_dense", "B = 0", { T(F32, 2, 0, 3), T(I64, 1, 1) }, "max_lengths=4",
      { T(F32, 3, 0, 4, 3) } },
    { "fbgemm.jagged_to_padded_dense", "empty rows", { T(F64, 2, 0, 3), T(I32, 1, 3) }, "max_lengths=4",
      { T(F64, 3, 2, 4, 3) }, .zeros = 1 },
    { "fbgemm.jagged_to_padded_dense", "max length 0", { T(BF16, 2, 2, 3), TV(I64, off_012, 1, 3) },
      "max_lengths=0;padding_value=-1", { T(BF16, 3, 2, 0, 3) } },
    { "fbgemm.jagged_to_padded_dense", "empty inner dim", { T(F32, 2, 3, 0), TV(I64, off_013, 1, 3) },
      "max_lengths=2", { T(F32, 3, 2, 2, 0) } },
    { "fbgemm.jagged_to_padded_dense", "2 levels, outer max length 0",
      { T(F32, 2, 0, 2), T(I64, 1, 3), T(I64, 1, 1) }, "max_lengths=0,3", { T(F32, 4, 2, 0, 3, 2) } },
    { "fbgemm.jagged_to_padded_dense", "2 levels, inner max length 0",
      { T(I32, 2, 0, 2), TV(I64, off_012, 1, 3), T(I64, 1, 3) }, "max_lengths=3,0", { T(I32, 4, 2, 3, 0, 2) } },
    /* no elements, so a huge max length is not an overflow */
    { "fbgemm.jagged_to_padded_dense", "empty inner dim, max length 2^62", { T(F32, 2, 3, 0), TV(I64, off_013, 1, 3) },
      "max_lengths=4611686018427387904", { T(F32, 3, 2, INT64_C(1) << 62, 0) } },
    { "fbgemm.jagged_to_padded_dense", "1-D values, B = 0", { T(F16, 1, 0), T(I64, 1, 1) }, "max_lengths=5",
      { T(F16, 2, 0, 5) } },
    { "fbgemm.jagged_to_padded_dense_backward", "B = 0", { T(F32, 3, 0, 4, 3), T(I64, 1, 1) }, "total_L=0",
      { T(F32, 2, 0, 3) } },
    { "fbgemm.jagged_to_padded_dense_backward", "empty rows, total_L 2", { T(F32, 3, 2, 4, 3), T(I32, 1, 3) },
      "total_L=2", { T(F32, 2, 2, 3) }, .zeros = 1 },
    { "fbgemm.jagged_to_padded_dense_backward", "max length 0", { T(F64, 3, 2, 0, 3), TV(I64, off_012, 1, 3) },
      "total_L=2", { T(F64, 2, 2, 3) }, .zeros = 1 },
    { "fbgemm.dense_to_jagged", "B = 0", { T(F32, 3, 0, 4, 3), T(I64, 1, 1) }, NULL, { T(F32, 2, 0, 3) } },
    { "fbgemm.dense_to_jagged", "empty rows", { T(F32, 3, 2, 4, 3), T(I64, 1, 3) }, NULL, { T(F32, 2, 0, 3) } },
    { "fbgemm.dense_to_jagged", "max length 0, total_L", { T(I64, 3, 2, 0, 3), TV(I64, off_013, 1, 3) },
      "total_L=3", { T(I64, 2, 3, 3) }, .zeros = 1 },
    { "fbgemm.jagged_dense_elementwise_add", "B = 0", { T(F32, 2, 0, 3), T(I64, 1, 1), T(F32, 3, 0, 4, 3) }, NULL,
      { T(F32, 3, 0, 4, 3) } },
    { "fbgemm.jagged_dense_elementwise_add", "empty rows", { T(F32, 2, 0, 3), T(I32, 1, 3), T(F32, 3, 2, 4, 3) },
      NULL, { T(F32, 3, 2, 4, 3) }, .zeros = 1 },
    { "fbgemm.jagged_dense_elementwise_add_jagged_output", "empty rows",
      { T(F32, 2, 0, 3), T(I64, 1, 3), T(F32, 3, 2, 4, 3) }, NULL, { T(F32, 2, 0, 3) } },
    { "fbgemm.jagged_dense_elementwise_add_jagged_output", "max length 0",
      { T(F64, 2, 3, 3), TV(I64, off_013, 1, 3), T(F64, 3, 2, 0, 3) }, NULL, { T(F64, 2, 3, 3) }, .zeros = 1 },
    { "fbgemm.jagged_dense_elementwise_mul", "B = 0", { T(BF16, 2, 0, 3), T(I64, 1, 1), T(BF16, 3, 0, 4, 3) },
      NULL, { T(BF16, 2, 0, 3) } },
    { "fbgemm.jagged_dense_elementwise_mul", "max length 0",
      { T(F32, 2, 3, 2), TV(I64, off_013, 1, 3), T(F32, 3, 2, 0, 2) }, NULL, { T(F32, 2, 3, 2) }, .zeros = 1 },
    { "fbgemm.jagged_dense_elementwise_mul_backward", "empty rows",
      { T(F32, 2, 0, 3), T(I64, 1, 3), T(F32, 3, 2, 4, 3), T(F32, 2, 0, 3) }, NULL,
      { T(F32, 2, 0, 3), T(F32, 3, 2, 4, 3) }, .zeros = OC_ALL },
    { "fbgemm.jagged_dense_elementwise_mul_backward", "B = 0",
      { T(F16, 2, 0, 3), T(I32, 1, 1), T(F16, 3, 0, 4, 3), T(F16, 2, 0, 3) }, NULL,
      { T(F16, 2, 0, 3), T(F16, 3, 0, 4, 3) } },
    { "fbgemm.jagged_dense_bmm", "empty rows", { T(F32, 2, 0, 5), T(I64, 1, 3), T(F32, 3, 2, 5, 6) }, "max_L=4",
      { T(F32, 2, 0, 6) } },
    { "fbgemm.jagged_dense_bmm", "B = 0", { T(F32, 2, 0, 5), T(I64, 1, 1), T(F32, 3, 0, 5, 6) }, "max_L=4",
      { T(F32, 2, 0, 6) } },
    { "fbgemm.jagged_dense_bmm", "K = 0", { T(F64, 2, 3, 0), TV(I64, off_013, 1, 3), T(F64, 3, 2, 0, 6) },
      "max_L=4", { T(F64, 2, 3, 6) }, .zeros = 1 },
    { "fbgemm.jagged_dense_bmm", "N = 0", { T(F32, 2, 3, 5), TV(I64, off_013, 1, 3), T(F32, 3, 2, 5, 0) },
      "max_L=4", { T(F32, 2, 3, 0) } },
    { "fbgemm.jagged_dense_bmm", "max_L = 0", { T(F32, 2, 3, 5), TV(I64, off_013, 1, 3), T(F32, 3, 2, 5, 6) },
      "max_L=0", { T(F32, 2, 3, 6) }, .zeros = 1 },
    { "fbgemm.jagged_jagged_bmm", "empty rows", { T(F32, 2, 0, 5), T(F32, 2, 0, 6), T(I64, 1, 3) }, "max_L=4",
      { T(F32, 3, 2, 5, 6) }, .zeros = 1 },
    { "fbgemm.jagged_jagged_bmm", "B = 0", { T(F64, 2, 0, 5), T(F64, 2, 0, 6), T(I32, 1, 1) }, "max_L=4",
      { T(F64, 3, 0, 5, 6) } },
    { "fbgemm.jagged_jagged_bmm", "M = 0", { T(F32, 2, 3, 0), T(F32, 2, 3, 6), TV(I64, off_013, 1, 3) },
      "max_L=4", { T(F32, 3, 2, 0, 6) } },
    { "fbgemm.jagged_jagged_bmm", "max_L = 0", { T(F32, 2, 3, 2), T(F32, 2, 3, 6), TV(I64, off_013, 1, 3) },
      "max_L=0", { T(F32, 3, 2, 2, 6) }, .zeros = 1 },
    { "fbgemm.permute102_baddbmm_permute102", "m = 0", { T(F32, 2, 3, 4), T(F32, 3, 0, 3, 5), T(F32, 3, 3, 5, 4) },
      NULL, { T(F32, 3, 0, 3, 4) } },
    { "fbgemm.permute102_baddbmm_permute102", "b = 0", { T(F32, 2, 0, 4), T(F32, 3, 2, 0, 5), T(F32, 3, 0, 5, 4) },
      NULL, { T(F32, 3, 2, 0, 4) } },
    { "fbgemm.permute102_baddbmm_permute102", "k = 0", { T(F64, 2, 3, 4), T(F64, 3, 2, 3, 0), T(F64, 3, 3, 0, 4) },
      NULL, { T(F64, 3, 2, 3, 4) }, .zeros = 1 },
    { "fbgemm.permute102_baddbmm_permute102", "n = 0", { T(BF16, 2, 3, 0), T(BF16, 3, 2, 3, 5),
      T(BF16, 3, 3, 5, 0) }, NULL, { T(BF16, 3, 2, 3, 0) } },
    { "fbgemm.jagged_jagged_bmm", "M = 2^62, N = 0", { T(F32, 2, 0, INT64_C(1) << 62), T(F32, 2, 0, 0),
      T(I64, 1, 3) }, "max_L=4", { T(F32, 3, 2, INT64_C(1) << 62, 0) } },
    { "fbgemm.index_select_dim0", "no rows, no indices", { T(F32, 2, 0, 3), T(I64, 1, 0) }, NULL,
      { T(F32, 2, 0, 3) } },
    { "fbgemm.index_select_dim0", "no indices", { T(F64, 2, 5, 3), T(I32, 1, 0) }, NULL, { T(F64, 2, 0, 3) } },
    { "fbgemm.index_select_dim0", "empty rows", { T(I32, 2, 5, 0), TV(I64, off_013, 1, 3) }, NULL,
      { T(I32, 2, 3, 0) } },
    /* torch.index_select: an index into no rows is out of range */
    { "fbgemm.index_select_dim0", "index into no rows", { T(F32, 2, 0, 3), T(I64, 1, 1) }, NULL,
      .expect = LOOM_EINVAL, .message = "outside [0, 0)" },
};

/* ------------------------------------------------------------- objects */

static char dir[256], tables_path[300], int8_path[300];

static loom_object *create(const char *path, const char *attrs_text)
{
    loom_attrs *a;
    loom_object *o;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    if (attrs_text != NULL) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", attrs_text);
        char *eq = strchr(buf, '=');
        *eq = '\0';
        if (loom_attrs_parse(a, "fbgemm.tbe", buf, eq + 1) != LOOM_OK)
            fail_msg("attr %s: %s", attrs_text, loom_last_error());
    }
    if (loom_object_create(&o, "fbgemm.tbe", a, path) != LOOM_OK)
        fail_msg("fbgemm.tbe over %s: %s", path, loom_last_error());
    loom_attrs_free(a);
    return o;
}

static void write_file(const char *path, const char *const *names, const oc_tensor *specs, int64_t n)
{
    loom_tensor *ts[4];
    for (int64_t i = 0; i < n; i++)
        ts[i] = oc_make(&specs[i]);
    if (loom_safetensors_write(path, names, (const loom_tensor *const *)ts, n) != LOOM_OK)
        fail_msg("writing %s: %s", path, loom_last_error());
    for (int64_t i = 0; i < n; i++)
        loom_tensor_free(ts[i]);
}

static int setup(void **state)
{
    if (tu_setup(state) != 0)
        return -1;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/loom-fbgemm-empty-XXXXXX", tmp != NULL && *tmp ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL)
        return -1;
    snprintf(tables_path, sizeof tables_path, "%s/tables.safetensors", dir);
    snprintf(int8_path, sizeof int8_path, "%s/int8.safetensors", dir);
    /* a table of 0 rows and one of 3, both D = 4: total_D 8 over two features */
    const oc_tensor t2[2] = { T(F32, 2, 0, 4), T(F32, 2, 3, 4) };
    write_file(tables_path, (const char *[]){ "table.0", "table.1" }, t2, 2);
    const oc_tensor t1[1] = { T(U8, 2, 0, 8) };
    write_file(int8_path, (const char *[]){ "table.0" }, t1, 1);
    oc_objects[PLAIN - 1] = create(tables_path, NULL);
    oc_objects[CACHED - 1] = create(tables_path, "cache_load_factor=0.5");
    oc_objects[INT8 - 1] = create(int8_path, "weights_tys=int8");
    oc_objects[TRAIN - 1] = create(tables_path, "optimizer=exact_rowwise_adagrad");
    return 0;
}

static int teardown(void **state)
{
    for (size_t i = 0; i < sizeof oc_objects / sizeof oc_objects[0]; i++) {
        loom_object_free(oc_objects[i]);
        oc_objects[i] = NULL;
    }
    unlink(tables_path);
    unlink(int8_path);
    rmdir(dir);
    return tu_teardown(state);
}

int main(void)
{
    return oc_run_group("fbgemm_empty", "fbgemm.", cases, sizeof cases / sizeof cases[0], setup, teardown);
}
