/* SPDX-License-Identifier: BSD-3-Clause */
/*
** audio_test_util.h - what the audio pack's tests share: one call with
** attributes given as "k=v;k=v" text (parsed as the op declares them), and
** the norm-wise relative error of a result (complex values as pairs).
*/
#ifndef LOOM_TESTS_AUDIO_UTIL_H
#define LOOM_TESTS_AUDIO_UTIL_H

#include <stdint.h>

#include "tu_ops.h"

/* op(inputs) on backend (NULL: the policy) with attrs "k=v;..." (NULL or
** "-": none); *out is NULL on failure. */
loom_status at_call(const char *op, const loom_tensor *const *in, int32_t n_in, const char *attrs,
                    const char *backend, loom_tensor **out);

/* The same with n_out outputs (all NULL on failure). */
loom_status at_run(const char *op, const loom_tensor *const *in, int32_t n_in, const char *attrs, loom_tensor **out,
                   int32_t n_out);

/* max |got - want| / max |want| over every real component (0 when both are
** all zeros); fails the test, naming `what`, on a dtype or shape mismatch. */
double at_rel_error(const loom_tensor *got, const loom_tensor *want, const char *what);

/* A seeded signal of `dtype` (F32, F64, or C64 / C128 with both parts drawn), values in [-1, 1). */
loom_tensor *at_signal(loom_dtype dtype, int32_t ndim, const int64_t *shape, unsigned seed);

/* The call fails with `status` and its message holds `needle`. */
void at_assert_refused(const char *op, const loom_tensor *const *in, int32_t n_in, const char *attrs,
                       loom_status status, const char *needle);

/* The first CUDA device into *out: 1, or 0 when there is none. */
int at_cuda_device(loom_dl_device *out);

/* In a cmocka test: skips it, saying so, unless op has a cuda kernel and a
** CUDA device exists (then *dev is that device). */
#define AT_NEED_CUDA(op, dev)                                                                      \
    do {                                                                                           \
        if (!tu_has_backend(op, "cuda") || !at_cuda_device(dev)) {                                 \
            print_message("no CUDA device or audio-cuda pack: the cuda kernel of %s was not run\n", op); \
            skip();                                                                                \
        }                                                                                          \
    } while (0)

#endif
