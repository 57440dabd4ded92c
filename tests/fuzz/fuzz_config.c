/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fuzz_config.c - feeds: the environment-driven configuration. An input is
** up to eight NUL-separated values for LOOM_BACKENDS, LOOM_PLUGINS_SELECT,
** LOOM_PLUGINS_DISABLE, LOOM_NUM_THREADS, LOOM_CPU_MAX_ISA, LOOM_VERBOSE,
** LOOM_STRICT and LOOM_MAX_ALLOC (a missing value leaves the variable unset). Each input runs
** the parser alone (loom__config_load into a private configuration, then
** the glob matcher on pack names), then a whole loom_init / loom_shutdown:
** the loader scans one folder of fake packs (empty core.so, vision.so, ...:
** the globs decide which ones it tries to open, and every one it opens is
** refused, so no code is loaded per input) and the backend policy is parsed
** and asked for the rank of every backend for a few op names.
** Asserts: no sanitizer report; the parsed configuration keeps its
** invariants (a log stream, verbose in 0..3, threads in 0..1024, a known ISA
** cap or none, strings equal to the variables that set them); init succeeds
** whatever the values (a malformed value is reported, never fatal) and
** loads no pack; the config lines and the scan list are complete.
** The thread pool gets min(threads parsed, 2) by option, so a fuzzed
** LOOM_NUM_THREADS=1024 does not start 1024 threads per input; the env
** value is still what loom__config_load parses. hwloc reads a synthetic
** topology (HWLOC_SYNTHETIC): loom reloads the topology at every init, and
** reading the machine's from /sys would cut executions six-fold.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "internal.h"
#include "registry.h"

static const char *const vars[] = {
    "LOOM_BACKENDS", "LOOM_PLUGINS_SELECT", "LOOM_PLUGINS_DISABLE", "LOOM_NUM_THREADS",
    "LOOM_CPU_MAX_ISA", "LOOM_VERBOSE", "LOOM_STRICT", "LOOM_MAX_ALLOC",
};
#define N_VARS (sizeof vars / sizeof vars[0])

static const char *const fake_packs[] = { "core", "core-cuda", "vision", "vision-cuda", "fbgemm", "x.y" };
#define N_FAKE (sizeof fake_packs / sizeof fake_packs[0])

static char fake_dir[64];
static FILE *devnull;

/* The folder of fake packs goes when the run ends (libFuzzer exits). */
static void remove_fake_dir(void)
{
    for (size_t i = 0; i < N_FAKE; i++) {
        char path[128];
        snprintf(path, sizeof path, "%s/%s.so", fake_dir, fake_packs[i]);
        unlink(path);
    }
    rmdir(fake_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *tmp = getenv("TMPDIR");
    snprintf(fake_dir, sizeof fake_dir, "%s/loom-fuzz-XXXXXX", tmp && *tmp && strlen(tmp) < 40 ? tmp : "/tmp");
    FZ_CHECK(mkdtemp(fake_dir) != NULL, "mkdtemp");
    atexit(remove_fake_dir);
    for (size_t i = 0; i < N_FAKE; i++) {
        char path[128];
        snprintf(path, sizeof path, "%s/%s.so", fake_dir, fake_packs[i]);
        FILE *f = fopen(path, "w");
        FZ_CHECK(f != NULL && fclose(f) == 0, "creating %s", path);
    }
    devnull = fopen("/dev/null", "w");
    FZ_CHECK(devnull != NULL, "/dev/null");
    for (size_t i = 0; i < N_VARS; i++)
        unsetenv(vars[i]);
    unsetenv("LOOM_PLUGIN_PATH");
    setenv("HWLOC_SYNTHETIC", "package:1 core:2 pu:1", 1);
    return 0;
}

static int same(const char *cfg, const char *env)
{
    if (env == NULL || env[0] == '\0')
        return cfg == NULL;
    return cfg != NULL && strcmp(cfg, env) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_cursor c = { data, size };
    for (size_t i = 0; i < N_VARS; i++) {
        if (c.n == 0) {
            unsetenv(vars[i]);
            continue;
        }
        char *v = fz_str(&c, 0, 256);
        setenv(vars[i], v, 1);
        free(v);
    }

    /* the parser alone */
    loom_init_options o = LOOM_INIT_OPTIONS_INIT;
    o.log_stream = devnull;
    loom__config cfg;
    loom_status st = loom__config_load(&cfg, &o);
    FZ_CHECK(st == LOOM_OK, "loom__config_load: %s", loom_status_name(st));
    FZ_CHECK(cfg.log == devnull, "log stream");
    FZ_CHECK(cfg.verbose >= 0 && cfg.verbose <= 3, "verbose %d", cfg.verbose);
    FZ_CHECK(cfg.num_threads >= 0 && cfg.num_threads <= 1024, "threads %d", cfg.num_threads);
    /* every level loom__cpu_level names but "native" (which leaves no cap) */
    FZ_CHECK(cfg.cpu_max_isa == NULL || strcmp(cfg.cpu_max_isa, "scalar") == 0 || strcmp(cfg.cpu_max_isa, "sse4") == 0
                 || strcmp(cfg.cpu_max_isa, "avx2") == 0 || strcmp(cfg.cpu_max_isa, "avx512") == 0
                 || strcmp(cfg.cpu_max_isa, "amx") == 0,
             "isa '%s'", cfg.cpu_max_isa);
    FZ_CHECK(same(cfg.backends, getenv("LOOM_BACKENDS")), "backends");
    FZ_CHECK(same(cfg.select, getenv("LOOM_PLUGINS_SELECT")), "select");
    FZ_CHECK(same(cfg.disable, getenv("LOOM_PLUGINS_DISABLE")), "disable");
    FZ_CHECK(cfg.plugin_path == NULL, "plugin path from nowhere");
    for (size_t i = 0; i < N_FAKE; i++) {
        loom__glob_list_match(cfg.select, fake_packs[i]);
        loom__glob_list_match(cfg.disable, fake_packs[i]);
    }
    const int threads = cfg.num_threads == 0 || cfg.num_threads > 2 ? 2 : cfg.num_threads;
    const bool strict = cfg.strict;
    loom__config_free(&cfg);

    /* the whole init */
    o.plugin_path = fake_dir;
    o.no_default_dirs = 1;
    o.num_threads = threads;
    st = loom_init(&o);
    if (st != LOOM_OK && strict) {
        /* LOOM_STRICT=1 makes a LOOM_BACKENDS mistake (no fake pack brings a
        ** backend or op) an error at init, which must leave nothing loaded */
        FZ_CHECK(st == LOOM_EINVAL && strncmp(loom_last_error(), "LOOM_BACKENDS: ", 15) == 0,
                 "strict loom_init: %s (%s)", loom_status_name(st), loom_last_error());
        FZ_CHECK(loom_op_count() == 0, "a failed init left ops behind");
        loom_shutdown();
        return 0;
    }
    FZ_CHECK(st == LOOM_OK, "loom_init: %s", loom_status_name(st));
    FZ_CHECK(loom_op_count() == 0, "a fake pack loaded");
    FZ_CHECK(loom_num_threads() == threads, "%d threads, asked for %d", (int)loom_num_threads(), threads);
    for (int64_t i = 0; i < loom_config_count(); i++)
        FZ_CHECK(loom_config_at(i) != NULL, "config line %lld", (long long)i);
    FZ_CHECK(loom_scan_count() == (int64_t)N_FAKE, "%lld files scanned", (long long)loom_scan_count());
    for (int64_t i = 0; i < loom_scan_count(); i++) {
        loom_scan_entry e = LOOM_SCAN_ENTRY_INIT;
        FZ_CHECK(loom_scan_at(i, &e) == LOOM_OK && e.path != NULL, "scan entry %lld", (long long)i);
        FZ_CHECK(e.result != LOOM_SCAN_LOADED, "fake pack %s loaded", e.path);
    }
    static const char *const ops[] = { "vision.nms", "core.matmul", "fbgemm.tbe", "" };
    static const char *const backends[] = { "cuda", "onednn", "cpu", "x", "" };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        for (size_t k = 0; k < sizeof backends / sizeof backends[0]; k++)
            loom__backend_rank(ops[i], backends[k]);
    loom_shutdown();
    return 0;
}
