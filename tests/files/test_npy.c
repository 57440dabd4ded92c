/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/files/test_npy.c - .npy reading and writing: round trips, NumPy's
** own files, hand-written headers, and corrupt input that must fail cleanly. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "tu_files.h"

/* A .npy image: preamble of the given major version, the header text as is
** (no padding), then the data. Exactly sized, so overreads are caught. */
static unsigned char *build_npy(int major, const char *header, const void *data, size_t ndata,
                                size_t *n_out)
{
    size_t hlen = strlen(header), pre = major == 1 ? 10 : 12;
    unsigned char *b = malloc(pre + hlen + ndata + 1);
    memcpy(b, "\x93NUMPY", 6);
    b[6] = (unsigned char)major;
    b[7] = 0;
    for (size_t i = 8; i < pre; i++)
        b[i] = (unsigned char)(hlen >> (8 * (i - 8)));
    memcpy(b + pre, header, hlen);
    if (ndata)
        memcpy(b + pre + hlen, data, ndata);
    *n_out = pre + hlen + ndata;
    return b;
}

/* Read a hand-built file; returns the status, *out the tensor on success. */
static loom_status read_built(int major, const char *header, const void *data, size_t ndata,
                              loom_tensor **out)
{
    size_t n;
    unsigned char *b = build_npy(major, header, data, ndata, &n);
    loom_status s = loom_npy_read_memory(out, b, n, "mem.npy");
    free(b);
    return s;
}

static void assert_fails_with(loom_status s, loom_status want, const char *fragment)
{
    assert_int_equal(s, want);
    if (strstr(loom_last_error(), fragment) == NULL)
        fail_msg("message \"%s\" lacks \"%s\"", loom_last_error(), fragment);
}

/* ------------------------------------------------------------ round trips */

static const char *const expected_descr[LOOM_DTYPE_COUNT] = {
    [LOOM_DTYPE_F32] = "<f4", [LOOM_DTYPE_F64] = "<f8", [LOOM_DTYPE_F16] = "<f2",
    [LOOM_DTYPE_BF16] = "|V2", [LOOM_DTYPE_F8E4M3] = "|V1", [LOOM_DTYPE_I8] = "|i1",
    [LOOM_DTYPE_U8] = "|u1", [LOOM_DTYPE_I16] = "<i2", [LOOM_DTYPE_I32] = "<i4",
    [LOOM_DTYPE_I64] = "<i8", [LOOM_DTYPE_BOOL] = "|b1", [LOOM_DTYPE_C64] = "<c8",
    [LOOM_DTYPE_C128] = "<c16", [LOOM_DTYPE_U16] = "<u2", [LOOM_DTYPE_U32] = "<u4",
};

static void every_dtype_round_trips_bit_exact(void **state)
{
    (void)state;
    const int64_t shape[2] = { 3, 5 };
    for (int d = 1; d < LOOM_DTYPE_COUNT; d++) {
        loom_tensor *t = tu_pattern_tensor((loom_dtype)d, 2, shape, (uint64_t)d * 77);
        char name[64];
        snprintf(name, sizeof name, "rt_%s.npy", loom_dtype_name((loom_dtype)d));
        char *path = tu_path_in(tu_scratch_dir, name);
        assert_int_equal(loom_npy_write(path, t), LOOM_OK);

        size_t n;
        unsigned char *raw = tu_read_bytes(path, &n);
        char want[64];
        snprintf(want, sizeof want, "'descr': '%s'", expected_descr[d]);
        assert_non_null(memmem(raw, n, want, strlen(want)));

        loom_tensor *back = NULL;
        assert_int_equal(loom_npy_read(&back, path), LOOM_OK);
        assert_true(tu_same_shape(t, back));
        assert_true(loom__is_host(back->device));
        assert_memory_equal(loom_data(t), loom_data(back), loom__tensor_nbytes(t));
        loom_tensor_free(back);
        loom_tensor_free(t);
        free(raw);
        free(path);
    }
}

static void scalars_and_empty_arrays_round_trip(void **state)
{
    (void)state;
    static const struct { int32_t ndim; int64_t shape[3]; const char *text; } cases[] = {
        { 0, { 0 }, "'shape': ()" },
        { 1, { 0 }, "'shape': (0,)" },
        { 3, { 3, 0, 2 }, "'shape': (3, 0, 2)" },
        { 1, { 7 }, "'shape': (7,)" },
    };
    char *path = tu_path_in(tu_scratch_dir, "shapes.npy");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        loom_tensor *t = tu_pattern_tensor(LOOM_DTYPE_F64, cases[i].ndim, cases[i].shape, 5);
        assert_int_equal(loom_npy_write(path, t), LOOM_OK);
        size_t n;
        unsigned char *raw = tu_read_bytes(path, &n);
        assert_non_null(memmem(raw, n, cases[i].text, strlen(cases[i].text)));
        loom_tensor *back = NULL;
        assert_int_equal(loom_npy_read(&back, path), LOOM_OK);
        assert_true(tu_same_shape(t, back));
        assert_memory_equal(loom_data(t), loom_data(back), loom__tensor_nbytes(t));
        loom_tensor_free(back);
        loom_tensor_free(t);
        free(raw);
    }
    free(path);
}

/* The writer lays the file out as np.save does: version 1.0, header padded
** with spaces to a 64-byte boundary and ended by a newline. */
static void written_header_matches_numpy_layout(void **state)
{
    (void)state;
    const int64_t shape[2] = { 2, 3 };
    loom_tensor *t = tu_pattern_tensor(LOOM_DTYPE_F32, 2, shape, 1);
    char *path = tu_path_in(tu_scratch_dir, "layout.npy");
    assert_int_equal(loom_npy_write(path, t), LOOM_OK);
    size_t n;
    unsigned char *raw = tu_read_bytes(path, &n);
    static const char head[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    assert_memory_equal(raw, "\x93NUMPY\x01\x00", 8);
    size_t hlen = raw[8] | (size_t)raw[9] << 8;
    assert_int_equal((10 + hlen) % 64, 0);
    assert_int_equal(n, 10 + hlen + 24);
    assert_memory_equal(raw + 10, head, sizeof head - 1);
    for (size_t i = 10 + sizeof head - 1; i < 10 + hlen - 1; i++)
        assert_int_equal(raw[i], ' ');
    assert_int_equal(raw[10 + hlen - 1], '\n');
    free(raw);
    free(path);
    loom_tensor_free(t);
}

/* A transposed view and a caller's plain DLTensor are written compactly. */
static void strided_and_foreign_tensors_are_gathered(void **state)
{
    (void)state;
    int32_t data[6] = { 0, 1, 2, 3, 4, 5 };      /* a 2x3 matrix */
    int64_t shape[2] = { 3, 2 }, strides[2] = { 1, 3 };
    loom_tensor view = { .data = data, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = 2,
                       .dtype = { LOOM_DL_INT, 32, 1 }, .shape = shape, .strides = strides };
    char *path = tu_path_in(tu_scratch_dir, "strided.npy");
    assert_int_equal(loom_npy_write(path, &view), LOOM_OK);
    loom_tensor *back = NULL;
    assert_int_equal(loom_npy_read(&back, path), LOOM_OK);
    const int32_t want[6] = { 0, 3, 1, 4, 2, 5 };
    assert_true(tu_same_shape(&view, back));
    assert_memory_equal(loom_data(back), want, sizeof want);
    loom_tensor_free(back);

    view.strides = NULL;     /* compact, not made by loom */
    shape[0] = 2, shape[1] = 3;
    assert_int_equal(loom_npy_write(path, &view), LOOM_OK);
    assert_int_equal(loom_npy_read(&back, path), LOOM_OK);
    assert_memory_equal(loom_data(back), data, sizeof data);
    loom_tensor_free(back);
    free(path);
}

/* A tensor on another device is copied to the host before writing. */
static void device_tensors_are_copied_to_host(void **state)
{
    (void)state;
    const int64_t shape[2] = { 4, 3 };
    loom_tensor *h = tu_pattern_tensor(LOOM_DTYPE_I16, 2, shape, 8);
    loom_tensor *d = tu_to_fake_device(h);
    assert_non_null(d);
    assert_int_equal(d->device.device_type, LOOM_DEVICE_CUDA);
    char *path = tu_path_in(tu_scratch_dir, "device.npy");
    assert_int_equal(loom_npy_write(path, d), LOOM_OK);
    loom_tensor *back = NULL;
    assert_int_equal(loom_npy_read(&back, path), LOOM_OK);
    assert_int_equal(back->device.device_type, LOOM_DEVICE_CPU);
    assert_memory_equal(loom_data(back), loom_data(h), loom__tensor_nbytes(h));
    loom_tensor_free(back);
    loom_tensor_free(d);
    loom_tensor_free(h);
    free(path);
}

/* ------------------------------------------------------ header variants */

static void versions_1_2_3_read_the_same(void **state)
{
    (void)state;
    const int32_t data[4] = { 1, 2, 3, 4 };
    const char *h = "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }\n";
    for (int major = 1; major <= 3; major++) {
        loom_tensor *t = NULL;
        assert_int_equal(read_built(major, h, data, sizeof data, &t), LOOM_OK);
        assert_int_equal(t->ndim, 2);
        assert_int_equal(t->shape[0], 2);
        assert_memory_equal(loom_data(t), data, sizeof data);
        loom_tensor_free(t);
    }
}

static void odd_spacing_quotes_and_order_parse(void **state)
{
    (void)state;
    static const char *const headers[] = {
        "{'descr':'<i4','fortran_order':False,'shape':(2,3)}",
        "{ \"shape\" : ( 2 , 3 , ) , 'fortran_order' : False , \"descr\" : '<i4' , }   \n",
        "{'shape': (2L, 3L), 'descr': '<i4', 'fortran_order': False}\n",
        "\t{\n'descr': '<i4',\n 'fortran_order': False,\n 'shape': (2, 3),\n}\r\n",
        "{'fortran_order': False, 'shape': (2, 3), 'descr': 'i4', }",
        "{'fortran_order': False, 'shape': (2, 3), 'descr': '=i4', }",
        "{'fortran_order': False, 'shape': (2, 3), 'descr': '|i4', }",
    };
    const int32_t data[6] = { 1, -2, 3, -4, 5, -6 };
    for (size_t i = 0; i < sizeof headers / sizeof headers[0]; i++) {
        loom_tensor *t = NULL;
        loom_status s = read_built(1, headers[i], data, sizeof data, &t);
        if (s != LOOM_OK)
            fail_msg("header %zu: %s", i, loom_last_error());
        assert_int_equal(loom_tensor_dtype_of(t), LOOM_DTYPE_I32);
        assert_int_equal(t->ndim, 2);
        assert_int_equal(t->shape[1], 3);
        assert_memory_equal(loom_data(t), data, sizeof data);
        loom_tensor_free(t);
    }
}

static void fortran_order_becomes_c_order(void **state)
{
    (void)state;
    int32_t src[24], want[24];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 4; k++) {
                src[i + 2 * j + 6 * k] = i * 100 + j * 10 + k;   /* column-major */
                want[(i * 3 + j) * 4 + k] = i * 100 + j * 10 + k;
            }
    loom_tensor *t = NULL;
    assert_int_equal(read_built(1, "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3, 4), }",
                                src, sizeof src, &t), LOOM_OK);
    assert_memory_equal(loom_data(t), want, sizeof want);
    loom_tensor_free(t);

    /* Fortran order with a zero-size dim and with one dim is a no-op */
    assert_int_equal(read_built(1, "{'descr': '<i4', 'fortran_order': True, 'shape': (0, 3), }",
                                NULL, 0, &t), LOOM_OK);
    assert_int_equal(t->shape[0], 0);
    loom_tensor_free(t);
    assert_int_equal(read_built(1, "{'descr': '<i4', 'fortran_order': True, 'shape': (), }",
                                src, 4, &t), LOOM_OK);
    assert_int_equal(*(int32_t *)loom_data(t), src[0]);
    loom_tensor_free(t);
}

static void big_endian_is_byteswapped(void **state)
{
    (void)state;
    loom_tensor *t = NULL;
    const unsigned char f4[] = { 0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0 };     /* 1, -2 */
    assert_int_equal(read_built(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }",
                                f4, sizeof f4, &t), LOOM_OK);
    assert_true(((float *)loom_data(t))[0] == 1.0f && ((float *)loom_data(t))[1] == -2.0f);
    loom_tensor_free(t);

    const unsigned char i8[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe };
    assert_int_equal(read_built(1, "{'descr': '>i8', 'fortran_order': False, 'shape': (), }",
                                i8, sizeof i8, &t), LOOM_OK);
    assert_int_equal(*(int64_t *)loom_data(t), -2);
    loom_tensor_free(t);

    /* complex: each component is swapped on its own */
    const unsigned char c8[] = { 0x3f, 0x80, 0, 0, 0x40, 0, 0, 0 };     /* 1 + 2j */
    assert_int_equal(read_built(1, "{'descr': '>c8', 'fortran_order': False, 'shape': (1,), }",
                                c8, sizeof c8, &t), LOOM_OK);
    assert_true(((float *)loom_data(t))[0] == 1.0f && ((float *)loom_data(t))[1] == 2.0f);
    loom_tensor_free(t);

    const unsigned char f2[] = { 0x3c, 0x00 };                          /* 1.0 */
    assert_int_equal(read_built(1, "{'descr': '>f2', 'fortran_order': False, 'shape': (1,), }",
                                f2, sizeof f2, &t), LOOM_OK);
    assert_int_equal(*(uint16_t *)loom_data(t), 0x3c00);
    loom_tensor_free(t);

    /* void types have no byte order: '>V2' is bf16 as stored */
    const unsigned char v2[] = { 0x80, 0x3f };
    assert_int_equal(read_built(1, "{'descr': '>V2', 'fortran_order': False, 'shape': (1,), }",
                                v2, sizeof v2, &t), LOOM_OK);
    assert_int_equal(loom_tensor_dtype_of(t), LOOM_DTYPE_BF16);
    assert_int_equal(*(uint16_t *)loom_data(t), 0x3f80);
    loom_tensor_free(t);

    /* big-endian and Fortran order together */
    const unsigned char i2[] = { 0, 1, 0, 3, 0, 2, 0, 4 };   /* [[1,2],[3,4]] column-major */
    assert_int_equal(read_built(1, "{'descr': '>i2', 'fortran_order': True, 'shape': (2, 2), }",
                                i2, sizeof i2, &t), LOOM_OK);
    const int16_t want[4] = { 1, 2, 3, 4 };
    assert_memory_equal(loom_data(t), want, sizeof want);
    loom_tensor_free(t);
}

/* ------------------------------------------------------- refused input */

static void bad_headers_are_refused_with_a_reason(void **state)
{
    (void)state;
    static const struct { const char *header; const char *fragment; } cases[] = {
        { "{'descr': '<i4', 'fortran_order': False}", "missing key 'shape'" },
        { "{'fortran_order': False, 'shape': (6,)}", "missing key 'descr'" },
        { "{'descr': '<i4', 'shape': (6,)}", "missing key 'fortran_order'" },
        { "{'descr': '<i4', 'fortran_order': False, 'shape': (6,), 'descr': '<i4'}", "appears twice" },
        { "{'descr': '<i4', 'fortran_order': False, 'shape': (6,), 'extra': 1}", "unexpected key" },
        { "{'descr': '<i4', 'fortran_order': False, 'shape': (6)}", "not a tuple" },
        { "{'descr': '<i4', 'fortran_order': False, 'shape': [6]}", "must be a tuple" },
        { "{'descr': '<i4', 'fortran_order': False, 'shape': (-6,)}", "negative" },
        { "{'descr': '<i4', 'fortran_order': False, 'shape': (6,,)}", "non-negative integers" },
        { "{'descr': '<i4', 'fortran_order': False, 'shape': (2 3)}", "expected ',' or ')'" },
        { "{'descr': '<U5', 'fortran_order': False, 'shape': (6,)}", "unsupported .npy dtype '<U5'" },
        { "{'descr': '|O', 'fortran_order': False, 'shape': (6,)}", "unsupported .npy dtype" },
        { "{'descr': '<f16', 'fortran_order': False, 'shape': (6,)}", "unsupported .npy dtype" },
        { "{'descr': '', 'fortran_order': False, 'shape': (6,)}", "unsupported .npy dtype" },
        { "{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (6,)}", "structured" },
        { "{'descr': '<i4<i4<i4<i4<i4<i4<i4<i4<i4<i4<i4', 'fortran_order': False, 'shape': (6,)}", "too long" },
        { "{'descr': '<i4", "unterminated string" },
        { "{'descr' '<i4', 'fortran_order': False, 'shape': (6,)}", "expected ':'" },
        { "{'descr': '<i\\4', 'fortran_order': False, 'shape': (6,)}", "unsupported character" },
        { "{'descr': '<i4', 'fortran_order': false, 'shape': (6,)}", "True or False" },
        { "{'descr': '<i4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1,1,1,1,6)}", "more than 12" },
        { "{'descr': '<i4', 'fortran_order': False, 'shape': (99999999999999999999,)}", "overflows 64 bits" },
        { "{'descr': '<i4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", "overflows" },
        { "{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693952,)}", "overflows" },
        { "{'descr': '<i4', 'fortran_order': False, 'shape': (1000000,)}", "truncated .npy data" },
        { "{'descr': '<i4', 'fortran_order': False, 'shape': (5,)}", "unexpected bytes after" },
        { "{'descr': '<i4', 'fortran_order': False, 'shape': (6,)} x", "after the closing" },
        { "{'descr': '<i4', 'fortran_order': False, 'shape': (6,)", "expected ',' or '}'" },
        { "['descr']", "expected a dict" },
        { "", "expected a dict" },
        { "{'descr': '<i4' 'fortran_order': False, 'shape': (6,)}", "expected ',' or '}'" },
        { "{descr: '<i4', 'fortran_order': False, 'shape': (6,)}", "quoted string" },
    };
    const int32_t data[6] = { 0 };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        loom_tensor *t = (loom_tensor *)&t;    /* must be reset to NULL */
        loom_status s = read_built(1, cases[i].header, data, sizeof data, &t);
        if (s != LOOM_EFORMAT)
            fail_msg("case %zu (%s): status %d", i, cases[i].header, s);
        assert_null(t);
        if (strstr(loom_last_error(), cases[i].fragment) == NULL
            || strstr(loom_last_error(), "mem.npy") == NULL)
            fail_msg("case %zu: message \"%s\" lacks \"%s\" or the file name", i,
                     loom_last_error(), cases[i].fragment);
    }
}

static void bad_preambles_are_refused(void **state)
{
    (void)state;
    loom_tensor *t = NULL;
    const char *h = "{'descr': '|u1', 'fortran_order': False, 'shape': (1,)}";
    size_t n;
    unsigned char *b = build_npy(1, h, "x", 1, &n);

    b[5] = 'X';
    assert_fails_with(loom_npy_read_memory(&t, b, n, "pre.npy"), LOOM_EFORMAT, "bad magic");
    b[5] = 'Y';
    b[6] = 4;
    assert_fails_with(loom_npy_read_memory(&t, b, n, "pre.npy"), LOOM_EFORMAT, "version 4.0");
    b[6] = 1, b[7] = 1;
    assert_fails_with(loom_npy_read_memory(&t, b, n, "pre.npy"), LOOM_EFORMAT, "version 1.1");
    b[7] = 0;
    b[8] = 0xff, b[9] = 0xff;
    assert_fails_with(loom_npy_read_memory(&t, b, n, "pre.npy"), LOOM_EFORMAT, "past the end");
    assert_fails_with(loom_npy_read_memory(&t, b, 9, "pre.npy"), LOOM_EFORMAT, "preamble");
    assert_fails_with(loom_npy_read_memory(&t, NULL, 0, "pre.npy"), LOOM_EFORMAT, "bad magic");
    assert_fails_with(loom_npy_read_memory(&t, NULL, 5, NULL), LOOM_EINVAL, "<memory>");
    assert_int_equal(loom_npy_read_memory(NULL, b, n, "pre.npy"), LOOM_EINVAL);
    free(b);

    /* version 2.0 with a length past the end, in its 4-byte field */
    b = build_npy(2, h, "x", 1, &n);
    b[11] = 0x80;
    assert_fails_with(loom_npy_read_memory(&t, b, n, "pre.npy"), LOOM_EFORMAT, "past the end");
    free(b);
    assert_null(t);
}

static void file_errors_name_the_path(void **state)
{
    (void)state;
    loom_tensor *t = NULL;
    char *missing = tu_path_in(tu_scratch_dir, "missing.npy");
    assert_fails_with(loom_npy_read(&t, missing), LOOM_ENOENT, missing);
    assert_fails_with(loom_npy_read(&t, tu_scratch_dir), LOOM_EIO, tu_scratch_dir);
    char *empty = tu_path_in(tu_scratch_dir, "empty.npy");
    assert_int_equal(tu_write_bytes(empty, "", 0), 0);
    assert_fails_with(loom_npy_read(&t, empty), LOOM_EFORMAT, empty);
    assert_int_equal(loom_npy_read(&t, NULL), LOOM_EINVAL);

    const int64_t shape[1] = { 4 };
    loom_tensor *x = tu_pattern_tensor(LOOM_DTYPE_U8, 1, shape, 3);
    char *nodir = tu_path_in(tu_scratch_dir, "no/such/dir/x.npy");
    loom_status s = loom_npy_write(nodir, x);
    assert_true(s == LOOM_ENOENT || s == LOOM_EIO);
    assert_non_null(strstr(loom_last_error(), "no/such/dir/x.npy"));
    assert_int_equal(loom_npy_write(NULL, x), LOOM_EINVAL);
    assert_int_equal(loom_npy_write(empty, NULL), LOOM_EINVAL);
    loom_tensor bad = *x;
    bad.dtype.code = 99;
    assert_int_equal(loom_npy_write(empty, &bad), LOOM_EINVAL);
    loom_tensor_free(x);
    free(missing);
    free(empty);
    free(nodir);
}

/* Every prefix of a valid file is refused, never read past. */
static void every_truncation_fails_cleanly(void **state)
{
    (void)state;
    const int64_t shape[2] = { 2, 3 };
    loom_tensor *t = tu_pattern_tensor(LOOM_DTYPE_C64, 2, shape, 9);
    char *path = tu_path_in(tu_scratch_dir, "trunc.npy");
    assert_int_equal(loom_npy_write(path, t), LOOM_OK);
    size_t n;
    unsigned char *full = tu_read_bytes(path, &n);
    assert_true(n > 64);
    for (size_t len = 0; len < n; len++) {
        unsigned char *b = malloc(len ? len : 1);
        memcpy(b, full, len);
        loom_tensor *out = NULL;
        loom_status s = loom_npy_read_memory(&out, b, len, "trunc.npy");
        if (s == LOOM_OK)
            fail_msg("prefix of %zu bytes was accepted", len);
        assert_int_equal(s, LOOM_EFORMAT);
        assert_non_null(strstr(loom_last_error(), "trunc.npy"));
        assert_null(out);
        free(b);
    }
    loom_tensor *out = NULL;
    assert_int_equal(loom_npy_read_memory(&out, full, n, "trunc.npy"), LOOM_OK);
    loom_tensor_free(out);
    free(full);
    free(path);
    loom_tensor_free(t);
}

/* Seeded random edits of the preamble and header: each read either fails
** with a message or yields a tensor whose size matches the bytes it came
** from. Run under ASan, this proves no read leaves the buffer. */
static void random_corruption_never_crashes(void **state)
{
    (void)state;
    static const char alphabet[] = "{}()[]'\",:  0123456789-LlTrueFalse<>|=fiucbVUO\n\t\\";
    const uint8_t data[24] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
    const char *headers[2] = {
        "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }\n",
        "{'descr': '>c8', 'fortran_order': True, 'shape': (3,), }      \n",
    };
    uint64_t rng = 0x5eed;
    int ok = 0, failed = 0;
    for (int iter = 0; iter < 4000; iter++) {
        size_t n;
        unsigned char *base = build_npy(1 + iter % 3, headers[iter % 2], data, sizeof data, &n);
        size_t pre = iter % 3 == 0 ? 10 : 12;
        size_t hend = n - sizeof data;
        unsigned char *b = malloc(n + 8);
        memcpy(b, base, n);
        int edits = 1 + (int)tu_rng_below(&rng, 3);
        for (int e = 0; e < edits; e++) {
            size_t at = tu_rng_below(&rng, hend);
            char ch = alphabet[tu_rng_below(&rng, sizeof alphabet - 1)];
            switch (tu_rng_below(&rng, 6)) {
            case 0: b[at] = (unsigned char)tu_rng_next(&rng); break;
            case 1: b[pre + tu_rng_below(&rng, hend - pre)] = (unsigned char)ch; break;
            case 2: case 3: {   /* insert or delete in the header, keeping the length field */
                size_t p = pre + tu_rng_below(&rng, hend - pre);
                if (tu_rng_below(&rng, 2)) {
                    memmove(b + p + 1, b + p, n - p);
                    b[p] = (unsigned char)ch;
                    n++, hend++;
                } else {
                    memmove(b + p, b + p + 1, n - p - 1);
                    n--, hend--;
                }
                break;
            }
            case 4: b[8 + tu_rng_below(&rng, pre - 8)] ^= (unsigned char)(1u << tu_rng_below(&rng, 8)); break;
            default: b[8] = (unsigned char)(b[8] + (int)tu_rng_below(&rng, 5) - 2); break;
            }
        }
        unsigned char *exact = malloc(n);
        memcpy(exact, b, n);
        loom_tensor *t = NULL;
        loom_status s = loom_npy_read_memory(&t, exact, n, "fuzz.npy");
        if (s == LOOM_OK) {
            ok++;
            assert_true(loom__tensor_nbytes(t) <= n);
            assert_true(t->ndim >= 0 && t->ndim <= LOOM_MAX_NDIM);
            volatile unsigned sum = 0;     /* touch every byte of the result */
            const unsigned char *p = loom_data(t);
            for (size_t i = 0; i < loom__tensor_nbytes(t); i++)
                sum += p[i];
            (void)sum;
            loom_tensor_free(t);
        } else {
            failed++;
            assert_true(s < 0);
            assert_null(t);
            assert_non_null(strstr(loom_last_error(), "fuzz.npy"));
        }
        free(exact);
        free(b);
        free(base);
    }
    assert_true(failed > 0);
    print_message("corruption: %d accepted, %d refused\n", ok, failed);
}

/* ------------------------------------------------- files made by NumPy */

static loom_tensor *golden(const char *name)
{
    char rel[512];
    snprintf(rel, sizeof rel, "files/%s", name);
    const char *path = tu_data_path(rel);
    loom_tensor *t = NULL;
    if (loom_npy_read(&t, path) != LOOM_OK)
        fail_msg("%s: %s", name, loom_last_error());
    return t;
}

static void numpy_files_load_with_the_right_values(void **state)
{
    (void)state;
    loom_tensor *t = golden("f32_2x3.npy");
    const float f32[6] = { -1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f };
    assert_int_equal(loom_tensor_dtype_of(t), LOOM_DTYPE_F32);
    assert_int_equal(t->ndim, 2);
    assert_memory_equal(loom_data(t), f32, sizeof f32);
    loom_tensor_free(t);

    t = golden("f64_fortran_3x4.npy");
    assert_int_equal(t->shape[0], 3);
    for (int i = 0; i < 12; i++)
        assert_true(((double *)loom_data(t))[i] == i);
    loom_tensor_free(t);

    t = golden("i64_be.npy");
    for (int i = 0; i < 5; i++)
        assert_int_equal(((int64_t *)loom_data(t))[i], i - 2);
    loom_tensor_free(t);

    t = golden("i16_be_fortran_2x3.npy");
    assert_int_equal(loom_tensor_dtype_of(t), LOOM_DTYPE_I16);
    for (int i = 0; i < 6; i++)
        assert_int_equal(((int16_t *)loom_data(t))[i], i - 3);
    loom_tensor_free(t);

    t = golden("c64.npy");
    const float c64[4] = { 1, 2, -3.5f, 0.25f };
    assert_int_equal(loom_tensor_dtype_of(t), LOOM_DTYPE_C64);
    assert_memory_equal(loom_data(t), c64, sizeof c64);
    loom_tensor_free(t);

    t = golden("c128_be.npy");
    assert_true(((double *)loom_data(t))[0] == 1e300 && ((double *)loom_data(t))[1] == -1.0);
    loom_tensor_free(t);

    t = golden("f16.npy");
    const uint16_t f16[4] = { 0x3c00, 0xc000, 0x3800, 0x7bff };
    assert_memory_equal(loom_data(t), f16, sizeof f16);
    loom_tensor_free(t);

    t = golden("bool.npy");
    assert_int_equal(loom_tensor_dtype_of(t), LOOM_DTYPE_BOOL);
    assert_memory_equal(loom_data(t), "\1\0\1", 3);
    loom_tensor_free(t);

    t = golden("u8_scalar.npy");
    assert_int_equal(t->ndim, 0);
    assert_int_equal(*(uint8_t *)loom_data(t), 7);
    loom_tensor_free(t);

    t = golden("i8.npy");
    assert_int_equal(((int8_t *)loom_data(t))[0], -128);
    assert_int_equal(((int8_t *)loom_data(t))[1], 127);
    loom_tensor_free(t);

    t = golden("f32_empty_0x3.npy");
    assert_int_equal(t->ndim, 2);
    assert_int_equal(t->shape[0], 0);
    assert_int_equal(t->shape[1], 3);
    loom_tensor_free(t);

    t = golden("bf16_ml_dtypes.npy");
    const uint16_t bf16[3] = { 0x3f80, 0xc000, 0x3f00 };
    assert_int_equal(loom_tensor_dtype_of(t), LOOM_DTYPE_BF16);
    assert_memory_equal(loom_data(t), bf16, sizeof bf16);
    loom_tensor_free(t);

    t = golden("f8e4m3_ml_dtypes.npy");
    assert_int_equal(loom_tensor_dtype_of(t), LOOM_DTYPE_F8E4M3);
    assert_memory_equal(loom_data(t), "\x38\xc0\x30\x7e", 4);
    loom_tensor_free(t);

    const int32_t i32[4] = { 1, 2, 3, 4 };
    t = golden("i32_v2.npy");
    assert_memory_equal(loom_data(t), i32, sizeof i32);
    loom_tensor_free(t);
    t = golden("i32_v3.npy");
    assert_memory_equal(loom_data(t), i32, sizeof i32);
    loom_tensor_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_dtype_round_trips_bit_exact),
        cmocka_unit_test(scalars_and_empty_arrays_round_trip),
        cmocka_unit_test(written_header_matches_numpy_layout),
        cmocka_unit_test(strided_and_foreign_tensors_are_gathered),
        cmocka_unit_test(device_tensors_are_copied_to_host),
        cmocka_unit_test(versions_1_2_3_read_the_same),
        cmocka_unit_test(odd_spacing_quotes_and_order_parse),
        cmocka_unit_test(fortran_order_becomes_c_order),
        cmocka_unit_test(big_endian_is_byteswapped),
        cmocka_unit_test(bad_headers_are_refused_with_a_reason),
        cmocka_unit_test(bad_preambles_are_refused),
        cmocka_unit_test(file_errors_name_the_path),
        cmocka_unit_test(every_truncation_fails_cleanly),
        cmocka_unit_test(random_corruption_never_crashes),
        cmocka_unit_test(numpy_files_load_with_the_right_values),
    };
    return cmocka_run_group_tests_name("npy", tests, tu_scratch_setup, tu_scratch_teardown);
}
