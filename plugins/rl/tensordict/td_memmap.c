/* SPDX-License-Identifier: BSD-3-Clause */
/*
** td_memmap.c - save and load in tensordict's memmap layout (td_memmap.h).
** The JSON is cJSON's; the leaves' bytes move in one job per leaf over the
** core's pool (write(2) on save, mmap(2) or read(2) on load). A worker
** cannot set the caller's error slot, so each job keeps its own message
** and the first one is reported on the calling thread.
**
** Save, per leaf: a file that does not exist yet is created in place
** (open O_CREAT|O_EXCL, one write(2) from the tensor's own memory, close:
** three calls, no copy but the kernel's); one that exists is written beside
** it and renamed over it (a dict mapped from it keeps its bytes). Every
** meta.json is written after all the leaves, the root's last, so a
** directory whose meta.json is there holds every leaf it names whole, and
** a save killed midway into a fresh directory leaves no meta.json to load.
** Nothing is fsync'd (tensordict's memmap does not either; rl.rb_dumps
** syncs the tree it writes).
*/
#include "td_memmap.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pack.h"

#define TD_TYPE "<class 'tensordict._td.TensorDict'>"
#define NTD_TYPE "<class 'tensordict.tensorclass.NonTensorData'>"
#define NTS_TYPE "<class 'tensordict.tensorclass.NonTensorStack'>"
#define META_MAX_BYTES ((size_t)256 << 20)   /* a meta.json larger than this is refused */

char *rl_td_encode_key(const char *key)
{
    size_t n = strlen(key);
    char *out = malloc(3 * n + 4);
    if (out == NULL)
        return NULL;
    if (n == 0)
        return strcpy(out, "%");
    if (strcmp(key, ".") == 0 || strcmp(key, "..") == 0) {
        out[0] = '\0';
        for (size_t i = 0; i < n; i++)
            strcat(out, "%2E");
        return out;
    }
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)key[i];
        if (c < 32 || c == 127 || strchr("/<>:\"|?* \\%", c) != NULL) {
            snprintf(out + o, 4, "%%%02X", c);
            o += 3;
        } else {
            out[o++] = (char)c;
        }
    }
    out[o] = '\0';
    return out;
}

static char *path_join(const char *dir, const char *name, const char *suffix)
{
    size_t n = strlen(dir) + strlen(name) + strlen(suffix) + 2;
    char *p = malloc(n);
    if (p != NULL)
        snprintf(p, n, "%s/%s%s", dir, name, suffix);
    return p;
}

/* ------------------------------------------------------------------ jobs */

typedef struct leaf_job {
    char *path;
    rl_leaf *leaf;                  /* load: filled by the job */
    const rl_leaf *src;             /* save */
    size_t nbytes;
    loom_status status;
    char msg[320];
} leaf_job;

typedef struct job_list {
    leaf_job *j;
    int64_t n, cap;
    rl_map_mode mode;
    long pid;                       /* save: in the names of files written aside */
    char **meta_path, **meta_text;  /* save: the meta.json files, written after the leaves */
    int64_t n_meta, cap_meta;
} job_list;

static leaf_job *job_add(job_list *l, char *path)
{
    if (path == NULL) {
        pk_host->fail(LOOM_ENOMEM, "out of memory");
        return NULL;
    }
    if (l->n == l->cap) {
        int64_t cap = l->cap > 0 ? 2 * l->cap : 64;
        leaf_job *g = realloc(l->j, (size_t)cap * sizeof *g);
        if (g == NULL) {
            free(path);
            pk_host->fail(LOOM_ENOMEM, "out of memory");
            return NULL;
        }
        l->j = g;
        l->cap = cap;
    }
    leaf_job *j = &l->j[l->n++];
    memset(j, 0, sizeof *j);
    j->path = path;
    return j;
}

static void jobs_free(job_list *l)
{
    for (int64_t i = 0; i < l->n; i++)
        free(l->j[i].path);
    free(l->j);
    for (int64_t i = 0; i < l->n_meta; i++) {
        free(l->meta_path[i]);
        free(l->meta_text[i]);
    }
    free(l->meta_path);
    free(l->meta_text);
}

/* The first failed job's message, on the calling thread. */
static loom_status jobs_status(const job_list *l)
{
    for (int64_t i = 0; i < l->n; i++)
        if (l->j[i].status != LOOM_OK)
            return pk_host->fail(l->j[i].status, "%s", l->j[i].msg);
    return LOOM_OK;
}

static loom_status run_jobs(loom_exec_ctx *ctx, job_list *l, loom_range_fn fn)
{
    if (l->n == 0)
        return LOOM_OK;
    loom_status st = ctx != NULL ? pk_host->parallel_for(ctx, l->n, 1, fn, l) : LOOM_OK;
    if (ctx == NULL)
        fn(l, 0, l->n, 0);
    return st != LOOM_OK ? st : jobs_status(l);
}

/* ------------------------------------------------------------------ save */

static int write_all(int fd, const void *data, size_t n)
{
    const uint8_t *p = data;
    while (n > 0) {
        size_t chunk = n < ((size_t)1 << 30) ? n : ((size_t)1 << 30);
        ssize_t w = write(fd, p, chunk);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Write data to a file beside path, renamed over it at the end: a dict
** mapped from path (loaded earlier, maybe the one being saved) keeps reading
** the old file, and path never holds half a leaf. */
static int write_aside(const char *path, const void *data, size_t n, long pid, char *msg, size_t msg_size)
{
    static int64_t seq;   /* two saves of one process to one path at once pick different names */
    size_t len = strlen(path) + 48;
    char *tmp = malloc(len);
    if (tmp == NULL) {
        snprintf(msg, msg_size, "%s: out of memory", path);
        return -1;
    }
    snprintf(tmp, len, "%s.tmp-%ld-%lld", path, pid, (long long)__atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    int bad = fd < 0 || write_all(fd, data, n) != 0;
    int err = errno;
    if (fd >= 0 && close(fd) != 0 && !bad)
        bad = 1, err = errno;
    if (!bad && rename(tmp, path) != 0)
        bad = 1, err = errno;
    if (bad) {
        if (fd >= 0)
            unlink(tmp);
        snprintf(msg, msg_size, "%s: cannot write: %s", path, strerror(err));
    }
    free(tmp);
    return bad ? -1 : 0;
}

/* Write data to path: created in place when it does not exist (O_EXCL: a
** file or link that appears meanwhile is not written through), else
** through write_aside. A failed in-place write removes what it made. */
static int write_file(const char *path, const void *data, size_t n, long pid, char *msg, size_t msg_size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0 && errno == EEXIST)
        return write_aside(path, data, n, pid, msg, msg_size);
    int bad = fd < 0 || write_all(fd, data, n) != 0;
    int err = errno;
    if (fd >= 0 && close(fd) != 0 && !bad)
        bad = 1, err = errno;
    if (bad) {
        if (fd >= 0)
            unlink(path);
        snprintf(msg, msg_size, "%s: cannot write: %s", path, strerror(err));
    }
    return bad ? -1 : 0;
}

static void save_range(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    job_list *l = user;
    for (int64_t i = begin; i < end; i++) {
        leaf_job *j = &l->j[i];
        if (write_file(j->path, rl_leaf_data(j->src), j->nbytes, l->pid, j->msg, sizeof j->msg) != 0)
            j->status = LOOM_EIO;
    }
}

/* Queue text (malloc'd; taken, freed on failure too) as the meta.json at path. */
static loom_status queue_meta(job_list *l, char *path, char *text)
{
    if (path != NULL && text != NULL && l->n_meta == l->cap_meta) {
        int64_t cap = l->cap_meta > 0 ? 2 * l->cap_meta : 16;
        char **p = realloc(l->meta_path, (size_t)cap * sizeof *p);
        if (p != NULL)
            l->meta_path = p;
        char **t = p != NULL ? realloc(l->meta_text, (size_t)cap * sizeof *t) : NULL;
        if (t != NULL) {
            l->meta_text = t;
            l->cap_meta = cap;
        }
    }
    if (path == NULL || text == NULL || l->n_meta == l->cap_meta) {
        free(path);
        free(text);
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    }
    l->meta_path[l->n_meta] = path;
    l->meta_text[l->n_meta++] = text;
    return LOOM_OK;
}

/* The queued meta.json files in order (children before their parents). */
static loom_status write_metas(job_list *l)
{
    char msg[320];
    for (int64_t i = 0; i < l->n_meta; i++)
        if (write_file(l->meta_path[i], l->meta_text[i], strlen(l->meta_text[i]), l->pid, msg, sizeof msg) != 0)
            return pk_host->fail(LOOM_EIO, "%s", msg);
    return LOOM_OK;
}

static loom_status make_dir(const char *dir)
{
    struct stat sb;
    if (lstat(dir, &sb) == 0) {
        if (S_ISLNK(sb.st_mode))
            return pk_host->fail(LOOM_EINVAL, "%s: refusing to write a TensorDict through a symbolic link", dir);
        if (!S_ISDIR(sb.st_mode))
            return pk_host->fail(LOOM_EINVAL, "%s: exists and is not a directory", dir);
        return LOOM_OK;
    }
    /* make the parents as mkdir -p does */
    char *p = strdup(dir);
    if (p == NULL)
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            mkdir(p, 0755);
            *s = '/';
        }
    int rc = mkdir(p, 0755);
    int err = errno;
    free(p);
    if (rc != 0 && err != EEXIST)
        return pk_host->fail(LOOM_EIO, "%s: cannot make the directory: %s", dir, strerror(err));
    return LOOM_OK;
}

static cJSON *int_array(const int64_t *v, int32_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (int32_t i = 0; a != NULL && i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v[i]));
    return a;
}

static int reserved_key(const char *key)
{
    return strcmp(key, "shape") == 0 || strcmp(key, "device") == 0 || strcmp(key, "_type") == 0;
}

static loom_status save_dict(const rl_td *td, const char *dir, job_list *jobs, int depth)
{
    if (depth > RL_TD_MAX_PATH)
        return pk_host->fail(LOOM_EINVAL, "%s: nested deeper than %d levels", dir, RL_TD_MAX_PATH);
    loom_status st = make_dir(dir);
    if (st != LOOM_OK)
        return st;
    cJSON *meta = cJSON_CreateObject();
    if (meta == NULL)
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    for (int64_t i = 0; i < td->n && st == LOOM_OK; i++) {
        const rl_td_entry *e = &td->e[i];
        if (reserved_key(e->key)) {
            st = pk_host->fail(LOOM_EINVAL, "%s: key '%s' cannot be saved: meta.json uses that name for the "
                               "TensorDict itself", dir, e->key);
            break;
        }
        char *enc = rl_td_encode_key(e->key);
        cJSON *m = cJSON_CreateObject();
        if (enc == NULL || m == NULL) {
            free(enc);
            cJSON_Delete(m);
            st = pk_host->fail(LOOM_ENOMEM, "out of memory");
            break;
        }
        cJSON_AddItemToObject(meta, e->key, m);
        if (e->kind == RL_TD_TENSOR) {
            const char *dt = rl_dtype_torch_name(e->leaf.dtype);
            if (dt == NULL) {
                st = pk_host->fail(LOOM_ENOTSUP, "%s: key '%s' is %s, which tensordict's memmap cannot hold", dir,
                                   e->key, pk_host->dtype_name(e->leaf.dtype));
            } else {
                cJSON_AddStringToObject(m, "device", "cpu");
                cJSON_AddItemToObject(m, "shape", int_array(e->leaf.shape, e->leaf.ndim));
                cJSON_AddStringToObject(m, "dtype", dt);
                cJSON_AddBoolToObject(m, "is_nested", 0);
                size_t nbytes = rl_leaf_nbytes(&e->leaf);
                if (nbytes > 0) {
                    leaf_job *j = job_add(jobs, path_join(dir, enc, ".memmap"));
                    if (j == NULL)
                        st = LOOM_ENOMEM;
                    else {
                        j->src = &e->leaf;
                        j->nbytes = nbytes;
                    }
                }
            }
        } else if (e->kind == RL_TD_DICT) {
            cJSON_AddStringToObject(m, "type", "TensorDict");
            char *sub = path_join(dir, enc, "");
            st = sub != NULL ? save_dict(e->td, sub, jobs, depth + 1) : pk_host->fail(LOOM_ENOMEM, "out of memory");
            free(sub);
        } else {
            /* NonTensorStack: tensordict's _memmap_ writes tolist() (nested as
            ** the batch) as "data", with stack_dim and device */
            cJSON_AddStringToObject(m, "type", e->stacked ? "NonTensorStack" : "NonTensorData");
            char *sub = path_join(dir, enc, "");
            cJSON *nm = cJSON_CreateObject();
            st = sub != NULL && nm != NULL ? make_dir(sub) : pk_host->fail(LOOM_ENOMEM, "out of memory");
            if (st == LOOM_OK) {
                if (e->stacked) {
                    cJSON_AddStringToObject(nm, "_type", NTS_TYPE);
                    cJSON_AddNumberToObject(nm, "stack_dim", 0);
                    cJSON_AddNullToObject(nm, "device");
                    cJSON_AddItemToObject(nm, "data", cJSON_Duplicate(e->value, 1));
                } else {
                    cJSON_AddStringToObject(nm, "_type", NTD_TYPE);
                    cJSON_AddItemToObject(nm, "data", cJSON_Duplicate(e->value, 1));
                    cJSON_AddBoolToObject(nm, "_is_non_tensor", 1);
                    cJSON_AddNullToObject(nm, "_metadata");
                }
                st = queue_meta(jobs, path_join(sub, "meta.json", ""), cJSON_PrintUnformatted(nm));
            }
            cJSON_Delete(nm);
            free(sub);
        }
        free(enc);
    }
    if (st == LOOM_OK) {
        cJSON_AddItemToObject(meta, "shape", int_array(td->batch, td->batch_ndim));
        cJSON_AddStringToObject(meta, "device", "cpu");
        cJSON_AddStringToObject(meta, "_type", TD_TYPE);
        st = queue_meta(jobs, path_join(dir, "meta.json", ""), cJSON_PrintUnformatted(meta));
    }
    cJSON_Delete(meta);
    return st;
}

loom_status rl_td_save_memmap(const rl_td *td, const char *dir, loom_exec_ctx *ctx)
{
    if (dir == NULL || dir[0] == '\0')
        return pk_host->fail(LOOM_EINVAL, "the directory to save to is empty");
    job_list jobs = { .pid = (long)getpid() };
    loom_status st = save_dict(td, dir, &jobs, 0);
    if (st == LOOM_OK)
        st = run_jobs(ctx, &jobs, save_range);
    if (st == LOOM_OK)
        st = write_metas(&jobs);
    jobs_free(&jobs);
    return st;
}

/* ------------------------------------------------------------------ load */

static void load_range(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    job_list *l = user;
    for (int64_t i = begin; i < end; i++) {
        leaf_job *j = &l->j[i];
        j->status = rl_mmt_open(j->path, j->nbytes, l->mode, "the leaf file", "meta.json's dtype and shape",
                                &j->leaf->buf, j->msg, sizeof j->msg);
    }
}

static loom_status read_text(const char *path, char **out, size_t *n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0) {
        int err = errno;
        return pk_host->fail(err == ENOENT ? LOOM_ENOENT : LOOM_EIO, "%s: cannot open: %s", path, strerror(err));
    }
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size > META_MAX_BYTES) {
        close(fd);
        return pk_host->fail(LOOM_EINVAL, "%s: not a regular file of at most %zu bytes", path, META_MAX_BYTES);
    }
    size_t size = (size_t)sb.st_size;
    char *text = malloc(size + 1);
    size_t got = 0;
    while (text != NULL && got < size) {
        ssize_t r = read(fd, text + got, size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (text == NULL || got != size) {
        free(text);
        return pk_host->fail(LOOM_EIO, "%s: cannot read", path);
    }
    text[size] = '\0';
    *out = text;
    *n = size;
    return LOOM_OK;
}

static loom_status parse_json(const char *path, cJSON **out)
{
    char *text = NULL;
    size_t n = 0;
    loom_status st = read_text(path, &text, &n);
    if (st != LOOM_OK)
        return st;
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(text, n, &end, 0);
    if (j == NULL || !cJSON_IsObject(j)) {
        size_t at = end != NULL && end >= text && end <= text + n ? (size_t)(end - text) : n;
        int bad_json = j == NULL;
        cJSON_Delete(j);
        free(text);
        if (bad_json)
            return pk_host->fail(LOOM_EINVAL, "%s: not valid JSON (the parser stopped at byte %zu of %zu)", path, at, n);
        return pk_host->fail(LOOM_EINVAL, "%s: not a JSON object", path);
    }
    free(text);
    *out = j;
    return LOOM_OK;
}

/* dims of a JSON array of non-negative integers, as a shape. */
static loom_status json_shape(const cJSON *a, const char *path, const char *key, int64_t *shape, int32_t *ndim)
{
    if (!cJSON_IsArray(a))
        return pk_host->fail(LOOM_EINVAL, "%s: '%s': \"shape\" is not a list of integers", path, key);
    int32_t n = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, a) {
        if (n == LOOM_MAX_NDIM)
            return pk_host->fail(LOOM_EINVAL, "%s: '%s': \"shape\" has more than %d dims", path, key, LOOM_MAX_NDIM);
        double v = cJSON_IsNumber(it) ? it->valuedouble : -1.0;
        if (!(v >= 0.0 && v <= 9007199254740992.0) || v != (double)(int64_t)v)
            return pk_host->fail(LOOM_EINVAL, "%s: '%s': \"shape\"[%d] is not a non-negative integer", path, key,
                                 (int)n);
        shape[n++] = (int64_t)v;
    }
    *ndim = n;
    return LOOM_OK;
}

/* The file of key under dir: the robust name, else a safe legacy one. */
static char *find_entry_path(const char *dir, const char *key, const char *suffix, int want_dir)
{
    char *enc = rl_td_encode_key(key);
    if (enc == NULL)
        return NULL;
    char *p = path_join(dir, enc, suffix);
    const int same = strcmp(enc, key) == 0;   /* the legacy name is this one: nothing to look for */
    free(enc);
    struct stat sb;
    if (p == NULL || same || stat(p, &sb) == 0 || strchr(key, '/') != NULL || strchr(key, '\\') != NULL || key[0] == '\0'
        || strcmp(key, ".") == 0 || strcmp(key, "..") == 0)
        return p;
    char *legacy = path_join(dir, key, suffix);
    if (legacy != NULL && stat(legacy, &sb) == 0 && (want_dir ? S_ISDIR(sb.st_mode) : 1)) {
        free(p);
        return legacy;
    }
    free(legacy);
    return p;
}

/* Load one directory into a new dict; leaf jobs (td pointer, entry index)
** are queued and run after the whole structure is built. */
typedef struct pending {
    rl_td *td;
    int64_t index;
} pending;

static loom_status load_dict(const char *dir, job_list *jobs, pending **pend, int64_t *n_pend, int depth,
                             rl_td **out);

static loom_status load_non_tensor(const char *dir, const char *key, int stack, cJSON **value)
{
    char *sub = find_entry_path(dir, key, "", 1);
    char *mp = sub != NULL ? path_join(sub, "meta.json", "") : NULL;
    cJSON *m = NULL;
    loom_status st = mp != NULL ? parse_json(mp, &m) : pk_host->fail(LOOM_ENOMEM, "out of memory");
    if (st == LOOM_OK) {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(m, "_type");
        cJSON *data = cJSON_GetObjectItemCaseSensitive(m, "data");
        char *pickle = path_join(sub, stack ? "pickle.pkl" : "other.pickle", "");
        struct stat sb;
        const char *want = stack ? "NonTensorStack" : "NonTensorData";
        if (!cJSON_IsString(type) || strstr(type->valuestring, want) == NULL)
            st = pk_host->fail(LOOM_EINVAL, "%s: key '%s' is a %s in its parent's meta.json, but \"_type\" here is "
                               "not %s", mp, key, want, want);
        else if (stack && cJSON_IsString(data))
            st = pk_host->fail(LOOM_ENOTSUP, "%s: key '%s' holds a pickled (not JSON) NonTensorStack, which is not "
                               "read", mp, key);
        else if (data == NULL && pickle != NULL && stat(pickle, &sb) == 0)
            st = pk_host->fail(LOOM_ENOTSUP, "%s: key '%s' holds a pickled (not JSON) value, which is not read",
                               mp, key);
        else if (data == NULL)
            st = pk_host->fail(LOOM_EINVAL, "%s: key '%s': no \"data\" member", mp, key);
        else {
            *value = cJSON_DetachItemViaPointer(m, data);
        }
        free(pickle);
    }
    cJSON_Delete(m);
    free(mp);
    free(sub);
    return st;
}

static loom_status load_dict(const char *dir, job_list *jobs, pending **pend, int64_t *n_pend, int depth,
                             rl_td **out)
{
    if (depth > RL_TD_MAX_PATH)
        return pk_host->fail(LOOM_EINVAL, "%s: nested deeper than %d levels", dir, RL_TD_MAX_PATH);
    char *mp = path_join(dir, "meta.json", "");
    cJSON *meta = NULL;
    loom_status st = mp != NULL ? parse_json(mp, &meta) : pk_host->fail(LOOM_ENOMEM, "out of memory");
    if (st != LOOM_OK) {
        free(mp);
        return st;
    }
    int64_t batch[LOOM_MAX_NDIM];
    int32_t bnd = 0;
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(meta, "shape");
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(meta, "_type");
    if (shape != NULL)
        st = json_shape(shape, mp, "shape", batch, &bnd);
    if (st == LOOM_OK && type != NULL && (!cJSON_IsString(type) || strcmp(type->valuestring, TD_TYPE) != 0))
        st = pk_host->fail(LOOM_ENOTSUP, "%s: \"_type\" is %s; only %s is read", mp,
                           cJSON_IsString(type) ? type->valuestring : "not a string", TD_TYPE);
    rl_td *td = st == LOOM_OK ? rl_td_new(bnd, batch) : NULL;
    if (st == LOOM_OK && td == NULL)
        st = LOOM_ENOMEM;
    const cJSON *e;
    cJSON_ArrayForEach(e, meta) {
        if (st != LOOM_OK)
            break;
        const char *key = e->string;
        if (!cJSON_IsObject(e) || reserved_key(key))
            continue;   /* other metadata, as tensordict skips it */
        /* a name a TensorDict cannot hold (raw NUL bytes in the JSON string
        ** leave cJSON an empty one) is refused, not stored unreachable */
        if (key == NULL || key[0] == '\0') {
            st = pk_host->fail(LOOM_EFORMAT, "%s: an entry has an empty key (or one starting with a NUL byte)", mp);
            break;
        }
        rl_key one = { .n = 1, .part = { key } };
        if (rl_td_find(td, key) != NULL) {
            st = pk_host->fail(LOOM_EINVAL, "%s: key '%s' is listed twice", mp, key);
            break;
        }
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "type");
        if (t != NULL) {
            if (cJSON_IsString(t) && strcmp(t->valuestring, "TensorDict") == 0) {
                char *sub = find_entry_path(dir, key, "", 1);
                rl_td *child = NULL;
                st = sub != NULL ? load_dict(sub, jobs, pend, n_pend, depth + 1, &child)
                                 : pk_host->fail(LOOM_ENOMEM, "out of memory");
                free(sub);
                if (st == LOOM_OK)
                    st = rl_td_set_dict(td, &one, child);
            } else if (cJSON_IsString(t) && strcmp(t->valuestring, "NonTensorData") == 0) {
                cJSON *v = NULL;
                st = load_non_tensor(dir, key, 0, &v);
                if (st == LOOM_OK)
                    st = rl_td_set_json(td, &one, v);
            } else if (cJSON_IsString(t) && strcmp(t->valuestring, "NonTensorStack") == 0) {
                /* its data must nest as this dict's batch_size (the error names the key) */
                cJSON *v = NULL;
                st = load_non_tensor(dir, key, 1, &v);
                if (st == LOOM_OK)
                    st = rl_td_set_json_stack(td, &one, v);
            } else {
                st = pk_host->fail(LOOM_ENOTSUP, "%s: key '%s' is a %s, which is not read (TensorDict, NonTensorData "
                                   "and NonTensorStack are)", mp, key, cJSON_IsString(t) ? t->valuestring : "(bad type)");
            }
            continue;
        }
        const cJSON *dt = cJSON_GetObjectItemCaseSensitive(e, "dtype");
        const cJSON *sh = cJSON_GetObjectItemCaseSensitive(e, "shape");
        const cJSON *nested = cJSON_GetObjectItemCaseSensitive(e, "is_nested");
        if (dt == NULL || sh == NULL)
            continue;   /* "invalid dict means" skip, as tensordict does */
        rl_leaf leaf = { 0 };
        leaf.dtype = cJSON_IsString(dt) ? rl_dtype_from_torch_name(dt->valuestring) : LOOM_DTYPE_INVALID;
        if (leaf.dtype == LOOM_DTYPE_INVALID) {
            st = pk_host->fail(LOOM_EINVAL, "%s: key '%s': dtype %s is not one loom reads", mp, key,
                               cJSON_IsString(dt) ? dt->valuestring : "(not a string)");
            break;
        }
        if (cJSON_IsTrue(nested)) {
            st = pk_host->fail(LOOM_ENOTSUP, "%s: key '%s' is a nested (jagged) tensor, which is not read", mp, key);
            break;
        }
        st = json_shape(sh, mp, key, leaf.shape, &leaf.ndim);
        int prefix_ok = leaf.ndim >= bnd;
        for (int32_t d = 0; st == LOOM_OK && prefix_ok && d < bnd; d++)
            prefix_ok = leaf.shape[d] == batch[d];
        if (st == LOOM_OK && !prefix_ok)
            st = pk_host->fail(LOOM_EINVAL, "%s: key '%s': its shape does not start with the batch_size \"shape\"",
                               mp, key);
        size_t nbytes = pk_host->dtype_size(leaf.dtype);
        for (int32_t d = 0; st == LOOM_OK && d < leaf.ndim; d++)
            if (__builtin_mul_overflow(nbytes, (size_t)leaf.shape[d], &nbytes) || nbytes > ((size_t)1 << 48))
                st = pk_host->fail(LOOM_EINVAL, "%s: key '%s': the shape's size overflows", mp, key);
        if (st == LOOM_OK)
            st = rl_td_set_leaf(td, &one, &leaf);
        if (st != LOOM_OK)
            break;
        if (nbytes > 0) {
            leaf_job *j = job_add(jobs, find_entry_path(dir, key, ".memmap", 0));
            pending *g = realloc(*pend, (size_t)(*n_pend + 1) * sizeof *g);
            if (j == NULL || g == NULL) {
                st = pk_host->fail(LOOM_ENOMEM, "out of memory");
                break;
            }
            *pend = g;
            g[*n_pend].td = td;
            g[*n_pend].index = rl_td_find(td, key) - td->e;
            (*n_pend)++;
            j->nbytes = nbytes;
        }
    }
    if (st != LOOM_OK)
        rl_td_free(td);   /* the caller drops the queued jobs: none runs */
    cJSON_Delete(meta);
    free(mp);
    if (st == LOOM_OK)
        *out = td;
    return st;
}

loom_status rl_td_load_memmap(const char *dir, rl_map_mode mode, loom_exec_ctx *ctx, rl_td **out)
{
    if (dir == NULL || dir[0] == '\0')
        return pk_host->fail(LOOM_EINVAL, "the directory to load from is empty");
    job_list jobs = { .mode = mode };
    pending *pend = NULL;
    int64_t n_pend = 0;
    rl_td *td = NULL;
    loom_status st = load_dict(dir, &jobs, &pend, &n_pend, 0, &td);
    if (st == LOOM_OK) {
        /* every dict is complete: entry addresses no longer move */
        for (int64_t i = 0; i < n_pend; i++)
            jobs.j[i].leaf = &pend[i].td->e[pend[i].index].leaf;
        st = run_jobs(ctx, &jobs, load_range);
    }
    free(pend);
    jobs_free(&jobs);
    if (st != LOOM_OK) {
        rl_td_free(td);
        return st;
    }
    *out = td;
    return LOOM_OK;
}
