/* SPDX-License-Identifier: BSD-3-Clause */
/*
** shard_test.h - what the sharding checks (shard_check.c, ec_shard_check.c,
** dlrm_shard_check.c) share: this process's rank and world size, the seeded
** generator every rank draws the same data from, failures that name the rank,
** and the plan text written piece by piece. Each check is one program, so the
** state is static here; a check that needs a longer plan defines
** SHARD_TEST_PLAN_SIZE before including this.
*/
#ifndef LOOM_TESTS_REC_SHARD_TEST_H
#define LOOM_TESTS_REC_SHARD_TEST_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom/loom.h"

#ifndef SHARD_TEST_PLAN_SIZE
#define SHARD_TEST_PLAN_SIZE 16384
#endif

static int rank, world;

/* a 64-bit LCG: the same sequence on every rank for the same seed */
static uint64_t rng_state;
static uint32_t next_u32(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(rng_state >> 33);
}
static float uniform(void) { return (float)((next_u32() >> 8) * (1.0 / 16777216.0) * 2.0 - 1.0); }

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "rank %d: ", rank); fprintf(stderr, __VA_ARGS__); \
    fprintf(stderr, "\n"); exit(1); } } while (0)

static void die_loom(const char *what)
{
    fprintf(stderr, "rank %d: %s: %s\n", rank, what, loom_last_error());
    exit(1);
}

/* the plan's JSON text, appended to by put() */
static char plan_text[SHARD_TEST_PLAN_SIZE];

static void put(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void put(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t n = strlen(plan_text);
    vsnprintf(plan_text + n, sizeof plan_text - n, fmt, ap);
    va_end(ap);
}

#endif
