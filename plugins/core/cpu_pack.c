/*
** cpu_pack.c - the entry of core.so: defines the core ops and registers
** their cpu kernels, the oneDNN matmul when built with oneDNN, and the
** core.linear object class.
*/
#include "kernels.h"
#include "cpu.h"
#include "gemm.h"
#include "register.h"

const loom_host_api *core_host;

static const loom_op_schema *const core_ops[] = {
    &core_matmul_schema, &core_add_schema, &core_cast_schema, &core_linear_schema,
};

#define F32_F64 (LOOM_DTYPE_BIT(LOOM_DTYPE_F32) | LOOM_DTYPE_BIT(LOOM_DTYPE_F64))

static const loom_kernel_desc matmul_cpu = {
    .struct_size = sizeof(loom_kernel_desc), .schema = &core_matmul_schema, .backend = "cpu",
    .device_type = LOOM_DEVICE_CPU, .dtypes = F32_F64, .run = core_matmul_cpu,
};
static const loom_kernel_desc add_cpu = {
    .struct_size = sizeof(loom_kernel_desc), .schema = &core_add_schema, .backend = "cpu",
    .device_type = LOOM_DEVICE_CPU, .impl = "cpu:generic-strided", .dtypes = 0, .run = core_add_cpu,
    .prepare = core_add_prepare, .release = core_add_release,
};
static const loom_kernel_desc cast_cpu = {
    .struct_size = sizeof(loom_kernel_desc), .schema = &core_cast_schema, .backend = "cpu",
    .device_type = LOOM_DEVICE_CPU, .impl = "cpu:generic-strided", .dtypes = 0, .run = core_cast_cpu,
};
static const loom_kernel_desc linear_cpu = {
    .struct_size = sizeof(loom_kernel_desc), .schema = &core_linear_schema, .backend = "cpu",
    .device_type = LOOM_DEVICE_CPU, .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .run = core_linear_cpu,
};
#ifdef LOOM_CORE_HAVE_ONEDNN
static const loom_kernel_desc matmul_onednn = {
    .struct_size = sizeof(loom_kernel_desc), .schema = &core_matmul_schema, .backend = "onednn",
    .device_type = LOOM_DEVICE_CPU, .impl = "onednn:matmul", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32),
    .supports = core_matmul_onednn_supports, .run = core_matmul_onednn,
};
#endif

const loom_object_class core_linear_class = {
    .struct_size = sizeof(loom_object_class),
    .name = "core.linear",
    .doc = "torch.nn.Linear from a safetensors file with 'weight' [out, in] and optional 'bias' [out]",
    .n_attrs = 0, .attrs = NULL,
    .create = core_linear_create,
    .destroy = core_linear_destroy,
};

static loom_status core_init(const loom_host_api *host, loom_registrar *reg)
{
    core_host = host;
    pk_cpu_init(host);
    core_dtypes_init();
    core_cpu_isa_init();
    /* the implementation name says which micro-kernel LOOM_CPU_MAX_ISA left:
    ** set on copies, since the core copies a descriptor when it registers it
    ** and the static ones stay as the pack's source wrote them */
    const char *gemm_impl = pk_gemm_current_isa() == PK_GEMM_ISA_AVX512 ? "cpu:blocked-avx512"
                          : core_cpu_isa == CORE_ISA_AVX2 ? "cpu:blocked-avx2-fma" : "cpu:blocked-scalar";
    loom_kernel_desc matmul_k = matmul_cpu, linear_k = linear_cpu;
    matmul_k.impl = gemm_impl;
    linear_k.impl = gemm_impl;
#ifdef LOOM_CORE_HAVE_ONEDNN
    core_onednn_pin();
#endif
    loom_status st = pk_define_ops(host, reg, core_ops, PK_COUNT(core_ops));
    if (st == LOOM_OK)
        st = host->register_object_class(reg, &core_linear_class);
    const loom_kernel_desc *kernels[] = {
        &matmul_k, &add_cpu, &cast_cpu, &linear_k,
#ifdef LOOM_CORE_HAVE_ONEDNN
        &matmul_onednn,
#endif
    };
    if (st == LOOM_OK)
        st = pk_register_kernel_ptrs(host, reg, kernels, PK_COUNT(kernels));
    return st;
}

static void core_fini(void)
{
#ifdef LOOM_CORE_HAVE_ONEDNN
    core_onednn_fini();
#endif
}

LOOM_PLUGIN_DEFINE("core", "0.1.0", "core ops: matmul, add, cast, linear (cpu, onednn)", core_init, core_fini)
