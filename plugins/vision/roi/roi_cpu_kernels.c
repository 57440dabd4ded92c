/*
** roi_cpu_kernels.c - the cpu kernels of the RoI ops, one instance of
** roi_cpu_tmpl.h per dtype: f32 and f64 compute in their own type, f16 in
** float rounded to half after every operation (c10::Half arithmetic).
*/
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "roi_cpu.h"

/* f32 */
#define SUF f32
#define S float
#define C float
#define LD(p) (*(p))
#define ST(v) (v)
#define R(v) (v)
#define SAMPLE roi_sample_f32
#define WITH_POOL 1
#define WITH_AVX2 1
#include "roi_cpu_tmpl.h"

/* f64 */
#define SUF f64
#define S double
#define C double
#define LD(p) (*(p))
#define ST(v) (v)
#define R(v) (v)
#define SAMPLE roi_sample_f64
#define WITH_POOL 1
#define WITH_AVX2 0
#include "roi_cpu_tmpl.h"

/* f16: storage uint16_t, every operation rounded back to half */
static inline float roi_round_f16(float v) { return pk_f16_to_f32(pk_f32_to_f16(v)); }
#define SUF f16
#define S uint16_t
#define C float
#define LD(p) pk_f16_to_f32(*(p))
#define ST(v) pk_f32_to_f16(v)
#define R(v) roi_round_f16(v)
#define SAMPLE roi_sample_f32
#define WITH_POOL 0
#define WITH_AVX2 0
#include "roi_cpu_tmpl.h"
