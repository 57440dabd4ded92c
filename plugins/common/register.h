/* SPDX-License-Identifier: BSD-3-Clause */
/*
** register.h - define a pack's ops and register its kernels from tables,
** shared by every pack (linked in from the pack_common static library).
**
** Contract: each function hands the entries to the host in table order and
** stops at the first one the host refuses, returning that status (the host
** has already recorded the reason through fail); LOOM_OK when all went in.
** A table of descriptors and a table of pointers to descriptors both occur
** (the pointer form lets a pack mix descriptors that live in several files
** or that it patches before registering), hence the two kernel variants.
*/
#ifndef LOOM_PACK_REGISTER_H
#define LOOM_PACK_REGISTER_H

#include <stddef.h>

#include "loom/plugin.h"

/* the number of elements of an array (not of a pointer) */
#define PK_COUNT(a) (sizeof(a) / sizeof((a)[0]))

loom_status pk_define_ops(const loom_host_api *host, loom_registrar *reg, const loom_op_schema *const *ops,
                          size_t n);
loom_status pk_register_kernels(const loom_host_api *host, loom_registrar *reg, const loom_kernel_desc *kernels,
                                size_t n);
loom_status pk_register_kernel_ptrs(const loom_host_api *host, loom_registrar *reg,
                                    const loom_kernel_desc *const *kernels, size_t n);

#endif
