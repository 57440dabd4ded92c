/* SPDX-License-Identifier: BSD-3-Clause */
/*
** value_gae_avx2.c - the AVX2 body of rl.generalized_advantage_estimate
** for the [outer, T, 1] layout (torchrl's [*B, T, 1] values), the one
** value_cpu.c picks when the core's CPU features allow AVX2.
**
** The backward recursion A_t = delta_t + disc_t * A_{t+1} is serial in t,
** so the vector runs across chains: a block of 8 (f32) or 4 (f64) rows.
** Each row's time steps are contiguous, so for 8 (4) steps at a time the
** block computes delta and disc row by row (loads along time), transposes
** them in registers so one vector holds one step of every row, runs the 8
** (4) steps of the recursion, and transposes the advantages back. The
** time steps past the last full group of 8 (4), at the end of each row,
** run first through the same scalar formula. The operations are those of
** the portable body (value_cpu_tmpl.h), in its order and without fused
** multiply-adds, so both give the same bits.
*/
#include <stdint.h>
#include <string.h>

#include "value.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define RL_AVX2 __attribute__((target("avx2,fma")))

RL_AVX2 static inline void rl_transpose8_ps(__m256 r[8])
{
    __m256 t[8], s[8];
    for (int k = 0; k < 8; k += 2) {
        t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
        t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
    }
    for (int k = 0; k < 8; k += 4) {
        s[k] = _mm256_shuffle_ps(t[k], t[k + 2], 0x44);
        s[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], 0xEE);
        s[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0x44);
        s[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0xEE);
    }
    for (int k = 0; k < 4; k++) {
        r[k] = _mm256_permute2f128_ps(s[k], s[k + 4], 0x20);
        r[k + 4] = _mm256_permute2f128_ps(s[k], s[k + 4], 0x31);
    }
}

RL_AVX2 static inline void rl_transpose4_pd(__m256d r[4])
{
    const __m256d t0 = _mm256_unpacklo_pd(r[0], r[1]), t1 = _mm256_unpackhi_pd(r[0], r[1]);
    const __m256d t2 = _mm256_unpacklo_pd(r[2], r[3]), t3 = _mm256_unpackhi_pd(r[2], r[3]);
    r[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
    r[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
    r[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
    r[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}

/* All ones in the lanes whose flag byte is 0 (not done / not terminated). */
RL_AVX2 static inline __m256 rl_clear8_ps(const uint8_t *p)
{
    const __m256i f = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)p));
    return _mm256_castsi256_ps(_mm256_cmpeq_epi32(f, _mm256_setzero_si256()));
}

RL_AVX2 static inline __m256d rl_clear4_pd(const uint8_t *p)
{
    int32_t bytes;
    memcpy(&bytes, p, sizeof bytes);
    const __m256i f = _mm256_cvtepu8_epi64(_mm_cvtsi32_si128(bytes));
    return _mm256_castsi256_pd(_mm256_cmpeq_epi64(f, _mm256_setzero_si256()));
}

/* The scalar steps [t_lo, T) of one row, last first (value_cpu_tmpl.h's formula). */
#define RL_GAE_TAIL(S, j, row, t_lo)                                                                  \
    do {                                                                                               \
        const S *v_ = (j)->state_value, *nv_ = (j)->next_state_value, *r_ = (j)->reward;              \
        S *adv_ = (j)->advantage, *vt_ = (j)->value_target;                                            \
        const S gamma_ = (S)(j)->gamma, gl_ = (S)(j)->gamma_lmbda;                                     \
        for (int64_t t_ = T - 1; t_ >= (t_lo); t_--) {                                                 \
            const int64_t x_ = (row) + t_;                                                             \
            const S prev_ = t_ == T - 1 ? (S)0 : adv_[x_ + 1];                                         \
            const S delta_ = (r_[x_] + (gamma_ * (S)((j)->terminated[x_] == 0)) * nv_[x_]) - v_[x_];   \
            const S a_ = delta_ + prev_ * (gl_ * (S)((j)->done[x_] == 0));                             \
            adv_[x_] = a_;                                                                             \
            vt_[x_] = a_ + v_[x_];                                                                     \
        }                                                                                              \
    } while (0)

RL_AVX2 static void rl_gae_block_f32(const rl_gae_job *j, int64_t o0)
{
    const int64_t T = j->lay.T, Tv = T & ~(int64_t)7;
    const float *v = j->state_value, *nv = j->next_state_value, *r = j->reward;
    float *adv = j->advantage, *vt = j->value_target;
    float carry[8];
    for (int k = 0; k < 8; k++) {
        RL_GAE_TAIL(float, j, (o0 + k) * T, Tv);
        carry[k] = Tv < T ? adv[(o0 + k) * T + Tv] : 0.0f;
    }
    const __m256 gamma = _mm256_set1_ps(j->gamma), gl = _mm256_set1_ps(j->gamma_lmbda);
    __m256 prev = _mm256_loadu_ps(carry);
    for (int64_t c = Tv - 8; c >= 0; c -= 8) {
        __m256 delta[8], disc[8], val[8];
        for (int k = 0; k < 8; k++) {
            const int64_t x = (o0 + k) * T + c;
            val[k] = _mm256_loadu_ps(v + x);
            const __m256 g_nt = _mm256_and_ps(rl_clear8_ps(j->terminated + x), gamma);
            delta[k] = _mm256_sub_ps(_mm256_add_ps(_mm256_loadu_ps(r + x), _mm256_mul_ps(g_nt, _mm256_loadu_ps(nv + x))),
                                     val[k]);
            disc[k] = _mm256_and_ps(rl_clear8_ps(j->done + x), gl);
        }
        rl_transpose8_ps(delta);
        rl_transpose8_ps(disc);
        for (int s = 7; s >= 0; s--)
            delta[s] = prev = _mm256_add_ps(delta[s], _mm256_mul_ps(prev, disc[s]));
        rl_transpose8_ps(delta);
        for (int k = 0; k < 8; k++) {
            const int64_t x = (o0 + k) * T + c;
            _mm256_storeu_ps(adv + x, delta[k]);
            _mm256_storeu_ps(vt + x, _mm256_add_ps(delta[k], val[k]));
        }
    }
}

RL_AVX2 static void rl_gae_block_f64(const rl_gae_job *j, int64_t o0)
{
    const int64_t T = j->lay.T, Tv = T & ~(int64_t)3;
    const double *v = j->state_value, *nv = j->next_state_value, *r = j->reward;
    double *adv = j->advantage, *vt = j->value_target;
    double carry[4];
    for (int k = 0; k < 4; k++) {
        RL_GAE_TAIL(double, j, (o0 + k) * T, Tv);
        carry[k] = Tv < T ? adv[(o0 + k) * T + Tv] : 0.0;
    }
    const __m256d gamma = _mm256_set1_pd((double)j->gamma), gl = _mm256_set1_pd((double)j->gamma_lmbda);
    __m256d prev = _mm256_loadu_pd(carry);
    for (int64_t c = Tv - 4; c >= 0; c -= 4) {
        __m256d delta[4], disc[4], val[4];
        for (int k = 0; k < 4; k++) {
            const int64_t x = (o0 + k) * T + c;
            val[k] = _mm256_loadu_pd(v + x);
            const __m256d g_nt = _mm256_and_pd(rl_clear4_pd(j->terminated + x), gamma);
            delta[k] = _mm256_sub_pd(_mm256_add_pd(_mm256_loadu_pd(r + x), _mm256_mul_pd(g_nt, _mm256_loadu_pd(nv + x))),
                                     val[k]);
            disc[k] = _mm256_and_pd(rl_clear4_pd(j->done + x), gl);
        }
        rl_transpose4_pd(delta);
        rl_transpose4_pd(disc);
        for (int s = 3; s >= 0; s--)
            delta[s] = prev = _mm256_add_pd(delta[s], _mm256_mul_pd(prev, disc[s]));
        rl_transpose4_pd(delta);
        for (int k = 0; k < 4; k++) {
            const int64_t x = (o0 + k) * T + c;
            _mm256_storeu_pd(adv + x, delta[k]);
            _mm256_storeu_pd(vt + x, _mm256_add_pd(delta[k], val[k]));
        }
    }
}

void rl_gae_blocks_avx2_f32(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const rl_gae_job *j = user;
    for (int64_t b = begin; b < end; b++) {
        const int64_t o0 = b * RL_GAE_BLOCK_F32;
        if (o0 + RL_GAE_BLOCK_F32 <= j->lay.outer)
            rl_gae_block_f32(j, o0);
        else
            rl_gae_rows_f32((void *)j, o0, j->lay.outer, thread_index);
    }
}

void rl_gae_blocks_avx2_f64(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const rl_gae_job *j = user;
    for (int64_t b = begin; b < end; b++) {
        const int64_t o0 = b * RL_GAE_BLOCK_F64;
        if (o0 + RL_GAE_BLOCK_F64 <= j->lay.outer)
            rl_gae_block_f64(j, o0);
        else
            rl_gae_rows_f64((void *)j, o0, j->lay.outer, thread_index);
    }
}

#else   /* not x86: value_cpu.c never picks these (pk_cpu_avx2 is 0) */

void rl_gae_blocks_avx2_f32(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const rl_gae_job *j = user;
    rl_gae_rows_f32(user, begin * RL_GAE_BLOCK_F32, end * RL_GAE_BLOCK_F32 < j->lay.outer ? end * RL_GAE_BLOCK_F32 : j->lay.outer, thread_index);
}

void rl_gae_blocks_avx2_f64(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const rl_gae_job *j = user;
    rl_gae_rows_f64(user, begin * RL_GAE_BLOCK_F64, end * RL_GAE_BLOCK_F64 < j->lay.outer ? end * RL_GAE_BLOCK_F64 : j->lay.outer, thread_index);
}

#endif
