/* SPDX-License-Identifier: BSD-3-Clause */
/*
** suggest.c - the closest known name to a mistyped one, for "did you mean"
** in error messages and configuration warnings.
**
** Distance: optimal string alignment (Levenshtein plus adjacent
** transpositions, each edit 1), so 'nsm' -> 'nms' is 1. A candidate is
** offered only within max(1, len/3) edits of the word (rounded down, at
** most 3): close enough that it is the likely intent, not any name.
*/
#include <string.h>

#include "internal.h"

#define SUGGEST_MAX_LEN 128

static int osa_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > SUGGEST_MAX_LEN || m > SUGGEST_MAX_LEN)
        return 1 << 20;
    /* three rows of the DP table: i-2, i-1, i */
    int rows[3][SUGGEST_MAX_LEN + 1];
    for (size_t j = 0; j <= m; j++)
        rows[0][j] = (int)j;
    for (size_t i = 1; i <= n; i++) {
        int *cur = rows[i % 3], *prev = rows[(i - 1) % 3], *prev2 = rows[(i + 1) % 3];
        cur[0] = (int)i;
        for (size_t j = 1; j <= m; j++) {
            int cost = a[i - 1] == b[j - 1] ? 0 : 1;
            int best = prev[j] + 1;
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            if (prev[j - 1] + cost < best)
                best = prev[j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && prev2[j - 2] + 1 < best)
                best = prev2[j - 2] + 1;
            cur[j] = best;
        }
    }
    return rows[n % 3][m];
}

const char *loom__closest(const char *word, const char *const *candidates, int64_t n)
{
    if (word == NULL)
        return NULL;
    int limit = (int)strlen(word) / 3;
    if (limit < 1)
        limit = 1;
    if (limit > 3)
        limit = 3;
    const char *best = NULL;
    int best_d = limit + 1;
    for (int64_t i = 0; i < n; i++) {
        if (candidates[i] == NULL || strcmp(candidates[i], word) == 0)
            continue;
        int d = osa_distance(word, candidates[i]);
        if (d < best_d) {
            best_d = d;
            best = candidates[i];
        }
    }
    return best;
}

LOOM_API const char *loom_suggest(const char *word, const char *const *candidates, int64_t n)
{
    return candidates != NULL && n > 0 ? loom__closest(word, candidates, n) : NULL;
}
