/* SPDX-License-Identifier: BSD-3-Clause */
/*
** dlrm_save.c - rec.dlrm_save (dlrm.h): the model as DLRM's state_dict,
** the keys and order of DLRM(...).state_dict() (the tables, the dense arch,
** the over arch), one safetensors file that rec.dlrm creates from. The
** tables come from the collection through
** rec.fused_embedding_bag_collection_weight; the optimizers' state is not
** part of a module's state_dict and is not written.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlrm.h"
#include "st_write.h"

static const char *const what = "rec.dlrm_save";

static loom_status table_weight(loom_call *call, const rec_dlrm *m, const char *table, loom_tensor **out)
{
    const loom_named_attr attr = { "table", { .type = LOOM_ATTR_STRING, .is_set = 1, .count = (int64_t)strlen(table),
                                              .u.s = table } };
    *out = NULL;
    loom_op_call oc = { .struct_size = sizeof oc, .op = m->ebc_weight, .n_outputs = 1, .outputs = out, .n_attrs = 1,
                        .attrs = &attr, .object = m->ebc };
    return pk_host->op_call(call->ctx, &oc);
}

static pk_st_entry entry(const char *name, const float *data, int64_t rows, int64_t cols)
{
    pk_st_entry e = { .name = name, .dtype = LOOM_DTYPE_F32, .ndim = cols < 0 ? 1 : 2, .data = data };
    e.shape[0] = rows;
    e.shape[1] = cols;
    return e;
}

loom_status rec_dlrm_save(loom_call *call)
{
    rec_dlrm *m = call->object;
    const int64_t n = m->n_tables + 2 * m->n_layers;
    loom_tensor **tables = calloc((size_t)(m->n_tables > 0 ? m->n_tables : 1), sizeof *tables);
    pk_st_entry *en = calloc((size_t)n, sizeof *en);
    char (*names)[256] = calloc((size_t)n, sizeof *names);
    loom_status st = tables && en && names ? LOOM_OK : pk_host->fail(LOOM_ENOMEM, "%s: out of memory", what);
    pthread_mutex_lock(&m->lock);
    int64_t k = 0;
    for (int64_t t = 0; t < m->n_tables && st == LOOM_OK; t++, k++) {
        snprintf(names[k], sizeof names[k], "sparse_arch.embedding_bag_collection.embedding_bags.%s.weight",
                 m->table_names[t]);
        if ((st = table_weight(call, m, m->table_names[t], &tables[t])) == LOOM_OK) {
            en[k] = (pk_st_entry){ .name = names[k], .dtype = loom_tensor_dtype_of(tables[t]), .ndim = 2,
                                   .data = loom_data(tables[t]) };
            en[k].shape[0] = tables[t]->shape[0];
            en[k].shape[1] = tables[t]->shape[1];
        }
    }
    for (int64_t i = 0; i < m->n_layers && st == LOOM_OK; i++) {
        const rec_dlrm_layer *l = &m->layers[i];
        char prefix[96];
        if (i < m->n_dense)
            snprintf(prefix, sizeof prefix, "dense_arch.model._mlp.%lld._linear.", (long long)i);
        else if (i < m->n_layers - 1)
            snprintf(prefix, sizeof prefix, "over_arch.model.0._mlp.%lld._linear.", (long long)(i - m->n_dense));
        else
            snprintf(prefix, sizeof prefix, "over_arch.model.1.");
        snprintf(names[k], sizeof names[k], "%sweight", prefix);
        en[k] = entry(names[k], l->w, l->out, l->in);
        k++;
        snprintf(names[k], sizeof names[k], "%sbias", prefix);
        en[k] = entry(names[k], l->b, l->out, -1);
        k++;
    }
    if (st == LOOM_OK)
        st = pk_safetensors_write(pk_host, call->attrs[0].u.s, en, k, what);
    pthread_mutex_unlock(&m->lock);
    for (int64_t t = 0; tables && t < m->n_tables; t++)
        if (tables[t])
            pk_host->tensor_free(tables[t]);
    free(tables);
    free(en);
    free(names);
    return st;
}
