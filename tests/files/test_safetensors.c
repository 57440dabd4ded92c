/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/files/test_safetensors.c - safetensors files: round trips, strict
** validation of lying headers, and corrupt files that must fail cleanly. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tu_files.h"

static void assert_fails_with(loom_status s, loom_status want, const char *fragment)
{
    if (s != want)
        fail_msg("status %d, wanted %d (%s)", s, want, loom_last_error());
    if (strstr(loom_last_error(), fragment) == NULL)
        fail_msg("message \"%s\" lacks \"%s\"", loom_last_error(), fragment);
}

/* Write N, the header text and ndata zero bytes (or data) to tu_scratch_dir/name. */
static char *st_file(const char *name, uint64_t n, const char *header, size_t hbytes,
                     const void *data, size_t ndata)
{
    unsigned char *b = calloc(1, 8 + hbytes + ndata + 1);
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(n >> (8 * i));
    memcpy(b + 8, header, hbytes);
    if (data)
        memcpy(b + 8 + hbytes, data, ndata);
    char *path = tu_path_in(tu_scratch_dir, name);
    assert_int_equal(tu_write_bytes(path, b, 8 + hbytes + ndata), 0);
    free(b);
    return path;
}

static loom_status open_header(const char *header, size_t ndata, loom_safetensors **st)
{
    char *path = st_file("h.safetensors", strlen(header), header, strlen(header), NULL, ndata);
    loom_status s = loom_safetensors_open(st, path);
    free(path);
    return s;
}

/* ------------------------------------------------------------ round trips */

static void every_supported_dtype_round_trips(void **state)
{
    (void)state;
    const char *names[LOOM_DTYPE_COUNT + 2];
    loom_tensor *tensors[LOOM_DTYPE_COUNT + 2];
    char name_buf[LOOM_DTYPE_COUNT][32];
    int64_t count = 0;
    const int64_t shape[3] = { 2, 3, 5 };
    /* given in reverse name order: the file keeps it, the reader sorts */
    for (int d = LOOM_DTYPE_COUNT - 1; d >= 1; d--) {
        if (loom__dtype((loom_dtype)d)->safetensors == NULL)
            continue;
        snprintf(name_buf[d], sizeof name_buf[d], "t.%s", loom_dtype_name((loom_dtype)d));
        names[count] = name_buf[d];
        tensors[count++] = tu_pattern_tensor((loom_dtype)d, 1 + d % 3, shape, (uint64_t)d);
    }
    assert_int_equal(count, 13);
    const int64_t empty_shape[2] = { 0, 4 };
    names[count] = "scalar";
    tensors[count++] = tu_pattern_tensor(LOOM_DTYPE_F32, 0, NULL, 99);
    names[count] = "empty";
    tensors[count++] = tu_pattern_tensor(LOOM_DTYPE_F16, 2, empty_shape, 1);

    char *path = tu_path_in(tu_scratch_dir, "all.safetensors");
    assert_int_equal(loom_safetensors_write(path, names, (const loom_tensor *const *)tensors, count),
                     LOOM_OK);

    size_t n;
    unsigned char *raw = tu_read_bytes(path, &n);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--)
        hlen = hlen << 8 | raw[i];
    assert_int_equal(hlen % 8, 0);
    char first[48];
    snprintf(first, sizeof first, "{\"%s\":{\"dtype\":", names[0]);
    assert_memory_equal(raw + 8, first, strlen(first));
    free(raw);

    loom_safetensors *st = NULL;
    assert_int_equal(loom_safetensors_open(&st, path), LOOM_OK);
    assert_int_equal(loom_safetensors_count(st), count);
    for (int64_t i = 1; i < count; i++)
        assert_true(strcmp(loom_safetensors_name(st, i - 1), loom_safetensors_name(st, i)) < 0);
    for (int64_t i = 0; i < count; i++) {
        const loom_tensor *t = NULL;
        assert_int_equal(loom_safetensors_get(st, names[i], &t), LOOM_OK);
        assert_true(tu_same_shape(tensors[i], t));
        assert_int_equal(t->device.device_type, LOOM_DEVICE_CPU);
        assert_null(t->strides);
        size_t size = loom__dtype(loom_tensor_dtype_of(t))->size;
        assert_int_equal((uintptr_t)loom_data(t) % size, 0);
        assert_memory_equal(loom_data(t), loom_data(tensors[i]), loom__tensor_nbytes(t));
        const loom_tensor *same = NULL;
        assert_int_equal(loom__safetensors_get(st, names[i], &same), LOOM_OK);
        assert_ptr_equal(same, t);
        loom_tensor_free(tensors[i]);
    }
    loom_safetensors_close(st);
    free(path);
}

static void names_are_escaped_and_strided_tensors_gathered(void **state)
{
    (void)state;
    int32_t data[6] = { 0, 1, 2, 3, 4, 5 };
    int64_t shape[2] = { 3, 2 }, strides[2] = { 1, 3 };
    loom_tensor view = { .data = data, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = 2,
                       .dtype = { LOOM_DL_INT, 32, 1 }, .shape = shape, .strides = strides };
    const int64_t one = 3;
    loom_tensor *u8 = tu_pattern_tensor(LOOM_DTYPE_U8, 1, &one, 4);  /* leaves the next misaligned */
    const char *names[3] = { "quote\"back\\slash\ttab", "\xc3\xbcnicode", "view" };
    const loom_tensor *tensors[3] = { u8, &view, &view };
    char *path = tu_path_in(tu_scratch_dir, "names.safetensors");
    assert_int_equal(loom_safetensors_write(path, names, tensors, 3), LOOM_OK);

    loom_safetensors *st = NULL;
    assert_int_equal(loom_safetensors_open(&st, path), LOOM_OK);
    const int32_t want[6] = { 0, 3, 1, 4, 2, 5 };
    for (int i = 0; i < 3; i++) {
        const loom_tensor *t = NULL;
        assert_int_equal(loom_safetensors_get(st, names[i], &t), LOOM_OK);
        if (i == 0) {
            assert_memory_equal(loom_data(t), loom_data(u8), 3);
            continue;
        }
        assert_int_equal((uintptr_t)loom_data(t) % 4, 0);
        assert_memory_equal(loom_data(t), want, sizeof want);
    }
    loom_safetensors_close(st);
    loom_tensor_free(u8);
    free(path);
}

/* Tensors on another device are copied to the host before writing. */
static void device_tensors_are_copied_to_host(void **state)
{
    (void)state;
    const int64_t shape[2] = { 5, 2 };
    loom_tensor *h = tu_pattern_tensor(LOOM_DTYPE_BF16, 2, shape, 12);
    loom_tensor *d = tu_to_fake_device(h);
    assert_non_null(d);
    const char *names[2] = { "on_device", "on_host" };
    const loom_tensor *ts[2] = { d, h };
    char *path = tu_path_in(tu_scratch_dir, "device.safetensors");
    assert_int_equal(loom_safetensors_write(path, names, ts, 2), LOOM_OK);
    loom_safetensors *st = NULL;
    assert_int_equal(loom_safetensors_open(&st, path), LOOM_OK);
    for (int i = 0; i < 2; i++) {
        const loom_tensor *t = NULL;
        assert_int_equal(loom_safetensors_get(st, names[i], &t), LOOM_OK);
        assert_memory_equal(loom_data(t), loom_data(h), loom__tensor_nbytes(h));
    }
    loom_safetensors_close(st);
    loom_tensor_free(d);
    loom_tensor_free(h);
    free(path);
}

static void empty_file_list_and_metadata_are_valid(void **state)
{
    (void)state;
    char *path = tu_path_in(tu_scratch_dir, "none.safetensors");
    assert_int_equal(loom_safetensors_write(path, NULL, NULL, 0), LOOM_OK);
    loom_safetensors *st = NULL;
    assert_int_equal(loom_safetensors_open(&st, path), LOOM_OK);
    assert_int_equal(loom_safetensors_count(st), 0);
    assert_null(loom_safetensors_name(st, 0));
    loom_safetensors_close(st);
    free(path);

    const char *h = "{\"__metadata__\":{\"format\":\"pt\"},"
                    "\"w\":{\"data_offsets\":[0,4],\"shape\":[],\"dtype\":\"I32\"}}";
    assert_int_equal(open_header(h, 4, &st), LOOM_OK);
    assert_int_equal(loom_safetensors_count(st), 1);
    assert_string_equal(loom_safetensors_name(st, 0), "w");
    loom_safetensors_close(st);
}

/* safetensors does not align data: a misaligned tensor is copied at open. */
static void misaligned_data_is_copied_aligned(void **state)
{
    (void)state;
    const char *h = "{\"a\":{\"dtype\":\"F64\",\"shape\":[2],\"data_offsets\":[0,16]}}";
    char header[128];
    size_t hb = strlen(h);
    memcpy(header, h, hb);
    while ((8 + hb) % 8 != 3)
        header[hb++] = ' ';
    const double vals[2] = { 1.5, -2.25 };
    char *path = st_file("odd.safetensors", hb, header, hb, vals, sizeof vals);
    loom_safetensors *st = NULL;
    assert_int_equal(loom_safetensors_open(&st, path), LOOM_OK);
    const loom_tensor *t = NULL;
    assert_int_equal(loom_safetensors_get(st, "a", &t), LOOM_OK);
    assert_int_equal((uintptr_t)loom_data(t) % 8, 0);
    assert_true(((const double *)loom_data(t))[1] == -2.25);
    loom_safetensors_close(st);
    free(path);
}

/* A file written by the reference library (tools/gen_npy_fixtures.py). */
static void reference_library_file_loads(void **state)
{
    (void)state;
    const char *path = tu_data_path("files/reference.safetensors");
    loom_safetensors *st = NULL;
    if (loom_safetensors_open(&st, path) != LOOM_OK)
        fail_msg("%s", loom_last_error());
    assert_int_equal(loom_safetensors_count(st), 3);
    assert_string_equal(loom_safetensors_name(st, 0), "bias");
    assert_string_equal(loom_safetensors_name(st, 1), "mask");
    assert_string_equal(loom_safetensors_name(st, 2), "weight");
    const loom_tensor *t = NULL;
    assert_int_equal(loom_safetensors_get(st, "weight", &t), LOOM_OK);
    assert_int_equal(loom_tensor_dtype_of(t), LOOM_DTYPE_F32);
    assert_int_equal(t->ndim, 2);
    assert_int_equal(t->shape[1], 3);
    for (int i = 0; i < 6; i++)
        assert_true(((const float *)loom_data(t))[i] == 0.25f * (float)i);
    assert_int_equal(loom_safetensors_get(st, "bias", &t), LOOM_OK);
    assert_int_equal(((const int64_t *)loom_data(t))[0], -1);
    assert_int_equal(((const int64_t *)loom_data(t))[1], 2);
    assert_int_equal(loom_safetensors_get(st, "mask", &t), LOOM_OK);
    assert_int_equal(loom_tensor_dtype_of(t), LOOM_DTYPE_U8);
    assert_memory_equal(loom_data(t), "\1\0\1", 3);
    loom_safetensors_close(st);
}

/* ------------------------------------------------------- refused input */

static void writes_of_bad_lists_are_refused(void **state)
{
    (void)state;
    const int64_t shape[1] = { 2 };
    loom_tensor *c = tu_pattern_tensor(LOOM_DTYPE_C64, 1, shape, 1);
    loom_tensor *f = tu_pattern_tensor(LOOM_DTYPE_F32, 1, shape, 1);
    char *path = tu_path_in(tu_scratch_dir, "refused.safetensors");
    const loom_tensor *tc[1] = { c }, *tf2[2] = { f, f };

    assert_fails_with(loom_safetensors_write(path, (const char *[]){ "z" }, tc, 1), LOOM_ENOTSUP, "c64");
    assert_fails_with(loom_safetensors_write(path, (const char *[]){ "a", "a" }, tf2, 2), LOOM_EINVAL,
                      "appears twice");
    assert_fails_with(loom_safetensors_write(path, (const char *[]){ "__metadata__" }, tf2, 1),
                      LOOM_EINVAL, "reserved");
    assert_fails_with(loom_safetensors_write(path, (const char *[]){ NULL }, tf2, 1), LOOM_EINVAL, "NULL");
    assert_fails_with(loom_safetensors_write(path, (const char *[]){ "\xff" }, tf2, 1), LOOM_EINVAL,
                      "UTF-8");
    assert_fails_with(loom_safetensors_write(path, NULL, tf2, 1), LOOM_EINVAL, "invalid tensor list");
    assert_fails_with(loom_safetensors_write(path, NULL, NULL, -1), LOOM_EINVAL, "invalid tensor list");
    assert_fails_with(loom_safetensors_write(NULL, NULL, NULL, 0), LOOM_EINVAL, "path");
    const loom_tensor *tn[1] = { NULL };
    assert_fails_with(loom_safetensors_write(path, (const char *[]){ "x" }, tn, 1), LOOM_EINVAL, "'x'");
    /* nothing was written by any refused call */
    assert_int_equal(access(path, F_OK), -1);
    loom_tensor_free(c);
    loom_tensor_free(f);
    free(path);
}

static void lying_headers_are_refused_with_a_reason(void **state)
{
    (void)state;
#define T(dt, shape, b, e) "{\"dtype\":\"" dt "\",\"shape\":" shape ",\"data_offsets\":[" #b "," #e "]}"
    static const struct { const char *header; size_t ndata; const char *fragment; } cases[] = {
        { "{\"a\":" T("F32", "[4]", 0, 8) "}", 8, "span 8 bytes but" },
        { "{\"a\":" T("F32", "[2]", 0, 8) ",\"b\":" T("F32", "[2]", 4, 12) "}", 12, "overlaps" },
        { "{\"a\":" T("F32", "[1]", 0, 4) ",\"b\":" T("F32", "[1]", 8, 12) "}", 12, "unused bytes 4..8" },
        { "{\"a\":" T("F32", "[1]", 0, 4) "}", 8, "cover 4 bytes of a 8-byte" },
        { "{\"a\":" T("F32", "[1]", 4, 8) "}", 8, "unused bytes 0..4" },
        { "{\"a\":" T("F32", "[2]", 0, 8) "}", 4, "outside the data area" },
        { "{\"a\":" T("F32", "[0]", 8, 0) "}", 8, "outside the data area" },
        { "{\"a\":" T("F32", "[1]", 0, 4) ",\"a\":" T("F32", "[1]", 4, 8) "}", 8, "'a' appears twice" },
        { "{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
          "key 'dtype' appears twice" },
        { "{\"a\":" T("F8_E5M2", "[1]", 0, 1) "}", 1, "unsupported dtype 'F8_E5M2'" },
        { "{\"a\":" T("U64", "[1]", 0, 8) "}", 8, "unsupported dtype 'U64'" },
        { "{\"a\":" T("C64", "[1]", 0, 8) "}", 8, "unsupported dtype 'C64'" },
        { "{\"a\":" T("f32", "[1]", 0, 4) "}", 4, "unsupported dtype 'f32'" },
        { "{\"a\":{\"dtype\":5,\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "unsupported dtype" },
        { "{\"a\":" T("F32", "[-1]", 0, 4) "}", 4, "shape[0] is not a non-negative integer" },
        { "{\"a\":" T("F32", "[1.5]", 0, 4) "}", 4, "shape[0] is not" },
        { "{\"a\":" T("F32", "[1, 1e300]", 0, 4) "}", 4, "shape[1] is not" },
        { "{\"a\":" T("F32", "[\"1\"]", 0, 4) "}", 4, "shape[0] is not" },
        { "{\"a\":" T("F32", "4", 0, 4) "}", 4, "shape must be an array" },
        { "{\"a\":" T("F32", "[1,1,1,1,1,1,1,1,1,1,1,1,1]", 0, 4) "}", 4, "13 dimensions" },
        { "{\"a\":" T("F32", "[4294967296,4294967296,16]", 0, 4) "}", 4, "overflows 64 bits" },
        { "{\"a\":" T("U8", "[100000000000000000]", 0, 4) "}", 4, "shape[0] is not" },
        { "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,4]}}", 4, "data_offsets must be" },
        { "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[\"0\",4]}}", 4, "data_offsets must be" },
        { "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-4,0]}}", 4, "data_offsets must be" },
        { "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":{}}}", 4, "data_offsets must be" },
        { "{\"a\":5}", 0, "entry must be an object" },
        { "{\"a\":[]}", 0, "entry must be an object" },
        { "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"x\":1}}", 4, "unexpected key 'x'" },
        { "{\"a\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", 4, "missing 'shape'" },
        { "{\"a\":{}}", 0, "missing 'dtype'" },
        { "{\"__metadata__\":5}", 0, "'__metadata__' must be" },
        { "{\"__metadata__\":{\"a\":1}}", 0, "is not a string" },
        { "{\"__metadata__\":{},\"__metadata__\":{}}", 0, "'__metadata__' appears twice" },
        { "[1,2]", 0, "does not start with '{'" },
        { "\"x\"", 0, "does not start with '{'" },
        { " {}", 0, "does not start with '{'" },
        { "{\"a\":", 0, "not valid JSON" },
        { "{}x", 0, "unexpected bytes after" },
        { "{} {}", 0, "unexpected bytes after" },
        { "{\"\xff\":{}}", 0, "not valid UTF-8" },
        { "{\"\xed\xa0\x80\":{}}", 0, "not valid UTF-8" },
        { "{", 0, "not valid JSON" },
        /* cJSON would cut these names at the NUL and serve "a" */
        { "{\"a\\u0000b\":" T("F32", "[1]", 0, 4) "}", 4, "escaped NUL" },
        { "{\"a\\u0000\":" T("F32", "[1]", 0, 4) ",\"a\":" T("F32", "[1]", 4, 8) "}", 8, "escaped NUL" },
        { "{\"__metadata__\":{\"k\":\"v\\u0000\"}}", 0, "escaped NUL" },
    };
#undef T
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        loom_safetensors *st = (loom_safetensors *)&st;   /* must be reset to NULL */
        loom_status s = open_header(cases[i].header, cases[i].ndata, &st);
        if (s != LOOM_EFORMAT)
            fail_msg("case %zu (%s): status %d", i, cases[i].header, s);
        assert_null(st);
        if (strstr(loom_last_error(), cases[i].fragment) == NULL
            || strstr(loom_last_error(), "h.safetensors") == NULL)
            fail_msg("case %zu: message \"%s\" lacks \"%s\" or the file name", i,
                     loom_last_error(), cases[i].fragment);
    }
}

/* "\\u0000" in JSON is a backslash and the text u0000, not a NUL. */
static void escaped_backslash_before_u0000_is_text(void **state)
{
#define T(dt, shape, b, e) "{\"dtype\":\"" dt "\",\"shape\":" shape ",\"data_offsets\":[" #b "," #e "]}"
    loom_safetensors *st = NULL;
    const loom_tensor *t = NULL;
    (void)state;
    assert_int_equal(open_header("{\"a\\\\u0000\":" T("F32", "[1]", 0, 4) "}", 4, &st), LOOM_OK);
#undef T
    assert_int_equal(loom_safetensors_count(st), 1);
    assert_string_equal(loom_safetensors_name(st, 0), "a\\u0000");
    assert_int_equal(loom_safetensors_get(st, "a\\u0000", &t), LOOM_OK);
    assert_int_equal(loom_safetensors_get(st, "a", &t), LOOM_ENOENT);
    loom_safetensors_close(st);
}

static void bad_length_fields_are_refused(void **state)
{
    (void)state;
    static const struct { uint64_t n; size_t hbytes; const char *fragment; } cases[] = {
        { 100, 10, "runs past the end" },
        { UINT64_C(1) << 63, 10, "exceeds" },
        { UINT64_MAX, 10, "exceeds" },
        { 100000001, 10, "exceeds" },
        { 0, 10, "does not start with '{'" },
        { 11, 10, "runs past the end" },
    };
    const char header[16] = "{}        ";
    loom_safetensors *st = NULL;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *path = st_file("len.safetensors", cases[i].n, header, cases[i].hbytes, NULL, 0);
        assert_fails_with(loom_safetensors_open(&st, path), LOOM_EFORMAT, cases[i].fragment);
        assert_null(st);
        free(path);
    }
    char *path = tu_path_in(tu_scratch_dir, "short.safetensors");
    for (size_t len = 0; len < 8; len++) {
        assert_int_equal(tu_write_bytes(path, "\x02\0\0\0\0\0\0", len), 0);
        assert_fails_with(loom_safetensors_open(&st, path), LOOM_EFORMAT, "too short");
    }
    free(path);
}

static void api_misuse_and_missing_names(void **state)
{
    (void)state;
    loom_safetensors *st = NULL;
    char *missing = tu_path_in(tu_scratch_dir, "missing.safetensors");
    assert_fails_with(loom_safetensors_open(&st, missing), LOOM_ENOENT, missing);
    assert_fails_with(loom_safetensors_open(&st, tu_scratch_dir), LOOM_EIO, tu_scratch_dir);
    assert_int_equal(loom_safetensors_open(NULL, missing), LOOM_EINVAL);
    assert_int_equal(loom_safetensors_open(&st, NULL), LOOM_EINVAL);
    loom_safetensors_close(NULL);
    assert_int_equal(loom_safetensors_count(NULL), 0);
    assert_null(loom_safetensors_name(NULL, 0));

    const char *h = "{\"w\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]}}";
    assert_int_equal(open_header(h, 2, &st), LOOM_OK);
    const loom_tensor *t = (const loom_tensor *)&t;
    assert_fails_with(loom_safetensors_get(st, "nope", &t), LOOM_ENOENT, "'nope'");
    assert_non_null(strstr(loom_last_error(), "h.safetensors"));
    assert_null(t);
    assert_int_equal(loom_safetensors_get(st, NULL, &t), LOOM_EINVAL);
    assert_int_equal(loom_safetensors_get(st, "w", NULL), LOOM_EINVAL);
    assert_int_equal(loom_safetensors_get(NULL, "w", &t), LOOM_EINVAL);
    assert_null(loom_safetensors_name(st, -1));
    assert_null(loom_safetensors_name(st, 1));
    loom_safetensors_close(st);
    free(missing);
}

/* A valid three-tensor file written by loom, as bytes. */
static unsigned char *sample_file(size_t *n)
{
    const int64_t s1[2] = { 2, 3 }, s2[1] = { 4 };
    loom_tensor *a = tu_pattern_tensor(LOOM_DTYPE_F32, 2, s1, 1);
    loom_tensor *b = tu_pattern_tensor(LOOM_DTYPE_I64, 1, s2, 2);
    loom_tensor *c = tu_pattern_tensor(LOOM_DTYPE_BF16, 0, NULL, 3);
    const char *names[3] = { "layer.weight", "layer.bias", "scale" };
    const loom_tensor *ts[3] = { a, b, c };
    char *path = tu_path_in(tu_scratch_dir, "sample.safetensors");
    assert_int_equal(loom_safetensors_write(path, names, ts, 3), LOOM_OK);
    unsigned char *raw = tu_read_bytes(path, n);
    loom_tensor_free(a);
    loom_tensor_free(b);
    loom_tensor_free(c);
    free(path);
    return raw;
}

static void every_truncation_fails_cleanly(void **state)
{
    (void)state;
    size_t n;
    unsigned char *full = sample_file(&n);
    char *path = tu_path_in(tu_scratch_dir, "trunc.safetensors");
    for (size_t len = 0; len < n; len++) {
        assert_int_equal(tu_write_bytes(path, full, len), 0);
        loom_safetensors *st = NULL;
        loom_status s = loom_safetensors_open(&st, path);
        if (s == LOOM_OK)
            fail_msg("prefix of %zu bytes was accepted", len);
        assert_int_equal(s, LOOM_EFORMAT);
        assert_non_null(strstr(loom_last_error(), "trunc.safetensors"));
    }
    assert_int_equal(tu_write_bytes(path, full, n), 0);
    loom_safetensors *st = NULL;
    assert_int_equal(loom_safetensors_open(&st, path), LOOM_OK);
    assert_int_equal(loom_safetensors_count(st), 3);
    loom_safetensors_close(st);
    free(path);
    free(full);
}

/* Seeded random edits of the length field and the header: each open either
** fails with a message or gives tensors that lie inside the file. */
static void random_corruption_never_crashes(void **state)
{
    (void)state;
    static const char alphabet[] = "{}[]\",:  0123456789-.eE_FIUBOLabdfhnopst\\";
    size_t n0;
    unsigned char *base = sample_file(&n0);
    size_t h0 = 8 + (base[0] | (size_t)base[1] << 8);
    char *path = tu_path_in(tu_scratch_dir, "fuzz.safetensors");
    uint64_t rng = 0xfeed;
    int ok = 0, failed = 0;
    unsigned char *b = malloc(n0 + 16);
    for (int iter = 0; iter < 3000; iter++) {
        size_t n = n0, hend = h0;
        memcpy(b, base, n0);
        int edits = 1 + (int)tu_rng_below(&rng, 3);
        for (int e = 0; e < edits; e++) {
            char ch = alphabet[tu_rng_below(&rng, sizeof alphabet - 1)];
            size_t p = 8 + tu_rng_below(&rng, hend - 8);
            switch (tu_rng_below(&rng, 6)) {
            case 0: b[p] = (unsigned char)tu_rng_next(&rng); break;
            case 1: b[p] = (unsigned char)ch; break;
            case 2:   /* insert, keeping N */
                memmove(b + p + 1, b + p, n - p);
                b[p] = (unsigned char)ch;
                n++, hend++;
                break;
            case 3:   /* delete, keeping N */
                memmove(b + p, b + p + 1, n - p - 1);
                n--, hend--;
                break;
            case 4: b[tu_rng_below(&rng, 8)] ^= (unsigned char)(1u << tu_rng_below(&rng, 8)); break;
            default: b[0] = (unsigned char)(b[0] + (int)tu_rng_below(&rng, 17) - 8); break;
            }
        }
        assert_int_equal(tu_write_bytes(path, b, n), 0);
        loom_safetensors *st = NULL;
        loom_status s = loom_safetensors_open(&st, path);
        if (s == LOOM_OK) {
            ok++;
            for (int64_t i = 0; i < loom_safetensors_count(st); i++) {
                const loom_tensor *t = NULL;
                assert_int_equal(loom_safetensors_get(st, loom_safetensors_name(st, i), &t), LOOM_OK);
                size_t nbytes = loom__tensor_nbytes(t);
                assert_true(nbytes <= n);
                volatile unsigned sum = 0;    /* touch every byte */
                for (size_t k = 0; k < nbytes; k++)
                    sum += ((const unsigned char *)loom_data(t))[k];
                (void)sum;
            }
            loom_safetensors_close(st);
        } else {
            failed++;
            assert_true(s < 0);
            assert_null(st);
            assert_non_null(strstr(loom_last_error(), "fuzz.safetensors"));
        }
    }
    assert_true(failed > 0);
    print_message("corruption: %d accepted, %d refused\n", ok, failed);
    free(b);
    free(base);
    free(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_supported_dtype_round_trips),
        cmocka_unit_test(names_are_escaped_and_strided_tensors_gathered),
        cmocka_unit_test(device_tensors_are_copied_to_host),
        cmocka_unit_test(empty_file_list_and_metadata_are_valid),
        cmocka_unit_test(misaligned_data_is_copied_aligned),
        cmocka_unit_test(reference_library_file_loads),
        cmocka_unit_test(writes_of_bad_lists_are_refused),
        cmocka_unit_test(lying_headers_are_refused_with_a_reason),
        cmocka_unit_test(escaped_backslash_before_u0000_is_text),
        cmocka_unit_test(bad_length_fields_are_refused),
        cmocka_unit_test(api_misuse_and_missing_names),
        cmocka_unit_test(every_truncation_fails_cleanly),
        cmocka_unit_test(random_corruption_never_crashes),
    };
    return cmocka_run_group_tests_name("safetensors", tests, tu_scratch_setup, tu_scratch_teardown);
}
