/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_kjt.c - the rec pack's KeyedJaggedTensor ops against torchrec
** (tests/data/rec/kjt/cases.inc, written by tools/gen_rec_kjt_goldens.py:
** plain and VBE KJTs, weighted and not, i32 and i64), every output bit for
** bit (the ops move integers and copy weights); then the refusals of bad
** KJTs, each naming the argument and the feature at fault.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tu_ops.h"

typedef struct golden {
    const char *name, *op, *inputs, *attrs;
    int n_outputs;
} golden;

static const golden goldens[] = {
#define CASE(name, op, inputs, attrs, n) { name, op, inputs, attrs, n },
#include "../../data/rec/kjt/cases.inc"
#undef CASE
};

#define MAX_IN 8
#define MAX_OUT 16

static loom_attrs *parse_attrs(const char *op, const char *text)
{
    loom_attrs *a = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *save = NULL, *item = strtok_r(buf, ";", &save); item; item = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(item, '=');
        assert_non_null(eq);
        *eq = '\0';
        if (loom_attrs_parse(a, op, item, eq + 1) != LOOM_OK)
            fail_msg("%s: attribute %s=%s: %s", op, item, eq + 1, loom_last_error());
    }
    return a;
}

static void test_golden(void **state)
{
    const golden *g = *state;
    const loom_tensor *in[MAX_IN] = { 0 };
    loom_tensor *owned[MAX_IN] = { 0 };
    int n_in = 0;
    char names[200];
    snprintf(names, sizeof names, "%s", g->inputs);
    /* empty names are absent inputs: walk the list by hand (strtok skips them) */
    for (char *p = names; *p || n_in == 0;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        if (*p) {
            char path[256];
            snprintf(path, sizeof path, "rec/kjt/%s.%s", g->name, p);
            owned[n_in] = tu_npy(path);
            in[n_in] = owned[n_in];
        }
        n_in++;
        if (!comma)
            break;
        p = comma + 1;
    }
    loom_attrs *a = parse_attrs(g->op, g->attrs);
    loom_tensor *out[MAX_OUT] = { 0 };
    if (loom_run(g->op, in, n_in, a, out, g->n_outputs, NULL) != LOOM_OK)
        fail_msg("%s (%s): %s", g->name, g->op, loom_last_error());
    for (int i = 0; i < g->n_outputs; i++) {
        char path[256], what[300];
        snprintf(path, sizeof path, "rec/kjt/%s.out%d", g->name, i);
        loom_tensor *want = tu_npy(path);
        snprintf(what, sizeof what, "%s output %d (%s)", g->name, i, loom_op_schema_of(loom_op_find(g->op))->outputs[i].name);
        tu_assert_identical(out[i], want, what);
        loom_tensor_free(want);
        loom_tensor_free(out[i]);
    }
    loom_attrs_free(a);
    for (int i = 0; i < n_in; i++)
        loom_tensor_free(owned[i]);
}

/* ------------------------------------------------------------ refusals */

static loom_tensor *make_i64(int64_t n, const int64_t *v)
{
    int64_t shape[1] = { n };
    loom_tensor *t = NULL;
    assert_int_equal(loom_tensor_new(&t, LOOM_DTYPE_I64, 1, shape, NULL), LOOM_OK);
    if (n > 0)
        memcpy(loom_data(t), v, (size_t)n * sizeof(int64_t));
    return t;
}

static loom_tensor *make_i64_2d(int64_t r, int64_t c, const int64_t *v)
{
    int64_t shape[2] = { r, c };
    loom_tensor *t = NULL;
    assert_int_equal(loom_tensor_new(&t, LOOM_DTYPE_I64, 2, shape, NULL), LOOM_OK);
    if (r * c > 0)
        memcpy(loom_data(t), v, (size_t)(r * c) * sizeof(int64_t));
    return t;
}

/* Runs op on the general input block and expects a refusal containing msg */
static void expect_refusal(const char *op, loom_tensor *const *in, int n_in, const char *attrs, const char *msg)
{
    loom_attrs *a = parse_attrs(op, attrs);
    loom_tensor *out[MAX_OUT] = { 0 };
    int32_t n_out = (int32_t)loom_op_schema_of(loom_op_find(op))->n_outputs;
    loom_status st = loom_run(op, (const loom_tensor *const *)in, n_in, a, out, n_out, NULL);
    loom_attrs_free(a);
    for (int32_t i = 0; i < n_out; i++)
        loom_tensor_free(out[i]);
    if (st == LOOM_OK)
        fail_msg("%s %s: accepted; expected a refusal with \"%s\"", op, attrs, msg);
    if (!strstr(loom_last_error(), msg))
        fail_msg("%s %s: \"%s\" does not say \"%s\"", op, attrs, loom_last_error(), msg);
}

static void free_all(loom_tensor **t, int n)
{
    for (int i = 0; i < n; i++)
        loom_tensor_free(t[i]);
}

static void test_bad_lengths(void **state)
{
    (void)state;
    const int64_t v[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    /* keys F0, F1, stride 3: lengths sum to 9 but there are 8 values: F1 runs past them */
    const int64_t long_l[6] = { 2, 0, 1, 1, 2, 3 };
    loom_tensor *in[2] = { make_i64(8, v), make_i64(6, long_l) };
    expect_refusal("rec.kjt_from_lengths_sync", in, 2, "keys=F0,F1", "feature 'F1' (key 1): its lengths run past");
    loom_tensor_free(in[1]);
    /* sum to 7: fewer than the values */
    const int64_t short_l[6] = { 2, 0, 1, 1, 1, 2 };
    in[1] = make_i64(6, short_l);
    expect_refusal("rec.kjt_from_lengths_sync", in, 2, "keys=F0,F1", "sum to 7, but 'values' has 8");
    loom_tensor_free(in[1]);
    const int64_t neg_l[6] = { 2, 0, 1, -1, 3, 3 };
    in[1] = make_i64(6, neg_l);
    expect_refusal("rec.kjt_from_lengths_sync", in, 2, "keys=F0,F1", "feature 'F1' (key 1): 'lengths'[3] = -1");
    /* 6 lengths are not 4 keys x a stride */
    expect_refusal("rec.kjt_from_lengths_sync", in, 2, "keys=a,b,c,d", "not keys x stride");
    expect_refusal("rec.kjt_from_lengths_sync", in, 2, "keys=F0,F1;stride=2", "not keys x stride");
    expect_refusal("rec.kjt_from_lengths_sync", in, 2, "keys=F0,,F1", "empty name");
    free_all(in, 2);
}

static void test_bad_offsets(void **state)
{
    (void)state;
    const int64_t v[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    const int64_t dec[7] = { 0, 2, 2, 3, 5, 4, 8 };
    loom_tensor *in[2] = { make_i64(8, v), make_i64(7, dec) };
    expect_refusal("rec.kjt_from_offsets_sync", in, 2, "keys=F0,F1",
                   "feature 'F1' (key 1): 'offsets' are not monotonic: offsets[4] = 5 > offsets[5] = 4 (sample 1)");
    loom_tensor_free(in[1]);
    const int64_t start[7] = { 1, 2, 2, 3, 4, 5, 8 };
    in[1] = make_i64(7, start);
    expect_refusal("rec.kjt_from_offsets_sync", in, 2, "keys=F0,F1", "'offsets'[0] = 1, not 0");
    loom_tensor_free(in[1]);
    const int64_t end[7] = { 0, 2, 2, 3, 4, 5, 7 };
    in[1] = make_i64(7, end);
    expect_refusal("rec.kjt_from_offsets_sync", in, 2, "keys=F0,F1", "sum to 7, but 'values' has 8");
    free_all(in, 2);
    /* lengths and offsets that disagree */
    const int64_t l[6] = { 2, 0, 1, 1, 1, 3 }, o[7] = { 0, 2, 3, 3, 4, 5, 8 };
    loom_tensor *g[3] = { make_i64(8, v), make_i64(6, l), make_i64(7, o) };
    expect_refusal("rec.kjt_permute", g, 3, "keys=F0,F1;indices=1,0", "feature 'F0' (key 0): 'lengths'[1] = 0 but");
    free_all(g, 3);
}

static void test_bad_keys_and_vbe(void **state)
{
    (void)state;
    const int64_t v[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    const int64_t l[6] = { 2, 0, 1, 1, 1, 3 };
    loom_tensor *in[6] = { make_i64(8, v), make_i64(6, l) };
    expect_refusal("rec.kjt_permute", in, 2, "keys=F0,F1;indices=0,2", "'indices'[1] = 2 is not a key");
    expect_refusal("rec.kjt_split", in, 2, "keys=F0,F1;segments=1,2", "'segments'[1] asks for 2 keys, but only 1 of");
    expect_refusal("rec.kjt_dedup", in, 2, "keys=F0,F1,F2,F3", "not keys x stride");
    /* VBE: strides per rank that do not add up to the lengths */
    const int64_t sp[4] = { 2, 1, 1, 1 };
    in[4] = make_i64_2d(2, 2, sp);
    expect_refusal("rec.kjt_permute", in, 5, "keys=F0,F1;indices=1", "'stride_per_key_per_rank' sums to 5 samples");
    loom_tensor_free(in[4]);
    const int64_t sp_ok[4] = { 2, 1, 1, 2 };
    in[4] = make_i64_2d(2, 2, sp_ok);
    /* inverse indices past feature F0's 3 samples */
    const int64_t inv[4] = { 0, 3, 1, 0 };
    in[5] = make_i64_2d(2, 2, inv);
    expect_refusal("rec.kjt_to_dict", in, 6, "keys=F0,F1", "feature 'F0' (key 0): 'inverse_indices'[0][1] = 3");
    expect_refusal("rec.kjt_dedup", in, 5, "keys=F0,F1", "already VBE");
    loom_tensor_free(in[5]);
    in[5] = NULL;
    const int64_t sp_bad[2] = { 2, 1 };
    loom_tensor_free(in[4]);
    in[4] = make_i64_2d(1, 2, sp_bad);
    expect_refusal("rec.kjt_permute", in, 5, "keys=F0,F1;indices=1", "must be [keys = 2, ranks >= 1]");
    free_all(in, 6);
}

static void test_bad_concat(void **state)
{
    (void)state;
    const int64_t v[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    const int64_t l[6] = { 2, 0, 1, 1, 1, 3 };
    /* KJT 0: keys a, b with stride 2 (4 lengths); KJT 1: key c with stride 2 */
    const int64_t lo_ok[3] = { 0, 4, 6 }, lo_bad[3] = { 0, 3, 6 }, lo_short[2] = { 0, 6 };
    loom_tensor *in[3] = { make_i64(8, v), make_i64(6, l), make_i64(3, lo_bad) };
    expect_refusal("rec.kjt_concat", in, 3, "keys=a,b,c;key_segments=2,1", "KJT 0 has 3 lengths for 2 keys");
    loom_tensor_free(in[2]);
    in[2] = make_i64(3, lo_ok);
    expect_refusal("rec.kjt_concat", in, 3, "keys=a,b,c,d;key_segments=2,2",
                   "strides must be consistent for all KJTs: KJT 0 has stride 2, KJT 1 has 1");
    expect_refusal("rec.kjt_concat", in, 3, "keys=a,b;key_segments=2,1", "not keys x stride");
    loom_tensor_free(in[2]);
    in[2] = make_i64(2, lo_short);
    expect_refusal("rec.kjt_concat", in, 3, "keys=a,b,c;key_segments=2,1", "one entry per KJT + 1 = 3");
    free_all(in, 3);
}

int main(void)
{
    enum { N = sizeof goldens / sizeof goldens[0] };
    struct CMUnitTest tests[N + 4];
    for (size_t i = 0; i < N; i++) {
        tests[i] = (struct CMUnitTest)cmocka_unit_test_prestate(test_golden, (void *)&goldens[i]);
        tests[i].name = goldens[i].name;
    }
    tests[N] = (struct CMUnitTest)cmocka_unit_test(test_bad_lengths);
    tests[N + 1] = (struct CMUnitTest)cmocka_unit_test(test_bad_offsets);
    tests[N + 2] = (struct CMUnitTest)cmocka_unit_test(test_bad_keys_and_vbe);
    tests[N + 3] = (struct CMUnitTest)cmocka_unit_test(test_bad_concat);
    return _cmocka_run_group_tests("rec_kjt", tests, N + 4, tu_setup, tu_teardown);
}
