/* SPDX-License-Identifier: BSD-3-Clause */
/*
** boxes_sort.c - orders for nms and batched_nms (see boxes_sort.h).
** The radix sort skips digit positions where every key agrees, so f32
** scores (widened to f64: 29 zero low bits) take about four passes.
*/
#include <math.h>
#include <string.h>

#include "boxes_sort.h"

uint64_t bx_desc_key(double v)
{
    uint64_t u;
    if (isnan(v))
        return 0;                        /* NaN first */
    if (v == 0)
        v = 0;                           /* -0.0 ties with 0.0 */
    memcpy(&u, &v, sizeof u);
    u = (u >> 63) ? ~u : u | (UINT64_C(1) << 63);   /* increasing with v */
    return ~u + 1;                       /* decreasing with v; NaN's 0 stays first */
}

void bx_radix_sort(uint64_t *keys, int64_t *vals, int64_t n, uint64_t *tmp_keys, int64_t *tmp_vals)
{
    uint64_t all_and = ~UINT64_C(0), all_or = 0;
    for (int64_t i = 0; i < n; i++) {
        all_and &= keys[i];
        all_or |= keys[i];
    }
    uint64_t *k = keys, *tk = tmp_keys;
    int64_t *v = vals, *tv = tmp_vals;
    for (int shift = 0; shift < 64; shift += 8) {
        if ((((all_and ^ all_or) >> shift) & 0xff) == 0)
            continue;                    /* every key has the same digit here */
        int64_t count[257] = { 0 };
        for (int64_t i = 0; i < n; i++)
            count[((k[i] >> shift) & 0xff) + 1]++;
        for (int d = 0; d < 256; d++)
            count[d + 1] += count[d];
        for (int64_t i = 0; i < n; i++) {
            int64_t at = count[(k[i] >> shift) & 0xff]++;
            tk[at] = k[i];
            tv[at] = v[i];
        }
        uint64_t *sk = k; k = tk; tk = sk;
        int64_t *sv = v; v = tv; tv = sv;
    }
    if (k != keys) {
        memcpy(keys, k, (size_t)n * sizeof *keys);
        memcpy(vals, v, (size_t)n * sizeof *vals);
    }
}

/* ---------------------------------------------------- std::sort replica */

/* torch's descending comparator: NaN before numbers, then greater first */
static int comp(const bx_pair *a, const bx_pair *b)
{
    return (isnan(a->v) && !isnan(b->v)) || a->v > b->v;
}

static void swap(bx_pair *a, bx_pair *b)
{
    bx_pair t = *a;
    *a = *b;
    *b = t;
}

static void move_median_to_first(bx_pair *result, bx_pair *a, bx_pair *b, bx_pair *c)
{
    if (comp(a, b)) {
        if (comp(b, c))
            swap(result, b);
        else if (comp(a, c))
            swap(result, c);
        else
            swap(result, a);
    } else if (comp(a, c)) {
        swap(result, a);
    } else if (comp(b, c)) {
        swap(result, c);
    } else {
        swap(result, b);
    }
}

static bx_pair *unguarded_partition(bx_pair *first, bx_pair *last, const bx_pair *pivot)
{
    for (;;) {
        while (comp(first, pivot))
            first++;
        last--;
        while (comp(pivot, last))
            last--;
        if (!(first < last))
            return first;
        swap(first, last);
        first++;
    }
}

static void adjust_heap(bx_pair *first, int64_t hole, int64_t len, bx_pair value)
{
    const int64_t top = hole;
    int64_t child = hole;
    while (child < (len - 1) / 2) {
        child = 2 * (child + 1);
        if (comp(first + child, first + child - 1))
            child--;
        first[hole] = first[child];
        hole = child;
    }
    if ((len & 1) == 0 && child == (len - 2) / 2) {
        child = 2 * (child + 1);
        first[hole] = first[child - 1];
        hole = child - 1;
    }
    int64_t parent = (hole - 1) / 2;
    while (hole > top && comp(first + parent, &value)) {
        first[hole] = first[parent];
        hole = parent;
        parent = (hole - 1) / 2;
    }
    first[hole] = value;
}

static void heap_sort(bx_pair *first, bx_pair *last)
{
    int64_t n = last - first;
    if (n >= 2)
        for (int64_t parent = (n - 2) / 2;; parent--) {
            adjust_heap(first, parent, n, first[parent]);
            if (parent == 0)
                break;
        }
    while (last - first > 1) {
        last--;
        bx_pair value = *last;
        *last = *first;
        adjust_heap(first, 0, last - first, value);
    }
}

static void introsort_loop(bx_pair *first, bx_pair *last, int depth)
{
    while (last - first > 16) {
        if (depth == 0) {
            heap_sort(first, last);
            return;
        }
        depth--;
        bx_pair *mid = first + (last - first) / 2;
        move_median_to_first(first, first + 1, mid, last - 1);
        bx_pair *cut = unguarded_partition(first + 1, last, first);
        introsort_loop(cut, last, depth);
        last = cut;
    }
}

static void unguarded_linear_insert(bx_pair *last)
{
    bx_pair val = *last, *next = last - 1;
    while (comp(&val, next)) {
        *last = *next;
        last = next;
        next--;
    }
    *last = val;
}

static void insertion_sort(bx_pair *first, bx_pair *last)
{
    if (first == last)
        return;
    for (bx_pair *i = first + 1; i != last; i++) {
        if (comp(i, first)) {
            bx_pair val = *i;
            memmove(first + 1, first, (size_t)(i - first) * sizeof *first);
            *first = val;
        } else {
            unguarded_linear_insert(i);
        }
    }
}

void bx_introsort_desc(bx_pair *a, int64_t n)
{
    if (n <= 1)
        return;
    int lg = 63 - __builtin_clzll((unsigned long long)n);
    introsort_loop(a, a + n, 2 * lg);
    if (n > 16) {
        insertion_sort(a, a + 16);
        for (bx_pair *i = a + 16; i != a + n; i++)
            unguarded_linear_insert(i);
    } else {
        insertion_sort(a, a + n);
    }
}
