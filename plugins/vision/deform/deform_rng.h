/*
** deform_rng.h - the counter-based random numbers of drop_block and
** stochastic_depth, shared by the C and CUDA code.
**
** Draw i of a call with seed s is a pure function of (s, i): two rounds of
** the splitmix64 finaliser over s * golden + i. So a draw does not depend on
** the thread or block that computes it, the cpu and cuda kernels produce the
** same masks for the same seed, and a seed reproduces its output exactly.
** The uniform has 53 random bits; Bernoulli(p) is u < p (p = 1 always 1,
** p = 0 never).
*/
#ifndef LOOM_VISION_DEFORM_RNG_H
#define LOOM_VISION_DEFORM_RNG_H

#include <stdint.h>

#ifdef __CUDACC__
#define DEFORM_RNG_FN __host__ __device__ static inline
#else
#define DEFORM_RNG_FN static inline
#endif

DEFORM_RNG_FN uint64_t deform_rng_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Uniform in [0, 1) for draw `index` of stream `seed`. */
DEFORM_RNG_FN double deform_rng_uniform(uint64_t seed, uint64_t index)
{
    uint64_t z = deform_rng_mix(seed * UINT64_C(0x9e3779b97f4a7c15) + index + UINT64_C(0x632be59bd9b4e019));
    z = deform_rng_mix(z ^ seed);
    return (double)(z >> 11) * 0x1p-53;
}

/* 1 with probability p. */
DEFORM_RNG_FN int deform_rng_bernoulli(uint64_t seed, uint64_t index, double p)
{
    return deform_rng_uniform(seed, index) < p;
}

#endif /* LOOM_VISION_DEFORM_RNG_H */
