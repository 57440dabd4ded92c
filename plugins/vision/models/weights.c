/* SPDX-License-Identifier: BSD-3-Clause */
/*
** weights.c - lookups in the weight entries table (weights_table.c) and the
** checks of a loaded file against an entry: the entry's number of classes
** (len(meta["categories"])) and num_params must be the file's, as loading
** torchvision's weights into the model would require.
*/
#include <stdio.h>
#include <string.h>

#include "weights.h"

const model_weights_entry *model_weights_find(const char *cls, const char *name)
{
    char names[512];
    int at = 0;
    names[0] = '\0';
    for (size_t i = 0; i < model_weights_n_entries; i++) {
        const model_weights_entry *e = &model_weights_entries[i];
        if (strcmp(e->cls, cls) != 0)
            continue;
        if (strcmp(e->name, name) == 0 || (strcmp(name, "DEFAULT") == 0 && e->is_default))
            return e;
        if (at < (int)sizeof names - 64)
            at += snprintf(names + at, sizeof names - (size_t)at, "%s%s", at ? ", " : "", e->name);
    }
    if (at == 0)
        pk_host->fail(LOOM_EINVAL, "%s has no weight entry '%s': it has no entries (leave attribute 'weights' "
                      "unset)", cls, name);
    else
        pk_host->fail(LOOM_EINVAL, "%s has no weight entry '%s': its entries are %s and DEFAULT", cls, name, names);
    return NULL;
}

const char *model_weights_doc_of(const char *cls)
{
    for (size_t i = 0; i < model_weights_n_docs; i++)
        if (strcmp(model_weights_docs[i].cls, cls) == 0)
            return model_weights_docs[i].doc;
    return NULL;
}

loom_status model_weights_check(const model_weights_entry *e, int64_t classes, int64_t num_params, int64_t min_h,
                                int64_t min_w)
{
    (void)min_h;
    (void)min_w;
    /* a classifier's classes are its fc's rows, a detector's its box predictor's (cls_score) */
    const char *head = strcmp(e->preset, "ObjectDetection") == 0 ? "classification layer" : "fc.weight";
    if (classes != e->num_classes)
        return pk_host->fail(LOOM_EINVAL, "%s: weight entry %s has %lld classes but the file's %s has %lld: "
                             "the file does not fit %s", e->cls, e->name, (long long)e->num_classes, head,
                             (long long)classes, e->name);
    if (num_params != e->num_params)
        return pk_host->fail(LOOM_EINVAL, "%s: weight entry %s has %lld parameters but the file has %lld: "
                             "the file does not fit %s", e->cls, e->name, (long long)e->num_params,
                             (long long)num_params, e->name);
    return LOOM_OK;
}
