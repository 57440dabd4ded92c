/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ctc_lengths.h - the check of the optional 'lengths' input the CTC
** decoders share (audio.ctc_decoder, audio.ctc_greedy_decoder,
** audio.cuda_ctc_decoder), in both packs.
*/
#ifndef LOOM_AUDIO_CTC_LENGTHS_H
#define LOOM_AUDIO_CTC_LENGTHS_H

#include <stdint.h>

#include "audio_pack.h"

/* 'lengths' len must be [B], B the batch of the input named `of` ([B, T,
** ...]), and each value in [0, T]: LOOM_OK, or the failure naming the
** argument (and the index). The values are read from lengths_host, their
** copy on the host (NULL: only the shape is checked). */
loom_status ctc_check_lengths(const loom_tensor *len, const int64_t *lengths_host, int64_t B, int64_t T,
                              const char *of);

#endif /* LOOM_AUDIO_CTC_LENGTHS_H */
