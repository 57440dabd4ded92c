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
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <cmocka.h>

#include "cpu.h"
#include "simd_avx2.h"

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

int main(void)
{
    pk_cpu_init(NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gelu_erf_within_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
