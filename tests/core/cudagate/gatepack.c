/* SPDX-License-Identifier: BSD-3-Clause */
/*
** gatepack.c - two packs for test_cuda_gate.c, one source:
**   GATE_CUDA   gate_cuda.so, pack "gate_cuda": links the stub
**               libcudart_loomtest.so (stub/), so the CUDA gate treats it
**               as a CUDA pack; gatecuda.version returns the stub's 4242.
**   GATE_PLAIN  gate_plain.so, pack "gate_plain": links nothing of CUDA;
**               gateplain.version returns 1.
**   GATE_USER   gate_user.so, pack "gate_user": links nothing of CUDA but
**               depends on the pack gate_cuda; gateuser.version returns 2.
** Each op has one cpu kernel writing one i32.
*/
#include <stdint.h>

#define LOOM_TARGET_ABI_MINOR 1   /* gate_user declares a dependency (ABI 1.1) */
#include "loom/plugin.h"

#if defined(GATE_CUDA)
int32_t cudart_loomtest_version(void);   /* stub/cudart_stub.c */
#define OP_NAME "gatecuda.version"
#define PACK_NAME "gate_cuda"
static int32_t version(void) { return cudart_loomtest_version(); }
#elif defined(GATE_PLAIN)
#define OP_NAME "gateplain.version"
#define PACK_NAME "gate_plain"
static int32_t version(void) { return 1; }
#elif defined(GATE_USER)
#define OP_NAME "gateuser.version"
#define PACK_NAME "gate_user"
static int32_t version(void) { return 2; }
static const char *const depends[] = { "gate_cuda", NULL };
#else
#error "define GATE_CUDA, GATE_PLAIN or GATE_USER"
#endif

static const loom_host_api *host;

static const loom_arg_def outs[] = { { .name = "output", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I32), .ndim = 1 } };
static const loom_op_schema schema = {
    .struct_size = sizeof(loom_op_schema), .name = OP_NAME, .version = 1, .doc = "the pack's version number",
    .n_outputs = 1, .outputs = outs,
};

static loom_status run(loom_call *call)
{
    int64_t one = 1;
    loom_tensor *y;
    loom_status st = host->alloc_output(call, 0, LOOM_DTYPE_I32, 1, &one, &y);
    if (st != LOOM_OK)
        return st;
    *(int32_t *)loom_data(y) = version();
    return LOOM_OK;
}

static const loom_kernel_desc kernel = {
    .struct_size = sizeof(loom_kernel_desc), .schema = &schema, .backend = "cpu", .device_type = LOOM_DEVICE_CPU,
    .impl = "cpu:version", .run = run,
};

static loom_status init(const loom_host_api *h, loom_registrar *reg)
{
    host = h;
    return h->register_kernel(reg, &kernel);
}

#if defined(GATE_USER)
LOOM_PLUGIN_DEFINE_DEPS(PACK_NAME, "1.0", "a pack for the CUDA gate tests", init, NULL, depends)
#else
LOOM_PLUGIN_DEFINE(PACK_NAME, "1.0", "a pack for the CUDA gate tests", init, NULL)
#endif
