/* SPDX-License-Identifier: BSD-3-Clause */
/*
** pcg64.c - numpy's SeedSequence and PCG64 (pcg64.h), from their
** published definitions (numpy/random/bit_generator.pyx: the hash and mix
** constants; the PCG family's XSL-RR output).
*/
#include "pcg64.h"

__extension__ typedef unsigned __int128 rl_u128;

/* SeedSequence's constants */
#define SS_INIT_A 0x43b0d7e5u
#define SS_MULT_A 0x931e8875u
#define SS_INIT_B 0x8b51f9ddu
#define SS_MULT_B 0x58f38dedu
#define SS_MIX_MULT_L 0xca01f9ddu
#define SS_MIX_MULT_R 0x4973f715u
#define SS_XSHIFT 16
#define SS_POOL 4

static uint32_t ss_hashmix(uint32_t value, uint32_t *hash_const)
{
    value ^= *hash_const;
    *hash_const *= SS_MULT_A;
    value *= *hash_const;
    value ^= value >> SS_XSHIFT;
    return value;
}

static uint32_t ss_mix(uint32_t x, uint32_t y)
{
    uint32_t r = SS_MIX_MULT_L * x - SS_MIX_MULT_R * y;
    return r ^ (r >> SS_XSHIFT);
}

/* SeedSequence(seed).generate_state(4, uint64) as 8 little-endian words */
static void ss_generate(uint64_t seed, uint32_t out[8])
{
    uint32_t entropy[2] = { (uint32_t)seed, (uint32_t)(seed >> 32) };
    const int n_entropy = (seed >> 32) != 0 ? 2 : 1;
    uint32_t pool[SS_POOL], hc = SS_INIT_A;
    for (int i = 0; i < SS_POOL; i++)
        pool[i] = ss_hashmix(i < n_entropy ? entropy[i] : 0u, &hc);
    for (int s = 0; s < SS_POOL; s++)
        for (int d = 0; d < SS_POOL; d++)
            if (s != d)
                pool[d] = ss_mix(pool[d], ss_hashmix(pool[s], &hc));
    /* entropy beyond the pool size: none for a 64-bit seed */
    uint32_t hb = SS_INIT_B;
    for (int i = 0; i < 8; i++) {
        uint32_t v = pool[i % SS_POOL];
        v ^= hb;
        hb *= SS_MULT_B;
        v *= hb;
        v ^= v >> SS_XSHIFT;
        out[i] = v;
    }
}

static rl_u128 u128(uint64_t hi, uint64_t lo) { return ((rl_u128)hi << 64) | lo; }

static void pcg_step(rl_pcg64 *g)
{
    static const uint64_t mult_hi = 0x2360ED051FC65DA4ull, mult_lo = 0x4385DF649FCCF645ull;
    const rl_u128 s = u128(g->state_hi, g->state_lo) * u128(mult_hi, mult_lo) + u128(g->inc_hi, g->inc_lo);
    g->state_hi = (uint64_t)(s >> 64);
    g->state_lo = (uint64_t)s;
}

void rl_pcg64_seed(rl_pcg64 *g, uint64_t seed)
{
    uint32_t w[8];
    ss_generate(seed, w);
    const uint64_t v0 = w[0] | (uint64_t)w[1] << 32, v1 = w[2] | (uint64_t)w[3] << 32;
    const uint64_t v2 = w[4] | (uint64_t)w[5] << 32, v3 = w[6] | (uint64_t)w[7] << 32;
    /* pcg64_set_seed: initstate = v0:v1, initseq = v2:v3; pcg64_srandom */
    const rl_u128 inc = (u128(v2, v3) << 1) | 1u;
    g->state_hi = g->state_lo = 0;
    g->inc_hi = (uint64_t)(inc >> 64);
    g->inc_lo = (uint64_t)inc;
    pcg_step(g);
    const rl_u128 s = u128(g->state_hi, g->state_lo) + u128(v0, v1);
    g->state_hi = (uint64_t)(s >> 64);
    g->state_lo = (uint64_t)s;
    pcg_step(g);
}

uint64_t rl_pcg64_next64(rl_pcg64 *g)
{
    pcg_step(g);
    const uint64_t x = g->state_hi ^ g->state_lo;
    const unsigned rot = (unsigned)(g->state_hi >> 58);
    return (x >> rot) | (x << ((64u - rot) & 63u));
}

double rl_pcg64_next_double(rl_pcg64 *g)
{
    return (double)(rl_pcg64_next64(g) >> 11) * (1.0 / 9007199254740992.0);
}

double rl_pcg64_uniform(rl_pcg64 *g, double low, double high)
{
    return low + (high - low) * rl_pcg64_next_double(g);
}
