/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cmd_rl.c - `loom rl rollout ENV [--steps N] [--envs N] [--policy random|zero]
** [--seed S]`: a rollout of the rl pack's environments through the public
** API (rl.env_spec for the action space, rl.parallel_env to step), the
** episodes it finished and their mean return, and the steps per second.
*/
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char rl_usage[] =
    "usage: loom rl rollout ENV [--steps N] [--envs N] [--policy random|zero] [--seed S]\n"
    "  ENV       CartPole-v1, Pendulum-v1, MountainCar-v0, MountainCarContinuous-v0, Acrobot-v1\n"
    "  --steps N   steps of every environment (default 1000)\n"
    "  --envs N    environments stepped together by rl.parallel_env (default 1)\n"
    "  --policy P  random: uniform over the action space (default); zero: action 0\n"
    "  --seed S    environment i is reset with S + i; the policy's draws too (default 0)\n";

static int parse_count(const char *s, long long lo, long long *out)
{
    char *end;
    const long long v = strtoll(s, &end, 10);
    if (*end != '\0' || v < lo)
        return 0;
    *out = v;
    return 1;
}

static loom_status run_method(loom_object *o, const char *op, const loom_tensor *in, const loom_attrs *a,
                              loom_tensor **out, int n_out)
{
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = o;
    memset(out, 0, (size_t)n_out * sizeof *out);
    return loom_run(op, in ? &in : NULL, in ? 1 : 0, a, out, n_out, &opt);
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int rollout(const char *id, long long steps, long long n, int random_policy, long long seed)
{
    loom_attrs *ca = NULL, *ra = NULL;
    loom_object *single = NULL, *batch = NULL;
    loom_tensor *spec[6] = { 0 }, *obs = NULL, *act = NULL, *out[6] = { 0 };
    int rc = CLI_FAIL;
    if (loom_attrs_new(&ca) != LOOM_OK || loom_attrs_set_string(ca, "id", id) != LOOM_OK ||
        loom_object_create(&single, "rl.env", ca, NULL) != LOOM_OK ||
        run_method(single, "rl.env_spec", NULL, NULL, spec, 6) != LOOM_OK ||
        loom_attrs_set_int(ca, "num_envs", n) != LOOM_OK ||
        loom_object_create(&batch, "rl.parallel_env", ca, NULL) != LOOM_OK || loom_attrs_new(&ra) != LOOM_OK ||
        loom_attrs_set_int(ra, "seed", seed) != LOOM_OK || run_method(batch, "rl.parallel_env_reset", NULL, ra, &obs, 1) != LOOM_OK)
        goto done;
    const int64_t action_n = *(const int64_t *)loom_data(spec[2]), asize = spec[3]->shape[0];
    const double *lo = loom_data(spec[3]), *hi = loom_data(spec[4]);
    const int64_t ashape[2] = { n, asize };
    if (loom_tensor_new(&act, action_n > 0 ? LOOM_DTYPE_I64 : LOOM_DTYPE_F32, action_n > 0 ? 1 : 2, ashape, NULL) != LOOM_OK)
        goto done;
    double *ret = calloc((size_t)n, sizeof *ret), total = 0;
    if (ret == NULL)
        goto done;
    uint64_t rng = (uint64_t)seed;
    long long episodes = 0;
    const double t0 = cli_now();
    for (long long t = 0; t < steps; t++) {
        for (int64_t i = 0; i < n * (action_n > 0 ? 1 : asize); i++) {
            const double u = (double)(splitmix(&rng) >> 11) * (1.0 / 9007199254740992.0);
            if (action_n > 0)
                ((int64_t *)loom_data(act))[i] = random_policy ? (int64_t)(u * (double)action_n) : 0;
            else
                ((float *)loom_data(act))[i] = random_policy ? (float)(lo[i % asize] + (hi[i % asize] - lo[i % asize]) * u) : 0.0f;
        }
        for (int k = 0; k < 6; k++)
            loom_tensor_free(out[k]);
        if (run_method(batch, "rl.parallel_env_step", act, NULL, out, 6) != LOOM_OK) {
            free(ret);
            goto done;
        }
        const double *r = loom_data(out[1]);
        const uint8_t *d = loom_data(out[4]);
        for (int64_t i = 0; i < n; i++) {
            ret[i] += r[i];
            if (d[i]) {
                episodes++;
                total += ret[i];
                ret[i] = 0;
            }
        }
    }
    const double secs = cli_now() - t0;
    free(ret);
    printf("%s: %lld environment%s x %lld steps, policy %s\n", id, n, n == 1 ? "" : "s", steps,
           random_policy ? "random" : "zero");
    printf("episodes finished: %lld", episodes);
    if (episodes > 0)
        printf(", mean return %.3f", total / (double)episodes);
    printf("\n%.0f steps/s (%.3f s)\n", secs > 0 ? (double)(steps * n) / secs : 0.0, secs);
    rc = CLI_OK;
done:
    if (rc != CLI_OK)
        cli_fail();
    for (int k = 0; k < 6; k++) {
        loom_tensor_free(out[k]);
        loom_tensor_free(spec[k]);
    }
    loom_tensor_free(obs);
    loom_tensor_free(act);
    loom_object_free(batch);
    loom_object_free(single);
    loom_attrs_free(ca);
    loom_attrs_free(ra);
    return rc;
}

int cmd_rl(int argc, char **argv)
{
    static const struct option opts[] = {
        { "steps", required_argument, NULL, 's' }, { "envs", required_argument, NULL, 'n' },
        { "policy", required_argument, NULL, 'p' }, { "seed", required_argument, NULL, 'e' },
        { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
    };
    long long steps = 1000, n = 1, seed = 0;
    int random_policy = 1, c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(rl_usage, stdout);
            return CLI_OK;
        } else if (c == 's') {
            if (!parse_count(optarg, 0, &steps))
                return cli_usage_error("rl", rl_usage, "--steps takes a count, not '%s'", optarg);
        } else if (c == 'n') {
            if (!parse_count(optarg, 1, &n))
                return cli_usage_error("rl", rl_usage, "--envs takes a count >= 1, not '%s'", optarg);
        } else if (c == 'e') {
            if (!parse_count(optarg, 0, &seed))
                return cli_usage_error("rl", rl_usage, "--seed takes a number >= 0, not '%s'", optarg);
        } else if (c == 'p') {
            if (strcmp(optarg, "random") != 0 && strcmp(optarg, "zero") != 0)
                return cli_usage_error("rl", rl_usage, "--policy is random or zero, not '%s'", optarg);
            random_policy = strcmp(optarg, "random") == 0;
        } else {
            return cli_bad_option("rl", rl_usage, c, argv);
        }
    }
    if (steps > 0 && n > (long long)1e15 / steps)
        return cli_usage_error("rl", rl_usage, "--steps x --envs is over 1e15 steps");
    if (argc - optind != 2 || strcmp(argv[optind], "rollout") != 0)
        return cli_usage_error("rl", rl_usage, "expected: rollout ENV");
    if (cli_init() != CLI_OK)
        return CLI_FAIL;
    const int rc = rollout(argv[optind + 1], steps, n, random_policy, seed);
    cli_shutdown();
    return rc;
}
