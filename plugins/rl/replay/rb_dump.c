/* SPDX-License-Identifier: BSD-3-Clause */
/*
** rb_dump.c - rl.rb_dumps / rl.rb_loads: a buffer on disk in torchrl's
** ReplayBuffer.dumps layout,
**   PATH/storage/                   the storage TensorDict (tensordict's memmap layout)
**   PATH/storage/storage_metadata.json  {"metadata": {}, "is_pytree": false, "len": N}
**   PATH/sampler/sumtree.memmap, mintree.memmap   f64 [max_size] (prioritized)
**   PATH/sampler/sampler_metadata.json  {_alpha, _beta, _eps, _max_priority, _max_capacity, _schema_version}
**   PATH/writer/metadata.json       {"cursor", "write_count"} (+ the max-value writer's heap)
**   PATH/buffer_metadata.json       {"loom": how this buffer was made, its random stream position}
** made atomic: everything is written to PATH.partial and synced to the
** device (fsync of every file and directory; sync=false skips this, for dumps that need to survive
** a killed process but not a power loss), then PATH.partial and PATH are exchanged in one
** renameat2(RENAME_EXCHANGE) (a plain rename for the first dump) and the
** old dump removed. A dump killed at any point leaves PATH as the previous
** complete dump; a leftover PATH.partial is removed by the next dumps.
** One process dumps to one PATH at a time.
*/
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rb.h"

static const char *const sampler_names[] = { "random", "without_replacement", "prioritized", "slice" };
static const char *const writer_names[] = { "round_robin", "max_value" };

static char *join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = malloc(n);
    if (p != NULL)
        snprintf(p, n, "%s/%s", a, b);
    return p;
}

static loom_status write_json(const char *dir, const char *name, cJSON *j)
{
    char *path = join(dir, name);
    char *text = cJSON_PrintUnformatted(j);
    loom_status st = LOOM_OK;
    FILE *f = path != NULL && text != NULL ? fopen(path, "w") : NULL;
    if (f == NULL || fputs(text, f) < 0)
        st = pk_host->fail(LOOM_EIO, "%s: cannot write: %s", path != NULL ? path : name, strerror(errno));
    if (f != NULL && fclose(f) != 0 && st == LOOM_OK)
        st = pk_host->fail(LOOM_EIO, "%s: cannot write: %s", path, strerror(errno));
    free(path);
    free(text);
    cJSON_Delete(j);
    return st;
}

static loom_status write_raw(const char *dir, const char *name, const void *data, size_t n)
{
    char *path = join(dir, name);
    FILE *f = path != NULL ? fopen(path, "wb") : NULL;
    loom_status st = LOOM_OK;
    if (f == NULL || (n > 0 && fwrite(data, 1, n, f) != n))
        st = pk_host->fail(LOOM_EIO, "%s: cannot write: %s", path != NULL ? path : name, strerror(errno));
    if (f != NULL && fclose(f) != 0 && st == LOOM_OK)
        st = pk_host->fail(LOOM_EIO, "%s: cannot write: %s", path, strerror(errno));
    free(path);
    return st;
}

static int remove_one(const char *p, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb;
    (void)type;
    (void)ftw;
    return remove(p) != 0 && errno != ENOENT ? -1 : 0;
}

static void remove_tree(const char *dir)
{
    nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int fsync_one(const char *p, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    if (type != FTW_F && type != FTW_DP)
        return 0;
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

/* Every file and directory of the dump on stable storage: fsync of each
** (a syncfs would also wait for every other writer of the file system). */
static int sync_tree(const char *dir)
{
    return nftw(dir, fsync_one, 16, FTW_DEPTH | FTW_PHYS);
}

static loom_status fsync_parent(const char *path)
{
    char *copy = strdup(path);
    if (copy == NULL)
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    char *slash = strrchr(copy, '/');
    const char *parent = slash == NULL ? "." : slash == copy ? "/" : (*slash = '\0', copy);
    int fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = fd >= 0 ? fsync(fd) : -1;
    if (fd >= 0)
        close(fd);
    free(copy);
    return rc == 0 ? LOOM_OK : pk_host->fail(LOOM_EIO, "%s: cannot sync its directory: %s", path, strerror(errno));
}

static loom_status dump_into(rl_rb *b, const char *dir, loom_exec_ctx *ctx)
{
    if (mkdir(dir, 0755) != 0)
        return pk_host->fail(LOOM_EIO, "%s: cannot make the directory: %s", dir, strerror(errno));
    char *sd = join(dir, "storage"), *pd = join(dir, "sampler"), *wd = join(dir, "writer");
    loom_status st = sd != NULL && pd != NULL && wd != NULL ? LOOM_OK : pk_host->fail(LOOM_ENOMEM, "out of memory");
    if (st == LOOM_OK && b->store != NULL)
        st = rl_td_save_memmap(b->store, sd, ctx);
    else if (st == LOOM_OK && mkdir(sd, 0755) != 0)
        st = pk_host->fail(LOOM_EIO, "%s: cannot make the directory: %s", sd, strerror(errno));
    if (st == LOOM_OK && b->storage_kind == RL_RB_LIST) {
        /* a list storage: its items as one JSON list (null for slots never written) */
        cJSON *arr = cJSON_CreateArray();
        for (int64_t i = 0; arr != NULL && i < b->len; i++)
            cJSON_AddItemToArray(arr, b->list[i] != NULL ? cJSON_Duplicate(b->list[i], 1) : cJSON_CreateNull());
        cJSON *m = cJSON_CreateObject();
        cJSON_AddItemToObject(m, "items", arr);
        st = write_json(sd, "list.json", m);
    }
    if (st == LOOM_OK) {
        cJSON *m = cJSON_CreateObject();
        cJSON_AddItemToObject(m, "metadata", cJSON_CreateObject());
        cJSON_AddBoolToObject(m, "is_pytree", 0);
        cJSON_AddNumberToObject(m, "len", (double)b->len);
        st = write_json(sd, "storage_metadata.json", m);
    }
    if (st == LOOM_OK && mkdir(pd, 0755) != 0)
        st = pk_host->fail(LOOM_EIO, "%s: cannot make the directory: %s", pd, strerror(errno));
    if (st == LOOM_OK && b->sampler == RL_RB_PRIORITIZED) {
        double *v = malloc((size_t)b->capacity * sizeof *v);
        if (v == NULL)
            st = pk_host->fail(LOOM_ENOMEM, "out of memory");
        for (int64_t i = 0; st == LOOM_OK && i < b->capacity; i++)
            v[i] = rl_segtree_at(&b->sum, i);
        if (st == LOOM_OK)
            st = write_raw(pd, "sumtree.memmap", v, (size_t)b->capacity * sizeof *v);
        for (int64_t i = 0; st == LOOM_OK && i < b->capacity; i++)
            v[i] = rl_segtree_at(&b->min, i);
        if (st == LOOM_OK)
            st = write_raw(pd, "mintree.memmap", v, (size_t)b->capacity * sizeof *v);
        free(v);
        if (st == LOOM_OK) {
            cJSON *m = cJSON_CreateObject();
            cJSON_AddNumberToObject(m, "_alpha", b->alpha);
            cJSON_AddNumberToObject(m, "_beta", b->beta);
            cJSON_AddNumberToObject(m, "_eps", b->eps);
            cJSON *mp = cJSON_AddArrayToObject(m, "_max_priority");
            cJSON_AddItemToArray(mp, b->has_max ? cJSON_CreateNumber(b->max_priority) : cJSON_CreateNull());
            cJSON_AddItemToArray(mp, b->has_max && b->max_index >= 0 ? cJSON_CreateNumber((double)b->max_index)
                                                                     : cJSON_CreateNull());
            cJSON_AddNumberToObject(m, "_max_capacity", (double)b->capacity);
            cJSON_AddNumberToObject(m, "_schema_version", 1);
            st = write_json(pd, "sampler_metadata.json", m);
        }
    }
    if (st == LOOM_OK && mkdir(wd, 0755) != 0)
        st = pk_host->fail(LOOM_EIO, "%s: cannot make the directory: %s", wd, strerror(errno));
    if (st == LOOM_OK) {
        cJSON *m = cJSON_CreateObject();
        cJSON_AddNumberToObject(m, "cursor", (double)b->cursor);
        cJSON_AddNumberToObject(m, "write_count", (double)b->write_count);
        if (b->writer == RL_RB_MAX_VALUE) {
            cJSON *r = cJSON_AddArrayToObject(m, "heap_rank"), *ix = cJSON_AddArrayToObject(m, "heap_index");
            for (int64_t i = 0; i < b->heap_n; i++) {
                cJSON_AddItemToArray(r, cJSON_CreateNumber(b->heap[i].rank));
                cJSON_AddItemToArray(ix, cJSON_CreateNumber((double)b->heap[i].index));
            }
        }
        st = write_json(wd, "metadata.json", m);
    }
    if (st == LOOM_OK) {
        cJSON *m = cJSON_CreateObject(), *l = cJSON_CreateObject();
        cJSON_AddItemToObject(m, "loom", l);
        cJSON_AddNumberToObject(l, "max_size", (double)b->capacity);
        cJSON_AddStringToObject(l, "sampler", sampler_names[b->sampler]);
        cJSON_AddStringToObject(l, "writer", writer_names[b->writer]);
        cJSON_AddStringToObject(l, "tree_dtype", b->sampler == RL_RB_PRIORITIZED && b->sum.f64 ? "f64" : "f32");
        cJSON_AddNumberToObject(l, "draws", (double)b->draws);
        st = write_json(dir, "buffer_metadata.json", m);
    }
    free(sd);
    free(pd);
    free(wd);
    return st;
}

loom_status rl_rb_dumps(rl_rb *b, const char *path, int sync, loom_exec_ctx *ctx)
{
    if (path == NULL || path[0] == '\0')
        return pk_host->fail(LOOM_EINVAL, "dumps: the path is empty");
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    char *target = strndup(path, n), *partial = malloc(n + 16);
    if (target == NULL || partial == NULL) {
        free(target);
        free(partial);
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    }
    snprintf(partial, n + 16, "%s.partial", target);
    remove_tree(partial);
    loom_status st = dump_into(b, partial, ctx);
    if (st == LOOM_OK && sync && sync_tree(partial) != 0)
        st = pk_host->fail(LOOM_EIO, "%s: cannot sync the dump: %s", partial, strerror(errno));
    if (st == LOOM_OK) {
        struct stat sb;
        if (lstat(target, &sb) != 0) {
            if (rename(partial, target) != 0)
                st = pk_host->fail(LOOM_EIO, "%s: cannot rename the dump into place: %s", target, strerror(errno));
        } else if (!S_ISDIR(sb.st_mode)) {
            st = pk_host->fail(LOOM_EINVAL, "%s: exists and is not a dump directory", target);
        } else if (renameat2(AT_FDCWD, partial, AT_FDCWD, target, RENAME_EXCHANGE) != 0) {
            st = pk_host->fail(LOOM_EIO, "%s: cannot swap the new dump in: %s", target, strerror(errno));
        }
    }
    if (st == LOOM_OK && sync)
        st = fsync_parent(target);
    remove_tree(partial);   /* the previous dump, or a failed new one */
    free(target);
    free(partial);
    return st;
}

/* ------------------------------------------------------------------ loads */

static loom_status read_json(const char *dir, const char *name, cJSON **out)
{
    char *path = join(dir, name);
    FILE *f = path != NULL ? fopen(path, "rb") : NULL;
    if (f == NULL) {
        loom_status st = pk_host->fail(LOOM_ENOENT, "%s: cannot open: %s", path != NULL ? path : name,
                                       strerror(errno));
        free(path);
        return st;
    }
    char buf[1 << 16];
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    int big = !feof(f);
    fclose(f);
    buf[got] = '\0';
    cJSON *j = big ? NULL : cJSON_ParseWithLength(buf, got);
    loom_status st = j != NULL && cJSON_IsObject(j) ? LOOM_OK
                     : pk_host->fail(LOOM_EINVAL, "%s: %s", path, big ? "larger than 64 KiB" : "not a JSON object");
    free(path);
    if (st != LOOM_OK) {
        cJSON_Delete(j);
        return st;
    }
    *out = j;
    return LOOM_OK;
}

static int json_int(const cJSON *o, const char *key, int64_t lo, int64_t hi, int64_t *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < (double)lo
        || v->valuedouble > (double)hi)
        return -1;
    *out = (int64_t)v->valuedouble;
    return 0;
}

static loom_status read_tree(const char *dir, const char *name, int64_t n, double *v)
{
    char *path = join(dir, name);
    FILE *f = path != NULL ? fopen(path, "rb") : NULL;
    loom_status st = LOOM_OK;
    if (f == NULL)
        st = pk_host->fail(LOOM_ENOENT, "%s: cannot open: %s", path != NULL ? path : name, strerror(errno));
    else if (fread(v, sizeof *v, (size_t)n, f) != (size_t)n || fgetc(f) != EOF)
        st = pk_host->fail(LOOM_EINVAL, "%s: not %lld f64 values", path, (long long)n);
    if (f != NULL)
        fclose(f);
    for (int64_t i = 0; st == LOOM_OK && i < n; i++)
        if (isnan(v[i]) || v[i] < 0)
            st = pk_host->fail(LOOM_EINVAL, "%s: value %lld is %g", path, (long long)i, v[i]);
    free(path);
    return st;
}

loom_status rl_rb_loads(rl_rb *b, const char *path, loom_exec_ctx *ctx)
{
    cJSON *bm = NULL, *sm = NULL, *wm = NULL, *pm = NULL;
    char *sd = join(path, "storage"), *pd = join(path, "sampler"), *wd = join(path, "writer");
    rl_td *store = NULL;
    double *sum = NULL, *min = NULL;
    int64_t len = 0, cursor = 0, writes = 0, cap = 0, draws = 0;
    loom_status st = sd != NULL && pd != NULL && wd != NULL ? read_json(path, "buffer_metadata.json", &bm)
                                                           : pk_host->fail(LOOM_ENOMEM, "out of memory");
    const cJSON *l = st == LOOM_OK ? cJSON_GetObjectItemCaseSensitive(bm, "loom") : NULL;
    if (st == LOOM_OK && (json_int(l, "max_size", 1, (int64_t)1 << 40, &cap) != 0 || cap != b->capacity))
        st = pk_host->fail(LOOM_EINVAL, "%s: the dump's max_size is not this buffer's %lld", path,
                           (long long)b->capacity);
    const cJSON *sn = l != NULL ? cJSON_GetObjectItemCaseSensitive(l, "sampler") : NULL;
    if (st == LOOM_OK && (!cJSON_IsString(sn) || strcmp(sn->valuestring, sampler_names[b->sampler]) != 0))
        st = pk_host->fail(LOOM_EINVAL, "%s: the dump's sampler is not this buffer's %s", path,
                           sampler_names[b->sampler]);
    if (st == LOOM_OK && json_int(l, "draws", 0, INT64_MAX / 2, &draws) != 0)
        draws = 0;
    if (st == LOOM_OK)
        st = read_json(sd, "storage_metadata.json", &sm);
    if (st == LOOM_OK && json_int(sm, "len", 0, b->capacity, &len) != 0)
        st = pk_host->fail(LOOM_EINVAL, "%s/storage_metadata.json: \"len\" is not in [0, %lld]", sd,
                           (long long)b->capacity);
    if (st == LOOM_OK)
        st = read_json(wd, "metadata.json", &wm);
    if (st == LOOM_OK && (json_int(wm, "cursor", 0, b->capacity - 1, &cursor) != 0
                          || json_int(wm, "write_count", 0, INT64_MAX / 2, &writes) != 0))
        st = pk_host->fail(LOOM_EINVAL, "%s/metadata.json: bad \"cursor\" or \"write_count\"", wd);
    cJSON *lj = NULL;
    if (st == LOOM_OK && b->storage_kind == RL_RB_LIST) {
        st = read_json(sd, "list.json", &lj);
        const cJSON *arr = st == LOOM_OK ? cJSON_GetObjectItemCaseSensitive(lj, "items") : NULL;
        if (st == LOOM_OK && (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) != len))
            st = pk_host->fail(LOOM_EINVAL, "%s/list.json: \"items\" is not a list of %lld items", sd, (long long)len);
    } else if (st == LOOM_OK && len > 0) {
        st = rl_td_load_memmap(sd, RL_MAP_READ, ctx, &store);
        if (st == LOOM_OK && (store->batch_ndim < 1 || store->batch[0] != b->capacity)) {
            st = pk_host->fail(LOOM_EINVAL, "%s: the storage's batch_size does not start with %lld", sd,
                               (long long)b->capacity);
        }
    }
    if (st == LOOM_OK && b->sampler == RL_RB_PRIORITIZED) {
        sum = malloc((size_t)cap * sizeof *sum);
        min = malloc((size_t)cap * sizeof *min);
        st = sum != NULL && min != NULL ? read_tree(pd, "sumtree.memmap", cap, sum)
                                        : pk_host->fail(LOOM_ENOMEM, "out of memory");
        if (st == LOOM_OK)
            st = read_tree(pd, "mintree.memmap", cap, min);
        if (st == LOOM_OK)
            st = read_json(pd, "sampler_metadata.json", &pm);
    }
    rl_rb_heap_item *heap = NULL;
    int64_t heap_n = 0;
    if (st == LOOM_OK && b->writer == RL_RB_MAX_VALUE) {
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(wm, "heap_rank");
        const cJSON *ix = cJSON_GetObjectItemCaseSensitive(wm, "heap_index");
        heap_n = cJSON_GetArraySize(r);
        heap = malloc((size_t)b->capacity * sizeof *heap);
        if (heap == NULL || heap_n != cJSON_GetArraySize(ix) || heap_n > b->capacity)
            st = pk_host->fail(LOOM_EINVAL, "%s/metadata.json: bad max-value heap", wd);
        for (int64_t i = 0; st == LOOM_OK && i < heap_n; i++) {
            const cJSON *a = cJSON_GetArrayItem(r, (int)i), *c = cJSON_GetArrayItem(ix, (int)i);
            if (!cJSON_IsNumber(a) || !cJSON_IsNumber(c) || c->valuedouble < 0 || c->valuedouble >= (double)cap)
                st = pk_host->fail(LOOM_EINVAL, "%s/metadata.json: bad max-value heap entry %lld", wd, (long long)i);
            else
                heap[i] = (rl_rb_heap_item){ a->valuedouble, (int64_t)c->valuedouble };
        }
    }
    /* every piece read and checked: now replace the buffer's state */
    if (st == LOOM_OK && b->storage_kind == RL_RB_MEMMAP && store != NULL) {
        st = rl_td_save_memmap(store, b->scratch_dir, ctx);
        rl_td *mapped = NULL;
        if (st == LOOM_OK)
            st = rl_td_load_memmap(b->scratch_dir, RL_MAP_SHARED, ctx, &mapped);
        rl_td_free(store);
        store = mapped;
    }
    if (st == LOOM_OK) {
        rl_td_free(b->store);
        b->store = store;
        store = NULL;
        if (lj != NULL) {
            const cJSON *it = cJSON_GetObjectItemCaseSensitive(lj, "items")->child;
            for (int64_t i = 0; i < b->capacity; i++) {
                cJSON_Delete(b->list[i]);
                b->list[i] = i < len && it != NULL ? cJSON_Duplicate(it, 1) : NULL;
                if (it != NULL)
                    it = it->next;
            }
        }
        b->len = len;
        b->cursor = cursor;
        b->write_count = writes;
        b->draws = (uint64_t)draws;
        b->last_index = -1;          /* the cursor tells it (round robin) */
        rl_rb_slice_cache_drop(b);
        free(b->perm);
        b->perm = NULL;
        if (b->writer == RL_RB_MAX_VALUE) {
            free(b->heap);
            b->heap = heap;
            b->heap_n = heap_n;
            heap = NULL;
        }
        if (b->sampler == RL_RB_PRIORITIZED) {
            for (int64_t i = 0; i < cap; i++) {
                rl_segtree_update(&b->sum, i, sum[i]);
                rl_segtree_update(&b->min, i, min[i]);
            }
            const cJSON *mp = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(pm, "_max_priority"), 0);
            const cJSON *mi = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(pm, "_max_priority"), 1);
            b->has_max = cJSON_IsNumber(mp);
            b->max_priority = b->has_max ? mp->valuedouble : 0;
            /* the slot of the max: a number in [0, capacity), else unknown */
            b->max_index = b->has_max && cJSON_IsNumber(mi) && mi->valuedouble >= 0 && mi->valuedouble < (double)cap
                           ? (int64_t)mi->valuedouble : -1;
        }
    }
    free(heap);
    rl_td_free(store);
    free(sum);
    free(min);
    cJSON_Delete(lj);
    cJSON_Delete(bm);
    cJSON_Delete(sm);
    cJSON_Delete(wm);
    cJSON_Delete(pm);
    free(sd);
    free(pd);
    free(wd);
    return st;
}
