/* SPDX-License-Identifier: BSD-3-Clause */
/*
** rng.h - the counter-based random numbers of every pack (drop_block,
** stochastic_depth, replay-buffer sampling, ...), shared by C and CUDA code.
**
** Draw i of a call with seed s is a pure function of (s, i): two rounds of
** the splitmix64 finaliser over s * golden + i. So a draw does not depend on
** the thread or block that computes it, the cpu and cuda kernels produce the
** same masks for the same seed, and a seed reproduces its output exactly.
** The uniform has 53 random bits; Bernoulli(p) is u < p (p = 1 always 1,
** p = 0 never).
*/
#ifndef LOOM_PACK_RNG_H
#define LOOM_PACK_RNG_H

#include <stdint.h>

#ifdef __CUDACC__
#define PK_RNG_FN __host__ __device__ static inline
#else
#define PK_RNG_FN static inline
#endif

PK_RNG_FN uint64_t pk_rng_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Uniform in [0, 1) for draw `index` of stream `seed`. */
PK_RNG_FN double pk_rng_uniform(uint64_t seed, uint64_t index)
{
    uint64_t z = pk_rng_mix(seed * UINT64_C(0x9e3779b97f4a7c15) + index + UINT64_C(0x632be59bd9b4e019));
    z = pk_rng_mix(z ^ seed);
    return (double)(z >> 11) * 0x1p-53;
}

/* 1 with probability p. */
PK_RNG_FN int pk_rng_bernoulli(uint64_t seed, uint64_t index, double p)
{
    return pk_rng_uniform(seed, index) < p;
}

#endif /* LOOM_PACK_RNG_H */
