/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_ctc_greedy.c - audio.ctc_greedy_decoder against the reference of
** tools/gen_ctc_goldens.py (torchaudio's GreedyCTCDecoder: argmax,
** unique_consecutive, blanks dropped): the decoder's emissions with their
** lengths, and frames full of ties and NaNs with blank 5; identical tokens
** and offsets. Then its refusals. Run again with LOOM_CPU_MAX_ISA=scalar
** (audio-ctc-greedy-scalar) for the portable argmax.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tu_ops.h"

static loom_status greedy(const loom_tensor *e, const loom_tensor *len, int64_t blank, loom_tensor **out)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "blank", blank), LOOM_OK);
    const loom_tensor *in[2] = { e, len };
    out[0] = out[1] = NULL;
    loom_status s = loom_run("audio.ctc_greedy_decoder", in, 2, a, out, 2, NULL);
    loom_attrs_free(a);
    return s;
}

static void check(const char *em, const char *len, int64_t blank, const char *want_tokens, const char *want_off)
{
    loom_tensor *e = tu_npy(em), *l = len != NULL ? tu_npy(len) : NULL, *out[2];
    if (greedy(e, l, blank, out) != LOOM_OK)
        fail_msg("%s: %s", em, loom_last_error());
    loom_tensor *wt = tu_npy(want_tokens), *wo = tu_npy(want_off);
    tu_assert_identical(out[0], wt, "tokens");
    tu_assert_identical(out[1], wo, "offsets");
    for (int k = 0; k < 2; k++)
        loom_tensor_free(out[k]);
    loom_tensor_free(wt);
    loom_tensor_free(wo);
    loom_tensor_free(e);
    loom_tensor_free(l);
}

static void test_goldens(void **state)
{
    (void)state;
    check("audio/ctc/emissions", "audio/ctc/lengths", 0, "audio/ctc/greedy_tokens", "audio/ctc/greedy_offsets");
    check("audio/ctc/greedy_emissions", NULL, 5, "audio/ctc/greedy_ties_tokens", "audio/ctc/greedy_ties_offsets");
}

static void test_errors(void **state)
{
    (void)state;
    loom_tensor *e, *l, *out[2];
    assert_int_equal(loom_tensor_new(&e, LOOM_DTYPE_F32, 3, (int64_t[]){ 2, 3, 4 }, NULL), LOOM_OK);
    assert_int_equal(greedy(e, NULL, 4, out), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "blank 4 is not a token of 'emissions' f32[2,3,4]"));
    assert_int_equal(loom_tensor_new(&l, LOOM_DTYPE_I64, 1, (int64_t[]){ 3 }, NULL), LOOM_OK);
    assert_int_equal(greedy(e, l, 0, out), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "'lengths' i64[3] must be [B] with B = 2"));
    loom_tensor_free(l);
    assert_int_equal(loom_tensor_new(&l, LOOM_DTYPE_I64, 1, (int64_t[]){ 2 }, NULL), LOOM_OK);
    ((int64_t *)loom_data(l))[0] = 4;
    assert_int_equal(greedy(e, l, 0, out), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "'lengths'[0] = 4 is outside [0, T = 3]"));
    ((int64_t *)loom_data(l))[0] = 0;
    assert_int_equal(greedy(e, l, 0, out), LOOM_OK);
    /* zeros everywhere: token 0 (the blank) wins every frame */
    assert_int_equal(out[0]->shape[0], 0);
    for (int k = 0; k < 2; k++)
        loom_tensor_free(out[k]);
    loom_tensor_free(l);
    loom_tensor_free(e);
    assert_int_equal(loom_tensor_new(&e, LOOM_DTYPE_F32, 3, (int64_t[]){ 2, 3, 0 }, NULL), LOOM_OK);
    assert_int_equal(greedy(e, NULL, 0, out), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "no tokens per frame"));
    loom_tensor_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_goldens),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests_name("audio_ctc_greedy", tests, tu_setup, tu_teardown);
}
