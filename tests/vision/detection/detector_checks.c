/* SPDX-License-Identifier: BSD-3-Clause */
/*
** detector_checks.c - the checks shared by the detector classes' tests
** (detector_checks.h).
*/
#include "detector_checks.h"

#define MAX_OUTPUTS 8

/* A view of the caller's data as a CPU tensor of dtype (code, bits) and shape[0..ndim). */
static loom_tensor view(void *data, uint8_t code, uint8_t bits, int32_t ndim, int64_t *shape)
{
    return (loom_tensor){ .data = data, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = ndim,
                          .dtype = { code, bits, 1 }, .shape = shape };
}

const char *dc_data_file(char *buf, size_t size, const char *dir, const char *file)
{
    snprintf(buf, size, "%s/%s", tu_data_path(dir), file);
    return buf;
}

loom_status dc_create(loom_object **obj, const char *cls, const char *attrs, const char *extra, const char *path)
{
    char text[768];
    snprintf(text, sizeof text, "%s%s%s", attrs ? attrs : "", attrs && extra ? ";" : "", extra ? extra : "");
    loom_attrs *a = attrs || extra ? tu_attrs_text(cls, text) : NULL;
    loom_status st = loom_object_create(obj, cls, a, path);
    loom_attrs_free(a);
    return st;
}

void dc_expect_create_refused(const char *cls, const char *attrs, const char *extra, const char *path,
                              const char *needle)
{
    loom_object *obj = NULL;
    if (dc_create(&obj, cls, attrs, extra, path) == LOOM_OK) {
        loom_object_free(obj);
        fail_msg("%s (%s) of %s was accepted", cls, extra ? extra : "", path);
    }
    if (strstr(loom_last_error(), needle) == NULL)
        fail_msg("%s (%s) of %s: message '%s' lacks '%s'", cls, extra ? extra : "", path, loom_last_error(), needle);
    print_message("refused: %s\n", loom_last_error());
}

loom_status dc_run(loom_object *obj, const char *method, const loom_tensor *const *in, int32_t n, loom_tensor **out,
                   int32_t n_out)
{
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = obj;
    for (int32_t i = 0; i < n_out; i++)
        out[i] = NULL;
    return loom_run(method, in, n, NULL, out, n_out, &opt);
}

void dc_expect_refused(loom_object *obj, const char *method, int32_t n_out, const loom_tensor *const *in, int32_t n,
                       const char *needle)
{
    loom_tensor *out[MAX_OUTPUTS];
    assert_true(n_out <= MAX_OUTPUTS);
    if (dc_run(obj, method, in, n, out, n_out) == LOOM_OK) {
        dt_free(out, n_out);
        fail_msg("%s accepted input that should be refused with '%s'", method, needle);
    }
    if (strstr(loom_last_error(), needle) == NULL)
        fail_msg("%s: message '%s' lacks '%s'", method, loom_last_error(), needle);
    print_message("refused: %s\n", loom_last_error());
}

void dc_check_empty_list_refused(loom_object *obj, const char *method, int32_t n_out)
{
    float none[1] = { 0 };
    int64_t zero[1] = { 0 }, fs[1] = { 0 }, os[1] = { 1 }, ss[2] = { 0, 2 };
    loom_tensor flat = view(none, LOOM_DL_FLOAT, 32, 1, fs), off = view(zero, LOOM_DL_INT, 64, 1, os);
    loom_tensor sz = view(zero, LOOM_DL_INT, 64, 2, ss);
    dc_expect_refused(obj, method, n_out, (const loom_tensor *[]){ &flat, &off, &sz }, 3, "lists no image");
}

void dc_check_empty_batch_refused(loom_object *obj, const char *method, int32_t n_out)
{
    float none[1] = { 0 };
    int64_t es[4] = { 0, 3, 8, 8 };
    loom_tensor empty = view(none, LOOM_DL_FLOAT, 32, 4, es);
    dc_expect_refused(obj, method, n_out, (const loom_tensor *[]){ &empty }, 1, "empty batch");
}

void dc_check_bad_images_refused(loom_object *obj, const char *method, int32_t n_out)
{
    /* wrong dtype: i64 images */
    int64_t px[3] = { 0 }, ps[4] = { 1, 3, 1, 1 };
    loom_tensor ints = view(px, LOOM_DL_INT, 64, 4, ps);
    dc_expect_refused(obj, method, n_out, (const loom_tensor *[]){ &ints }, 1, "images");
    /* one channel */
    int64_t gs[4] = { 1, 1, 4, 4 };
    float grey[16] = { 0 };
    loom_tensor g = view(grey, LOOM_DL_FLOAT, 32, 4, gs);
    dc_expect_refused(obj, method, n_out, (const loom_tensor *[]){ &g }, 1, "[B, 3, H, W]");
}

void dc_run_one_pixel(loom_object *obj, const char *method, loom_tensor **out, int32_t n_out)
{
    float rgb[3] = { 0.2f, 0.5f, 0.8f };
    int64_t ps[4] = { 1, 3, 1, 1 };
    loom_tensor one = view(rgb, LOOM_DL_FLOAT, 32, 4, ps);
    if (dc_run(obj, method, (const loom_tensor *[]){ &one }, 1, out, n_out) != LOOM_OK)
        fail_msg("%s on a 1x1 image: %s", method, loom_last_error());
}

void dc_check_one_pixel_boxes(loom_object *obj, const char *method)
{
    loom_tensor *det[4];
    dc_run_one_pixel(obj, method, det, 4);
    print_message("a 1x1 image: %lld detections\n", (long long)det[0]->shape[0]);
    const float *bx = loom_data(det[0]);
    for (int64_t i = 0; i < det[0]->shape[0] * 4; i++)
        if (!(bx[i] >= 0.0f && bx[i] <= 1.0f))
            fail_msg("a 1x1 image: box coordinate %g outside the image", bx[i]);
    dt_free(det, 4);
}

void dc_golden_inputs(const char *prefix, loom_tensor **in)
{
    in[0] = dt_golden_at(prefix, "images");
    in[1] = dt_golden_at(prefix, "images_offsets");
    in[2] = dt_golden_at(prefix, "original_sizes");
}

int64_t dc_check_detections(loom_object *obj, const char *method, const char *prefix)
{
    char stem[64], what[96];    /* stem: dt_check_ranked's names of the tensors add to it */
    loom_tensor *in[3];
    dc_golden_inputs(prefix, in);
    loom_tensor *det[4];
    if (dc_run(obj, method, (const loom_tensor *const *)in, 3, det, 4) != LOOM_OK)
        fail_msg("%s %s: %s", method, prefix, loom_last_error());
    loom_tensor *wb = dt_golden_at(prefix, "boxes"), *ws = dt_golden_at(prefix, "scores");
    loom_tensor *wl = dt_golden_at(prefix, "labels"), *wo = dt_golden_at(prefix, "offsets");
    snprintf(stem, sizeof stem, "%sdetections", prefix);
    const int64_t tied = dt_check_ranked(stem, det[0], det[1], det[3], wb, ws, wo);
    print_message("%s: boxes within %g px, scores within %g\n", stem, dt_max_diff(det[0], wb, "boxes"),
                  dt_max_diff(det[1], ws, "scores"));
    snprintf(what, sizeof what, "%slabels", prefix);
    tu_assert_identical(det[2], wl, what);
    /* a second call on the same object: the same detections bit for bit */
    loom_tensor *again[4];
    if (dc_run(obj, method, (const loom_tensor *const *)in, 3, again, 4) != LOOM_OK)
        fail_msg("%s %s again: %s", method, prefix, loom_last_error());
    for (int i = 0; i < 4; i++)
        tu_assert_identical(again[i], det[i], "the second call");
    dt_free(again, 4);
    loom_tensor *f[] = { in[0], in[1], in[2], det[0], det[1], det[2], det[3], wb, ws, wl, wo };
    dt_free(f, (int)(sizeof f / sizeof f[0]));
    return tied;
}

void dc_check_intermediates(loom_object *obj, const char *method, const char *prefix, int n_maps, int with_proposals)
{
    const int32_t n_out = n_maps + 1 + (with_proposals ? 2 : 0);
    loom_tensor *in[3], *out[MAX_OUTPUTS];
    assert_true(n_out <= MAX_OUTPUTS);
    dc_golden_inputs(prefix, in);
    if (dc_run(obj, method, (const loom_tensor *const *)in, 3, out, n_out) != LOOM_OK)
        fail_msg("%s %s: %s", method, prefix, loom_last_error());
    dt_check_maps(prefix, out, n_maps, 2e-5);
    loom_tensor *ws = dt_golden_at(prefix, "image_sizes");
    tu_assert_identical(out[n_maps], ws, "image_sizes");
    loom_tensor_free(ws);
    if (with_proposals) {
        loom_tensor *wp = dt_golden_at(prefix, "proposals"), *wo = dt_golden_at(prefix, "proposals_offsets");
        tu_assert_identical(out[n_maps + 2], wo, "proposals offsets");
        const double dp = dt_max_diff(out[n_maps + 1], wp, "proposals");
        if (dp > 1e-3)
            fail_msg("%sproposals differ by %g px > 1e-3", prefix, dp);
        print_message("%sproposals: largest difference %g px\n", prefix, dp);
        loom_tensor_free(wp);
        loom_tensor_free(wo);
    }
    dt_free(in, 3);
    dt_free(out, n_out);
}

void dc_check_full(const char *name, const char *attrs, const char *generator, double nms_iou)
{
    char dir[512], w[600], cls[64], p[640];
    snprintf(cls, sizeof cls, "vision.%s", name);
    snprintf(dir, sizeof dir, "%s/../build-models/vision/%s", tu_data_path(".."), name);
    snprintf(w, sizeof w, "%s/model.safetensors", dir);
    FILE *f = fopen(w, "rb");
    if (f == NULL) {
        print_message("skipped: no %s (%s --full makes it)\n", w, generator);
        skip();
    }
    fclose(f);
    loom_object *obj = NULL;
    if (dc_create(&obj, cls, attrs, NULL, w) != LOOM_OK)
        fail_msg("%s: %s", cls, loom_last_error());
    loom_tensor *in = NULL, *wb = NULL, *ws = NULL, *wl = NULL;
    const char *names[4] = { "input", "boxes", "scores", "labels" };
    loom_tensor **dst[4] = { &in, &wb, &ws, &wl };
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/%s.npy", dir, names[i]);
        if (loom_npy_read(dst[i], p) != LOOM_OK)
            fail_msg("%s: %s", p, loom_last_error());
    }
    loom_tensor *det[4];
    if (dc_run(obj, cls, (const loom_tensor *const *)&in, 1, det, 4) != LOOM_OK)
        fail_msg("%s: %s", cls, loom_last_error());
    int64_t offs[2] = { 0, wb->shape[0] }, os[1] = { 2 };
    loom_tensor wo = view(offs, LOOM_DL_INT, 64, 1, os);
    dt_check_near_ties(name, det, wb, ws, wl, &wo, 1e-6, nms_iou);
    loom_tensor *fr[] = { in, det[0], det[1], det[2], det[3], wb, ws, wl };
    dt_free(fr, (int)(sizeof fr / sizeof fr[0]));
    loom_object_free(obj);
}
