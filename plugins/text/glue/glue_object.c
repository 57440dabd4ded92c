/* SPDX-License-Identifier: BSD-3-Clause */
/*
** glue_object.c - the text.glue object class and its method: create opens
** the split's file (torchtext's extracted path under root, else the bare
** file name under root, or `file`) and skips the header line where
** torchtext does; each call parses the next rows, up to max_rows, and
** returns them as columns. Rows stream: memory holds one call's rows.
**
** A malformed row (one torchtext's parser would raise on, glue_datasets.c)
** fails the call with "<file>:<line>: <why>" under on_error raise; with
** skip it is counted in stats[2] and reading goes on. A row with invalid
** UTF-8 in a yielded string is malformed too (torchtext decodes strictly).
** Calls on one object are serialised: the object is a cursor.
**
** Where no extracted file is found, the split is read from torchtext's
** archive (glue_archive: root/<archive>, root itself when root is a file,
** or `file` when it starts as a zip does, "PK\3\4" or "PK\5\6", or as
** gzip does, 1f 8b, for STS-B's tar): the first member whose name contains
** the split's path, as torchtext's filter on the member name, "__MACOSX/"
** ones aside, streamed (nothing is extracted to disk) through libzip for a
** zip (random access to the member, its CRC checked) and libarchive for the
** .tar.gz (a gzip stream read in order, which libzip does not read).
** Messages then name "<archive>/<member>" as the file.
*/
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <archive.h>
#include <archive_entry.h>
#include <zip.h>

#include "glue.h"

#define W TEXT_GLUE_CLASS

PK_ATTR_TABLE(text_glue_class, TEXT_GLUE_CLASS_ATTRS);

/* A growable byte or element buffer. */
typedef struct gbuf {
    void *p;
    size_t len, cap;               /* in bytes */
} gbuf;

static int gbuf_add(gbuf *b, const void *src, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n)
            cap *= 2;
        void *q = realloc(b->p, cap);
        if (q == NULL)
            return -1;
        b->p = q;
        b->cap = cap;
    }
    if (n > 0)
        memcpy((char *)b->p + b->len, src, n);
    b->len += n;
    return 0;
}

typedef struct glue_object {
    pthread_mutex_t lock;
    const glue_dataset *d;
    char split[32];
    char path[PATH_MAX];
    const char *file_name;         /* the path's last part, for messages */
    char zip_name[4352];           /* "<archive>/<member>" when read from an archive */
    FILE *f;
    zip_t *za;                     /* a zip, NULL: a plain file or a tar */
    zip_file_t *zf;                /* its split member */
    struct archive *tar;           /* a .tar.gz positioned at the split member, or NULL */
    glue_csv csv;
    int skip_bad;
    int64_t yielded, filtered, skipped;
    gbuf label, score, idx, t1, t2, o1, o2;
} glue_object;

static void glue_destroy(void *state)
{
    glue_object *o = state;
    if (o == NULL)
        return;
    glue_csv_close(&o->csv);
    if (o->f != NULL)
        fclose(o->f);
    if (o->zf != NULL)
        zip_fclose(o->zf);
    if (o->za != NULL)
        zip_discard(o->za);
    if (o->tar != NULL)
        archive_read_free(o->tar);
    free(o->label.p);
    free(o->score.p);
    free(o->idx.p);
    free(o->t1.p);
    free(o->t2.p);
    free(o->o1.p);
    free(o->o2.p);
    pthread_mutex_destroy(&o->lock);
    free(o);
}

static long zip_read(void *ctx, uint8_t *buf, size_t n)
{
    zip_int64_t k = zip_fread(ctx, buf, n);
    return k < 0 ? -1 : (long)k;
}

static long tar_read(void *ctx, uint8_t *buf, size_t n)
{
    la_ssize_t k = archive_read_data(ctx, buf, n);
    return k < 0 ? -1 : (long)k;
}

/* The split's member of the .tar.gz at o->path, read in order up to it. */
static loom_status open_tar_member(glue_object *o, const char *rel)
{
    const char *tname = strrchr(o->path, '/') != NULL ? strrchr(o->path, '/') + 1 : o->path;
    struct archive_entry *e;
    if ((o->tar = archive_read_new()) == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", W);
    archive_read_support_filter_gzip(o->tar);
    archive_read_support_format_tar(o->tar);
    int r = archive_read_open_filename(o->tar, o->path, 1 << 16);
    while (r == ARCHIVE_OK && (r = archive_read_next_header(o->tar, &e)) == ARCHIVE_OK) {
        const char *name = archive_entry_pathname(e);
        if (name != NULL && archive_entry_filetype(e) == AE_IFREG && strncmp(name, "__MACOSX/", 9) != 0
            && strstr(name, rel) != NULL) {
            snprintf(o->zip_name, sizeof o->zip_name, "%.255s/%.4000s", tname, name);
            o->file_name = o->zip_name;
            if (glue_csv_open_reader(&o->csv, tar_read, o->tar, glue_quote_none(o->d)) != 0)
                return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", W);
            if (glue_skips_header(o->d))
                glue_csv_skip_line(&o->csv);
            return LOOM_OK;
        }
    }
    if (r == ARCHIVE_EOF)
        return pk_host->fail(LOOM_ENOENT, "%s: %s %s: %s: no member %s", W, glue_dataset_name(o->d), o->split,
                             tname, rel);
    return pk_host->fail(LOOM_EFORMAT, "%s: %s %s: %s: not a readable .tar.gz (corrupt or truncated?): %s", W,
                         glue_dataset_name(o->d), o->split, tname,
                         archive_error_string(o->tar) != NULL ? archive_error_string(o->tar) : "unknown error");
}

static int is_regular(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* The split's member of the zip at o->path: LOOM_OK with the reader open,
** or the failure naming the archive (and the member). */
static loom_status open_member(glue_object *o, const char *rel)
{
    if (glue_archive_is_tar(o->d))
        return open_tar_member(o, rel);
    const char *zname = strrchr(o->path, '/') != NULL ? strrchr(o->path, '/') + 1 : o->path;
    int zerr = 0;
    o->za = zip_open(o->path, ZIP_RDONLY, &zerr);
    if (o->za == NULL) {
        zip_error_t ze;
        zip_error_init_with_code(&ze, zerr);
        loom_status st = pk_host->fail(LOOM_EFORMAT, "%s: %s %s: %s: not a readable zip (corrupt or truncated?): "
                                       "%s", W, glue_dataset_name(o->d), o->split, zname, zip_error_strerror(&ze));
        zip_error_fini(&ze);
        return st;
    }
    zip_int64_t n = zip_get_num_entries(o->za, 0), found = -1;
    for (zip_int64_t i = 0; i < n && found < 0; i++) {
        const char *name = zip_get_name(o->za, (zip_uint64_t)i, ZIP_FL_ENC_RAW);
        if (name != NULL && strncmp(name, "__MACOSX/", 9) != 0 && strstr(name, rel) != NULL)
            found = i;
    }
    if (found < 0)
        return pk_host->fail(LOOM_ENOENT, "%s: %s %s: %s: no member %s", W, glue_dataset_name(o->d), o->split,
                             zname, rel);
    const char *member = zip_get_name(o->za, (zip_uint64_t)found, ZIP_FL_ENC_RAW);
    snprintf(o->zip_name, sizeof o->zip_name, "%.255s/%.4000s", zname, member);
    o->zf = zip_fopen_index(o->za, (zip_uint64_t)found, 0);
    if (o->zf == NULL)
        return pk_host->fail(LOOM_EFORMAT, "%s: %s %s: %s: cannot read member %s: %s", W, glue_dataset_name(o->d),
                             o->split, zname, member, zip_strerror(o->za));
    o->file_name = o->zip_name;
    if (glue_csv_open_reader(&o->csv, zip_read, o->zf, glue_quote_none(o->d)) != 0)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", W);
    if (glue_skips_header(o->d))
        glue_csv_skip_line(&o->csv);
    return LOOM_OK;
}

static loom_status open_split(glue_object *o, const loom_attr_value *a)
{
    const char *splits;
    const char *rel = glue_split_file(o->d, o->split, &splits);
    if (rel == NULL)
        return pk_host->fail(LOOM_EINVAL, "%s: %s has no split '%s' (its splits: %s)", W, glue_dataset_name(o->d),
                             o->split, splits);
    const loom_attr_value *file = &a[PK_ATTR(text_glue_class, file)];
    if (file->is_set && file->u.s[0] != '\0') {
        snprintf(o->path, sizeof o->path, "%s", file->u.s);
        o->f = fopen(o->path, "rb");
        unsigned char magic[4] = { 0 };
        const int got = o->f != NULL && glue_archive(o->d) != NULL && fread(magic, 1, 4, o->f) == 4;
        const int is_zip = got && !glue_archive_is_tar(o->d) && magic[0] == 'P' && magic[1] == 'K'
                        && ((magic[2] == 3 && magic[3] == 4) || (magic[2] == 5 && magic[3] == 6));
        const int is_gzip = got && glue_archive_is_tar(o->d) && magic[0] == 0x1f && magic[1] == 0x8b;
        if (is_zip || is_gzip) {
            fclose(o->f);   /* the dataset's archive given as the file */
            o->f = NULL;
            return open_member(o, rel);
        }
        if (o->f != NULL)
            rewind(o->f);
    } else {
        const char *root = a[PK_ATTR(text_glue_class, root)].u.s;
        const char *zip = glue_archive(o->d);
        if (zip != NULL && is_regular(root)) {   /* root is the archive itself */
            snprintf(o->path, sizeof o->path, "%s", root);
            return open_member(o, rel);
        }
        const char *base = strrchr(rel, '/') != NULL ? strrchr(rel, '/') + 1 : rel;
        char tried[2 * PATH_MAX + 8] = "";
        const char *cands[3] = { rel, base, NULL };
        char mnli[128];
        if (strncmp(rel, "multinli_1.0_", 13) == 0) {   /* the zip's own folder */
            snprintf(mnli, sizeof mnli, "multinli_1.0/%s", rel);
            cands[2] = mnli;
        }
        for (int i = 0; i < 3 && o->f == NULL && cands[i] != NULL; i++) {
            if (i == 1 && base == rel)
                continue;
            snprintf(o->path, sizeof o->path, "%s/%s", root, cands[i]);
            o->f = fopen(o->path, "rb");
            snprintf(tried + strlen(tried), sizeof tried - strlen(tried), "%s%s", tried[0] ? ", " : "", o->path);
        }
        if (o->f == NULL && zip != NULL) {
            snprintf(o->path, sizeof o->path, "%s/%s", root, zip);
            if (is_regular(o->path))
                return open_member(o, rel);
            snprintf(tried + strlen(tried), sizeof tried - strlen(tried), ", %s", o->path);
        }
        if (o->f == NULL)
            return pk_host->fail(LOOM_ENOENT, "%s: %s %s: no file %s (extract the distribution files into root%s%s)",
                                 W, glue_dataset_name(o->d), o->split, tried, zip != NULL ? ", or put there " : "",
                                 zip != NULL ? zip : "");
    }
    if (o->f == NULL)
        return pk_host->fail(LOOM_ENOENT, "%s: cannot open '%s'", W, o->path);
    o->file_name = strrchr(o->path, '/') != NULL ? strrchr(o->path, '/') + 1 : o->path;
    glue_csv_open(&o->csv, o->f, NULL, 0, glue_quote_none(o->d));
    if (glue_skips_header(o->d))
        glue_csv_skip_line(&o->csv);
    return LOOM_OK;
}

static loom_status glue_create(const loom_object_args *args, void **state_out)
{
    const loom_attr_value *a = args->attrs;
    *state_out = NULL;
    const char *name = a[PK_ATTR(text_glue_class, dataset)].u.s;
    const glue_dataset *d = glue_find_dataset(name);
    if (d == NULL)
        return pk_host->fail(LOOM_EINVAL, "%s: dataset '%s' is not one of CoLA, SST2, MRPC, QQP, STSB, MNLI, "
                             "QNLI, RTE, WNLI", W, name);
    const char *split = a[PK_ATTR(text_glue_class, split)].u.s;
    const char *on_error = a[PK_ATTR(text_glue_class, on_error)].u.s;
    if (strcmp(on_error, "raise") != 0 && strcmp(on_error, "skip") != 0)
        return pk_host->fail(LOOM_EINVAL, "%s: on_error '%s' is not raise or skip", W, on_error);
    if (strlen(split) >= 32)
        return pk_host->fail(LOOM_EINVAL, "%s: split '%.40s...' is not a split of %s", W, split,
                             glue_dataset_name(d));
    glue_object *o = calloc(1, sizeof *o);
    if (o == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", W);
    pthread_mutex_init(&o->lock, NULL);
    o->d = d;
    snprintf(o->split, sizeof o->split, "%s", split);
    o->skip_bad = strcmp(on_error, "skip") == 0;
    loom_status st = open_split(o, a);
    if (st != LOOM_OK) {
        glue_destroy(o);
        return st;
    }
    *state_out = o;
    return LOOM_OK;
}

/* 1 when s[0..n) is valid UTF-8 (no overlongs, no surrogates, <= U+10FFFF). */
static int utf8_ok(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t k;
        unsigned cp, min;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            k = 1, cp = c & 0x1F, min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            k = 2, cp = c & 0x0F, min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            k = 3, cp = c & 0x07, min = 0x10000;
        } else {
            return 0;
        }
        for (size_t j = 1; j <= k; j++) {
            if (i + j >= n || (s[i + j] & 0xC0) != 0x80)
                return 0;
            cp = (cp << 6) | (s[i + j] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += k + 1;
    }
    return 1;
}

/* Python's csv refuses a field of more than csv.field_size_limit()
** characters (131072 by default, which torchtext keeps): such a row is
** malformed. Characters are code points; bytes bound them from above. */
#define CSV_FIELD_LIMIT 131072

static int field_too_long(const glue_csv *r)
{
    for (int32_t i = 0; i < r->n_fields; i++) {
        const char *f = glue_csv_field(r, i);
        size_t n = strlen(f), chars = 0;
        if (n <= CSV_FIELD_LIMIT)
            continue;
        for (size_t k = 0; k < n; k++)
            chars += ((unsigned char)f[k] & 0xC0) != 0x80;
        if (chars > CSV_FIELD_LIMIT)
            return 1;
    }
    return 0;
}

static void reset_chunk(glue_object *o)
{
    o->label.len = o->score.len = o->idx.len = o->t1.len = o->t2.len = o->o1.len = o->o2.len = 0;
}

static loom_status add_row(glue_object *o, const glue_row *row)
{
    int bad = 0;
    if (row->has_label)
        bad |= gbuf_add(&o->label, &row->label, sizeof row->label);
    if (row->has_score)
        bad |= gbuf_add(&o->score, &row->score, sizeof row->score);
    if (row->has_idx)
        bad |= gbuf_add(&o->idx, &row->idx, sizeof row->idx);
    if (row->text1 != NULL) {
        bad |= gbuf_add(&o->t1, row->text1, row->text1_len);
        int64_t end = (int64_t)o->t1.len;
        bad |= gbuf_add(&o->o1, &end, sizeof end);
    }
    if (row->text2 != NULL) {
        bad |= gbuf_add(&o->t2, row->text2, row->text2_len);
        int64_t end = (int64_t)o->t2.len;
        bad |= gbuf_add(&o->o2, &end, sizeof end);
    }
    return bad ? pk_host->fail(LOOM_ENOMEM, "%s: out of memory", W) : LOOM_OK;
}

static loom_status put_out(loom_call *call, int32_t index, loom_dtype dt, const gbuf *b, const int64_t *prefix)
{
    const size_t es = pk_host->dtype_size(dt);
    int64_t n = (int64_t)(b->len / es) + (prefix != NULL);
    loom_tensor *t;
    loom_status st = pk_host->alloc_output(call, index, dt, 1, &n, &t);
    if (st != LOOM_OK || n == 0)
        return st;
    char *dst = loom_data(t);
    if (prefix != NULL) {
        memcpy(dst, prefix, sizeof *prefix);
        dst += sizeof *prefix;
    }
    if (b->len > 0)
        memcpy(dst, b->p, b->len);
    return LOOM_OK;
}

static loom_status read_rows(glue_object *o, int64_t max_rows)
{
    char why[160];
    int64_t n = 0;
    while (n < max_rows) {
        int r = glue_csv_next(&o->csv, why, sizeof why);
        if (r == 0)
            break;
        glue_row row;
        if (r > 0 && field_too_long(&o->csv)) {
            snprintf(why, sizeof why, "field larger than field limit (%d), as Python's csv says", CSV_FIELD_LIMIT);
            r = -1;
        } else if (r > 0) {
            r = glue_map_row(o->d, o->split, &o->csv, &row, why, sizeof why);
        }
        if (r > 0 && ((row.text1 != NULL && !utf8_ok((const unsigned char *)row.text1, row.text1_len))
                      || (row.text2 != NULL && !utf8_ok((const unsigned char *)row.text2, row.text2_len)))) {
            snprintf(why, sizeof why, "invalid UTF-8");
            r = -1;
        }
        if (r == 0) {
            o->filtered++;
            continue;
        }
        if (r < 0) {
            if (o->skip_bad) {
                o->skipped++;
                continue;
            }
            return pk_host->fail(LOOM_EFORMAT, "%s: %s %s: %s:%lld: malformed row: %s (on_error=skip skips such "
                                 "rows)", W, glue_dataset_name(o->d), o->split, o->file_name,
                                 (long long)o->csv.row_line, why);
        }
        loom_status st = add_row(o, &row);
        if (st != LOOM_OK)
            return st;
        n++;
        o->yielded++;
    }
    if (o->f != NULL && ferror(o->f))
        return pk_host->fail(LOOM_EIO, "%s: reading '%s' failed", W, o->path);
    if (o->csv.rerr && o->tar != NULL)
        return pk_host->fail(LOOM_EFORMAT, "%s: %s %s: %s: reading the member failed (corrupt or truncated "
                             ".tar.gz?): %s", W, glue_dataset_name(o->d), o->split, o->zip_name,
                             archive_error_string(o->tar) != NULL ? archive_error_string(o->tar) : "unknown error");
    if (o->csv.rerr)
        return pk_host->fail(LOOM_EFORMAT, "%s: %s %s: %s: reading the member failed (corrupt or truncated zip?): "
                             "%s", W, glue_dataset_name(o->d), o->split, o->zip_name, zip_file_strerror(o->zf));
    return LOOM_OK;
}

static loom_status glue_run(loom_call *call)
{
    glue_object *o = call->object;
    if (o == NULL)
        return pk_host->fail(LOOM_EINVAL, "%s is a method: it needs a %s object", W, W);
    pthread_mutex_lock(&o->lock);
    reset_chunk(o);
    loom_status st = read_rows(o, call->attrs[PK_ATTR(text_glue, max_rows)].u.i);
    const int64_t zero = 0;
    const gbuf stats = { (int64_t[4]){ o->yielded, o->filtered, o->skipped, o->csv.line }, 4 * sizeof(int64_t), 0 };
    if (st == LOOM_OK)
        st = put_out(call, GLUE_OUT_LABEL, LOOM_DTYPE_I64, &o->label, NULL);
    if (st == LOOM_OK)
        st = put_out(call, GLUE_OUT_SCORE, LOOM_DTYPE_F64, &o->score, NULL);
    if (st == LOOM_OK)
        st = put_out(call, GLUE_OUT_IDX, LOOM_DTYPE_I64, &o->idx, NULL);
    if (st == LOOM_OK)
        st = put_out(call, GLUE_OUT_TEXT1, LOOM_DTYPE_U8, &o->t1, NULL);
    if (st == LOOM_OK)
        st = put_out(call, GLUE_OUT_TEXT1_OFF, LOOM_DTYPE_I64, &o->o1, &zero);
    if (st == LOOM_OK)
        st = put_out(call, GLUE_OUT_TEXT2, LOOM_DTYPE_U8, &o->t2, NULL);
    if (st == LOOM_OK)
        st = put_out(call, GLUE_OUT_TEXT2_OFF, LOOM_DTYPE_I64, &o->o2, &zero);
    if (st == LOOM_OK)
        st = put_out(call, GLUE_OUT_STATS, LOOM_DTYPE_I64, &stats, NULL);
    pthread_mutex_unlock(&o->lock);
    return st;
}

const loom_object_class text_glue_class = {
    .struct_size = sizeof(loom_object_class),
    .name = TEXT_GLUE_CLASS,
    .doc = "a GLUE split (CoLA, SST-2, MRPC, QQP, STS-B, MNLI, QNLI, RTE, WNLI) read as torchtext 0.18 parses "
           "it, streamed; method text.glue",
    PK_ATTRS(text_glue_class_attrs),
    .create = glue_create,
    .destroy = glue_destroy,
};

static const loom_object_class *const glue_classes[] = { &text_glue_class };
static const loom_kernel_desc glue_kernels[] = {
    PK_KERNEL_CPU(text_glue_schema, "cpu:stream", 0, glue_run),
};

const pk_module text_glue_cpu = {
    .name = "glue", .ops = text_glue_ops, .n_ops = PK_COUNT(text_glue_ops),
    .classes = glue_classes, .n_classes = PK_COUNT(glue_classes),
    .kernels = glue_kernels, .n_kernels = PK_COUNT(glue_kernels),
};
