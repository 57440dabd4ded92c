/* SPDX-License-Identifier: BSD-3-Clause */
/*
** boxes_kernels.h - the device code of the box ops (boxes_kernels.cu),
** called from C (boxes_cuda.c). Every launcher is asynchronous on `stream`
** and returns the cudaError_t of its launches (0 = success), except
** bx_cuda_nms, which waits for the kept count (a data-dependent size).
** dtype codes are the loom_dtype values: 1 f32, 2 f64, 3 f16.
*/
#ifndef LOOM_VISION_BOXES_KERNELS_H
#define LOOM_VISION_BOXES_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Greedy NMS of n boxes: the classic CUDA scheme (64 x 64 blocks of IoU
** tests into a suppression bitmask, then one block walks the boxes in
** visiting order). With idxs and !shift, boxes of different categories
** never suppress each other; with shift, boxes are first moved by
** idxs * (max coordinate + 1) as torchvision's batched_nms does for small
** inputs. On return *kept holds the count and keep[0..*kept) (device, n
** entries) the kept original indices by decreasing score, ties by index. */
typedef struct bx_cuda_nms_args {
    int32_t dtype;              /* 1 f32, 2 f64 */
    int32_t shift;
    int64_t n;
    const void *boxes, *scores;
    const int64_t *idxs;        /* NULL for plain nms */
    double iou_threshold;
    void *scratch;              /* bx_cuda_nms_scratch_bytes(n, dtype) of device memory */
    int64_t *keep;
} bx_cuda_nms_args;

size_t bx_cuda_nms_scratch_bytes(int64_t n, int32_t dtype);
int bx_cuda_nms(const bx_cuda_nms_args *args, int64_t *kept, void *stream);

/* Pairwise [n, m] matrix; kind 0 IoU, 1 GIoU, 2 DIoU, 3 CIoU; out in f32
** (f16/f32 boxes) or f64. */
int bx_cuda_pair(int32_t kind, int32_t fmt, int32_t dtype, int64_t n, int64_t m, const void *b1,
                 const void *b2, double eps, void *out, void *stream);

/* Per-box ops: op 0..2 the GIoU/DIoU/CIoU losses (into `partial` as double
** when it is non-NULL, else into out), 3 box_convert, 4 box_area, 5 clip. */
typedef struct bx_cuda_elem_args {
    int32_t op, dtype, out_dtype;
    int32_t fmt_in, fmt_out;
    int64_t n;                  /* boxes */
    const void *in1, *in2;
    void *out;
    double *partial;
    double eps;
    int64_t height, width;
} bx_cuda_elem_args;

int bx_cuda_elem(const bx_cuda_elem_args *args, void *stream);

/* out[0] = sum (or mean) of partial[0..n) in the output dtype, summed in
** double by one block in a fixed order. */
int bx_cuda_reduce(const double *partial, int64_t n, int32_t mean, int32_t out_dtype, void *out, void *stream);

/* flags[i] = both sides of box i >= min_size, compared in the box dtype. */
int bx_cuda_small_flags(int32_t dtype, int64_t n, const void *boxes, double min_size, uint8_t *flags,
                        void *stream);

#ifdef __cplusplus
}
#endif
#endif /* LOOM_VISION_BOXES_KERNELS_H */
