/* SPDX-License-Identifier: BSD-3-Clause */
/*
** jagged_cpu_module.c - the jagged module of fbgemm.so: its ops (JG_OPS)
** and its cpu kernels. The bmm kernels' implementation name says which
** micro-kernel of the common GEMM the core's CPU features left, so they
** are registered from copies made at init (the core copies a descriptor
** when it registers it).
*/
#include "gemm.h"
#include "jagged_cpu.h"
#include "pack.h"


static const loom_kernel_desc jagged_cpu_kernels[] = {
    PK_KERNEL_CPU(jg_jagged_to_padded_dense_schema, "cpu:row-copy", JG_COPYABLE, jg_to_padded_cpu),
    PK_KERNEL_CPU(jg_jagged_to_padded_dense_backward_schema, "cpu:row-copy", JG_COPYABLE,
                  jg_to_padded_backward_cpu),
    PK_KERNEL_CPU(jg_dense_to_jagged_schema, "cpu:row-copy", JG_COPYABLE, jg_to_jagged_cpu),
    PK_KERNEL_CPU(jg_index_select_dim0_schema, "cpu:row-copy", 0, jg_index_select_cpu),
    PK_KERNEL_CPU(jg_elementwise_add_schema, "cpu:rows", PK_FLOAT_MASK | JG_INDEX, jg_add_cpu),
    PK_KERNEL_CPU(jg_elementwise_add_jagged_output_schema, "cpu:rows", PK_FLOAT_MASK | JG_INDEX,
                  jg_add_jagged_output_cpu),
    PK_KERNEL_CPU(jg_elementwise_mul_schema, "cpu:rows", PK_FLOAT_MASK | JG_INDEX, jg_mul_cpu),
    PK_KERNEL_CPU(jg_elementwise_mul_backward_schema, "cpu:rows", PK_FLOAT_MASK | JG_INDEX, jg_mul_backward_cpu),
};

static loom_status jagged_register_gemm_kernels(const loom_host_api *host, loom_registrar *reg)
{
    const pk_gemm_isa isa = pk_gemm_current_isa();
    const char *impl = isa == PK_GEMM_ISA_AVX512 ? "cpu:gemm-avx512"
                     : isa == PK_GEMM_ISA_AVX2   ? "cpu:gemm-avx2-fma"
                                                 : "cpu:gemm-scalar";
    const loom_kernel_desc ks[] = {
        PK_KERNEL_CPU(jg_dense_bmm_schema, impl, PK_FLOAT_MASK | JG_INDEX, jg_dense_bmm_cpu),
        PK_KERNEL_CPU(jg_jagged_bmm_schema, impl, PK_FLOAT_MASK | JG_INDEX, jg_jagged_bmm_cpu),
        PK_KERNEL_CPU(jg_permute102_baddbmm_schema, impl, PK_FLOAT_MASK | JG_INDEX, jg_permute102_cpu),
    };
    return pk_register_kernels(host, reg, ks, PK_COUNT(ks));
}

const pk_module fbgemm_jagged_cpu = PK_MODULE("jagged", fbgemm_jagged_ops, jagged_cpu_kernels, jagged_register_gemm_kernels);
