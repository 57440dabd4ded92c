/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_config.c - settings from the environment and loom_init options,
** warnings for malformed values, the doctor lines, the log stream, globs.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const vars[] = {
    "LOOM_PLUGIN_PATH", "LOOM_PLUGINS_SELECT", "LOOM_PLUGINS_DISABLE", "LOOM_BACKENDS",
    "LOOM_STRICT", "LOOM_VERBOSE", "LOOM_NUM_THREADS", "LOOM_CPU_MAX_ISA", "LOOM_PROBE", "LOOM_PROBE_TIMEOUT",
    "LOOM_CUDA_GATE",
};

static FILE *log_file;

static int clean_env(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
    log_file = tmpfile();
    return log_file != NULL ? 0 : -1;
}

static int close_log(void **state)
{
    (void)state;
    loom__config_free(&loom__cfg);
    fclose(log_file);
    return 0;
}

/* Everything written to log_file so far (static buffer). */
static const char *logged(void)
{
    static char buf[8192];
    size_t n;

    fflush(log_file);
    rewind(log_file);
    n = fread(buf, 1, sizeof buf - 1, log_file);
    buf[n] = '\0';
    return buf;
}

/* setenv each NAME, VALUE pair of the NULL-terminated list. */
static void set_vars(const char *name, ...)
{
    va_list ap;
    va_start(ap, name);
    for (; name != NULL; name = va_arg(ap, const char *))
        setenv(name, va_arg(ap, const char *), 1);
    va_end(ap);
}

static loom_init_options logging_options(void)
{
    loom_init_options o = LOOM_INIT_OPTIONS_INIT;
    o.log_stream = log_file;
    return o;
}

static void defaults_when_nothing_is_set(void **state)
{
    loom__config c;
    (void)state;
    assert_int_equal(loom__config_load(&c, NULL), LOOM_OK);
    assert_null(c.plugin_path);
    assert_null(c.plugin_path_origin);
    assert_null(c.select);
    assert_null(c.disable);
    assert_null(c.backends);   /* unset: built-in backends first, then any other */
    assert_false(c.strict);
    assert_int_equal(c.verbose, 0);
    assert_int_equal(c.num_threads, 0);
    assert_null(c.cpu_max_isa);
    assert_false(c.no_default_dirs);
    assert_ptr_equal(c.log, stderr);
    assert_false(c.secure);
    loom__config_free(&c);
}

static void environment_is_read(void **state)
{
    loom__config c;
    (void)state;
    set_vars("LOOM_PLUGIN_PATH", "/a:/b", "LOOM_PLUGINS_SELECT", "vision,core",
             "LOOM_PLUGINS_DISABLE", "rec*", "LOOM_BACKENDS", "cpu;vision.nms=cpu",
             "LOOM_STRICT", "1", "LOOM_VERBOSE", "2", "LOOM_NUM_THREADS", "3",
             "LOOM_CPU_MAX_ISA", "AVX2", NULL);
    assert_int_equal(loom__config_load(&c, NULL), LOOM_OK);
    assert_string_equal(c.plugin_path, "/a:/b");
    assert_string_equal(c.plugin_path_origin, "LOOM_PLUGIN_PATH");
    assert_string_equal(c.select, "vision,core");
    assert_string_equal(c.disable, "rec*");
    assert_string_equal(c.backends, "cpu;vision.nms=cpu");
    assert_true(c.strict);
    assert_int_equal(c.verbose, 2);
    assert_int_equal(c.num_threads, 3);
    assert_string_equal(c.cpu_max_isa, "avx2");
    loom__config_free(&c);
}

static void empty_variables_count_as_unset(void **state)
{
    loom__config c;
    (void)state;
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        setenv(vars[i], "", 1);
    assert_int_equal(loom__config_load(&c, NULL), LOOM_OK);
    assert_null(c.plugin_path);
    assert_null(c.select);
    assert_null(c.backends);
    assert_int_equal(c.verbose, 0);
    assert_int_equal(c.num_threads, 0);
    assert_null(c.cpu_max_isa);
    loom__config_free(&c);
}

static void malformed_values_warn_and_use_the_default(void **state)
{
    loom_init_options o = logging_options();
    loom__config c;
    const char *log;
    (void)state;
    set_vars("LOOM_VERBOSE", "abc", "LOOM_NUM_THREADS", "-3", "LOOM_STRICT", "yes please",
             "LOOM_CPU_MAX_ISA", "avx1024", NULL);
    assert_int_equal(loom__config_load(&c, &o), LOOM_OK);
    assert_int_equal(c.verbose, 0);
    assert_int_equal(c.num_threads, 0);
    assert_false(c.strict);
    assert_null(c.cpu_max_isa);
    log = logged();
    assert_non_null(strstr(log, "loom: LOOM_VERBOSE='abc'"));
    assert_non_null(strstr(log, "LOOM_NUM_THREADS='-3'"));
    assert_non_null(strstr(log, "LOOM_STRICT='yes please'"));
    assert_non_null(strstr(log, "LOOM_CPU_MAX_ISA='avx1024'"));
    loom__config_free(&c);

    setenv("LOOM_VERBOSE", "9", 1);               /* too high: the highest level */
    setenv("LOOM_NUM_THREADS", "12x", 1);
    assert_int_equal(loom__config_load(&c, &o), LOOM_OK);
    assert_int_equal(c.verbose, 3);
    assert_int_equal(c.num_threads, 0);
    assert_non_null(strstr(logged(), "LOOM_NUM_THREADS='12x'"));
    loom__config_free(&c);
}

static void explicit_options_beat_the_environment(void **state)
{
    loom_init_options o = logging_options();
    loom__config c;
    (void)state;
    set_vars("LOOM_PLUGIN_PATH", "/env", "LOOM_BACKENDS", "cuda", "LOOM_STRICT", "1",
             "LOOM_VERBOSE", "3", "LOOM_NUM_THREADS", "7", NULL);
    o.plugin_path = "/opt";
    o.backends = "cpu";
    o.strict = -1;
    o.verbose = -1;
    o.num_threads = 2;
    o.no_default_dirs = 1;
    assert_int_equal(loom__config_load(&c, &o), LOOM_OK);
    assert_string_equal(c.plugin_path, "/opt");
    assert_string_equal(c.plugin_path_origin, "loom_init option");
    assert_string_equal(c.backends, "cpu");
    assert_false(c.strict);
    assert_int_equal(c.verbose, 0);
    assert_int_equal(c.num_threads, 2);
    assert_true(c.no_default_dirs);
    assert_ptr_equal(c.log, log_file);
    loom__config_free(&c);

    o.strict = 1;
    o.verbose = 2;
    o.plugin_path = "";                           /* explicit: no extra directories */
    assert_int_equal(loom__config_load(&c, &o), LOOM_OK);
    assert_true(c.strict);
    assert_int_equal(c.verbose, 2);
    assert_null(c.plugin_path);
    loom__config_free(&c);
}

static void older_options_struct_is_read_up_to_its_size(void **state)
{
    loom_init_options o = logging_options();
    loom__config c;
    (void)state;
    setenv("LOOM_NUM_THREADS", "5", 1);
    o.num_threads = 2;
    o.struct_size = (uint32_t)offsetof(loom_init_options, num_threads);   /* knew nothing newer */
    assert_int_equal(loom__config_load(&c, &o), LOOM_OK);
    assert_int_equal(c.num_threads, 5);
    assert_ptr_equal(c.log, stderr);
    loom__config_free(&c);

    o.struct_size = 0;
    assert_int_equal(loom__config_load(&c, &o), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "LOOM_INIT_OPTIONS_INIT"));
}

static const char *find_line(char **lines, int64_t n, const char *prefix)
{
    for (int64_t i = 0; i < n; i++)
        if (strncmp(lines[i], prefix, strlen(prefix)) == 0)
            return lines[i];
    return NULL;
}

static void doctor_lines_name_every_setting_and_its_source(void **state)
{
    loom_init_options o = logging_options();
    char **lines, want[128];
    int64_t n;
    (void)state;
    setenv("LOOM_BACKENDS", "cuda,onednn,cpu", 1);
    o.num_threads = 3;
    assert_int_equal(loom__config_load(&loom__cfg, &o), LOOM_OK);
    loom__config_lines(&lines, &n);
    assert_non_null(lines);
    assert_int_equal(n, 14);
    assert_string_equal(find_line(lines, n, "LOOM_CUDA_GATE="), "LOOM_CUDA_GATE=1 (default)");
    assert_non_null(strstr(find_line(lines, n, "LOOM_MAX_ALLOC="), "(default)"));
    assert_string_equal(find_line(lines, n, "LOOM_PROBE="), "LOOM_PROBE=0 (default)");
    assert_string_equal(find_line(lines, n, "LOOM_PROBE_TIMEOUT="), "LOOM_PROBE_TIMEOUT=5 (default)");
    assert_string_equal(find_line(lines, n, "LOOM_BACKENDS="), "LOOM_BACKENDS=cuda,onednn,cpu (environment)");
    assert_string_equal(find_line(lines, n, "LOOM_NUM_THREADS="), "LOOM_NUM_THREADS=3 (loom_init option)");
    assert_string_equal(find_line(lines, n, "LOOM_STRICT="), "LOOM_STRICT=0 (default)");
    assert_string_equal(find_line(lines, n, "LOOM_VERBOSE="), "LOOM_VERBOSE=0 (default)");
    assert_string_equal(find_line(lines, n, "LOOM_PLUGIN_PATH="), "LOOM_PLUGIN_PATH= (default)");
    assert_non_null(find_line(lines, n, "LOOM_PLUGINS_SELECT="));
    assert_non_null(find_line(lines, n, "LOOM_PLUGINS_DISABLE="));
    assert_non_null(find_line(lines, n, "LOOM_CPU_MAX_ISA="));
    assert_string_equal(find_line(lines, n, "log="), "log=stream (loom_init option)");
    for (int64_t i = 0; i < n; i++)
        free(lines[i]);
    free(lines);

    loom__config_free(&loom__cfg);
    assert_int_equal(loom__config_load(&loom__cfg, NULL), LOOM_OK);
    loom__config_lines(&lines, &n);
    snprintf(want, sizeof want, "LOOM_NUM_THREADS=%d (default: physical cores)", (int)loom__physical_cores());
    assert_string_equal(find_line(lines, n, "LOOM_NUM_THREADS="), want);
    assert_string_equal(find_line(lines, n, "log="), "log=stderr (default)");
    for (int64_t i = 0; i < n; i++)
        free(lines[i]);
    free(lines);
}

static void log_respects_the_verbosity_threshold(void **state)
{
    loom_init_options o = logging_options();
    const char *log;
    (void)state;
    o.verbose = 1;
    assert_int_equal(loom__config_load(&loom__cfg, &o), LOOM_OK);
    loom__log(0, "always %d", 0);
    loom__log(1, "loads %s", "shown");
    loom__log(2, "dispatch hidden");
    loom__log(3, "timing hidden\n");
    log = logged();
    assert_string_equal(log, "loom: always 0\nloom: loads shown\n");
}

static void long_log_lines_are_not_truncated(void **state)
{
    loom_init_options o = logging_options();
    char big[3000];
    const char *log;
    (void)state;
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_int_equal(loom__config_load(&loom__cfg, &o), LOOM_OK);
    loom__log(0, "%s|end", big);
    log = logged();
    assert_int_equal(strlen(log), strlen("loom: ") + sizeof big - 1 + strlen("|end\n"));
}

#define LOG_THREADS 8
#define LOG_LINES 200

static void *log_many(void *arg)
{
    for (int i = 0; i < LOG_LINES; i++)
        loom__log(0, "thread %d line %d ................................", (int)(intptr_t)arg, i);
    return NULL;
}

static void concurrent_log_lines_never_interleave(void **state)
{
    loom_init_options o = logging_options();
    pthread_t t[LOG_THREADS];
    char line[256];
    int count = 0;
    (void)state;
    assert_int_equal(loom__config_load(&loom__cfg, &o), LOOM_OK);
    for (intptr_t i = 0; i < LOG_THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, log_many, (void *)i), 0);
    for (int i = 0; i < LOG_THREADS; i++)
        pthread_join(t[i], NULL);
    rewind(log_file);
    while (fgets(line, sizeof line, log_file) != NULL) {
        int th, ln;
        assert_int_equal(sscanf(line, "loom: thread %d line %d ....", &th, &ln), 2);
        assert_non_null(strstr(line, "................................\n"));
        count++;
    }
    assert_int_equal(count, LOG_THREADS * LOG_LINES);
}

static void glob_lists_match_pack_names(void **state)
{
    (void)state;
    assert_true(loom__glob_list_match("vision", "vision"));
    assert_true(loom__glob_list_match("core, vision-*", "vision-cuda"));
    assert_true(loom__glob_list_match("a,b,*", "anything"));
    assert_true(loom__glob_list_match("  audio  ,text", "audio"));
    assert_false(loom__glob_list_match("vision", "vision-cuda"));
    assert_false(loom__glob_list_match("", "core"));
    assert_false(loom__glob_list_match(",,", "core"));
    assert_false(loom__glob_list_match(NULL, "core"));
    assert_false(loom__glob_list_match("core", NULL));
    assert_true(loom__glob_list_match("r?c", "rec"));
    assert_true(loom__glob_list_match("[ab]udio", "audio"));
}

static void long_glob_patterns_work(void **state)
{
    char pattern[400];
    (void)state;
    memset(pattern, 'p', sizeof pattern - 2);
    pattern[sizeof pattern - 2] = '*';
    pattern[sizeof pattern - 1] = '\0';
    assert_true(loom__glob_list_match(pattern, pattern));
    assert_false(loom__glob_list_match(pattern, "p"));
}

static void strdup_copies_and_accepts_null(void **state)
{
    char *s = loom__strdup("abc");
    (void)state;
    assert_string_equal(s, "abc");
    free(s);
    assert_null(loom__strdup(NULL));
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, clean_env, close_log)
    const struct CMUnitTest tests[] = {
        T(defaults_when_nothing_is_set),
        T(environment_is_read),
        T(empty_variables_count_as_unset),
        T(malformed_values_warn_and_use_the_default),
        T(explicit_options_beat_the_environment),
        T(older_options_struct_is_read_up_to_its_size),
        T(doctor_lines_name_every_setting_and_its_source),
        T(log_respects_the_verbosity_threshold),
        T(long_log_lines_are_not_truncated),
        T(concurrent_log_lines_never_interleave),
        T(glob_lists_match_pack_names),
        T(long_glob_patterns_work),
        T(strdup_copies_and_accepts_null),
    };
#undef T
    return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
