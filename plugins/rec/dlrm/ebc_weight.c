/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ebc_weight.c - rec.fused_embedding_bag_collection_weight: one table of a
** rec.fused_embedding_bag_collection as it stands after training, by its
** name (the collection's state_dict entry embedding_bags.<table>.weight),
** read from its group's fbgemm.tbe object (fbgemm.tbe_state). A model that
** holds a collection (rec.dlrm's save) reads its tables through it.
*/
#include <string.h>

#include "dlrm.h"

loom_status rec_fused_ebc_weight(loom_call *call)
{
    const rec_ebc *e = call->object;
    const char *table = call->attrs[0].u.s;
    for (int64_t gi = 0; gi < e->n_groups; gi++) {
        const rec_ebc_group *g = &e->groups[gi];
        for (int64_t i = 0; i < g->n_tables; i++) {
            if (strcmp(e->table_names[g->tables[i]], table) != 0)
                continue;
            const loom_named_attr attrs[2] = {
                { "name", { .type = LOOM_ATTR_STRING, .is_set = 1, .count = 6, .u.s = "weight" } },
                { "table", { .type = LOOM_ATTR_INT, .is_set = 1, .count = 1, .u.i = i } },
            };
            loom_tensor *w = NULL;
            loom_op_call oc = { .struct_size = sizeof oc, .op = e->state_op, .n_outputs = 1, .outputs = &w,
                                .n_attrs = 2, .attrs = attrs, .object = g->tbe };
            loom_status st = pk_host->op_call(call->ctx, &oc);
            loom_tensor *out;
            if (st == LOOM_OK)
                st = pk_host->alloc_output(call, 0, loom_tensor_dtype_of(w), w->ndim, w->shape, &out);
            if (st == LOOM_OK && loom_numel(w) > 0)
                memcpy(loom_data(out), loom_data(w), (size_t)loom_numel(w) * pk_host->dtype_size(loom_tensor_dtype_of(w)));
            if (w)
                pk_host->tensor_free(w);
            return st;
        }
    }
    return pk_host->fail(LOOM_EINVAL, "%s: the collection has no table '%s'", call->schema->name, table);
}
