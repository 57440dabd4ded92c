/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_ctc_stream.c - audio.ctc_decoder's streaming methods: every golden
** case (tools/gen_ctc_goldens.py), each utterance fed in chunks of 1, 7
** and 50 frames between audio.ctc_decoder_begin and _end, gives what
** flashlight-text's one-shot decode gives (the goldens); the best
** hypothesis mid-stream, after every 7 frames, is flashlight's
** get_best_hypothesis(0) (best_*.npy); and the methods refuse to run out of
** order.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ctc_test_util.h"

static ct_goldens G;

static loom_status method(loom_object *dec, const char *op, const loom_tensor *in, loom_tensor **out)
{
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = dec;
    const loom_tensor *ins[1] = { in };
    return loom_run(op, in != NULL ? ins : NULL, in != NULL ? 1 : 0, NULL, out, out != NULL ? CT_N_OUT : 0, &opt);
}

static void check_best(loom_object *dec, int64_t frames)
{
    loom_tensor *out[CT_N_OUT] = { 0 };
    if (method(dec, "audio.ctc_decoder_best", NULL, out) != LOOM_OK)
        fail_msg("best: %s", loom_last_error());
    const int64_t h = out[CT_SCORE]->shape[0];
    assert_true(h <= 1);
    const int64_t *o = loom_data(out[CT_OFFSETS]), *ts = loom_data(out[CT_TIMESTEPS]);
    for (int64_t i = 0; h == 1 && i < o[1]; i++) {
        assert_true(ts[i] >= 0 && ts[i] <= frames);
        assert_true(i == 0 || ts[i] > ts[i - 1]);
    }
    ct_free_outputs(out);
}

static void stream_case(int c, int64_t chunk)
{
    loom_object *dec = ct_make_decoder(G.lines[c], NULL);
    const int64_t T = G.emissions->shape[1], N = G.emissions->shape[2];
    const int64_t *lengths = loom_data(G.lengths);
    const float *e = loom_data(G.emissions);
    for (int64_t b = 0; b < G.batch; b++) {
        assert_int_equal(method(dec, "audio.ctc_decoder_begin", NULL, NULL), LOOM_OK);
        for (int64_t t = 0; t < lengths[b]; t += chunk) {
            const int64_t n = lengths[b] - t < chunk ? lengths[b] - t : chunk;
            loom_tensor *x;
            assert_int_equal(loom_tensor_wrap(&x, (void *)(e + (b * T + t) * N), LOOM_DTYPE_F32, 2,
                                              (int64_t[]){ n, N }, NULL, NULL), LOOM_OK);
            if (method(dec, "audio.ctc_decoder_step", x, NULL) != LOOM_OK)
                fail_msg("step: %s", loom_last_error());
            loom_tensor_free(x);
            if (chunk == 7)
                check_best(dec, t + n + 1);
        }
        assert_int_equal(method(dec, "audio.ctc_decoder_end", NULL, NULL), LOOM_OK);
        loom_tensor *out[CT_N_OUT] = { 0 };
        if (method(dec, "audio.ctc_decoder_final", NULL, out) != LOOM_OK)
            fail_msg("final: %s", loom_last_error());
        char what[64];
        snprintf(what, sizeof what, "streamed in chunks of %lld", (long long)chunk);
        ct_check(&G, c, b, 1, out, what);
        ct_free_outputs(out);
    }
    loom_object_free(dec);
}

static void test_chunks(void **state)
{
    (void)state;
    static const int64_t chunks[3] = { 1, 7, 50 };
    for (int c = 0; c < G.n_cases; c++)
        for (int k = 0; k < 3; k++)
            stream_case(c, chunks[k]);
}

/* flashlight's get_best_hypothesis(0) after every 7 frames (best_*.npy) */
static void test_best_goldens(void **state)
{
    (void)state;
    static const char *const names[CT_N_OUT - 1] = { "tokens", "timesteps", "offsets", "words", "words_offsets",
                                                     "score" };
    loom_tensor *g[CT_N_OUT - 1], *cases = tu_npy("audio/ctc/best_cases");
    char name[64];
    for (int k = 0; k < CT_N_OUT - 1; k++) {
        snprintf(name, sizeof name, "audio/ctc/best_%s", names[k]);
        g[k] = tu_npy(name);
    }
    const int64_t *gt = loom_data(g[0]), *gs = loom_data(g[1]), *go = loom_data(g[2]), *gwo = loom_data(g[4]);
    const uint8_t *gw = loom_data(g[3]);
    const double *gsc = loom_data(g[5]);
    const int64_t T = G.emissions->shape[1], N = G.emissions->shape[2], *lengths = loom_data(G.lengths);
    const float *e = loom_data(G.emissions);
    int64_t row = 0;
    for (int64_t ci = 0; ci < cases->shape[0]; ci++) {
        const int c = (int)((const int64_t *)loom_data(cases))[ci];
        loom_object *dec = ct_make_decoder(G.lines[c], NULL);
        for (int64_t b = 0; b < 2; b++) {
            assert_int_equal(method(dec, "audio.ctc_decoder_begin", NULL, NULL), LOOM_OK);
            for (int64_t t = 0; t < lengths[b]; t += 7, row++) {
                const int64_t n = lengths[b] - t < 7 ? lengths[b] - t : 7;
                loom_tensor *x, *out[CT_N_OUT] = { 0 };
                assert_int_equal(loom_tensor_wrap(&x, (void *)(e + (b * T + t) * N), LOOM_DTYPE_F32, 2,
                                                  (int64_t[]){ n, N }, NULL, NULL), LOOM_OK);
                assert_int_equal(method(dec, "audio.ctc_decoder_step", x, NULL), LOOM_OK);
                loom_tensor_free(x);
                if (method(dec, "audio.ctc_decoder_best", NULL, out) != LOOM_OK)
                    fail_msg("best: %s", loom_last_error());
                assert_int_equal(out[CT_SCORE]->shape[0], 1);
                const int64_t *o = loom_data(out[CT_OFFSETS]), *tk = loom_data(out[CT_TOKENS]);
                const int64_t *ts = loom_data(out[CT_TIMESTEPS]), *wo = loom_data(out[CT_WORDS_OFFSETS]);
                const double sc = ((const double *)loom_data(out[CT_SCORE]))[0];
                int same = o[1] == go[row + 1] - go[row] && wo[1] == gwo[row + 1] - gwo[row]
                           && sc > gsc[row] - 1e-4 && sc < gsc[row] + 1e-4;
                for (int64_t i = 0; same && i < o[1]; i++)
                    same = tk[i] == gt[go[row] + i] && ts[i] == gs[go[row] + i];
                if (same && wo[1] > 0)
                    same = memcmp(loom_data(out[CT_WORDS]), gw + gwo[row], (size_t)wo[1]) == 0;
                if (!same)
                    fail_msg("case %d (%s) utterance %lld after %lld frames: best %.6f (%lld tokens), flashlight "
                             "%.6f (%lld tokens)", c, G.lines[c], (long long)b, (long long)(t + n), sc,
                             (long long)o[1], gsc[row], (long long)(go[row + 1] - go[row]));
                ct_free_outputs(out);
            }
            assert_int_equal(method(dec, "audio.ctc_decoder_end", NULL, NULL), LOOM_OK);
        }
        loom_object_free(dec);
    }
    assert_int_equal(row, g[5]->shape[0]);
    for (int k = 0; k < CT_N_OUT - 1; k++)
        loom_tensor_free(g[k]);
    loom_tensor_free(cases);
}

static void test_order(void **state)
{
    (void)state;
    loom_object *dec = ct_make_decoder(G.lines[0], NULL);
    loom_tensor *x, *out[CT_N_OUT] = { 0 };
    assert_int_equal(loom_tensor_new(&x, LOOM_DTYPE_F32, 2, (int64_t[]){ 2, 29 }, NULL), LOOM_OK);
    assert_int_equal(method(dec, "audio.ctc_decoder_step", x, NULL), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "audio.ctc_decoder_begin first"));
    assert_int_equal(method(dec, "audio.ctc_decoder_end", NULL, NULL), LOOM_EINVAL);
    assert_int_equal(method(dec, "audio.ctc_decoder_final", NULL, out), LOOM_EINVAL);
    assert_int_equal(method(dec, "audio.ctc_decoder_begin", NULL, NULL), LOOM_OK);
    assert_int_equal(method(dec, "audio.ctc_decoder_step", x, NULL), LOOM_OK);
    assert_int_equal(method(dec, "audio.ctc_decoder_final", NULL, out), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "audio.ctc_decoder_end first"));
    assert_int_equal(method(dec, "audio.ctc_decoder_end", NULL, NULL), LOOM_OK);
    assert_int_equal(method(dec, "audio.ctc_decoder_step", x, NULL), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "the stream has ended"));
    assert_int_equal(method(dec, "audio.ctc_decoder_final", NULL, out), LOOM_OK);
    ct_free_outputs(out);
    loom_tensor_free(x);
    /* frames of the wrong width */
    assert_int_equal(method(dec, "audio.ctc_decoder_begin", NULL, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(&x, LOOM_DTYPE_F32, 2, (int64_t[]){ 2, 30 }, NULL), LOOM_OK);
    assert_int_equal(method(dec, "audio.ctc_decoder_step", x, NULL), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "[T, N] with N = 29"));
    loom_tensor_free(x);
    loom_object_free(dec);
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
        cmocka_unit_test(test_chunks),
        cmocka_unit_test(test_best_goldens),
        cmocka_unit_test(test_order),
    };
    return cmocka_run_group_tests_name("audio_ctc_stream", tests, setup, teardown);
}
