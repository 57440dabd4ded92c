/* SPDX-License-Identifier: BSD-3-Clause */
/*
** roi_cpu_kernels.c - the cpu kernels of the RoI ops, one instance of
** roi_cpu_tmpl.h per dtype of dtype_traits.h's table: f32 and f64 compute
** in their own type, f16 in float rounded to half after every operation
** (c10::Half arithmetic).
*/
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "dtype_traits.h"
#include "roi_cpu.h"

#define PK_SFX f32
#define SAMPLE roi_sample_f32
#define WITH_POOL 1
#define WITH_AVX2 1
#include "roi_cpu_tmpl.h"

#define PK_SFX f64
#define SAMPLE roi_sample_f64
#define WITH_POOL 1
#define WITH_AVX2 0
#include "roi_cpu_tmpl.h"

/* f16: computed in float, every operation rounded back to half */
#define PK_SFX f16
#define SAMPLE roi_sample_f32
#define WITH_POOL 0
#define WITH_AVX2 0
#include "roi_cpu_tmpl.h"
