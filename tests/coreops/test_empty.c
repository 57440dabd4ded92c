/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_empty.c - every op of the core pack on inputs without elements:
** torch's output shapes (broadcasting with a zero dim, a matmul whose inner
** dim is 0 gives zeros, a linear of 0 rows or features), no error and no
** read of the (NULL) data of an empty tensor. The walk over the registry
** fails for any core op without a case here.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "tu_ops.h"
#include "op_cases.h"

/* the table below leaves trailing members of its cases to their zero default */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define T OC_T

enum { LINEAR = 1, LINEAR_NO_IN = 2, LINEAR_NO_OUT = 3 };

static const oc_case cases[] = {
    { "core.add", "empty + empty", { T(F32, 2, 0, 3), T(F32, 2, 0, 3) }, NULL, { T(F32, 2, 0, 3) } },
    { "core.add", "empty + broadcast row", { T(F64, 2, 0, 3), T(F64, 1, 3) }, "alpha=2", { T(F64, 2, 0, 3) } },
    { "core.add", "broadcast to a zero dim", { T(F32, 2, 2, 1), T(F32, 2, 1, 0) }, NULL, { T(F32, 2, 2, 0) } },
    { "core.add", "empty + scalar, int", { T(I32, 3, 2, 0, 4), T(I32, 0, 0) }, "alpha=3", { T(I32, 3, 2, 0, 4) } },
    { "core.add", "empty bf16", { T(BF16, 1, 0), T(BF16, 1, 0) }, NULL, { T(BF16, 1, 0) } },
    { "core.cast", "f32 to i64", { T(F32, 2, 0, 3) }, "dtype=i64", { T(I64, 2, 0, 3) } },
    { "core.cast", "f16 to f32", { T(F16, 2, 2, 0) }, "dtype=f32", { T(F32, 2, 2, 0) } },
    { "core.cast", "c64 to bool", { T(C64, 1, 0) }, "dtype=bool", { T(BOOL, 1, 0) } },
    { "core.matmul", "no rows", { T(F32, 2, 0, 3), T(F32, 2, 3, 4) }, NULL, { T(F32, 2, 0, 4) } },
    /* torch: an empty inner dim sums nothing, the product is zeros */
    { "core.matmul", "inner dim 0", { T(F32, 2, 2, 0), T(F32, 2, 0, 3) }, NULL, { T(F32, 2, 2, 3) }, .zeros = 1 },
    { "core.matmul", "inner dim 0, f64", { T(F64, 3, 2, 5, 0), T(F64, 2, 0, 3) }, NULL, { T(F64, 3, 2, 5, 3) },
      .zeros = 1 },
    { "core.matmul", "no columns", { T(F64, 2, 2, 3), T(F64, 2, 3, 0) }, NULL, { T(F64, 2, 2, 0) } },
    { "core.matmul", "empty batch", { T(F32, 3, 0, 2, 3), T(F32, 3, 1, 3, 4) }, NULL, { T(F32, 3, 0, 2, 4) } },
    { "core.matmul", "batch broadcast to 0", { T(F32, 3, 4, 2, 3), T(F32, 4, 0, 1, 3, 4) }, NULL,
      { T(F32, 4, 0, 4, 2, 4) } },
    { "core.linear", "no rows", { T(F32, 2, 0, 3) }, NULL, { T(F32, 2, 0, 4) }, .object = LINEAR },
    { "core.linear", "no in_features: the bias", { T(F32, 2, 2, 0) }, NULL, { T(F32, 2, 2, 4) }, .zeros = 1,
      .object = LINEAR_NO_IN },
    { "core.linear", "no out_features", { T(F32, 3, 2, 5, 3) }, NULL, { T(F32, 3, 2, 5, 0) },
      .object = LINEAR_NO_OUT },
};

static char path[256];

static loom_object *linear(const oc_tensor *w, const oc_tensor *b)
{
    loom_tensor *ts[2] = { oc_make(w), b != NULL ? oc_make(b) : NULL };
    const char *names[2] = { "weight", "bias" };
    loom_object *o;
    if (loom_safetensors_write(path, names, (const loom_tensor *const *)ts, b != NULL ? 2 : 1) != LOOM_OK)
        fail_msg("writing %s: %s", path, loom_last_error());
    if (loom_object_create(&o, "core.linear", NULL, path) != LOOM_OK)
        fail_msg("core.linear: %s", loom_last_error());
    loom_tensor_free(ts[0]);
    loom_tensor_free(ts[1]);
    unlink(path);
    return o;
}

static int setup(void **state)
{
    if (tu_setup(state) != 0)
        return -1;
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/loom-coreops-empty-%d.safetensors", tmp != NULL && *tmp ? tmp : "/tmp",
             (int)getpid());
    const oc_tensor w43 = T(F32, 2, 4, 3), w40 = T(F32, 2, 4, 0), w03 = T(F32, 2, 0, 3), b4 = T(F32, 1, 4);
    const oc_tensor b0 = T(F32, 1, 0);
    oc_objects[LINEAR - 1] = linear(&w43, &b4);
    oc_objects[LINEAR_NO_IN - 1] = linear(&w40, &b4);
    oc_objects[LINEAR_NO_OUT - 1] = linear(&w03, &b0);
    return 0;
}

static int teardown(void **state)
{
    for (size_t i = 0; i < sizeof oc_objects / sizeof oc_objects[0]; i++) {
        loom_object_free(oc_objects[i]);
        oc_objects[i] = NULL;
    }
    return tu_teardown(state);
}

int main(void)
{
    return oc_run_group("coreops_empty", "core.", cases, sizeof cases / sizeof cases[0], setup, teardown);
}
