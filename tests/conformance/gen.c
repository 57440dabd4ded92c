/* SPDX-License-Identifier: BSD-3-Clause */
/*
** gen.c - the helpers of the case generators (see conformance.h).
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conformance.h"
#include "rng.h"

void cf_die(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    printf("Bail out! ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    exit(1);
}

void cf_what(cf_case *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->what, sizeof c->what, fmt, ap);
    va_end(ap);
}

double cf_draw(const cf_case *c, uint64_t stream, uint64_t i)
{
    return pk_rng_uniform(c->seed + stream, i);
}

static loom_tensor *own(cf_case *c, loom_tensor *t)
{
    if (c->n_owned == CF_MAX_OWNED)
        cf_die("%s: a case owns more than %d tensors", c->op, CF_MAX_OWNED);
    c->owned[c->n_owned++] = t;
    return t;
}

loom_tensor *cf_zeros(cf_case *c, loom_dtype dt, int32_t ndim, const int64_t *shape)
{
    loom_tensor *t = NULL;
    if (loom_tensor_new(&t, dt, ndim, shape, NULL) != LOOM_OK)
        cf_die("%s: tensor_new: %s", c->op, loom_last_error());
    return own(c, t);
}

loom_tensor *cf_cast(cf_case *c, const loom_tensor *t, loom_dtype dt)
{
    loom_attrs *a = NULL;
    loom_tensor *out = NULL;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.backend = "cpu";
    if (loom_attrs_new(&a) != LOOM_OK || loom_attrs_set_string(a, "dtype", loom_dtype_name(dt)) != LOOM_OK
        || loom_run("core.cast", &t, 1, a, &out, 1, &opt) != LOOM_OK)
        cf_die("%s: core.cast to %s: %s", c->op, loom_dtype_name(dt), loom_last_error());
    loom_attrs_free(a);
    return own(c, out);
}

loom_tensor *cf_values(cf_case *c, loom_dtype dt, int32_t ndim, const int64_t *shape, const double *v)
{
    loom_tensor *t = cf_zeros(c, LOOM_DTYPE_F64, ndim, shape);
    if (loom_numel(t) > 0)
        memcpy(loom_data(t), v, (size_t)loom_numel(t) * sizeof(double));
    return dt == LOOM_DTYPE_F64 ? t : cf_cast(c, t, dt);
}

loom_tensor *cf_uniform(cf_case *c, loom_dtype dt, int32_t ndim, const int64_t *shape, uint64_t stream,
                        double lo, double hi)
{
    loom_tensor *t = cf_zeros(c, LOOM_DTYPE_F64, ndim, shape);
    double *p = loom_data(t);
    for (int64_t i = 0; i < loom_numel(t); i++)
        p[i] = lo + (hi - lo) * cf_draw(c, stream, (uint64_t)i);
    return dt == LOOM_DTYPE_F64 ? t : cf_cast(c, t, dt);
}

loom_tensor *cf_index(cf_case *c, loom_dtype dt, int32_t ndim, const int64_t *shape, const int64_t *v)
{
    if (dt != LOOM_DTYPE_I32 && dt != LOOM_DTYPE_I64)
        cf_die("%s: cf_index of %s", c->op, loom_dtype_name(dt));
    loom_tensor *t = cf_zeros(c, dt, ndim, shape);
    for (int64_t i = 0; i < loom_numel(t); i++) {
        if (dt == LOOM_DTYPE_I64)
            ((int64_t *)loom_data(t))[i] = v[i];
        else
            ((int32_t *)loom_data(t))[i] = (int32_t)v[i];
    }
    return t;
}

/* "name=value;name=value" into a, each parsed as owner (op or class) declares it. */
static void parse_into(loom_attrs *a, const char *owner, const char *text)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *save = NULL, *kv = strtok_r(buf, ";", &save); kv != NULL; kv = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(kv, '=');
        if (eq == NULL)
            cf_die("%s: attribute '%s' has no value", owner, kv);
        *eq = '\0';
        if (loom_attrs_parse(a, owner, kv, eq + 1) != LOOM_OK)
            cf_die("%s: attribute %s=%s: %s", owner, kv, eq + 1, loom_last_error());
    }
}

void cf_attrs(cf_case *c, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (c->attrs == NULL && loom_attrs_new(&c->attrs) != LOOM_OK)
        cf_die("%s: attrs_new: %s", c->op, loom_last_error());
    parse_into(c->attrs, c->op, text);
}

void cf_cpu_run(cf_case *c, const char *op, const loom_tensor *const *in, int32_t n_in, const char *attrs,
                loom_tensor **out, int32_t n_out)
{
    loom_attrs *a = NULL;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.backend = "cpu";
    if (loom_attrs_new(&a) != LOOM_OK)
        cf_die("%s: attrs_new: %s", c->op, loom_last_error());
    if (attrs != NULL)
        parse_into(a, op, attrs);
    for (int32_t i = 0; i < n_out; i++)
        out[i] = NULL;
    if (loom_run(op, in, n_in, a, out, n_out, &opt) != LOOM_OK)
        cf_die("%s: preparing inputs with %s on the cpu: %s", c->op, op, loom_last_error());
    loom_attrs_free(a);
    for (int32_t i = 0; i < n_out; i++)
        own(c, out[i]);
}

void cf_tol_all(cf_case *c, cf_cmp cmp, double rtol, double atol)
{
    for (int i = 0; i < CF_MAX_OUT; i++)
        c->tol[i] = (cf_tol){ cmp, rtol, atol };
}

loom_object *cf_object(cf_case *c, const char *cls, const char *attrs, const char *const *names,
                       const loom_tensor *const *tensors, int64_t n)
{
    const char *tmp = getenv("TMPDIR");
    static unsigned serial;
    snprintf(c->file, sizeof c->file, "%s/loom-conformance-%d-%u.safetensors", tmp != NULL && *tmp ? tmp : "/tmp",
             (int)getpid(), serial++);
    if (loom_safetensors_write(c->file, names, tensors, n) != LOOM_OK)
        cf_die("%s: writing %s: %s", c->op, c->file, loom_last_error());
    loom_attrs *a = NULL;
    if (loom_attrs_new(&a) != LOOM_OK)
        cf_die("%s: attrs_new: %s", c->op, loom_last_error());
    if (attrs != NULL)
        parse_into(a, cls, attrs);
    if (loom_object_create(&c->object, cls, a, c->file) != LOOM_OK)
        cf_die("%s: creating a %s: %s", c->op, cls, loom_last_error());
    loom_attrs_free(a);
    return c->object;
}

void cf_case_free(cf_case *c)
{
    for (int i = 0; i < c->n_owned; i++)
        loom_tensor_free(c->owned[i]);
    loom_attrs_free(c->attrs);
    loom_object_free(c->object);
    if (c->file[0] != '\0')
        unlink(c->file);
    memset(c, 0, sizeof *c);
}
