/* SPDX-License-Identifier: BSD-3-Clause */
/* test_loader.c - discovery, the ABI checks, all-or-nothing registration
** of a pack, and the clash rule: a later pack loses only the registrations
** that an earlier pack already holds. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "packs_util.h"

static void assert_refused(const char *file, const char *needle)
{
    loom_scan_entry e = packs_scan(file);
    if (e.result != LOOM_SCAN_REFUSED || strstr(e.reason, needle) == NULL)
        fail_msg("%s: result %d, reason '%s', expected refusal mentioning '%s'", file, e.result,
                 e.result >= 0 ? e.reason : "(not scanned)", needle);
    assert_non_null(strstr(e.path, file));
}

static void every_bad_pack_is_refused_with_its_reason(void **state)
{
    (void)state;
    assert_int_equal(packs_init(NULL, NULL, 0, NULL), LOOM_OK);
    assert_refused("mock_garbage.so", "not loadable");
    assert_refused("mock_no_entry.so", "no entry symbol loom_plugin_entry (not a loom pack?)");
    assert_refused("mock_null_desc.so", "entry returned no descriptor");
    assert_refused("mock_bad_magic.so", "bad magic 0x12345678");
    assert_refused("mock_major2.so", "built for ABI major 2");
    assert_refused("mock_newer_minor.so", "requires ABI 1.99 but this core provides ABI 1.");
    assert_refused("mock_init_fails.so", "the mock device is on fire");
}

/* A C++ pack whose entry has C++ linkage: the loader names the mangled
** symbol and the fix (mangledpack.cpp; built only with a C++ compiler). */
static void a_mangled_cxx_entry_is_named(void **state)
{
    (void)state;
    assert_int_equal(packs_init(NULL, NULL, 0, NULL), LOOM_OK);
    if (packs_scan("mock_mangled.so").result < 0) {
        print_message("no C++ compiler in this build: mock_mangled.so was not built, the case is skipped\n");
        skip();
    }
    assert_refused("mock_mangled.so", "no entry symbol loom_plugin_entry; the library exports the C++-mangled "
                   "_Z17loom_plugin_entrytt: define the entry with LOOM_PLUGIN_DEFINE, which gives it C linkage");
    assert_null(packs_scan("mock_mangled.so").pack);
}

static void assert_loaded_mentioning(const char *file, const char *needle)
{
    loom_scan_entry e = packs_scan(file);
    if (e.result != LOOM_SCAN_LOADED || strstr(e.reason, needle) == NULL)
        fail_msg("%s: result %d, reason '%s', expected it loaded, mentioning '%s'", file, e.result,
                 e.result >= 0 ? e.reason : "(not scanned)", needle);
}

/* mock_clash.so defines mock.double differently from mock_0good.so (found
** first), mock_dup_kernel.so repeats its cpu kernel: each loses just that,
** and says so naming both packs; the definition in force stays the first. */
static void a_later_pack_loses_only_its_clashing_registrations(void **state)
{
    (void)state;
    assert_int_equal(packs_init(NULL, NULL, 0, NULL), LOOM_OK);
    assert_loaded_mentioning("mock_clash.so", "loaded with 1 registration refused: mock.double: refused the "
                             "definition and its 1 kernel of ");
    assert_loaded_mentioning("mock_clash.so", "/mock_clash.so: it differs from the definition in force, that of ");
    assert_loaded_mentioning("mock_clash.so", "/mock_0good.so (it was loaded first: found earlier in the search "
                             "order, in ");
    assert_loaded_mentioning("mock_clash.so", "(loom_init option)); first difference: 2 attributes vs 1 (this "
                             "pack vs the one in force)");
    assert_loaded_mentioning("mock_dup_kernel.so", "loaded with 1 registration refused: mock.double: refused the "
                             "duplicate kernel cpu:mock of ");
    assert_loaded_mentioning("mock_dup_kernel.so", "/mock_dup_kernel.so: ");
    assert_loaded_mentioning("mock_dup_kernel.so", "/mock_0good.so already provides a kernel for backend cpu on "
                             "device type 1 (it was loaded first");
    assert_int_equal(packs_scan("mock_clash.so").n_ops, 0);
    assert_int_equal(packs_scan("mock_clash.so").n_kernels, 0);
    assert_int_equal(packs_scan("mock_dup_kernel.so").n_kernels, 0);
    assert_int_equal(loom_op_schema_of(loom_op_find("mock.double"))->n_attrs, 1);
    assert_int_equal(loom_op_kernel_count(loom_op_find("mock.double")), 2);   /* mock's cpu and mockfast's */
}

static void good_packs_load_despite_bad_neighbours(void **state)
{
    (void)state;
    assert_int_equal(packs_init(NULL, NULL, 0, NULL), LOOM_OK);
    loom_scan_entry good = packs_scan("mock_0good.so"), fast = packs_scan("mock_fast.so");
    assert_int_equal(good.result, LOOM_SCAN_LOADED);
    assert_string_equal(good.pack, "mock");
    assert_int_equal(good.n_ops, 3);
    assert_int_equal(good.n_kernels, 3);
    assert_int_equal(good.n_classes, 1);
    assert_int_equal(fast.result, LOOM_SCAN_LOADED);
    assert_non_null(loom_op_find("mock.double"));
    assert_int_equal(loom_op_kernel_count(loom_op_find("mock.double")), 2);
}

static void failed_init_leaves_nothing_registered(void **state)
{
    (void)state;
    assert_int_equal(packs_init(NULL, NULL, 0, NULL), LOOM_OK);
    assert_null(loom_op_find("mock.partial"));
    assert_int_equal(loom_last_status(), LOOM_ENOENT);
    assert_non_null(strstr(loom_last_error(), "mock.partial"));
}

static void select_and_disable_globs_filter_by_name(void **state)
{
    (void)state;
    assert_int_equal(packs_init("mock_0g*", NULL, 0, NULL), LOOM_OK);
    assert_int_equal(packs_scan("mock_0good.so").result, LOOM_SCAN_LOADED);
    assert_int_equal(packs_scan("mock_fast.so").result, LOOM_SCAN_SKIPPED);
    assert_int_equal(loom_op_kernel_count(loom_op_find("mock.double")), 1);
    unsetenv("LOOM_PLUGINS_SELECT");
    setenv("LOOM_PLUGINS_DISABLE", "mock_fast,mock_bad*", 1);
    assert_int_equal(packs_init(NULL, NULL, 0, NULL), LOOM_OK);
    assert_int_equal(packs_scan("mock_fast.so").result, LOOM_SCAN_SKIPPED);
    assert_int_equal(packs_scan("mock_bad_magic.so").result, LOOM_SCAN_SKIPPED);
    assert_int_equal(packs_scan("mock_0good.so").result, LOOM_SCAN_LOADED);
    unsetenv("LOOM_PLUGINS_DISABLE");
}

static void init_is_idempotent_and_loads_nothing_twice(void **state)
{
    (void)state;
    assert_int_equal(packs_init(NULL, NULL, 0, NULL), LOOM_OK);
    int64_t scans = loom_scan_count(), ops = loom_op_count();
    assert_int_equal(loom_init(NULL), LOOM_OK);
    assert_int_equal(loom_scan_count(), scans);
    assert_int_equal(loom_op_count(), ops);
    /* Loading a loaded file again is skipped, not an error. */
    char path[4096];
    snprintf(path, sizeof path, "%s/mock_0good.so", getenv("LOOM_TEST_PACKS"));
    assert_int_equal(loom_load_pack(path), LOOM_OK);
    assert_int_equal(loom_op_count(), ops);
    assert_int_equal(loom_scan_count(), scans + 1);
    loom_scan_entry e = LOOM_SCAN_ENTRY_INIT;
    loom_scan_at(scans, &e);
    assert_int_equal(e.result, LOOM_SCAN_SKIPPED);
}

static void load_pack_reports_the_refusal(void **state)
{
    char path[4096];
    (void)state;
    assert_int_equal(packs_init("none", NULL, 0, NULL), LOOM_OK);
    unsetenv("LOOM_PLUGINS_SELECT");
    snprintf(path, sizeof path, "%s/mock_major2.so", getenv("LOOM_TEST_PACKS"));
    /* The select filter stays in force for explicit loads too. */
    assert_int_equal(loom_load_pack(path), LOOM_OK);
    assert_int_equal(packs_init(NULL, NULL, 0, NULL), LOOM_OK);
    assert_int_equal(loom_load_pack("/nonexistent/pack.so"), LOOM_ENOENT);
    assert_non_null(strstr(loom_last_error(), "/nonexistent/pack.so"));
}

static void search_dirs_are_reported(void **state)
{
    const char *origin = NULL;
    (void)state;
    assert_int_equal(packs_init(NULL, NULL, 0, NULL), LOOM_OK);
    assert_int_equal(loom_search_dir_count(), 1);
    assert_non_null(loom_search_dir_at(0, &origin));
    assert_string_equal(origin, "loom_init option");
    assert_true(loom_config_count() > 5);
}

/* loom_doctor_report: the whole report whatever the buffer, snprintf's
** contract (length of the whole, truncated and terminated), every file the
** loader saw in it; and the two helpers the CLI's --json shares with it. */
static void doctor_report_is_whole_and_truncates_safely(void **state)
{
    char small[16], why[256];
    (void)state;
    assert_int_equal(packs_init(NULL, NULL, 0, NULL), LOOM_OK);
    size_t len = loom_doctor_report(NULL, 0);
    assert_true(len > 100);
    char *text = malloc(len + 1);
    assert_non_null(text);
    assert_int_equal(loom_doctor_report(text, len + 1), len);
    assert_int_equal(strlen(text), len);
    assert_true(strncmp(text, "loom ", 5) == 0);
    assert_non_null(strstr(text, "files seen:"));
    assert_non_null(strstr(text, "quarantined packs"));
    for (int64_t i = 0; i < loom_scan_count(); i++) {
        loom_scan_entry e = LOOM_SCAN_ENTRY_INIT;
        assert_int_equal(loom_scan_at(i, &e), LOOM_OK);
        assert_non_null(strstr(text, e.path));
    }
    assert_int_equal(loom_doctor_report(small, sizeof small), len);
    assert_int_equal(strlen(small), sizeof small - 1);
    assert_true(strncmp(small, text, sizeof small - 1) == 0);
    free(text);
    assert_string_equal(loom_scan_result_name(LOOM_SCAN_REFUSED), "refused");
    assert_string_equal(loom_scan_result_name(99), "unknown");
    assert_int_equal(loom_dependency_state("no.such_op", why, sizeof why), 0);
    assert_non_null(strstr(why, "missing"));
    assert_int_equal(loom_dependency_state("nosuchpack", why, sizeof why), 0);
    assert_non_null(strstr(why, "'nosuchpack'"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_bad_pack_is_refused_with_its_reason),
        cmocka_unit_test(a_mangled_cxx_entry_is_named),
        cmocka_unit_test(a_later_pack_loses_only_its_clashing_registrations),
        cmocka_unit_test(good_packs_load_despite_bad_neighbours),
        cmocka_unit_test(failed_init_leaves_nothing_registered),
        cmocka_unit_test(select_and_disable_globs_filter_by_name),
        cmocka_unit_test(init_is_idempotent_and_loads_nothing_twice),
        cmocka_unit_test(load_pack_reports_the_refusal),
        cmocka_unit_test(search_dirs_are_reported),
        cmocka_unit_test(doctor_report_is_whole_and_truncates_safely),
    };
    int rc = cmocka_run_group_tests_name("loader", tests, NULL, NULL);
    loom_shutdown();
    return rc;
}
