/* SPDX-License-Identifier: BSD-3-Clause */
/*
** resnet_memory.h - a vision.resnet18 made from in-memory tensors (ABI 1.3
** loom_object_options.tensors): every key of torchvision's state_dict, all
** zeros (one shared zero buffer), for tests that need an object but not
** trained weights. Free with resnet18_zeros_free after loom_object_free.
*/
#ifndef LOOM_TESTS_RESNET_MEMORY_H
#define LOOM_TESTS_RESNET_MEMORY_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom/loom.h"

#define RM_MAX_KEYS 128

typedef struct rm_keys {
    char names[RM_MAX_KEYS][96];
    int64_t shapes[RM_MAX_KEYS][4];
    loom_tensor tensors[RM_MAX_KEYS];
    loom_named_tensor named[RM_MAX_KEYS];
    int n;
    float *zeros;
    int64_t count;
} rm_keys;

static inline void rm_add(rm_keys *k, const char *name, int32_t ndim, int64_t a, int64_t b, int64_t c, int64_t d)
{
    int i = k->n++;
    snprintf(k->names[i], sizeof k->names[i], "%s", name);
    int64_t s[4] = { a, b, c, d };
    memcpy(k->shapes[i], s, sizeof s);
    int is_i64 = strstr(name, "num_batches_tracked") != NULL;
    loom_tensor t = { .data = k->zeros, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = ndim,
                      .dtype = { is_i64 ? LOOM_DL_INT : LOOM_DL_FLOAT, is_i64 ? 64 : 32, 1 }, .shape = k->shapes[i] };
    k->tensors[i] = t;
}

static inline void rm_conv_bn(rm_keys *k, const char *conv, const char *bn, int64_t cout, int64_t cin, int64_t ks)
{
    char n[96];
    snprintf(n, sizeof n, "%s.weight", conv);
    rm_add(k, n, 4, cout, cin, ks, ks);
    static const char *const parts[] = { "weight", "bias", "running_mean", "running_var" };
    for (int p = 0; p < 4; p++) {
        snprintf(n, sizeof n, "%s.%s", bn, parts[p]);
        rm_add(k, n, 1, cout, 0, 0, 0);
    }
    snprintf(n, sizeof n, "%s.num_batches_tracked", bn);
    rm_add(k, n, 0, 0, 0, 0, 0);
}

/* vision.resnet18 with `classes` outputs, every weight 0, with the class
** attributes attrs (NULL: none); *keys is kept (borrowed by the object)
** until resnet18_zeros_free. NULL when create failed (loom_last_error). */
static inline loom_object *resnet18_zeros_with(rm_keys **keys, int64_t classes, const loom_attrs *attrs)
{
    rm_keys *k = calloc(1, sizeof *k);
    k->zeros = calloc((size_t)(512 * 512 * 9 > classes * 512 ? 512 * 512 * 9 : classes * 512), sizeof(float));
    rm_conv_bn(k, "conv1", "bn1", 64, 3, 7);
    int64_t in = 64;
    char c[48], b[48];
    for (int s = 0; s < 4; s++) {
        int64_t planes = 64 << s;
        for (int j = 0; j < 2; j++) {
            for (int i = 1; i <= 2; i++) {
                snprintf(c, sizeof c, "layer%d.%d.conv%d", s + 1, j, i);
                snprintf(b, sizeof b, "layer%d.%d.bn%d", s + 1, j, i);
                rm_conv_bn(k, c, b, planes, i == 1 ? in : planes, 3);
            }
            if (j == 0 && s > 0) {
                snprintf(c, sizeof c, "layer%d.0.downsample.0", s + 1);
                snprintf(b, sizeof b, "layer%d.0.downsample.1", s + 1);
                rm_conv_bn(k, c, b, planes, in, 1);
            }
            in = planes;
        }
    }
    rm_add(k, "fc.weight", 2, classes, 512, 0, 0);
    rm_add(k, "fc.bias", 1, classes, 0, 0, 0);
    for (int i = 0; i < k->n; i++) {
        k->named[i].name = k->names[i];
        k->named[i].tensor = &k->tensors[i];
    }
    loom_object_options opt = LOOM_OBJECT_OPTIONS_INIT;
    opt.n_tensors = k->n;
    opt.tensors = k->named;
    loom_object *o = NULL;
    if (loom_object_create_ex(&o, "vision.resnet18", attrs, &opt) != LOOM_OK)
        o = NULL;
    *keys = k;
    return o;
}

static inline loom_object *resnet18_zeros(rm_keys **keys, int64_t classes)
{
    return resnet18_zeros_with(keys, classes, NULL);
}

static inline void resnet18_zeros_free(rm_keys *k)
{
    if (k != NULL)
        free(k->zeros);
    free(k);
}

#endif
