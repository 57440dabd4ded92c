/* SPDX-License-Identifier: BSD-3-Clause */
/* encoder_test_util.c - see encoder_test_util.h. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <setjmp.h>
#include <cmocka.h>

#include "encoder_test_util.h"
#include "tu_ops.h"

loom_status te_encode(loom_object *obj, const loom_tensor *ids, const loom_tensor *mask, const loom_tensor *types,
                      const char *pooling, int normalize, loom_tensor **out)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "pooling", pooling), LOOM_OK);
    assert_int_equal(loom_attrs_set_bool(a, "normalize", normalize), LOOM_OK);
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = obj;
    const loom_tensor *in[3] = { ids, mask, types };
    *out = NULL;
    loom_status s = loom_run("text.bert_encoder", in, 3, a, out, 1, &opt);
    loom_attrs_free(a);
    return s;
}

loom_tensor *te_golden(const char *batch, const char *what)
{
    char name[128];
    snprintf(name, sizeof name, "text/encoder/%s_%s", batch, what);
    return tu_npy(name);
}
