/*
** jagged_register_cpu.c - registers the cpu kernels of the jagged ops.
*/
#include <string.h>

#include "jagged_cpu.h"
#include "jagged_gemm.h"
#include "register.h"

#define CPU_KERNEL(var, sch, im, mask, fn)                                                          \
    static const loom_kernel_desc var = {                                                           \
        .struct_size = sizeof(loom_kernel_desc), .schema = &sch, .backend = "cpu",                  \
        .device_type = LOOM_DEVICE_CPU, .impl = im, .dtypes = mask, .run = fn,                      \
    }

CPU_KERNEL(to_padded, jg_jagged_to_padded_dense_schema, "cpu:row-copy", JG_COPYABLE | JG_INDEX, jg_to_padded_cpu);
CPU_KERNEL(to_padded_bw, jg_jagged_to_padded_dense_backward_schema, "cpu:row-copy", JG_COPYABLE | JG_INDEX,
           jg_to_padded_backward_cpu);
CPU_KERNEL(to_jagged, jg_dense_to_jagged_schema, "cpu:row-copy", JG_COPYABLE | JG_INDEX, jg_to_jagged_cpu);
CPU_KERNEL(index_select, jg_index_select_dim0_schema, "cpu:row-copy", 0, jg_index_select_cpu);
CPU_KERNEL(add, jg_elementwise_add_schema, "cpu:rows", JG_FLOATS | JG_INDEX, jg_add_cpu);
CPU_KERNEL(add_jagged, jg_elementwise_add_jagged_output_schema, "cpu:rows", JG_FLOATS | JG_INDEX,
           jg_add_jagged_output_cpu);
CPU_KERNEL(mul, jg_elementwise_mul_schema, "cpu:rows", JG_FLOATS | JG_INDEX, jg_mul_cpu);
CPU_KERNEL(mul_bw, jg_elementwise_mul_backward_schema, "cpu:rows", JG_FLOATS | JG_INDEX, jg_mul_backward_cpu);

/* bmm kernels: the implementation name says which GEMM micro-kernel cpuid left */
#define BMM_KERNEL(var, sch, fn)                                                                    \
    static const loom_kernel_desc var = {                                                                 \
        .struct_size = sizeof(loom_kernel_desc), .schema = &sch, .backend = "cpu",                  \
        .device_type = LOOM_DEVICE_CPU, .dtypes = JG_FLOATS | JG_INDEX, .run = fn,                  \
    }
BMM_KERNEL(dense_bmm, jg_dense_bmm_schema, jg_dense_bmm_cpu);
BMM_KERNEL(jagged_bmm, jg_jagged_bmm_schema, jg_jagged_bmm_cpu);
BMM_KERNEL(permute102, jg_permute102_baddbmm_schema, jg_permute102_cpu);


loom_status fbgemm_jagged_register_cpu(const loom_host_api *host, loom_registrar *reg)
{
    /* the common GEMM's micro-kernel, from the core's CPU features */
    const char *isa = jg_gemm_isa();
    const char *impl = strcmp(isa, "avx512") == 0     ? "cpu:gemm-avx512"
                       : strcmp(isa, "avx2-fma") == 0 ? "cpu:gemm-avx2-fma"
                                                      : "cpu:gemm-scalar";
    /* the GEMM kernels' impl names on copies: the core copies what it registers */
    loom_kernel_desc dense = dense_bmm, jagged = jagged_bmm, p102 = permute102;
    dense.impl = jagged.impl = p102.impl = impl;
    const loom_kernel_desc *const cpu_kernels[] = {
        &to_padded, &to_padded_bw, &to_jagged, &index_select, &add, &add_jagged, &mul, &mul_bw,
        &dense, &jagged, &p102,
    };
    return pk_register_kernel_ptrs(host, reg, cpu_kernels, PK_COUNT(cpu_kernels));
}
