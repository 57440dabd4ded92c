/* SPDX-License-Identifier: BSD-3-Clause */
/*
** jagged_elementwise_cpu.c - jagged (+) dense element-wise ops on the CPU:
** jagged_dense_elementwise_add (dense output), ..._add_jagged_output,
** jagged_dense_elementwise_mul (jagged output) and
** jagged_dense_elementwise_mul_backward.
**
** Semantics measured on fbgemm_gpu 1.9's CPU kernels (signed zeros
** included): a jagged output row l of batch row b is f(x, y[b, l]) when
** l < max_L and f(x, 0) past it; a dense output position is
** f(x, y[b, l]) when l < L_b and f(0, y[b, l]) past it. In the backward
** of mul, the gradient of x_values is grad_output * y with +0 past max_L,
** and the gradient of y is padded(grad_output * x_values) with +0 padding.
**
** Row kernels are instantiated per dtype from jagged_elementwise_tmpl.h
** (dtype_traits.h); a NULL operand row stands for zeros. Threaded over
** batch rows.
*/
#include <string.h>

#include "dtype_traits.h"
#include "jagged.h"
#include "jagged_cpu.h"

typedef void (*row_fn)(void *o, const void *a, const void *b, int64_t n);

#define PK_SFX f32
#include "jagged_elementwise_tmpl.h"
#define PK_SFX f64
#include "jagged_elementwise_tmpl.h"
#define PK_SFX f16
#include "jagged_elementwise_tmpl.h"
#define PK_SFX bf16
#include "jagged_elementwise_tmpl.h"

/* per dtype, in PK_FLOAT_DTYPES order (pk_float_index) */
#define ADD_ENTRY(sfx, DTYPE, S, C) row_add_##sfx,
#define MUL_ENTRY(sfx, DTYPE, S, C) row_mul_##sfx,
static const row_fn add_rows[] = { PK_FLOAT_DTYPES(ADD_ENTRY) };
static const row_fn mul_rows[] = { PK_FLOAT_DTYPES(MUL_ENTRY) };

typedef struct ew_job {
    const jg_plan *p;
    row_fn f;
    const char *x, *x2, *y;   /* x2: second jagged operand of the y gradient */
    char *out;
    int zero_past;            /* jagged output rows past max_L are +0, not f(x, 0) */
} ew_job;

/* out (jagged) row off[b] + l = f(x row, l < max_L ? y[b, l] : 0) */
static void jagged_out_rows(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const ew_job *j = user;
    const jg_plan *p = j->p;
    const size_t row = (size_t)p->D * p->es;
    (void)thread_index;
    for (int64_t b = begin; b < end; b++)
        for (int64_t r = p->off[b]; r < p->off[b + 1]; r++) {
            int64_t l = r - p->off[b];
            if (l < p->max_L)
                j->f(j->out + (size_t)r * row, j->x + (size_t)r * row, j->y + (size_t)(b * p->max_L + l) * row, p->D);
            else if (j->zero_past)
                memset(j->out + (size_t)r * row, 0, row);
            else
                j->f(j->out + (size_t)r * row, j->x + (size_t)r * row, NULL, p->D);
        }
}

/* out (dense) [b, l] = f(l < L_b ? x row : 0, y[b, l]); with y == NULL it is
** padded f(x, x2) (the gradient of y): +0 past L_b. */
static void dense_out_rows(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const ew_job *j = user;
    const jg_plan *p = j->p;
    const size_t row = (size_t)p->D * p->es;
    (void)thread_index;
    for (int64_t b = begin; b < end; b++) {
        int64_t len = p->off[b + 1] - p->off[b];
        for (int64_t l = 0; l < p->max_L; l++) {
            size_t o = (size_t)(b * p->max_L + l) * row;
            const char *xr = l < len ? j->x + (size_t)(p->off[b] + l) * row : NULL;
            if (j->y != NULL)
                j->f(j->out + o, xr, j->y + o, p->D);
            else if (xr != NULL)
                j->f(j->out + o, xr, j->x2 + (size_t)(p->off[b] + l) * row, p->D);
            else
                memset(j->out + o, 0, row);
        }
    }
}

static loom_status run_elementwise(loom_call *call, const row_fn *table, int dense_out)
{
    jg_plan p = { 0 };
    loom_tensor *out;
    loom_status st = jg_prepare_elementwise(call, jg_read_host, dense_out, &p, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    if (!dense_out)
        jg_cpu_zero_head(&p, loom_data(out), (size_t)p.D * p.es);
    ew_job j = { .p = &p, .f = table[pk_float_index(p.dtype)], .x = loom_data(call->inputs[0]),
                 .y = loom_data(call->inputs[2]), .out = loom_data(out) };
    return pk_host->parallel_for(call->ctx, p.B, jg_cpu_grain(p.max_L * p.D),
                                 dense_out ? dense_out_rows : jagged_out_rows, &j);
}

loom_status jg_add_cpu(loom_call *call) { return run_elementwise(call, add_rows, 1); }
loom_status jg_add_jagged_output_cpu(loom_call *call) { return run_elementwise(call, add_rows, 0); }
loom_status jg_mul_cpu(loom_call *call) { return run_elementwise(call, mul_rows, 0); }

loom_status jg_mul_backward_cpu(loom_call *call)
{
    jg_plan p = { 0 };
    loom_tensor *outs[2];
    loom_status st = jg_prepare_mul_backward(call, jg_read_host, &p, outs);
    if (st != LOOM_OK)
        return st;
    const row_fn f = mul_rows[pk_float_index(p.dtype)];
    const char *g = loom_data(call->inputs[0]);
    if (loom_numel(outs[0]) > 0) {
        jg_cpu_zero_head(&p, loom_data(outs[0]), (size_t)p.D * p.es);
        ew_job j = { .p = &p, .f = f, .x = g, .y = loom_data(call->inputs[2]), .out = loom_data(outs[0]),
                     .zero_past = 1 };
        st = pk_host->parallel_for(call->ctx, p.B, jg_cpu_grain(p.max_L * p.D), jagged_out_rows, &j);
    }
    if (st == LOOM_OK && loom_numel(outs[1]) > 0) {
        ew_job j = { .p = &p, .f = f, .x = g, .x2 = loom_data(call->inputs[3]), .out = loom_data(outs[1]) };
        st = pk_host->parallel_for(call->ctx, p.B, jg_cpu_grain(p.max_L * p.D), dense_out_rows, &j);
    }
    return st;
}
