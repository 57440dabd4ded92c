/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_simd.c - simd_avx2.h's vector GELU (erf), pk_gelu_erf_ps, which the
** shared GEMM's epilogue and vision.gelu run on AVX2+FMA, against
** 0.5 x (1 + erf(x / sqrt 2)) in f64 on every 3rd float of [-12, 12].
** Bounds (what the erfc form gives; libm's erff formula itself reaches
** 4098 ulp on [-4, -2) and loses every digit below -6, where 1 + erf cancels):
**   x >= -2 (|x| >= 1e-3): 16 ulp of the result (measured 10.2);
**   [-6, -2): 96 ulp (measured 60; the exp argument -z^2 + P(t) carries
**     f32 rounding that exp scales by z^2);
**   x < -6: absolute 1e-13 (the result is below 6e-9 there).
** Plus the special values: NaN stays NaN, +inf gives +inf, +-0 gives +-0.
** Skipped with a message where the CPU lacks AVX2 or FMA.
**
** simd_avx512.h's 16-lane pk_exp_ps512 and pk_gelu_erf_ps512 must give the
** 8-lane functions' bits, lane for lane: every 2039th float of [-100, 100]
** (exp's clamps at -87 and 88 included) and the special values. Skipped
** with a message without AVX-512F.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cpu.h"
#include "simd_avx2.h"
#include "simd_avx512.h"

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2,fma"))) static float gelu_one(float x)
{
    float out[8];
    _mm256_storeu_ps(out, pk_gelu_erf_ps(_mm256_set1_ps(x)));
    return out[0];
}
#endif

static void gelu_erf_within_bounds(void **state)
{
    (void)state;
#if defined(__x86_64__) || defined(__i386__)
    if (!pk_cpu_avx2(PK_CPU_FMA)) {
        print_message("AVX2+FMA is not available on this CPU (or capped by LOOM_CPU_MAX_ISA): skipped\n");
        skip();
    }
    int64_t n = 0, bad = 0;
    for (float x = -12.0f; x <= 12.0f; x = nextafterf(x, 100.0f)) {
        if (n++ % 3 != 0 || fabsf(x) < 1e-3f)
            continue;
        double ref = 0.5 * (double)x * (1.0 + erf((double)x / sqrt(2.0)));
        double err = fabs((double)gelu_one(x) - ref), ulp = ref != 0 ? ldexp(1.0, ilogb(ref) - 23) : 0;
        double bound = x >= -2.0f ? 16 * ulp : x >= -6.0f ? 96 * ulp : 1e-13;
        if (err > bound && bad++ < 5)
            print_message("gelu(%.9g) = %.9g, want %.9g (error %.3g > bound %.3g)\n", (double)x,
                          (double)gelu_one(x), ref, err, bound);
    }
    assert_int_equal(bad, 0);
    assert_true(isnan(gelu_one(NAN)));
    assert_true(isinf(gelu_one(INFINITY)) && gelu_one(INFINITY) > 0);
    assert_true(gelu_one(0.0f) == 0.0f && !signbit(gelu_one(0.0f)));
    assert_true(gelu_one(-0.0f) == 0.0f && signbit(gelu_one(-0.0f)));
#else
    print_message("not an x86 build: skipped\n");
    skip();
#endif
}

#if defined(__x86_64__) || defined(__i386__)
/* 16 floats from x[0..16): out8 by the 8-lane functions, out16 by the 16-lane ones. */
__attribute__((target("avx512f,avx2,fma"))) static void both_widths(const float *x, int gelu, float *out8,
                                                                    float *out16)
{
    for (int h = 0; h < 2; h++) {
        __m256 v = _mm256_loadu_ps(x + 8 * h);
        _mm256_storeu_ps(out8 + 8 * h, gelu ? pk_gelu_erf_ps(v) : pk_exp_ps(v));
    }
    __m512 v = _mm512_loadu_ps(x);
    _mm512_storeu_ps(out16, gelu ? pk_gelu_erf_ps512(v) : pk_exp_ps512(v));
}
#endif

static void avx512_forms_give_the_avx2_bits(void **state)
{
    (void)state;
#if defined(__x86_64__) || defined(__i386__)
    if (!(pk_cpu_features() & LOOM_CPU_AVX512F) || !pk_cpu_avx2(PK_CPU_FMA)) {
        print_message("AVX-512F is not available on this CPU (or capped by LOOM_CPU_MAX_ISA): skipped\n");
        skip();
    }
    float x[16], a[16], b[16];
    int64_t n = 0, k = 0, differ = 0, checked = 0;
    const float special[] = { NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-30f, -1e-30f, 87.5f, -88.5f };
    for (float v = -100.0f;; v = nextafterf(v, 1000.0f)) {
        const int done = v > 100.0f;
        if (!done && n++ % 2039 != 0)
            continue;
        x[k] = done ? special[k % (sizeof special / sizeof special[0])] : v;
        k++;
        if (k < 16 && !done)
            continue;
        for (; k < 16; k++)
            x[k] = special[k % (sizeof special / sizeof special[0])];
        for (int gelu = 0; gelu < 2; gelu++) {
            both_widths(x, gelu, a, b);
            for (int i = 0; i < 16; i++, checked++)
                if (memcmp(&a[i], &b[i], sizeof a[i]) != 0 && differ++ < 5)
                    print_message("%s(%.9g): 8 lanes %.9g, 16 lanes %.9g\n", gelu ? "gelu" : "exp",
                                  (double)x[i], (double)a[i], (double)b[i]);
        }
        k = 0;
        if (done)
            break;
    }
    print_message("%lld values compared\n", (long long)checked);
    assert_int_equal(differ, 0);
#else
    print_message("not an x86 build: skipped\n");
    skip();
#endif
}

int main(void)
{
    pk_cpu_init(NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gelu_erf_within_bounds),
        cmocka_unit_test(avx512_forms_give_the_avx2_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
