/*
** cuda_pack.c - the entry of fbgemm-cuda.so: the same op definitions as
** fbgemm.so and the cuda kernels. The CUDA device provider comes from
** core-cuda.so; every launch is asynchronous on the call's ctx->stream.
*/
#include "fbgemm_pack.h"

const loom_host_api *fbgemm_host;

static loom_status fbgemm_cuda_init(const loom_host_api *host, loom_registrar *reg)
{
    fbgemm_host = host;
    loom_status st = fbgemm_define_ops(host, reg);
    if (st == LOOM_OK)
        st = fbgemm_tbe_register_cuda(host, reg);
    if (st == LOOM_OK)
        st = fbgemm_jagged_register_cuda(host, reg);
    return st;
}

/* core-cuda registers the CUDA device: it must be loaded first */
static const char *const fbgemm_cuda_depends[] = { "core-cuda", NULL };
LOOM_PLUGIN_DEFINE_DEPS("fbgemm-cuda", "0.1.0",
                   "fbgemm_gpu: table-batched embeddings and jagged ops (cuda)",
                   fbgemm_cuda_init, NULL, fbgemm_cuda_depends)
