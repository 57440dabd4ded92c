/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fft_plans.c - the FFTW plan cache (fft_plans.h). Plans are measured
** (FFTW_MEASURE) on arrays of their own, so planning never touches a
** caller's data, and a plan is looked up without the lock once published.
*/
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include <fftw3.h>

#include "fft_plans.h"
#include "pack.h"

typedef struct plan_entry {
    struct plan_entry *next;
    audio_fft_kind kind;
    int64_t n;
    loom_dtype real;
    void *plan;
} plan_entry;

static pthread_mutex_t plan_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(plan_entry *) plans;

static void *find(audio_fft_kind kind, int64_t n, loom_dtype real)
{
    for (plan_entry *e = atomic_load_explicit(&plans, memory_order_acquire); e != NULL; e = e->next)
        if (e->kind == kind && e->n == n && e->real == real)
            return e->plan;
    return NULL;
}

/* FFTW's planner, under plan_lock. */
static void *make(audio_fft_kind kind, int64_t n, loom_dtype real)
{
    const int size = (int)n;
    const unsigned flags = FFTW_MEASURE | (kind == AUDIO_FFT_C2R ? FFTW_DESTROY_INPUT : 0);
    void *plan = NULL;
    if (kind == AUDIO_FFT_C2C_FWD || kind == AUDIO_FFT_C2C_BWD) {
        /* one transform of n points (rank 1, howmany 1, unit stride) */
        const int sign = kind == AUDIO_FFT_C2C_FWD ? FFTW_FORWARD : FFTW_BACKWARD;
        if (real == LOOM_DTYPE_F64) {
            fftw_complex *in = fftw_alloc_complex((size_t)n), *out = fftw_alloc_complex((size_t)n);
            if (in != NULL && out != NULL)
                plan = fftw_plan_many_dft(1, &size, 1, in, NULL, 1, size, out, NULL, 1, size, sign, flags);
            fftw_free(in);
            fftw_free(out);
        } else {
            fftwf_complex *in = fftwf_alloc_complex((size_t)n), *out = fftwf_alloc_complex((size_t)n);
            if (in != NULL && out != NULL)
                plan = fftwf_plan_many_dft(1, &size, 1, in, NULL, 1, size, out, NULL, 1, size, sign, flags);
            fftwf_free(in);
            fftwf_free(out);
        }
        return plan;
    }
    if (real == LOOM_DTYPE_F64) {
        double *r = fftw_alloc_real((size_t)n);
        fftw_complex *c = fftw_alloc_complex((size_t)n / 2 + 1);
        if (r != NULL && c != NULL)
            plan = kind == AUDIO_FFT_R2C ? (void *)fftw_plan_dft_r2c_1d(size, r, c, flags)
                                         : (void *)fftw_plan_dft_c2r_1d(size, c, r, flags);
        fftw_free(r);
        fftw_free(c);
    } else {
        float *r = fftwf_alloc_real((size_t)n);
        fftwf_complex *c = fftwf_alloc_complex((size_t)n / 2 + 1);
        if (r != NULL && c != NULL)
            plan = kind == AUDIO_FFT_R2C ? (void *)fftwf_plan_dft_r2c_1d(size, r, c, flags)
                                         : (void *)fftwf_plan_dft_c2r_1d(size, c, r, flags);
        fftwf_free(r);
        fftwf_free(c);
    }
    return plan;
}

void *audio_fft_plan(audio_fft_kind kind, int64_t n, loom_dtype real)
{
    void *plan = find(kind, n, real);
    if (plan != NULL)
        return plan;
    if (n < 1 || n > INT32_MAX) {
        pk_host->fail(LOOM_EINVAL, "'n_fft' %lld is out of FFTW's range", (long long)n);
        return NULL;
    }
    pthread_mutex_lock(&plan_lock);
    if ((plan = find(kind, n, real)) == NULL) {
        plan_entry *e = malloc(sizeof *e);
        if (e != NULL && (plan = make(kind, n, real)) != NULL) {
            *e = (plan_entry){ .next = atomic_load_explicit(&plans, memory_order_relaxed), .kind = kind, .n = n,
                               .real = real, .plan = plan };
            atomic_store_explicit(&plans, e, memory_order_release);
        } else {
            free(e);
        }
    }
    pthread_mutex_unlock(&plan_lock);
    if (plan == NULL)
        pk_host->fail(LOOM_ENOMEM, "FFTW could not plan a transform of size %lld", (long long)n);
    return plan;
}

void audio_fft_plans_free(void)
{
    pthread_mutex_lock(&plan_lock);
    plan_entry *e = atomic_exchange(&plans, NULL);
    while (e != NULL) {
        plan_entry *next = e->next;
        if (e->real == LOOM_DTYPE_F64)
            fftw_destroy_plan(e->plan);
        else
            fftwf_destroy_plan(e->plan);
        free(e);
        e = next;
    }
    pthread_mutex_unlock(&plan_lock);
}
