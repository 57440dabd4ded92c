/*
** object.c - instances of object classes (models, tokenizers, tables...).
**
** An object holds the pack's state, the class it belongs to and the weights
** file it was made from (kept mapped: the state may borrow from it). Every
** live object is counted against its pack and kept in a list, so shutdown
** can report and destroy objects the host forgot.
*/
#include <stdlib.h>
#include <string.h>

#include "registry.h"

#define OBJECT_MAGIC 0x4A424F4Cu

struct loom_object {
    uint32_t magic;
    const loom__class *cls;
    void *state;
    loom_safetensors *weights;
    struct loom_object *prev, *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct loom_object *live;

LOOM_API loom_status loom_object_create(loom_object **out, const char *class_name, const loom_attrs *attrs,
                                      const char *weights_path)
{
    const loom__class *cls;
    loom_attr_value values[LOOM__MAX_ATTRS];
    loom_exec_ctx ctx = { .struct_size = sizeof ctx, .device = { LOOM_DEVICE_CPU, 0 }, .host = &loom__host_api };
    loom_object_args args = { .struct_size = sizeof args, .attrs = values, .ctx = &ctx };
    struct loom_object *obj;
    loom_status st;

    if (out == NULL || class_name == NULL)
        return loom__fail(LOOM_EINVAL, "loom_object_create: out or class_name is NULL");
    *out = NULL;
    if ((st = loom_init(NULL)) != LOOM_OK)
        return st;
    cls = loom__class_lookup(loom__snapshot_get(), class_name);
    if (cls == NULL)
        return loom__fail(LOOM_ENOENT, "no object class named '%s' (is its pack loaded? see `loom doctor`)",
                          class_name);
    loom__error_context(cls->c.name);
    if ((st = loom__attrs_resolve(attrs, cls->c.attrs, cls->c.n_attrs, cls->c.name, values)) != LOOM_OK)
        goto fail_ctx;
    obj = calloc(1, sizeof *obj);
    if (obj == NULL) {
        st = loom__fail(LOOM_ENOMEM, "out of memory");
        goto fail_ctx;
    }
    if (weights_path != NULL && (st = loom_safetensors_open(&obj->weights, weights_path)) != LOOM_OK) {
        free(obj);
        goto fail_ctx;
    }
    args.class_name = cls->c.name;
    args.n_attrs = (int32_t)cls->c.n_attrs;
    args.weights = obj->weights;
    ctx.n_threads = loom__pool_size();
    st = cls->c.create(&args, &obj->state);
    if (st != LOOM_OK) {
        if (loom_last_status() != st)
            loom__fail(st, "create failed with %s and no message", loom_status_name(st));
        loom_safetensors_close(obj->weights);
        free(obj);
        goto fail_ctx;
    }
    obj->magic = OBJECT_MAGIC;
    obj->cls = cls;
    atomic_fetch_add(&((loom__pack *)cls->pack)->live_objects, 1);
    pthread_mutex_lock(&lock);
    obj->next = live;
    if (live != NULL)
        live->prev = obj;
    live = obj;
    pthread_mutex_unlock(&lock);
    loom__error_context(NULL);
    *out = obj;
    return LOOM_OK;
fail_ctx:
    loom__error_context(NULL);
    return st;
}

static void destroy(struct loom_object *obj)
{
    obj->cls->c.destroy(obj->state);
    loom_safetensors_close(obj->weights);
    atomic_fetch_sub(&((loom__pack *)obj->cls->pack)->live_objects, 1);
    obj->magic = 0;
    free(obj);
}

LOOM_API void loom_object_free(loom_object *obj)
{
    if (obj == NULL || obj->magic != OBJECT_MAGIC)
        return;
    pthread_mutex_lock(&lock);
    if (obj->prev != NULL)
        obj->prev->next = obj->next;
    else
        live = obj->next;
    if (obj->next != NULL)
        obj->next->prev = obj->prev;
    pthread_mutex_unlock(&lock);
    destroy(obj);
}

LOOM_API const char *loom_object_class_name(const loom_object *obj)
{
    return obj != NULL && obj->magic == OBJECT_MAGIC ? obj->cls->c.name : NULL;
}

loom_status loom__object_state(const loom_object *obj, const char *cls, void **state, const void **pack)
{
    if (obj == NULL)
        return loom__fail(LOOM_EINVAL, "this op is a method of object class %s: pass an object in "
                          "loom_call_options.object (loom_object_create)", cls);
    if (obj->magic != OBJECT_MAGIC)
        return loom__fail(LOOM_EINVAL, "loom_call_options.object is not a live loom object");
    if (strcmp(obj->cls->c.name, cls) != 0)
        return loom__fail(LOOM_EINVAL, "the object is a %s but this op is a method of %s", obj->cls->c.name, cls);
    *state = obj->state;
    *pack = obj->cls->pack;
    return LOOM_OK;
}

void loom__objects_destroy_all(void)
{
    pthread_mutex_lock(&lock);
    while (live != NULL) {
        struct loom_object *obj = live;
        live = obj->next;
        loom__log(1, "shutdown: destroying a %s object the host did not free", obj->cls->c.name);
        destroy(obj);
    }
    pthread_mutex_unlock(&lock);
}
