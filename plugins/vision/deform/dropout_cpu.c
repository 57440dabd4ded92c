/* SPDX-License-Identifier: BSD-3-Clause */
/*
** dropout_cpu.c - vision.drop_block2d, vision.drop_block3d and
** vision.stochastic_depth on the CPU, with torchvision's arithmetic step by
** step in the tensor's dtype (f16 computes each step in float and rounds,
** as torch's CPU kernels do), so that with a given Bernoulli draw (`noise`)
** the output matches torchvision bit for bit:
**
** drop_block: noise [N, C, S-bs+1 ...] is zero-padded by bs/2 to S, max-pooled
**   with a bs window (stride 1, clipped at the borders), mask = 1 - pooled,
**   s = sum(mask), scale = (1 / (eps + s)) * numel (torch's int / tensor is
**   reciprocal then multiply), out = (input * mask) * scale.
** stochastic_depth: f = noise / (1 - p) (noise itself when p = 1) per row
**   or for the batch, out = input * f.
** Without `noise` the draw comes from rng.h: draw i is element i of
** the noise tensor in row-major order, so the cuda kernels draw the same.
** Planes are processed in parallel; the mask sum is taken per plane and
** added in plane order (deterministic for any thread count).
*/
#include <math.h>
#include <string.h>

#include "deform.h"
#include "rng.h"

typedef struct sd_job {
    const stochastic_depth_plan *pl;
    void *out;
} sd_job;

typedef struct db_job {
    const drop_block_plan *pl;
    int64_t plane, noise_plane;     /* elements per (n, c) plane of input / noise */
    void *mask;                     /* opmath [numel] */
    double *plane_sums;
    char *bufs;                     /* per thread: opmath [plane] */
    size_t buf_bytes;
    void *out;
    double scale;                   /* opmath value of the scale */
} db_job;

/* The steps of one dtype (dropout_cpu_tmpl.h). */
typedef struct dropout_fns {
    size_t opmath_size;             /* bytes of the compute type of the mask */
    loom_range_fn db_planes, db_apply;
    double (*db_scale)(double sum, double eps, int64_t numel);
    loom_range_fn sd_rows;
} dropout_fns;

#define PK_SFX f32
#include "dropout_cpu_tmpl.h"
#define PK_SFX f64
#include "dropout_cpu_tmpl.h"
#define PK_SFX f16
#include "dropout_cpu_tmpl.h"

static loom_status copy_input(loom_call *call, const loom_tensor *in, loom_tensor **out)
{
    loom_status st = pk_host->alloc_output(call, 0, loom_tensor_dtype_of(in), in->ndim, in->shape, out);
    if (st == LOOM_OK && loom_numel(in) > 0)
        memcpy(loom_data(*out), loom_data(in),
               (size_t)loom_numel(in) * pk_host->dtype_size(loom_tensor_dtype_of(in)));
    return st;
}

static loom_status drop_block_cpu(loom_call *call, int dims)
{
    const loom_tensor *in = call->inputs[DROP_INPUT];
    drop_block_plan pl;
    loom_tensor *out;
    loom_status st = drop_block_check(call, dims, &pl);
    if (st != LOOM_OK)
        return st;
    if (pl.identity || pl.numel == 0)
        return copy_input(call, in, &out);
    if ((st = pk_host->alloc_output(call, 0, pl.dtype, in->ndim, in->shape, &out)) != LOOM_OK)
        return st;
    const dropout_fns *fns = VISION_PICK(pl.dtype, dropout_fns);
    const size_t os = fns->opmath_size;
    int64_t planes = pl.n * pl.c, threads = call->ctx->n_threads > 0 ? call->ctx->n_threads : 1;
    db_job j = { .pl = &pl, .plane = pl.numel / planes, .noise_plane = pl.noise_numel / planes,
                 .out = loom_data(out) };
    j.buf_bytes = ((size_t)j.plane * os + 63) / 64 * 64;
    j.mask = pk_host->scratch(call->ctx, (size_t)pl.numel * os);
    j.plane_sums = pk_host->scratch(call->ctx, (size_t)planes * sizeof(double));
    j.bufs = pk_host->scratch(call->ctx, j.buf_bytes * (size_t)threads);
    if (j.mask == NULL || j.plane_sums == NULL || j.bufs == NULL)
        return pk_host->fail(LOOM_ENOMEM, "no memory for the block mask of %lld elements", (long long)pl.numel);
    if ((st = pk_host->parallel_for(call->ctx, planes, 1, fns->db_planes, &j)) != LOOM_OK)
        return st;
    double sum = 0;
    for (int64_t i = 0; i < planes; i++)
        sum += j.plane_sums[i];
    j.scale = fns->db_scale(sum, pl.eps, pl.numel);
    return pk_host->parallel_for(call->ctx, pl.numel, 4096, fns->db_apply, &j);
}

loom_status drop_block2d_cpu(loom_call *call) { return drop_block_cpu(call, 2); }
loom_status drop_block3d_cpu(loom_call *call) { return drop_block_cpu(call, 3); }

loom_status stochastic_depth_cpu(loom_call *call)
{
    const loom_tensor *in = call->inputs[DROP_INPUT];
    stochastic_depth_plan pl;
    loom_tensor *out;
    loom_status st = stochastic_depth_check(call, &pl);
    if (st != LOOM_OK)
        return st;
    if (pl.identity || loom_numel(in) == 0)
        return copy_input(call, in, &out);
    if ((st = pk_host->alloc_output(call, 0, pl.dtype, in->ndim, in->shape, &out)) != LOOM_OK)
        return st;
    sd_job j = { .pl = &pl, .out = loom_data(out) };
    int64_t grain = pl.row_len >= 4096 ? 1 : 4096 / (pl.row_len > 0 ? pl.row_len : 1);
    return pk_host->parallel_for(call->ctx, pl.rows, grain, VISION_PICK(pl.dtype, dropout_fns)->sd_rows, &j);
}
