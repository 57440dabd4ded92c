/* SPDX-License-Identifier: BSD-3-Clause */
/*
** stream_test_util.c - the media and helpers of the stream tests
** (stream_test_util.h).
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "stream_test_util.h"
#include "tu_ops.h"

static char media_dir[256];
static int have_media, made_here;

int st_have_media(void) { return have_media; }

int st_setup(void **state)
{
    if (tu_setup(state) != 0)
        return -1;
    const char *src = getenv("LOOM_SOURCE_ROOT");
    if (system("command -v ffmpeg >/dev/null 2>&1") != 0)
        return 0;
    const char *made = getenv("LOOM_STREAM_MEDIA");     /* the build's copy (tests/audio/stream/meson.build) */
    if (made != NULL && *made) {
        snprintf(media_dir, sizeof media_dir, "%s", made);
        have_media = 1;
        return 0;
    }
    if (src == NULL)
        return 0;
    made_here = 1;
    snprintf(media_dir, sizeof media_dir, "%s/loom-stream-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (mkdtemp(media_dir) == NULL)
        return -1;
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "sh '%s/tools/gen_stream_media.sh' '%s'", src, media_dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "tools/gen_stream_media.sh failed\n");
        return -1;
    }
    have_media = 1;
    return 0;
}

int st_teardown(void **state)
{
    if (made_here) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", media_dir);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", media_dir);
    }
    return tu_teardown(state);
}

const char *st_media(const char *name)
{
    static char buf[8][512];
    static int slot;
    char *b = buf[slot++ % 8];
    snprintf(b, 512, "%s/%s", media_dir, name);
    return b;
}

uint8_t *st_read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(sz > 0 ? (size_t)sz : 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)sz, f), (size_t)sz);
    fclose(f);
    *n = (size_t)sz;
    return b;
}

uint8_t *st_ffmpeg(size_t *n, const char *fmt, ...)
{
    char args[2048], cmd[2300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "ffmpeg -nostdin -hide_banner -loglevel error %s", args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t cap = 1 << 16, len = 0;
    uint8_t *b = malloc(cap);
    assert_non_null(b);
    size_t k;
    while ((k = fread(b + len, 1, cap - len, p)) > 0) {
        len += k;
        if (len == cap) {
            cap *= 2;
            b = realloc(b, cap);
            assert_non_null(b);
        }
    }
    int rc = pclose(p);
    if (rc != 0)
        fail_msg("%s: exit status %d", cmd, rc);
    *n = len;
    return b;
}

/* "k=v;k=v" into attributes; "\\;" is a ';' inside a value (option lists). */
static loom_attrs *parse(const char *scope, const char *attrs)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    if (attrs == NULL)
        return a;
    char *s = malloc(strlen(attrs) + 1);
    assert_non_null(s);
    const char *p = attrs;
    while (*p) {
        size_t n = 0;
        for (; *p && *p != ';'; p++)
            s[n++] = (*p == '\\' && p[1] == ';') ? *++p : *p;
        s[n] = '\0';
        if (*p == ';')
            p++;
        if (n == 0)
            continue;
        char *eq = strchr(s, '=');
        assert_non_null(eq);
        *eq = '\0';
        if (loom_attrs_parse(a, scope, s, eq + 1) != LOOM_OK)
            fail_msg("attribute %s of %s: %s", s, scope, loom_last_error());
    }
    free(s);
    return a;
}

static loom_object *object_on(const char *cls, const char *attrs, const loom_dl_device *device)
{
    loom_attrs *a = parse(cls, attrs);
    loom_object_options opt = LOOM_OBJECT_OPTIONS_INIT;
    loom_object *o = NULL;
    if (device != NULL)
        opt.device = *device;
    if (loom_object_create_ex(&o, cls, a, &opt) != LOOM_OK)
        fail_msg("%s(%s): %s", cls, attrs ? attrs : "", loom_last_error());
    loom_attrs_free(a);
    return o;
}

static loom_object *object(const char *cls, const char *attrs) { return object_on(cls, attrs, NULL); }

loom_object *st_reader(const char *attrs) { return object("audio.stream_reader", attrs); }

loom_object *st_reader_on(const char *attrs, loom_dl_device device)
{
    return object_on("audio.stream_reader", attrs, &device);
}

loom_object *st_writer(const char *attrs) { return object("audio.stream_writer", attrs); }

loom_status st_call_in(loom_object *r, const char *op, const char *attrs, const loom_tensor *const *in, int32_t n_in,
                       loom_tensor **out, int32_t n_out)
{
    loom_attrs *a = parse(op, attrs);
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = r;
    loom_status st = loom_run(op, in, n_in, a, out, n_out, &opt);
    loom_attrs_free(a);
    return st;
}

loom_status st_call(loom_object *r, const char *op, const char *attrs, loom_tensor **out, int32_t n_out)
{
    return st_call_in(r, op, attrs, NULL, 0, out, n_out);
}

/* The stderr of a command (its stdout discarded): empty when all is well. */
static int quiet(const char *cmd)
{
    char full[1200];
    snprintf(full, sizeof full, "%s 2>&1 >/dev/null", cmd);
    FILE *p = popen(full, "r");
    assert_non_null(p);
    char buf[512];
    size_t n = fread(buf, 1, sizeof buf - 1, p);
    buf[n] = '\0';
    int rc = pclose(p);
    if (rc != 0 || n > 0) {
        fprintf(stderr, "%s: exit status %d: %s\n", cmd, rc, buf);
        return 0;
    }
    return 1;
}

int st_cli_accepts(const char *path)
{
    static int said;
    if (system("command -v ffprobe >/dev/null 2>&1 && command -v ffmpeg >/dev/null 2>&1") != 0) {
        if (!said++)
            fprintf(stderr, "the ffmpeg CLI is not installed: the written files are not checked with it\n");
        return 1;
    }
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "ffprobe -v error -show_format -show_streams '%s'", path);
    if (!quiet(cmd))
        return 0;
    snprintf(cmd, sizeof cmd, "ffmpeg -nostdin -v error -i '%s' -f null -", path);
    return quiet(cmd);
}

int64_t st_call_i64(loom_object *r, const char *op, const char *attrs)
{
    loom_tensor *t = NULL;
    if (st_call(r, op, attrs, &t, 1) != LOOM_OK)
        fail_msg("%s(%s): %s", op, attrs ? attrs : "", loom_last_error());
    int64_t v = *(int64_t *)loom_data(t);
    loom_tensor_free(t);
    return v;
}

static int pop_one(loom_object *r, int32_t output, st_chunks *c)
{
    char a[32];
    snprintf(a, sizeof a, "output=%d", output);
    loom_tensor *out[2] = { NULL, NULL };
    if (st_call(r, "audio.stream_reader_pop_chunk", a, out, 2) != LOOM_OK)
        fail_msg("pop_chunk: %s", loom_last_error());
    for (int i = 0; i < 2; i++)
        if (out[i]->device.device_type != LOOM_DEVICE_CPU) {     /* a reader on cuda: to the host */
            loom_tensor *h = NULL;
            const loom_dl_device cpu = { LOOM_DEVICE_CPU, 0 };
            if (loom_tensor_copy_to(&h, out[i], &cpu) != LOOM_OK)
                fail_msg("pop_chunk: copying output %d to the host: %s", i, loom_last_error());
            loom_tensor_free(out[i]);
            out[i] = h;
        }
    int64_t frames = out[0]->shape[0];
    if (frames > 0) {
        size_t nb = loom_tensor_nbytes(out[0]);
        c->bytes = realloc(c->bytes, c->n_bytes + nb);
        assert_non_null(c->bytes);
        memcpy(c->bytes + c->n_bytes, loom_data(out[0]), nb);
        c->n_bytes += nb;
        assert_true(c->n_chunks < 4096);
        c->frames[c->n_chunks] = frames;
        c->pts[c->n_chunks] = *(double *)loom_data(out[1]);
        c->n_chunks++;
        c->dtype = loom_tensor_dtype_of(out[0]);
    }
    loom_tensor_free(out[0]);
    loom_tensor_free(out[1]);
    return frames > 0;
}

void st_read_all(loom_object *r, int32_t n_outputs, int32_t output, st_chunks *c)
{
    memset(c, 0, sizeof *c);
    for (;;) {
        int64_t eof = st_call_i64(r, "audio.stream_reader_fill_buffer", NULL);
        if (eof)
            break;
        /* torchaudio's stream(): one chunk of every output per iteration */
        for (int32_t k = 0; k < n_outputs; k++) {
            if (k == output)
                pop_one(r, output, c);
            else {
                st_chunks other = { 0 };
                pop_one(r, k, &other);
                st_chunks_free(&other);
            }
        }
    }
    while (pop_one(r, output, c)) {
    }
}

void st_chunks_free(st_chunks *c)
{
    free(c->bytes);
    c->bytes = NULL;
}
