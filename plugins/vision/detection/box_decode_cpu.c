/* SPDX-License-Identifier: BSD-3-Clause */
/*
** box_decode_cpu.c - vision.box_coder_decode: BoxCoder.decode of [N, 4 K]
** codes against N reference boxes into [N, K, 4] (box_decode.c), the rows
** split over the core's threads.
*/
#include "detection.h"

typedef struct decode_job {
    det_box_coder coder;
    const float *codes, *boxes;
    float *out;
    int64_t k;
} decode_job;

static void decode_rows(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const decode_job *j = user;
    for (int64_t i = begin; i < end; i++)
        for (int64_t k = 0; k < j->k; k++)
            det_box_decode(&j->coder, j->codes + (i * j->k + k) * 4, j->boxes + i * 4, j->out + (i * j->k + k) * 4);
}

loom_status vision_box_coder_decode_cpu(loom_call *call)
{
    const loom_tensor *codes = call->inputs[0], *boxes = call->inputs[1];
    const int64_t n = codes->shape[0];
    if (codes->shape[1] % 4 != 0 || boxes->shape[0] != n || boxes->shape[1] != 4)
        return pk_host->fail(LOOM_EINVAL,
                             "vision.box_coder_decode: rel_codes is [%lld, %lld] and boxes [%lld, %lld]; expected "
                             "[N, 4 K] and [N, 4]",
                             (long long)n, (long long)codes->shape[1], (long long)boxes->shape[0],
                             (long long)boxes->shape[1]);
    decode_job j = { .codes = loom_data(codes), .boxes = loom_data(boxes), .k = codes->shape[1] / 4 };
    loom_status st = det_box_coder_from_attrs("vision.box_coder_decode", call->attrs, PK_ATTR(box_decode, weights),
                                              det_rpn_weights, &j.coder);
    if (st != LOOM_OK)
        return st;
    loom_tensor *out;
    const int64_t shape[3] = { n, j.k, 4 };
    if ((st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 3, shape, &out)) != LOOM_OK)
        return st;
    if (n == 0 || j.k == 0)
        return LOOM_OK;
    j.out = loom_data(out);
    return pk_host->parallel_for(call->ctx, n, 1024 / j.k + 1, decode_rows, &j);
}
