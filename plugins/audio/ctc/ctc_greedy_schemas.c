/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ctc_greedy_schemas.c - the definition of audio.ctc_greedy_decoder and
** its checks, in both packs (ctc_greedy.h).
*/
#include "ctc_greedy.h"
#include "ctc_lengths.h"
#include "describe.h"

#define I64 LOOM_DTYPE_BIT(LOOM_DTYPE_I64)

static const loom_arg_def greedy_inputs[] = {
    { .name = "emissions", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 3,
      .doc = "f32 [B, T, N] scores of the N tokens per frame" },
    { .name = "lengths", .dtypes = I64, .flags = LOOM_ARG_OPTIONAL, .ndim = 1,
      .doc = "i64 [B]: the frames of each utterance (default T)" },
};
static const loom_arg_def greedy_outputs[] = {
    { .name = "tokens", .dtypes = I64, .ndim = 1, .doc = "i64 every utterance's tokens, one after the other" },
    { .name = "offsets", .dtypes = I64, .ndim = 1, .doc = "i64 [B+1]: utterance b's tokens" },
};
PK_ATTR_TABLE(ctc_greedy, CTC_GREEDY_ATTRS);

PK_SCHEMA(ctc_greedy_schema, "audio.ctc_greedy_decoder", 1,
          "greedy CTC decoding: argmax per frame, repeats collapsed, blanks dropped",
          PK_INPUTS(greedy_inputs), PK_OUTPUTS(greedy_outputs), PK_ATTRS(ctc_greedy_attrs));

PK_OPS_DEFINE(audio_ctc_greedy_ops, AUDIO_CTC_GREEDY_OPS);

loom_status ctc_greedy_check(const loom_call *call, const int64_t *lengths_host)
{
    const loom_tensor *e = call->inputs[0], *len = call->inputs[1];
    const int64_t blank = call->attrs[PK_ATTR(ctc_greedy, blank)].u.i;
    char b[160];
    if (e->shape[2] == 0 && e->shape[0] * e->shape[1] > 0)
        return pk_host->fail(LOOM_EINVAL, "'emissions' %s has no tokens per frame: there is no argmax",
                             pk_describe(pk_host, e, b, sizeof b));
    if (blank >= e->shape[2] && e->shape[2] > 0)
        return pk_host->fail(LOOM_EINVAL, "blank %lld is not a token of 'emissions' %s (N = %lld)", (long long)blank,
                             pk_describe(pk_host, e, b, sizeof b), (long long)e->shape[2]);
    return len == NULL ? LOOM_OK : ctc_check_lengths(len, lengths_host, e->shape[0], e->shape[1], "emissions");
}
