/* SPDX-License-Identifier: BSD-3-Clause */
/*
** pair_avx2.c - box_iou and generalized_box_iou rows for f32 and f16 xyxy
** boxes with AVX2, 8 boxes of boxes2 per instruction (contract in boxes.h).
**
** The lanes repeat boxes_formulas.inc's bx_iou / bx_giou operation by
** operation (no fused multiply-add), so results equal the portable path
** and torchvision bit for bit: torch.max/min propagate NaN (max/min of the
** pair, replaced by a + b, which is NaN, where either is NaN), clamp(min=0)
** keeps NaN. The row tail (m % 8 boxes) goes through the portable formulas.
** For f16 boxes (low = 1) the corner differences, which torch computes in
** f16 before it upcasts, are rounded to f16 with F16C (vcvtps2ph with
** round-to-nearest-even, the rounding of the portable pk_rnd_f16, NaN
** payloads included), the RL() steps of boxes_formulas.inc.
*/
#include "boxes.h"
#include "boxes_formulas_cpu.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define TARGET __attribute__((target("avx2,f16c")))

TARGET static inline __m256 mx(__m256 a, __m256 b)
{
    return _mm256_blendv_ps(_mm256_max_ps(a, b), _mm256_add_ps(a, b), _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
}

TARGET static inline __m256 mn(__m256 a, __m256 b)
{
    return _mm256_blendv_ps(_mm256_min_ps(a, b), _mm256_add_ps(a, b), _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
}

TARGET static inline __m256 clamp0(__m256 a)
{
    const __m256 zero = _mm256_setzero_ps();
    return _mm256_blendv_ps(a, zero, _mm256_cmp_ps(a, zero, _CMP_LT_OQ));
}

/* x rounded to f16 and back where low is set (an f16 step of torch's). */
TARGET static inline __m256 rl(__m256 x, int low)
{
    return low ? _mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)) : x;
}

TARGET void bx_pair_rows_f32_avx2(int giou, int low, const float *a, const float *b, int64_t m, int64_t begin,
                                  int64_t end, float *out)
{
    const int64_t stride = (m + 7) & ~(int64_t)7, m8 = m & ~(int64_t)7;
    const float *bx1 = b, *by1 = b + stride, *bx2 = b + 2 * stride, *by2 = b + 3 * stride;
    const float *barea = b + 4 * stride;
    for (int64_t i = begin; i < end; i++) {
        const float *r = a + 4 * i;
        float *row = out + i * m;
        const __m256 ax1 = _mm256_set1_ps(r[0]), ay1 = _mm256_set1_ps(r[1]);
        const __m256 ax2 = _mm256_set1_ps(r[2]), ay2 = _mm256_set1_ps(r[3]);
        const __m256 aarea = _mm256_set1_ps(bx_area_f32(r, 0));
        for (int64_t j = 0; j < m8; j += 8) {
            __m256 x1 = _mm256_loadu_ps(bx1 + j), y1 = _mm256_loadu_ps(by1 + j);
            __m256 x2 = _mm256_loadu_ps(bx2 + j), y2 = _mm256_loadu_ps(by2 + j);
            __m256 w = clamp0(rl(_mm256_sub_ps(mn(ax2, x2), mx(ax1, x1)), low));
            __m256 h = clamp0(rl(_mm256_sub_ps(mn(ay2, y2), mx(ay1, y1)), low));
            __m256 inter = _mm256_mul_ps(w, h);
            __m256 u = _mm256_sub_ps(_mm256_add_ps(aarea, _mm256_loadu_ps(barea + j)), inter);
            __m256 v = _mm256_div_ps(inter, u);
            if (giou) {
                __m256 cw = clamp0(rl(_mm256_sub_ps(mx(ax2, x2), mn(ax1, x1)), low));
                __m256 ch = clamp0(rl(_mm256_sub_ps(mx(ay2, y2), mn(ay1, y1)), low));
                __m256 area = _mm256_mul_ps(cw, ch);
                v = _mm256_sub_ps(v, _mm256_div_ps(_mm256_sub_ps(area, u), area));
            }
            _mm256_storeu_ps(row + j, v);
        }
        for (int64_t j = m8; j < m; j++) {
            const float q[4] = { bx1[j], by1[j], bx2[j], by2[j] };
            float u;
            row[j] = giou ? bx_giou_f32(r, q, low) : bx_iou_f32(r, q, 0, low, &u);
        }
    }
}

#else

void bx_pair_rows_f32_avx2(int giou, int low, const float *a, const float *b, int64_t m, int64_t begin,
                           int64_t end, float *out)
{
    (void)giou, (void)low, (void)a, (void)b, (void)m, (void)begin, (void)end, (void)out;
}

#endif
