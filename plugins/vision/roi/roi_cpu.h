/* SPDX-License-Identifier: BSD-3-Clause */
/*
** roi_cpu.h - what the cpu kernels of the roi module share: the job of one
** call, the bilinear sample record, and the per-dtype entry points that
** roi_cpu_tmpl.h instantiates (f32, f64 and f16; the pooling ops only for
** f32 and f64, as torchvision).
**
** Numerics: every dtype runs torchvision's CPU arithmetic in its order of
** operations. f32 and f64 compute in their own type with no fused
** multiply-add (torchvision's kernels are compiled without FMA), so the
** results are bit-identical. f16 mirrors c10::Half arithmetic, which
** computes each operation in float and rounds it back to half: the
** kernels compute in float and round after every operation.
**
** A sample record holds the four element offsets and bilinear weights of
** one sampling point; offsets are relative to the image (NCHW: the first
** channel's plane) or to a thread's row cache (roi_align: cached pixel
** times the 32 channels of a block, from the first block).
*/
#ifndef LOOM_VISION_ROI_CPU_H
#define LOOM_VISION_ROI_CPU_H

#include "roi.h"

typedef struct roi_sample_f32 { int64_t off[4]; float w[4]; } roi_sample_f32;
typedef struct roi_sample_f64 { int64_t off[4]; double w[4]; } roi_sample_f64;

/* Where a roi goes in the forward kernels' visiting order (roi_order.c):
** image, band of map rows, position along the band; idx breaks ties. */
typedef struct roi_key { int64_t b, band, x, idx; } roi_key;

/* One call on the cpu. The kernels fill boxes (per-roi geometry), the
** per-thread scratch (with roi_align's row caches), roi_align's visiting
** order and, for roi_pool's NHWC path, the transposed input. */
typedef struct roi_job {
    roi_geom g;
    loom_exec_ctx *ctx;
    const void *input;          /* forward: input; backward: grad */
    const void *rois;
    const int32_t *map_in;      /* backward: argmax / channel_mapping */
    void *output;
    int32_t *map_out;           /* forward: argmax / channel_mapping */
    void *boxes;                /* K per-roi geometry records (dtype specific) */
    void *nhwc;                 /* forward roi_pool: transposed input or NULL */
    const unsigned char *used;  /* N flags: images some roi reads (NHWC path) */
    const roi_key *order;       /* forward roi_align on row caches: K rois in visiting order, else NULL */
    int64_t cache_rows;         /* rows of each thread's row cache; 0: no row cache */
    char *thread_scratch;       /* n_slots * slot_bytes */
    size_t slot_bytes;
    int32_t n_slots;
    int64_t max_gh, max_gw;     /* largest sampling grid over the rois */
} roi_job;

/* Sort the K keys into the visiting order (roi_order.c). */
void roi_visit_order(roi_key *keys, int64_t k);

/* Per dtype: run a checked call whose outputs are allocated (roi_cpu_tmpl.h). */
loom_status roi_cpu_f32(roi_job *job);
loom_status roi_cpu_f64(roi_job *job);
loom_status roi_cpu_f16(roi_job *job);

/* AVX2 sweep of one roi_align bin over nc channels of an NHWC f32 image:
** out[i * ostride] = (sum over samples of w0 v0 + w1 v1 + w2 v2 + w3 v3) /
** count, in torchvision's order, without FMA (roi_avx2.c). */
void roi_sweep_nhwc_avx2(const float *x, int64_t nc, const roi_sample_f32 *s, int64_t ns, float count,
                         float *out, int64_t ostride);
/* The same for nbins bins of 32 channels: bin b's ns samples at s + b * ns,
** channel i of bin b to out[i * ostride + b]. */
void roi_sweep_bins_avx2(const float *x, const roi_sample_f32 *s, int64_t nbins, int64_t ns, float count,
                         float *out, int64_t ostride);
/* AVX2 roi_pool bin [hs, he) x [ws, we) over the nc channels of an NHWC
** f32 image of width w: out / argmax[i * ostride] for channel i. */
void roi_maxpool_nhwc_avx2(const float *x, int64_t nc, int64_t w, int64_t hs, int64_t he, int64_t ws, int64_t we,
                           float *out, int32_t *argmax, int64_t ostride);
/* Row y of one NCHW f32 image into NHWC blocks of cb channels (cb = nc:
** plain NHWC; else a multiple of 8): in points at (c 0, y, x 0), channel
** planes hw apart; channel c of pixel x goes to out[(c / cb) * w * cb +
** x * cb + c % cb]. */
void roi_nhwc_row_avx2(const float *in, float *out, int64_t nc, int64_t hw, int64_t w, int64_t cb);
/* Read cpuid and LOOM_CPU_MAX_ISA once (at init); then roi_have_avx2 is
** 1 when the AVX2 loops may run. */
void roi_cpu_isa_init(void);
int roi_have_avx2(void);

#endif /* LOOM_VISION_ROI_CPU_H */
