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

/* An rl.replay_buffer from "name=value" attributes (attrs NULL-terminated);
** NULL on failure (status in *st when st is not NULL, else the test fails). */
loom_object *tdt_rb_create(loom_status *st, const char *const *attrs);

/* A fresh directory (mkdtemp under /tmp) for a group's tests, in
** tdt_scratch: tdt_scratch_setup and tdt_scratch_teardown wrap tu_setup and
** tu_teardown, making it and removing it with all it holds. */
extern char tdt_scratch[64];
int tdt_scratch_setup(void **state);
int tdt_scratch_teardown(void **state);
/* A file's bytes, malloc'd with a NUL after them; their count in *n (n may
** be NULL). The test fails when the file cannot be read. */
char *tdt_slurp(const char *path, size_t *n);

#endif /* LOOM_TESTS_RL_TD_TEST_UTIL_H */
