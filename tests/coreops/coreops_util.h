/*
** coreops_util.h - helpers shared by the tests of the op packs (core,
** vision, fbgemm): init loom on the build tree's pack folders only, read
** golden .npy files, call an op on a forced backend, compare tensors.
*/
#ifndef COREOPS_UTIL_H
#define COREOPS_UTIL_H

#include "loom/loom.h"

/* cmocka group setup/teardown: loom_init with plugin_path = the packs'
** build dirs (COREOPS_PACK_DIR, ':'-separated) and no default dirs;
** loom_shutdown. Fails when COREOPS_PROBE_OP is not defined after init. */
int cu_setup(void **state);
int cu_teardown(void **state);

/* Golden file DATA/name.npy (fails the test when missing); NULL-free. */
loom_tensor *cu_npy(const char *name);
/* 1 when DATA/name.npy exists. */
int cu_npy_exists(const char *name);

/* loom_call with one output and an optional forced backend. */
loom_status cu_call(const char *op, const loom_tensor *const *in, int32_t n_in, const loom_attrs *attrs,
                  const char *backend, loom_tensor **out);

/* A new tensor: t converted to dtype by core.cast on the cpu (the core
** pack must be loaded); fails the test on error. */
loom_tensor *cu_cast(const loom_tensor *t, loom_dtype dtype);

/* Same dtype and same shape, else the test fails naming `what`. */
void cu_assert_same_shape(const loom_tensor *got, const loom_tensor *want, const char *what);
/* Same dtype, same shape, same bytes (NaNs compared by bit pattern). */
void cu_assert_identical(const loom_tensor *got, const loom_tensor *want, const char *what);
/* f32/f64 element-wise |got - want| <= atol + rtol * |want|. */
void cu_assert_close(const loom_tensor *got, const loom_tensor *want, double rtol, double atol,
                     const char *what);
/* Element i of an f32/f64 tensor as double. */
double cu_get(const loom_tensor *t, int64_t i);

#endif
