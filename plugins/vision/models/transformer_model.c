/* SPDX-License-Identifier: BSD-3-Clause */
/*
** transformer_model.c - the create and the run the transformer classes
** share (transformer_model.h).
*/
#include <stdlib.h>

#include "page_release.h"
#include "transformer_model.h"
#include "layers/attention.h"

loom_status transformer_create(const loom_object_args *args, void **state_out, const transformer_loader *f)
{
    *state_out = NULL;
    const char *cls = args->class_name;
    if (args->weights == NULL)
        return pk_host->fail(LOOM_EINVAL, "%s needs a weights file (--weights model.safetensors) holding "
                             "torchvision's state_dict", cls);
    transformer_base *m = calloc(1, f->size);
    if (m == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", cls);
    pthread_mutex_init(&m->lock, NULL);
    m->cls = cls;
    sd_loader L = { 0 };
    loom_status st = f->arch(args, m);
    if (st == LOOM_OK && (st = sd_init(&L, cls, args->weights)) == LOOM_OK) {
        st = f->load(&L, m);
        m->num_params = L.num_params;
        sd_free(&L);
    }
    if (st == LOOM_OK)
        st = f->find_ops(m);
    /* a weight entry, when named: the file must fit it */
    if (st == LOOM_OK)
        st = sd_weight_entry(args, m->classes, m->num_params, &m->entry);
    if (st != LOOM_OK) {
        f->destroy(m);
        return st;
    }
    *state_out = m;
    return LOOM_OK;
}

void transformer_base_fini(transformer_base *b)
{
    pthread_mutex_destroy(&b->lock);
}

loom_status transformer_run(loom_call *call, loom_status (*check_sizes)(const void *model, const loom_tensor *x),
                            loom_status (*plan)(void *model, const loom_tensor *x),
                            loom_status (*forward)(loom_call *call, void *model, const loom_tensor *x,
                                                   loom_tensor *logits))
{
    transformer_base *m = call->object;
    const loom_tensor *x = call->inputs[0];
    char b1[160];
    if (loom_tensor_dtype_of(x) != LOOM_DTYPE_F32 || x->shape[1] != 3 || !loom_is_contiguous(x))
        return pk_host->fail(LOOM_EINVAL, "'input' %s must be contiguous f32 [N, 3, H, W] (RGB)",
                             vision_describe(x, b1, sizeof b1));
    loom_status st = check_sizes(m, x);
    if (st != LOOM_OK)
        return st;
    int64_t shape[2] = { x->shape[0], m->classes };
    loom_tensor *out;
    st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 2, shape, &out);
    if (st != LOOM_OK || x->shape[0] == 0)
        return st;
    pthread_mutex_lock(&m->lock);
    st = plan(m, x);
    if (st == LOOM_OK)
        st = forward(call, m, x, out);
    pthread_mutex_unlock(&m->lock);
    return st;
}

void transformer_pack_block(void *dst, const loom_tensor *const w[4], int64_t d, int64_t mlp)
{
    vit_block_pack(dst, loom_data(w[0]), loom_data(w[1]), loom_data(w[2]), loom_data(w[3]), d, mlp);
    for (int k = 0; k < 4; k++)
        model_release_pages(loom_data(w[k]), (size_t)loom_numel(w[k]) * sizeof(float));
}
