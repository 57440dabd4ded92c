/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_value_cases.c - the rl value estimators and losses on inputs without elements
** (no batch, no step, no feature) and on the inputs they refuse, each
** refusal naming the argument: shapes that differ (torchrl: "All input
** tensors ... must share a unique shape"), flags that are not bool, values
** of two dtypes or of f16, a time_dim that is not a dimension, a missing
** gamma, and TD(lambda) and V-trace without a time step (torchrl indexes
** the last step and raises); the losses on an empty batch (torch's means
** of nothing: NaN) and their refusals: a batch that differs, advantage not
** [N, 1], an unknown critic distance, a negative clip_epsilon, a KL
** increment below 1; the environment methods on a CartPole-v1 object and
** on three of them in an rl.parallel_env. The
** walk over the registry fails for any rl op without a case here, but the
** TensorDict (rl.td_*) and replay-buffer (rl.rb_*) methods, whose tests
** are their own.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "op_cases.h"
#include "tu_ops.h"

/* the table below leaves trailing members of its cases to their zero default */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define T OC_T
#define NONE { 0 }
#define V3(dt, a, b, c) T(dt, 3, a, b, c)

#define GAE "rl.generalized_advantage_estimate"
#define TD0 "rl.td0_return_estimate"
#define TDL "rl.td_lambda_return_estimate"
#define VTRACE "rl.vtrace_advantage_estimate"
#define GL "gamma=0.99;lmbda=0.95"
#define CLIP "rl.clip_ppo_loss"
#define KLP "rl.kl_ppo_loss"
#define A2C "rl.a2c_loss"
#define S0(dt) T(dt, 0, 0)          /* a scalar */
#define N1(dt, n) T(dt, 1, n)
#define N2(dt, n) T(dt, 2, n, 1)
#define CLIP_IN(dt, n) { N1(dt, n), N1(dt, n), N2(dt, n), N2(dt, n), N2(dt, n), N1(dt, n) }

static const oc_case cases[] = {
    /* ------------------------------------------------------- no elements */
    { GAE, "no batch", { V3(F32, 0, 5, 1), V3(F32, 0, 5, 1), V3(F32, 0, 5, 1), V3(BOOL, 0, 5, 1), V3(BOOL, 0, 5, 1) },
      GL, { V3(F32, 0, 5, 1), V3(F32, 0, 5, 1) } },
    /* torchrl's loop runs no step: empty outputs */
    { GAE, "no step", { V3(F64, 4, 0, 1), V3(F64, 4, 0, 1), V3(F64, 4, 0, 1), V3(BOOL, 4, 0, 1), NONE }, GL,
      { V3(F64, 4, 0, 1), V3(F64, 4, 0, 1) } },
    { GAE, "no feature", { V3(F32, 2, 3, 0), V3(F32, 2, 3, 0), V3(F32, 2, 3, 0), V3(BOOL, 2, 3, 0), NONE }, GL,
      { V3(F32, 2, 3, 0), V3(F32, 2, 3, 0) } },
    { TD0, "no element", { T(F32, 1, 0), T(F32, 1, 0), T(BOOL, 1, 0) }, "gamma=0.9", { T(F32, 1, 0) } },
    { TDL, "no batch", { V3(F64, 0, 5, 1), V3(F64, 0, 5, 1), V3(BOOL, 0, 5, 1), V3(BOOL, 0, 5, 1) }, GL,
      { V3(F64, 0, 5, 1) } },
    { VTRACE, "no batch", { V3(F32, 0, 5, 1), V3(F32, 0, 5, 1), V3(F32, 0, 5, 1), V3(F32, 0, 5, 1), V3(F32, 0, 5, 1),
      V3(BOOL, 0, 5, 1) }, "gamma=0.99", { V3(F32, 0, 5, 1), V3(F32, 0, 5, 1) } },

    { CLIP, "empty batch", CLIP_IN(F32, 0), NULL,
      { S0(F32), S0(F32), S0(F32), S0(F32), S0(F32), S0(F32), S0(F32), N1(F32, 0), N2(F32, 0), N1(F32, 0) } },
    { KLP, "empty batch", { N1(F64, 0), N1(F64, 0), N2(F64, 0), N2(F64, 0), N2(F64, 0), N1(F64, 0), N1(F64, 0) }, NULL,
      { S0(F64), S0(F64), S0(F64), S0(F64), S0(F64), S0(F64), N1(F64, 0), N2(F64, 0), N1(F64, 0), N1(F64, 0) } },
    { A2C, "empty batch", { N1(F32, 0), N2(F32, 0), N2(F32, 0), N2(F32, 0), N1(F32, 0) }, NULL,
      { S0(F32), S0(F32), S0(F32), S0(F32), N1(F32, 0), N2(F32, 0), N1(F32, 0) } },

    /* the environment methods, on a CartPole-v1 object (setup): reset, then a step */
    { "rl.env_reset", "CartPole-v1", { NONE }, "seed=1", { T(F32, 1, 4) }, .object = 1 },
    { "rl.env_step", "CartPole-v1, action 0", { T(I64, 1, 1) }, NULL,
      { T(F32, 1, 4), T(F64, 1, 1), T(BOOL, 1, 1), T(BOOL, 1, 1), T(BOOL, 1, 1) }, .object = 1 },

    { "rl.env_spec", "CartPole-v1", { NONE }, NULL,
      { T(F64, 1, 4), T(F64, 1, 4), T(I64, 1, 1), T(F64, 1, 1), T(F64, 1, 1), T(I64, 1, 1) }, .object = 1 },
    { "rl.parallel_env_reset", "3 x CartPole-v1", { NONE }, "seed=4", { T(F32, 2, 3, 4) }, .object = 2 },
    { "rl.parallel_env_step", "3 x CartPole-v1, actions 0", { T(I64, 1, 3) }, NULL,
      { T(F32, 2, 3, 4), T(F64, 2, 3, 1), T(BOOL, 2, 3, 1), T(BOOL, 2, 3, 1), T(BOOL, 2, 3, 1), T(F32, 2, 3, 4) },
      .object = 2 },

    /* --------------------------------------------------------- refusals */
    { "rl.parallel_env_step", "3 x CartPole-v1, a [3, 1] action", { T(I64, 2, 3, 1) }, NULL, { NONE }, LOOM_EINVAL,
      "'action'", .object = 2 },
    { "rl.env_step", "CartPole-v1, an action of two elements", { T(I64, 1, 2) }, NULL, { NONE }, LOOM_EINVAL,
      "'action'", .object = 1 },
    { CLIP, "advantage [N]", { N1(F32, 4), N1(F32, 4), N1(F32, 4), N2(F32, 4), N2(F32, 4), N1(F32, 4) }, NULL,
      { NONE }, LOOM_EINVAL, "'advantage'" },
    { CLIP, "state_value of another batch", { N1(F32, 4), N1(F32, 4), N2(F32, 4), N2(F32, 5), N2(F32, 4), N1(F32, 4) },
      NULL, { NONE }, LOOM_EINVAL, "'state_value'" },
    { CLIP, "unknown critic distance", CLIP_IN(F64, 3), "loss_critic_type=huber", { NONE }, LOOM_EINVAL,
      "loss_critic_type" },
    { CLIP, "negative clip_epsilon", CLIP_IN(F64, 3), "clip_epsilon=-0.1", { NONE }, LOOM_EINVAL, "clip_epsilon" },
    { KLP, "increment below 1", { N1(F64, 3), N1(F64, 3), N2(F64, 3), N2(F64, 3), N2(F64, 3), N1(F64, 3), N1(F64, 3) },
      "increment=0.5", { NONE }, LOOM_EINVAL, "increment" },
    { KLP, "kl of another batch", { N1(F64, 3), N1(F64, 3), N2(F64, 3), N2(F64, 3), N2(F64, 3), N1(F64, 3),
      N1(F64, 2) }, NULL, { NONE }, LOOM_EINVAL, "'kl'" },
    { A2C, "entropy of two dtypes", { N1(F32, 3), N2(F32, 3), N2(F32, 3), N2(F32, 3), N1(F64, 3) }, NULL, { NONE },
      LOOM_EINVAL, "entropy" },
    { TDL, "no step", { V3(F32, 4, 0, 1), V3(F32, 4, 0, 1), V3(BOOL, 4, 0, 1), NONE }, GL, { NONE },
      LOOM_EINVAL, "no time steps" },
    { VTRACE, "no step", { V3(F64, 2, 0, 1), V3(F64, 2, 0, 1), V3(F64, 2, 0, 1), V3(F64, 2, 0, 1), V3(F64, 2, 0, 1),
      V3(BOOL, 2, 0, 1) }, "gamma=0.99", { NONE }, LOOM_EINVAL, "no time steps" },
    { GAE, "reward of another shape", { V3(F32, 2, 5, 1), V3(F32, 2, 5, 1), V3(F32, 2, 6, 1), V3(BOOL, 2, 5, 1), NONE },
      GL, { NONE }, LOOM_EINVAL, "'reward'" },
    { GAE, "terminated of another shape", { V3(F32, 2, 5, 1), V3(F32, 2, 5, 1), V3(F32, 2, 5, 1), V3(BOOL, 2, 5, 1),
      V3(BOOL, 2, 5, 2) }, GL, { NONE }, LOOM_EINVAL, "'terminated'" },
    { GAE, "done not bool", { V3(F32, 2, 5, 1), V3(F32, 2, 5, 1), V3(F32, 2, 5, 1), V3(F32, 2, 5, 1), NONE }, GL,
      { NONE }, LOOM_EINVAL, "done" },
    { GAE, "values of two dtypes", { V3(F32, 2, 5, 1), V3(F64, 2, 5, 1), V3(F32, 2, 5, 1), V3(BOOL, 2, 5, 1), NONE },
      GL, { NONE }, LOOM_EINVAL, "next_state_value" },
    { GAE, "f16 values", { V3(F16, 2, 5, 1), V3(F16, 2, 5, 1), V3(F16, 2, 5, 1), V3(BOOL, 2, 5, 1), NONE }, GL,
      { NONE }, LOOM_EINVAL, "state_value" },
    { GAE, "time_dim out of range", { V3(F32, 2, 5, 1), V3(F32, 2, 5, 1), V3(F32, 2, 5, 1), V3(BOOL, 2, 5, 1), NONE },
      GL ";time_dim=3", { NONE }, LOOM_EINVAL, "time_dim 3" },
    { GAE, "1-D values, time_dim -2", { T(F32, 1, 5), T(F32, 1, 5), T(F32, 1, 5), T(BOOL, 1, 5), NONE }, GL,
      { NONE }, LOOM_EINVAL, "time_dim -2" },
    { GAE, "no gamma", { V3(F32, 2, 5, 1), V3(F32, 2, 5, 1), V3(F32, 2, 5, 1), V3(BOOL, 2, 5, 1), NONE },
      "lmbda=0.95", { NONE }, LOOM_EINVAL, "gamma" },
    { TD0, "terminated of another shape", { T(F64, 2, 3, 1), T(F64, 2, 3, 1), T(BOOL, 2, 3, 2) }, "gamma=0.9",
      { NONE }, LOOM_EINVAL, "'terminated'" },
    { TDL, "non-finite lmbda", { V3(F32, 2, 5, 1), V3(F32, 2, 5, 1), V3(BOOL, 2, 5, 1), NONE },
      "gamma=0.99;lmbda=nan", { NONE }, LOOM_EINVAL, "lmbda" },
    { VTRACE, "log_mu of another shape", { V3(F32, 2, 5, 1), V3(F32, 2, 4, 1), V3(F32, 2, 5, 1), V3(F32, 2, 5, 1),
      V3(F32, 2, 5, 1), V3(BOOL, 2, 5, 1) }, "gamma=0.99", { NONE }, LOOM_EINVAL, "'log_mu'" },
};

static int setup(void **state)
{
    loom_attrs *a = NULL;
    int rc = tu_setup(state);
    if (rc != 0 || loom_attrs_new(&a) != LOOM_OK || loom_attrs_set_string(a, "id", "CartPole-v1") != LOOM_OK ||
        loom_object_create(&oc_objects[0], "rl.env", a, NULL) != LOOM_OK ||
        loom_attrs_set_int(a, "num_envs", 3) != LOOM_OK ||
        loom_object_create(&oc_objects[1], "rl.parallel_env", a, NULL) != LOOM_OK)
        rc = -1;
    loom_attrs_free(a);
    return rc;
}

static int teardown(void **state)
{
    for (int i = 0; i < 2; i++) {
        loom_object_free(oc_objects[i]);
        oc_objects[i] = NULL;
    }
    return tu_teardown(state);
}

int main(void)
{
    /* the TensorDict, MemoryMappedTensor and replay-buffer methods have
    ** tests of their own (tests/rl/test_td_*.c, test_replay_*.c) */
    static const char *const td_and_replay[] = { "rl.td_", "rl.mmt_", "rl.rb_", NULL };
    oc_covered_elsewhere = td_and_replay;
    return oc_run_group("rl_value_cases", "rl.", cases, sizeof cases / sizeof cases[0], setup, teardown);
}
