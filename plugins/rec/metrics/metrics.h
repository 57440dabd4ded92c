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
    X(rec_ne_schema) X(rec_auc_schema) X(rec_calibration_schema) X(rec_ctr_schema) X(rec_mse_schema)    \
    X(rec_metrics_update_schema) X(rec_metrics_compute_schema) X(rec_metrics_state_schema)              \
    X(rec_metrics_load_state_schema)
PK_OPS_DECLARE(rec_metric_ops, REC_METRIC_OPS);

enum { REC_METRIC_IN_PREDICTIONS, REC_METRIC_IN_LABELS, REC_METRIC_IN_WEIGHTS };

/* The stateful rec.metrics object (metrics_object.c): RecMetrics for
** several tasks at once, each kept lifetime and over a window of the last
** window_size samples (torchrec's WindowBuffer of batch states; AUC keeps
** the window's samples), with a checkpoint of its whole state. */
#define REC_METRICS_CLASS "rec.metrics"
#define REC_METRICS_CLASS_ATTRS(A, op)                                                             \
    A(op, metrics, STRING, LOOM_DEFAULT_STRING("ne,calibration,ctr,mse,rmse,accuracy,auc,throughput"), 0, \
      "the metrics computed, in the order of compute's rows: ne, calibration, ctr, mse, rmse, accuracy, "    \
      "auc (window only, as torchrec), throughput (examples/s)", )                                 \
    A(op, n_tasks, INT, LOOM_DEFAULT_INT(1), LOOM_ATTR_POSITIVE, "tasks, the rows of the inputs", ) \
    A(op, window_size, INT, LOOM_DEFAULT_INT(100), LOOM_ATTR_POSITIVE,                            \
      "samples of the window (torchrec's window_size, one rank)", )                               \
    A(op, threshold, FLOAT, LOOM_DEFAULT_FLOAT(0.5), LOOM_ATTR_FINITE,                            \
      "accuracy: a prediction >= threshold counts as 1", )
PK_ATTR_ENUM(rec_metrics_class, REC_METRICS_CLASS_ATTRS);
extern const loom_object_class rec_metrics_class;
/* metrics_ops.c: inputs of one shape, [N] or [tasks, N], compact: *T tasks of *N */
loom_status rec_metric_check(const loom_call *call, int64_t *T, int64_t *N);
loom_status rec_metrics_update_run(loom_call *call);
loom_status rec_metrics_compute_run(loom_call *call);
loom_status rec_metrics_state_run(loom_call *call);
loom_status rec_metrics_load_state_run(loom_call *call);

#endif /* LOOM_REC_METRICS_H */
