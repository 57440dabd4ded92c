/* SPDX-License-Identifier: BSD-3-Clause */
/*
** quantize.h - fbgemm's row-wise quantisers and dequantisers, one row at a
** time, bit-exact with fbgemm_gpu's CPU operators.
**
** Two layouts:
**   FBG_LAYOUT_TBE    the rows IntNBitTableBatchedEmbeddingBagsCodegen
**                     stores (tbe.h), as fbgemm_gpu.tbe.utils.quantize_embs
**                     builds them: INT8 runs FloatToFused8BitRowwiseQuantized
**                     and moves its f32 scale/bias, cast to f16, into a
**                     4-byte header; INT4/INT2 run
**                     FloatToFusedNBitRowwiseQuantizedSBHalf and move its
**                     f16 scale/bias to the front; FP8 is FloatToHFP8Quantized;
**                     FP16/BF16/FP32 are plain casts (RNE). Padded with
**                     zeros to row_alignment.
**   FBG_LAYOUT_FUSED  the standalone operators' own rows:
**                     INT8 [D u8][f32 scale][f32 bias]
**                     INT4/INT2 [ceil(D*bits/8) bytes][f16 scale][f16 bias]
**                     FP8 [D hfp8 bytes]; FP16/BF16/FP32 as TBE.
**
** The quantised values follow fbgemm's reference code (src/QuantUtils.cc):
**   INT8:   min, max over the row; scale = (max-min)/255, bias = min,
**           q = lrintf((x - min) * (255 / (range + 1e-8)))
**   INTn:   min rounded to f16 first; scale = f16(range / (2^n - 1)), 1 when
**           that is 0 or its reciprocal is inf; q = clamp(lrintf((x - min) *
**           (1/scale)), 0, 2^n - 1), element i at bit (i % (8/n)) * n
**   FP8:    float_to_hfp8 (include/fbgemm_gpu/quantize_ops_utils.h)
*/
#ifndef LOOM_FBGEMM_TBE_QUANTIZE_H
#define LOOM_FBGEMM_TBE_QUANTIZE_H

#include <stdint.h>

#include "tbe.h"

typedef enum fbg_layout { FBG_LAYOUT_TBE = 0, FBG_LAYOUT_FUSED = 1 } fbg_layout;

/* Parameters of one row format. */
typedef struct fbg_row_format {
    fbg_wtype wtype;
    fbg_layout layout;
    int64_t dim;
    int64_t row_alignment;    /* TBE layout only; >= 1 */
    int32_t fp8_ebits;
    int32_t fp8_bias;
} fbg_row_format;

/* Bytes of one row in this format; -1 for a dim outside [0, FBG_MAX_DIM]. */
int64_t fbg_format_row_bytes(const fbg_row_format *f);

/* Quantise x[dim] into out[fbg_format_row_bytes(f)] (padding zeroed). */
void fbg_quantize_row(const fbg_row_format *f, const float *x, uint8_t *out);
/* Dequantise one row into y[dim]. */
void fbg_dequantize_row(const fbg_row_format *f, const uint8_t *row, float *y);

/* fbgemm's hfp8 codec and its largest finite value for (ebits, bias). */
uint8_t fbg_float_to_hfp8(float x, int ebits, int bias, float max_pos);
float fbg_hfp8_to_float(uint8_t h, int ebits, int bias);
float fbg_hfp8_max_pos(int ebits, int bias);

/* The weight type named by s ("fp32", "fp16", "bf16", "fp8", "int8",
** "int4", "int2", case-insensitive); -1 when unknown. */
int fbg_wtype_from_name(const char *s, int64_t len);
const char *fbg_wtype_name(fbg_wtype t);

#endif
