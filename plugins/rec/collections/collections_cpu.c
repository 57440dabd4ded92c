/* SPDX-License-Identifier: BSD-3-Clause */
/*
** collections_cpu.c - the collections module of rec.so: its two object
** classes and the kernels of their methods (collections.h).
*/
#include "collections.h"
#include "../kjt/kjt.h"

static const loom_object_class *const collections_classes[] = { &rec_ebc_class, &rec_ec_class,
                                                                &rec_fused_ebc_class };

static const loom_kernel_desc rec_collections_cpu_kernels[] = {
    PK_KERNEL_CPU(rec_ebc_forward_schema, "cpu:fbgemm.tbe", REC_ID_MASK | REC_WEIGHT_MASK, rec_ebc_forward),
    PK_KERNEL_CPU(rec_ec_forward_schema, "cpu:fbgemm.tbe", REC_ID_MASK | REC_WEIGHT_MASK, rec_ec_forward),
    PK_KERNEL_CPU(rec_fused_ebc_forward_schema, "cpu:fbgemm.tbe", REC_ID_MASK | REC_WEIGHT_MASK, rec_ebc_forward),
    PK_KERNEL_CPU(rec_fused_ebc_backward_schema, "cpu:fbgemm.tbe_backward", REC_ID_MASK | REC_WEIGHT_MASK,
                  rec_fused_ebc_backward),
    PK_KERNEL_CPU(rec_fused_ebc_save_schema, "cpu", 0, rec_fused_ebc_save),
};

const pk_module rec_collections_cpu = {
    .name = "collections", .ops = rec_collections_ops, .n_ops = PK_COUNT(rec_collections_ops),
    .classes = collections_classes, .n_classes = PK_COUNT(collections_classes),
    .kernels = rec_collections_cpu_kernels, .n_kernels = PK_COUNT(rec_collections_cpu_kernels),
};
