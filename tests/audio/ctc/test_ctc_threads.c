/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_ctc_threads.c - audio.ctc_decoder shared by concurrent callers: four
** host threads decode the golden batch on one decoder object at once (each
** call spreads its utterances over the core's pool), and each also streams
** on the same object between its batch calls (the stream is the object's
** one, behind its lock: the calls interleave, so only their status is
** checked). Every batch result equals the goldens. Run under
** ThreadSanitizer by `tools/dev test` (the threads suite).
*/
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ctc_test_util.h"

static ct_goldens G;
static loom_object *shared;
static int case_index;

typedef struct worker {
    int ok;
    char err[256];
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    w->ok = 1;
    for (int rep = 0; rep < 3 && w->ok; rep++) {
        loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
        opt.object = shared;
        const loom_tensor *in[2] = { G.emissions, G.lengths };
        loom_tensor *out[CT_N_OUT] = { 0 };
        if (loom_run("audio.ctc_decoder", in, 2, NULL, out, CT_N_OUT, &opt) != LOOM_OK) {
            snprintf(w->err, sizeof w->err, "decode: %s", loom_last_error());
            w->ok = 0;
            break;
        }
        /* the comparison runs on the main thread's goldens, read only */
        const double *sc = loom_data(out[CT_SCORE]), *gs = loom_data(G.out[CT_SCORE]);
        const int64_t *gh = loom_data(G.out[CT_HYPOTHESES]);
        const int64_t first = gh[case_index * G.batch], n = gh[(case_index + 1) * G.batch] - first;
        if (out[CT_SCORE]->shape[0] != n) {
            snprintf(w->err, sizeof w->err, "%lld hypotheses, flashlight %lld", (long long)out[CT_SCORE]->shape[0],
                     (long long)n);
            w->ok = 0;
        }
        for (int64_t i = 0; w->ok && i < n; i++)
            if (!(sc[i] > gs[first + i] - 1e-4 && sc[i] < gs[first + i] + 1e-4)) {
                snprintf(w->err, sizeof w->err, "hypothesis %lld: %.6f, flashlight %.6f", (long long)i, sc[i],
                         gs[first + i]);
                w->ok = 0;
            }
        ct_free_outputs(out);
        /* a stream on the shared object: begin, a few frames, end, final */
        loom_tensor *x;
        const int64_t N = G.emissions->shape[2];
        if (loom_tensor_wrap(&x, loom_data(G.emissions), LOOM_DTYPE_F32, 2, (int64_t[]){ 5, N }, NULL, NULL)
            != LOOM_OK) {
            w->ok = 0;
            break;
        }
        const loom_tensor *xin[1] = { x };
        loom_run("audio.ctc_decoder_begin", NULL, 0, NULL, NULL, 0, &opt);
        loom_run("audio.ctc_decoder_step", xin, 1, NULL, NULL, 0, &opt);
        loom_run("audio.ctc_decoder_end", NULL, 0, NULL, NULL, 0, &opt);
        loom_tensor *fout[CT_N_OUT] = { 0 };
        loom_status s = loom_run("audio.ctc_decoder_final", NULL, 0, NULL, fout, CT_N_OUT, &opt);
        if (s != LOOM_OK && s != LOOM_EINVAL) {
            snprintf(w->err, sizeof w->err, "final: %s", loom_last_error());
            w->ok = 0;
        }
        ct_free_outputs(fout);
        loom_tensor_free(x);
    }
    return NULL;
}

static void test_concurrent(void **state)
{
    (void)state;
    /* the first case with the n-gram LM: lexicon decoding, the 3-gram model */
    case_index = 0;
    shared = ct_make_decoder(G.lines[case_index], NULL);
    pthread_t t[4];
    worker w[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    for (int i = 0; i < 4; i++)
        if (!w[i].ok)
            fail_msg("thread %d: %s", i, w[i].err);
    loom_object_free(shared);
}

static int setup(void **state)
{
    if (tu_setup(state) != 0)
        return -1;
    ct_goldens_load(&G);
    return 0;
}

static int teardown(void **state)
{
    ct_goldens_free(&G);
    return tu_teardown(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concurrent),
    };
    return cmocka_run_group_tests_name("audio_ctc_threads", tests, setup, teardown);
}
