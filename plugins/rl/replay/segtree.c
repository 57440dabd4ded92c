/* SPDX-License-Identifier: BSD-3-Clause */
/*
** segtree.c - sum and min segment trees (segtree.h), one body per
** precision so every operation rounds exactly as torchrl's templates do.
*/
#include "segtree.h"

#include <math.h>
#include <stdlib.h>

#define DEFINE_TREE(T, SUF)                                                                        \
    static inline T op_##SUF(int is_min, T a, T b) { return is_min ? (a < b ? a : b) : a + b; }    \
    static void update_##SUF(rl_segtree *t, int64_t index, T value)                                \
    {                                                                                              \
        T *v = t->values;                                                                          \
        index |= t->capacity;                                                                      \
        for (v[index] = value; index > 1; index >>= 1)                                             \
            v[index >> 1] = op_##SUF(t->is_min, v[index], v[index ^ 1]);                           \
    }                                                                                              \
    static T query_##SUF(const rl_segtree *t, int64_t l, int64_t r)                                \
    {                                                                                              \
        const T *v = t->values;                                                                    \
        if (l <= 0 && r >= t->size)                                                                \
            return v[1];                                                                           \
        T ret = t->is_min ? (T)INFINITY : (T)0;                                                    \
        l |= t->capacity;                                                                          \
        r |= t->capacity;                                                                          \
        while (l < r) {                                                                            \
            if (l & 1)                                                                             \
                ret = op_##SUF(t->is_min, ret, v[l++]);                                            \
            if (r & 1)                                                                             \
                ret = op_##SUF(t->is_min, ret, v[--r]);                                            \
            l >>= 1;                                                                               \
            r >>= 1;                                                                               \
        }                                                                                          \
        return ret;                                                                                \
    }                                                                                              \
    static int64_t scan_##SUF(const rl_segtree *t, T value)                                        \
    {                                                                                              \
        const T *v = t->values;                                                                    \
        if (value > v[1])                                                                          \
            return t->size;                                                                        \
        int64_t index = 1;                                                                         \
        T cur = value;                                                                             \
        while (index < t->capacity) {                                                              \
            index <<= 1;                                                                           \
            const T lv = v[index];                                                                 \
            if (cur > lv) {                                                                        \
                cur -= lv;                                                                         \
                index |= 1;                                                                        \
            }                                                                                      \
        }                                                                                          \
        return index ^ t->capacity;                                                                \
    }                                                                                              \
    /* n scans at once, level by level: the misses of a group overlap */                           \
    static void scan_batch_##SUF(const rl_segtree *t, const double *value, int64_t n, int64_t *out)  \
    {                                                                                              \
        const T *v = t->values;                                                                    \
        enum { G = 32 };                                                                           \
        for (int64_t b = 0; b < n; b += G) {                                                       \
            const int64_t m = n - b < G ? n - b : G;                                               \
            int64_t index[G];                                                                      \
            T cur[G];                                                                              \
            for (int64_t g = 0; g < m; g++) {                                                      \
                cur[g] = (T)value[b + g];                                                          \
                index[g] = cur[g] > v[1] ? -1 : 1;                                                 \
            }                                                                                      \
            for (int64_t level = 1; level < t->capacity; level <<= 1)                              \
                for (int64_t g = 0; g < m; g++) {                                                  \
                    if (index[g] < 0)                                                              \
                        continue;                                                                  \
                    int64_t i = index[g] << 1;                                                     \
                    const T lv = v[i];                                                             \
                    if (cur[g] > lv) {                                                             \
                        cur[g] -= lv;                                                              \
                        i |= 1;                                                                    \
                    }                                                                              \
                    index[g] = i;                                                                  \
                    if (i < t->capacity)                                                           \
                        __builtin_prefetch(&v[i << 1]);                                            \
                }                                                                                  \
            for (int64_t g = 0; g < m; g++)                                                        \
                out[b + g] = index[g] < 0 ? t->size : index[g] ^ t->capacity;                      \
        }                                                                                          \
    }                                                                                              \
    /* n leaf updates in order (the last value of a slot wins), then their     \
    ** ancestors. Ascending slots (an extend's run of consecutive ones): level  \
    ** by level, each node once (the nodes of a level stay sorted, repeats     \
    ** dropped), about 2n nodes instead of n * depth. Other slots (random       \
    ** priority updates): groups of 64 chains climbed level by level, so their  \
    ** cache misses overlap. Either way every node ends op of its final         \
    ** children, as n single updates leave it. node[] holds n entries. */       \
    static void update_batch_##SUF(rl_segtree *t, const int64_t *index, int64_t n, const double *value, \
                                   int64_t n_value, int64_t *node)                                 \
    {                                                                                              \
        T *v = t->values;                                                                          \
        int sorted = 1;                                                                            \
        for (int64_t g = 0; g < n; g++) {                                                          \
            v[index[g] | t->capacity] = (T)value[n_value == 1 ? 0 : g];                            \
            sorted &= g == 0 || index[g - 1] <= index[g];                                          \
        }                                                                                          \
        if (!sorted) {                                                                             \
            enum { G = 64 };                                                                       \
            for (int64_t b = 0; b < n; b += G) {                                                   \
                const int64_t m = n - b < G ? n - b : G;                                           \
                for (int64_t g = 0; g < m; g++)                                                    \
                    node[g] = index[b + g] | t->capacity;                                          \
                for (int64_t level = t->capacity; level > 1; level >>= 1)                          \
                    for (int64_t g = 0; g < m; g++) {                                              \
                        const int64_t i = node[g];                                                 \
                        v[i >> 1] = op_##SUF(t->is_min, v[i & ~(int64_t)1], v[i | 1]);             \
                        node[g] = i >> 1;                                                          \
                    }                                                                              \
            }                                                                                      \
            return;                                                                                \
        }                                                                                          \
        int64_t m = 0;                                                                             \
        for (int64_t g = 0; g < n; g++) {                                                          \
            const int64_t p = (index[g] | t->capacity) >> 1;                                       \
            if (m == 0 || node[m - 1] != p)                                                        \
                node[m++] = p;                                                                     \
        }                                                                                          \
        while (m > 0) {                                                                            \
            for (int64_t g = 0; g < m; g++) {                                                      \
                const int64_t i = node[g];                                                         \
                v[i] = op_##SUF(t->is_min, v[i << 1], v[(i << 1) | 1]);                            \
            }                                                                                      \
            if (node[0] == 1)                                                                      \
                break;                                                                             \
            int64_t k = 0;                                                                         \
            for (int64_t g = 0; g < m; g++)                                                        \
                if (k == 0 || node[k - 1] != node[g] >> 1)                                         \
                    node[k++] = node[g] >> 1;                                                      \
            m = k;                                                                                 \
        }                                                                                          \
    }                                                                                              \
    static void rebuild_##SUF(rl_segtree *t)                                                       \
    {                                                                                              \
        T *v = t->values;                                                                          \
        for (int64_t i = t->capacity - 1; i > 0; --i)                                              \
            v[i] = op_##SUF(t->is_min, v[i << 1], v[(i << 1) | 1]);                                \
    }

DEFINE_TREE(float, f32)
DEFINE_TREE(double, f64)

void rl_segtree_clear(rl_segtree *t)
{
    for (int64_t i = 0; i < 2 * t->capacity; i++) {
        if (t->f64)
            ((double *)t->values)[i] = t->is_min ? INFINITY : 0.0;
        else
            ((float *)t->values)[i] = t->is_min ? INFINITY : 0.0f;
    }
}

int rl_segtree_init(rl_segtree *t, int64_t size, int f64, int is_min)
{
    t->size = size;
    t->f64 = f64;
    t->is_min = is_min;
    for (t->capacity = 1; t->capacity <= size; t->capacity <<= 1)
        ;
    t->values = malloc((size_t)(2 * t->capacity) * (f64 ? sizeof(double) : sizeof(float)));
    if (t->values == NULL)
        return -1;
    rl_segtree_clear(t);
    return 0;
}

void rl_segtree_free(rl_segtree *t)
{
    free(t->values);
    t->values = NULL;
}

double rl_segtree_at(const rl_segtree *t, int64_t index)
{
    return t->f64 ? ((const double *)t->values)[index | t->capacity]
                  : (double)((const float *)t->values)[index | t->capacity];
}

void rl_segtree_update(rl_segtree *t, int64_t index, double value)
{
    if (t->f64)
        update_f64(t, index, value);
    else
        update_f32(t, index, (float)value);
}

double rl_segtree_query(const rl_segtree *t, int64_t l, int64_t r)
{
    return t->f64 ? query_f64(t, l, r) : (double)query_f32(t, l, r);
}

int64_t rl_segtree_scan_lower_bound(const rl_segtree *t, double value)
{
    return t->f64 ? scan_f64(t, value) : scan_f32(t, (float)value);
}

void rl_segtree_scan_lower_bound_batch(const rl_segtree *t, const double *value, int64_t n, int64_t *out)
{
    if (t->f64)
        scan_batch_f64(t, value, n, out);
    else
        scan_batch_f32(t, value, n, out);
}

void rl_segtree_update_batch(rl_segtree *t, const int64_t *index, int64_t n, const double *value, int64_t n_value)
{
    if (n <= 0)
        return;
    int64_t stack[512];
    int64_t *node = n <= 512 ? stack : malloc((size_t)n * sizeof *node);
    if (node == NULL) {
        /* out of memory: one ancestor chain at a time, in order */
        for (int64_t g = 0; g < n; g++)
            rl_segtree_update(t, index[g], value[n_value == 1 ? 0 : g]);
        return;
    }
    if (t->f64)
        update_batch_f64(t, index, n, value, n_value, node);
    else
        update_batch_f32(t, index, n, value, n_value, node);
    if (node != stack)
        free(node);
}

void rl_segtree_rebuild(rl_segtree *t)
{
    if (t->f64)
        rebuild_f64(t);
    else
        rebuild_f32(t);
}
