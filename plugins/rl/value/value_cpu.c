/* SPDX-License-Identifier: BSD-3-Clause */
/*
** value_cpu.c - the cpu kernels of the rl value estimators (value.h): the
** portable bodies (value_cpu_tmpl.h, once per dtype) run over the outer
** rows of the [outer, T, inner] layout on the core's pool. GAE has an
** AVX2 body for inner == 1 (value_gae_avx2.c), the layout of torchrl's
** [*B, T, 1] values, chosen at run time; the impl name says which
** (cpu:gae-avx2 or cpu:gae-scalar).
*/
#include <math.h>

#include "cpu.h"
#include "describe.h"
#include "value.h"

#define PK_SFX f32
#define RL_EXP expf
#include "value_cpu_tmpl.h"
#define PK_SFX f64
#define RL_EXP exp
#include "value_cpu_tmpl.h"

/* Rows of about this many elements per chunk of the pool. */
static int64_t rl_row_grain(const rl_time_layout *lay)
{
    const int64_t per_row = lay->T * lay->inner;
    return per_row >= 16384 ? 1 : 16384 / (per_row > 0 ? per_row : 1);
}

static const uint8_t *rl_flags(const loom_tensor *t)
{
    return t != NULL ? (const uint8_t *)loom_data(t) : NULL;
}

/* torchrl's TD(lambda) and V-trace start from the last step
** (next_state_value[..., -1, :]), so they raise without one; GAE's loop
** just runs no step. */
static loom_status rl_need_steps(const loom_call *call, const rl_time_layout *lay)
{
    char b[160];
    if (lay->T > 0)
        return LOOM_OK;
    return pk_host->fail(LOOM_EINVAL, "'%s' %s has no time steps (the estimate starts from the last one)",
                         call->schema->inputs[0].name, pk_describe(pk_host, call->inputs[0], b, sizeof b));
}

/* ------------------------------------------------------------------- GAE */

static loom_status rl_gae_run(loom_call *call, int avx2)
{
    const loom_attr_value *a = call->attrs;
    rl_time_layout lay;
    loom_tensor *out[2];
    loom_status st = rl_value_check(call, 3, 2, 1, a[PK_ATTR(rl_gae, time_dim)].u.i, 2, &lay, out);
    if (st != LOOM_OK || loom_numel(out[0]) == 0)
        return st;
    const double gamma = a[PK_ATTR(rl_gae, gamma)].u.f, lmbda = a[PK_ATTR(rl_gae, lmbda)].u.f;
    const loom_tensor *done = call->inputs[3], *terminated = call->inputs[4] ? call->inputs[4] : done;
    rl_gae_job job = {
        .state_value = loom_data(call->inputs[0]), .next_state_value = loom_data(call->inputs[1]),
        .reward = loom_data(call->inputs[2]), .done = rl_flags(done), .terminated = rl_flags(terminated),
        .advantage = loom_data(out[0]), .value_target = loom_data(out[1]), .lay = lay,
        /* torchrl: gamma * not_terminated and lmbda * gamma * not_done are float32 tensors */
        .gamma = (float)gamma, .gamma_lmbda = (float)(lmbda * gamma),
    };
    const int f64 = loom_tensor_dtype_of(call->inputs[0]) == LOOM_DTYPE_F64;
    if (avx2 && lay.inner == 1) {       /* over blocks of 8 (f32) or 4 (f64) rows */
        const int64_t block = f64 ? RL_GAE_BLOCK_F64 : RL_GAE_BLOCK_F32;
        const int64_t grain = (rl_row_grain(&lay) + block - 1) / block;
        return pk_host->parallel_for(call->ctx, (lay.outer + block - 1) / block, grain,
                                     f64 ? rl_gae_blocks_avx2_f64 : rl_gae_blocks_avx2_f32, &job);
    }
    return pk_host->parallel_for(call->ctx, lay.outer, rl_row_grain(&lay), f64 ? rl_gae_rows_f64 : rl_gae_rows_f32,
                                 &job);
}

static loom_status rl_gae_run_scalar(loom_call *call) { return rl_gae_run(call, 0); }
static loom_status rl_gae_run_avx2(loom_call *call) { return rl_gae_run(call, 1); }

/* ------------------------------------------------------------------ TD(0) */

static loom_status rl_td0_run(loom_call *call)
{
    rl_time_layout lay;
    loom_tensor *out;
    loom_status st = rl_value_check(call, 2, 1, 0, 0, 1, &lay, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    const float gamma = (float)call->attrs[PK_ATTR(rl_td0, gamma)].u.f;     /* gamma * not_terminated: float32 */
    const void *nv = loom_data(call->inputs[0]), *r = loom_data(call->inputs[1]);
    const uint8_t *tm = rl_flags(call->inputs[2]);
    if (loom_tensor_dtype_of(out) == LOOM_DTYPE_F64) {
        rl_td0_job_f64 job = { nv, r, tm, loom_data(out), gamma };
        return pk_host->parallel_for(call->ctx, loom_numel(out), 16384, rl_td0_elems_f64, &job);
    }
    rl_td0_job_f32 job = { nv, r, tm, loom_data(out), gamma };
    return pk_host->parallel_for(call->ctx, loom_numel(out), 16384, rl_td0_elems_f32, &job);
}

/* ------------------------------------------------------------- TD(lambda) */

static loom_status rl_tdl_run(loom_call *call)
{
    const loom_attr_value *a = call->attrs;
    rl_time_layout lay;
    loom_tensor *out;
    loom_status st = rl_value_check(call, 2, 2, 1, a[PK_ATTR(rl_tdl, time_dim)].u.i, 1, &lay, &out);
    if (st == LOOM_OK)
        st = rl_need_steps(call, &lay);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    const double gamma = a[PK_ATTR(rl_tdl, gamma)].u.f, lmbda = a[PK_ATTR(rl_tdl, lmbda)].u.f;
    const loom_tensor *done = call->inputs[2], *terminated = call->inputs[3] ? call->inputs[3] : done;
    const void *nv = loom_data(call->inputs[0]), *r = loom_data(call->inputs[1]);
    /* torch.full_like(next_state_value, gamma): gamma and lmbda at the values' dtype */
    if (loom_tensor_dtype_of(out) == LOOM_DTYPE_F64) {
        rl_tdl_job_f64 job = { nv, r, rl_flags(done), rl_flags(terminated), loom_data(out), lay, gamma, lmbda };
        return pk_host->parallel_for(call->ctx, lay.outer, rl_row_grain(&lay), rl_tdl_rows_f64, &job);
    }
    rl_tdl_job_f32 job = { nv, r, rl_flags(done), rl_flags(terminated), loom_data(out), lay, (float)gamma,
                           (float)lmbda };
    return pk_host->parallel_for(call->ctx, lay.outer, rl_row_grain(&lay), rl_tdl_rows_f32, &job);
}

/* ---------------------------------------------------------------- V-trace */

static loom_status rl_vtrace_run(loom_call *call)
{
    const loom_attr_value *a = call->attrs;
    rl_time_layout lay;
    loom_tensor *out[2];
    loom_status st = rl_value_check(call, 5, 2, 1, a[PK_ATTR(rl_vtrace, time_dim)].u.i, 2, &lay, out);
    if (st == LOOM_OK)
        st = rl_need_steps(call, &lay);
    if (st != LOOM_OK || loom_numel(out[0]) == 0)
        return st;
    const loom_tensor *done = call->inputs[5], *terminated = call->inputs[6] ? call->inputs[6] : done;
    const void *lp = loom_data(call->inputs[0]), *lm = loom_data(call->inputs[1]), *v = loom_data(call->inputs[2]),
               *nv = loom_data(call->inputs[3]), *r = loom_data(call->inputs[4]);
    /* gamma * not_done is a float32 tensor, the thresholds float32 0-dim tensors */
    const float gamma = (float)a[PK_ATTR(rl_vtrace, gamma)].u.f;
    const float rho = (float)a[PK_ATTR(rl_vtrace, rho_thresh)].u.f, c = (float)a[PK_ATTR(rl_vtrace, c_thresh)].u.f;
    if (loom_tensor_dtype_of(out[0]) == LOOM_DTYPE_F64) {
        rl_vtrace_job_f64 job = { lp, lm, v, nv, r, rl_flags(done), rl_flags(terminated), loom_data(out[0]),
                                  loom_data(out[1]), lay, gamma, rho, c };
        return pk_host->parallel_for(call->ctx, lay.outer, rl_row_grain(&lay), rl_vtrace_rows_f64, &job);
    }
    rl_vtrace_job_f32 job = { lp, lm, v, nv, r, rl_flags(done), rl_flags(terminated), loom_data(out[0]),
                              loom_data(out[1]), lay, gamma, rho, c };
    return pk_host->parallel_for(call->ctx, lay.outer, rl_row_grain(&lay), rl_vtrace_rows_f32, &job);
}

/* ---------------------------------------------------------------- module */

static const loom_kernel_desc rl_value_cpu_kernels[] = {
    PK_KERNEL_CPU(rl_td0_schema, "cpu:elementwise", RL_VALUE_KERNEL_DTYPES, rl_td0_run),
    PK_KERNEL_CPU(rl_tdl_schema, "cpu:scan", RL_VALUE_KERNEL_DTYPES, rl_tdl_run),
    PK_KERNEL_CPU(rl_vtrace_schema, "cpu:scan", RL_VALUE_KERNEL_DTYPES, rl_vtrace_run),
};

/* GAE's kernel is named after the body the core's CPU features allow. */
static loom_status rl_value_register_gae(const loom_host_api *host, loom_registrar *reg)
{
    const int avx2 = pk_cpu_avx2(PK_CPU_FMA);
    const loom_kernel_desc k[] = {
        PK_KERNEL_CPU(rl_gae_schema, avx2 ? "cpu:gae-avx2" : "cpu:gae-scalar", RL_VALUE_KERNEL_DTYPES,
                      avx2 ? rl_gae_run_avx2 : rl_gae_run_scalar),
    };
    return pk_register_kernels(host, reg, k, PK_COUNT(k));
}

const pk_module rl_value_cpu = PK_MODULE("value", rl_value_ops, rl_value_cpu_kernels, rl_value_register_gae);
