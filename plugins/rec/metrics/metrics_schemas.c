/* SPDX-License-Identifier: BSD-3-Clause */
/*
** metrics_schemas.c - the one-shot metric ops (metrics.h), named after
** torchrec's metric modules; inputs as RecMetric.update's.
*/
#include "metrics.h"

static const loom_arg_def metric_inputs[] = {
    { .name = "predictions", .dtypes = REC_METRIC_DTYPES, .ndim = -1, .doc = "[N] or [tasks, N]" },
    { .name = "labels", .dtypes = REC_METRIC_DTYPES, .ndim = -1, .doc = "predictions' shape" },
    { .name = "weights", .dtypes = REC_METRIC_DTYPES, .flags = LOOM_ARG_OPTIONAL, .ndim = -1,
      .doc = "predictions' shape; default 1" },
};

static const loom_arg_def metric_output[] = {
    { .name = "output", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F64), .ndim = 1, .doc = "f64 [tasks]" },
};

PK_SCHEMA(rec_ne_schema, "rec.ne", 1,
          "normalized entropy (torchrec NEMetric): weighted log2 cross entropy / the entropy of the mean label, "
          "eta 1e-12",
          PK_INPUTS(metric_inputs), PK_OUTPUTS(metric_output));
PK_SCHEMA(rec_auc_schema, "rec.auc", 1,
          "ROC AUC (torchrec AUCMetric): trapezoids over the weighted cumulative TP/FP in descending prediction "
          "order (ties by position); 0.5 without positives or negatives",
          PK_INPUTS(metric_inputs), PK_OUTPUTS(metric_output));
PK_SCHEMA(rec_calibration_schema, "rec.calibration", 1,
          "calibration (torchrec CalibrationMetric): sum(w p) / sum(w y); 0 when sum(w y) <= 0",
          PK_INPUTS(metric_inputs), PK_OUTPUTS(metric_output));
PK_SCHEMA(rec_ctr_schema, "rec.ctr", 1, "CTR (torchrec CTRMetric): sum(w y) / sum(w); 0 when sum(w) = 0",
          PK_INPUTS(metric_inputs), PK_OUTPUTS(metric_output));
PK_SCHEMA(rec_mse_schema, "rec.mse", 1,
          "MSE (torchrec MSEMetric): sum(w (y - p)^2) / sum(w); 0 when sum(w) = 0",
          PK_INPUTS(metric_inputs), PK_OUTPUTS(metric_output));

PK_SCHEMA(rec_metrics_update_schema, "rec.metrics_update", 1,
          "RecMetric.update: add a batch ([tasks, N], or [N] for one task) to every metric's lifetime and "
          "window states",
          PK_INPUTS(metric_inputs), .object_class = REC_METRICS_CLASS);

static const loom_arg_def compute_outputs[] = {
    { .name = "lifetime", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F64), .ndim = 2,
      .doc = "f64 [metrics, tasks] over every update (NaN for auc, which torchrec keeps per window only)" },
    { .name = "window", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F64), .ndim = 2,
      .doc = "f64 [metrics, tasks] over the window" },
};

PK_SCHEMA(rec_metrics_compute_schema, "rec.metrics_compute", 1,
          "RecMetric.compute: lifetime_<metric> and window_<metric> of every task, rows in the object's metrics order",
          PK_OUTPUTS(compute_outputs), .object_class = REC_METRICS_CLASS);

static const loom_arg_def state_output[] = {
    { .name = "state", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F64), .ndim = 1,
      .doc = "f64 [...]: the whole state (lifetime sums, window batches and samples), for rec.metrics_load_state" },
};

PK_SCHEMA(rec_metrics_state_schema, "rec.metrics_state", 1, "a checkpoint of the object's state",
          PK_OUTPUTS(state_output), .object_class = REC_METRICS_CLASS);

static const loom_arg_def load_inputs[] = {
    { .name = "state", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F64), .ndim = 1,
      .doc = "what rec.metrics_state returned, from an object of the same n_tasks and window_size" },
};

PK_SCHEMA(rec_metrics_load_state_schema, "rec.metrics_load_state", 1,
          "restore a checkpoint made by rec.metrics_state (checked: a truncated or foreign one is refused)",
          PK_INPUTS(load_inputs), .object_class = REC_METRICS_CLASS);

PK_OPS_DEFINE(rec_metric_ops, REC_METRIC_OPS);
