/* SPDX-License-Identifier: BSD-3-Clause */
/*
** td_nts.h - tensordict's NonTensorStack in the TensorDict container: a
** non-tensor entry with `stacked` set holds one JSON value per element of
** its dict's batch, as nested JSON arrays of exactly the batch shape (the
** layout NonTensorStack.tolist() gives and tensordict's memmap writes as
** "data"). A stack over a batch of no dims is a plain NonTensorData.
** These functions move elements the way the tensor leaves move: gather
** along a batch dim (index, split, unbind, replay samples), a new dim of
** one (stack), concatenation (cat, stack); values are duplicated, never
** shared. NULL results set the error (pk_host->fail) unless said otherwise.
*/
#ifndef LOOM_RL_TD_NTS_H
#define LOOM_RL_TD_NTS_H

#include "td.h"

/* Whether v nests as arrays of exactly batch[ndim] (no error set). */
int rl_nts_fits(const cJSON *v, const int64_t *batch, int32_t ndim);

/* The elements of an entry in row-major batch order, borrowed: a stack's
** leaves, or a plain value repeated. *count = prod(batch); NULL on OOM. */
const cJSON **rl_nts_elements(const rl_td_entry *e, const int64_t *batch, int32_t ndim, int64_t *count);

/* Nested arrays of batch[ndim] from count = prod(batch) elements, each
** duplicated; ndim 0: a duplicate of the one element. */
cJSON *rl_nts_nest(const cJSON *const *elems, const int64_t *batch, int32_t ndim);

/* An entry's value moved as its dict: gather rows idx[n] along dim (squeeze:
** n == 1 and the dim removed), or (idx NULL) a new dim of one at dim.
** Plain values stay plain; *stacked tells what the result is. */
loom_status rl_nts_map(const rl_td_entry *e, const int64_t *batch, int32_t ndim, int32_t dim, const int64_t *idx,
                       int64_t n, int squeeze, cJSON **out, int *stacked);

/* The entries es[n] of dicts concatenated along dim (batches[k] their
** batch_size, out_batch the result's): equal plain values stay one plain
** value, anything else becomes a stack. */
loom_status rl_nts_cat(const rl_td_entry *const *es, const int64_t *const *batches, int64_t n, int32_t ndim,
                       int32_t dim, const int64_t *out_batch, cJSON **out, int *stacked);

#endif /* LOOM_RL_TD_NTS_H */
