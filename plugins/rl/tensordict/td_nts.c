/* SPDX-License-Identifier: BSD-3-Clause */
/*
** td_nts.c - NonTensorStack values moved along batch dims (td_nts.h).
*/
#include "td_nts.h"

#include <stdlib.h>
#include <string.h>

#include "pack.h"

static int64_t prod(const int64_t *batch, int32_t ndim)
{
    int64_t n = 1;
    for (int32_t d = 0; d < ndim; d++)
        n *= batch[d];
    return n;
}

int rl_nts_fits(const cJSON *v, const int64_t *batch, int32_t ndim)
{
    if (ndim == 0)
        return v != NULL;
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != batch[0])
        return 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, v) {
        if (!rl_nts_fits(it, batch + 1, ndim - 1))
            return 0;
    }
    return 1;
}

static void collect(const cJSON *v, int32_t ndim, const cJSON **out, int64_t *at)
{
    if (ndim == 0) {
        out[(*at)++] = v;
        return;
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, v) collect(it, ndim - 1, out, at);
}

const cJSON **rl_nts_elements(const rl_td_entry *e, const int64_t *batch, int32_t ndim, int64_t *count)
{
    const int64_t n = prod(batch, ndim);
    const cJSON **out = malloc((size_t)(n > 0 ? n : 1) * sizeof *out);
    if (out == NULL) {
        pk_host->fail(LOOM_ENOMEM, "out of memory");
        return NULL;
    }
    if (e->stacked) {
        int64_t at = 0;
        collect(e->value, ndim, out, &at);
    } else {
        for (int64_t i = 0; i < n; i++)
            out[i] = e->value;
    }
    *count = n;
    return out;
}

static cJSON *nest_at(const cJSON *const *elems, const int64_t *batch, int32_t ndim, int64_t *at)
{
    if (ndim == 0)
        return cJSON_Duplicate(elems[(*at)++], 1);
    cJSON *a = cJSON_CreateArray();
    for (int64_t i = 0; a != NULL && i < batch[0]; i++) {
        cJSON *c = nest_at(elems, batch + 1, ndim - 1, at);
        if (c == NULL || !cJSON_AddItemToArray(a, c)) {
            cJSON_Delete(c);
            cJSON_Delete(a);
            return NULL;
        }
    }
    return a;
}

cJSON *rl_nts_nest(const cJSON *const *elems, const int64_t *batch, int32_t ndim)
{
    int64_t at = 0;
    cJSON *v = nest_at(elems, batch, ndim, &at);
    if (v == NULL)
        pk_host->fail(LOOM_ENOMEM, "out of memory");
    return v;
}

/* Row-major coordinates of flat index r over batch[ndim]. */
static void coords(int64_t r, const int64_t *batch, int32_t ndim, int64_t *c)
{
    for (int32_t d = ndim - 1; d >= 0; d--) {
        c[d] = batch[d] > 0 ? r % batch[d] : 0;
        r = batch[d] > 0 ? r / batch[d] : 0;
    }
}

static int64_t flat(const int64_t *c, const int64_t *batch, int32_t ndim)
{
    int64_t r = 0;
    for (int32_t d = 0; d < ndim; d++)
        r = r * batch[d] + c[d];
    return r;
}

loom_status rl_nts_map(const rl_td_entry *e, const int64_t *batch, int32_t ndim, int32_t dim, const int64_t *idx,
                       int64_t n, int squeeze, cJSON **out, int *stacked)
{
    if (!e->stacked) {
        *out = cJSON_Duplicate(e->value, 1);
        *stacked = 0;
        return *out != NULL ? LOOM_OK : pk_host->fail(LOOM_ENOMEM, "out of memory");
    }
    int64_t nb[LOOM_MAX_NDIM];
    int32_t nn = 0;
    for (int32_t d = 0; d < ndim; d++) {
        if (idx == NULL && d == dim)
            nb[nn++] = 1;
        if (d == dim && idx != NULL) {
            if (!squeeze)
                nb[nn++] = n;
        } else {
            nb[nn++] = batch[d];
        }
    }
    if (idx == NULL && dim == ndim)
        nb[nn++] = 1;
    int64_t count = 0;
    const cJSON **src = rl_nts_elements(e, batch, ndim, &count);
    const int64_t m = prod(nb, nn);
    const cJSON **dst = src != NULL ? malloc((size_t)(m > 0 ? m : 1) * sizeof *dst) : NULL;
    if (dst == NULL) {
        free(src);
        return src != NULL ? pk_host->fail(LOOM_ENOMEM, "out of memory") : LOOM_ENOMEM;
    }
    int64_t c[LOOM_MAX_NDIM + 1], o[LOOM_MAX_NDIM + 1];
    for (int64_t r = 0; r < m; r++) {
        coords(r, nb, nn, c);
        /* the source coordinates: drop the new dim, or index the gathered one */
        for (int32_t d = 0, k = 0; d < ndim; d++) {
            if (idx == NULL) {
                if (k == dim)
                    k++;
                o[d] = c[k++];
            } else if (d == dim) {
                o[d] = idx[squeeze ? 0 : c[k++]];
            } else {
                o[d] = c[k++];
            }
        }
        dst[r] = src[flat(o, batch, ndim)];
    }
    *out = rl_nts_nest(dst, nb, nn);
    *stacked = nn > 0;
    free(src);
    free(dst);
    return *out != NULL ? LOOM_OK : LOOM_ENOMEM;
}

loom_status rl_nts_cat(const rl_td_entry *const *es, const int64_t *const *batches, int64_t n, int32_t ndim,
                       int32_t dim, const int64_t *out_batch, cJSON **out, int *stacked)
{
    int same = 1;
    for (int64_t k = 1; same && k < n; k++)
        same = !es[k]->stacked && !es[0]->stacked && cJSON_Compare(es[k]->value, es[0]->value, 1);
    if (same && !es[0]->stacked) {
        *out = cJSON_Duplicate(es[0]->value, 1);
        *stacked = 0;
        return *out != NULL ? LOOM_OK : pk_host->fail(LOOM_ENOMEM, "out of memory");
    }
    const cJSON ***src = calloc((size_t)n, sizeof *src);
    const int64_t m = prod(out_batch, ndim);
    const cJSON **dst = malloc((size_t)(m > 0 ? m : 1) * sizeof *dst);
    loom_status st = src != NULL && dst != NULL ? LOOM_OK : pk_host->fail(LOOM_ENOMEM, "out of memory");
    for (int64_t k = 0; st == LOOM_OK && k < n; k++) {
        int64_t count;
        src[k] = rl_nts_elements(es[k], batches[k], ndim, &count);
        if (src[k] == NULL)
            st = LOOM_ENOMEM;
    }
    int64_t c[LOOM_MAX_NDIM];
    for (int64_t r = 0; st == LOOM_OK && r < m; r++) {
        coords(r, out_batch, ndim, c);
        int64_t k = 0;
        while (k + 1 < n && c[dim] >= batches[k][dim]) {
            c[dim] -= batches[k][dim];
            k++;
        }
        dst[r] = src[k][flat(c, batches[k], ndim)];
    }
    if (st == LOOM_OK) {
        *out = rl_nts_nest(dst, out_batch, ndim);
        *stacked = ndim > 0;
        if (*out == NULL)
            st = LOOM_ENOMEM;
    }
    for (int64_t k = 0; src != NULL && k < n; k++)
        free(src[k]);
    free(src);
    free(dst);
    return st;
}
