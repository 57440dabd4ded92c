/* SPDX-License-Identifier: BSD-3-Clause */
/*
** planner_op.c - rec.plan: the planner (planner.h) as an op of the rec
** pack. The config JSON comes in as u8 text (`loom run rec.plan --in
** config=@plan_config.json`, or `loom plan`); the plan (loom.rec.plan/1),
** the per-shard estimates and the stats table go out as u8 text. A config
** that cannot be read, or a model that fits no plan, is refused with
** LOOM_EINVAL and the planner's message (the table and field, or the table
** and the shortfall in bytes).
*/
#include <stdlib.h>
#include <string.h>

#include "planner.h"
#include "rec_pack.h"

#define PLAN_ATTRS(A, op)                                                                          \
    A(op, search_space, BOOL, LOOM_DEFAULT_BOOL(0), 0,                                             \
      "estimates: also every enumerated option of every table with its per-shard estimates", )
PK_ATTR_ENUM(plan, PLAN_ATTRS);
PK_ATTR_TABLE(plan, PLAN_ATTRS);

static loom_status put_text(loom_call *call, int index, const char *s)
{
    const int64_t shape[1] = { (int64_t)strlen(s) };
    loom_tensor *out;
    loom_status st = pk_host->alloc_output(call, index, LOOM_DTYPE_U8, 1, shape, &out);
    if (st == LOOM_OK && shape[0] > 0)
        memcpy(loom_data(out), s, (size_t)shape[0]);
    return st;
}

static loom_status run_plan(loom_call *call)
{
    const loom_tensor *cfg = call->inputs[0];
    if (loom_tensor_dtype_of(cfg) != LOOM_DTYPE_U8 || !loom_is_contiguous(cfg))
        return pk_host->fail(LOOM_EINVAL, "rec.plan: 'config' must be contiguous u8 text (the config JSON)");
    const size_t n = (size_t)loom_numel(cfg);
    if (n == 0)
        return pk_host->fail(LOOM_EINVAL, "rec.plan: 'config' is empty (it must be the config JSON)");
    char err[512];
    rp_problem pb;
    if (rp_problem_parse(loom_data(cfg), n, &pb, err, sizeof err))
        return pk_host->fail(LOOM_EINVAL, "%s", err);
    rp_plan plan;
    if (rp_plan_run(&pb, call->attrs[PK_ATTR(plan, search_space)].u.b, &plan, err, sizeof err)) {
        rp_problem_free(&pb);
        return pk_host->fail(strcmp(err, "out of memory") == 0 ? LOOM_ENOMEM : LOOM_EINVAL, "%s", err);
    }
    char *texts[3] = { rp_plan_json(&pb, &plan), rp_stats_text(&pb, &plan), rp_estimates_json(&pb, &plan) };
    loom_status st = LOOM_OK;
    for (int i = 0; i < 3 && st == LOOM_OK; i++)
        st = texts[i] ? put_text(call, i, texts[i]) : pk_host->fail(LOOM_ENOMEM, "rec.plan: out of memory");
    for (int i = 0; i < 3; i++)
        free(texts[i]);
    rp_plan_free(&plan);
    rp_problem_free(&pb);
    return st;
}

static const loom_arg_def plan_inputs[] = {
    { .name = "config", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_U8), .ndim = 1,
      .doc = "the config JSON (u8 UTF-8): tables (EmbeddingBagConfig fields, pooling_factor and the constraints), "
             "topology (Topology's fields, bytes and bytes/s), batch_size" },
};

static const loom_arg_def plan_outputs[] = {
    { .name = "plan", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_U8), .ndim = 1,
      .doc = "the plan as loom.rec.plan/1 JSON (canonical: no spaces)" },
    { .name = "stats", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_U8), .ndim = 1,
      .doc = "the planner's stats table (per rank HBM, DDR, perf; per table sharding, kernel, ranks)" },
    { .name = "estimates", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_U8), .ndim = 1,
      .doc = "JSON: the plan's hash and perf rating, every shard's perf (ms) and storage (bytes)" },
};

PK_SCHEMA(rec_plan_schema, "rec.plan", 1,
          "TorchRec's EmbeddingShardingPlanner: enumerate sharding options, estimate perf and storage, propose "
          "(grid search, greedy, uniform) and partition (greedy or memory balanced); deterministic",
          PK_INPUTS(plan_inputs), PK_OUTPUTS(plan_outputs), PK_ATTRS(plan_attrs));

#define REC_PLANNER_OPS(X) X(rec_plan_schema)
PK_OPS_DEFINE(rec_planner_ops, REC_PLANNER_OPS);

static const loom_kernel_desc rec_planner_cpu_kernels[] = {
    PK_KERNEL_CPU(rec_plan_schema, "cpu:torchrec-planner", LOOM_DTYPE_BIT(LOOM_DTYPE_U8), run_plan),
};

const pk_module rec_planner_cpu = PK_MODULE("planner", rec_planner_ops, rec_planner_cpu_kernels, NULL);
