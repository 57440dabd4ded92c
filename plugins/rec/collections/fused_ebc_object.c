/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fused_ebc_object.c - the rec.fused_embedding_bag_collection class:
** torchrec's FusedEmbeddingBagCollection
** (torchrec/modules/fused_embedding_modules.py), an EmbeddingBagCollection
** whose optimizer runs fused into the backward of fbgemm's TBE.
**
** Create is the EBC's (ebc_object.c: the same table configs, the same
** state_dict keys embedding_bags.<table>.weight, the same grouping by
** pooling and data type) with the optimizer given to every group's
** fbgemm.tbe object, as torchrec's _BatchedFusedEmbeddingLookups hands
** optimizer_kwargs to SplitTableBatchedEmbeddingBagsCodegen. The optimizer
** names are torchrec's classes (convert_optimizer_type_and_kwargs):
** torch.optim.SGD -> EXACT_SGD, RowWiseAdagrad -> EXACT_ROWWISE_ADAGRAD,
** torch.optim.Adam -> ADAM, and fbgemm's PARTIAL_ROWWISE_ADAM. The weights
** file may also hold the optimizer state under torchrec's keys
** (<table>.weight.momentum_1, .momentum_2, as fused_optimizer().state_dict()
** names them) and the step count `iter`: training resumes from it.
*/
#include <string.h>

#include "collections.h"

#define A_(name) args->attrs[PK_ATTR(rec_fused_ebc_class, name)]

static const struct {
    const char *torchrec, *fbgemm;
    int32_t momenta;
} optimizers[] = {
    { "sgd", "exact_sgd", 0 },
    { "rowwise_adagrad", "exact_rowwise_adagrad", 1 },
    { "adam", "adam", 2 },
    { "partial_rowwise_adam", "partial_rowwise_adam", 2 },
};

static loom_named_attr float_attr(const char *name, double v)
{
    return (loom_named_attr){ name, { .type = LOOM_ATTR_FLOAT, .is_set = 1, .count = 1, .u.f = v } };
}

static loom_status fused_create(const loom_object_args *args, void **state_out)
{
    const char *opt = A_(optimizer).u.s;
    size_t k = 0;
    while (k < sizeof optimizers / sizeof optimizers[0] && strcmp(optimizers[k].torchrec, opt) != 0)
        k++;
    if (k == sizeof optimizers / sizeof optimizers[0])
        return pk_host->fail(LOOM_EINVAL, "%s: optimizer '%s' is not sgd, rowwise_adagrad, adam or "
                             "partial_rowwise_adam", REC_FUSED_EBC_CLASS, opt);
    const char *wdm = A_(weight_decay_mode).u.s;
    const loom_named_attr attrs[7] = {
        { "optimizer", { .type = LOOM_ATTR_STRING, .is_set = 1, .count = (int64_t)strlen(optimizers[k].fbgemm),
                         .u.s = optimizers[k].fbgemm } },
        float_attr("learning_rate", A_(lr).u.f),
        float_attr("eps", A_(eps).u.f),
        float_attr("beta1", A_(beta1).u.f),
        float_attr("beta2", A_(beta2).u.f),
        float_attr("weight_decay", A_(weight_decay).u.f),
        { "weight_decay_mode", { .type = LOOM_ATTR_STRING, .is_set = 1, .count = (int64_t)strlen(wdm), .u.s = wdm } },
    };
    loom_status st = rec_collection_create(args, state_out, 0, attrs, 7);
    if (st == LOOM_OK) {
        rec_ebc *e = *state_out;
        e->optim_attrs = NULL;      /* create's only: they live on this stack */
        e->n_optim_attrs = 0;
        e->fused_momenta = optimizers[k].momenta;
    }
    return st;
}

PK_ATTR_TABLE(rec_fused_ebc_class, REC_FUSED_EBC_CLASS_ATTRS);

const loom_object_class rec_fused_ebc_class = {
    .struct_size = sizeof(loom_object_class),
    .name = REC_FUSED_EBC_CLASS,
    .doc = "TorchRec FusedEmbeddingBagCollection: an EmbeddingBagCollection trained with its optimizer fused "
           "into fbgemm.tbe's backward; methods rec.fused_embedding_bag_collection (forward), "
           "rec.fused_embedding_bag_collection_backward, rec.fused_embedding_bag_collection_save",
    PK_ATTRS(rec_fused_ebc_class_attrs),
    .create = fused_create,
    .destroy = rec_collection_destroy,
};
