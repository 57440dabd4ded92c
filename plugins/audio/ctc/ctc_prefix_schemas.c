/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ctc_prefix_schemas.c - the definition of audio.cuda_ctc_decoder and its
** checks, in both packs (ctc_prefix.h).
*/
#include <math.h>

#include "ctc_lengths.h"
#include "ctc_prefix.h"
#include "describe.h"

#define I64 LOOM_DTYPE_BIT(LOOM_DTYPE_I64)

static const loom_arg_def prefix_inputs[] = {
    { .name = "log_probs", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 3,
      .doc = "f32 [B, T, V] log-softmax of the V tokens per frame; token 0 is the blank" },
    { .name = "lengths", .dtypes = I64, .flags = LOOM_ARG_OPTIONAL, .ndim = 1,
      .doc = "i64 [B]: the frames of each utterance (default T)" },
};
static const loom_arg_def prefix_outputs[] = {
    { .name = "tokens", .dtypes = I64, .ndim = 1, .doc = "i64 every hypothesis's tokens, one after the other" },
    { .name = "offsets", .dtypes = I64, .ndim = 1,
      .doc = "i64 [B * nbest + 1]: hypothesis k of utterance b is row b * nbest + k, best first" },
    { .name = "score", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 2, .doc = "f32 [B, nbest]" },
};
PK_ATTR_TABLE(ctc_prefix, CTC_PREFIX_ATTRS);

PK_SCHEMA(ctc_prefix_schema, "audio.cuda_ctc_decoder", 1,
          "torchaudio's cuda_ctc_decoder: blank-collapsing CTC prefix beam search, blank-dominant frames skipped",
          PK_INPUTS(prefix_inputs), PK_OUTPUTS(prefix_outputs), PK_ATTRS(ctc_prefix_attrs));

PK_OPS_DEFINE(audio_ctc_prefix_ops, AUDIO_CTC_PREFIX_OPS);

loom_status ctc_prefix_check(const loom_call *call, const int64_t *lengths_host, ctc_prefix_params *p)
{
    const loom_tensor *e = call->inputs[0], *len = call->inputs[1];
    const loom_attr_value *a = call->attrs;
    const int64_t beam_size = a[PK_ATTR(ctc_prefix, beam_size)].u.i, nbest = a[PK_ATTR(ctc_prefix, nbest)].u.i;
    const double thr = a[PK_ATTR(ctc_prefix, blank_skip_threshold)].u.f;
    const int64_t V = e->shape[2];
    char b[160];
    if (beam_size > CTC_PREFIX_MAX_BEAM)
        return pk_host->fail(LOOM_EINVAL, "beam_size %lld: at most %d (torchaudio's cuda_ctc_decoder's limit)",
                             (long long)beam_size, CTC_PREFIX_MAX_BEAM);
    if (!(thr > 0.0 && thr <= 1.0))
        return pk_host->fail(LOOM_EINVAL, "blank_skip_threshold %g must be in (0, 1] (a probability; its log is "
                             "compared with the blank's log-prob)", thr);
    if (V == 0 && e->shape[0] * e->shape[1] > 0)
        return pk_host->fail(LOOM_EINVAL, "'log_probs' %s has no tokens per frame (token 0 is the blank)",
                             pk_describe(pk_host, e, b, sizeof b));
    p->beam = (int32_t)(beam_size < V ? beam_size : V);
    if (V > INT32_MAX / CTC_PREFIX_MAX_BEAM)
        return pk_host->fail(LOOM_EINVAL, "'log_probs' %s: V = %lld tokens is too many", pk_describe(pk_host, e, b,
                             sizeof b), (long long)V);
    if (V > 0 && nbest > p->beam)
        return pk_host->fail(LOOM_EINVAL, "nbest %lld is more than the beam, %d (beam_size %lld, V = %lld tokens)",
                             (long long)nbest, p->beam, (long long)beam_size, (long long)V);
    p->nbest = (int32_t)nbest;
    p->threshold = (float)log(thr);
    return len == NULL ? LOOM_OK : ctc_check_lengths(len, lengths_host, e->shape[0], e->shape[1], "log_probs");
}
