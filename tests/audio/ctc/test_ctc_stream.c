/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_ctc_stream.c - audio.ctc_decoder's streaming methods: every golden
** case (tools/gen_ctc_goldens.py), each utterance fed in chunks of 1, 7
** and 50 frames between audio.ctc_decoder_begin and _end, gives what
** flashlight-text's one-shot decode gives (the goldens); the best
** hypothesis mid-stream is one well-formed hypothesis; and the methods
** refuse to run out of order.
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
        cmocka_unit_test(test_order),
    };
    return cmocka_run_group_tests_name("audio_ctc_stream", tests, setup, teardown);
}
