/* SPDX-License-Identifier: BSD-3-Clause */
/*
** register.c - see register.h.
*/
#include "register.h"

loom_status pk_define_ops(const loom_host_api *host, loom_registrar *reg, const loom_op_schema *const *ops,
                          size_t n)
{
    loom_status st = LOOM_OK;
    for (size_t i = 0; st == LOOM_OK && i < n; i++)
        st = host->define_op(reg, ops[i]);
    return st;
}

loom_status pk_register_kernels(const loom_host_api *host, loom_registrar *reg, const loom_kernel_desc *kernels,
                                size_t n)
{
    loom_status st = LOOM_OK;
    for (size_t i = 0; st == LOOM_OK && i < n; i++)
        st = host->register_kernel(reg, &kernels[i]);
    return st;
}

loom_status pk_register_kernel_ptrs(const loom_host_api *host, loom_registrar *reg,
                                    const loom_kernel_desc *const *kernels, size_t n)
{
    loom_status st = LOOM_OK;
    for (size_t i = 0; st == LOOM_OK && i < n; i++)
        st = host->register_kernel(reg, kernels[i]);
    return st;
}
