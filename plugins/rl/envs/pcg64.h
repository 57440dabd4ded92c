/* SPDX-License-Identifier: BSD-3-Clause */
/*
** pcg64.h - the random stream gymnasium's environments draw their reset
** states from: seeding.np_random(seed) is
** numpy.random.Generator(PCG64(SeedSequence(seed))), and Generator.uniform
** is low + (high - low) * next_double. Reproduced here so a reset with the
** same seed gives gymnasium's state, bit for bit:
**   SeedSequence(seed): the seed's 32-bit words (little-endian, [0] for 0)
**     hashed into a pool of 4 words, generate_state(4, uint64);
**   PCG64 (XSL-RR 128/64): state = state * M + inc, output
**     rotr64(hi ^ lo, state >> 122), seeded with pcg64_srandom(initstate,
**     initseq) from those 4 words;
**   next_double: (next64 >> 11) * 2^-53.
*/
#ifndef LOOM_RL_PCG64_H
#define LOOM_RL_PCG64_H

#include <stdint.h>

typedef struct rl_pcg64 {
    uint64_t state_hi, state_lo, inc_hi, inc_lo;
} rl_pcg64;

/* PCG64(SeedSequence(seed)) for a non-negative integer seed. */
void rl_pcg64_seed(rl_pcg64 *g, uint64_t seed);
uint64_t rl_pcg64_next64(rl_pcg64 *g);
/* A double in [0, 1), numpy's next_double. */
double rl_pcg64_next_double(rl_pcg64 *g);
/* numpy Generator.uniform(low, high): low + (high - low) * next_double. */
double rl_pcg64_uniform(rl_pcg64 *g, double low, double high);

#endif /* LOOM_RL_PCG64_H */
