/* SPDX-License-Identifier: BSD-3-Clause */
/*
** td.h - the TensorDict container of the rl pack, as its modules (the
** rl.tensordict object, memmap save/load, the replay buffers) use it.
**
** A TensorDict (rl_td) is an ordered map from string keys to entries, with
** a batch_size: every entry's leading dims equal it. An entry is
**   - a tensor leaf: compact, little-endian, row-major, held by a
**     reference-counted buffer (heap or a file mapping), so select, exclude,
**     update and clone share data instead of copying it;
**   - a nested TensorDict with the same batch_size (tuple keys such as
**     ("next", "reward") are paths through nested dicts);
**   - a NonTensorData: one JSON value (string, number, bool, null, list,
**     object) that stands for every element of the batch, as tensordict's
**     NonTensorData does; indexing keeps it as it is;
**   - a NonTensorStack (a non-tensor entry with `stacked`): one JSON value
**     per element, nested arrays of the batch shape (td_nts.h), made by
**     stacking or concatenating differing NonTensorData; indexing selects
**     elements, one element alone is a NonTensorData again.
**
** Keys are paths: arrays of NUL-terminated components. Every function
** returns LOOM_OK or the status of pk_host->fail with a message naming
** what is wrong; on failure nothing the caller owns has changed.
*/
#ifndef LOOM_RL_TD_H
#define LOOM_RL_TD_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "loom/plugin.h"

#define RL_TD_MAX_PATH 16   /* components of one key */

typedef enum rl_td_kind { RL_TD_TENSOR = 1, RL_TD_DICT = 2, RL_TD_NONTENSOR = 3 } rl_td_kind;

/* Bytes shared by leaves: freed (or unmapped) when the last one lets go. */
typedef struct rl_buf {
    int64_t refs;           /* atomic */
    void *data;
    size_t nbytes;
    int mapped;             /* 1: munmap(data, nbytes) at the end, else free */
} rl_buf;

typedef struct rl_leaf {
    loom_dtype dtype;
    int32_t ndim;
    int64_t shape[LOOM_MAX_NDIM];
    rl_buf *buf;            /* NULL for a leaf without elements */
} rl_leaf;

struct rl_td;

typedef struct rl_td_entry {
    char *key;
    rl_td_kind kind;
    rl_leaf leaf;           /* RL_TD_TENSOR */
    struct rl_td *td;       /* RL_TD_DICT */
    cJSON *value;           /* RL_TD_NONTENSOR */
    int stacked;            /* RL_TD_NONTENSOR: a NonTensorStack (value nests as the batch) */
} rl_td_entry;

typedef struct rl_td {
    int32_t batch_ndim;
    int64_t batch[LOOM_MAX_NDIM];
    int64_t n, cap;
    rl_td_entry *e;
} rl_td;

/* A key: n components. */
typedef struct rl_key {
    int32_t n;
    const char *part[RL_TD_MAX_PATH];
} rl_key;

/* ------------------------------------------------------------- buffers */

rl_buf *rl_buf_new(size_t nbytes);          /* zeroed; NULL (error set) when out of memory */
rl_buf *rl_buf_retain(rl_buf *b);           /* NULL-safe */
void rl_buf_release(rl_buf *b);             /* NULL-safe */

int64_t rl_leaf_numel(const rl_leaf *l);
size_t rl_leaf_nbytes(const rl_leaf *l);
static inline void *rl_leaf_data(const rl_leaf *l) { return l->buf != NULL ? l->buf->data : NULL; }

/* ------------------------------------------------------------ container */

rl_td *rl_td_new(int32_t batch_ndim, const int64_t *batch);   /* NULL (error set) when out of memory */
void rl_td_free(rl_td *td);                                   /* NULL-safe */
/* A copy of the structure that shares every leaf's buffer. */
rl_td *rl_td_clone(const rl_td *td);
/* A copy with every leaf's bytes copied too (writes to it never reach td). */
rl_td *rl_td_deep_copy(const rl_td *td);

/* Parse "a.b.c" (dotted) or a JSON array of strings '["a","b.c"]' into key,
** pointing into storage (a copy of text of `size` bytes). `what` names the
** argument in messages. */
loom_status rl_key_parse(const char *text, char *storage, size_t size, rl_key *key, const char *what);
/* "a.b.c", or the JSON array form when a component holds a dot (malloc'd). */
char *rl_key_format(const rl_key *key);

rl_td_entry *rl_td_find(const rl_td *td, const char *key);
/* The entry at key, or NULL (no error set) when there is none. */
rl_td_entry *rl_td_lookup(const rl_td *td, const rl_key *key);

/* Set a tensor leaf: data (compact, ndim dims) is copied. The leaf's leading
** dims must equal the batch_size; intermediate dicts are made as needed. */
loom_status rl_td_set_tensor(rl_td *td, const rl_key *key, loom_dtype dtype, int32_t ndim, const int64_t *shape,
                             const void *data);
/* Set a leaf that shares leaf->buf (retained). */
loom_status rl_td_set_leaf(rl_td *td, const rl_key *key, const rl_leaf *leaf);
/* Set a NonTensorData; takes ownership of value (also on failure). */
loom_status rl_td_set_json(rl_td *td, const rl_key *key, cJSON *value);
/* Set a NonTensorStack: value (owned, also on failure) nests as arrays of
** the batch_size of the dict at key's parent, one value per element
** (LOOM_EINVAL naming the key otherwise); a batch of no dims makes it a
** NonTensorData. */
loom_status rl_td_set_json_stack(rl_td *td, const rl_key *key, cJSON *value);
/* Set a copy of the non-tensor entry e (NonTensorData or NonTensorStack). */
loom_status rl_td_put_non_tensor(rl_td *td, const rl_key *key, const rl_td_entry *e);
/* Set a nested TensorDict; takes ownership of sub (also on failure). */
loom_status rl_td_set_dict(rl_td *td, const rl_key *key, rl_td *sub);
/* Remove an entry; LOOM_ENOENT (error set) when there is none. */
loom_status rl_td_remove(rl_td *td, const rl_key *key);

/* ----------------------------------------------------------- operations */

/* One index along batch dim 0, as td[index] takes it. */
typedef enum rl_index_kind { RL_INDEX_INT = 1, RL_INDEX_SLICE, RL_INDEX_MASK, RL_INDEX_TENSOR } rl_index_kind;
typedef struct rl_index {
    rl_index_kind kind;
    int64_t i;                       /* INT: may be negative */
    int64_t start, stop, step;       /* SLICE: Python's rules (step > 0; INT64_MIN/MAX for open ends) */
    const uint8_t *mask;             /* MASK: n bools */
    const int64_t *idx;              /* TENSOR: n indices, each may be negative */
    int64_t n;
} rl_index;
loom_status rl_td_index(const rl_td *td, const rl_index *index, rl_td **out);
/* Gather rows idx[0..n) (already in range) along batch dim `dim`. */
loom_status rl_td_gather(const rl_td *td, int32_t dim, const int64_t *idx, int64_t n, int squeeze, rl_td **out);

/* Stack (a new batch dim at dim) and cat (along batch dim dim) n dicts with
** the same keys, leaf dtypes and shapes (cat: but for dim). NonTensorData
** of equal values stay one NonTensorData; differing ones (or stacks) make
** a NonTensorStack of every element's value. */
loom_status rl_td_stack(const rl_td *const *tds, int64_t n, int32_t dim, rl_td **out);
loom_status rl_td_cat(const rl_td *const *tds, int64_t n, int32_t dim, rl_td **out);
/* Split along batch dim dim into pieces of sizes[0..n_sizes) (summing to
** the dim) or, with n_sizes == 1 and sizes[0] = s, pieces of s (the last
** smaller); unbind removes the dim. *out_n dicts into a malloc'd *out. */
loom_status rl_td_split(const rl_td *td, const int64_t *sizes, int64_t n_sizes, int32_t dim, rl_td ***out,
                        int64_t *out_n);
loom_status rl_td_unbind(const rl_td *td, int32_t dim, rl_td ***out, int64_t *out_n);
void rl_td_free_list(rl_td **tds, int64_t n);

/* Replace every tensor leaf by fn's result (out is filled by fn with a new
** buffer); batch_size becomes new_batch (or stays when new_batch_ndim < 0). */
typedef loom_status (*rl_td_apply_fn)(void *user, const rl_key *key, const rl_leaf *in, rl_leaf *out);
loom_status rl_td_apply(const rl_td *td, rl_td_apply_fn fn, void *user, rl_td **out);

loom_status rl_td_flatten_keys(const rl_td *td, const char *sep, rl_td **out);
loom_status rl_td_unflatten_keys(const rl_td *td, const char *sep, rl_td **out);
/* Set every leaf of src into dst (sharing buffers), nested dicts merged. */
loom_status rl_td_update(rl_td *dst, const rl_td *src);
/* Only the keys listed (a nested key keeps its path), or all but them.
** strict: a listed key that is absent is an error. */
loom_status rl_td_select(const rl_td *td, const rl_key *keys, int64_t n, int strict, rl_td **out);
loom_status rl_td_exclude(const rl_td *td, const rl_key *keys, int64_t n, rl_td **out);

/* Visit every leaf (tensor or non-tensor) depth first in insertion order. */
typedef loom_status (*rl_td_visit_fn)(void *user, const rl_key *key, const rl_td_entry *e);
loom_status rl_td_visit(const rl_td *td, rl_td_visit_fn fn, void *user);

/* dtypes as torch spells them ("torch.float32"); NULL / INVALID when none. */
const char *rl_dtype_torch_name(loom_dtype dtype);
loom_dtype rl_dtype_from_torch_name(const char *name);

#endif /* LOOM_RL_TD_H */
