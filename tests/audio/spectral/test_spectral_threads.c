/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_spectral_threads.c - host threads calling audio.stft
** at once, each on sizes no call has planned yet, so FFTW plans are made
** concurrently (under the plan cache's lock) and executed concurrently
** (new-array execute): every result equals, bit for bit, the same call made
** alone afterwards (on the plans the threads made). Run under
** ThreadSanitizer too (suite threads).
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "audio_test_util.h"

#define N_THREADS 4
#define ROUNDS 6

typedef struct worker {
    int index;
    loom_tensor *x;
    loom_tensor *got[ROUNDS];
    int bad;
    char err[256];
} worker;

/* round r of thread i: n_fft 60 + 7 (i * ROUNDS + r), a size of its own */
static void attrs_of(int i, int r, char *buf, size_t size)
{
    snprintf(buf, size, "n_fft=%d;hop_length=16", 60 + 7 * (i * ROUNDS + r));
}

static void *work(void *arg)
{
    worker *w = arg;
    for (int r = 0; r < ROUNDS && !w->bad; r++) {
        char attrs[64];
        attrs_of(w->index, r, attrs, sizeof attrs);
        const loom_tensor *in[1] = { w->x };
        if (at_call("audio.stft", in, 1, attrs, "cpu", &w->got[r]) != LOOM_OK) {
            snprintf(w->err, sizeof w->err, "stft %s: %s", attrs, loom_last_error());
            w->bad = 1;
        }
    }
    return NULL;
}

static void concurrent_plans_and_calls_agree(void **state)
{
    (void)state;
    worker ws[N_THREADS];
    const int64_t shape[2] = { 2, 3000 };
    for (int i = 0; i < N_THREADS; i++) {
        ws[i] = (worker){ .index = i, .x = at_signal(i % 2 ? LOOM_DTYPE_F64 : LOOM_DTYPE_F32, 2, shape, (unsigned)i) };
    }
    pthread_t th[N_THREADS];
    for (int i = 0; i < N_THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, work, &ws[i]), 0);
    for (int i = 0; i < N_THREADS; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < N_THREADS; i++) {
        if (ws[i].bad)
            fail_msg("thread %d: %s", i, ws[i].err);
        for (int r = 0; r < ROUNDS; r++) {
            char attrs[64];
            loom_tensor *want;
            attrs_of(i, r, attrs, sizeof attrs);
            const loom_tensor *in[1] = { ws[i].x };
            assert_int_equal(at_call("audio.stft", in, 1, attrs, "cpu", &want), LOOM_OK);
            tu_assert_identical(ws[i].got[r], want, attrs);
            loom_tensor_free(want);
            loom_tensor_free(ws[i].got[r]);
        }
        loom_tensor_free(ws[i].x);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(concurrent_plans_and_calls_agree),
    };
    return cmocka_run_group_tests_name("audio_spectral_threads", tests, tu_setup, tu_teardown);
}
