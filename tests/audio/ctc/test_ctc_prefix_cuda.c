/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_ctc_prefix_cuda.c - audio.cuda_ctc_decoder's cuda kernel against the
** goldens of its cpu kernel (tools/gen_ctc_cuda_goldens.py): every case
** with the log-probs and lengths on the device gives identical tokens and
** offsets, and scores within 1e-3 (the device's __expf and __logf, as
** torchaudio's kernels use, in each of about 40 steps' lse near -13);
** then its refusal of bad lengths. Skips without a CUDA device or the
** audio-cuda pack.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "audio_test_util.h"
#include "prefix_test_util.h"

static loom_dl_device dev;
#define G PT

#define NEED_DEVICE() AT_NEED_CUDA("audio.cuda_ctc_decoder", &dev)

/* The op on the device; out: the three outputs copied to the host. */
static loom_status on_device(const loom_tensor *e, const loom_tensor *len, loom_attrs *a, loom_tensor **out)
{
    loom_tensor *de = NULL, *dl = NULL, *dout[3] = { 0 };
    assert_int_equal(loom_tensor_copy_to(&de, e, &dev), LOOM_OK);
    if (len != NULL)
        assert_int_equal(loom_tensor_copy_to(&dl, len, &dev), LOOM_OK);
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.backend = "cuda";
    const loom_tensor *in[2] = { de, dl };
    loom_status s = loom_run("audio.cuda_ctc_decoder", in, 2, a, dout, 3, &opt);
    for (int k = 0; k < 3; k++) {
        out[k] = NULL;
        if (s == LOOM_OK)
            assert_int_equal(loom_tensor_copy_to(&out[k], dout[k], NULL), LOOM_OK);
        loom_tensor_free(dout[k]);
    }
    loom_tensor_free(de);
    loom_tensor_free(dl);
    return s;
}

static void test_goldens(void **state)
{
    (void)state;
    NEED_DEVICE();
    for (int c = 0; c < G.n_cases; c++) {
        loom_attrs *a = pt_case_attrs(&G, c);
        loom_tensor *out[3];
        if (on_device(G.emissions, G.lengths, a, out) != LOOM_OK)
            fail_msg("case %d (%s): %s", c, G.lines[c], loom_last_error());
        pt_check(&G, c, out, 1e-3, "cuda");
        for (int k = 0; k < 3; k++)
            loom_tensor_free(out[k]);
        loom_attrs_free(a);
    }
}

static void test_refusal(void **state)
{
    (void)state;
    NEED_DEVICE();
    loom_tensor *l, *out[3];
    assert_int_equal(loom_tensor_new(&l, LOOM_DTYPE_I64, 1, (int64_t[]){ 6 }, NULL), LOOM_OK);
    memset(loom_data(l), 0, 6 * sizeof(int64_t));
    ((int64_t *)loom_data(l))[2] = 99;
    loom_attrs *a = pt_attrs("nbest=1");
    assert_int_equal(on_device(G.emissions, l, a, out), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "'lengths'[2] = 99 is outside [0, T = 40]"));
    loom_attrs_free(a);
    loom_tensor_free(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_goldens),
        cmocka_unit_test(test_refusal),
    };
    return cmocka_run_group_tests_name("audio_ctc_prefix_cuda", tests, pt_setup, pt_teardown);
}
