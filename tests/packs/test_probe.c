/* SPDX-License-Identifier: BSD-3-Clause */
/* test_probe.c - vetted pack loading (LOOM_PROBE=1, probe_packs): a pack
** whose init crashes, aborts, hangs or fails is quarantined in a child
** process and never opened by this one, which survives; a good pack loads,
** also one whose dependency the probe must initialise first; the verdicts
** are cached (a second init probes nothing); `--forget` (loom_probe_forget
** and the CLI) clears one; a corrupt cache is ignored, never fatal. The
** packs are probepack.c's (probe/); the cache lives in a temporary
** XDG_CACHE_HOME. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#include "packs_util.h"

static char cache_home[256], cache_path[512];
static char log_text[65536];
static FILE *log_file;   /* the core logs into it until the next init */

/* Init on the probe folder with probing on (by option, or by LOOM_PROBE
** when by_env), logging at verbose 1 into log_text. */
static void init_probe(bool by_env)
{
    loom_init_options o = LOOM_INIT_OPTIONS_INIT;
    FILE *log;
    size_t n;
    loom_shutdown();
    if (log_file != NULL)
        fclose(log_file);
    log_file = log = tmpfile();
    unsetenv("LOOM_PLUGINS_SELECT");
    o.plugin_path = getenv("LOOM_TEST_PROBE_PACKS");
    o.no_default_dirs = 1;
    o.log_stream = log;
    o.verbose = 1;
    if (by_env)
        setenv("LOOM_PROBE", "1", 1);
    else
        o.probe_packs = 1;
    assert_int_equal(loom_init(&o), LOOM_OK);
    unsetenv("LOOM_PROBE");
    fflush(log);
    rewind(log);
    n = fread(log_text, 1, sizeof log_text - 1, log);
    log_text[n] = '\0';
}


static char *read_file(const char *path)
{
    static char buf[65536];
    FILE *f = fopen(path, "r");
    size_t n = 0;
    buf[0] = '\0';
    if (f != NULL) {
        n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
    }
    buf[n] = '\0';
    return buf;
}

static int count_lines_with(const char *text, const char *prefix)
{
    int n = 0;
    for (const char *p = text; p != NULL && *p != '\0'; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        n += strncmp(p, prefix, strlen(prefix)) == 0;
    return n;
}

static bool opened_here(const char *file)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", getenv("LOOM_TEST_PROBE_PACKS"), file);
    void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (h != NULL)
        dlclose(h);
    return h != NULL;
}

static const char *const bad_files[] = { "probe_crash.so", "probe_abort.so", "probe_hang.so", "probe_fails.so" };
static const char *const bad_names[] = { "pcrash", "pabort", "phang", "pfails" };

static void bad_packs_are_quarantined_and_never_opened_here(void **state)
{
    char probing[4200];
    (void)state;
    init_probe(false);
    /* A null write: SIGSEGV, or under a sanitizer its report and exit (or abort). */
    loom_scan_entry crash = packs_scan("probe_crash.so");
    assert_int_equal(crash.result, LOOM_SCAN_REFUSED);
    if (strstr(crash.reason, "crashed with SIGSEGV in its init") == NULL
        && strstr(crash.reason, "crashed with SIGABRT in its init") == NULL
        && strstr(crash.reason, "exited the process with status") == NULL)
        fail_msg("probe_crash.so: '%s'", crash.reason);
    packs_expect("probe_crash.so", LOOM_SCAN_REFUSED, "quarantined: ");
    packs_expect("probe_crash.so", LOOM_SCAN_REFUSED, "`loom doctor --forget probe_crash.so` to retry");
    packs_expect("probe_abort.so", LOOM_SCAN_REFUSED, "quarantined: crashed with SIGABRT in its init (probed ");
    packs_expect("probe_hang.so", LOOM_SCAN_REFUSED, "quarantined: did not return within 1 s in its init (killed; "
           "LOOM_PROBE_TIMEOUT sets the limit)");
    packs_expect("probe_fails.so", LOOM_SCAN_REFUSED, "quarantined: init failed with LOOM_EDEVICE: the probe device is "
           "on fire");
    /* The good pack loads; so does the one whose probe needs it first. */
    packs_expect("probe_good.so", LOOM_SCAN_LOADED, "loaded");
    packs_expect("probe_user.so", LOOM_SCAN_LOADED, "loaded");
    assert_non_null(loom_op_find("pgood.op"));
    assert_non_null(loom_op_find("puser.op"));
    /* None of the bad ones was ever opened by this process. */
    for (size_t i = 0; i < 4; i++) {
        char var[64];
        snprintf(var, sizeof var, "PROBE_OPENED_%s", bad_names[i]);
        assert_null(getenv(var));
        assert_false(opened_here(bad_files[i]));
    }
    assert_true(opened_here("probe_good.so"));
    /* Each was probed, and each verdict is in the cache. */
    snprintf(probing, sizeof probing, "probing %s/probe_good.so", getenv("LOOM_TEST_PROBE_PACKS"));
    assert_non_null(strstr(log_text, probing));
    assert_non_null(strstr(log_text, "probing the init of "));   /* puser, after pgood */
    const char *cache = read_file(cache_path);
    assert_true(strncmp(cache, "# loom probe cache 1\n", 21) == 0);
    assert_int_equal(count_lines_with(cache, "bad\t"), 4);
    assert_int_equal(count_lines_with(cache, "good\t"), 2);
    assert_int_equal(loom_probe_record_count(), 6);
    int quarantined = 0;
    for (int64_t i = 0; i < 6; i++) {
        loom_probe_record r = LOOM_PROBE_RECORD_INIT;
        assert_int_equal(loom_probe_record_at(i, &r), LOOM_OK);
        quarantined += r.quarantined;
        assert_true(r.probed_at > 0 && r.size > 0);
    }
    assert_int_equal(quarantined, 4);
}

static void a_second_init_uses_the_cache(void **state)
{
    (void)state;
    init_probe(true);   /* LOOM_PROBE=1 this time */
    assert_null(strstr(log_text, "probing "));
    assert_non_null(strstr(log_text, "probe_good.so passed before; not probed again (cached)"));
    packs_expect("probe_hang.so", LOOM_SCAN_REFUSED, "quarantined: did not return within 1 s");
    packs_expect("probe_crash.so", LOOM_SCAN_REFUSED, "quarantined: ");
    packs_expect("probe_good.so", LOOM_SCAN_LOADED, "loaded");
    packs_expect("probe_user.so", LOOM_SCAN_LOADED, "loaded");
    for (size_t i = 0; i < 4; i++)
        assert_false(opened_here(bad_files[i]));
    /* The config lines say so. */
    bool seen = false;
    for (int64_t i = 0; i < loom_config_count(); i++)
        seen |= strcmp(loom_config_at(i), "LOOM_PROBE=1 (environment)") == 0;
    assert_true(seen);
}

static void forget_clears_one_record(void **state)
{
    char path[4096], probing[4200];
    int64_t n = -1;
    (void)state;
    assert_int_equal(loom_probe_forget("probe_crash.so", &n), LOOM_OK);
    assert_int_equal(n, 1);
    assert_int_equal(loom_probe_record_count(), 5);
    assert_int_equal(loom_probe_forget("probe_crash", &n), LOOM_ENOENT);
    assert_int_equal(n, 0);
    init_probe(false);
    snprintf(probing, sizeof probing, "probing %s/probe_crash.so", getenv("LOOM_TEST_PROBE_PACKS"));
    assert_non_null(strstr(log_text, probing));
    assert_null(strstr(log_text, "probing " "/probe_abort.so"));
    packs_expect("probe_crash.so", LOOM_SCAN_REFUSED, "quarantined: ");
    assert_int_equal(loom_probe_record_count(), 6);
    /* By path, and without ".so". */
    snprintf(path, sizeof path, "%s/probe_fails.so", getenv("LOOM_TEST_PROBE_PACKS"));
    assert_int_equal(loom_probe_forget(path, &n), LOOM_OK);
    assert_int_equal(n, 1);
    assert_int_equal(loom_probe_forget("probe_abort", &n), LOOM_OK);
    assert_int_equal(n, 1);
    assert_int_equal(loom_probe_record_count(), 4);
}

static void a_corrupt_cache_is_ignored(void **state)
{
    FILE *f = fopen(cache_path, "w");
    (void)state;
    assert_non_null(f);
    fputs("this is not a probe cache\n\x01\x02garbage\tgood\n", f);
    fclose(f);
    init_probe(false);
    assert_non_null(strstr(log_text, "is corrupt (line 1 does not parse); ignored"));
    packs_expect("probe_good.so", LOOM_SCAN_LOADED, "loaded");
    packs_expect("probe_abort.so", LOOM_SCAN_REFUSED, "quarantined: crashed with SIGABRT");
    /* Rewritten whole. */
    const char *cache = read_file(cache_path);
    assert_true(strncmp(cache, "# loom probe cache 1\n", 21) == 0);
    assert_int_equal(count_lines_with(cache, "bad\t") + count_lines_with(cache, "good\t"), 6);
    /* A bad line further down is just as corrupt. */
    f = fopen(cache_path, "a");
    fputs("good\tnothex\t1\t2\t3\t/x.so\t\n", f);
    fclose(f);
    assert_int_equal(loom_probe_record_count(), 0);
}

/* The CLI: `loom doctor` lists the quarantined packs (and the dependencies),
** `loom doctor --forget FILE` clears one. */
static void doctor_lists_and_forgets(void **state)
{
    char cmd[8192], out[65536];
    const char *cli = getenv("LOOM_TEST_CLI");
    FILE *p;
    size_t n;
    (void)state;
    loom_shutdown();
    init_probe(false);   /* a valid cache again */
    loom_shutdown();
    snprintf(cmd, sizeof cmd, "LOOM_PROBE=1 LOOM_PLUGINS_SELECT='probe_*' LOOM_PLUGIN_PATH='%s' '%s' doctor 2>&1",
             getenv("LOOM_TEST_PROBE_PACKS"), cli);
    assert_non_null(p = popen(cmd, "r"));
    n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    assert_int_equal(pclose(p), 0);
    assert_non_null(strstr(out, "quarantined packs (vetted loading, LOOM_PROBE=1; cache "));
    assert_non_null(strstr(out, "/probe_hang.so\n"));
    assert_non_null(strstr(out, "did not return within 1 s in its init"));
    assert_non_null(strstr(out, "`loom doctor --forget probe_hang.so` to retry"));
    assert_non_null(strstr(out, "dependencies:\n"));
    assert_non_null(strstr(out, "puser"));
    assert_non_null(strstr(out, "pgood (pack): satisfied: pack loaded from "));
    assert_non_null(strstr(out, "LOOM_PROBE=1 (environment)"));
    snprintf(cmd, sizeof cmd, "'%s' doctor --forget probe_hang.so 2>&1", cli);
    assert_non_null(p = popen(cmd, "r"));
    n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    assert_int_equal(pclose(p), 0);
    assert_non_null(strstr(out, "forgot 1 probe record of probe_hang.so"));
    snprintf(cmd, sizeof cmd, "'%s' doctor --forget probe_hang.so >/dev/null 2>&1", cli);
    assert_int_not_equal(system(cmd), 0);   /* nothing left to forget */
}

static int setup(void **state)
{
    (void)state;
    snprintf(cache_home, sizeof cache_home, "/tmp/loom-test-probe-XXXXXX");
    if (mkdtemp(cache_home) == NULL)
        return -1;
    setenv("XDG_CACHE_HOME", cache_home, 1);
    setenv("LOOM_PROBE_TIMEOUT", "1", 1);
    snprintf(cache_path, sizeof cache_path, "%s/loom/probe-cache", cache_home);
    return 0;
}

static int teardown(void **state)
{
    char cmd[600];
    (void)state;
    loom_shutdown();
    if (log_file != NULL)
        fclose(log_file);
    log_file = NULL;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_home);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_packs_are_quarantined_and_never_opened_here),
        cmocka_unit_test(a_second_init_uses_the_cache),
        cmocka_unit_test(forget_clears_one_record),
        cmocka_unit_test(a_corrupt_cache_is_ignored),
        cmocka_unit_test(doctor_lists_and_forgets),
    };
    return cmocka_run_group_tests_name("probe", tests, setup, teardown);
}
