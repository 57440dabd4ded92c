/* SPDX-License-Identifier: BSD-3-Clause */
/*
** op_cases.c - see op_cases.h.
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
#include "op_cases.h"

static int64_t spec_numel(const oc_tensor *s)
{
    int64_t n = 1;
    for (int32_t d = 0; d < s->ndim; d++)
        if (s->shape[d] == 0)
            return 0;       /* the other dims may be huge: never multiply them */
    for (int32_t d = 0; d < s->ndim; d++)
        n *= s->shape[d];
    return n;
}

static void describe(const oc_tensor *s, char *buf, size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "%s[", loom_dtype_name(s->dtype));
    for (int32_t d = 0; d < s->ndim && used < size; d++)
        used += (size_t)snprintf(buf + used, size - used, d ? ",%lld" : "%lld", (long long)s->shape[d]);
    if (used < size)
        snprintf(buf + used, size - used, "]");
}

loom_tensor *oc_make(const oc_tensor *s)
{
    loom_tensor *t = NULL;
    const int64_t n = spec_numel(s);
    if (n == 0) {
        /* no elements: no data at all, so any read of it is caught */
        if (loom_tensor_wrap(&t, NULL, s->dtype, s->ndim, s->shape, NULL, NULL) != LOOM_OK)
            fail_msg("wrap: %s", loom_last_error());
        return t;
    }
    int narrow = s->dtype == LOOM_DTYPE_F16 || s->dtype == LOOM_DTYPE_BF16;
    loom_dtype make = s->vals != NULL && narrow ? LOOM_DTYPE_F32 : s->dtype;
    if (loom_tensor_new(&t, make, s->ndim, s->shape, NULL) != LOOM_OK)
        fail_msg("tensor_new: %s", loom_last_error());
    if (s->vals == NULL)
        return t;
    void *p = loom_data(t);
    for (int64_t i = 0; i < n; i++) {
        double v = s->vals[i];
        switch (make) {
        case LOOM_DTYPE_F32: ((float *)p)[i] = (float)v; break;
        case LOOM_DTYPE_F64: ((double *)p)[i] = v; break;
        case LOOM_DTYPE_I32: ((int32_t *)p)[i] = (int32_t)v; break;
        case LOOM_DTYPE_I64: ((int64_t *)p)[i] = (int64_t)v; break;
        case LOOM_DTYPE_U8:  ((uint8_t *)p)[i] = (uint8_t)v; break;
        default: fail_msg("op_cases: no values for dtype %s", loom_dtype_name(make));
        }
    }
    if (make != s->dtype) {
        loom_tensor *c = tu_cast(t, s->dtype);
        loom_tensor_free(t);
        t = c;
    }
    return t;
}

static loom_attrs *make_attrs(const oc_case *c)
{
    loom_attrs *a;
    char buf[1024];
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    if (c->attrs == NULL)
        return a;
    snprintf(buf, sizeof buf, "%s", c->attrs);
    for (char *save = NULL, *kv = strtok_r(buf, ";", &save); kv != NULL; kv = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(kv, '=');
        if (eq == NULL)
            fail_msg("%s (%s): attribute '%s' has no '='", c->op, c->what, kv);
        *eq = '\0';
        if (loom_attrs_parse(a, c->op, kv, eq + 1) != LOOM_OK)
            fail_msg("%s (%s): attribute %s=%s: %s", c->op, c->what, kv, eq + 1, loom_last_error());
    }
    return a;
}

static void check_zeros(const oc_case *c, int32_t k, const loom_tensor *t)
{
    if (loom_numel(t) == 0)
        return;
    loom_tensor *d = tu_cast(t, LOOM_DTYPE_F64);
    const double *v = loom_data(d);
    for (int64_t i = 0; i < loom_numel(d); i++)
        if (v[i] != 0)
            fail_msg("%s (%s): output %d element %lld is %g, expected 0", c->op, c->what, (int)k, (long long)i,
                     v[i]);
    loom_tensor_free(d);
}

static void check_output(const oc_case *c, int32_t k, const loom_tensor *t)
{
    const oc_tensor *want = &c->out[k];
    char wb[128], gb[128];
    oc_tensor got = { .dtype = loom_tensor_dtype_of(t), .ndim = t->ndim };
    for (int32_t d = 0; d < t->ndim && d < 6; d++)
        got.shape[d] = t->shape[d];
    describe(want, wb, sizeof wb);
    describe(&got, gb, sizeof gb);
    int same = got.dtype == want->dtype && got.ndim == want->ndim;
    for (int32_t d = 0; same && d < want->ndim; d++)
        same = got.shape[d] == want->shape[d];
    if (!same)
        fail_msg("%s (%s): output %d is %s, expected %s", c->op, c->what, (int)k, gb, wb);
    if (c->zeros & (1u << k))
        check_zeros(c, k, t);
}

void oc_run(const oc_case *c, loom_object *const *objects, size_t n_objects)
{
    const loom_op *op = loom_op_find(c->op);
    if (op == NULL)
        fail_msg("%s (%s): no such op: %s", c->op, c->what, loom_last_error());
    const loom_op_schema *s = loom_op_schema_of(op);
    loom_tensor *in[OC_MAX_IN] = { NULL };
    loom_tensor *out[OC_MAX_OUT] = { NULL };
    int32_t n_in = (int32_t)s->n_inputs, n_out = (int32_t)s->n_outputs;
    assert_true(n_in <= OC_MAX_IN && n_out <= OC_MAX_OUT);
    for (int32_t i = 0; i < n_in; i++)
        if (c->in[i].dtype != LOOM_DTYPE_INVALID)
            in[i] = oc_make(&c->in[i]);
    loom_attrs *a = make_attrs(c);
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.backend = "cpu";
    if (c->object > 0) {
        if ((size_t)c->object > n_objects || objects[c->object - 1] == NULL)
            fail_msg("%s (%s): object %d was not made", c->op, c->what, c->object);
        opt.object = objects[c->object - 1];
    }
    loom_status st = loom_run(c->op, (const loom_tensor *const *)in, n_in, a, out, n_out, &opt);
    if (c->expect != LOOM_OK) {
        if (st != c->expect)
            fail_msg("%s (%s): got %s (%s), expected %s", c->op, c->what, loom_status_name(st),
                     st == LOOM_OK ? "no error" : loom_last_error(), loom_status_name(c->expect));
        if (c->message != NULL && strstr(loom_last_error(), c->message) == NULL)
            fail_msg("%s (%s): message '%s' does not say '%s'", c->op, c->what, loom_last_error(), c->message);
    } else {
        if (st != LOOM_OK)
            fail_msg("%s (%s): %s: %s", c->op, c->what, loom_status_name(st), loom_last_error());
        int shapes_known = 1;
        for (int32_t k = 0; k < n_out; k++) {
            if (c->out[k].dtype == LOOM_DTYPE_INVALID)
                shapes_known = 0;           /* a data-dependent output: any shape */
            else
                check_output(c, k, out[k]);
            loom_tensor_free(out[k]);
            out[k] = NULL;
        }
        /* again into outputs the caller made, without data where empty */
        if (shapes_known) {
            for (int32_t k = 0; k < n_out; k++)
                out[k] = oc_make(&c->out[k]);
            st = loom_run(c->op, (const loom_tensor *const *)in, n_in, a, out, n_out, &opt);
            if (st != LOOM_OK)
                fail_msg("%s (%s), into caller outputs: %s: %s", c->op, c->what, loom_status_name(st),
                         loom_last_error());
            for (int32_t k = 0; k < n_out; k++)
                if (c->zeros & (1u << k))
                    check_zeros(c, k, out[k]);
        }
    }
    for (int32_t k = 0; k < n_out; k++)
        loom_tensor_free(out[k]);
    for (int32_t i = 0; i < n_in; i++)
        loom_tensor_free(in[i]);
    loom_attrs_free(a);
}


const char *const *oc_covered_elsewhere;

static int elsewhere(const char *name)
{
    for (const char *const *p = oc_covered_elsewhere; p != NULL && *p != NULL; p++)
        if (strncmp(name, *p, strlen(*p)) == 0)
            return 1;
    return 0;
}

void oc_check_coverage(const char *prefix, const oc_case *cases, size_t n)
{
    char missing[4096] = "";
    size_t used = 0, n_missing = 0, plen = strlen(prefix), n_ops = 0;
    for (int64_t i = 0; i < loom_op_count(); i++) {
        const char *name = loom_op_schema_at(i)->name;
        if (strncmp(name, prefix, plen) != 0)
            continue;
        n_ops++;
        int found = 0;
        for (size_t k = 0; k < n && !found; k++)
            found = strcmp(cases[k].op, name) == 0;
        if (!found && elsewhere(name))
            continue;
        if (!found && used < sizeof missing) {
            used += (size_t)snprintf(missing + used, sizeof missing - used, " %s", name);
            n_missing++;
        }
    }
    if (n_missing > 0)
        fail_msg("%zu op(s) of '%s' have no case in the table:%s", n_missing, prefix, missing);
    if (n_ops == 0)
        fail_msg("no op starts with '%s': is the pack loaded?", prefix);
}

loom_object *oc_objects[16];

static struct {
    const char *prefix;
    const oc_case *cases;
    size_t n;
} group;

static void coverage_test(void **state)
{
    (void)state;
    oc_check_coverage(group.prefix, group.cases, group.n);
}

static void case_test(void **state)
{
    oc_run(*state, oc_objects, sizeof oc_objects / sizeof oc_objects[0]);
}

int oc_run_group(const char *name, const char *prefix, const oc_case *cases, size_t n,
                 int (*setup)(void **), int (*teardown)(void **))
{
    struct CMUnitTest *tests = calloc(n + 1, sizeof *tests);
    char *names = calloc(n, 160);
    if (tests == NULL || names == NULL)
        return 1;
    group.prefix = prefix;
    group.cases = cases;
    group.n = n;
    size_t t = 0;
    if (prefix != NULL) {
        tests[t].name = "every_op_has_a_case";
        tests[t++].test_func = coverage_test;
    }
    for (size_t i = 0; i < n; i++, t++) {
        snprintf(names + i * 160, 160, "%s (%s)", cases[i].op, cases[i].what);
        tests[t].name = names + i * 160;
        tests[t].test_func = case_test;
        tests[t].initial_state = (void *)(uintptr_t)&cases[i];
    }
    int rc = _cmocka_run_group_tests(name, tests, t, setup, teardown);
    free(names);
    free(tests);
    return rc;
}

oc_case *oc_attr_cases(const oc_attr_family *families, size_t n_families, const oc_case *extra, size_t n_extra,
                       size_t *n_out)
{
    size_t n = n_extra, k = 0;
    for (size_t f = 0; f < n_families; f++)
        for (size_t v = 0; v < 8 && families[f].bad[v] != NULL; v++)
            n++;
    oc_case *all = calloc(n, sizeof *all);
    assert_non_null(all);
    for (size_t f = 0; f < n_families; f++) {
        const oc_attr_family *fam = &families[f];
        for (size_t v = 0; v < 8 && fam->bad[v] != NULL; v++) {
            oc_case *c = &all[k++];
            char *attrs = malloc(512), *what = malloc(160), *msg = malloc(160);
            assert_true(attrs != NULL && what != NULL && msg != NULL);
            snprintf(attrs, 512, "%s%s%s=%s", fam->attrs != NULL ? fam->attrs : "", fam->attrs != NULL ? ";" : "",
                     fam->attr, fam->bad[v]);
            snprintf(what, 160, "%s=%s", fam->attr, fam->bad[v]);
            if (fam->message != NULL)
                snprintf(msg, 160, "%s", fam->message);
            else
                snprintf(msg, 160, "'%s'", fam->attr);
            c->op = fam->op;
            c->what = what;
            memcpy(c->in, fam->in, sizeof c->in);
            c->attrs = attrs;
            c->message = msg;
            c->expect = fam->status != LOOM_OK ? fam->status : LOOM_EINVAL;
            c->object = fam->object;
        }
    }
    for (size_t i = 0; i < n_extra; i++)
        all[k++] = extra[i];
    *n_out = n;
    return all;
}

void oc_free_cases(oc_case *cases, size_t n, size_t n_extra)
{
    for (size_t i = 0; i + n_extra < n; i++) {
        free((void *)cases[i].attrs);
        free((void *)cases[i].what);
        free((void *)cases[i].message);
    }
    free(cases);
}
