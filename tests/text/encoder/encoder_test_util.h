/* SPDX-License-Identifier: BSD-3-Clause */
/* encoder_test_util.h - what the cpu and cuda tests of text.bert_encoder
** share: one call of the encoder object and the goldens of a batch. */
#ifndef LOOM_TEST_ENCODER_UTIL_H
#define LOOM_TEST_ENCODER_UTIL_H

#include "loom/loom.h"

/* One call of obj on ids/mask/types (any may be NULL but ids) with the
** pooling and normalize attributes; *out receives the output. */
loom_status te_encode(loom_object *obj, const loom_tensor *ids, const loom_tensor *mask, const loom_tensor *types,
                      const char *pooling, int normalize, loom_tensor **out);
/* tests/data/text/encoder/<batch>_<what>.npy */
loom_tensor *te_golden(const char *batch, const char *what);

#endif
