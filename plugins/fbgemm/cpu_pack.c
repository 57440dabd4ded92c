/*
** cpu_pack.c - the entry of fbgemm.so: defines the fbgemm ops, registers
** the fbgemm.tbe object class and the cpu kernels.
*/
#include "fbgemm_pack.h"
#include "cpu.h"

const loom_host_api *fbgemm_host;

static loom_status fbgemm_cpu_init(const loom_host_api *host, loom_registrar *reg)
{
    fbgemm_host = host;
    pk_cpu_init(host);
    loom_status st = fbgemm_define_ops(host, reg);
    for (size_t i = 0; st == LOOM_OK && i < fbgemm_tbe_n_classes; i++)
        st = host->register_object_class(reg, fbgemm_tbe_classes[i]);
    if (st == LOOM_OK)
        st = fbgemm_tbe_register_cpu(host, reg);
    if (st == LOOM_OK)
        st = fbgemm_jagged_register_cpu(host, reg);
    return st;
}

LOOM_PLUGIN_DEFINE("fbgemm", "0.1.0",
                   "fbgemm_gpu: table-batched embeddings (FP32..INT2, FP8), quantisers, row cache, jagged ops (cpu)",
                   fbgemm_cpu_init, NULL)
