/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tbe_object.c - the fbgemm.tbe object class (fbgemm.so only): create
** reads the tables table.0 .. table.<n-1> of the weights file, checks each
** against its weight type, dim and row alignment (a table whose bytes do
** not match rows * row_bytes is refused here, naming it), and builds the
** fbg_tbe_state of tbe.h. The tables stay in the mapped file (the slow
** tier when a cache is configured); nothing is copied, unless
** table_memory is hugepage (tbe_table_memory.c).
**
** Attribute names and defaults are fbgemm_gpu's (IntNBit module), except
** output_dtype (fp32 here, as the training module) and cache_load_factor
** (1.0 = no cache: the tables are in memory already).
*/
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cache/cache.h"
#include "tbe_internal.h"
#include "tbe_optim.h"

/* The class attributes: FBG_TBE_CLASS_ATTRS (tbe_internal.h). */
PK_ATTR_TABLE(fbg_tbe_class, FBG_TBE_CLASS_ATTRS);

static const loom_dl_device cpu = { LOOM_DEVICE_CPU, 0 };

/* The state and everything it points to, in one owner. */
typedef struct tbe_object {
    fbg_tbe_state s;
    fbg_tbe_cpu cpu;
    fbg_tbe_table *tables;
    int32_t *ftm;
    int64_t *D_offsets;
    void *table_copy;           /* table_memory hugepage: the tables' copy, else NULL */
    size_t table_copy_bytes;
} tbe_object;

static void tbe_destroy(void *state)
{
    tbe_object *o = state;
    if (o == NULL)
        return;
    if (o->s.device_state_free != NULL && o->s.device_state != NULL)
        o->s.device_state_free(o->s.device_state);
    if (o->s.cache != NULL)
        fbg_cache_destroy(o->s.cache);
    fbg_tbe_train_free(o->cpu.train);
    pthread_mutex_destroy(&o->cpu.lock);
    if (o->cpu.file_fd >= 0)
        close(o->cpu.file_fd);
    fbg_table_memory_free(o->table_copy, o->table_copy_bytes);
    free(o->tables);
    free(o->ftm);
    free(o->D_offsets);
    pk_host->free(cpu, o);
}

static const char *const W = FBG_TBE_CLASS;   /* names the class in messages */

/* t when name is "table.<t>" with t in the form "%d" prints it (digits only,
** no sign, no leading zero) and t < limit; else -1. */
static int64_t table_index(const char *name, int64_t limit)
{
    if (strncmp(name, "table.", 6) != 0)
        return -1;
    const char *p = name + 6;
    if (*p < '0' || *p > '9' || (p[0] == '0' && p[1] != '\0'))
        return -1;
    int64_t t = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        t = t * 10 + (*p - '0');
        if (t >= limit)
            return -1;
    }
    return *p == '\0' ? t : -1;
}

/* Number of tensors named table.0, table.1, ... (contiguous from 0), or -1
** when out of memory. One pass over the names (O(tensors)): a name lookup
** per table index would be a search per table, and a scan of every name
** per index (as this once was) is quadratic in the file's tensor count. No
** lookup misses, so the thread's error message is left alone. */
static int32_t count_tables(const loom_safetensors *st)
{
    const int64_t n = pk_host->safetensors_count(st);
    const int64_t limit = n < INT32_MAX ? n : INT32_MAX;
    if (limit <= 0)
        return 0;
    unsigned char *seen = calloc((size_t)limit, 1);
    if (seen == NULL)
        return -1;
    for (int64_t i = 0; i < n; i++) {
        int64_t t = table_index(pk_host->safetensors_name(st, i), limit);
        if (t >= 0)
            seen[t] = 1;
    }
    int32_t found = 0;
    while (found < limit && seen[found])
        found++;
    free(seen);
    return found;
}

/* Parse the comma-separated weights_tys into wt[n]. */
static loom_status parse_wtypes(const loom_attr_value *v, int32_t n, int32_t *wt)
{
    const char *p = v->u.s;
    for (int32_t t = 0; t < n; t++) {
        const char *end = strchr(p, ',');
        int64_t len = end != NULL ? end - p : (int64_t)strlen(p);
        while (len > 0 && *p == ' ')
            p++, len--;
        while (len > 0 && p[len - 1] == ' ')
            len--;
        int w = fbg_wtype_from_name(p, len);
        if (w < 0)
            return pk_host->fail(LOOM_EINVAL, "%s: weights_tys entry %d '%.*s' is not one of fp32, fp16, "
                                 "bf16, fp8, int8, int4, int2", W, (int)t, (int)len, p);
        wt[t] = w;
        if (end == NULL) {
            if (t + 1 != n)
                return pk_host->fail(LOOM_EINVAL, "%s: weights_tys '%s' names %d types for %d tables", W,
                                     v->u.s, (int)t + 1, (int)n);
            return LOOM_OK;
        }
        p = end + 1;
    }
    return pk_host->fail(LOOM_EINVAL, "%s: weights_tys '%s' names more types than the %d tables", W, v->u.s,
                         (int)n);
}

static fbg_wtype wtype_of_dtype(loom_dtype d)
{
    return d == LOOM_DTYPE_F32 ? FBG_WT_FP32 : d == LOOM_DTYPE_F16 ? FBG_WT_FP16
         : d == LOOM_DTYPE_BF16 ? FBG_WT_BF16 : FBG_WT_COUNT;
}

/* D of a table from its row bytes, or 0 when it cannot be told. */
static int64_t derive_dim(fbg_wtype t, int64_t row_bytes, int64_t align)
{
    int64_t d;
    switch (t) {
    case FBG_WT_FP32: d = row_bytes / 4; break;
    case FBG_WT_FP16:
    case FBG_WT_BF16: d = row_bytes / 2; break;
    case FBG_WT_FP8:  d = row_bytes; break;
    case FBG_WT_INT8: d = row_bytes - 4; break;
    case FBG_WT_INT4: d = (row_bytes - 4) * 2; break;
    case FBG_WT_INT2: d = (row_bytes - 4) * 4; break;
    default:          return 0;
    }
    /* with padding the row bytes fit several D: refuse to guess */
    return fbg_row_bytes_padded(t, d, align) == row_bytes && (align == 1 || !fbg_wtype_is_int(t)) ? d : 0;
}

/* Check table t of the file and fill tab. */
static loom_status load_table(const loom_object_args *args, int32_t t, int32_t wtype, const loom_attr_value *dims,
                            const loom_attr_value *rows_attr, int64_t align, fbg_tbe_table *tab)
{
    char name[32], buf[128];
    const loom_tensor *x;
    snprintf(name, sizeof name, "table.%d", (int)t);
    loom_status st = pk_host->safetensors_get(args->weights, name, &x);
    if (st != LOOM_OK)
        return st;
    const loom_dtype dt = loom_tensor_dtype_of(x);
    const fbg_wtype w = (fbg_wtype)wtype;
    const int native = wtype_of_dtype(dt) == w;
    if (x->ndim != 2 || (dt != LOOM_DTYPE_U8 && !native))
        return pk_host->fail(LOOM_EINVAL, "%s: table '%s' is %s; a %s table is a 2-D [rows, row_bytes] u8%s%s "
                             "tensor", W, name, fbgemm_describe(x, buf, sizeof buf), fbg_wtype_name(w),
                             fbg_wtype_is_int(w) || w == FBG_WT_FP8 ? "" : " or [rows, D] ",
                             fbg_wtype_is_int(w) || w == FBG_WT_FP8 ? "" : pk_host->dtype_name(
                                 w == FBG_WT_FP32 ? LOOM_DTYPE_F32 : w == FBG_WT_FP16 ? LOOM_DTYPE_F16
                                                                                      : LOOM_DTYPE_BF16));
    if (!loom_is_contiguous(x))
        return pk_host->fail(LOOM_EINVAL, "%s: table '%s' is not contiguous", W, name);
    /* the file's header says [rows, row_elements]: with 0 rows any row size
    ** is valid safetensors, so the row bytes are computed with a check */
    int64_t row_bytes;
    if (__builtin_mul_overflow(x->shape[1], (int64_t)pk_host->dtype_size(dt), &row_bytes)
        || row_bytes > 8 * FBG_MAX_DIM + FBG_MAX_ROW_ALIGNMENT)
        return pk_host->fail(LOOM_EINVAL, "%s: table '%s' is %s: its rows are larger than any %s row of "
                             "fbgemm (dim <= %lld)", W, name, fbgemm_describe(x, buf, sizeof buf),
                             fbg_wtype_name(w), (long long)FBG_MAX_DIM);
    int64_t dim = dims->is_set ? dims->u.ints[t] : derive_dim(w, row_bytes, align);
    if (dim <= 0)
        return pk_host->fail(LOOM_EINVAL, "%s: table '%s' (%s, %lld bytes per row, row_alignment %lld): "
                             "give embedding_dims, the dim cannot be told from the row bytes", W, name,
                             fbg_wtype_name(w), (long long)row_bytes, (long long)align);
    if (!fbg_dim_ok(w, dim))
        return pk_host->fail(LOOM_EINVAL, "%s: table '%s': dim %lld ('embedding_dims') is not valid for %s rows%s",
                             W, name, (long long)dim, fbg_wtype_name(w),
                             w == FBG_WT_INT4 ? " (must be even)" : w == FBG_WT_INT2 ? " (must be a multiple of 4)"
                                                                                        : "");
    const int64_t want = fbg_row_bytes_padded(w, dim, align);
    if (want != row_bytes)
        return pk_host->fail(LOOM_EINVAL, "%s: table '%s' is %s, %lld bytes per row, but a %s row of dim %lld "
                             "with row_alignment %lld takes %lld bytes", W, name,
                             fbgemm_describe(x, buf, sizeof buf), (long long)row_bytes, fbg_wtype_name(w),
                             (long long)dim, (long long)align, (long long)want);
    if (rows_attr->is_set && rows_attr->u.ints[t] != x->shape[0])
        return pk_host->fail(LOOM_EINVAL, "%s: table '%s' holds %lld rows (%.0f bytes) but 'num_embeddings' says "
                             "%lld rows (%.0f bytes)", W, name, (long long)x->shape[0],
                             (double)x->shape[0] * (double)row_bytes, (long long)rows_attr->u.ints[t],
                             (double)rows_attr->u.ints[t] * (double)row_bytes);
    *tab = (fbg_tbe_table){ .base = loom_data(x), .rows = x->shape[0], .dim = (int32_t)dim, .wtype = wtype,
                            .row_stride = row_bytes };
    return LOOM_OK;
}

static loom_status check_modes(const loom_attr_value *a, fbg_tbe_state *s)
{
    const char *pooling = a[PK_ATTR(fbg_tbe_class, pooling_mode)].u.s;
    const char *output = a[PK_ATTR(fbg_tbe_class, output_dtype)].u.s;
    const char *bounds = a[PK_ATTR(fbg_tbe_class, bounds_check_mode)].u.s;
    const int64_t align = a[PK_ATTR(fbg_tbe_class, row_alignment)].u.i;
    const int64_t ebits = a[PK_ATTR(fbg_tbe_class, fp8_exponent_bits)].u.i;
    const int64_t ebias = a[PK_ATTR(fbg_tbe_class, fp8_exponent_bias)].u.i;
    const double lf = a[PK_ATTR(fbg_tbe_class, cache_load_factor)].u.f;
    const char *algo = a[PK_ATTR(fbg_tbe_class, cache_algorithm)].u.s;
    const int64_t assoc = a[PK_ATTR(fbg_tbe_class, cache_assoc)].u.i;
    s->pooling = fbg_pooling_from_name(pooling);
    s->output_wtype = fbg_output_from_name(output);
    s->bounds_check_mode = fbg_bounds_from_name(bounds);
    if (s->pooling < 0)
        return pk_host->fail(LOOM_EINVAL, "%s: pooling_mode '%s' is not sum, mean or none", W, pooling);
    if (s->output_wtype < 0)
        return pk_host->fail(LOOM_EINVAL, "%s: output_dtype '%s' is not fp32, fp16 or bf16", W, output);
    if (s->bounds_check_mode < 0)
        return pk_host->fail(LOOM_EINVAL, "%s: bounds_check_mode '%s' is not fatal, warning, ignore or none", W,
                             bounds);
    if (align < 1 || align > FBG_MAX_ROW_ALIGNMENT)
        return pk_host->fail(LOOM_EINVAL, "%s: 'row_alignment' %lld is not in [1, %d]", W, (long long)align,
                             FBG_MAX_ROW_ALIGNMENT);
    /* fbgemm's check_fp8_params: both > 0 */
    if (ebits < 1 || ebits > 6 || ebias < 1 || ebias > 63)
        return pk_host->fail(LOOM_EINVAL, "%s: 'fp8_exponent_bits' %lld / 'fp8_exponent_bias' %lld out of range "
                             "(bits 1..6, bias 1..63)", W, (long long)ebits, (long long)ebias);
    if (!(lf >= 0.0 && lf <= 1.0))
        return pk_host->fail(LOOM_EINVAL, "%s: 'cache_load_factor' %g is not in [0, 1]", W, lf);
    if (strcmp(algo, "lru") != 0 && strcmp(algo, "lfu") != 0)
        return pk_host->fail(LOOM_EINVAL, "%s: cache_algorithm '%s' is not lru or lfu", W, algo);
    if (assoc < 1 || assoc > 1024)
        return pk_host->fail(LOOM_EINVAL, "%s: 'cache_assoc' %lld is not in [1, 1024]", W, (long long)assoc);
    s->row_alignment = (int32_t)align;
    s->fp8_exponent_bits = (int32_t)ebits;
    s->fp8_exponent_bias = (int32_t)ebias;
    s->cache_load_factor = lf;
    s->cache_algorithm = strcmp(algo, "lfu") == 0 ? FBG_CACHE_LFU : FBG_CACHE_LRU;
    s->cache_assoc = (int32_t)assoc;
    return LOOM_OK;
}

/* feature_table_map, D_offsets, total_D, max_D. */
static loom_status build_features(tbe_object *o, const loom_attr_value *ftm)
{
    fbg_tbe_state *s = &o->s;
    const int64_t nf = ftm->is_set ? ftm->count : s->n_tables;
    if (nf < 1 || nf > INT32_MAX / 2)
        return pk_host->fail(LOOM_EINVAL, "%s: feature_table_map has %lld entries, expected at least 1", W,
                             (long long)nf);
    o->ftm = malloc((size_t)nf * sizeof *o->ftm);
    o->D_offsets = malloc((size_t)(nf + 1) * sizeof *o->D_offsets);
    if (o->ftm == NULL || o->D_offsets == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", W);
    o->D_offsets[0] = 0;
    s->max_D = 0;
    s->all_same_D = 1;
    for (int64_t f = 0; f < nf; f++) {
        int64_t t = ftm->is_set ? ftm->u.ints[f] : f;
        if (t < 0 || t >= s->n_tables)
            return pk_host->fail(LOOM_EINVAL, "%s: 'feature_table_map'[%lld] = %lld is not a table index in "
                                 "[0, %d)", W, (long long)f, (long long)t, (int)s->n_tables);
        o->ftm[f] = (int32_t)t;
        const int32_t d = o->tables[t].dim;
        o->D_offsets[f + 1] = o->D_offsets[f] + d;
        if (d != o->tables[o->ftm[0]].dim)
            s->all_same_D = 0;
        if (d > s->max_D)
            s->max_D = d;
    }
    s->n_features = (int32_t)nf;
    s->feature_table_map = o->ftm;
    s->D_offsets = o->D_offsets;
    s->total_D = o->D_offsets[nf];
    return LOOM_OK;
}

static loom_status make_cache(fbg_tbe_state *s)
{
    if (s->cache_load_factor <= 0.0 || s->cache_load_factor >= 1.0)
        return LOOM_OK;
    fbg_cache_table *ct = malloc((size_t)s->n_tables * sizeof *ct);
    if (ct == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", W);
    for (int32_t t = 0; t < s->n_tables; t++)
        ct[t] = (fbg_cache_table){ s->tables[t].base, s->tables[t].rows, (size_t)s->tables[t].row_stride };
    fbg_cache_config cfg = { .n_tables = s->n_tables, .tables = ct, .load_factor = s->cache_load_factor,
                             .assoc = s->cache_assoc, .algo = (fbg_cache_algo)s->cache_algorithm };
    loom_status st = fbg_cache_create(pk_host, &cfg, &s->cache);
    free(ct);
    return st;
}

/* Find the file the tables are mapped from (the /proc/self/maps line whose
** range holds them, checked against the file's device and inode), open it
** again and record the size the tables need, so that each call can tell a
** file truncated in place (fbg_tbe_check_file) before it reads a page past
** its end. Without /proc, or when the tables are not in one file mapping
** (the core copies misaligned tensors out of it), nothing is watched. */
static void watch_file(tbe_object *o)
{
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int32_t t = 0; t < o->s.n_tables; t++) {
        const fbg_tbe_table *tb = &o->tables[t];
        if (tb->rows <= 0)
            continue;
        uintptr_t a = (uintptr_t)tb->base, z = a + (uintptr_t)(tb->rows * tb->row_stride);
        lo = a < lo ? a : lo;
        hi = z > hi ? z : hi;
    }
    if (hi == 0)
        return;
    FILE *f = fopen("/proc/self/maps", "re");
    if (f == NULL)
        return;
    char line[4352];
    while (fgets(line, sizeof line, f) != NULL) {
        unsigned long long start, end, off, inode;
        unsigned maj, mnr;
        char perms[8];
        int pos = 0;
        if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off, &maj, &mnr, &inode,
                   &pos) < 7 || !(start <= lo && lo < end))
            continue;
        char *path = line + pos, *nl = strchr(path, '\n');
        if (nl != NULL)
            *nl = '\0';
        struct stat sb;
        int fd = inode != 0 && hi <= end && path[0] == '/' ? open(path, O_RDONLY | O_CLOEXEC) : -1;
        if (fd >= 0 && fstat(fd, &sb) == 0 && (unsigned long long)sb.st_ino == inode && major(sb.st_dev) == maj
            && minor(sb.st_dev) == mnr) {
            o->cpu.file_fd = fd;
            o->cpu.file_need = (int64_t)(off + (hi - start));
        } else if (fd >= 0) {
            close(fd);
        }
        break;
    }
    fclose(f);
}

static loom_status tbe_create(const loom_object_args *args, void **state_out)
{
    const loom_attr_value *a = args->attrs;
    *state_out = NULL;
    if (args->weights == NULL)
        return pk_host->fail(LOOM_EINVAL, "%s needs a weights file (--weights) holding the tables table.0, "
                             "table.1, ... in their weight types' row layouts", W);
    const int32_t n = count_tables(args->weights);
    if (n < 0)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", W);
    if (n == 0)
        return pk_host->fail(LOOM_EINVAL, "%s: the weights file has no tensor 'table.0' (tables are named "
                             "table.<t>, in table order)", W);
    tbe_object *o = pk_host->alloc(cpu, sizeof *o, 64);
    if (o == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", W);
    memset(o, 0, sizeof *o);
    o->cpu.file_fd = -1;
    pthread_mutex_init(&o->cpu.lock, NULL);
    o->s.struct_size = sizeof o->s;
    o->s.cpu_private = &o->cpu;
    o->s.n_tables = n;
    const loom_attr_value *wtys = &a[PK_ATTR(fbg_tbe_class, weights_tys)];
    const loom_attr_value *dims = &a[PK_ATTR(fbg_tbe_class, embedding_dims)];
    const loom_attr_value *rows = &a[PK_ATTR(fbg_tbe_class, num_embeddings)];
    loom_status st = check_modes(a, &o->s);
    int32_t *wt = NULL;
    if (st == LOOM_OK) {
        o->tables = calloc((size_t)n, sizeof *o->tables);
        wt = calloc((size_t)n, sizeof *wt);
        if (o->tables == NULL || wt == NULL)
            st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", W);
    }
    if (st == LOOM_OK && wtys->is_set)
        st = parse_wtypes(wtys, n, wt);
    for (int32_t t = 0; st == LOOM_OK && t < n && !wtys->is_set; t++) {
        const loom_tensor *x;
        char name[32];
        snprintf(name, sizeof name, "table.%d", (int)t);
        st = pk_host->safetensors_get(args->weights, name, &x);
        if (st == LOOM_OK && (wt[t] = (int32_t)wtype_of_dtype(loom_tensor_dtype_of(x))) == FBG_WT_COUNT)
            st = pk_host->fail(LOOM_EINVAL, "%s: table '%s' is %s: give weights_tys (only f32, f16 and bf16 "
                               "tables tell their type)", W, name, pk_host->dtype_name(loom_tensor_dtype_of(x)));
    }
    for (int k = PK_ATTR(fbg_tbe_class, embedding_dims); st == LOOM_OK && k <= PK_ATTR(fbg_tbe_class, num_embeddings);
         k++)
        if (a[k].is_set && a[k].count != n)
            st = pk_host->fail(LOOM_EINVAL, "%s: %s has %lld entries for %d tables", W, fbg_tbe_class_attrs[k].name,
                               (long long)a[k].count, (int)n);
    for (int32_t t = 0; st == LOOM_OK && t < n; t++)
        st = load_table(args, t, wt[t], dims, rows, o->s.row_alignment, &o->tables[t]);
    free(wt);
    o->s.tables = o->tables;
    /* table_memory: checked before the copy, which needs the tables checked */
    int table_memory = FBG_TABLES_MAP;
    if (st == LOOM_OK)
        st = fbg_table_memory_from_name(a[PK_ATTR(fbg_tbe_class, table_memory)].u.s, &table_memory);
    if (st == LOOM_OK && table_memory == FBG_TABLES_HUGEPAGE
        && strcmp(a[PK_ATTR(fbg_tbe_class, optimizer)].u.s, "none") != 0)
        st = pk_host->fail(LOOM_EINVAL, "%s: table_memory hugepage is for inference tables (optimizer none); "
                           "optimizer '%s' trains owned copies of the tables already", W,
                           a[PK_ATTR(fbg_tbe_class, optimizer)].u.s);
    if (st == LOOM_OK && table_memory == FBG_TABLES_HUGEPAGE)
        st = fbg_table_memory_copy(o->tables, n, &o->table_copy, &o->table_copy_bytes);
    if (st == LOOM_OK)
        st = build_features(o, &a[PK_ATTR(fbg_tbe_class, feature_table_map)]);
    /* training: the tables become owned copies (tbe_optim.h), so the
    ** weights file is not watched */
    fbg_optim_params prm;
    if (st == LOOM_OK)
        st = fbg_optim_parse(a, &prm);
    if (st == LOOM_OK)
        st = fbg_tbe_train_create(args, &prm, n, o->tables, &o->s, &o->cpu.train);
    /* the cache after the training copies: a training object's slow tier
    ** is its owned rows, which the backward updates and writes through to
    ** the slots (cache/cache_refresh.c) */
    if (st == LOOM_OK)
        st = make_cache(&o->s);
    /* a copy does not read the file again: nothing to watch */
    if (st == LOOM_OK && o->cpu.train == NULL && o->table_copy == NULL)
        watch_file(o);
    if (st != LOOM_OK) {
        tbe_destroy(o);
        return st;
    }
    *state_out = o;
    return LOOM_OK;
}

const loom_object_class fbg_tbe_class = {
    .struct_size = sizeof(loom_object_class),
    .name = FBG_TBE_CLASS,
    .doc = "fbgemm_gpu table-batched embedding bags over the tables of a safetensors file (table.<t>, "
           "each in its weight type's row layout); methods fbgemm.tbe, fbgemm.tbe_prefetch, fbgemm.tbe_cache_stats; "
           "with an optimizer, fbgemm.tbe_backward, fbgemm.tbe_save and fbgemm.tbe_state",
    PK_ATTRS(fbg_tbe_class_attrs),
    .create = tbe_create,
    .destroy = tbe_destroy,
};
