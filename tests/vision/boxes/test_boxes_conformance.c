/*
** test_boxes_conformance.c - every non-cpu kernel of the box ops against
** the cpu kernel on generated scenes (sizes around the 64-box blocks of
** the cuda nms: 1, 63, 64, 65, 700, 3000), as ggml's test-backend-ops does.
** Runs only when loom_device_count() reports a CUDA device; skips otherwise.
**
** Tolerances: index outputs (nms, batched_nms, remove_small_boxes) must be
** identical; the float ops repeat the cpu's operation order, but nvcc may
** fuse a multiply and an add, so they agree to a few ulps of the dtype.
*/
#include "boxes_test.h"

typedef struct target {
    const char *backend;
    loom_dl_device device;
} target;

static uint32_t lcg(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

/* n boxes in a 300 x 300 image, sides 3..33, as dtype; scores with ties. */
static void scene(int64_t n, loom_dtype dtype, uint32_t seed, loom_tensor **boxes, loom_tensor **scores,
                  loom_tensor **idxs)
{
    const int64_t shape[2] = { n, 4 };
    loom_tensor *b = bt_zeros(LOOM_DTYPE_F64, 2, shape), *s = bt_zeros(LOOM_DTYPE_F64, 1, &n);
    *idxs = bt_zeros(LOOM_DTYPE_I64, 1, &n);
    double *pb = loom_data(b), *ps = loom_data(s);
    int64_t *pi = loom_data(*idxs);
    for (int64_t i = 0; i < n; i++) {
        double x = lcg(&seed) % 30000 / 100.0, y = lcg(&seed) % 30000 / 100.0;
        pb[4 * i] = x;
        pb[4 * i + 1] = y;
        pb[4 * i + 2] = x + 3 + lcg(&seed) % 3000 / 100.0;
        pb[4 * i + 3] = y + 3 + lcg(&seed) % 3000 / 100.0;
        ps[i] = (double)(lcg(&seed) % 50) / 50.0;
        pi[i] = (int64_t)(lcg(&seed) % 7);
    }
    *boxes = tu_cast(b, dtype);
    *scores = tu_cast(s, dtype);
    loom_tensor_free(b);
    loom_tensor_free(s);
}

static void compare(const char *op, const target *tg, loom_tensor *const *in, int n_in, const loom_attrs *a,
                    double tol, const char *what)
{
    loom_tensor *ref, *got, *dev_in[4], *host;
    if (tu_call(op, (const loom_tensor *const *)in, n_in, a, "cpu", &ref) != LOOM_OK)
        fail_msg("%s on cpu: %s", op, loom_last_error());
    for (int i = 0; i < n_in; i++)
        assert_int_equal(loom_tensor_copy_to(&dev_in[i], in[i], &tg->device), LOOM_OK);
    if (tu_call(op, (const loom_tensor *const *)dev_in, n_in, a, tg->backend, &got) != LOOM_OK)
        fail_msg("%s on %s: %s", op, tg->backend, loom_last_error());
    assert_int_equal(loom_tensor_copy_to(&host, got, NULL), LOOM_OK);
    char w[160];
    snprintf(w, sizeof w, "%s %s %s", op, tg->backend, what);
    if (loom_tensor_dtype_of(ref) == LOOM_DTYPE_I64)
        tu_assert_identical(host, ref, w);
    else
        bt_assert_close(host, ref, tol, tol, w);
    for (int i = 0; i < n_in; i++)
        loom_tensor_free(dev_in[i]);
    loom_tensor_free(ref);
    loom_tensor_free(got);
    loom_tensor_free(host);
}

static int check_op(const char *op, const target *tg, uint64_t dtypes)
{
    static const int64_t sizes[] = { 1, 63, 64, 65, 700, 3000 };
    static const struct { loom_dtype dt; double tol; } types[] = {
        { LOOM_DTYPE_F32, 1e-5 }, { LOOM_DTYPE_F64, 1e-12 }, { LOOM_DTYPE_F16, 4e-3 },
    };
    int cases = 0;
    for (size_t t = 0; t < 3; t++) {
        if (dtypes != 0 && !(dtypes & LOOM_DTYPE_BIT(types[t].dt)))
            continue;
        const char *dn = loom_dtype_name(types[t].dt);
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
            loom_tensor *b, *s, *idx;
            int64_t n = sizes[z];
            scene(n, types[t].dt, (uint32_t)(z * 31 + t), &b, &s, &idx);
            loom_attrs *a = bt_attrs();
            char what[64];
            snprintf(what, sizeof what, "%s n=%lld", dn, (long long)n);
            if (strcmp(op, "vision.nms") == 0 || strcmp(op, "vision.batched_nms") == 0) {
                assert_int_equal(loom_attrs_set_float(a, "iou_threshold", 0.3), LOOM_OK);
                loom_tensor *in[3] = { b, s, idx };
                compare(op, tg, in, strcmp(op, "vision.batched_nms") == 0 ? 3 : 2, a, 0, what);
            } else if (strstr(op, "_loss") != NULL) {
                assert_int_equal(loom_attrs_set_string(a, "reduction", z % 2 ? "sum" : "none"), LOOM_OK);
                loom_tensor *b2, *s2, *i2;
                scene(n, types[t].dt, (uint32_t)(z * 31 + t + 7), &b2, &s2, &i2);
                compare(op, tg, (loom_tensor *[]){ b, b2 }, 2, a, types[t].tol * (z % 2 ? 10 : 1), what);
                loom_tensor_free(b2);
                loom_tensor_free(s2);
                loom_tensor_free(i2);
            } else if (strstr(op, "box_iou") != NULL) {
                if (n <= 700)       /* [n, n] matrices: keep the cpu reference quick */
                    compare(op, tg, (loom_tensor *[]){ b, b }, 2, NULL, types[t].tol, what);
            } else if (strcmp(op, "vision.box_convert") == 0) {
                assert_int_equal(loom_attrs_set_string(a, "in_fmt", "cxcywh"), LOOM_OK);
                assert_int_equal(loom_attrs_set_string(a, "out_fmt", "xywh"), LOOM_OK);
                compare(op, tg, (loom_tensor *[]){ b }, 1, a, types[t].tol, what);
            } else if (strcmp(op, "vision.clip_boxes_to_image") == 0) {
                assert_int_equal(loom_attrs_set_ints(a, "size", (const int64_t[]){ 200, 250 }, 2), LOOM_OK);
                compare(op, tg, (loom_tensor *[]){ b }, 1, a, 0, what);
            } else if (strcmp(op, "vision.remove_small_boxes") == 0) {
                assert_int_equal(loom_attrs_set_float(a, "min_size", 12.0), LOOM_OK);
                compare(op, tg, (loom_tensor *[]){ b }, 1, a, 0, what);
            } else if (strcmp(op, "vision.box_area") == 0) {
                compare(op, tg, (loom_tensor *[]){ b }, 1, NULL, types[t].tol, what);
            } else {
                fail_msg("%s has a %s kernel but no conformance generator", op, tg->backend);
            }
            loom_attrs_free(a);
            loom_tensor_free(b);
            loom_tensor_free(s);
            loom_tensor_free(idx);
            cases++;
        }
    }
    return cases;
}

static void cuda_box_kernels_match_cpu(void **state)
{
    (void)state;
    for (int64_t d = 0; d < loom_device_count(); d++) {
        loom_device_info di = LOOM_DEVICE_INFO_INIT;
        if (loom_device_at(d, &di) != LOOM_OK || di.device.device_type != LOOM_DEVICE_CUDA)
            continue;
        print_message("CUDA device: %s\n", di.description);
        int kernels = 0;
        for (int64_t o = 0; o < loom_op_count(); o++) {
            const loom_op_schema *s = loom_op_schema_at(o);
            if (strncmp(s->name, "vision.", 7) != 0)
                continue;
            const loom_op *op = loom_op_find(s->name);
            for (int64_t k = 0; k < loom_op_kernel_count(op); k++) {
                loom_kernel_info ki = LOOM_KERNEL_INFO_INIT;
                assert_int_equal(loom_op_kernel_at(op, k, &ki), LOOM_OK);
                if (ki.device_type != LOOM_DEVICE_CUDA)
                    continue;
                int is_box = 0;
                static const char *const box_ops[] = {
                    "vision.nms", "vision.batched_nms", "vision.box_iou", "vision.generalized_box_iou",
                    "vision.distance_box_iou", "vision.complete_box_iou", "vision.generalized_box_iou_loss",
                    "vision.distance_box_iou_loss", "vision.complete_box_iou_loss", "vision.box_convert",
                    "vision.box_area", "vision.clip_boxes_to_image", "vision.remove_small_boxes",
                };
                for (size_t i = 0; i < sizeof box_ops / sizeof box_ops[0]; i++)
                    is_box |= strcmp(s->name, box_ops[i]) == 0;
                if (!is_box)
                    continue;
                target tg = { ki.backend, di.device };
                int cases = check_op(s->name, &tg, ki.dtypes);
                print_message("%s [%s, %s]: %d cases agree with cpu\n", s->name, ki.backend, ki.impl, cases);
                kernels++;
            }
        }
        assert_true(kernels > 0);
        return;
    }
    print_message("no CUDA device: cuda box kernels not run\n");
    skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cuda_box_kernels_match_cpu),
    };
    return cmocka_run_group_tests_name("vision_boxes_conformance", tests, tu_setup, tu_teardown);
}
