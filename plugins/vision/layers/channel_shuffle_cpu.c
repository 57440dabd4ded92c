/* SPDX-License-Identifier: BSD-3-Clause */
/*
** channel_shuffle_cpu.c - vision.channel_shuffle on the cpu backend
** (blocks.h): any dtype, one memcpy per (n, c) plane of the output,
** threaded over the planes. The checks and their wording are torch's
** (ATen's channel_shuffle: rank >= 3, groups > 0, C divisible by groups).
*/
#include <string.h>

#include "blocks.h"

#define DESC(t, buf) vision_describe((t), (buf), sizeof(buf))

typedef struct shuffle_job {
    const char *x;
    char *y;
    int64_t c, groups, plane_bytes;
} shuffle_job;

static void shuffle_planes(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const shuffle_job *j = user;
    const int64_t per_group = j->c / j->groups;
    for (int64_t p = begin; p < end; p++) {
        /* output channel o = k * groups + g reads input channel g * per_group + k */
        const int64_t n = p / j->c, o = p % j->c, k = o / j->groups, g = o % j->groups;
        memcpy(j->y + p * j->plane_bytes, j->x + (n * j->c + g * per_group + k) * j->plane_bytes,
               (size_t)j->plane_bytes);
    }
}

static loom_status shuffle_run_cpu(loom_call *call)
{
    const loom_tensor *x = call->inputs[0];
    char b1[160];
    const int64_t groups = call->attrs[PK_ATTR(channel_shuffle, groups)].u.i;
    if (x->ndim < 3)
        return pk_host->fail(LOOM_EINVAL, "'input' %s: channel_shuffle expects input to have at least 3 dimensions",
                             DESC(x, b1));
    if (!loom_is_contiguous(x))
        return pk_host->fail(LOOM_EINVAL, "'input' %s is not contiguous: pass a compact row-major tensor",
                             DESC(x, b1));
    if (x->shape[1] % groups != 0)
        return pk_host->fail(LOOM_EINVAL, "'input' %s: number of channels must be divisible by groups. Got %lld "
                             "channels and %lld groups", DESC(x, b1), (long long)x->shape[1], (long long)groups);
    loom_tensor *out;
    loom_status st = pk_host->alloc_output(call, 0, loom_tensor_dtype_of(x), x->ndim, x->shape, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    if (loom_data(out) == loom_data(x))
        return groups == 1 || groups == x->shape[1] ? LOOM_OK
             : pk_host->fail(LOOM_EINVAL, "'output' is 'input': channel_shuffle does not work in place");
    int64_t inner = 1;
    for (int32_t d = 2; d < x->ndim; d++)
        inner *= x->shape[d];
    const int64_t elem = ((int64_t)x->dtype.bits * x->dtype.lanes + 7) / 8;
    shuffle_job job = { loom_data(x), loom_data(out), x->shape[1], groups, inner * elem };
    return pk_host->parallel_for(call->ctx, x->shape[0] * x->shape[1], 1 + 65536 / (job.plane_bytes + 1),
                                 shuffle_planes, &job);
}

const loom_kernel_desc layers_channel_shuffle_cpu_kernel =
    PK_KERNEL_CPU(vision_channel_shuffle_schema, "cpu:copy", LOOM_DTYPES_ALL, shuffle_run_cpu);
