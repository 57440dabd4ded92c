/* SPDX-License-Identifier: BSD-3-Clause */
/*
** rb.h - the rl.replay_buffer object: what its files share. One buffer is
** a storage (a TensorDict of batch [capacity], in memory or memory-mapped
** in tensordict's layout under scratch_dir), a writer (round-robin or
** max-value) and a sampler (random, without replacement, prioritized), as
** torchrl's ReplayBuffer(storage, writer, sampler) composes them. The
** storage is made at the first extend from the structure of that data
** (LazyTensorStorage / LazyMemmapStorage). Every method holds the buffer's
** lock for the whole call.
*/
#ifndef LOOM_RL_RB_H
#define LOOM_RL_RB_H

#include <pthread.h>

#include "pack.h"
#include "segtree.h"
#include "../tensordict/td_internal.h"

#define RL_RB_CLASS "rl.replay_buffer"
#define RL_RB_MAGIC 0x72726231u   /* "rrb1" */

enum { RL_RB_MEMORY = 0, RL_RB_MEMMAP = 1, RL_RB_LIST = 2 };
enum { RL_RB_ROUND_ROBIN = 0, RL_RB_MAX_VALUE = 1 };
#define RL_RB_SPAN_ALL (-1)          /* span True: slices may overhang a trajectory by all but one item */
enum { RL_RB_RANDOM = 0, RL_RB_WITHOUT_REPLACEMENT = 1, RL_RB_PRIORITIZED = 2, RL_RB_SLICE = 3 };

typedef struct rl_rb_heap_item {
    double rank;
    int64_t index;
} rl_rb_heap_item;

typedef struct rl_rb {
    uint32_t struct_size, magic;
    pthread_mutex_t lock;
    int64_t id;                     /* names it to an rl.replay_buffer_ensemble (rl.rb_id) */
    int64_t capacity;
    int storage_kind;
    char *scratch_dir;
    rl_td *store;                   /* batch [capacity]; NULL before the first extend */
    cJSON **list;                   /* storage=list: capacity JSON items (NULL: never written) */
    int64_t len, cursor, write_count;
    /* writer */
    int writer;
    rl_key rank_key;
    char *rank_key_text;
    int rank_mean;                  /* reduction: 0 sum, 1 mean, 2 max, 3 min */
    rl_rb_heap_item *heap;          /* max-value writer: min-heap of (rank, storage index) */
    int64_t heap_n;
    /* sampler */
    int sampler;
    uint64_t seed, draws;
    int drop_last, shuffle;
    int64_t *perm, perm_n, perm_at, perm_len;   /* without replacement: this epoch's order */
    double alpha, beta, eps;
    rl_segtree sum, min;
    int has_max;
    double max_priority;            /* raw priority (torchrl's _max_priority[0]) */
    int64_t max_index;              /* the slot that holds it (_max_priority[1]) */
    int max_within;                 /* max_priority_within_buffer */
    /* slice sampler */
    int64_t num_slices, slice_len;  /* one of them > 0 */
    int strict_length, pad_output, cache_values;
    int64_t span[2];                /* left, right: 0 none, RL_RB_SPAN_ALL (True), k > 0 at least seq - k items */
    rl_key traj_key, end_key;       /* traj_key.n == 0: trajectories end where end_key is true */
    rl_key truncated_key;           /* n == 0: no truncated/done/terminated marks in the sample */
    char *slice_keys_text;
    int64_t last_index;             /* the last slot written (torchrl's _last_cursor_index), -1: none */
    /* the trajectories of the storage (cache_values keeps them until a write) */
    int64_t *traj_start, *traj_stop, *traj_len, n_traj;
    int traj_valid;
    /* shared=true: the control block in scratch_dir (rb_shared.h) */
    struct rl_rb_shared *ctl;
} rl_rb;

/* The attributes of the class (rb_object.c), their index enum. */
#define RL_RB_CLASS_ATTRS(A, op)                                                                  \
    A(op, max_size, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,              \
      "the storage's capacity (items along dim 0)", )                                             \
    A(op, storage, STRING, LOOM_DEFAULT_STRING("memory"), 0,                                      \
      "memory (LazyTensorStorage) | memmap (LazyMemmapStorage: scratch_dir in tensordict's layout) | "  \
      "list (ListStorage of JSON items: rl.rb_extend_list)", )                                    \
    A(op, scratch_dir, STRING, LOOM_DEFAULT_STRING(""), 0, "storage=memmap: the directory", )   \
    A(op, writer, STRING, LOOM_DEFAULT_STRING("round_robin"), 0,                                  \
      "round_robin (RoundRobinWriter) | max_value (TensorDictMaxValueWriter)", )                  \
    A(op, rank_key, STRING, LOOM_DEFAULT_STRING("next.reward"), 0, "writer=max_value: the key ranked", ) \
    A(op, reduction, STRING, LOOM_DEFAULT_STRING("sum"), 0,                                       \
      "writer=max_value: how a rank_key of several elements reduces: sum | mean | max | min", )   \
    A(op, sampler, STRING, LOOM_DEFAULT_STRING("random"), 0,                                      \
      "random (RandomSampler) | without_replacement (SamplerWithoutReplacement) | prioritized (PrioritizedSampler) | " \
      "slice (SliceSampler)", )                                                                   \
    A(op, num_slices, INT, LOOM_DEFAULT_INT(0), LOOM_ATTR_NONNEG,                                 \
      "slice: slices per batch (batch_size / num_slices items each); 0: use slice_len", )         \
    A(op, slice_len, INT, LOOM_DEFAULT_INT(0), LOOM_ATTR_NONNEG, "slice: items per slice; 0: use num_slices", ) \
    A(op, traj_key, STRING, LOOM_DEFAULT_STRING(""), 0,                                            \
      "slice: the episode id of each item (trajectories are its runs); empty: end_key marks the ends", ) \
    A(op, end_key, STRING, LOOM_DEFAULT_STRING("next.done"), 0, "slice: true at the last step of a trajectory", ) \
    A(op, strict_length, BOOL, LOOM_DEFAULT_BOOL(1), 0,                                           \
      "slice: only trajectories at least as long as a slice; false: shorter ones give shorter slices", ) \
    A(op, pad_output, BOOL, LOOM_DEFAULT_BOOL(0), 0,                                              \
      "slice, strict_length=false: short slices repeat their last item up to the slice length, "   \
      "(\"collector\", \"mask\") marks the real ones", )                                            \
    A(op, span, INTS, LOOM_DEFAULT_NONE, 0,                                                       \
      "slice: [left, right] (or one value for both): 0 no span, -1 (True) a slice may start before " \
      "(left) or end after (right) its trajectory keeping at least one item, k > 0 keeping at least " \
      "slice length - k", )                                                                        \
    A(op, truncated_key, STRING, LOOM_DEFAULT_STRING("next.truncated"), 0,                        \
      "slice: where the sample marks the last item of each slice truncated (done and terminated "  \
      "beside it); empty: no marks", )                                                             \
    A(op, cache_values, BOOL, LOOM_DEFAULT_BOOL(0), 0,                                            \
      "slice: keep the trajectory boundaries until the next write", )                              \
    A(op, drop_last, BOOL, LOOM_DEFAULT_BOOL(0), 0, "without_replacement: drop the short last batch of an epoch", ) \
    A(op, shuffle, BOOL, LOOM_DEFAULT_BOOL(1), 0, "without_replacement: a random order per epoch, else storage order", ) \
    A(op, alpha, FLOAT, LOOM_DEFAULT_FLOAT(0.6), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG, "prioritized: alpha", ) \
    A(op, beta, FLOAT, LOOM_DEFAULT_FLOAT(0.4), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG, "prioritized: beta", ) \
    A(op, eps, FLOAT, LOOM_DEFAULT_FLOAT(1e-8), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG, "prioritized: eps", ) \
    A(op, max_priority_within_buffer, BOOL, LOOM_DEFAULT_BOOL(0), 0,                              \
      "prioritized: new items get the largest priority still in the buffer (else the largest ever seen)", ) \
    A(op, dtype, STRING, LOOM_DEFAULT_STRING("f32"), 0, "prioritized: the trees' precision, f32 (torchrl's default) | f64", ) \
    A(op, seed, INT, LOOM_DEFAULT_INT(0), LOOM_ATTR_NONNEG, "the sampler's random stream", ) \
    A(op, shared, BOOL, LOOM_DEFAULT_BOOL(0), 0,                                                  \
      "storage=memmap: share the buffer with every process that opens the same scratch_dir "      \
      "(a process-shared robust mutex in scratch_dir/rb_shared.ctl; round_robin writer, random or " \
      "without_replacement sampler)", )
PK_ATTR_ENUM(rl_rb_class, RL_RB_CLASS_ATTRS);

extern const loom_object_class rl_rb_class;

#define RL_RB_OPS(X)                    \
    X(rl_rb_extend_schema)              \
    X(rl_rb_sample_schema)              \
    X(rl_rb_update_priority_schema)     \
    X(rl_rb_priority_weight_schema)     \
    X(rl_rb_priorities_schema)          \
    X(rl_rb_len_schema)                 \
    X(rl_rb_dumps_schema)               \
    X(rl_rb_loads_schema)               \
    X(rl_rb_id_schema)                  \
    X(rl_rb_extend_list_schema)         \
    X(rl_rb_extend_ted_schema)          \
    X(rl_rb_ensemble_sample_schema)     \
    X(rl_rb_trajectories_schema)
PK_OPS_DECLARE(rl_rb_ops, RL_RB_OPS);

#define RL_RB_EXTEND_ATTRS(A, op) \
    A(op, source, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE, \
      "id (rl.td_id) of the TensorDict whose items (batch dim 0) are added", )
#define RL_RB_SAMPLE_ATTRS(A, op)                                                                 \
    A(op, batch_size, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE, "items drawn", ) \
    A(op, dest, INT, LOOM_DEFAULT_INT(0), LOOM_ATTR_NONNEG,                                       \
      "id of an rl.tensordict that receives the sampled items with \"index\" (and \"priority_weight\"); 0: none", )
#define RL_RB_PATH_ATTRS(A, op) \
    A(op, path, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED, "the dump's directory", )
#define RL_RB_DUMPS_ATTRS(A, op)                                                                   \
    A(op, path, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED, "the dump's directory", )         \
    A(op, sync, BOOL, LOOM_DEFAULT_BOOL(1), 0,                                                    \
      "flush the dump to the device before swapping it in (survives power loss; without it a "    \
      "killed process still leaves the previous dump intact)", )
PK_ATTR_ENUM(rl_rb_extend, RL_RB_EXTEND_ATTRS);
PK_ATTR_ENUM(rl_rb_path, RL_RB_PATH_ATTRS);
PK_ATTR_ENUM(rl_rb_dumps, RL_RB_DUMPS_ATTRS);
PK_ATTR_ENUM(rl_rb_sample, RL_RB_SAMPLE_ATTRS);

/* The sampler and writer steps (rb_sampler.c, rb_writer.c); the caller holds the lock. */
loom_status rl_rb_sampler_init(rl_rb *b, const char *dtype);
void rl_rb_sampler_free(rl_rb *b);
/* What a slice sample drew besides the indices: the real items of each
** slice (len[n_slices]) and, padded (target > 0: every slice target long),
** mask[n] true at real items. Freed with rl_rb_slices_free. */
typedef struct rl_rb_slices {
    int64_t n_slices, target;
    int64_t *len;
    uint8_t *mask;
} rl_rb_slices;
void rl_rb_slices_free(rl_rb_slices *s);

/* batch_size indices into idx (malloc'd, *n of them: fewer for the last
** batch of a without-replacement epoch, slices of other lengths) and,
** prioritized, their weights; slices (may be NULL) what a slice sample drew. */
loom_status rl_rb_sample_indices(rl_rb *b, int64_t batch_size, int64_t **idx, int64_t *n, float **weight,
                                 rl_rb_slices *slices);
/* The trajectories of the stored items as torchrl's find_start_stop_traj
** gives them (a full storage is circular: one may wrap past the end; the
** last slot written ends one); arrays owned by b, valid until the next write. */
loom_status rl_rb_trajectories(rl_rb *b, const int64_t **start, const int64_t **stop, const int64_t **len,
                               int64_t *n);
/* After a write: cached trajectory boundaries are stale. */
void rl_rb_slice_cache_drop(rl_rb *b);
/* After a write at index[n] (-1 entries skipped): torchrl's mark_update
** (prioritized: the default priority, then the within-buffer max dropped
** when overwritten), the last cursor, stale trajectory boundaries. */
loom_status rl_rb_sampler_mark_update(rl_rb *b, const int64_t *index, int64_t n);
/* torchrl's update_priority(index, priority): priority[n] or one value. */
loom_status rl_rb_update_priority(rl_rb *b, const int64_t *index, int64_t n, const double *priority, int64_t n_prio,
                                  int f32_priority);
/* (tree[index] / p_min) ^ -beta, as sample computes it. */
loom_status rl_rb_priority_weight(rl_rb *b, const int64_t *index, int64_t n, float *out);

/* Stream the TED dataset at path into b, chunk items at a time (rb_ted.c);
** *count: the items written. */
loom_status rl_rb_extend_ted(rl_rb *b, const char *path, int64_t chunk, loom_exec_ctx *ctx, int64_t *count);

/* storage=list: write the items of the JSON array at the writer's indices
** (round robin); index[n] receives them. Takes ownership of items. */
loom_status rl_rb_write_list(rl_rb *b, cJSON *items, int64_t *index);

/* Write the items of data (batch dim 0) at the writer's indices; index[N]
** receives them (-1: not written, max-value writer). */
loom_status rl_rb_write(rl_rb *b, const rl_td *data, int64_t *index, loom_exec_ctx *ctx);

/* The live buffer of this id, locked (rb_object.c); NULL with the error
** set when there is none. Unlock with pthread_mutex_unlock(&b->lock). */
rl_rb *rl_rb_registry_lock(int64_t id, const char *what);

extern const loom_object_class rl_rb_ensemble_class;
#define RL_RBE_CLASS "rl.replay_buffer_ensemble"
#define RL_RBE_CLASS_ATTRS(A, op)                                                                 \
    A(op, buffers, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,              \
      "ids (rl.rb_id) of the member buffers", )                                                   \
    A(op, p, FLOATS, LOOM_DEFAULT_NONE, LOOM_ATTR_NONNEG | LOOM_ATTR_FINITE,                      \
      "weight of each member (torch.multinomial with replacement); default: uniform (randint)", ) \
    A(op, sample_from_all, BOOL, LOOM_DEFAULT_BOOL(0), 0, "draw from every member each time", )  \
    A(op, num_buffer_sampled, INT, LOOM_DEFAULT_INT(0), LOOM_ATTR_NONNEG,                         \
      "members drawn per sample (default: all of them); batch_size must be divisible by it", )    \
    A(op, seed, INT, LOOM_DEFAULT_INT(0), LOOM_ATTR_NONNEG, "the choice of members' random stream", )
PK_ATTR_ENUM(rl_rbe_class, RL_RBE_CLASS_ATTRS);
/* The kernel of rl.rb_ensemble_sample (rb_ensemble.c). */
loom_status rl_rb_ensemble_sample_run(loom_call *call);

/* The buffer to and from PATH atomically (rb_dump.c). loads replaces the
** state only when every piece of the dump was read and checked. */
loom_status rl_rb_dumps(rl_rb *b, const char *path, int sync, loom_exec_ctx *ctx);
loom_status rl_rb_loads(rl_rb *b, const char *path, loom_exec_ctx *ctx);

#endif /* LOOM_RL_RB_H */
