/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_files_truncated.c - every truncation of each shipped WAV, FLAC, OGG
** and Opus file, and seeded edits of each (bytes overwritten, flipped,
** removed), through audio.load and audio.info from memory: each gives an
** error naming 'src' or a valid result (no more frames than the file
** holds, in [-1, 1] for a cut), and never a crash (ASan and UBSan
** watch the runs in tools/dev test). tests/fuzz/fuzz_audio_file explores
** further.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "files_test_util.h"

#define EDITS_PER_FILE 400

/* load (and info: with_info) of bytes: OK with a sane result, or an error that names src */
static void decode(const loom_tensor *bytes, int64_t max_frames, int64_t channels, int with_info, const char *what,
                   int64_t *ok)
{
    const loom_tensor *in[1] = { bytes };
    loom_tensor *out[5];
    loom_status st = at_run("audio.load", in, 1, NULL, out, 2);
    if (st == LOOM_OK) {
        const loom_tensor *w = out[0];
        assert_int_equal(w->ndim, 2);
        /* a cut of a valid file holds valid samples (an edited float file
        ** may hold any float, NaN included: that is its data) */
        const float *p = loom_data(w);
        for (int64_t i = 0; channels > 0 && i < loom_numel(w); i++)
            if (!(fabsf(p[i]) <= 1.0f))
                fail_msg("%s: sample %lld is %g", what, (long long)i, (double)p[i]);
        if (channels > 0 && w->shape[0] == channels && w->shape[1] > max_frames)
            fail_msg("%s: %lld frames from a file of %lld", what, (long long)w->shape[1], (long long)max_frames);
        loom_tensor_free(out[0]);
        loom_tensor_free(out[1]);
        (*ok)++;
    } else if (strstr(loom_last_error(), "'src'") == NULL) {
        fail_msg("%s: the error does not name 'src': %s", what, loom_last_error());
    }
    if (with_info && at_run("audio.info", in, 1, NULL, out, 5) == LOOM_OK)
        for (int k = 0; k < 5; k++)
            loom_tensor_free(out[k]);
}

static void every_truncation_fails_or_is_shorter(void **state)
{
    ft_file files[16];
    const int n = ft_files(files, 16);
    (void)state;
    for (int i = 0; i < n; i++) {
        loom_tensor *all = ft_bytes(files[i].name);
        int64_t ok = 0;
        for (int64_t len = 0; len < loom_numel(all); len++) {
            loom_tensor *cut = ft_prefix(all, len);
            char what[160];
            snprintf(what, sizeof what, "%.64s cut to %lld bytes", files[i].name, (long long)len);
            decode(cut, files[i].frames, files[i].channels, len % 8 == 0, what, &ok);
            loom_tensor_free(cut);
        }
        print_message("%-20s %lld truncations: %lld decoded, the rest refused\n", files[i].name,
                      (long long)loom_numel(all), (long long)ok);
        loom_tensor_free(all);
    }
}

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

static void seeded_edits_never_crash(void **state)
{
    ft_file files[16];
    const int n = ft_files(files, 16);
    (void)state;
    for (int i = 0; i < n; i++) {
        loom_tensor *all = ft_bytes(files[i].name);
        const int64_t size = loom_numel(all);
        int64_t ok = 0;
        uint64_t s = 0x5DEECE66Dull + (uint64_t)i;
        for (int e = 0; e < EDITS_PER_FILE; e++) {
            loom_tensor *ed = ft_prefix(all, size);
            uint8_t *p = loom_data(ed);
            const int kind = (int)(next(&s) % 3), count = 1 + (int)(next(&s) % 4);
            /* headers hold what matters: half the edits land in the first 128 bytes */
            for (int k = 0; k < count; k++) {
                const int64_t at = (int64_t)(next(&s) % (uint64_t)(e % 2 ? size : (size < 128 ? size : 128)));
                if (kind == 0)
                    p[at] = (uint8_t)next(&s);
                else if (kind == 1)
                    p[at] ^= (uint8_t)(1u << (next(&s) % 8));
                else
                    p[at] = (uint8_t)(k % 2 ? 0xFF : 0x00);
            }
            char what[160];
            snprintf(what, sizeof what, "%.64s edit %d", files[i].name, e);
            decode(ed, INT64_MAX, 0, 1, what, &ok);
            loom_tensor_free(ed);
        }
        print_message("%-20s %d edits: %lld decoded, the rest refused\n", files[i].name, EDITS_PER_FILE,
                      (long long)ok);
        loom_tensor_free(all);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_truncation_fails_or_is_shorter),
        cmocka_unit_test(seeded_edits_never_crash),
    };
    return cmocka_run_group_tests_name("audio_files_truncated", tests, tu_setup, tu_teardown);
}
