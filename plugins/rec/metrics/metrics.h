/* SPDX-License-Identifier: BSD-3-Clause */
/*
** metrics.h - TorchRec's RecMetrics formulas (torchrec/metrics/{ne,auc,
** calibration,ctr,mse}.py) as one-shot ops: rec.ne, rec.auc,
** rec.calibration, rec.ctr, rec.mse. Each takes predictions, labels and
** optional weights, [N] (one task) or [tasks, N], f32 or f64, and returns
** output f64 [tasks]: torchrec's compute_* on the states of one batch.
**
** Every state is accumulated in f64 whatever the input dtype (torchrec
** does so for NE's cross entropy and MSE's error sum, and sums its other
** states in the input dtype): fixed-size chunks summed in order, so the
** result does not depend on the thread count.
*/
#ifndef LOOM_REC_METRICS_H
#define LOOM_REC_METRICS_H

#include "rec_pack.h"

#define REC_METRIC_DTYPES (LOOM_DTYPE_BIT(LOOM_DTYPE_F32) | LOOM_DTYPE_BIT(LOOM_DTYPE_F64))
#define REC_NE_ETA 1e-12          /* torchrec's eta of NE */

#define REC_METRIC_OPS(X)                                                                          \
    X(rec_ne_schema) X(rec_auc_schema) X(rec_calibration_schema) X(rec_ctr_schema) X(rec_mse_schema)
PK_OPS_DECLARE(rec_metric_ops, REC_METRIC_OPS);

enum { REC_METRIC_IN_PREDICTIONS, REC_METRIC_IN_LABELS, REC_METRIC_IN_WEIGHTS };

#endif /* LOOM_REC_METRICS_H */
