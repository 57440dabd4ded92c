/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_ctc_prefix.c - audio.cuda_ctc_decoder's cpu kernel (the reference of
** its cuda one) against tools/gen_ctc_cuda_goldens.py, a NumPy
** reimplementation of torchaudio's cuda_ctc_decoder step by step: every
** case (beam sizes 1 to 30, clamped to V = 12; nbest 1 to 7; thresholds
** 0.2 to 1, so frames are skipped or not; an utterance of 0 frames and one
** whose frames are all skipped) gives identical tokens and offsets and
** scores within 2e-5 (float32 sums of about 40 log-probs near -13, each
** lse's log and exp within an ulp of NumPy's); the same on 1 thread and on
** the pool, utterance by utterance; then the refusals.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "prefix_test_util.h"

#define G PT

static loom_status run(const loom_tensor *e, const loom_tensor *len, loom_attrs *a, int threads, loom_tensor **out)
{
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.backend = "cpu";
    opt.num_threads = threads;
    const loom_tensor *in[2] = { e, len };
    for (int k = 0; k < 3; k++)
        out[k] = NULL;
    return loom_run("audio.cuda_ctc_decoder", in, 2, a, out, 3, &opt);
}

static void free3(loom_tensor **out)
{
    for (int k = 0; k < 3; k++)
        loom_tensor_free(out[k]);
}

static void test_goldens(void **state)
{
    (void)state;
    for (int c = 0; c < G.n_cases; c++) {
        for (int threads = 1; threads <= 2; threads++) {
            loom_attrs *a = pt_case_attrs(&G, c);
            loom_tensor *out[3];
            if (run(G.emissions, G.lengths, a, threads, out) != LOOM_OK)
                fail_msg("case %d (%s): %s", c, G.lines[c], loom_last_error());
            pt_check(&G, c, out, 2e-5, threads == 1 ? "cpu, 1 thread" : "cpu, 2 threads");
            free3(out);
            loom_attrs_free(a);
        }
    }
}

/* Without lengths every utterance has T frames: utterance 0 (T frames in
** the goldens too) decodes alone as in the batch. */
static void test_no_lengths(void **state)
{
    (void)state;
    const int64_t V = G.emissions->shape[2], T = G.emissions->shape[1];
    loom_tensor *one;
    assert_int_equal(loom_tensor_new(&one, LOOM_DTYPE_F32, 3, (int64_t[]){ 1, T, V }, NULL), LOOM_OK);
    memcpy(loom_data(one), loom_data(G.emissions), (size_t)(T * V) * sizeof(float));
    assert_int_equal(((const int64_t *)loom_data(G.lengths))[0], T);
    loom_attrs *a = pt_case_attrs(&G, 1);
    loom_tensor *out[3];
    assert_int_equal(run(one, NULL, a, 0, out), LOOM_OK);
    const int64_t *o = loom_data(out[1]), *t = loom_data(out[0]), *go = loom_data(G.offsets);
    const int64_t r0 = G.first_row[1], nb = G.nbest[1];
    assert_int_equal(out[1]->shape[0], nb + 1);
    for (int64_t h = 0; h < nb; h++) {
        assert_int_equal(o[h + 1] - o[h], go[r0 + h + 1] - go[r0 + h]);
        assert_memory_equal(t + o[h], (const int64_t *)loom_data(G.tokens) + go[r0 + h],
                            (size_t)(o[h + 1] - o[h]) * sizeof(int64_t));
    }
    free3(out);
    loom_attrs_free(a);
    loom_tensor_free(one);
}

static void expect_refused(const char *attrs, const loom_tensor *e, const loom_tensor *len, const char *needle)
{
    loom_attrs *a = pt_attrs(attrs);
    loom_tensor *out[3];
    loom_status s = run(e, len, a, 0, out);
    if (s != LOOM_EINVAL || strstr(loom_last_error(), needle) == NULL)
        fail_msg("%s: %s (%s), expected LOOM_EINVAL naming '%s'", attrs, loom_status_name(s), loom_last_error(),
                 needle);
    loom_attrs_free(a);
}

static void test_refusals(void **state)
{
    (void)state;
    expect_refused("beam_size=129", G.emissions, G.lengths, "beam_size 129");
    expect_refused("blank_skip_threshold=0", G.emissions, G.lengths, "blank_skip_threshold");
    expect_refused("blank_skip_threshold=1.5", G.emissions, G.lengths, "blank_skip_threshold");
    expect_refused("blank_skip_threshold=nan", G.emissions, G.lengths, "blank_skip_threshold");
    expect_refused("beam_size=4;nbest=5", G.emissions, G.lengths, "nbest 5");
    expect_refused("beam_size=30;nbest=13", G.emissions, G.lengths, "V = 12");
    loom_tensor *bad;
    assert_int_equal(loom_tensor_new(&bad, LOOM_DTYPE_I64, 1, (int64_t[]){ 6 }, NULL), LOOM_OK);
    memcpy(loom_data(bad), loom_data(G.lengths), 6 * sizeof(int64_t));
    ((int64_t *)loom_data(bad))[4] = 41;
    expect_refused("nbest=1", G.emissions, bad, "'lengths'[4] = 41");
    ((int64_t *)loom_data(bad))[4] = -1;
    expect_refused("nbest=1", G.emissions, bad, "'lengths'[4] = -1");
    loom_tensor_free(bad);
    assert_int_equal(loom_tensor_new(&bad, LOOM_DTYPE_I64, 1, (int64_t[]){ 5 }, NULL), LOOM_OK);
    expect_refused("nbest=1", G.emissions, bad, "'lengths'");
    loom_tensor_free(bad);
    assert_int_equal(loom_tensor_new(&bad, LOOM_DTYPE_F32, 3, (int64_t[]){ 2, 3, 0 }, NULL), LOOM_OK);
    expect_refused("nbest=1", bad, NULL, "no tokens per frame");
    loom_tensor_free(bad);
}

/* Inputs without elements: no utterances, no frames. */
static void test_empty(void **state)
{
    (void)state;
    loom_tensor *e, *out[3];
    assert_int_equal(loom_tensor_new(&e, LOOM_DTYPE_F32, 3, (int64_t[]){ 0, 5, 12 }, NULL), LOOM_OK);
    assert_int_equal(run(e, NULL, NULL, 0, out), LOOM_OK);
    assert_int_equal(out[0]->shape[0], 0);
    assert_int_equal(out[1]->shape[0], 1);
    free3(out);
    loom_tensor_free(e);
    assert_int_equal(loom_tensor_new(&e, LOOM_DTYPE_F32, 3, (int64_t[]){ 2, 0, 12 }, NULL), LOOM_OK);
    assert_int_equal(run(e, NULL, NULL, 0, out), LOOM_OK);
    assert_int_equal(out[0]->shape[0], 0);
    assert_int_equal(out[1]->shape[0], 3);
    assert_true(tu_get(out[2], 0) == 0.0 && tu_get(out[2], 1) == 0.0);
    free3(out);
    loom_tensor_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_goldens),
        cmocka_unit_test(test_no_lengths),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_empty),
    };
    return cmocka_run_group_tests_name("audio_ctc_prefix", tests, pt_setup, pt_teardown);
}
