/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_models_memory.c - the activation planner's memory bound: a model's
** forward (vision.resnet18 from in-memory tensors, batch 8 of 3x112x112)
** raises the process's peak resident set by at most 3x its largest
** activation (the stem's output, [8, 64, 56, 56] f32), which is what the
** buffers planned once per input shape take (three roles: a block's
** input/output, conv1's / the downsample's and conv2's, resnet_forward.c)
** when nothing else allocates per layer; a second forward of the shape adds
** nothing. The peak is /proc/self/status's VmHWM after a reset through
** /proc/self/clear_refs ("5"), so loading does not count: the bound is the
** forward's alone, the weights being held once besides (model_loader.c).
** A second case bounds an object's first forward, planning included: on
** onednn the weights' blocked copies replace the plain ones one conv at a
** time (onednn_net.c), so the two copies are never resident together.
**
** Under AddressSanitizer the resident set carries its shadow and its
** quarantine of freed blocks, so the bounds are not checked there (the
** forwards still run and are checked for errors).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tu_ops.h"
#include "resnet_memory.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

/* The kB of field ("VmRSS:", "VmHWM:") of /proc/self/status, or -1. */
static long status_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL)
        return -1;
    char line[256];
    long kb = -1;
    size_t n = strlen(field);
    while (fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, field, n) == 0) {
            kb = strtol(line + n, NULL, 10);
            break;
        }
    fclose(f);
    return kb;
}

/* Resets VmHWM to the current VmRSS; 0 when the kernel does not let it. */
static int reset_peak(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f == NULL)
        return 0;
    int ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok;
}

static void forward(loom_object *obj, const loom_tensor *x)
{
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = obj;
    const loom_tensor *in[1] = { x };
    loom_tensor *out = NULL;
    if (loom_run("vision.resnet18", in, 1, NULL, &out, 1, &opt) != LOOM_OK)
        fail_msg("vision.resnet18: %s", loom_last_error());
    loom_tensor_free(out);
}

static void forward_peak_within_three_activations(void **state)
{
    (void)state;
    rm_keys *k = NULL;
    loom_object *obj = resnet18_zeros(&k, 1000);
    if (obj == NULL)
        fail_msg("vision.resnet18 from memory: %s", loom_last_error());
    int64_t shape[4] = { 8, 3, 112, 112 };
    loom_tensor *x = tu_random_f32(4, shape, 13);
    const long largest_kb = 8L * 64 * 56 * 56 * 4 / 1024;
    /* a first small forward: the thread pool, oneDNN and the scratch arenas
    ** are up, so what the big one adds is its own */
    int64_t small[4] = { 1, 3, 32, 32 };
    loom_tensor *xs = tu_random_f32(4, small, 14);
    forward(obj, xs);
    int can_reset = reset_peak();
    long before = status_kb("VmRSS:");
    forward(obj, x);
    long after_first = status_kb("VmRSS:");
    forward(obj, x);
    long after_second = status_kb("VmRSS:"), peak = status_kb("VmHWM:");
    print_message("# resnet18 batch 8 112x112: VmRSS %ld kB before, %ld after one forward, %ld after two; "
                  "forward's peak %ld kB above the start against 3 x the largest activation = %ld kB\n",
                  before, after_first, after_second, peak - before, 3 * largest_kb);
    if (UNDER_ASAN || !can_reset || before < 0 || peak < 0) {
        print_message("# the bounds are not checked: %s\n",
                      UNDER_ASAN ? "AddressSanitizer's shadow and quarantine are resident"
                                 : "/proc/self/status or clear_refs is not available");
    } else {
        if (peak - before > 3 * largest_kb)
            fail_msg("the forward raised the peak by %ld kB > 3 x %ld kB", peak - before, largest_kb);
        /* the second forward of the shape reuses the planned buffers */
        if (after_second - after_first > 1024)
            fail_msg("a second forward of the same shape grew the resident set by %ld kB",
                     after_second - after_first);
    }
    loom_tensor_free(x);
    loom_tensor_free(xs);
    loom_object_free(obj);
    resnet18_zeros_free(k);
}

/* The first forward of an object plans it: on onednn every conv's weight
** is reordered into the blocked layout its primitive asks for. Each plain
** folded weight is freed as soon as its blocked copy exists, so planning
** raises the peak by at most the forward's bound plus the largest single
** conv weight (layer4's 3x3 512 -> 512, 9 MB), never by a second copy of
** the whole model (resnet18's conv weights are 44.6 MB). The cpu backend
** plans only its buffers. The slack of 4 MB covers the plan's own records,
** oneDNN's primitive caches and scratchpads (measured: 27.6 MB on onednn
** against a bound of 32.1 MB; 49.5 MB when the plain weights were freed only
** once the plan was complete; 8.6 MB on cpu). This case runs after the one
** above, so the thread pool and oneDNN are up already. */
static void planning_holds_the_weights_once(void **state)
{
    (void)state;
    rm_keys *k = NULL;
    loom_object *obj = resnet18_make(&k, 1000, NULL, 7);
    if (obj == NULL)
        fail_msg("vision.resnet18 from memory: %s", loom_last_error());
    int64_t shape[4] = { 8, 3, 112, 112 };
    loom_tensor *x = tu_random_f32(4, shape, 15);
    const long largest_kb = 8L * 64 * 56 * 56 * 4 / 1024, conv_kb = 512L * 512 * 9 * 4 / 1024, slack_kb = 4096;
    int can_reset = reset_peak();
    long before = status_kb("VmRSS:");
    forward(obj, x);
    long peak = status_kb("VmHWM:");
    print_message("# resnet18 batch 8 112x112, first forward (planning included): peak %ld kB above the start "
                  "against 3 x the largest activation + the largest conv weight + %ld kB = %ld kB\n",
                  peak - before, slack_kb, 3 * largest_kb + conv_kb + slack_kb);
    if (UNDER_ASAN || !can_reset || before < 0 || peak < 0)
        print_message("# the bound is not checked: %s\n", UNDER_ASAN ? "AddressSanitizer's shadow and quarantine "
                      "are resident" : "/proc/self/status or clear_refs is not available");
    else if (peak - before > 3 * largest_kb + conv_kb + slack_kb)
        fail_msg("planning raised the peak by %ld kB > %ld kB: two copies of the weights were resident",
                 peak - before, 3 * largest_kb + conv_kb + slack_kb);
    loom_tensor_free(x);
    loom_object_free(obj);
    resnet18_zeros_free(k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(forward_peak_within_three_activations),
        cmocka_unit_test(planning_holds_the_weights_once),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
