/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_image_io_errors.c - bad files through the decoders: a clear error
** naming 'input', never a crash, a hang or a leak (this test runs under
** ASan + UBSan in CI, where a leak or an out-of-bounds read fails it).
**
**  - every truncation of every test image (each length 0 .. N-1), through
**    the format's decoder and decode_image, in a mode and EXIF setting that
**    varies with the length;
**  - seeded random edits of every test image (byte overwrites, bit flips,
**    insertions, deletions, runs of 0x00 / 0xFF), a few thousand in all;
**  - files that are not images; a header that declares more pixels than
**    max_pixels (JPEG SOF, PNG IHDR), or far more pixels than the data hold;
**  - an empty input.
** A decode of a damaged file may also succeed (libjpeg recovers from many
** corruptions with a warning, as torchvision does): then the output must
** have the shape the call promises.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "image_io_test_util.h"

#define EDITS_PER_IMAGE 120

static const char *const modes[5] = { "UNCHANGED", "GRAY", "GRAY_ALPHA", "RGB", "RGB_ALPHA" };

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* One decode of possibly bad bytes: OK with a sane CHW output, or
** LOOM_EFORMAT (a bad file) / LOOM_EINVAL (over max_pixels, an empty
** input) with a message that names 'input'. */
static void decode_checked(const char *op, const uint8_t *p, size_t n, const char *mode, int exif, const char *what)
{
    loom_tensor *bytes = iot_bytes(p, n), *out = NULL;
    loom_status st = iot_decode(op, bytes, mode, exif, INT64_C(1) << 22, &out);
    if (st == LOOM_OK) {
        if (out->ndim != 3 || out->shape[0] < 1 || out->shape[0] > 4 || loom_numel(out) <= 0)
            fail_msg("%s: %s gave a tensor of rank %d", what, op, (int)out->ndim);
        loom_tensor_free(out);
    } else if ((st != LOOM_EFORMAT && st != LOOM_EINVAL) || strstr(loom_last_error(), "'input'") == NULL) {
        fail_msg("%s: %s: status %d, message '%s'", what, op, (int)st, loom_last_error());
    }
    loom_tensor_free(bytes);
}

static const char *decoder_of(const char *image)
{
    return strstr(image, ".jpg") != NULL ? "vision.decode_jpeg" : "vision.decode_png";
}

static void test_truncations(void **state)
{
    (void)state;
    char names[64][64];
    const size_t n_images = iot_images(names, 64);
    assert_true(n_images > 20);
    size_t runs = 0;
    for (size_t i = 0; i < n_images; i++) {
        loom_tensor *file = iot_file(names[i]);
        const uint8_t *p = loom_data(file);
        const size_t n = (size_t)loom_numel(file);
        for (size_t len = 1; len < n; len++) {
            char what[128];
            snprintf(what, sizeof what, "%s cut to %zu bytes", names[i], len);
            const char *mode = modes[len % 5];
            if (strstr(names[i], ".jpg") != NULL && (len % 5 == 2 || len % 5 == 4))
                mode = "RGB";               /* JPEG refuses the alpha modes before reading anything */
            decode_checked(len % 2 ? decoder_of(names[i]) : "vision.decode_image", p, len, mode, (int)(len % 3 == 0),
                           what);
            runs++;
        }
        loom_tensor_free(file);
    }
    assert_true(runs > 30000);
}

static void test_random_edits(void **state)
{
    (void)state;
    char names[64][64];
    const size_t n_images = iot_images(names, 64);
    uint64_t seed = 0x9E3779B97F4A7C15u;
    for (size_t i = 0; i < n_images; i++) {
        loom_tensor *file = iot_file(names[i]);
        const size_t n = (size_t)loom_numel(file);
        uint8_t *buf = malloc(n + 64);
        assert_non_null(buf);
        for (int e = 0; e < EDITS_PER_IMAGE; e++) {
            memcpy(buf, loom_data(file), n);
            size_t len = n;
            const int edits = 1 + (int)(rng_next(&seed) % 4);
            for (int k = 0; k < edits; k++) {
                /* keep the first bytes (the signature) most of the time, so the
                ** edits reach the decoders' inner parts rather than the sniffing */
                const size_t lo = rng_next(&seed) % 8 ? 4 : 0;
                const size_t at = lo + (size_t)(rng_next(&seed) % (len - lo));
                switch (rng_next(&seed) % 5) {
                case 0: buf[at] = (uint8_t)rng_next(&seed); break;
                case 1: buf[at] ^= (uint8_t)(1u << (rng_next(&seed) % 8)); break;
                case 2:
                    if (len < n + 60) {
                        memmove(buf + at + 1, buf + at, len - at);
                        buf[at] = (uint8_t)rng_next(&seed);
                        len++;
                    }
                    break;
                case 3:
                    if (len > lo + 2) {
                        memmove(buf + at, buf + at + 1, len - at - 1);
                        len--;
                    }
                    break;
                default: {
                    const size_t run = 1 + (size_t)(rng_next(&seed) % 16);
                    memset(buf + at, rng_next(&seed) % 2 ? 0xFF : 0x00, at + run <= len ? run : len - at);
                    break;
                }
                }
            }
            char what[128];
            snprintf(what, sizeof what, "%s edit %d", names[i], e);
            const char *mode = modes[e % 5];
            if (strstr(names[i], ".jpg") != NULL && (e % 5 == 2 || e % 5 == 4))
                mode = "GRAY";
            decode_checked(e % 2 ? decoder_of(names[i]) : "vision.decode_image", buf, len, mode, e % 3 != 1, what);
        }
        free(buf);
        loom_tensor_free(file);
    }
}

static void test_not_images(void **state)
{
    (void)state;
    const char *text = "this is not an image at all, just some text";
    const char *ops[3] = { "vision.decode_jpeg", "vision.decode_png", "vision.decode_image" };
    uint8_t noise[512];
    uint64_t seed = 42;
    for (size_t i = 0; i < sizeof noise; i++)
        noise[i] = (uint8_t)rng_next(&seed);
    for (int k = 0; k < 3; k++) {
        loom_tensor *b = iot_bytes((const uint8_t *)text, strlen(text)), *out;
        assert_int_equal(iot_decode(ops[k], b, NULL, 0, 0, &out), LOOM_EFORMAT);
        assert_non_null(strstr(loom_last_error(), "'input'"));
        loom_tensor_free(b);
        decode_checked(ops[k], noise, sizeof noise, "RGB", 0, "noise");
        /* the signature alone */
        decode_checked(ops[k], (const uint8_t *)"\xFF\xD8\xFF", 3, "RGB", 0, "JPEG signature only");
        decode_checked(ops[k], (const uint8_t *)"\x89PNG\r\n\x1a\n", 8, "RGB", 0, "PNG signature only");
        /* empty */
        loom_tensor *empty = iot_bytes(NULL, 0);
        assert_int_equal(iot_decode(ops[k], empty, NULL, 0, 0, &out), LOOM_EINVAL);
        assert_non_null(strstr(loom_last_error(), "empty"));
        loom_tensor_free(empty);
    }
    loom_tensor *b = iot_bytes((const uint8_t *)text, strlen(text)), *out;
    assert_int_equal(iot_decode("vision.decode_image", b, NULL, 0, 0, &out), LOOM_EFORMAT);
    assert_non_null(strstr(loom_last_error(), "not a JPEG or PNG file"));
    loom_tensor_free(b);
}

static uint32_t crc32_of(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return c ^ 0xFFFFFFFFu;
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* Headers that lie about the size: over max_pixels (refused before any
** pixel memory), or under it but far larger than the data (truncated). */
static void test_lying_headers(void **state)
{
    (void)state;
    /* PNG: IHDR width / height at bytes 16..23, its CRC at 29..32 */
    loom_tensor *png = iot_file("rgb8.png"), *out;
    const size_t pn = (size_t)loom_numel(png);
    uint8_t *p = malloc(pn);
    memcpy(p, loom_data(png), pn);
    const uint32_t sizes[3][2] = { { 100000, 100000 }, { 2000, 2000 }, { 16000000, 1 } };
    for (int k = 0; k < 3; k++) {
        put_be32(p + 16, sizes[k][0]);
        put_be32(p + 20, sizes[k][1]);
        put_be32(p + 29, crc32_of(p + 12, 17));
        loom_tensor *b = iot_bytes(p, pn);
        loom_status st = iot_decode("vision.decode_png", b, "RGB", 0, 0, &out);
        if (st != (k == 0 ? LOOM_EINVAL : LOOM_EFORMAT))
            fail_msg("PNG of %u x %u: status %d (%s)", sizes[k][0], sizes[k][1], (int)st, loom_last_error());
        const char *msg = loom_last_error();
        assert_non_null(strstr(msg, k == 0 ? "max_pixels" : "'input'"));
        loom_tensor_free(b);
    }
    free(p);
    loom_tensor_free(png);

    /* JPEG: the SOF0 marker's height and width */
    loom_tensor *jpg = iot_file("rgb444.jpg");
    const size_t jn = (size_t)loom_numel(jpg);
    uint8_t *j = malloc(jn);
    memcpy(j, loom_data(jpg), jn);
    size_t sof = 0;
    for (size_t i = 2; i + 9 < jn; i++)
        if (j[i] == 0xFF && (j[i + 1] == 0xC0 || j[i + 1] == 0xC1)) {
            sof = i;
            break;
        }
    assert_true(sof > 0);
    const uint16_t dims[2][2] = { { 65000, 65000 }, { 4000, 4000 } };
    for (int k = 0; k < 2; k++) {
        j[sof + 5] = (uint8_t)(dims[k][0] >> 8);
        j[sof + 6] = (uint8_t)dims[k][0];
        j[sof + 7] = (uint8_t)(dims[k][1] >> 8);
        j[sof + 8] = (uint8_t)dims[k][1];
        loom_tensor *b = iot_bytes(j, jn);
        loom_status st = iot_decode("vision.decode_jpeg", b, "RGB", 0, 0, &out);
        if (k == 0) {
            assert_int_equal(st, LOOM_EINVAL);
            assert_non_null(strstr(loom_last_error(), "max_pixels"));
        } else if (st == LOOM_OK) {
            loom_tensor_free(out);      /* libjpeg may pad a short scan with a warning */
        } else {
            assert_int_equal(st, LOOM_EFORMAT);
        }
        loom_tensor_free(b);
    }
    free(j);
    loom_tensor_free(jpg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_truncations),
        cmocka_unit_test(test_random_edits),
        cmocka_unit_test(test_not_images),
        cmocka_unit_test(test_lying_headers),
    };
    return cmocka_run_group_tests_name("vision_image_io_errors", tests, tu_setup, tu_teardown);
}
