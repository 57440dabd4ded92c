/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tbe_optim_state.c - the training state of an fbgemm.tbe object
** (tbe_optim.h): the optimizer attributes, the owned copies of the tables,
** the optimizer state loaded from the weights file, and the methods that
** read it out: fbgemm.tbe_save (one safetensors file with the names create
** reads back) and fbgemm.tbe_state (one tensor, a copy).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "st_write.h"
#include "tbe_internal.h"
#include "tbe_optim.h"

static const loom_dl_device cpu = { LOOM_DEVICE_CPU, 0 };
static const char *const W = FBG_TBE_CLASS;

static const char *const optim_names[] = { "none", "exact_sgd", "exact_rowwise_adagrad", "adam",
                                           "partial_rowwise_adam" };

int fbg_optim_from_name(const char *s)
{
    for (int i = 0; i < (int)(sizeof optim_names / sizeof optim_names[0]); i++)
        if (strcmp(s, optim_names[i]) == 0)
            return i;
    return -1;
}

const char *fbg_optim_name(int opt)
{
    return opt >= 0 && opt < (int)(sizeof optim_names / sizeof optim_names[0]) ? optim_names[opt] : "?";
}

int fbg_optim_state_rowwise(int opt, int k)
{
    return (opt == FBG_OPT_EXACT_ROWWISE_ADAGRAD && k == 1) || (opt == FBG_OPT_PARTIAL_ROWWISE_ADAM && k == 2);
}

int64_t fbg_optim_state_numel(int opt, int k, int64_t rows, int64_t dim)
{
    switch (opt) {
    case FBG_OPT_EXACT_ROWWISE_ADAGRAD: return k == 1 ? rows : 0;
    case FBG_OPT_ADAM:                  return rows * dim;
    case FBG_OPT_PARTIAL_ROWWISE_ADAM:  return k == 1 ? rows * dim : rows;
    default:                            return 0;
    }
}

loom_status fbg_optim_parse(const loom_attr_value *a, fbg_optim_params *prm)
{
    const char *opt = a[PK_ATTR(fbg_tbe_class, optimizer)].u.s;
    const char *wdm = a[PK_ATTR(fbg_tbe_class, weight_decay_mode)].u.s;
    memset(prm, 0, sizeof *prm);
    prm->optimizer = fbg_optim_from_name(opt);
    if (prm->optimizer < 0)
        return pk_host->fail(LOOM_EINVAL, "%s: optimizer '%s' is not none, exact_sgd, exact_rowwise_adagrad, adam "
                             "or partial_rowwise_adam", W, opt);
    prm->weight_decay_mode = strcmp(wdm, "none") == 0 ? FBG_WD_NONE : strcmp(wdm, "l2") == 0 ? FBG_WD_L2
                           : strcmp(wdm, "decouple") == 0 ? FBG_WD_DECOUPLE : -1;
    if (prm->weight_decay_mode < 0)
        return pk_host->fail(LOOM_EINVAL, "%s: weight_decay_mode '%s' is not none, l2 or decouple", W, wdm);
    prm->learning_rate = (float)a[PK_ATTR(fbg_tbe_class, learning_rate)].u.f;
    prm->eps = (float)a[PK_ATTR(fbg_tbe_class, eps)].u.f;
    prm->beta1 = (float)a[PK_ATTR(fbg_tbe_class, beta1)].u.f;
    prm->beta2 = (float)a[PK_ATTR(fbg_tbe_class, beta2)].u.f;
    prm->weight_decay = (float)a[PK_ATTR(fbg_tbe_class, weight_decay)].u.f;
    if (prm->beta1 >= 1.0f || prm->beta2 >= 1.0f)
        return pk_host->fail(LOOM_EINVAL, "%s: beta1 %g and beta2 %g must be below 1", W, (double)prm->beta1,
                             (double)prm->beta2);
    /* fbgemm's SGD has no weight decay; its row-wise Adagrad takes it only
    ** with a weight_decay_mode: a decay that would be dropped is refused */
    if (prm->weight_decay != 0.0f && (prm->optimizer == FBG_OPT_EXACT_SGD
                                      || (prm->optimizer == FBG_OPT_EXACT_ROWWISE_ADAGRAD
                                          && prm->weight_decay_mode == FBG_WD_NONE)))
        return pk_host->fail(LOOM_EINVAL, "%s: weight_decay %g has no effect with optimizer %s%s (fbgemm ignores it)",
                             W, (double)prm->weight_decay, opt,
                             prm->optimizer == FBG_OPT_EXACT_SGD ? "" : " and weight_decay_mode none");
    if (prm->weight_decay_mode != FBG_WD_NONE && prm->optimizer != FBG_OPT_EXACT_ROWWISE_ADAGRAD)
        return pk_host->fail(LOOM_EINVAL, "%s: weight_decay_mode '%s' is row-wise Adagrad's; %s decays through "
                             "weight_decay alone", W, wdm, opt);
    return LOOM_OK;
}

void fbg_tbe_train_free(fbg_tbe_train *tr)
{
    if (tr == NULL)
        return;
    for (int32_t t = 0; t < tr->n_tables; t++) {
        if (tr->rows != NULL && tr->rows[t] != NULL)
            pk_host->free(cpu, tr->rows[t]);
        if (tr->momentum1 != NULL)
            free(tr->momentum1[t]);
        if (tr->momentum2 != NULL)
            free(tr->momentum2[t]);
    }
    free(tr->rows);
    free(tr->momentum1);
    free(tr->momentum2);
    pthread_mutex_destroy(&tr->lock);
    free(tr);
}

/* The weights file's tensor `name`, or NULL when it has none (without
** touching the thread's error: a missing state is not an error). */
static const loom_tensor *find_tensor(const loom_safetensors *st, const char *name)
{
    const int64_t n = pk_host->safetensors_count(st);
    for (int64_t i = 0; i < n; i++)
        if (strcmp(pk_host->safetensors_name(st, i), name) == 0) {
            const loom_tensor *x = NULL;
            return pk_host->safetensors_get(st, name, &x) == LOOM_OK ? x : NULL;
        }
    return NULL;
}

/* momentum<k> of table t: from the file when it has it (checked), else zeros. */
static loom_status load_momentum(const loom_object_args *args, const fbg_optim_params *prm, int k, int32_t t,
                               const fbg_tbe_table *tab, float **out)
{
    const int64_t numel = fbg_optim_state_numel(prm->optimizer, k, tab->rows, tab->dim);
    *out = NULL;
    if (fbg_optim_state_numel(prm->optimizer, k, 1, tab->dim) == 0)
        return LOOM_OK;
    *out = calloc((size_t)(numel > 0 ? numel : 1), sizeof **out);
    if (*out == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: no memory for the %s state of table %d (%lld floats)", W,
                             fbg_optim_name(prm->optimizer), (int)t, (long long)numel);
    char name[48], buf[96];
    snprintf(name, sizeof name, "momentum%d.%d", k, (int)t);
    const loom_tensor *x = find_tensor(args->weights, name);
    if (x == NULL)
        return LOOM_OK;
    if (loom_tensor_dtype_of(x) != LOOM_DTYPE_F32 || loom_numel(x) != numel || !loom_is_contiguous(x))
        return pk_host->fail(LOOM_EINVAL, "%s: '%s' is %s; %s keeps a contiguous f32 state of %lld values for "
                             "table %d (%lld rows, dim %d)", W, name, fbgemm_describe(x, buf, sizeof buf),
                             fbg_optim_name(prm->optimizer), (long long)numel, (int)t, (long long)tab->rows,
                             (int)tab->dim);
    memcpy(*out, loom_data(x), (size_t)numel * sizeof **out);
    return LOOM_OK;
}

loom_status fbg_tbe_train_create(const loom_object_args *args, const fbg_optim_params *prm, int32_t n_tables,
                               fbg_tbe_table *tables, const fbg_tbe_state *s, fbg_tbe_train **out)
{
    *out = NULL;
    if (prm->optimizer == FBG_OPT_NONE)
        return LOOM_OK;
    const char *on = fbg_optim_name(prm->optimizer);
    for (int32_t t = 0; t < n_tables; t++) {
        const fbg_tbe_table *tab = &tables[t];
        if (tab->wtype != FBG_WT_FP32 && tab->wtype != FBG_WT_FP16)
            return pk_host->fail(LOOM_EINVAL, "%s: optimizer %s trains FP32 and FP16 tables; table 'table.%d' is "
                                 "%s (train in a float type, quantise afterwards)", W, on, (int)t,
                                 fbg_wtype_name((fbg_wtype)tab->wtype));
        if (tab->row_stride != fbg_row_bytes_unpadded((fbg_wtype)tab->wtype, tab->dim))
            return pk_host->fail(LOOM_EINVAL, "%s: optimizer %s keeps rows unpadded; table 'table.%d' has %lld bytes "
                                 "per row for dim %d (row_alignment %d)", W, on, (int)t, (long long)tab->row_stride,
                                 (int)tab->dim, (int)s->row_alignment);
    }
    fbg_tbe_train *tr = calloc(1, sizeof *tr);
    if (tr == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", W);
    pthread_mutex_init(&tr->lock, NULL);
    tr->prm = *prm;
    tr->n_tables = n_tables;
    tr->rows = calloc((size_t)n_tables, sizeof *tr->rows);
    tr->momentum1 = calloc((size_t)n_tables, sizeof *tr->momentum1);
    tr->momentum2 = calloc((size_t)n_tables, sizeof *tr->momentum2);
    loom_status st = tr->rows != NULL && tr->momentum1 != NULL && tr->momentum2 != NULL
                   ? LOOM_OK : pk_host->fail(LOOM_ENOMEM, "%s: out of memory", W);
    for (int32_t t = 0; st == LOOM_OK && t < n_tables; t++) {
        fbg_tbe_table *tab = &tables[t];
        const size_t bytes = (size_t)(tab->rows * tab->row_stride);
        tr->rows[t] = pk_host->alloc(cpu, bytes > 0 ? bytes : 1, 64);
        if (tr->rows[t] == NULL) {
            st = pk_host->fail(LOOM_ENOMEM, "%s: no memory for a trainable copy of table %d (%zu bytes)", W,
                               (int)t, bytes);
            break;
        }
        if (bytes > 0)
            memcpy(tr->rows[t], tab->base, bytes);
        tab->base = tr->rows[t];
        st = load_momentum(args, prm, 1, t, tab, &tr->momentum1[t]);
        if (st == LOOM_OK)
            st = load_momentum(args, prm, 2, t, tab, &tr->momentum2[t]);
    }
    const loom_tensor *it = st == LOOM_OK ? find_tensor(args->weights, "iter") : NULL;
    if (it != NULL) {
        char buf[96];
        if (loom_tensor_dtype_of(it) != LOOM_DTYPE_I64 || loom_numel(it) != 1 || *(const int64_t *)loom_data(it) < 0)
            st = pk_host->fail(LOOM_EINVAL, "%s: 'iter' is %s; the step count is one i64 >= 0", W,
                               fbgemm_describe(it, buf, sizeof buf));
        else
            tr->iter = *(const int64_t *)loom_data(it);
    }
    if (st != LOOM_OK) {
        fbg_tbe_train_free(tr);
        return st;
    }
    *out = tr;
    return LOOM_OK;
}

/* ------------------------------------------------------------ methods */

fbg_tbe_train *fbg_tbe_train_of(const loom_call *call, const char *op)
{
    const fbg_tbe_state *s = call->object;
    const fbg_tbe_cpu *c = s != NULL && s->struct_size >= sizeof(fbg_tbe_state) ? s->cpu_private : NULL;
    if (c == NULL) {
        pk_host->fail(LOOM_EINVAL, "%s: not an fbgemm.tbe object made by this pack", op);
        return NULL;
    }
    if (c->train == NULL)
        pk_host->fail(LOOM_EINVAL, "%s: the object was made with optimizer none (inference); create it with "
                      "optimizer exact_sgd, exact_rowwise_adagrad, adam or partial_rowwise_adam to train", op);
    return c->train;
}

/* The entry of table t's tensor k (0 weight, 1/2 momentum): shape and
** data; 0 when the optimizer keeps no such state. */
static int state_entry(const fbg_tbe_state *s, const fbg_tbe_train *tr, int32_t t, int k, pk_st_entry *e)
{
    const fbg_tbe_table *tab = &s->tables[t];
    const int opt = tr->prm.optimizer;
    if (k == 0) {
        *e = (pk_st_entry){ .dtype = tab->wtype == FBG_WT_FP32 ? LOOM_DTYPE_F32 : LOOM_DTYPE_F16, .ndim = 2,
                            .shape = { tab->rows, tab->dim }, .data = tab->base };
        return 1;
    }
    if (fbg_optim_state_numel(opt, k, 1, tab->dim) == 0)
        return 0;
    *e = (pk_st_entry){ .dtype = LOOM_DTYPE_F32, .ndim = fbg_optim_state_rowwise(opt, k) ? 1 : 2,
                        .shape = { tab->rows, tab->dim }, .data = k == 1 ? tr->momentum1[t] : tr->momentum2[t] };
    return 1;
}

loom_status fbg_tbe_save_cpu(loom_call *call)
{
    const char *op = "fbgemm.tbe_save";
    fbg_tbe_train *tr = fbg_tbe_train_of(call, op);
    if (tr == NULL)
        return LOOM_EINVAL;
    const fbg_tbe_state *s = call->object;
    const int32_t n = s->n_tables;
    pk_st_entry *e = calloc((size_t)(3 * n + 1), sizeof *e);
    char *names = calloc((size_t)(3 * n + 1), 32);
    if (e == NULL || names == NULL) {
        free(e);
        free(names);
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", op);
    }
    int64_t m = 0;
    pthread_mutex_lock(&tr->lock);
    for (int k = 0; k < 3; k++)
        for (int32_t t = 0; t < n; t++)
            if (state_entry(s, tr, t, k, &e[m])) {
                char *nm = names + 32 * m;
                if (k == 0)
                    snprintf(nm, 32, "table.%d", (int)t);
                else
                    snprintf(nm, 32, "momentum%d.%d", k, (int)t);
                e[m++].name = nm;
            }
    const int64_t iter = tr->iter;
    e[m++] = (pk_st_entry){ .name = "iter", .dtype = LOOM_DTYPE_I64, .ndim = 1, .shape = { 1 }, .data = &iter };
    loom_status st = pk_safetensors_write(pk_host, call->attrs[PK_ATTR(fbg_tbe_save, path)].u.s, e, m, op);
    pthread_mutex_unlock(&tr->lock);
    free(e);
    free(names);
    return st;
}

loom_status fbg_tbe_state_cpu(loom_call *call)
{
    const char *op = "fbgemm.tbe_state";
    fbg_tbe_train *tr = fbg_tbe_train_of(call, op);
    if (tr == NULL)
        return LOOM_EINVAL;
    const fbg_tbe_state *s = call->object;
    const char *name = call->attrs[PK_ATTR(fbg_tbe_state_op, name)].u.s;
    const int64_t t = call->attrs[PK_ATTR(fbg_tbe_state_op, table)].u.i;
    const int k = strcmp(name, "weight") == 0 ? 0 : strcmp(name, "momentum1") == 0 ? 1
                : strcmp(name, "momentum2") == 0 ? 2 : strcmp(name, "iter") == 0 ? 3 : -1;
    if (k < 0)
        return pk_host->fail(LOOM_EINVAL, "%s: name '%s' is not weight, momentum1, momentum2 or iter", op, name);
    if (t < 0 || t >= s->n_tables)
        return pk_host->fail(LOOM_EINVAL, "%s: table %lld is not in [0, %d)", op, (long long)t, (int)s->n_tables);
    pk_st_entry e;
    int64_t iter = 0;
    pthread_mutex_lock(&tr->lock);
    if (k == 3) {
        iter = tr->iter;
        e = (pk_st_entry){ .dtype = LOOM_DTYPE_I64, .ndim = 1, .shape = { 1 }, .data = &iter };
    } else if (!state_entry(s, tr, (int32_t)t, k, &e)) {
        pthread_mutex_unlock(&tr->lock);
        return pk_host->fail(LOOM_EINVAL, "%s: optimizer %s keeps no %s", op, fbg_optim_name(tr->prm.optimizer),
                             name);
    }
    loom_tensor *out;
    loom_status st = pk_host->alloc_output(call, 0, e.dtype, e.ndim, e.shape, &out);
    if (st == LOOM_OK && loom_numel(out) > 0)
        memcpy(loom_data(out), e.data, (size_t)loom_numel(out) * pk_host->dtype_size(e.dtype));
    pthread_mutex_unlock(&tr->lock);
    return st;
}
