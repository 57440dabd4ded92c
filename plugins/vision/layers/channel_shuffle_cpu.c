/* SPDX-License-Identifier: BSD-3-Clause */
/*
** channel_shuffle_cpu.c - vision.channel_shuffle on the cpu backend
** (blocks.h): any dtype, one copy per (n, c) plane of the output, threaded
** over the planes. With `other`, the shuffle of cat([input, other], 1) in
** the same pass (ShuffleNetV2's block end, torch.cat then channel_shuffle).
** The inputs are read through their strides (a channel half of a map, as
** ShuffleNetV2's chunk makes, needs no copy): a plane whose trailing dims
** are compact is one memcpy, any other layout is gathered element by
** element. The checks and their wording are torch's (ATen's
** channel_shuffle: rank >= 3, groups > 0, C divisible by groups).
*/
#include <string.h>

#include "blocks.h"


/* One source tensor: its data, element strides and whether a plane is compact. */
typedef struct shuffle_src {
    const char *data;
    int64_t stride[LOOM_MAX_NDIM];
    int64_t channels;
    int compact_planes;
} shuffle_src;

typedef struct shuffle_job {
    shuffle_src src[2];             /* input, other (channels 0 when absent) */
    char *y;
    int32_t ndim;
    const int64_t *shape;           /* the output's */
    int64_t c, groups, inner, elem;
} shuffle_job;

static void src_of(shuffle_src *s, const loom_tensor *t)
{
    s->data = loom_data(t);
    s->channels = t->shape[1];
    int64_t expect = 1;
    s->compact_planes = 1;
    for (int32_t d = t->ndim - 1; d >= 0; d--) {
        s->stride[d] = t->strides != NULL ? t->strides[d] : expect;
        if (d >= 2 && t->shape[d] != 1 && s->stride[d] != expect)
            s->compact_planes = 0;
        expect *= t->shape[d];
    }
}

/* Copies plane (n, c) of s, inner elements of elem bytes, to dst. */
static void copy_plane(const shuffle_job *j, const shuffle_src *s, int64_t n, int64_t c, char *dst)
{
    const char *p = s->data + (n * s->stride[0] + c * s->stride[1]) * j->elem;
    if (s->compact_planes) {
        memcpy(dst, p, (size_t)(j->inner * j->elem));
        return;
    }
    int64_t idx[LOOM_MAX_NDIM] = { 0 };
    for (int64_t i = 0; i < j->inner; i++) {
        int64_t off = 0;
        for (int32_t d = 2; d < j->ndim; d++)
            off += idx[d] * s->stride[d];
        memcpy(dst + i * j->elem, p + off * j->elem, (size_t)j->elem);
        for (int32_t d = j->ndim - 1; d >= 2 && ++idx[d] == j->shape[d]; d--)
            idx[d] = 0;
    }
}

static void shuffle_planes(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const shuffle_job *j = user;
    const int64_t per_group = j->c / j->groups;
    for (int64_t p = begin; p < end; p++) {
        /* output channel o = k * groups + g reads channel g * per_group + k of cat([input, other]) */
        const int64_t n = p / j->c, o = p % j->c, k = o / j->groups, g = o % j->groups;
        const int64_t cc = g * per_group + k;
        const int in_first = cc < j->src[0].channels;
        copy_plane(j, &j->src[in_first ? 0 : 1], n, in_first ? cc : cc - j->src[0].channels,
                   j->y + p * j->inner * j->elem);
    }
}

static loom_status shuffle_run_cpu(loom_call *call)
{
    const loom_tensor *x = call->inputs[0], *other = call->n_inputs > 1 ? call->inputs[1] : NULL;
    const int64_t groups = call->attrs[PK_ATTR(channel_shuffle, groups)].u.i;
    loom_tensor *out;
    loom_status st = layers_check_shuffle(call, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    const int64_t *shape = out->shape;
    shuffle_job job = { .y = loom_data(out), .ndim = x->ndim, .shape = shape, .c = shape[1], .groups = groups,
                        .inner = 1, .elem = ((int64_t)x->dtype.bits * x->dtype.lanes + 7) / 8 };
    src_of(&job.src[0], x);
    if (other != NULL)
        src_of(&job.src[1], other);
    for (int32_t d = 2; d < x->ndim; d++)
        job.inner *= shape[d];
    return pk_host->parallel_for(call->ctx, shape[0] * shape[1], 1 + 65536 / (job.inner * job.elem + 1),
                                 shuffle_planes, &job);
}

const loom_kernel_desc layers_channel_shuffle_cpu_kernel =
    PK_KERNEL_CPU(vision_channel_shuffle_schema, "cpu:copy", LOOM_DTYPES_ALL, shuffle_run_cpu,
                  .flags = LOOM_KERNEL_STRIDED);
