/* SPDX-License-Identifier: BSD-3-Clause */
/*
** vision_decode.c - `loom demo decode`: an image on its way into a ResNet.
** data/street.jpg (640 x 480, shipped beside the demos) is read and
** decoded to RGB, then taken through ResNet50 IMAGENET1K_V2's preset one
** torchvision v2 step at a time (resize the short edge to 232 with
** antialias, centre-crop 224, to float32 in [0, 1], normalise) and again as
** the one fused vision.preprocess call. Each stage's time is the median
** (and the best) of REPEATS calls; the two routes' results are compared, and
** the fused one's sum and checksum printed.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "demo.h"

DEMO_DEFINE("decode", 55,
            "vision.read_file,vision.decode_jpeg,vision.resize,vision.center_crop,vision.to_dtype,"
            "vision.normalize,vision.preprocess",
            "JPEG decode and the ResNet preset: each stage timed, then fused");

#define REPEATS 15

static const double mean[3] = { 0.485, 0.456, 0.406 }, stdev[3] = { 0.229, 0.224, 0.225 };

/* data/street.jpg where the demos are installed, else in the source tree. */
static const char *photo_path(char *buf, size_t size)
{
    snprintf(buf, size, "%s/street.jpg", DEMO_DATA_DIR);
    if (access(buf, R_OK) == 0)
        return buf;
    snprintf(buf, size, "%s/street.jpg", DEMO_SOURCE_DATA_DIR);
    return access(buf, R_OK) == 0 ? buf : NULL;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One stage: REPEATS calls of op on in (after one untimed call), the last
** output kept in *out; prints the median time. DEMO_OK or DEMO_FAIL. */
static int stage(const char *label, const char *op, const loom_tensor *in, const loom_attrs *attrs, loom_tensor **out)
{
    double t[REPEATS];
    const loom_tensor *ins[1] = { in };
    for (int r = -1; r < REPEATS; r++) {
        loom_tensor_free(*out);
        *out = NULL;
        const double t0 = demo_now();
        if (loom_run(op, in ? ins : NULL, in ? 1 : 0, attrs, out, 1, NULL) != LOOM_OK)
            return demo_fail();
        if (r >= 0)
            t[r] = demo_now() - t0;
    }
    demo_record(label);
    qsort(t, REPEATS, sizeof t[0], cmp_double);
    char shape[64];
    int at = snprintf(shape, sizeof shape, "%s[", loom_dtype_name(loom_tensor_dtype_of(*out)));
    for (int32_t d = 0; d < (*out)->ndim && at < (int)sizeof shape - 16; d++)
        at += snprintf(shape + at, sizeof shape - (size_t)at, "%s%lld", d ? "," : "", (long long)(*out)->shape[d]);
    snprintf(shape + at, sizeof shape - (size_t)at, "]");
    printf("  %-30s %-16s %8.3f ms  (best %.3f)\n", label, shape, t[REPEATS / 2] * 1e3, t[0] * 1e3);
    return DEMO_OK;
}

static loom_attrs *attrs_of(const char *op, const char *text)
{
    loom_attrs *a = NULL;
    if (loom_attrs_new(&a) != LOOM_OK)
        return NULL;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *kv = strtok(buf, ";"); kv != NULL; kv = strtok(NULL, ";")) {
        char *eq = strchr(kv, '=');
        *eq = '\0';
        if (loom_attrs_parse(a, op, kv, eq + 1) != LOOM_OK) {
            loom_attrs_free(a);
            return NULL;
        }
    }
    return a;
}

int demo_run(void)
{
    char path[1024];
    if (photo_path(path, sizeof path) == NULL) {
        fprintf(stderr, "demo: street.jpg is neither in %s nor in %s\n", DEMO_DATA_DIR, DEMO_SOURCE_DATA_DIR);
        return DEMO_FAIL;
    }
    char read_attrs[1100];
    snprintf(read_attrs, sizeof read_attrs, "path=%s", path);
    loom_attrs *a_read = attrs_of("vision.read_file", read_attrs), *a_dec = attrs_of("vision.decode_jpeg", "mode=RGB");
    loom_attrs *a_resize = attrs_of("vision.resize", "size=232;interpolation=bilinear;antialias=true");
    loom_attrs *a_crop = attrs_of("vision.center_crop", "output_size=224");
    loom_attrs *a_float = attrs_of("vision.to_dtype", "dtype=float32;scale=true");
    loom_attrs *a_norm = NULL, *a_pre = NULL;
    if (loom_attrs_new(&a_norm) == LOOM_OK) {
        loom_attrs_set_floats(a_norm, "mean", mean, 3);
        loom_attrs_set_floats(a_norm, "std", stdev, 3);
    }
    if ((a_pre = attrs_of("vision.preprocess", "resize_size=232;crop_size=224;interpolation=bilinear")) != NULL) {
        loom_attrs_set_floats(a_pre, "mean", mean, 3);
        loom_attrs_set_floats(a_pre, "std", stdev, 3);
    }
    loom_tensor *bytes = NULL, *img = NULL, *small = NULL, *crop = NULL, *x01 = NULL, *x = NULL, *fused = NULL;
    int rc = a_read && a_dec && a_resize && a_crop && a_float && a_norm && a_pre ? DEMO_OK : demo_fail();
    if (rc == DEMO_OK)
        rc = stage("read_file", "vision.read_file", NULL, a_read, &bytes);
    if (rc == DEMO_OK) {
        printf("  (street.jpg: %lld bytes; median of %d calls per stage)\n", (long long)loom_numel(bytes), REPEATS);
        rc = stage("decode_jpeg RGB", "vision.decode_jpeg", bytes, a_dec, &img);
    }
    if (rc == DEMO_OK)
        rc = stage("resize 232 bilinear antialias", "vision.resize", img, a_resize, &small);
    if (rc == DEMO_OK)
        rc = stage("center_crop 224", "vision.center_crop", small, a_crop, &crop);
    if (rc == DEMO_OK)
        rc = stage("to_dtype float32 scale", "vision.to_dtype", crop, a_float, &x01);
    if (rc == DEMO_OK)
        rc = stage("normalize", "vision.normalize", x01, a_norm, &x);
    if (rc == DEMO_OK)
        rc = stage("preprocess (fused)", "vision.preprocess", img, a_pre, &fused);
    if (rc == DEMO_OK) {
        /* The routes differ by design: transforms v2's uint8 resize rounds to
        ** uint8 between its passes, while the preset resizes in float32 and
        ** rounds once, as weights.transforms() (transforms v1) does; so a
        ** pixel may differ by one level of 255. */
        const float *s = loom_data(x), *f = loom_data(fused);
        double worst = 0, sum = 0;
        int64_t differ = 0;
        uint32_t h = 2166136261u;   /* FNV-1a of the fused output's bytes */
        const unsigned char *b = (const unsigned char *)f;
        const int64_t plane = fused->shape[1] * fused->shape[2];
        for (int64_t i = 0; i < loom_numel(fused); i++) {
            const double levels = fabs((double)s[i] - f[i]) * stdev[i / plane] * 255.0;
            worst = fmax(worst, levels);
            differ += levels > 0.5;
            sum += f[i];
        }
        for (size_t i = 0; i < loom_tensor_nbytes(fused); i++)
            h = (h ^ b[i]) * 16777619u;
        printf("  output f32[%lld,%lld,%lld]: sum %.6f, FNV-1a %08x\n", (long long)fused->shape[0],
               (long long)fused->shape[1], (long long)fused->shape[2], sum, h);
        printf("  step by step (v2: uint8 resize) vs fused (weights.transforms(): float resize): %lld of %lld values\n"
               "  differ, by at most %.0f level of 255\n", (long long)differ, (long long)loom_numel(fused), worst);
        if (worst > 1.5)
            rc = DEMO_FAIL;
    }
    loom_attrs_free(a_read);
    loom_attrs_free(a_dec);
    loom_attrs_free(a_resize);
    loom_attrs_free(a_crop);
    loom_attrs_free(a_float);
    loom_attrs_free(a_norm);
    loom_attrs_free(a_pre);
    loom_tensor_free(bytes);
    loom_tensor_free(img);
    loom_tensor_free(small);
    loom_tensor_free(crop);
    loom_tensor_free(x01);
    loom_tensor_free(x);
    loom_tensor_free(fused);
    return rc;
}
