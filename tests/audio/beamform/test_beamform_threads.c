/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_beamform_threads.c - concurrent callers of the beamforming ops and
** objects (suite `threads`, run under ThreadSanitizer by tools/dev test):
** four host threads call psd, mvdr_weights_souden and a SoudenMVDR object
** of their own on the golden inputs and must each get torchaudio's values,
** while all of them feed one shared online audio.MVDR, whose calls the
** object serialises: after the 4 x 5 calls its state has seen every chunk,
** so a last call equals a serial object's 21st call on the same chunks.
*/
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bf_test.h"

#define THREADS 4
#define CALLS 5

typedef struct shared {
    loom_tensor *x, *mask, *ps, *pn, *want_psd, *want_w, *want_enh;
    loom_object *online;
    int failures;
    pthread_mutex_t lock;
} shared;

static double max_diff(const loom_tensor *a, const loom_tensor *b)
{
    double d = 0;
    for (int64_t i = 0; i < 2 * loom_numel(b); i++)
        d = fmax(d, fabs(bf_comp(a, i) - bf_comp(b, i)));
    return d;
}

static void *worker(void *arg)
{
    shared *s = arg;
    loom_object *souden;
    int bad = loom_object_create(&souden, "audio.SoudenMVDR", NULL, NULL) != LOOM_OK;
    for (int k = 0; k < CALLS && !bad; k++) {
        loom_tensor *p = NULL, *w = NULL, *e = NULL, *o = NULL;
        bad |= bf_call("audio.psd", (const loom_tensor *[]){ s->x, s->mask }, 2, NULL, "cpu", NULL, &p) != LOOM_OK;
        bad |= bf_call("audio.mvdr_weights_souden", (const loom_tensor *[]){ s->ps, s->pn, NULL }, 3,
                       "reference_channel=1", "cpu", NULL, &w) != LOOM_OK;
        bad |= bf_call("audio.SoudenMVDR", (const loom_tensor *[]){ s->x, s->ps, s->pn, NULL }, 4,
                       "reference_channel=2", NULL, souden, &e) != LOOM_OK;
        bad |= bf_call("audio.MVDR", (const loom_tensor *[]){ s->x, s->mask, NULL }, 3, NULL, NULL, s->online, &o)
               != LOOM_OK;
        /* complex128 goldens: the same bound as test_beamform_ops */
        if (!bad)
            bad |= max_diff(p, s->want_psd) > 1e-9 || max_diff(w, s->want_w) > 1e-9 || max_diff(e, s->want_enh) > 1e-9;
        loom_tensor_free(p), loom_tensor_free(w), loom_tensor_free(e), loom_tensor_free(o);
    }
    loom_object_free(souden);
    pthread_mutex_lock(&s->lock);
    s->failures += bad;
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

static void test_concurrent_callers(void **state)
{
    (void)state;
    shared s = {
        .x = bf_golden("specgram", "c128"), .mask = bf_golden("mask", "f64"), .ps = bf_golden("psd_s", "c128"),
        .pn = bf_golden("psd_n", "c128"), .want_psd = bf_golden("psd_norm", "c128"),
        .want_w = bf_golden("souden_ref1", "c128"), .want_enh = bf_golden("soudenmvdr", "c128"),
        .online = bf_object("audio.MVDR", "online=true"),
    };
    pthread_mutex_init(&s.lock, NULL);
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, worker, &s), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(s.failures, 0);
    /* the shared object saw THREADS * CALLS chunks in some order; they are
    ** all the same chunk, so its next call equals a serial object's 21st */
    loom_object *serial = bf_object("audio.MVDR", "online=true");
    loom_tensor *a = NULL, *b = NULL;
    for (int k = 0; k <= THREADS * CALLS; k++) {
        loom_tensor_free(b);
        b = bf_run("audio.MVDR", (const loom_tensor *[]){ s.x, s.mask, NULL }, 3, NULL, NULL, serial);
    }
    a = bf_run("audio.MVDR", (const loom_tensor *[]){ s.x, s.mask, NULL }, 3, NULL, NULL, s.online);
    bf_assert_close(a, b, 1e-12, "the shared online MVDR after the concurrent calls");
    loom_tensor_free(a), loom_tensor_free(b);
    loom_object_free(serial);
    loom_object_free(s.online);
    loom_tensor *all[] = { s.x, s.mask, s.ps, s.pn, s.want_psd, s.want_w, s.want_enh };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        loom_tensor_free(all[i]);
    pthread_mutex_destroy(&s.lock);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_concurrent_callers) };
    return cmocka_run_group_tests_name("audio-beamform-threads", tests, tu_setup, tu_teardown);
}
