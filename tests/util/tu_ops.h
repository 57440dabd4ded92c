/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tu_ops.h - helpers shared by the tests of the op packs (core, vision,
** fbgemm): init loom on the build's packs only, read golden .npy files,
** call an op on a forced backend, compare tensors. Public API only.
*/
#ifndef LOOM_TESTS_TU_OPS_H
#define LOOM_TESTS_TU_OPS_H

#include "loom/loom.h"
#include "tu_env.h"

/* cmocka group setup/teardown: loom_init with plugin_path = tu_plugin_path()
** and no default dirs, so only this build's packs load; fails when any pack
** found there was refused. tu_teardown: loom_shutdown. */
int tu_setup(void **state);
int tu_teardown(void **state);

/* Golden file <name>.npy under the data root, e.g. tu_npy("coreops/linear_bias")
** (fails the test when missing); never NULL. */
loom_tensor *tu_npy(const char *name);
/* 1 when <name>.npy exists under the data root. */
int tu_npy_exists(const char *name);

/* loom_call with one output and an optional forced backend. */
loom_status tu_call(const char *op, const loom_tensor *const *in, int32_t n_in, const loom_attrs *attrs,
                    const char *backend, loom_tensor **out);

/* Attributes of op from "name=value;name=value" (or "-" / NULL: none),
** each parsed with loom_attrs_parse; fails the test on a bad one. */
loom_attrs *tu_attrs_text(const char *op, const char *text);

/* A new tensor: t converted to dtype by core.cast on the cpu (the core
** pack must be loaded); fails the test on error. */
loom_tensor *tu_cast(const loom_tensor *t, loom_dtype dtype);

/* Same dtype and same shape, else the test fails naming `what`. */
void tu_assert_same_shape(const loom_tensor *got, const loom_tensor *want, const char *what);
/* Same dtype, same shape, same bytes (NaNs compared by bit pattern). */
void tu_assert_identical(const loom_tensor *got, const loom_tensor *want, const char *what);
/* f32/f64 element-wise |got - want| <= atol + rtol * |want|. */
void tu_assert_close(const loom_tensor *got, const loom_tensor *want, double rtol, double atol,
                     const char *what);
/* Element i of an f32/f64 tensor as double. */
double tu_get(const loom_tensor *t, int64_t i);
/* 1 when op is loaded and has a kernel of backend. */
int tu_has_backend(const char *op, const char *backend);
/* 1 with the first CUDA device in *out when loom has one, else 0. */
int tu_cuda_device(loom_dl_device *out);
/* A compact f32 tensor of uniform values in [-1, 1) from a 32-bit LCG with
** this seed (the same values on every call). */
loom_tensor *tu_random_f32(int32_t ndim, const int64_t *shape, unsigned seed);

#endif /* LOOM_TESTS_TU_OPS_H */
