/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tbe_test_util.h - helpers of the fbgemm tbe tests: objects over golden
** table files, calls of the fbgemm.tbe methods, comparisons of f32 / f16 /
** bf16 outputs. Goldens are tests/data/fbgemm/tbe (tools/gen_fbgemm_tbe_goldens.py).
*/
#ifndef TBE_TEST_UTIL_H
#define TBE_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdarg.h>
#include <cmocka.h>

#include "tu_ops.h"

/* Path of a file in the tbe golden folder, tests/data/fbgemm/tbe, into buf. */
void tt_data_path(char *buf, size_t size, const char *name);
/* tbe/<name>.npy */
loom_tensor *tt_npy(const char *name);
int tt_npy_exists(const char *name);

/* A fbgemm.tbe object over a safetensors file (absolute path) with the
** attributes in `a` (may be NULL); NULL with the error set on failure. */
loom_object *tt_create(const char *path, const loom_attrs *a);
/* Golden tables file tables_<set>.safetensors. */
loom_object *tt_create_golden(const char *set, const loom_attrs *a);

/* One call of method `op` ("fbgemm.tbe", "fbgemm.tbe_prefetch") on obj;
** psw and bsz may be NULL; out NULL for ops without output. */
loom_status tt_run(const char *op, loom_object *obj, const loom_tensor *ind, const loom_tensor *off,
                 const loom_tensor *psw, const loom_tensor *bsz, const loom_attrs *a, loom_tensor **out);

/* Element i of an f32 / f16 / bf16 tensor as double. */
double tt_get(const loom_tensor *t, int64_t i);
/* Same shape; |got - want| <= atol + rtol |want| element-wise; prints the worst. */
void tt_assert_close(const loom_tensor *got, const loom_tensor *want, double rtol, double atol, const char *what);
/* Byte-identical tensors (dtype, shape and data). */
void tt_assert_same_bytes(const loom_tensor *a, const loom_tensor *b, const char *what);
/* The status is st and the last error contains `needle`. */
void tt_assert_fails(loom_status got, loom_status want, const char *needle);

/* attrs helpers: set and abort the test on failure */
void tt_set_str(loom_attrs *a, const char *name, const char *v);
void tt_set_ints(loom_attrs *a, const char *name, const int64_t *v, int64_t n);
void tt_set_int(loom_attrs *a, const char *name, int64_t v);
void tt_set_float(loom_attrs *a, const char *name, double v);

/* The feature_table_map the goldens use ([0, 1, 0, 2]). */
extern const int64_t tt_ftm[4];
/* New attrs for an object over the golden tables: weight type wt for all
** three tables and tt_ftm; the caller adds more and frees them. */
loom_attrs *tt_golden_attrs(const char *wt);

#endif
