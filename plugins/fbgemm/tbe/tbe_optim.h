/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tbe_optim.h - training of an fbgemm.tbe object: the optimizer fused into
** the backward, as fbgemm_gpu's SplitTableBatchedEmbeddingBagsCodegen
** (optimizer = EmbOptimType.*) runs it.
**
** An object made with optimizer != none owns writable copies of its tables
** (FP32 or FP16 rows; INT8/INT4/... tables are refused by name) and the
** optimizer state beside them, in fbgemm's layout and names:
**   exact_sgd              no state
**   exact_rowwise_adagrad  momentum1 f32 [rows]      sum of mean squared grads
**   adam                   momentum1 f32 [rows, D]   first moment
**                          momentum2 f32 [rows, D]   second moment
**   partial_rowwise_adam   momentum1 f32 [rows, D]   first moment
**                          momentum2 f32 [rows]      row-wise second moment
** plus `iter`, the step count (fbgemm's module counter: the first backward
** runs with iter = 1). The state loads from the weights file
** (momentum1.<t>, momentum2.<t>, iter; zeros and 0 when absent) and is saved
** with the tables by fbgemm.tbe_save.
**
** Update formulas (fbgemm_gpu/codegen/genscript/optimizers.py; g is the
** row's gradient summed over its occurrences, w the row, all in f32; the
** row is read from and rounded back to its weight type):
**   exact_sgd:  w -= lr * g                       (fbgemm has no weight decay here)
**   exact_rowwise_adagrad:
**     g' = g + wd * w when weight_decay_mode = l2, else g
**     m1 += sum(g'^2) / D
**     mult = lr / (sqrt(m1) + eps)
**     corr = 1 - mult * wd (l2) | 1 - lr * wd (decouple) | 1 (none)
**     w = corr * w - mult * g                     (g, not g': fbgemm's order)
**   adam (t = iter):
**     m1 = b1 * m1 + (1 - b1) * g;  m2 = b2 * m2 + (1 - b2) * g^2
**     w -= lr * (m1 / (1 - b1^t) / (sqrt(m2 / (1 - b2^t)) + eps) + wd * w)
**   partial_rowwise_adam:
**     m2 = b2 * m2 + (1 - b2) * sum(g^2) / D;  vhat = m2 / (1 - b2^t)
**     m1 = b1 * m1 + (1 - b1) * g
**     w -= lr * (m1 / (1 - b1^t) / (sqrt(vhat) + eps) + wd * w)
** Note: fbgemm-gpu-cpu's own FP32 row-wise Adagrad fast path (fbgemm's
** SparseAdaGrad, taken for unshared FP32 tables) is called with weight
** decay 0; loom applies weight_decay as fbgemm's generic CPU and GPU
** kernels do, for every table.
*/
#ifndef LOOM_FBGEMM_TBE_OPTIM_H
#define LOOM_FBGEMM_TBE_OPTIM_H

#include <pthread.h>
#include <stdint.h>

#include "tbe.h"

typedef enum fbg_optim {
    FBG_OPT_NONE = 0,
    FBG_OPT_EXACT_SGD = 1,
    FBG_OPT_EXACT_ROWWISE_ADAGRAD = 2,
    FBG_OPT_ADAM = 3,
    FBG_OPT_PARTIAL_ROWWISE_ADAM = 4,
} fbg_optim;

/* fbgemm's WeightDecayMode: NONE = 0, L2 = 1, DECOUPLE = 2. */
typedef enum fbg_weight_decay_mode {
    FBG_WD_NONE = 0,
    FBG_WD_L2 = 1,
    FBG_WD_DECOUPLE = 2,
} fbg_weight_decay_mode;

typedef struct fbg_optim_params {
    int32_t optimizer;          /* fbg_optim */
    int32_t weight_decay_mode;  /* fbg_weight_decay_mode (row-wise Adagrad) */
    float learning_rate, eps, beta1, beta2, weight_decay;
} fbg_optim_params;

/* The training state of an object (fbg_tbe_cpu.train). Tables' `base`
** pointers point into `rows`; the backward (serialised by `lock`) is the
** only writer. A forward concurrent with a backward on the same object
** reads rows being updated: callers order them, as in fbgemm. */
typedef struct fbg_tbe_train {
    fbg_optim_params prm;
    int32_t n_tables;
    uint8_t **rows;             /* [n_tables] owned rows, the tables' layout */
    float **momentum1;          /* [n_tables] or NULL entries when unused */
    float **momentum2;
    int64_t iter;               /* steps taken */
    pthread_mutex_t lock;
} fbg_tbe_train;

/* "exact_sgd" ... -> FBG_OPT_*, -1 when unknown; the names, for messages. */
int fbg_optim_from_name(const char *s);
const char *fbg_optim_name(int opt);
/* Elements of momentum k (1 or 2) of a table of rows x dim, 0 when the
** optimizer has none. */
int64_t fbg_optim_state_numel(int opt, int k, int64_t rows, int64_t dim);
/* 1 when momentum k is one value per row ([rows]), 0 when one per element. */
int fbg_optim_state_rowwise(int opt, int k);

/* Parse and check the class's optimizer attributes (tbe_internal.h) into
** *prm; LOOM_EINVAL naming the attribute. */
loom_status fbg_optim_parse(const loom_attr_value *attrs, fbg_optim_params *prm);

/* Make the training state of a created object when prm->optimizer != none:
** refuse non-float tables by name, copy the tables into
** owned memory (repointing tables[t].base), load or zero the state from
** args->weights. *out NULL for optimizer none. */
loom_status fbg_tbe_train_create(const loom_object_args *args, const fbg_optim_params *prm, int32_t n_tables,
                               fbg_tbe_table *tables, const fbg_tbe_state *s, fbg_tbe_train **out);
void fbg_tbe_train_free(fbg_tbe_train *tr);
/* The training state of a method call's object; NULL with the error set
** (naming op) for a foreign object or one made with optimizer none. */
fbg_tbe_train *fbg_tbe_train_of(const loom_call *call, const char *op);

/* One row's update (tbe_optim_update.c): row r of table `tab` (its
** momentum rows m1/m2, NULL when unused) with gradient g[0..D), at step
** t >= 1. work: D floats of scratch. Scalar and AVX2 variants, picked by
** fbg_optim_update_init at pack init. */
typedef void (*fbg_row_update_fn)(const fbg_optim_params *prm, int32_t wtype, uint8_t *row, int64_t D,
                                  const float *g, float *m1, float *m2, int64_t t, float *work);
void fbg_optim_update_init(void);
fbg_row_update_fn fbg_optim_update_fn(void);
/* acc[0..D) += w * x[0..D), fma per element (both variants round alike). */
typedef void (*fbg_axpy_fn)(float *acc, const float *x, float w, int64_t D);
fbg_axpy_fn fbg_optim_axpy_fn(void);
const char *fbg_optim_isa(void);

#endif
