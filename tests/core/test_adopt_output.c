/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_adopt_output.c - host->adopt_output (ABI 1.6) on adopt.so
** (adoptpack.c): an output made of a kernel's own buffer is that buffer
** (values, strides), and the buffer is released exactly once, whatever
** happens: freed by the host, through a DLPack export, on another thread,
** after loom_shutdown, when the call fails after adopting, when the caller
** did not ask for the output, when the caller supplied the output (copied,
** then released at once), and at every refusal (before adopt_output
** returns). adopt.count's { made, released } must agree after each case;
** ASan's leak check sees any buffer the counts would miss.
*/
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "loom/loom.h"

static void init_adopt(void)
{
    loom_init_options o = LOOM_INIT_OPTIONS_INIT;
    loom_shutdown();
    o.plugin_path = getenv("LOOM_TEST_ADOPT");
    o.no_default_dirs = 1;
    o.verbose = -1;
    assert_int_equal(loom_init(&o), LOOM_OK);
    assert_non_null(loom_op_find("adopt.make"));
}

/* { made, released } */
static void counts(int64_t c[2])
{
    loom_tensor *y = NULL;
    assert_int_equal(loom_run("adopt.count", NULL, 0, NULL, &y, 1, NULL), LOOM_OK);
    memcpy(c, y->data, 2 * sizeof *c);
    loom_tensor_free(y);
}

static loom_status make(const char *mode, loom_tensor **out, int32_t n_out)
{
    loom_attrs *a = NULL;
    loom_status st;
    loom_attrs_new(&a);
    loom_attrs_set_string(a, "mode", mode);
    st = loom_run("adopt.make", NULL, 0, a, out, n_out, NULL);
    loom_attrs_free(a);
    return st;
}

static void adopted_outputs_are_the_buffers_until_freed(void **state)
{
    loom_tensor *out[2] = { NULL, NULL };
    int64_t c0[2], c[2];
    (void)state;
    init_adopt();
    counts(c0);
    assert_int_equal(make("ok", out, 2), LOOM_OK);
    assert_int_equal(out[0]->ndim, 1);
    assert_int_equal(out[0]->shape[0], 8);
    assert_int_equal((uintptr_t)out[0]->data % LOOM_ADOPT_ALIGNMENT, 0);
    for (int i = 0; i < 8; i++)
        assert_true(((const float *)out[0]->data)[i] == (float)i);
    assert_int_equal(out[1]->ndim, 2);
    assert_int_equal(out[1]->shape[0], 2);
    assert_int_equal(out[1]->shape[1], 3);
    assert_int_equal(out[1]->strides[0], 3);
    assert_true(((const float *)out[1]->data)[5] == 5.0f);
    counts(c);
    assert_int_equal(c[0] - c0[0], 2);
    assert_int_equal(c[1] - c0[1], 0);      /* both alive */
    loom_tensor_free(out[0]);
    counts(c);
    assert_int_equal(c[1] - c0[1], 1);
    loom_tensor_free(out[1]);
    counts(c);
    assert_int_equal(c[1] - c0[1], 2);
    loom_tensor_free(NULL);
}

static void strided_storage_keeps_its_strides(void **state)
{
    loom_tensor *out[2] = { NULL, NULL }, *compact = NULL;
    int64_t c0[2], c[2];
    (void)state;
    init_adopt();
    counts(c0);
    assert_int_equal(make("strided", out, 2), LOOM_OK);
    assert_int_equal(out[0]->shape[0], 4);
    assert_non_null(out[0]->strides);
    assert_int_equal(out[0]->strides[0], 2);
    assert_int_equal(loom_tensor_copy_to(&compact, out[0], NULL), LOOM_OK);
    for (int i = 0; i < 4; i++)
        assert_true(((const float *)compact->data)[i] == (float)(2 * i));
    loom_tensor_free(compact);
    loom_tensor_free(out[0]);
    loom_tensor_free(out[1]);
    out[0] = out[1] = NULL;
    assert_int_equal(make("empty", out, 2), LOOM_OK);
    assert_int_equal(out[0]->shape[0], 0);
    loom_tensor_free(out[0]);
    loom_tensor_free(out[1]);
    counts(c);
    assert_int_equal(c[0] - c0[0], 4);
    assert_int_equal(c[1] - c0[1], 4);
}

static void a_dlpack_export_keeps_the_buffer_alive(void **state)
{
    loom_tensor *out[2] = { NULL, NULL };
    loom_dlpack_managed *m = NULL;
    int64_t c0[2], c[2];
    (void)state;
    init_adopt();
    counts(c0);
    assert_int_equal(make("ok", out, 2), LOOM_OK);
    assert_int_equal(loom_tensor_to_dlpack(&m, out[0]), LOOM_OK);   /* m now owns out[0] */
    loom_tensor_free(out[1]);
    counts(c);
    assert_int_equal(c[1] - c0[1], 1);
    assert_true(((const float *)m->dl_tensor.data)[7] == 7.0f);
    m->deleter(m);
    counts(c);
    assert_int_equal(c[1] - c0[1], 2);
}

static void *free_on_thread(void *t)
{
    loom_tensor_free(t);
    return NULL;
}

static void release_runs_on_any_thread_and_after_shutdown(void **state)
{
    loom_tensor *out[2] = { NULL, NULL };
    pthread_t th;
    int64_t c0[2], c[2];
    (void)state;
    init_adopt();
    counts(c0);
    assert_int_equal(make("ok", out, 2), LOOM_OK);
    assert_int_equal(pthread_create(&th, NULL, free_on_thread, out[0]), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    counts(c);
    assert_int_equal(c[1] - c0[1], 1);
    loom_shutdown();
    loom_tensor_free(out[1]);   /* packs stay mapped: its release still runs */
    init_adopt();
    counts(c);
    assert_int_equal(c[0], c[1]);
}

static void a_failing_call_releases_what_it_adopted(void **state)
{
    static const char *const modes[] = { "fail_after", "alloc_after" };
    int64_t c0[2], c[2];
    (void)state;
    init_adopt();
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        loom_tensor *out[2] = { NULL, NULL };
        counts(c0);
        assert_int_not_equal(make(modes[i], out, 2), LOOM_OK);
        assert_null(out[0]);
        assert_null(out[1]);
        counts(c);
        assert_true(c[0] - c0[0] >= 1);
        assert_int_equal(c[0] - c0[0], c[1] - c0[1]);
    }
}

static void an_output_not_asked_for_is_released_by_the_call(void **state)
{
    loom_tensor *out[1] = { NULL };
    int64_t c0[2], c[2];
    (void)state;
    init_adopt();
    counts(c0);
    assert_int_equal(make("ok", out, 1), LOOM_OK);
    counts(c);
    assert_int_equal(c[1] - c0[1], 1);      /* matrix: nobody holds it */
    loom_tensor_free(out[0]);
    counts(c);
    assert_int_equal(c[1] - c0[1], 2);
}

static void a_supplied_output_gets_a_copy_and_the_buffer_goes_back(void **state)
{
    static const char *const modes[] = { "ok", "strided" };
    static const float want[2][8] = { { 0, 1, 2, 3, 4, 5, 6, 7 }, { 0, 2, 4, 6 } };
    int64_t c0[2], c[2];
    (void)state;
    init_adopt();
    for (int k = 0; k < 2; k++) {
        float buf[8] = { 0 };
        int64_t shape[1] = { k == 0 ? 8 : 4 };
        loom_tensor *mine = NULL, *out[2] = { NULL, NULL };
        assert_int_equal(loom_tensor_wrap(&mine, buf, LOOM_DTYPE_F32, 1, shape, NULL, NULL), LOOM_OK);
        out[0] = mine;
        counts(c0);
        assert_int_equal(make(modes[k], out, 2), LOOM_OK);
        assert_ptr_equal(out[0], mine);
        assert_memory_equal(buf, want[k], (size_t)shape[0] * sizeof(float));
        counts(c);
        assert_int_equal(c[1] - c0[1], 1);  /* the copied one, at once */
        loom_tensor_free(out[1]);
        loom_tensor_free(mine);
        /* a supplied output of another shape is refused, and still released */
        shape[0] = 3;
        assert_int_equal(loom_tensor_wrap(&mine, buf, LOOM_DTYPE_F32, 1, shape, NULL, NULL), LOOM_OK);
        out[0] = mine;
        out[1] = NULL;
        counts(c0);
        assert_int_equal(make(modes[k], out, 2), LOOM_EINVAL);
        assert_non_null(strstr(loom_last_error(), "was supplied as f32[3]"));
        counts(c);
        assert_int_equal(c[0] - c0[0], c[1] - c0[1]);
        loom_tensor_free(mine);
    }
}

static void refusals_name_the_output_and_release_the_buffer(void **state)
{
    static const struct { const char *mode, *message; } cases[] = {
        { "bad_dtype", "output 'output' cannot be i32" },
        { "bad_rank", "output 'matrix' has rank 2 by its definition, the storage 1" },
        { "misaligned", "is not 64-byte aligned" },
        { "too_small", "reach past the 28 bytes of the buffer" },
        { "too_far", "output 'matrix': its elements reach past the 64 bytes" },
        { "negative", "dim 0 has size 4, stride -1 (negative)" },
        { "twice", "output 'output' was already made in this call" },
        { "after_alloc", "output 'output' was already made in this call" },
        { "no_release", "storage or its release is NULL" },
    };
    int64_t c0[2], c[2];
    (void)state;
    init_adopt();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        loom_tensor *out[2] = { NULL, NULL };
        counts(c0);
        assert_int_equal(make(cases[i].mode, out, 2), LOOM_EINVAL);
        assert_null(out[0]);
        assert_null(out[1]);
        if (strstr(loom_last_error(), cases[i].message) == NULL || strstr(loom_last_error(), "adopt.make") == NULL)
            fail_msg("%s: %s", cases[i].mode, loom_last_error());
        counts(c);
        assert_true(c[0] - c0[0] >= 1);
        assert_int_equal(c[0] - c0[0], c[1] - c0[1]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(adopted_outputs_are_the_buffers_until_freed),
        cmocka_unit_test(strided_storage_keeps_its_strides),
        cmocka_unit_test(a_dlpack_export_keeps_the_buffer_alive),
        cmocka_unit_test(release_runs_on_any_thread_and_after_shutdown),
        cmocka_unit_test(a_failing_call_releases_what_it_adopted),
        cmocka_unit_test(an_output_not_asked_for_is_released_by_the_call),
        cmocka_unit_test(a_supplied_output_gets_a_copy_and_the_buffer_goes_back),
        cmocka_unit_test(refusals_name_the_output_and_release_the_buffer),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    loom_shutdown();
    return failed;
}
