/* SPDX-License-Identifier: BSD-3-Clause */
/*
** examples/rl - a Gym-like step loop in C through loom's public API: the
** rl pack's CartPole-v1 as an rl.env object (reset, then step until done,
** then reset again), then 8 of them in an rl.parallel_env, stepped as one
** batch with TorchRL's auto-reset. The policy pushes the cart the way the
** pole leans. Prints the episodes and their mean return.
**
**   make && ./rl_loop
*/
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "loom/loom.h"

static int check(loom_status st, const char *what)
{
    if (st != LOOM_OK)
        fprintf(stderr, "%s: %s\n", what, loom_last_error());
    return st == LOOM_OK;
}

static loom_object *make_env(const char *cls, int64_t num_envs)
{
    loom_attrs *a = NULL;
    loom_object *env = NULL;
    if (!check(loom_attrs_new(&a), "attrs") || !check(loom_attrs_set_string(a, "id", "CartPole-v1"), "id") ||
        (num_envs > 0 && !check(loom_attrs_set_int(a, "num_envs", num_envs), "num_envs")))
        return NULL;
    check(loom_object_create(&env, cls, a, NULL), cls);
    loom_attrs_free(a);
    return env;
}

/* reset (seed >= 0) into *obs */
static int reset(loom_object *env, const char *op, int64_t seed, loom_tensor **obs)
{
    loom_attrs *a = NULL;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = env;
    *obs = NULL;
    int ok = check(loom_attrs_new(&a), "attrs") && check(loom_attrs_set_int(a, "seed", seed), "seed") &&
             check(loom_run(op, NULL, 0, a, obs, 1, &opt), op);
    loom_attrs_free(a);
    return ok;
}

static int64_t lean(const float *obs) { return obs[2] + 0.5f * obs[3] > 0.0f; }

int main(void)
{
    if (!check(loom_init(NULL), "loom_init"))
        return 1;
    int rc = 1;

    /* one environment: obs = reset(seed); loop { obs, r, terminated, truncated = step(a) } */
    loom_object *env = make_env("rl.env", 0);
    loom_tensor *obs = NULL, *action = NULL;
    const int64_t one[1] = { 1 };
    if (env == NULL || !reset(env, "rl.env_reset", 0, &obs) ||
        !check(loom_tensor_new(&action, LOOM_DTYPE_I64, 1, one, NULL), "action"))
        goto out;
    int episodes = 0;
    double ret = 0, total = 0;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = env;
    for (int t = 0; t < 2000; t++) {
        loom_tensor *out[5] = { 0 };
        *(int64_t *)loom_data(action) = lean(loom_data(obs));
        if (!check(loom_run("rl.env_step", (const loom_tensor *const *)&action, 1, NULL, out, 5, &opt), "step"))
            goto out;
        ret += *(const double *)loom_data(out[1]);
        const int done = *(const uint8_t *)loom_data(out[4]);
        loom_tensor_free(obs);
        obs = out[0];
        for (int k = 1; k < 5; k++)
            loom_tensor_free(out[k]);
        if (done) {
            episodes++;
            total += ret;
            ret = 0;
            loom_tensor_free(obs);
            if (!reset(env, "rl.env_reset", -1, &obs))
                goto out;
        }
    }
    printf("CartPole-v1: %d episodes in 2000 steps, mean return %.1f\n", episodes, episodes ? total / episodes : 0.0);

    /* eight at once: the batch resets its done environments itself */
    enum { N = 8 };
    loom_object *batch = make_env("rl.parallel_env", N);
    loom_tensor *bobs = NULL, *bact = NULL;
    const int64_t n[1] = { N };
    if (batch == NULL || !reset(batch, "rl.parallel_env_reset", 0, &bobs) ||
        !check(loom_tensor_new(&bact, LOOM_DTYPE_I64, 1, n, NULL), "actions")) {
        loom_object_free(batch);
        goto out;
    }
    opt.object = batch;
    int64_t dones = 0;
    for (int t = 0; t < 1000; t++) {
        loom_tensor *out[6] = { 0 };
        for (int i = 0; i < N; i++)
            ((int64_t *)loom_data(bact))[i] = lean((const float *)loom_data(bobs) + 4 * i);
        if (!check(loom_run("rl.parallel_env_step", (const loom_tensor *const *)&bact, 1, NULL, out, 6, &opt),
                   "parallel step"))
            break;
        for (int i = 0; i < N; i++)
            dones += ((const uint8_t *)loom_data(out[4]))[i];
        loom_tensor_free(bobs);
        bobs = out[5];          /* the next step's root: reset observations where done */
        for (int k = 0; k < 5; k++)
            loom_tensor_free(out[k]);
        if (t == 999)
            rc = 0;
    }
    printf("rl.parallel_env: %d x CartPole-v1, 1000 steps, %lld episodes ended\n", N, (long long)dones);
    loom_tensor_free(bobs);
    loom_tensor_free(bact);
    loom_object_free(batch);
out:
    loom_tensor_free(obs);
    loom_tensor_free(action);
    loom_object_free(env);
    loom_shutdown();
    return rc;
}
