/* SPDX-License-Identifier: BSD-3-Clause */
/*
** pack.c - see pack.h.
*/
#include "pack.h"
#include "cpu.h"

const loom_host_api *pk_host;

loom_status pk_pack_init(const loom_host_api *host, loom_registrar *reg, const pk_module *const *mods, size_t n,
                         loom_status (*setup)(const loom_host_api *host, loom_registrar *reg))
{
    pk_host = host;
    pk_cpu_init(host);
    loom_status st = setup != NULL ? setup(host, reg) : LOOM_OK;
    /* every op first, so a module's kernels may serve another module's op */
    for (size_t m = 0; st == LOOM_OK && m < n; m++)
        st = pk_define_ops(host, reg, mods[m]->ops, mods[m]->n_ops);
    for (size_t m = 0; st == LOOM_OK && m < n; m++)
        for (size_t c = 0; st == LOOM_OK && c < mods[m]->n_classes; c++)
            st = host->register_object_class(reg, mods[m]->classes[c]);
    for (size_t m = 0; st == LOOM_OK && m < n; m++) {
        st = pk_register_kernels(host, reg, mods[m]->kernels, mods[m]->n_kernels);
        if (st == LOOM_OK && mods[m]->register_more != NULL)
            st = mods[m]->register_more(host, reg);
    }
    return st;
}
