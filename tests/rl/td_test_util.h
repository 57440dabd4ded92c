/* SPDX-License-Identifier: BSD-3-Clause */
/*
** td_test_util.h - calling rl.tensordict objects from the tests of the rl
** pack: public API only (loom_object_create, loom_run with the object).
** Every helper fails the test on an unexpected error.
*/
#ifndef LOOM_TESTS_RL_TD_TEST_UTIL_H
#define LOOM_TESTS_RL_TD_TEST_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include "loom/loom.h"
#include "tu_ops.h"

/* An rl.tensordict from attributes given as "name=value" strings (parsed
** with loom_attrs_parse), NULL-terminated; NULL on failure (status in *st
** when st is not NULL). */
loom_object *tdt_create(loom_status *st, ...);
/* An empty TensorDict with this batch_size. */
loom_object *tdt_new(int32_t ndim, const int64_t *batch);
int64_t tdt_id(loom_object *o);

/* A method call: inputs, attributes as "name=value" strings (NULL-terminated
** after the fixed arguments), one output into *out (NULL: none wanted). */
loom_status tdt_call(loom_object *o, const char *op, const loom_tensor *in, loom_tensor **out, ...);

void tdt_set(loom_object *o, const char *key, const loom_tensor *v);
/* The tensor at key (the caller frees it). */
loom_tensor *tdt_get(loom_object *o, const char *key);
/* The NonTensorData at key as a malloc'd JSON string. */
char *tdt_get_json(loom_object *o, const char *key);
/* Every leaf key, joined with '|' (malloc'd). */
char *tdt_keys(loom_object *o);
/* batch_size into out[], returns its dims. */
int32_t tdt_batch(loom_object *o, int64_t *out);

/* A compact tensor of dtype with these values converted from double. */
loom_tensor *tdt_tensor(loom_dtype dtype, int32_t ndim, const int64_t *shape, const double *values);
/* f32 [shape] with value i * scale + offset at flat index i. */
loom_tensor *tdt_ramp(int32_t ndim, const int64_t *shape, double scale, double offset);
/* Same shape, dtype-size and bytes. */
void tdt_assert_bytes(const loom_tensor *got, const loom_tensor *want, const char *what);
/* The call failed with status and its message holds needle. */
void tdt_assert_fails(loom_status got, loom_status want, const char *needle);

#endif /* LOOM_TESTS_RL_TD_TEST_UTIL_H */
