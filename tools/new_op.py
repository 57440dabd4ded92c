#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the skeleton of a new op DOMAIN.OP with the pack toolkit (plugins/common).

    tools/new_op.py DOMAIN.OP [--module MODULE] [--no-cuda] [--dry-run]

The op is the element-wise `output = alpha * input` over every float dtype,
with one float attribute `alpha`: a working op to replace with the real one.
It gets, in plugins/DOMAIN/MODULE/ (MODULE defaults to OP):

  OP.h             its attribute list (PK_ATTR_ENUM), schema and modules
  OP_schemas.c     its schema (PK_ATTR_TABLE, PK_SCHEMA), in both packs
  OP_checks.c      the argument checks every backend shares
  OP_cpu.c         the cpu kernel table and module, one function per dtype
  OP_cpu_tmpl.h    the cpu body, re-included per dtype (dtype_traits.h)
  OP_cuda.c        the cuda kernel table and module (built only with CUDA)
  OP_kernels.cu/.h the device code behind a C launcher

and tools/gen_DOMAIN_OP_goldens.py (golden data from torch), a cmocka test
tests/DOMAIN/MODULE/test_OP.c (tests/coreops/... for core) with its meson
lines, a case generator in tests/conformance/cases_DOMAIN.c (a new file,
registered in cases.c, for a new pack), and the meson lines of the module. A new pack DOMAIN also gets its
entry in the pack table of plugins/meson.build, its folder (meson.build,
cpu_pack.c, cuda_pack.c) and tests/DOMAIN/meson.build; a new module of an
existing pack its name in the table. The module is added to the entries
(PK_PACK_DEFINE) of the pack when they are written with the toolkit; what
could not be edited is listed at the end, with the next steps.

--dry-run prints every file it would write and a diff of every edit.
Python 3 standard library only. Existing files are never overwritten.
"""
import argparse
import difflib
import os
import re
import sys
from string import Template

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
NAME = re.compile(r"^[a-z][a-z0-9_]*$")

# Where a pack's op tests live when it is not tests/<pack> (tests/core holds
# the core library's own unit tests).
TEST_DIRS = {"core": "coreops"}

# ------------------------------------------------------------------ templates

OP_H = """\
/*
** ${op}.h - ${opname}: output = alpha * input, element-wise, for every
** float dtype (a skeleton: replace the formula, the arguments and the
** attributes with the op's own).
*/
#ifndef LOOM_${ID}_H
#define LOOM_${ID}_H

#include "dtype_traits.h"
#include "pack.h"

/* The attributes, A(op, name, TYPE, default, flags, doc, extra) (pack.h):
** the core checks the flags (LOOM_ATTR_FINITE here) before a kernel runs. */
#define ${ID}_ATTRS(A, op) \\
    A(op, alpha, FLOAT, LOOM_DEFAULT_FLOAT(1.0), LOOM_ATTR_FINITE, "the factor of every element", )
PK_ATTR_ENUM(${id}, ${ID}_ATTRS);

/* The dtypes of the op: its schema's and every kernel's. */
#define ${ID}_DTYPES PK_FLOAT_MASK

/* The module's op list (pack.h): its schemas' variables, from which the ops
** table both packs share is declared here and defined in ${op}_schemas.c. */
#define ${ID}_OPS(X) X(${id}_schema)
PK_OPS_DECLARE(${id}_ops, ${ID}_OPS);

/* The checks every backend shares (${op}_checks.c); on success *out is the
** output, allocated with the dtype and shape of the input. */
loom_status ${id}_check(loom_call *call, loom_tensor **out);

/* The module in each pack: ${modules_doc}. */
extern const pk_module ${id}_cpu;
${cuda_module_decl}
#endif /* LOOM_${ID}_H */
"""

OP_SCHEMAS_C = """\
/*
** ${op}_schemas.c - the definition of ${opname}, compiled into both packs so
** they define identical schemas (the core refuses a kernel whose schema
** differs from the op's definition). Argument names follow the reference
** library.
*/
#include "${op}.h"

static const loom_arg_def ${id}_inputs[] = {
    { .name = "input", .dtypes = ${ID}_DTYPES, .ndim = -1, .doc = "any shape" },
};
static const loom_arg_def ${id}_outputs[] = {
    { .name = "output", .dtypes = ${ID}_DTYPES, .ndim = -1, .doc = "alpha * input: the dtype and shape of input" },
};
PK_ATTR_TABLE(${id}, ${ID}_ATTRS);

/* For `loom bench` and LOOM_VERBOSE=3: one multiply per element, each
** element read and written once. */
static void ${id}_cost(const loom_call *call, double *flops, double *bytes)
{
    const loom_tensor *x = call->inputs[0];
    *flops = (double)loom_numel(x);
    *bytes = 2.0 * (double)loom_numel(x) * (double)pk_host->dtype_size(loom_tensor_dtype_of(x));
}

PK_SCHEMA(${id}_schema, "${opname}", 1, "output = alpha * input, element-wise",
          PK_INPUTS(${id}_inputs), PK_OUTPUTS(${id}_outputs), PK_ATTRS(${id}_attrs), .cost = ${id}_cost);

PK_OPS_DEFINE(${id}_ops, ${ID}_OPS);
"""

OP_CHECKS_C = """\
/*
** ${op}_checks.c - the argument checks of ${opname}, shared by every backend.
**
** The core has already checked what the schema declares (the dtype against
** ${ID}_DTYPES, the rank, alpha finite); what is left is what a schema
** cannot say: here, that the kernels read the input as one compact array.
*/
#include "describe.h"
#include "${op}.h"

loom_status ${id}_check(loom_call *call, loom_tensor **out)
{
    const loom_tensor *x = call->inputs[0];
    char b[160];
    if (loom_numel(x) > 0 && !loom_is_contiguous(x))     /* an empty tensor has no layout */
        return pk_host->fail(LOOM_EINVAL, "'input' %s must be contiguous (compact row-major)",
                             pk_describe(pk_host, x, b, sizeof b));
    return pk_host->alloc_output(call, 0, loom_tensor_dtype_of(x), x->ndim, x->shape, out);
}
"""

OP_CPU_C = """\
/*
** ${op}_cpu.c - the cpu kernel of ${opname}: one function per dtype of the
** dtype table (${op}_cpu_tmpl.h, included once per dtype), run in chunks of
** elements on the core's thread pool.
**
** A vectorised path would be a second kernel table row (or a register_more
** hook that picks the impl name), chosen when pk_cpu_avx2(PK_CPU_FMA)
** (cpu.h) allows it, so LOOM_CPU_MAX_ISA can test the portable one.
*/
#include "${op}.h"

/* What every chunk of one call needs. */
typedef struct ${id}_job {
    const void *x;
    void *y;
    double alpha;
} ${id}_job;

#define PK_SFX f32
#include "${op}_cpu_tmpl.h"
#define PK_SFX f64
#include "${op}_cpu_tmpl.h"
#define PK_SFX f16
#include "${op}_cpu_tmpl.h"
#define PK_SFX bf16
#include "${op}_cpu_tmpl.h"

/* Indexed by pk_float_index (dtype_traits.h): the same X-macro order. */
static const loom_range_fn ${id}_rows[] = {
#define ${ID}_ROWS_(sfx, DTYPE, S, C) ${id}_rows_##sfx,
    PK_FLOAT_DTYPES(${ID}_ROWS_)
#undef ${ID}_ROWS_
};

static loom_status ${id}_run_cpu(loom_call *call)
{
    const loom_tensor *x = call->inputs[0];
    loom_tensor *out;
    loom_status st = ${id}_check(call, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    ${id}_job job = { loom_data(x), loom_data(out), call->attrs[PK_ATTR(${id}, alpha)].u.f };
    /* the dtype is one of ${ID}_DTYPES: the core checked it against the kernel's mask */
    return pk_host->parallel_for(call->ctx, loom_numel(out), 16384, ${id}_rows[pk_float_index(loom_tensor_dtype_of(x))],
                                 &job);
}

static const loom_kernel_desc ${id}_cpu_kernels[] = {
    PK_KERNEL_CPU(${id}_schema, "cpu:elementwise", ${ID}_DTYPES, ${id}_run_cpu),
};

const pk_module ${id}_cpu = PK_MODULE("${op}", ${id}_ops, ${id}_cpu_kernels, NULL);
"""

OP_CPU_TMPL_H = """\
/*
** ${op}_cpu_tmpl.h - the cpu body of ${opname} for one dtype: included once
** per dtype by ${op}_cpu.c with PK_SFX defined (dtype_traits.h), it defines
** ${id}_rows_<sfx> and #undefs PK_SFX.
**
** Arithmetic is in the compute type (float for f16 and bf16, as torch's
** opmath) and each result is rounded once to the storage type.
*/
static void PK_FN(${id}_rows)(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const ${id}_job *j = user;
    const PK_S(PK_SFX) *x = j->x;
    PK_S(PK_SFX) *y = j->y;
    const PK_C(PK_SFX) alpha = (PK_C(PK_SFX))j->alpha;
    (void)thread_index;
    for (int64_t i = begin; i < end; i++)
        PK_ST(PK_SFX)(&y[i], alpha * PK_LD(PK_SFX)(&x[i]));
}

#undef PK_SFX
"""

OP_CUDA_C = """\
/*
** ${op}_cuda.c - the cuda kernel of ${opname} (built only with CUDA): the
** checks of every backend, then the launcher of ${op}_kernels.cu on the
** call's stream. The CUDA device itself comes from core-cuda.so.
*/
#include <cuda_runtime.h>

#include "${op}.h"
#include "${op}_kernels.h"

static loom_status ${id}_run_cuda(loom_call *call)
{
    const loom_tensor *x = call->inputs[0];
    loom_tensor *out;
    loom_status st = ${id}_check(call, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    cudaError_t e = cudaSetDevice(call->ctx->device.device_id);
    if (e == cudaSuccess)
        e = (cudaError_t)${id}_cuda_launch((int32_t)loom_tensor_dtype_of(x), loom_data(x), loom_data(out),
                                          loom_numel(out), call->attrs[PK_ATTR(${id}, alpha)].u.f,
                                          call->ctx->stream);
    return e == cudaSuccess ? LOOM_OK
                            : pk_host->fail(LOOM_EDEVICE, "${opname} kernel launch: %s (%s)", cudaGetErrorString(e),
                                            cudaGetErrorName(e));
}

static const loom_kernel_desc ${id}_cuda_kernels[] = {
    PK_KERNEL_CUDA(${id}_schema, "cuda:elementwise", ${ID}_DTYPES, ${id}_run_cuda),
};

const pk_module ${id}_cuda = PK_MODULE("${op}", ${id}_ops, ${id}_cuda_kernels, NULL);
"""

OP_KERNELS_H = """\
/*
** ${op}_kernels.h - the device code of ${opname}, called from C.
** Implemented in ${op}_kernels.cu.
*/
#ifndef LOOM_${ID}_KERNELS_H
#define LOOM_${ID}_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* y[i] = alpha * x[i] for i < n (n > 0) of one float dtype (a loom_dtype of
** PK_FLOAT_DTYPES); asynchronous on `stream`. Returns the cudaError_t of
** the launch (0 = success). */
int ${id}_cuda_launch(int32_t dtype, const void *x, void *y, int64_t n, double alpha, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* LOOM_${ID}_KERNELS_H */
"""

OP_KERNELS_CU = """\
/*
** ${op}_kernels.cu - device code of ${opname}: one thread per element in a
** grid-stride loop, one kernel per dtype of the dtype table, with the same
** load / compute / store as the cpu body, so both backends give the same
** bits.
*/
#include <cuda_runtime.h>

#include "dtype_traits.h"
#include "${op}_kernels.h"

namespace {

#define ${ID}_KERNEL_(sfx, DTYPE, S, C)                                                     \\
    __global__ void ${id}_##sfx(const S *x, S *y, int64_t n, C alpha)                       \\
    {                                                                                       \\
        for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;             \\
             i += (int64_t)gridDim.x * blockDim.x)                                          \\
            pk_st_##sfx(&y[i], alpha * pk_ld_##sfx(&x[i]));                                 \\
    }
PK_FLOAT_DTYPES(${ID}_KERNEL_)
#undef ${ID}_KERNEL_

}  // namespace

extern "C" int ${id}_cuda_launch(int32_t dtype, const void *x, void *y, int64_t n, double alpha, void *stream)
{
    const int threads = 256;
    const int64_t want = (n + threads - 1) / threads;
    const int blocks = want < 65535 ? (int)want : 65535;
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    switch (dtype) {
#define ${ID}_LAUNCH_(sfx, DTYPE, S, C)                                                       \\
    case DTYPE:                                                                            \\
        ${id}_##sfx<<<blocks, threads, 0, s>>>(static_cast<const S *>(x), static_cast<S *>(y), n, (C)alpha); \\
        break;
    PK_FLOAT_DTYPES(${ID}_LAUNCH_)
#undef ${ID}_LAUNCH_
    default:
        return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}
"""

MODULE_MESON_HEAD = """\
# plugins/${pack}/${module}: the ${module} module of the ${pack} packs. Each op's
# schema and checks go into both packs, its kernels into their backend's.
"""

MODULE_MESON_LINES = """\
# ${opname}
${pack}_cpu_src += files('${op}_schemas.c', '${op}_checks.c', '${op}_cpu.c')
${pack}_cuda_src += files('${op}_schemas.c', '${op}_checks.c', '${op}_cuda.c')
${pack}_cu_src += files('${op}_kernels.cu')
"""

MODULE_MESON_LINES_NO_CUDA = """\
# ${opname} (no cuda kernel yet: without one, a call on cuda tensors fails
# naming the op and the device)
${pack}_cpu_src += files('${op}_schemas.c', '${op}_checks.c', '${op}_cpu.c')
"""

PACK_MESON_HEAD = """\
# plugins/${pack}: the `${pack}` op packs. ${pack}.so holds the cpu kernels;
# ${pack}-cuda.so (when CUDA is built) the cuda kernels. Each module folder
# (plugins/meson.build lists them) appends its files; this folder adds the
# entry files.
${pack}_cpu_src += files('cpu_pack.c')
${pack}_cuda_src += files('cuda_pack.c')

"""

CPU_PACK_C = """\
/*
** cpu_pack.c - the entry of ${pack}.so: defines the ${pack} ops and registers
** their cpu kernels, module by module (pack.h).
*/
#include "${module}/${op}.h"

PK_PACK_DEFINE("${pack}", "0.1.0", "${pack} ops (cpu)", NULL, NULL,
               &${id}_cpu)
"""

CUDA_PACK_C = """\
/*
** cuda_pack.c - the entry of ${pack}-cuda.so: the same op definitions as
** ${pack}.so and the cuda kernels. The CUDA device comes from core-cuda.so,
** which must be loaded first; every launch is asynchronous on the call's
** ctx->stream.
*/
#include "${module}/${op}.h"

static const char *const ${pack}_cuda_depends[] = { "core-cuda", NULL };
PK_PACK_DEFINE_DEPS("${pack}-cuda", "0.1.0", "${pack} ops (cuda)", NULL, NULL, ${pack}_cuda_depends,
                    &${id}_cuda)
"""

TEST_PACK_MESON = """\
# tests/${pack}: the ${pack} packs through the public API only, one folder per
# module, against the golden data of tools/gen_${pack}_*_goldens.py in
# tests/data/${pack}/<op>.
"""

TEST_MESON = """\
# ${opname}: test_${op}.c against a direct computation and the golden data of
# tools/gen_${id}_goldens.py (tests/data/${datadir}) when it is there; its
# other backends against the cpu: tests/conformance.
test('${pack}-${op}',
  executable('test_${id}', files('test_${op}.c'), dependencies: tu_dep),
  suite: ['ops'], env: test_env, depends: test_packs, timeout: 120)
"""

TEST_C = """\
/*
** test_${op}.c - ${opname} through the public API: against a direct
** computation in every float dtype, against torch's output
** (tools/gen_${id}_goldens.py; skipped until tests/data/${datadir} holds
** it), no elements, and the refusal of a non-finite alpha. The other
** backends are compared with the cpu by tests/conformance.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tu_ops.h"

/* the alpha of tools/gen_${id}_goldens.py */
#define GOLDEN_ALPHA 1.5

static loom_tensor *call_op(const loom_tensor *x, double alpha, const char *backend, loom_status *st)
{
    loom_attrs *attrs = NULL;
    loom_tensor *out = NULL;
    assert_int_equal(loom_attrs_new(&attrs), LOOM_OK);
    assert_int_equal(loom_attrs_set_float(attrs, "alpha", alpha), LOOM_OK);
    *st = tu_call("${opname}", &x, 1, attrs, backend, &out);
    loom_attrs_free(attrs);
    return out;
}

/* x = -3.5, -3, ..., 4 (exact in every float dtype): alpha * x for alpha
** = 2 is exact too, so every dtype must give it bit for bit. */
static loom_tensor *halves(void)
{
    const int64_t shape[2] = { 4, 4 };
    loom_tensor *t;
    assert_int_equal(loom_tensor_new(&t, LOOM_DTYPE_F64, 2, shape, NULL), LOOM_OK);
    double *p = loom_data(t);
    for (int i = 0; i < 16; i++)
        p[i] = 0.5 * i - 3.5;
    return t;
}

static void ${op}_is_alpha_times_input_in_every_dtype(void **state)
{
    static const loom_dtype dtypes[] = { LOOM_DTYPE_F32, LOOM_DTYPE_F64, LOOM_DTYPE_F16, LOOM_DTYPE_BF16 };
    (void)state;
    loom_tensor *x64 = halves();
    for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++) {
        loom_status st;
        loom_tensor *x = tu_cast(x64, dtypes[d]);
        loom_tensor *y = call_op(x, 2.0, "cpu", &st);
        if (st != LOOM_OK)
            fail_msg("%s: %s", loom_dtype_name(dtypes[d]), loom_last_error());
        assert_int_equal(loom_tensor_dtype_of(y), dtypes[d]);
        loom_tensor *y64 = tu_cast(y, LOOM_DTYPE_F64);
        for (int i = 0; i < 16; i++)
            assert_true(tu_get(y64, i) == 2.0 * tu_get(x64, i));
        loom_tensor_free(x);
        loom_tensor_free(y);
        loom_tensor_free(y64);
    }
    loom_tensor_free(x64);
}

static void ${op}_matches_torch(void **state)
{
    static const char *const names[] = { "f32", "f64", "f16" };
    (void)state;
    if (!tu_npy_exists("${datadir}/${op}_f32_input")) {
        print_message("no golden data in tests/data/${datadir}: run tools/gen_${id}_goldens.py\\n");
        skip();
    }
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char name[96];
        loom_status st;
        snprintf(name, sizeof name, "${datadir}/${op}_%s_input", names[i]);
        loom_tensor *x = tu_npy(name);
        snprintf(name, sizeof name, "${datadir}/${op}_%s_output", names[i]);
        loom_tensor *want = tu_npy(name);
        loom_tensor *got = call_op(x, GOLDEN_ALPHA, "cpu", &st);
        if (st != LOOM_OK)
            fail_msg("%s: %s", names[i], loom_last_error());
        /* one rounding of the same product: torch gives the same bits */
        tu_assert_identical(got, want, names[i]);
        loom_tensor_free(x);
        loom_tensor_free(want);
        loom_tensor_free(got);
    }
}

static void no_elements_give_an_empty_output(void **state)
{
    const int64_t shape[2] = { 0, 3 };
    loom_tensor *x;
    loom_status st;
    (void)state;
    assert_int_equal(loom_tensor_new(&x, LOOM_DTYPE_F32, 2, shape, NULL), LOOM_OK);
    loom_tensor *y = call_op(x, 2.0, "cpu", &st);
    assert_int_equal(st, LOOM_OK);
    assert_int_equal(y->ndim, 2);
    assert_int_equal(y->shape[0], 0);
    assert_int_equal(y->shape[1], 3);
    loom_tensor_free(x);
    loom_tensor_free(y);
}

static void non_finite_alpha_is_refused(void **state)
{
    loom_status st;
    (void)state;
    loom_tensor *x = halves(), *y = call_op(x, NAN, "cpu", &st);
    assert_int_equal(st, LOOM_EINVAL);
    assert_null(y);
    assert_non_null(strstr(loom_last_error(), "alpha"));
    loom_tensor_free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(${op}_is_alpha_times_input_in_every_dtype),
        cmocka_unit_test(${op}_matches_torch),
        cmocka_unit_test(no_elements_give_an_empty_output),
        cmocka_unit_test(non_finite_alpha_is_refused),
    };
    return cmocka_run_group_tests_name("${id}", tests, tu_setup, tu_teardown);
}
"""

GOLDENS_PY = '''\
#!/usr/bin/env python3
"""Write the golden data of ${opname} to tests/data/${datadir}/.

The expected output comes from torch on the CPU (torch.mul(input, alpha));
inputs are small and seeded, so the files are reproducible. alpha is the
GOLDEN_ALPHA of tests/${testdir}/${module}/test_${op}.c.

    .venv/bin/python tools/gen_${id}_goldens.py [OUTDIR]

Needs numpy and torch (CPU is enough). Keep the total small (< 300 KB).
"""
import os
import sys

import numpy as np
import torch

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "${datadir}")
ALPHA = 1.5
DTYPES = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16}


def save(name, t):
    np.save(os.path.join(OUT, name + ".npy"), t.contiguous().numpy(), allow_pickle=False)


def main():
    os.makedirs(OUT, exist_ok=True)
    gen = torch.Generator().manual_seed(0)
    for name, dtype in DTYPES.items():
        x = (torch.rand(3, 5, 7, generator=gen, dtype=torch.float64) * 8 - 4).to(dtype)
        save("${op}_%s_input" % name, x)
        save("${op}_%s_output" % name, torch.mul(x, ALPHA))
    print("wrote", os.path.normpath(OUT))


if __name__ == "__main__":
    main()
'''

EMPTY_CASE = """\
    { "${opname}", "no elements", { OC_T(F32, 2, 0, 3) }, NULL, { OC_T(F32, 2, 0, 3) } },
"""

CONFORMANCE_FN = """\
/* ${opname}: [3, 5, 7] and [257] (a block of 256 elements and one more) in
** [-4, 4), alpha 1.5. Every backend loads, multiplies in the compute type
** and rounds once, as the cpu body does: identical bytes. */
static int ${id}_make(cf_case *c)
{
    static const int64_t shapes[2][3] = { { 3, 5, 7 }, { 257 } };
    c->in[0] = cf_uniform(c, c->dtype, c->index == 0 ? 3 : 1, shapes[c->index], 0, -4, 4);
    c->n_in = 1;
    cf_attrs(c, "alpha=1.5");
    cf_tol_all(c, CF_BYTES, 0, 0);
    cf_what(c, c->index == 0 ? "[3,5,7], alpha 1.5" : "[257], alpha 1.5");
    return 1;
}

"""

CONFORMANCE_ROW = """\
    { "${opname}", LOOM_DTYPES_FLOAT, 2, ${id}_make, NULL },
"""

CONFORMANCE_FILE_HEAD = """\
/*
** cases_${pack}.c - case generators of the ${pack} pack's ops (see
** conformance.h); each states its tolerance and why.
*/
#include "conformance.h"

"""

CONFORMANCE_TABLE = """\
const cf_gen cf_${pack}_gens[] = {
${row}};
const size_t cf_${pack}_n_gens = sizeof cf_${pack}_gens / sizeof cf_${pack}_gens[0];
"""

# ------------------------------------------------------------------ the plan


class Plan:
    """Files to create and files to edit, applied all at once at the end."""

    def __init__(self, root):
        self.root = root
        self.new = {}       # path -> text
        self.edits = {}     # path -> (old, new)
        self.by_hand = []   # the steps the script leaves to the contributor

    def path(self, rel):
        return os.path.join(self.root, rel)

    def exists(self, rel):
        return rel in self.new or os.path.exists(self.path(rel))

    def read(self, rel):
        if rel in self.new:
            return self.new[rel]
        if rel in self.edits:
            return self.edits[rel][1]
        with open(self.path(rel), encoding="utf-8") as f:
            return f.read()

    def create(self, rel, text):
        if os.path.exists(self.path(rel)) or rel in self.new:
            sys.exit("new_op.py: %s exists already; nothing written" % rel)
        self.new[rel] = text

    def edit(self, rel, new_text):
        if rel in self.new:
            self.new[rel] = new_text
            return
        old = self.edits[rel][0] if rel in self.edits else self.read(rel)
        self.edits[rel] = (old, new_text)

    def append(self, rel, text):
        cur = self.read(rel) if self.exists(rel) else None
        if cur is None:
            self.create(rel, text)
        else:
            self.edit(rel, cur.rstrip("\n") + "\n" + text)

    def show(self, out):
        for rel in sorted(self.new):
            out.write("=== new file %s\n%s\n" % (rel, self.new[rel]))
        for rel in sorted(self.edits):
            old, new = self.edits[rel]
            out.write("=== edit %s\n" % rel)
            out.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                                "a/" + rel, "b/" + rel))
            out.write("\n")

    def apply(self):
        for rel, text in sorted(self.new.items()):
            os.makedirs(os.path.dirname(self.path(rel)), exist_ok=True)
            with open(self.path(rel), "w", encoding="utf-8") as f:
                f.write(text)
            if rel.endswith(".py"):
                os.chmod(self.path(rel), 0o755)
        for rel, (_, text) in sorted(self.edits.items()):
            with open(self.path(rel), "w", encoding="utf-8") as f:
                f.write(text)


# ------------------------------------------------------------------- editing


def matching(text, start, open_ch, close_ch):
    """Index of the close_ch matching the open_ch at text[start]."""
    depth = 0
    i = start
    while i < len(text):
        c = text[i]
        if c == "#" and open_ch in "{[":           # a meson comment runs to the end of the line
            i = text.index("\n", i) if "\n" in text[i:] else len(text)
            continue
        if c == open_ch:
            depth += 1
        elif c == close_ch:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ValueError("unbalanced %s%s" % (open_ch, close_ch))


def packs_table(text):
    """(start, end) of the loom_packs dictionary literal, braces included."""
    m = re.search(r"^loom_packs = \{", text, re.M)
    if not m:
        return None
    start = m.end() - 1
    return start, matching(text, start, "{", "}")


def pack_entry(text, pack):
    """(start, end) of the dictionary of `pack` in loom_packs, or None."""
    span = packs_table(text)
    if span is None:
        return None
    m = re.compile(r"^  '%s': \{" % re.escape(pack), re.M).search(text, span[0], span[1])
    if not m:
        return None
    start = m.end() - 1
    return start, matching(text, start, "{", "}")


def add_module_to_table(plan, pack, module):
    rel = "plugins/meson.build"
    text = plan.read(rel)
    span = pack_entry(text, pack)
    if span is None:
        plan.by_hand.append("add '%s' to the modules of '%s' in the pack table of %s" % (module, pack, rel))
        return
    body = text[span[0]:span[1] + 1]
    m = re.search(r"'modules': \[([^\]]*)\]", body)
    if m:
        items = m.group(1).strip()
        new_list = "'modules': [%s%s'%s']" % (items, ", " if items else "", module)
        body = body[:m.start()] + new_list + body[m.end():]
    else:
        body = "{\n    'modules': ['%s'],%s" % (module, body[1:])
    plan.edit(rel, text[:span[0]] + body + text[span[1] + 1:])


def add_pack_to_table(plan, pack, module, cuda):
    rel = "plugins/meson.build"
    text = plan.read(rel)
    span = packs_table(text)
    if span is None:
        plan.by_hand.append("add '%s': {'modules': ['%s']} to the pack table (loom_packs) of %s" % (pack, module, rel))
        return
    entry = "  '%s': {\n    'modules': ['%s'],\n%s  },\n" % (pack, module, "" if cuda else "    'cuda': false,\n")
    end = span[1]
    line_start = text.rindex("\n", 0, end) + 1         # the line of the closing brace
    plan.edit(rel, text[:line_start] + entry + text[line_start:])


def add_to_pack_define(plan, rel, module_var, include):
    """Append &module_var to the PK_PACK_DEFINE(_DEPS) list of an entry file;
    False (and a step left to do) when the entry is not written that way."""
    if not plan.exists(rel):
        plan.by_hand.append("%s does not exist: register %s in the pack's entry" % (rel, module_var))
        return False
    text = plan.read(rel)
    m = re.search(r"\bPK_PACK_DEFINE(_DEPS)?\(", text)
    if not m:
        plan.by_hand.append("add &%s to the module list of the pack in %s (it does not use PK_PACK_DEFINE yet), "
                         "and #include \"%s\" there" % (module_var, rel, include))
        return False
    close = matching(text, m.end() - 1, "(", ")")
    text = text[:close].rstrip() + ",\n%s&%s" % (" " * (m.end() - m.start()), module_var) + text[close:]
    incs = list(re.finditer(r'^#include .*\n', text, re.M))
    line = '#include "%s"\n' % include
    if line not in text:
        at = incs[-1].end() if incs else 0
        text = text[:at] + line + text[at:]
    plan.edit(rel, text)
    return True


def add_subdir(plan, rel, name, before=None):
    """Add subdir('name') to a meson.build: before the line subdir('before')
    when there is one, else at the end."""
    text = plan.read(rel)
    line = "subdir('%s')\n" % name
    if line in text:
        return
    if before is not None and "subdir('%s')\n" % before in text:
        i = text.index("subdir('%s')\n" % before)
        plan.edit(rel, text[:i] + line + text[i:])
    else:
        plan.edit(rel, text.rstrip("\n") + "\n" + line)


def add_empty_case(plan, pack, values):
    """A no-elements case in the pack's table-driven empty-input test, whose
    coverage check fails for an op without a case."""
    tdir = TEST_DIRS.get(pack, pack)
    for rel in ("tests/%s/test_%s_empty.c" % (tdir, pack), "tests/%s/test_empty.c" % tdir):
        if plan.exists(rel):
            text = plan.read(rel)
            marker = "static const oc_case cases[] = {\n"
            if text.count(marker) == 1:
                i = text.index(marker) + len(marker)
                plan.edit(rel, text[:i] + Template(EMPTY_CASE).substitute(values) + text[i:])
            else:
                plan.by_hand.append("add a no-elements case of %s to %s (its coverage check fails without one)"
                                 % (values["opname"], rel))
            return


def add_conformance_case(plan, pack, values):
    """A case generator of the op in tests/conformance/cases_<pack>.c, whose
    harness fails for an op without one; a new file (declared in
    conformance.h, listed in cases.c and meson.build) for a new pack."""
    sub = lambda t: Template(t).substitute(values)
    rel = "tests/conformance/cases_%s.c" % pack
    marker = "const cf_gen cf_%s_gens[] = {\n" % pack
    if plan.exists(rel):
        text = plan.read(rel)
        if text.count(marker) != 1:
            plan.by_hand.append("add a case generator of %s to %s (the conformance test fails without one)"
                             % (values["opname"], rel))
            return
        i = text.index(marker)
        j = i + len(marker)
        plan.edit(rel, text[:i] + sub(CONFORMANCE_FN) + marker + sub(CONFORMANCE_ROW) + text[j:])
        return
    plan.create(rel, sub(CONFORMANCE_FILE_HEAD) + sub(CONFORMANCE_FN)
                + Template(CONFORMANCE_TABLE).substitute(values, row=sub(CONFORMANCE_ROW)))
    edits = [
        ("tests/conformance/conformance.h", "\n/* ---------------------------------------------- helpers of the generators",
         "extern const cf_gen cf_%s_gens[];\nextern const size_t cf_%s_n_gens;\n" % (pack, pack), True),
        ("tests/conformance/cases.c", "};\n#define N_DOMAINS",
         '    { "%s.", "cases_%s.c", cf_%s_gens, &cf_%s_n_gens },\n' % (pack, pack, pack, pack), True),
    ]
    for path, anchor, line, before in edits:
        text = plan.read(path)
        if text.count(anchor) != 1:
            plan.by_hand.append("register cf_%s_gens of %s in %s" % (pack, rel, path))
            continue
        i = text.index(anchor)
        plan.edit(path, text[:i] + line + text[i:])
    path = "tests/conformance/meson.build"
    text = plan.read(path)
    m = re.search(r"conformance_cases = files\(([^)]*)\)", text)
    if m is None:
        plan.by_hand.append("add cases_%s.c to the sources of %s" % (pack, path))
    else:
        plan.edit(path, text[:m.end(1)] + ", 'cases_%s.c'" % pack + text[m.end(1):])


# --------------------------------------------------------------------- main


def link_stanza(plan):
    """The lines that end every pack folder's meson.build (the same in each)."""
    text = plan.read("plugins/core/meson.build")
    i = text.find("# Link what plugins/meson.build prepared")
    if i < 0:
        sys.exit("new_op.py: plugins/core/meson.build has no link stanza to copy")
    return text[i:]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    ap.add_argument("name", metavar="DOMAIN.OP")
    ap.add_argument("--module", help="the module folder (default: OP)")
    ap.add_argument("--no-cuda", action="store_true", help="no cuda kernel (a call on cuda tensors then fails "
                    "naming the op and the device)")
    ap.add_argument("--dry-run", action="store_true", help="print what would be written; write nothing")
    args = ap.parse_args()

    if args.name.count(".") != 1:
        ap.error("the op is DOMAIN.OP, e.g. vision.box_flip")
    pack, op = args.name.split(".")
    module = args.module or op
    for what, v in (("DOMAIN", pack), ("OP", op), ("MODULE", module)):
        if not NAME.match(v):
            ap.error("%s '%s' must be lower-case letters, digits and _, starting with a letter" % (what, v))
    if pack == "common":
        ap.error("plugins/common is the toolkit, not a pack")

    plan = Plan(ROOT)
    cuda = not args.no_cuda
    tdir = TEST_DIRS.get(pack, pack)
    values = {
        "pack": pack, "op": op, "module": module, "opname": "%s.%s" % (pack, op),
        "id": "%s_%s" % (pack, op), "ID": ("%s_%s" % (pack, op)).upper(),
        "testdir": tdir, "datadir": "%s/%s" % (TEST_DIRS.get(pack, pack), op),
    }
    values["modules_doc"] = "%s_cpu.c, %s_cuda.c" % (op, op) if cuda else "%s_cpu.c (no cuda kernel yet)" % op
    values["cuda_module_decl"] = "extern const pk_module %s_%s_cuda;\n" % (pack, op) if cuda else ""
    sub = lambda t: Template(t).substitute(values)

    pack_dir = "plugins/%s" % pack
    mod_dir = "%s/%s" % (pack_dir, module)
    new_pack = not os.path.isdir(plan.path(pack_dir))
    new_module = not os.path.isdir(plan.path(mod_dir))
    if not new_pack:
        for dirpath, _, files in os.walk(plan.path(pack_dir)):
            for f in files:
                if f.endswith(".c"):
                    with open(os.path.join(dirpath, f), encoding="utf-8", errors="replace") as fh:
                        if '"%s"' % values["opname"] in fh.read():
                            sys.exit("new_op.py: %s is already defined in %s" % (values["opname"],
                                                                               os.path.relpath(fh.name, ROOT)))

    # the op's own files
    plan.create("%s/%s.h" % (mod_dir, op), sub(OP_H))
    plan.create("%s/%s_schemas.c" % (mod_dir, op), sub(OP_SCHEMAS_C))
    plan.create("%s/%s_checks.c" % (mod_dir, op), sub(OP_CHECKS_C))
    plan.create("%s/%s_cpu.c" % (mod_dir, op), sub(OP_CPU_C))
    plan.create("%s/%s_cpu_tmpl.h" % (mod_dir, op), sub(OP_CPU_TMPL_H))
    if cuda:
        plan.create("%s/%s_cuda.c" % (mod_dir, op), sub(OP_CUDA_C))
        plan.create("%s/%s_kernels.h" % (mod_dir, op), sub(OP_KERNELS_H))
        plan.create("%s/%s_kernels.cu" % (mod_dir, op), sub(OP_KERNELS_CU))
    lines = sub(MODULE_MESON_LINES if cuda else MODULE_MESON_LINES_NO_CUDA)
    if new_module:
        plan.create("%s/meson.build" % mod_dir, sub(MODULE_MESON_HEAD) + lines)
    else:
        plan.append("%s/meson.build" % mod_dir, lines)

    # the pack
    include = "%s/%s.h" % (module, op)
    if new_pack:
        add_pack_to_table(plan, pack, module, cuda)
        plan.create("%s/meson.build" % pack_dir, sub(PACK_MESON_HEAD) + link_stanza(plan))
        plan.create("%s/cpu_pack.c" % pack_dir, sub(CPU_PACK_C))
        if cuda:
            plan.create("%s/cuda_pack.c" % pack_dir, sub(CUDA_PACK_C))
        else:
            plan.edit("%s/meson.build" % pack_dir,
                      plan.read("%s/meson.build" % pack_dir).replace("%s_cuda_src += files('cuda_pack.c')\n" % pack, ""))
    else:
        if new_module:
            add_module_to_table(plan, pack, module)
        registered = add_to_pack_define(plan, "%s/cpu_pack.c" % pack_dir, "%s_cpu" % values["id"], include)
        if cuda:
            add_to_pack_define(plan, "%s/cuda_pack.c" % pack_dir, "%s_cuda" % values["id"], include)
        if registered:
            add_empty_case(plan, pack, values)
        else:
            plan.by_hand.append("once it is registered: a no-elements case of %s in the pack's empty-input test "
                             "(tests/%s/test_*empty.c), whose coverage check fails without one"
                             % (values["opname"], tdir))

    # the test, its data generator
    test_pack_dir = "tests/%s" % tdir
    test_dir = "%s/%s" % (test_pack_dir, module)
    plan.create("%s/test_%s.c" % (test_dir, op), sub(TEST_C))
    plan.append("%s/meson.build" % test_dir, sub(TEST_MESON))
    if not plan.exists("%s/meson.build" % test_pack_dir):
        plan.create("%s/meson.build" % test_pack_dir, sub(TEST_PACK_MESON))
        add_subdir(plan, "tests/meson.build", tdir, before="cli")
    add_subdir(plan, "%s/meson.build" % test_pack_dir, module)
    plan.create("tools/gen_%s_goldens.py" % values["id"], sub(GOLDENS_PY))
    add_conformance_case(plan, pack, values)

    if args.dry_run:
        plan.show(sys.stdout)
    else:
        plan.apply()
        for rel in sorted(plan.new):
            print("wrote  ", rel)
        for rel in sorted(plan.edits):
            print("edited ", rel)

    steps = [
        "build and test: ninja -C build && meson test -C build %s-%s conformance" % (pack, op),
        "replace the formula, arguments and attributes: %s/%s.h, %s_schemas.c, %s_cpu_tmpl.h%s"
        % (mod_dir, op, op, op, ", %s_kernels.cu" % op if cuda else ""),
        "golden data: .venv/bin/python tools/gen_%s_goldens.py (writes tests/data/%s)" % (values["id"], values["datadir"]),
        "conformance: make the case generator of %s in tests/conformance/cases_%s.c the op's own "
        "(inputs, attributes, the tolerance and its reason)" % (values["opname"], pack),
    ]
    print("\nleft to do:" if plan.by_hand else "\nnext:")
    for t in plan.by_hand + steps:
        print("  - " + t)


if __name__ == "__main__":
    main()
