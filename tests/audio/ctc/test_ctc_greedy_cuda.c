/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_ctc_greedy_cuda.c - audio.ctc_greedy_decoder's cuda kernel against
** the same goldens as the cpu's (tools/gen_ctc_goldens.py): the decoder's
** emissions with lengths on the device, and frames of ties and NaNs;
** identical tokens and offsets; then its refusal of bad lengths. Skips
** without a CUDA device or the audio-cuda pack.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "audio_test_util.h"

static loom_dl_device dev;

#define NEED_DEVICE() AT_NEED_CUDA("audio.ctc_greedy_decoder", &dev)

static loom_status on_device(const loom_tensor *e, const loom_tensor *len, int64_t blank, loom_tensor **out)
{
    loom_tensor *de = NULL, *dl = NULL, *dout[2] = { 0 };
    assert_int_equal(loom_tensor_copy_to(&de, e, &dev), LOOM_OK);
    if (len != NULL)
        assert_int_equal(loom_tensor_copy_to(&dl, len, &dev), LOOM_OK);
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "blank", blank), LOOM_OK);
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.backend = "cuda";
    const loom_tensor *in[2] = { de, dl };
    loom_status s = loom_run("audio.ctc_greedy_decoder", in, 2, a, dout, 2, &opt);
    for (int k = 0; k < 2; k++) {
        out[k] = NULL;
        if (s == LOOM_OK)
            assert_int_equal(loom_tensor_copy_to(&out[k], dout[k], NULL), LOOM_OK);
        loom_tensor_free(dout[k]);
    }
    loom_attrs_free(a);
    loom_tensor_free(de);
    loom_tensor_free(dl);
    return s;
}

static void check(const char *em, const char *len, int64_t blank, const char *want_tokens, const char *want_off)
{
    loom_tensor *e = tu_npy(em), *l = len != NULL ? tu_npy(len) : NULL, *out[2];
    if (on_device(e, l, blank, out) != LOOM_OK)
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
    NEED_DEVICE();
    check("audio/ctc/emissions", "audio/ctc/lengths", 0, "audio/ctc/greedy_tokens", "audio/ctc/greedy_offsets");
    check("audio/ctc/greedy_emissions", NULL, 5, "audio/ctc/greedy_ties_tokens", "audio/ctc/greedy_ties_offsets");
}

static void test_refusal(void **state)
{
    (void)state;
    NEED_DEVICE();
    loom_tensor *e, *l, *out[2];
    assert_int_equal(loom_tensor_new(&e, LOOM_DTYPE_F32, 3, (int64_t[]){ 2, 3, 4 }, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(&l, LOOM_DTYPE_I64, 1, (int64_t[]){ 2 }, NULL), LOOM_OK);
    ((int64_t *)loom_data(l))[1] = 9;
    assert_int_equal(on_device(e, l, 0, out), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "'lengths'[1] = 9 is outside [0, T = 3]"));
    loom_tensor_free(e);
    loom_tensor_free(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_goldens),
        cmocka_unit_test(test_refusal),
    };
    return cmocka_run_group_tests_name("audio_ctc_greedy_cuda", tests, tu_setup, tu_teardown);
}
