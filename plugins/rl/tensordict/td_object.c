/* SPDX-License-Identifier: BSD-3-Clause */
/*
** td_object.c - the rl.tensordict object class: create (from nothing, a
** memmap directory, or other TensorDicts named by id), destroy, and the
** registry of live objects by id. Lock order: the registry's lock, then
** one object's; never the other way round (rl_td_registry_clone).
*/
#include <stdlib.h>
#include <string.h>

#include "td_internal.h"

PK_ATTR_TABLE(rl_td_class, RL_TD_CLASS_ATTRS);

static const char *const from_values[] = { "empty", "load", "clone", "stack", "cat", "split", "unbind", NULL };
static const char *const map_values[] = { "private", "shared", "read", "read_only", NULL };
static const loom_attr_choices class_choices[] = {
    { .attr = PK_ATTR(rl_td_class, from), .values = from_values },
    { .attr = PK_ATTR(rl_td_class, map), .values = map_values },
};

/* ----------------------------------------------------------- registry */

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static rl_td_object **registry;
static int64_t registry_n, registry_cap;
static int64_t next_id = 1;

static loom_status registry_add(rl_td_object *o)
{
    pthread_mutex_lock(&registry_lock);
    if (registry_n == registry_cap) {
        int64_t cap = registry_cap > 0 ? 2 * registry_cap : 16;
        rl_td_object **g = realloc(registry, (size_t)cap * sizeof *g);
        if (g == NULL) {
            pthread_mutex_unlock(&registry_lock);
            return pk_host->fail(LOOM_ENOMEM, "out of memory");
        }
        registry = g;
        registry_cap = cap;
    }
    o->id = next_id++;
    registry[registry_n++] = o;
    pthread_mutex_unlock(&registry_lock);
    return LOOM_OK;
}

static void registry_remove(rl_td_object *o)
{
    pthread_mutex_lock(&registry_lock);
    for (int64_t i = 0; i < registry_n; i++)
        if (registry[i] == o) {
            registry[i] = registry[--registry_n];
            break;
        }
    if (registry_n == 0) {
        free(registry);
        registry = NULL;
        registry_cap = 0;
    }
    pthread_mutex_unlock(&registry_lock);
}

loom_status rl_td_registry_clone(int64_t id, const char *what, rl_td **out)
{
    pthread_mutex_lock(&registry_lock);
    rl_td_object *o = NULL;
    for (int64_t i = 0; i < registry_n && o == NULL; i++)
        if (registry[i]->id == id)
            o = registry[i];
    if (o == NULL) {
        pthread_mutex_unlock(&registry_lock);
        return pk_host->fail(LOOM_ENOENT, "%s: no live rl.tensordict has id %lld", what, (long long)id);
    }
    pthread_mutex_lock(&o->lock);
    rl_td *c = rl_td_clone(o->td);
    pthread_mutex_unlock(&o->lock);
    pthread_mutex_unlock(&registry_lock);
    if (c == NULL)
        return LOOM_ENOMEM;
    *out = c;
    return LOOM_OK;
}

loom_status rl_td_registry_replace(int64_t id, const char *what, rl_td *td)
{
    pthread_mutex_lock(&registry_lock);
    rl_td_object *o = NULL;
    for (int64_t i = 0; i < registry_n && o == NULL; i++)
        if (registry[i]->id == id)
            o = registry[i];
    if (o == NULL) {
        pthread_mutex_unlock(&registry_lock);
        rl_td_free(td);
        return pk_host->fail(LOOM_ENOENT, "%s: no live rl.tensordict has id %lld", what, (long long)id);
    }
    pthread_mutex_lock(&o->lock);
    rl_td *old = o->td;
    o->td = td;
    pthread_mutex_unlock(&o->lock);
    pthread_mutex_unlock(&registry_lock);
    rl_td_free(old);
    return LOOM_OK;
}

/* ------------------------------------------------------------- keys */

loom_status rl_keys_parse_list(const char *text, rl_key **keys, int64_t *n, char **storage, const char *what)
{
    *keys = NULL;
    *n = 0;
    *storage = NULL;
    size_t len = text != NULL ? strlen(text) : 0;
    if (len == 0)
        return pk_host->fail(LOOM_EINVAL, "%s: no keys given", what);
    /* each key's parts fit in its own text, so len + count bytes suffice */
    char *store = malloc(2 * len + 2);
    rl_key *k = calloc(len + 1, sizeof *k);
    if (store == NULL || k == NULL) {
        free(store);
        free(k);
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    }
    loom_status st = LOOM_OK;
    int64_t count = 0;
    size_t at = 0;
    if (text[0] == '[') {
        cJSON *arr = cJSON_Parse(text);
        if (arr == NULL || !cJSON_IsArray(arr))
            st = pk_host->fail(LOOM_EINVAL, "%s: '%s' is not a JSON list of keys", what, text);
        const cJSON *it;
        if (st == LOOM_OK)
            cJSON_ArrayForEach(it, arr) {
                char *one = cJSON_IsString(it) ? strdup(it->valuestring) : cJSON_PrintUnformatted(it);
                if (one == NULL) {
                    st = pk_host->fail(LOOM_ENOMEM, "out of memory");
                    break;
                }
                size_t l = strlen(one);
                st = at + l + 1 <= 2 * len + 2 ? rl_key_parse(one, store + at, l + 1, &k[count], what)
                                               : pk_host->fail(LOOM_EINVAL, "%s: malformed key list", what);
                free(one);
                if (st != LOOM_OK)
                    break;
                at += l + 1;
                count++;
            }
        cJSON_Delete(arr);
    } else {
        const char *p = text;
        for (;;) {
            const char *comma = strchr(p, ',');
            size_t l = comma != NULL ? (size_t)(comma - p) : strlen(p);
            char one[1024];
            if (l >= sizeof one) {
                st = pk_host->fail(LOOM_EINVAL, "%s: a key longer than %zu bytes", what, sizeof one - 1);
                break;
            }
            memcpy(one, p, l);
            one[l] = '\0';
            st = rl_key_parse(one, store + at, l + 1, &k[count], what);
            if (st != LOOM_OK)
                break;
            at += l + 1;
            count++;
            if (comma == NULL)
                break;
            p = comma + 1;
        }
    }
    if (st != LOOM_OK) {
        free(store);
        free(k);
        return st;
    }
    *keys = k;
    *n = count;
    *storage = store;
    return LOOM_OK;
}

/* ------------------------------------------------------------ create */

static void td_object_destroy(void *state)
{
    rl_td_object *o = state;
    if (o == NULL)
        return;
    registry_remove(o);
    rl_td_free(o->td);
    pthread_mutex_destroy(&o->lock);
    free(o);
}

static loom_status from_sources(const loom_object_args *args, const char *from, rl_td **out)
{
    const loom_attr_value *a = args->attrs;
    const loom_attr_value *src = &a[PK_ATTR(rl_td_class, sources)];
    const int64_t n = src->is_set ? src->count : 0;
    const int64_t dim64 = a[PK_ATTR(rl_td_class, dim)].u.i;
    const int32_t dim = dim64 > LOOM_MAX_NDIM ? LOOM_MAX_NDIM + 1 : (int32_t)dim64;
    const int many = strcmp(from, "stack") == 0 || strcmp(from, "cat") == 0;
    if (n < 1 || (!many && n != 1))
        return pk_host->fail(LOOM_EINVAL, "from=%s needs %s in 'sources' (got %lld)", from,
                             many ? "one or more ids" : "exactly one id", (long long)n);
    rl_td **tds = calloc((size_t)n, sizeof *tds);
    if (tds == NULL)
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    loom_status st = LOOM_OK;
    for (int64_t i = 0; i < n && st == LOOM_OK; i++)
        st = rl_td_registry_clone(src->u.ints[i], "sources", &tds[i]);
    if (st == LOOM_OK) {
        if (strcmp(from, "clone") == 0) {
            *out = rl_td_deep_copy(tds[0]);
            st = *out != NULL ? LOOM_OK : LOOM_ENOMEM;
        } else if (strcmp(from, "stack") == 0) {
            st = rl_td_stack((const rl_td *const *)tds, n, dim, out);
        } else if (strcmp(from, "cat") == 0) {
            st = rl_td_cat((const rl_td *const *)tds, n, dim, out);
        } else {
            rl_td **parts = NULL;
            int64_t n_parts = 0;
            const loom_attr_value *sz = &a[PK_ATTR(rl_td_class, sizes)];
            if (strcmp(from, "split") == 0)
                st = sz->is_set && sz->count > 0 ? rl_td_split(tds[0], sz->u.ints, sz->count, dim, &parts, &n_parts)
                                                 : pk_host->fail(LOOM_EINVAL, "from=split needs 'sizes'");
            else
                st = rl_td_unbind(tds[0], dim, &parts, &n_parts);
            const int64_t part = a[PK_ATTR(rl_td_class, part)].u.i;
            if (st == LOOM_OK && part >= n_parts)
                st = pk_host->fail(LOOM_EINVAL, "'part' %lld: %s gives %lld pieces", (long long)part, from,
                                   (long long)n_parts);
            if (st == LOOM_OK) {
                *out = parts[part];
                parts[part] = NULL;
            }
            rl_td_free_list(parts, n_parts);
        }
    }
    rl_td_free_list(tds, n);
    return st;
}

static loom_status td_object_create(const loom_object_args *args, void **state_out)
{
    const loom_attr_value *a = args->attrs;
    const char *from = a[PK_ATTR(rl_td_class, from)].u.s;
    rl_td *td = NULL;
    loom_status st;
    if (strcmp(from, "empty") == 0) {
        const loom_attr_value *bs = &a[PK_ATTR(rl_td_class, batch_size)];
        if (bs->is_set && bs->count > LOOM_MAX_NDIM)
            return pk_host->fail(LOOM_EINVAL, "'batch_size' has %lld dims; at most %d", (long long)bs->count,
                                 LOOM_MAX_NDIM);
        td = rl_td_new(bs->is_set ? (int32_t)bs->count : 0, bs->is_set ? bs->u.ints : NULL);
        st = td != NULL ? LOOM_OK : LOOM_EINVAL;
    } else if (strcmp(from, "load") == 0) {
        const char *path = a[PK_ATTR(rl_td_class, path)].u.s;
        for (int32_t i = 0; i < args->n_files && path[0] == '\0'; i++)
            if (strcmp(args->files[i].name, "src") == 0)
                path = args->files[i].path;
        const char *m = a[PK_ATTR(rl_td_class, map)].u.s;
        rl_map_mode mode = (rl_map_mode)rl_map_mode_parse(m);   /* one of map_values: checked by the core */
        st = path[0] != '\0' ? rl_td_load_memmap(path, mode, args->ctx, &td)
                             : pk_host->fail(LOOM_EINVAL, "from=load needs 'path' (or a file named src)");
    } else {
        st = from_sources(args, from, &td);
    }
    if (st != LOOM_OK)
        return st;
    rl_td_object *o = calloc(1, sizeof *o);
    if (o == NULL) {
        rl_td_free(td);
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    }
    o->struct_size = sizeof *o;
    o->magic = RL_TD_OBJECT_MAGIC;
    o->td = td;
    pthread_mutex_init(&o->lock, NULL);
    st = registry_add(o);
    if (st != LOOM_OK) {
        rl_td_free(td);
        pthread_mutex_destroy(&o->lock);
        free(o);
        return st;
    }
    *state_out = o;
    return LOOM_OK;
}

const loom_object_class rl_td_class = {
    .struct_size = sizeof(loom_object_class),
    .name = RL_TD_CLASS,
    .doc = "a TensorDict: nested keys, a batch_size, tensors and NonTensorData; tensordict's memmap layout on "
           "disk; methods rl.td_*",
    PK_ATTRS(rl_td_class_attrs),
    .create = td_object_create,
    .destroy = td_object_destroy,
    PK_CHOICES(class_choices),
};
