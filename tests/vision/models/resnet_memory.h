/* SPDX-License-Identifier: BSD-3-Clause */
/*
** resnet_memory.h - a vision.resnet18 made from in-memory tensors (ABI 1.3
** loom_object_options.tensors): every key of torchvision's state_dict, all
** zeros (one shared zero buffer), for tests that need an object but not
** trained weights, or seeded random values (resnet18_make) for tests that
** compare backends. Free with resnet18_zeros_free after loom_object_free.
*/
#ifndef LOOM_TESTS_RESNET_MEMORY_H
#define LOOM_TESTS_RESNET_MEMORY_H

#include <math.h>
#include <stdint.h>
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
    float *random;                  /* resnet18_random: every float key's own values */
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

/* Seeded values for every float key of k, in one pool (k->random): conv
** and fc weights uniform with torchvision's kaiming scale, batchnorm
** weights and variances in [0.5, 1.5], biases and means in [-0.2, 0.2], so
** the folded convolutions are far from the identity; num_batches_tracked
** stays 0. */
static inline void rm_randomise(rm_keys *k, uint32_t seed)
{
    int64_t total = 0;
    for (int i = 0; i < k->n; i++)
        if (k->tensors[i].dtype.code == LOOM_DL_FLOAT) {
            int64_t n = 1;
            for (int d = 0; d < k->tensors[i].ndim; d++)
                n *= k->shapes[i][d];
            total += n;
        }
    k->random = malloc((size_t)total * sizeof(float));
    uint64_t st = 0x9E3779B97F4A7C15ull ^ seed;
    float *p = k->random;
    for (int i = 0; i < k->n; i++) {
        if (k->tensors[i].dtype.code != LOOM_DL_FLOAT)
            continue;
        int64_t n = 1;
        for (int d = 0; d < k->tensors[i].ndim; d++)
            n *= k->shapes[i][d];
        const char *name = k->names[i];
        int is_var = strstr(name, "running_var") != NULL;
        int is_gamma = !is_var && k->tensors[i].ndim == 1 && strstr(name, ".weight") != NULL;
        int is_small = k->tensors[i].ndim == 1 && !is_var && !is_gamma;
        float bound = 0.2f;
        if (!is_var && !is_gamma && !is_small) {
            int64_t fan_in = k->shapes[i][1] * (k->tensors[i].ndim == 4 ? k->shapes[i][2] * k->shapes[i][3] : 1);
            bound = 2.4f / sqrtf((float)fan_in);       /* ~ sqrt(6 / fan_in): kaiming uniform */
        }
        for (int64_t j = 0; j < n; j++) {
            st = st * 6364136223846793005ull + 1442695040888963407ull;
            float u = (float)(st >> 40) / (float)(1ull << 24);          /* [0, 1) */
            p[j] = is_var || is_gamma ? 0.5f + u : bound * (2.0f * u - 1.0f);
        }
        k->tensors[i].data = p;
        p += n;
    }
}

/* vision.resnet18 with `classes` outputs, every weight 0 (seed 0) or
** seeded random values (rm_randomise), with the class attributes attrs
** (NULL: none); *keys is kept (borrowed by the object) until
** resnet18_zeros_free. NULL when create failed (loom_last_error). */
static inline loom_object *resnet18_make(rm_keys **keys, int64_t classes, const loom_attrs *attrs, uint32_t seed)
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
    if (seed != 0)
        rm_randomise(k, seed);
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

static inline loom_object *resnet18_zeros_with(rm_keys **keys, int64_t classes, const loom_attrs *attrs)
{
    return resnet18_make(keys, classes, attrs, 0);
}

static inline loom_object *resnet18_zeros(rm_keys **keys, int64_t classes)
{
    return resnet18_zeros_with(keys, classes, NULL);
}

static inline void resnet18_zeros_free(rm_keys *k)
{
    if (k != NULL) {
        free(k->zeros);
        free(k->random);
    }
    free(k);
}

#endif
