/* SPDX-License-Identifier: BSD-3-Clause */
/* test_deps.c - ABI 1.1 dependencies: the loader orders the inits by each
** pack's depends (a pack or an op), not by file name, and refuses a pack
** whose dependency is missing, refused or filtered, naming it, and every
** pack of a cycle, naming the cycle. loom_load_pack checks the depends of
** one pack against what is loaded. The packs are deppack.c's (deps/). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <cmocka.h>

#include "packs_util.h"

static FILE *log_file;
static char log_text[65536];

/* Init on the deps folder only, logging loads (verbose 1) into log_text. */
static void init_deps(const char *disable)
{
    loom_init_options o = LOOM_INIT_OPTIONS_INIT;
    size_t n;
    loom_shutdown();
    unsetenv("LOOM_PLUGINS_SELECT");
    if (disable != NULL)
        setenv("LOOM_PLUGINS_DISABLE", disable, 1);
    else
        unsetenv("LOOM_PLUGINS_DISABLE");
    if (log_file != NULL)
        fclose(log_file);
    log_file = tmpfile();
    o.plugin_path = getenv("LOOM_TEST_DEP_PACKS");
    o.no_default_dirs = 1;
    o.log_stream = log_file;
    o.verbose = 1;
    assert_int_equal(loom_init(&o), LOOM_OK);
    unsetenv("LOOM_PLUGINS_DISABLE");
    fflush(log_file);
    rewind(log_file);
    n = fread(log_text, 1, sizeof log_text - 1, log_file);
    log_text[n] = '\0';
}


/* Position in the log of "loaded pack 'NAME'", or -1. */
static long loaded_at(const char *name)
{
    char needle[128];
    snprintf(needle, sizeof needle, "loaded pack '%s'", name);
    const char *p = strstr(log_text, needle);
    return p != NULL ? (long)(p - log_text) : -1;
}

static void a_pack_waits_for_a_dependency_whose_file_sorts_later(void **state)
{
    (void)state;
    init_deps(NULL);
    /* alpha (a_needs_z.so) inits after zeta (z_last.so): its init checks. */
    packs_expect("a_needs_z.so", LOOM_SCAN_LOADED, "loaded");
    packs_expect("z_last.so", LOOM_SCAN_LOADED, "loaded");
    assert_true(loaded_at("zeta") >= 0 && loaded_at("zeta") < loaded_at("alpha"));
    assert_non_null(loom_op_find("alpha.op"));
    /* The scan entry carries the depends. */
    loom_scan_entry e = packs_scan("a_needs_z.so");
    assert_non_null(e.depends);
    assert_string_equal(e.depends[0], "zeta");
    assert_null(e.depends[1]);
    assert_null(packs_scan("z_last.so").depends);
    /* Packs without dependencies keep file-name order: broken before filtered before zeta. */
    assert_true(loaded_at("filtered") >= 0 && loaded_at("filtered") < loaded_at("zeta"));
    /* Several dependencies, one of them waiting for an op itself. */
    packs_expect("h_two.so", LOOM_SCAN_LOADED, "loaded");
    assert_true(loaded_at("hotel") > loaded_at("echo") && loaded_at("hotel") > loaded_at("zeta"));
}

static void an_op_dependency_waits_for_the_pack_that_registers_it(void **state)
{
    (void)state;
    init_deps(NULL);
    /* echo (e_needs_op.so) needs zulu.op, registered by zulu (zz_zulu.so). */
    packs_expect("e_needs_op.so", LOOM_SCAN_LOADED, "loaded");
    packs_expect("zz_zulu.so", LOOM_SCAN_LOADED, "loaded");
    assert_true(loaded_at("zulu") >= 0 && loaded_at("zulu") < loaded_at("echo"));
}

static void a_device_pack_waits_for_the_pack_of_its_device(void **state)
{
    (void)state;
    init_deps(NULL);
    /* devuser's kernels run on device type 77, whose provider devprov
    ** registers from a file that sorts later: it waits, and finds the device. */
    packs_expect("dev_a_user.so", LOOM_SCAN_LOADED, "loaded");
    packs_expect("dev_z_provider.so", LOOM_SCAN_LOADED, "loaded");
    assert_true(loaded_at("devprov") < loaded_at("devuser"));
    /* A kernel for a device type nobody provides: no device. */
    packs_expect("dev_b_orphan.so", LOOM_SCAN_NO_DEVICE, "no device of its kind is present");
}

static void a_missing_dependency_is_named(void **state)
{
    (void)state;
    init_deps(NULL);
    packs_expect("b_missing_pack.so", LOOM_SCAN_REFUSED, "needs pack 'nosuch' (not found)");
    packs_expect("c_missing_op.so", LOOM_SCAN_REFUSED, "needs op 'nosuch.op', which no loaded pack provides");
    assert_null(loom_op_find("bravo.op"));
    assert_null(loom_op_find("charlie.op"));
    /* The refusal is logged, naming the file. */
    assert_non_null(strstr(log_text, "b_missing_pack.so: needs pack 'nosuch' (not found)"));
}

static void a_refused_or_filtered_dependency_is_named(void **state)
{
    (void)state;
    init_deps(NULL);
    packs_expect("broken.so", LOOM_SCAN_REFUSED, "broken cannot start");
    packs_expect("d_needs_broken.so", LOOM_SCAN_REFUSED, "needs pack 'broken' (refused: init failed with LOOM_EDEVICE: "
           "broken cannot start)");
    packs_expect("f_needs_filtered.so", LOOM_SCAN_LOADED, "loaded");
    init_deps("filtered");
    packs_expect("/filtered.so", LOOM_SCAN_SKIPPED, "filtered out");
    packs_expect("f_needs_filtered.so", LOOM_SCAN_REFUSED, "needs pack 'filtered' (");
    packs_expect("f_needs_filtered.so", LOOM_SCAN_REFUSED, "/filtered.so is filtered out by LOOM_PLUGINS_SELECT/"
           "LOOM_PLUGINS_DISABLE)");
}

static void every_pack_of_a_cycle_is_refused_naming_it(void **state)
{
    (void)state;
    init_deps(NULL);
    packs_expect("cyc2_a.so", LOOM_SCAN_REFUSED, "dependency cycle: cyca -> cycb -> cyca");
    packs_expect("cyc2_b.so", LOOM_SCAN_REFUSED, "dependency cycle: cycb -> cyca -> cycb");
    packs_expect("cyc3_a.so", LOOM_SCAN_REFUSED, "dependency cycle: tria -> trib -> tric -> tria");
    packs_expect("cyc3_b.so", LOOM_SCAN_REFUSED, "dependency cycle: trib -> tric -> tria -> trib");
    packs_expect("cyc3_c.so", LOOM_SCAN_REFUSED, "dependency cycle: tric -> tria -> trib -> tric");
    /* A pack depending on a member of a cycle is refused for that. */
    packs_expect("g_needs_cycle.so", LOOM_SCAN_REFUSED, "needs pack 'cyca' (refused: dependency cycle: cyca -> cycb");
    /* and the rest loads. */
    packs_expect("a_needs_z.so", LOOM_SCAN_LOADED, NULL);
}

static void load_pack_checks_dependencies_against_what_is_loaded(void **state)
{
    char path[4096];
    const char *dir = getenv("LOOM_TEST_DEP_EXPLICIT");
    (void)state;
    init_deps(NULL);
    snprintf(path, sizeof path, "%s/x_needs_zeta.so", dir);
    assert_int_equal(loom_load_pack(path), LOOM_OK);
    assert_non_null(loom_op_find("xray.op"));
    snprintf(path, sizeof path, "%s/x_needs_op.so", dir);
    assert_int_equal(loom_load_pack(path), LOOM_OK);
    snprintf(path, sizeof path, "%s/x_needs_nosuch.so", dir);
    assert_int_equal(loom_load_pack(path), LOOM_ENOENT);
    assert_non_null(strstr(loom_last_error(), "needs pack 'nosuch' (not loaded)"));
    packs_expect("x_needs_nosuch.so", LOOM_SCAN_REFUSED, "needs pack 'nosuch' (not loaded)");
    snprintf(path, sizeof path, "%s/x_needs_missing_op.so", dir);
    assert_int_equal(loom_load_pack(path), LOOM_ENOENT);
    assert_non_null(strstr(loom_last_error(), "needs op 'nosuch.op', which no loaded pack provides"));
    /* With nothing loaded, a pack dependency must be loaded first. */
    loom_shutdown();
    loom_init_options o = LOOM_INIT_OPTIONS_INIT;
    o.plugin_path = "/nonexistent/loom-test-no-packs";
    o.no_default_dirs = 1;
    o.verbose = -1;
    assert_int_equal(loom_init(&o), LOOM_OK);
    snprintf(path, sizeof path, "%s/x_needs_zeta.so", dir);
    assert_int_equal(loom_load_pack(path), LOOM_ENOENT);
    assert_non_null(strstr(loom_last_error(), "needs pack 'zeta' (not loaded)"));
    snprintf(path, sizeof path, "%s/z_last.so", getenv("LOOM_TEST_DEP_PACKS"));
    assert_int_equal(loom_load_pack(path), LOOM_OK);
    snprintf(path, sizeof path, "%s/x_needs_zeta.so", dir);
    assert_int_equal(loom_load_pack(path), LOOM_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_pack_waits_for_a_dependency_whose_file_sorts_later),
        cmocka_unit_test(an_op_dependency_waits_for_the_pack_that_registers_it),
        cmocka_unit_test(a_device_pack_waits_for_the_pack_of_its_device),
        cmocka_unit_test(a_missing_dependency_is_named),
        cmocka_unit_test(a_refused_or_filtered_dependency_is_named),
        cmocka_unit_test(every_pack_of_a_cycle_is_refused_naming_it),
        cmocka_unit_test(load_pack_checks_dependencies_against_what_is_loaded),
    };
    int rc = cmocka_run_group_tests_name("deps", tests, NULL, NULL);
    loom_shutdown();
    if (log_file != NULL)
        fclose(log_file);
    return rc;
}
