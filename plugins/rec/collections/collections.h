/* SPDX-License-Identifier: BSD-3-Clause */
/*
** collections.h - TorchRec's EmbeddingBagCollection
** (torchrec/modules/embedding_modules.py) as an object class over
** fbgemm.tbe objects: rec.embedding_bag_collection.
**
** The tables come from the class attributes (EmbeddingBagConfig's fields,
** one entry per table) and from the weights file, keyed as torchrec's
** state_dict: embedding_bags.<table>.weight [num_embeddings, embedding_dim]
** in the table's data_type (f32 for FP32, f16 for FP16). Create groups the
** tables by (pooling, data_type), as torchrec's fused modules do, and
** makes one fbgemm.tbe object per group (host->object_create) over the
** file's tensors, viewed, not copied. The forward (method
** rec.embedding_bag_collection) gathers each group's features from the KJT
** and calls fbgemm.tbe on that group's object (host->op_call).
*/
#ifndef LOOM_REC_COLLECTIONS_H
#define LOOM_REC_COLLECTIONS_H

#include <stdint.h>

#include "rec_pack.h"

#define REC_EBC_CLASS "rec.embedding_bag_collection"

/* The attributes both classes share come first, in the same order, so
** create reads them at the same indices (EmbeddingConfig's fields). */
#define REC_TABLE_CONFIG_ATTRS(A, op)                                                              \
    A(op, tables, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED,                                  \
      "table names in order, joined by ',' (EmbeddingBagConfig.name)", )                         \
    A(op, num_embeddings, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_NONNEG,        \
      "rows of each table", )                                                                     \
    A(op, embedding_dim, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,       \
      "D of each table", )                                                                        \
    A(op, feature_names, STRING, LOOM_DEFAULT_STRING(""), 0,                                     \
      "each table's features joined by '|', tables joined by ',' (\"f0|f1,f2\"); "               \
      "a table with none (or \"\") takes its own name, as torchrec", )                           \
    A(op, data_type, STRING, LOOM_DEFAULT_STRING(""), 0,                                         \
      "each table's DataType, joined by ',': fp32 | fp16, and for the bag collection int8 | int4 "  \
      "(torchrec.quant's rows: u8 [rows, row_bytes], fp16 scale and bias first); \"\": fp32 for all", )
#define REC_EBC_CLASS_ATTRS(A, op)                                                                 \
    REC_TABLE_CONFIG_ATTRS(A, op)                                                                  \
    A(op, pooling, STRING, LOOM_DEFAULT_STRING(""), 0,                                           \
      "each table's PoolingType, joined by ',': sum | mean; \"\": sum for all (torchrec's default)", ) \
    A(op, is_weighted, BOOL, LOOM_DEFAULT_BOOL(0), 0,                                            \
      "use the KJT's weights as per-sample weights (sum pooling only, as nn.EmbeddingBag)", )     \
    A(op, table_memory, STRING, LOOM_DEFAULT_STRING("map"), 0,                                   \
      "map: rows read from the mapped weights file | hugepage: the tables copied into 2 MB-aligned " \
      "anonymous memory advised MADV_HUGEPAGE (fewer TLB misses on large tables; inference only)", )
#define REC_EC_CLASS_ATTRS(A, op) REC_TABLE_CONFIG_ATTRS(A, op)
/* rec.fused_embedding_bag_collection: the EBC's attributes (same indices),
** then the fused optimizer (fused_ebc_object.c): torchrec's optimizer
** classes by name and their kwargs, as fbgemm's TBE takes them. */
#define REC_FUSED_EBC_CLASS_ATTRS(A, op)                                                           \
    REC_EBC_CLASS_ATTRS(A, op)                                                                     \
    A(op, optimizer, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED,                               \
      "sgd (torch.optim.SGD) | rowwise_adagrad (torchrec.optim.RowWiseAdagrad) | adam (torch.optim.Adam) | "\
      "partial_rowwise_adam (fbgemm's row-wise Adam)", )                                           \
    A(op, lr, FLOAT, LOOM_DEFAULT_FLOAT(0.01), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG, "learning rate", ) \
    A(op, eps, FLOAT, LOOM_DEFAULT_FLOAT(1.0e-8), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG, "epsilon", ) \
    A(op, beta1, FLOAT, LOOM_DEFAULT_FLOAT(0.9), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG, "adam beta1", ) \
    A(op, beta2, FLOAT, LOOM_DEFAULT_FLOAT(0.999), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG, "adam beta2", ) \
    A(op, weight_decay, FLOAT, LOOM_DEFAULT_FLOAT(0.0), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG, "weight decay", ) \
    A(op, weight_decay_mode, STRING, LOOM_DEFAULT_STRING("none"), 0,                              \
      "row-wise adagrad: none | l2 | decouple (fbgemm's WeightDecayMode)", )
PK_ATTR_ENUM(rec_ebc_class, REC_EBC_CLASS_ATTRS);
PK_ATTR_ENUM(rec_fused_ebc_class, REC_FUSED_EBC_CLASS_ATTRS);
PK_ATTR_ENUM(rec_ec_class, REC_EC_CLASS_ATTRS);

#define REC_EC_CLASS "rec.embedding_collection"
#define REC_FUSED_EBC_CLASS "rec.fused_embedding_bag_collection"

extern const loom_object_class rec_ebc_class;
extern const loom_object_class rec_ec_class;
extern const loom_object_class rec_fused_ebc_class;

/* One fbgemm.tbe object: tables of one pooling and data type */
typedef struct rec_ebc_group {
    loom_object *tbe;
    int pooling_mean;
    int fp16;
    int sequence;              /* an EmbeddingCollection's: pooling none, f32 rows */
    int64_t row_alignment;     /* of its INT8/INT4 rows (1 for float tables) */
    int64_t n_features;
    int64_t *features;         /* [n_features] indices into the EBC's flat feature list */
    int64_t total_d;           /* sum of the group's features' D: the TBE output's columns */
    int out_fp16;              /* the TBE returns f16 bags (an EBC's FP16 group; fused groups return f32) */
    int64_t n_tables;
    int64_t *tables;           /* [n_tables] the EBC's tables in the group, in order (fused: state keys) */
} rec_ebc_group;

typedef struct rec_ebc {
    int64_t n_tables;
    char **table_names;
    int64_t *num_embeddings, *embedding_dim;
    int64_t n_features;        /* flat, in table order then feature order */
    char **feature_names;
    int64_t *feature_table;    /* [n_features] */
    int64_t *feature_offset;   /* [n_features + 1] columns of the KeyedTensor */
    int is_weighted;
    const char *table_memory;  /* fbgemm.tbe's table_memory for every group: "map" or "hugepage" */
    int sequence;              /* rec.embedding_collection */
    int64_t n_groups;
    rec_ebc_group *groups;
    const loom_op *tbe_op;
    /* rec.fused_embedding_bag_collection: the fused optimizer's fbgemm.tbe
    ** attributes, given to every group's object; NULL for the others */
    const loom_named_attr *optim_attrs;
    int32_t n_optim_attrs;
    const loom_op *backward_op, *state_op;
    int32_t fused_momenta;     /* optimizer state tensors per table (0 sgd, 1 row-wise adagrad, 2 adam) */
} rec_ebc;

/* create of the three classes (ebc_object.c): sequence for
** rec.embedding_collection; fused with the optimizer's attributes (set in
** e->optim_attrs by the fused class) for rec.fused_embedding_bag_collection. */
loom_status rec_collection_create(const loom_object_args *args, void **state_out, int sequence,
                                const loom_named_attr *optim_attrs, int32_t n_optim_attrs);
void rec_collection_destroy(void *state);

/* One group's batch from a KJT, as its fbgemm.tbe object takes it
** (ebc_forward.c): indices and offsets (i64, in call scratch), the
** per-sample weights when the collection is_weighted, for B samples (VBE
** expanded through inverse_indices). */
struct rec_kjt;
typedef struct rec_group_batch {
    int64_t *indices, *offsets;
    float *psw;
    int64_t n_indices;
} rec_group_batch;
loom_status rec_group_batch_build(loom_call *call, const rec_ebc *e, const rec_ebc_group *g,
                                const struct rec_kjt *kjt, const int64_t *fkey, int64_t B, rec_group_batch *out);
/* The full batch of a KJT for a bag collection (inverse_indices' width, else the stride). */
loom_status rec_collection_batch(const struct rec_kjt *kjt, int64_t *B);
/* What a bag collection's methods read first: the call's KJT (its inputs
** and the keys/stride attributes), each feature's key in it (*fkey), the
** weights check and the full batch B (ebc_forward.c). */
loom_status rec_collection_read(loom_call *call, const rec_ebc *e, struct rec_kjt *kjt, int64_t **fkey, int64_t *B);

/* 1 when the KJT is the single group's batch as it is: one group whose
** features are the KJT's keys in order, one stride (no VBE), B > 0, i64
** ids; then its values and offsets are the TBE's indices and offsets. */
int rec_collection_direct(const rec_ebc *e, const struct rec_kjt *kjt, const int64_t *fkey, int64_t B);

/* A CPU tensor header over data (borrowed), for nested calls. */
static inline loom_tensor rec_view(void *data, loom_dl_dtype dt, int32_t ndim, int64_t *shape)
{
    loom_tensor t = { .data = data, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = ndim, .dtype = dt, .shape = shape };
    return t;
}

/* The KJT inputs of the collections' forwards (and of the towers that
** pool through them), in order. */
#define REC_EBC_INPUT_DEFS \
    { .name = "values", .dtypes = REC_ID_MASK, .ndim = 1, .doc = "[N] the KJT's ids, key-major" }, \
    { .name = "lengths", .dtypes = REC_ID_MASK, .flags = LOOM_ARG_OPTIONAL, .ndim = 1, .doc = "[L]" }, \
    { .name = "offsets", .dtypes = REC_ID_MASK, .flags = LOOM_ARG_OPTIONAL, .ndim = 1, .doc = "[L+1]" }, \
    { .name = "weights", .dtypes = REC_WEIGHT_MASK, .flags = LOOM_ARG_OPTIONAL, .ndim = 1, \
      .doc = "[N] per-sample weights (used when the collection is_weighted)" }, \
    { .name = "stride_per_key_per_rank", .dtypes = REC_ID_MASK, .flags = LOOM_ARG_OPTIONAL, .ndim = 2, \
      .doc = "VBE: [K, ranks]" }, \
    { .name = "inverse_indices", .dtypes = REC_ID_MASK, .flags = LOOM_ARG_OPTIONAL, .ndim = 2, \
      .doc = "VBE: [K, B]: the pooled rows are expanded through them to the full batch B" }

loom_status rec_ebc_forward(loom_call *call);
loom_status rec_fused_ebc_backward(loom_call *call);
loom_status rec_fused_ebc_save(loom_call *call);
loom_status rec_ec_forward(loom_call *call);

/* collection_keys.c (rec_kjt: kjt/kjt.h) */
loom_status rec_collection_features(loom_call *call, const rec_ebc *e, const struct rec_kjt *kjt, int64_t **fkey);
loom_status rec_collection_keys(loom_call *call, const rec_ebc *e, int32_t first);

#define REC_COLLECTIONS_OPS(X) X(rec_ebc_forward_schema) X(rec_ec_forward_schema) \
    X(rec_fused_ebc_forward_schema) X(rec_fused_ebc_backward_schema) X(rec_fused_ebc_save_schema)
PK_OPS_DECLARE(rec_collections_ops, REC_COLLECTIONS_OPS);

/* outputs of rec.embedding_collection */
enum { REC_EC_OUT_VALUES, REC_EC_OUT_VALUES_OFFSETS, REC_EC_OUT_LENGTHS, REC_EC_OUT_LENGTHS_OFFSETS, REC_EC_OUT_KEYS,
       REC_EC_OUT_KEYS_OFFSETS };

/* outputs of rec.embedding_bag_collection */
enum { REC_EBC_OUT_VALUES, REC_EBC_OUT_KEYS, REC_EBC_OUT_KEYS_OFFSETS, REC_EBC_OUT_LENGTH_PER_KEY,
       REC_EBC_OUT_OFFSET_PER_KEY };

#endif /* LOOM_REC_COLLECTIONS_H */
