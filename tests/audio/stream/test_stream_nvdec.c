/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_stream_nvdec.c - audio.stream_reader with hw_accel=cuda (NVDEC
** through FFmpeg's hwaccel, pictures kept on the GPU) on a reader made on
** cuda, against the same reader on the CPU (libavcodec's h264 decoder, the
** graph's conversions), on the H.264 test medium:
**   - yuv420p: NVDEC decodes H.264 bit for bit as libavcodec does, and the
**     planes (chroma repeated 2x2) are moved, not computed: equal bytes;
**   - rgb24: the BT.601 matrix in float on the GPU against swscale's 8-bit
**     fixed-point tables: within 3 per channel (swscale's tables round
**     luma and each chroma term separately; the float path rounds once);
**   - the same chunk boundaries and pts, the pts a host value of the cuda
**     pop_chunk copied back, and seek landing where the CPU lands;
**   - without a device, hw_accel=cuda on a cuda reader is refused, saying so.
** Suite gpu: each test skips, saying why, without a CUDA device, without
** the audio-cuda pack, or when this FFmpeg has no CUDA hwaccel.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "audio_test_util.h"
#include "stream_test_util.h"
#include "tu_ops.h"

/* A cuda reader of the H.264 medium with one NVDEC video output, or NULL
** (the test skipped, saying why). */
static loom_object *nvdec_reader(loom_dl_device dev, const char *out_attrs)
{
    char a[512];
    snprintf(a, sizeof a, "src=%s", st_media("av_h264.mp4"));
    loom_object *r = st_reader_on(a, dev);
    loom_tensor *out = NULL;
    if (st_call(r, "audio.stream_reader_add_basic_video_stream", out_attrs, &out, 1) != LOOM_OK) {
        const char *why = loom_last_error();
        if (strstr(why, "has no CUDA (NVDEC) hwaccel") == NULL && strstr(why, "cannot open CUDA device") == NULL)
            fail_msg("add_basic_video_stream(%s): %s", out_attrs, why);
        print_message("skipped: NVDEC is not usable here: %s\n", why);
        loom_object_free(r);
        return NULL;
    }
    loom_tensor_free(out);
    return r;
}

static void read_both(const char *format, st_chunks *gpu, st_chunks *cpu, int *skipped)
{
    loom_dl_device dev;
    char a[512], o[256];
    *skipped = 1;
    if (!tu_has_backend("audio.stream_reader_pop_chunk", "cuda") || !at_cuda_device(&dev)) {
        print_message("skipped: no CUDA device or audio-cuda pack: NVDEC was not run\n");
        return;
    }
    snprintf(o, sizeof o, "frames_per_chunk=7;format=%s;hw_accel=cuda", format);
    loom_object *r = nvdec_reader(dev, o);
    if (r == NULL)
        return;
    *skipped = 0;
    st_read_all(r, 1, 0, gpu);
    loom_object_free(r);
    snprintf(a, sizeof a, "src=%s", st_media("av_h264.mp4"));
    r = st_reader(a);
    snprintf(o, sizeof o, "frames_per_chunk=7;format=%s", format);
    assert_int_equal(st_call_i64(r, "audio.stream_reader_add_basic_video_stream", o), 0);
    st_read_all(r, 1, 0, cpu);
    loom_object_free(r);
    assert_true(cpu->n_chunks > 1);
    assert_int_equal(gpu->n_chunks, cpu->n_chunks);
    assert_int_equal(gpu->n_bytes, cpu->n_bytes);
    for (int64_t i = 0; i < cpu->n_chunks; i++) {
        assert_int_equal(gpu->frames[i], cpu->frames[i]);
        assert_true(gpu->pts[i] == cpu->pts[i]);
    }
}

static void test_yuv420p_equals_the_cpu_decode(void **state)
{
    st_chunks gpu, cpu;
    int skipped;
    (void)state;
    ST_NEED_MEDIA();
    read_both("yuv420p", &gpu, &cpu, &skipped);
    if (skipped)
        skip();
    assert_memory_equal(gpu.bytes, cpu.bytes, cpu.n_bytes);
    st_chunks_free(&gpu);
    st_chunks_free(&cpu);
}

static void test_rgb24_within_swscale_rounding(void **state)
{
    st_chunks gpu, cpu;
    int skipped;
    (void)state;
    ST_NEED_MEDIA();
    read_both("rgb24", &gpu, &cpu, &skipped);
    if (skipped)
        skip();
    int worst = 0;
    for (size_t i = 0; i < cpu.n_bytes; i++) {
        int d = abs((int)gpu.bytes[i] - (int)cpu.bytes[i]);
        worst = d > worst ? d : worst;
    }
    print_message("rgb24: largest difference from swscale %d\n", worst);
    assert_true(worst <= 3);
    st_chunks_free(&gpu);
    st_chunks_free(&cpu);
}

/* Seek on the cuda reader lands where the CPU reader lands (pts of the
** first chunk after it), and the metadata methods still answer on the host. */
static void test_seek_and_host_metadata(void **state)
{
    loom_dl_device dev;
    (void)state;
    ST_NEED_MEDIA();
    AT_NEED_CUDA("audio.stream_reader_pop_chunk", &dev);
    loom_object *r = nvdec_reader(dev, "frames_per_chunk=3;format=rgb24;hw_accel=cuda");
    if (r == NULL)
        skip();
    assert_true(st_call_i64(r, "audio.stream_reader_num_src_streams", NULL) >= 1);
    char a[512];
    snprintf(a, sizeof a, "src=%s", st_media("av_h264.mp4"));
    loom_object *c = st_reader(a);
    assert_int_equal(st_call_i64(c, "audio.stream_reader_add_basic_video_stream", "frames_per_chunk=3;format=rgb24"), 0);
    for (int k = 0; k < 2; k++) {
        loom_object *x = k == 0 ? r : c;
        assert_int_equal(st_call(x, "audio.stream_reader_seek", "timestamp=0.5;mode=precise", NULL, 0), LOOM_OK);
    }
    st_chunks g, h;
    st_read_all(r, 1, 0, &g);
    st_read_all(c, 1, 0, &h);
    assert_int_equal(g.n_chunks, h.n_chunks);
    assert_true(g.n_chunks > 0 && g.pts[0] == h.pts[0]);
    st_chunks_free(&g);
    st_chunks_free(&h);
    loom_object_free(c);
    loom_object_free(r);
}

/* Without a GPU (the audio-cuda pack loaded, no device), a reader made on
** cuda refuses hw_accel=cuda with a clear message, and nothing crashes. */
static void test_without_a_device_the_add_says_so(void **state)
{
    loom_dl_device dev;
    (void)state;
    ST_NEED_MEDIA();
    if (at_cuda_device(&dev) || !tu_has_backend("audio.stream_reader_add_basic_video_stream", "cuda")) {
        print_message("skipped: a CUDA device is here (the other tests run NVDEC), or no audio-cuda pack\n");
        skip();
    }
    char a[512];
    snprintf(a, sizeof a, "src=%s", st_media("av_h264.mp4"));
    loom_object *r = st_reader_on(a, (loom_dl_device){ LOOM_DEVICE_CUDA, 0 });
    loom_tensor *out = NULL;
    assert_int_equal(st_call(r, "audio.stream_reader_add_basic_video_stream", "frames_per_chunk=2;hw_accel=cuda",
                             &out, 1), LOOM_EINVAL);
    assert_null(out);
    print_message("without a device: %s\n", loom_last_error());
    assert_non_null(strstr(loom_last_error(), "'hw_accel' \"cuda\""));
    /* the metadata methods still run on the host */
    assert_true(st_call_i64(r, "audio.stream_reader_num_src_streams", NULL) >= 1);
    loom_object_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_yuv420p_equals_the_cpu_decode),
        cmocka_unit_test(test_rgb24_within_swscale_rounding),
        cmocka_unit_test(test_seek_and_host_metadata),
        cmocka_unit_test(test_without_a_device_the_add_says_so),
    };
    return cmocka_run_group_tests(tests, st_setup, st_teardown);
}
