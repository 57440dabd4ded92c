/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cpu_pack.c - the entry of core.so: defines the core ops and registers
** their cpu kernels, the oneDNN matmul when built with oneDNN, and the
** core.linear object class.
*/
#include "kernels.h"
#include "cpu.h"
#include "dtype_traits.h"
#include "gemm.h"

const loom_object_class core_linear_class = {
    .struct_size = sizeof(loom_object_class),
    .name = "core.linear",
    .doc = "torch.nn.Linear from a safetensors file with 'weight' [out, in] and optional 'bias' [out]",
    .n_attrs = 0, .attrs = NULL,
    .create = core_linear_create,
    .destroy = core_linear_destroy,
};
static const loom_object_class *const core_classes[] = { &core_linear_class };

static const loom_kernel_desc core_cpu_kernels[] = {
    PK_KERNEL_CPU(core_add_schema, "cpu:generic-strided", 0, core_add_cpu,
                  .prepare = core_add_prepare, .release = core_add_release, .flags = LOOM_KERNEL_STRIDED),
    PK_KERNEL_CPU(core_cast_schema, "cpu:generic-strided", 0, core_cast_cpu, .flags = LOOM_KERNEL_STRIDED),
#ifdef LOOM_CORE_HAVE_ONEDNN
    PK_KERNEL(core_matmul_schema, "onednn", LOOM_DEVICE_CPU, "onednn:matmul", LOOM_DTYPE_BIT(LOOM_DTYPE_F32),
              core_matmul_onednn, .supports = core_matmul_onednn_supports,
              .prepare = core_matmul_onednn_prepare, .release = core_matmul_onednn_release),
#endif
};

/* matmul and linear: the implementation name says which micro-kernel
** LOOM_CPU_MAX_ISA left, so they are built here, after the CPU features
** are known (the core copies a descriptor when it registers it). */
static loom_status core_register_gemm_kernels(const loom_host_api *host, loom_registrar *reg)
{
    const char *impl = pk_gemm_current_isa() == PK_GEMM_ISA_AVX512 ? "cpu:blocked-avx512"
                     : core_cpu_isa == CORE_ISA_AVX2 ? "cpu:blocked-avx2-fma" : "cpu:blocked-scalar";
    const loom_kernel_desc ks[] = {
        PK_KERNEL_CPU(core_matmul_schema, impl, PK_F32_F64, core_matmul_cpu, .flags = LOOM_KERNEL_STRIDED),
        PK_KERNEL_CPU(core_linear_schema, impl, LOOM_DTYPE_BIT(LOOM_DTYPE_F32), core_linear_cpu),
    };
    return pk_register_kernels(host, reg, ks, PK_COUNT(ks));
}

static const loom_op_schema *const core_cpu_ops[] = {
    &core_matmul_schema, &core_add_schema, &core_cast_schema, &core_linear_schema,
};

static const pk_module core_cpu_module = {
    .name = "core", .ops = core_cpu_ops, .n_ops = PK_COUNT(core_cpu_ops),
    .classes = core_classes, .n_classes = PK_COUNT(core_classes),
    .kernels = core_cpu_kernels, .n_kernels = PK_COUNT(core_cpu_kernels),
    .register_more = core_register_gemm_kernels,
};

static loom_status core_setup(const loom_host_api *host, loom_registrar *reg)
{
    (void)host;
    (void)reg;
    core_dtypes_init();
    core_cpu_isa_init();
#ifdef LOOM_CORE_HAVE_ONEDNN
    core_onednn_init();
#endif
    return LOOM_OK;
}

static void core_fini(void)
{
#ifdef LOOM_CORE_HAVE_ONEDNN
    core_onednn_fini();
#endif
}

PK_PACK_DEFINE("core", "0.1.0", "core ops: matmul, add, cast, linear (cpu, onednn)", core_setup, core_fini,
               &core_cpu_module)
