/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_cuda_gate.c - the CUDA gate (core/cuda_gate.c) on the packs of
** cudagate/ (gatepack.c): gate_cuda.so links a stub named like the CUDA
** runtime, gate_plain.so nothing of CUDA, gate_user.so depends on
** gate_cuda. Where the CUDA driver is missing or sees no device (this
** machine, any CI runner without a GPU), gate_cuda.so is skipped unopened
** with the reason in the scan entry, the LOOM_VERBOSE=1 log and `loom
** doctor`, gate_user.so is refused naming that reason, and gate_plain.so
** loads; with LOOM_CUDA_GATE=0 all three load and gate_cuda's op reaches
** the stub. On a host whose driver sees a device, the gate lets every pack
** through, and the test expects that instead. The ELF reader is also fed
** truncated and damaged copies of a pack, which must never make it read
** out of bounds (the test runs under ASan), and the driver is asked from
** several threads at once (under TSan: one answer, no race).
*/
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "internal.h"

static const char *pack_dir(void)
{
    const char *d = getenv("LOOM_TEST_CUDA_GATE");
    if (d == NULL)
        fail_msg("LOOM_TEST_CUDA_GATE is not set (meson sets it to the folder of the gate packs)");
    return d;
}

static char *pack_path(const char *file)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", pack_dir(), file);
    return path;
}

static bool driver_ready(void)
{
    return loom__cuda_driver_state(NULL) == LOOM__CUDA_READY;
}

/* loom_init on the gate packs only, logging at LOOM_VERBOSE=1 into log. */
static void init_gate(FILE *log)
{
    loom_init_options o = LOOM_INIT_OPTIONS_INIT;
    loom_shutdown();
    o.plugin_path = pack_dir();
    o.no_default_dirs = 1;
    o.verbose = 1;
    o.log_stream = log;
    assert_int_equal(loom_init(&o), LOOM_OK);
}

static bool scan_of(const char *file, loom_scan_entry *out)
{
    for (int64_t i = 0; i < loom_scan_count(); i++) {
        loom_scan_entry e = LOOM_SCAN_ENTRY_INIT;
        const char *slash;
        if (loom_scan_at(i, &e) != LOOM_OK || e.path == NULL)
            continue;
        slash = strrchr(e.path, '/');
        if (strcmp(slash != NULL ? slash + 1 : e.path, file) == 0) {
            *out = e;
            return true;
        }
    }
    return false;
}

static int32_t run_version(const char *op)
{
    loom_tensor *y = NULL;
    int32_t v;
    if (loom_run(op, NULL, 0, NULL, &y, 1, NULL) != LOOM_OK)
        fail_msg("%s: %s", op, loom_last_error());
    v = *(const int32_t *)y->data;
    loom_tensor_free(y);
    return v;
}

static char *read_all(FILE *f)
{
    long n;
    char *text;
    fflush(f);
    n = ftell(f);
    assert_true(n >= 0);
    text = calloc((size_t)n + 1, 1);
    assert_non_null(text);
    rewind(f);
    assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
    return text;
}

static char *doctor(void)
{
    size_t n = loom_doctor_report(NULL, 0);
    char *text = malloc(n + 1);
    assert_non_null(text);
    loom_doctor_report(text, n + 1);
    return text;
}

/* ---------------------------------------------------------------- driver */

static void *ask(void *arg)
{
    const char *detail = NULL;
    *(int *)arg = loom__cuda_driver_state(&detail);
    return detail != NULL && detail[0] != '\0' ? (void *)detail : NULL;
}

/* First of all (the answer is cached for the process): threads asking
** at once all get the one answer, with the driver's words. */
static void driver_is_asked_once_for_all_threads(void **state)
{
    enum { N = 8 };
    pthread_t t[N];
    int got[N];
    void *detail[N];
    (void)state;
    for (int i = 0; i < N; i++)
        assert_int_equal(pthread_create(&t[i], NULL, ask, &got[i]), 0);
    for (int i = 0; i < N; i++) {
        assert_int_equal(pthread_join(t[i], &detail[i]), 0);
        assert_non_null(detail[i]);
        assert_int_equal(got[i], got[0]);
        assert_ptr_equal(detail[i], detail[0]);
    }
    assert_true(got[0] == LOOM__CUDA_READY || got[0] == LOOM__CUDA_NO_DRIVER || got[0] == LOOM__CUDA_NO_DEVICE);
    print_message("# CUDA driver: %s (%s)\n", got[0] == LOOM__CUDA_READY ? "ready"
                  : got[0] == LOOM__CUDA_NO_DRIVER ? "no driver" : "no device", (const char *)detail[0]);
}

/* ------------------------------------------------------------ ELF reader */

static void elf_reader_finds_the_cuda_library(void **state)
{
    char lib[256];
    (void)state;
    assert_true(loom__cuda_pack_needs(pack_path("gate_cuda.so"), lib, sizeof lib));
    assert_string_equal(lib, "libcudart_loomtest.so");
    assert_false(loom__cuda_pack_needs(pack_path("gate_plain.so"), lib, sizeof lib));
    assert_string_equal(lib, "");
    assert_false(loom__cuda_pack_needs(pack_path("gate_user.so"), lib, sizeof lib));
    assert_false(loom__cuda_pack_needs(pack_path("no_such_pack.so"), lib, sizeof lib));
    assert_false(loom__cuda_pack_needs(pack_dir(), lib, sizeof lib));   /* a directory */
    /* a name cut short still fits its buffer */
    assert_true(loom__cuda_pack_needs(pack_path("gate_cuda.so"), lib, 8));
    assert_string_equal(lib, "libcuda");
}

/* Truncated and damaged copies: never a read out of bounds (ASan), and a
** truncation that loses the dynamic section is "not a CUDA pack". */
static void elf_reader_survives_damaged_files(void **state)
{
    FILE *f = fopen(pack_path("gate_cuda.so"), "rb");
    char copy[4096], lib[256];
    unsigned char *image;
    long n;
    (void)state;
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    assert_true(n > 64);
    rewind(f);
    image = malloc((size_t)n);
    assert_non_null(image);
    assert_int_equal(fread(image, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    snprintf(copy, sizeof copy, "%s/damaged-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    int fd = mkstemp(copy);
    assert_true(fd >= 0);
    close(fd);

    const long cuts[] = { 0, 1, 4, 16, 52, 63, 64, 65, 200, 1000, n / 4, n / 2, n - 1 };
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        FILE *w = fopen(copy, "wb");
        assert_non_null(w);
        assert_int_equal(fwrite(image, 1, (size_t)cuts[i], w), (size_t)cuts[i]);
        fclose(w);
        (void)loom__cuda_pack_needs(copy, lib, sizeof lib);
        if (cuts[i] < 64)
            assert_false(loom__cuda_pack_needs(copy, lib, sizeof lib));
    }
    /* every byte of the file set to 0xff in turn (pwrite on one copy, then
    ** put back): the header, the program headers and the dynamic section
    ** lie about offsets, counts and sizes */
    FILE *w = fopen(copy, "wb");
    assert_non_null(w);
    assert_int_equal(fwrite(image, 1, (size_t)n, w), (size_t)n);
    fclose(w);
    fd = open(copy, O_WRONLY);
    assert_true(fd >= 0);
    const unsigned char ff = 0xff;
    for (long at = 0; at < n; at++) {
        assert_int_equal(pwrite(fd, &ff, 1, at), 1);
        (void)loom__cuda_pack_needs(copy, lib, sizeof lib);
        assert_int_equal(pwrite(fd, &image[at], 1, at), 1);
    }
    close(fd);
    assert_true(loom__cuda_pack_needs(copy, lib, sizeof lib));   /* put back whole */
    /* not an ELF file at all */
    w = fopen(copy, "wb");
    assert_non_null(w);
    fputs("not an ELF file, though its name says .so\n", w);
    fclose(w);
    assert_false(loom__cuda_pack_needs(copy, lib, sizeof lib));
    remove(copy);
    free(image);
}

/* ------------------------------------------------------------- the gate */

static void cuda_pack_is_skipped_without_cuda(void **state)
{
    FILE *log = tmpfile();
    loom_scan_entry e = LOOM_SCAN_ENTRY_INIT;
    char *text, *report;
    (void)state;
    assert_non_null(log);
    unsetenv("LOOM_CUDA_GATE");
    init_gate(log);
    assert_true(scan_of("gate_plain.so", &e));
    assert_int_equal(e.result, LOOM_SCAN_LOADED);
    assert_int_equal(run_version("gateplain.version"), 1);
    if (driver_ready()) {
        /* a host with a GPU: the gate lets the CUDA pack through */
        assert_true(scan_of("gate_cuda.so", &e));
        assert_int_equal(e.result, LOOM_SCAN_LOADED);
        assert_int_equal(run_version("gatecuda.version"), 4242);
        loom_shutdown();
        fclose(log);
        return;
    }
    const char *why = loom__cuda_driver_state(NULL) == LOOM__CUDA_NO_DRIVER
                    ? "cuda pack gate_cuda not opened: no CUDA driver (" : "cuda pack gate_cuda not opened: no device (";
    assert_true(scan_of("gate_cuda.so", &e));
    assert_int_equal(e.result, LOOM_SCAN_SKIPPED);
    assert_null(e.pack);   /* never opened: its descriptor was not read */
    assert_non_null(strstr(e.reason, why));
    assert_non_null(strstr(e.reason, "it needs libcudart_loomtest.so; LOOM_CUDA_GATE=0 opens it anyway)"));
    assert_null(loom_op_find("gatecuda.version"));
    /* the pack that depends on it is refused, naming the reason */
    assert_true(scan_of("gate_user.so", &e));
    assert_int_equal(e.result, LOOM_SCAN_REFUSED);
    assert_non_null(strstr(e.reason, "needs pack 'gate_cuda' (cuda pack gate_cuda not opened: "));
    assert_null(loom_op_find("gateuser.version"));
    /* the LOOM_VERBOSE=1 line and loom doctor say why */
    text = read_all(log);
    assert_non_null(strstr(text, "gate_cuda.so: cuda pack gate_cuda not opened: "));
    free(text);
    report = doctor();
    assert_non_null(strstr(report, "LOOM_CUDA_GATE=1 (default)"));
    assert_non_null(strstr(report, why));
    free(report);
    loom_shutdown();
    fclose(log);
}

static void gate_off_opens_the_cuda_pack(void **state)
{
    FILE *log = tmpfile();
    loom_scan_entry e = LOOM_SCAN_ENTRY_INIT;
    char *report;
    (void)state;
    assert_non_null(log);
    setenv("LOOM_CUDA_GATE", "0", 1);
    init_gate(log);
    unsetenv("LOOM_CUDA_GATE");
    assert_true(scan_of("gate_cuda.so", &e));
    assert_int_equal(e.result, LOOM_SCAN_LOADED);
    assert_string_equal(e.pack, "gate_cuda");
    assert_int_equal(run_version("gatecuda.version"), 4242);   /* the stub answered */
    assert_true(scan_of("gate_user.so", &e));
    assert_int_equal(e.result, LOOM_SCAN_LOADED);
    assert_int_equal(run_version("gateuser.version"), 2);
    assert_true(scan_of("gate_plain.so", &e));
    assert_int_equal(e.result, LOOM_SCAN_LOADED);
    report = doctor();
    assert_non_null(strstr(report, "LOOM_CUDA_GATE=0 (environment)"));
    assert_null(strstr(report, "not opened"));
    free(report);
    loom_shutdown();
    fclose(log);
}

/* A value other than 0 or 1 is reported and the gate stays on. */
static void malformed_gate_value_keeps_the_gate(void **state)
{
    FILE *log = tmpfile();
    loom_scan_entry e = LOOM_SCAN_ENTRY_INIT;
    char *text;
    (void)state;
    assert_non_null(log);
    setenv("LOOM_CUDA_GATE", "off", 1);
    init_gate(log);
    unsetenv("LOOM_CUDA_GATE");
    text = read_all(log);
    assert_non_null(strstr(text, "LOOM_CUDA_GATE='off' is not 0 or 1; using 1"));
    free(text);
    assert_true(scan_of("gate_cuda.so", &e));
    assert_int_equal(e.result, driver_ready() ? LOOM_SCAN_LOADED : LOOM_SCAN_SKIPPED);
    loom_shutdown();
    fclose(log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(driver_is_asked_once_for_all_threads),
        cmocka_unit_test(elf_reader_finds_the_cuda_library),
        cmocka_unit_test(elf_reader_survives_damaged_files),
        cmocka_unit_test(cuda_pack_is_skipped_without_cuda),
        cmocka_unit_test(gate_off_opens_the_cuda_pack),
        cmocka_unit_test(malformed_gate_value_keeps_the_gate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
