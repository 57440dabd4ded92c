/* SPDX-License-Identifier: BSD-3-Clause */
/*
** object.c - instances of object classes (models, tokenizers, tables...).
**
** An object holds the pack's state, the class it belongs to and the weights
** file it was made from (kept mapped: the state may borrow from it). Every
** live object is counted against its pack and kept in a list, so shutdown
** can report and destroy objects the host forgot.
**
** Handles. A loom_object * given to the host is not the address of the
** object: it encodes a slot of a core-owned table, the slot's generation
** and the loom_init epoch it was made in. Slots are never freed (a freed
** object's slot is reused with the next generation), so resolving a handle
** never touches freed memory: a handle whose object was freed, or that
** comes from before a loom_shutdown, fails with LOOM_EINVAL naming which,
** instead of being a use-after-free. A slot's generation has 16 bits, so a
** handle kept across 65536 reuses of its slot could alias a new object;
** that is the one case the check cannot see.
*/
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"

/* State a pack keeps per device for an object (object_backend_state). */
#define MAX_BACKEND_STATES 8
typedef struct backend_state {
    const void *pack;
    loom_dl_device device;
    void *state;
    loom_backend_state_destroy destroy;
} backend_state;

struct loom_object {
    const loom__class *cls;
    void *state;
    loom_dl_device device;                  /* the device it was made for: routes its methods */
    loom_safetensors *weights;
    uint32_t slot;
    struct loom_object *prev, *next;
    pthread_mutex_t backend_lock;           /* guards the backend states */
    int32_t n_backend;
    backend_state backend[MAX_BACKEND_STATES];
};

/* --------------------------------------------------------------- handles */

#define HANDLE_TAG     (UINT64_C(1) << 62)  /* above any user-space address */
#define SLOT_BITS      24                   /* 16M objects alive at once */
#define GEN_BITS       16
#define EPOCH_BITS     16
#define CHUNK_SLOTS    16384
#define MAX_CHUNKS     ((1u << SLOT_BITS) / CHUNK_SLOTS)

typedef struct slot {
    _Atomic(struct loom_object *) obj;   /* NULL: free */
    atomic_uint gen;                     /* bumped every time the slot is freed */
    uint32_t next_free;                  /* free list link: slot index + 1, 0 = end */
} slot;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Set while shutdown destroys the objects of the init that just ended, so
** that a destroy may still free the objects its create made. */
static atomic_bool destroying_all;
static struct loom_object *live;        /* under lock */
static _Atomic(slot *) chunks[MAX_CHUNKS]; /* allocated on demand, never freed */
static uint32_t n_slots;                /* slots handed out so far, under lock */
static uint32_t free_head;              /* slot index + 1 of the first free slot, under lock */

static slot *slot_at(uint32_t index)
{
    slot *c = atomic_load_explicit(&chunks[index / CHUNK_SLOTS], memory_order_acquire);
    return c != NULL ? &c[index % CHUNK_SLOTS] : NULL;
}

/* A free slot for obj (caller holds lock); its index in *index. */
static loom_status slot_take(struct loom_object *obj, uint32_t *index)
{
    uint32_t i;
    slot *s;

    if (free_head != 0) {
        i = free_head - 1;
        s = slot_at(i);
        free_head = s->next_free;
    } else {
        if (n_slots == (1u << SLOT_BITS))
            return loom__fail(LOOM_ENOMEM, "more than %u live objects", 1u << SLOT_BITS);
        i = n_slots;
        if (atomic_load(&chunks[i / CHUNK_SLOTS]) == NULL) {
            slot *c = calloc(CHUNK_SLOTS, sizeof *c);
            if (c == NULL)
                return loom__fail(LOOM_ENOMEM, "out of memory");
            atomic_store_explicit(&chunks[i / CHUNK_SLOTS], c, memory_order_release);
        }
        n_slots++;
        s = slot_at(i);
    }
    atomic_store_explicit(&s->obj, obj, memory_order_release);
    *index = i;
    return LOOM_OK;
}

/* Retire obj's slot (caller holds lock): every handle to it goes stale. */
static void slot_release(uint32_t index)
{
    slot *s = slot_at(index);
    if (s == NULL)
        return;   /* cannot happen: the slot was taken from an allocated chunk */
    atomic_store_explicit(&s->obj, NULL, memory_order_release);
    atomic_fetch_add(&s->gen, 1);
    s->next_free = free_head;
    free_head = index + 1;
}

static loom_object *handle_of(uint32_t index)
{
    uint64_t gen = atomic_load(&slot_at(index)->gen) & ((1u << GEN_BITS) - 1);
    uint64_t epoch = (uint64_t)atomic_load(&loom__epoch) & ((1u << EPOCH_BITS) - 1);
    uint64_t h = HANDLE_TAG | epoch << (SLOT_BITS + GEN_BITS) | gen << SLOT_BITS | (uint64_t)(index + 1);
    return (loom_object *)(uintptr_t)h;
}

/* The live object behind handle h, or NULL with *why saying what h is. */
static struct loom_object *resolve(const loom_object *h, const char **why)
{
    uint64_t v = (uint64_t)(uintptr_t)h;
    uint64_t index1 = v & ((1u << SLOT_BITS) - 1);
    uint64_t gen = (v >> SLOT_BITS) & ((1u << GEN_BITS) - 1);
    uint64_t epoch = (v >> (SLOT_BITS + GEN_BITS)) & ((1u << EPOCH_BITS) - 1);
    slot *s;
    struct loom_object *obj;

    *why = "is not a loom object (not made by loom_object_create)";
    if ((v & ~((UINT64_C(1) << (SLOT_BITS + GEN_BITS + EPOCH_BITS)) - 1)) != HANDLE_TAG || index1 == 0)
        return NULL;
    const uint64_t now = (uint64_t)atomic_load(&loom__epoch);
    if (epoch != (now & ((1u << EPOCH_BITS) - 1))
        && !(atomic_load(&destroying_all) && epoch == ((now - 1) & ((1u << EPOCH_BITS) - 1)))) {
        *why = "is an object from a previous loom_init (loom_shutdown destroyed it)";
        return NULL;
    }
    if (index1 - 1 >= MAX_CHUNKS * (uint64_t)CHUNK_SLOTS || (s = slot_at((uint32_t)(index1 - 1))) == NULL)
        return NULL;
    obj = atomic_load_explicit(&s->obj, memory_order_acquire);
    if (obj == NULL || (atomic_load(&s->gen) & ((1u << GEN_BITS) - 1)) != gen) {
        *why = "is an object that was already freed";
        return NULL;
    }
    return obj;
}

/* --------------------------------------------------------------- objects */

LOOM_API loom_status loom_object_create(loom_object **out, const char *class_name, const loom_attrs *attrs,
                                      const char *weights_path)
{
    loom_object_options o = LOOM_OBJECT_OPTIONS_INIT;
    o.weights_path = weights_path;
    return loom_object_create_ex(out, class_name, attrs, &o);
}

/* Make an object of class_name from normalised options (device set; at most
** one of weights_path and tensors), with a host's attribute bag or, for a
** pack's request, named attributes. The caller's error context is kept. */
static loom_status object_make(loom_object **out, const char *class_name, const loom_attrs *attrs,
                               const loom_named_attr *named, int32_t n_named, const loom_object_options *o)
{
    const char *outer = loom__error_context_get();
    const loom__class *cls;
    loom_attr_value values[LOOM__MAX_ATTRS];
    loom_exec_ctx ctx = { .struct_size = sizeof ctx, .device = { LOOM_DEVICE_CPU, 0 }, .host = &loom__host_api };
    loom_object_args args = { .struct_size = sizeof args, .attrs = values, .ctx = &ctx };
    struct loom_object *obj;
    char what[160];
    loom_status st;

    if (o->n_files < 0 || (o->n_files > 0 && o->files == NULL))
        return loom__fail(LOOM_EINVAL, "loom_object_create: %d named files but no table", o->n_files);
    for (int32_t i = 0; i < o->n_files; i++)
        if (o->files[i].name == NULL || o->files[i].path == NULL)
            return loom__fail(LOOM_EINVAL, "loom_object_create: named file %d has no name or path", i);
    if (o->weights_path != NULL && o->n_tensors > 0)
        return loom__fail(LOOM_EINVAL, "loom_object_create: both a weights file and %d weight tensors were given; "
                          "pass one", o->n_tensors);
    cls = loom__class_lookup(loom__snapshot_get(), class_name);
    if (cls == NULL) {
        const char *near = loom__closest_class(class_name);
        if (near != NULL)
            return loom__fail(LOOM_ENOENT, "no object class named '%s'; did you mean '%s'?", class_name, near);
        return loom__fail(LOOM_ENOENT, "no object class named '%s' (is its pack loaded? see `loom doctor`)",
                          class_name);
    }
    loom__error_context(cls->c.name);
    st = named != NULL || n_named > 0
       ? loom__attrs_resolve_named(named, n_named, cls->c.attrs, cls->c.n_attrs, cls->c.name, values)
       : loom__attrs_resolve(attrs, cls->c.attrs, cls->c.n_attrs, cls->c.name, values);
    if (st != LOOM_OK
        || (st = loom__attrs_check_choices(values, cls->c.attrs, cls->c.n_attrs, cls->c.choices, cls->c.n_choices,
                                           cls->c.name)) != LOOM_OK)
        goto fail_ctx;
    obj = calloc(1, sizeof *obj);
    if (obj == NULL) {
        st = loom__fail(LOOM_ENOMEM, "out of memory");
        goto fail_ctx;
    }
    snprintf(what, sizeof what, "the weight tensors of a %s object", cls->c.name);
    if (o->weights_path != NULL)
        st = loom_safetensors_open(&obj->weights, o->weights_path);
    else if (o->n_tensors != 0)
        st = loom__safetensors_from_tensors(&obj->weights, o->tensors, o->n_tensors, what);
    if (st != LOOM_OK) {
        free(obj);
        goto fail_ctx;
    }
    args.class_name = cls->c.name;
    args.n_attrs = (int32_t)cls->c.n_attrs;
    args.weights = obj->weights;
    args.device = o->device;
    args.n_files = o->n_files;
    args.files = o->files;
    args.callbacks_name = o->callbacks_name;
    args.callbacks = o->callbacks;
    ctx.device = o->device;
    ctx.n_threads = loom__pool_size();
    ctx.cpu_features = loom__cpu_features();
    pthread_mutex_init(&obj->backend_lock, NULL);
    st = cls->c.create(&args, &obj->state);
    if (st != LOOM_OK) {
        if (loom_last_status() != st)
            loom__fail(st, "create failed with %s and no message", loom_status_name(st));
        loom_safetensors_close(obj->weights);
        free(obj);
        goto fail_ctx;
    }
    obj->cls = cls;
    obj->device = o->device;
    pthread_mutex_lock(&lock);
    st = slot_take(obj, &obj->slot);
    if (st == LOOM_OK) {
        obj->next = live;
        if (live != NULL)
            live->prev = obj;
        live = obj;
        *out = handle_of(obj->slot);
    }
    pthread_mutex_unlock(&lock);
    if (st != LOOM_OK) {
        cls->c.destroy(obj->state);
        loom_safetensors_close(obj->weights);
        free(obj);
        goto fail_ctx;
    }
    atomic_fetch_add(&((loom__pack *)cls->pack)->live_objects, 1);
    loom__error_context(outer);
    return LOOM_OK;
fail_ctx:
    loom__error_context(outer);
    return st;
}

LOOM_API loom_status loom_object_create_ex(loom_object **out, const char *class_name, const loom_attrs *attrs,
                                         const loom_object_options *options)
{
    loom_object_options o = LOOM_OBJECT_OPTIONS_INIT;
    loom_status st;

    if (out == NULL || class_name == NULL)
        return loom__fail(LOOM_EINVAL, "loom_object_create: out or class_name is NULL");
    *out = NULL;
    if (options != NULL) {
        if (options->struct_size < sizeof(uint32_t))
            return loom__fail(LOOM_EINVAL, "loom_object_options.struct_size is not set (use LOOM_OBJECT_OPTIONS_INIT)");
        memcpy(&o, options, options->struct_size < sizeof o ? options->struct_size : sizeof o);
        o.struct_size = sizeof o;
    }
    if (o.device.device_type == 0)
        o.device = (loom_dl_device){ LOOM_DEVICE_CPU, 0 };
    if ((st = loom_init(NULL)) != LOOM_OK)
        return st;
    return object_make(out, class_name, attrs, NULL, 0, &o);
}

/* host->object_create (ABI 1.3): an object made by a kernel, method or
** create of a pack, from in-memory weights. */
loom_object *loom__host_object_create(loom_exec_ctx *ctx, const loom_object_request *req)
{
    loom_object_request r = { 0 };
    loom_object_options o = LOOM_OBJECT_OPTIONS_INIT;
    loom_object *out = NULL;

    if (req == NULL || req->struct_size < offsetof(loom_object_request, device) || req->class_name == NULL) {
        loom__fail(LOOM_EINVAL, "object_create: the request is NULL, has no class name or an unset struct_size");
        return NULL;
    }
    memcpy(&r, req, req->struct_size < sizeof r ? req->struct_size : sizeof r);
    if (r.n_attrs < 0 || (r.n_attrs > 0 && r.attrs == NULL)) {
        loom__fail(LOOM_EINVAL, "object_create %s: %d attributes but no table", r.class_name, r.n_attrs);
        return NULL;
    }
    o.device = r.device;
    if (o.device.device_type == 0)
        o.device = ctx != NULL ? ctx->device : (loom_dl_device){ LOOM_DEVICE_CPU, 0 };
    o.n_files = r.n_files;
    o.files = r.files;
    o.n_tensors = r.n_tensors;
    o.tensors = r.tensors;
    if (object_make(&out, r.class_name, NULL, r.attrs,
                    r.n_attrs, &o) != LOOM_OK)
        return NULL;
    return out;
}

/* Destroy an object already unlinked from `live` and its slot. */
static void destroy(struct loom_object *obj)
{
    /* per-device states first: they may refer to the base state */
    for (int32_t i = obj->n_backend - 1; i >= 0; i--)
        if (obj->backend[i].destroy != NULL)
            obj->backend[i].destroy(obj->backend[i].state);
    pthread_mutex_destroy(&obj->backend_lock);
    obj->cls->c.destroy(obj->state);
    loom_safetensors_close(obj->weights);
    atomic_fetch_sub(&((loom__pack *)obj->cls->pack)->live_objects, 1);
    free(obj);
}

LOOM_API void loom_object_free(loom_object *handle)
{
    struct loom_object *obj;
    const char *why;

    if (handle == NULL)
        return;
    pthread_mutex_lock(&lock);
    obj = resolve(handle, &why);
    if (obj != NULL) {
        if (obj->prev != NULL)
            obj->prev->next = obj->next;
        else
            live = obj->next;
        if (obj->next != NULL)
            obj->next->prev = obj->prev;
        slot_release(obj->slot);
    }
    pthread_mutex_unlock(&lock);
    if (obj == NULL) {
        /* void API: the host learns of it through the log and loom_last_error */
        loom__fail(LOOM_EINVAL, "loom_object_free: the handle %s; nothing was freed", why);
        loom__log(1, "%s", loom_last_error());
        return;
    }
    destroy(obj);
}

LOOM_API const char *loom_object_class_name(const loom_object *handle)
{
    const char *why;
    struct loom_object *obj = handle != NULL ? resolve(handle, &why) : NULL;
    return obj != NULL ? obj->cls->c.name : NULL;
}

loom_status loom__object_state(const loom_object *handle, const char *cls, void **state, const void **pack,
                               loom_dl_device *device)
{
    struct loom_object *obj;
    const char *why;

    if (handle == NULL)
        return loom__fail(LOOM_EINVAL, "this op is a method of object class %s: pass an object in "
                          "loom_call_options.object (loom_object_create)", cls);
    if ((obj = resolve(handle, &why)) == NULL)
        return loom__fail(LOOM_EINVAL, "loom_call_options.object %s", why);
    if (strcmp(obj->cls->c.name, cls) != 0)
        return loom__fail(LOOM_EINVAL, "the object is a %s but this op is a method of %s", obj->cls->c.name, cls);
    *state = obj->state;
    *pack = obj->cls->pack;
    *device = obj->device;
    return LOOM_OK;
}

/* Newest first, each destroyed outside the lock: an object's destroy may
** free the objects its create made (host->object_create), which are older
** than it and still live when it goes. */
void loom__objects_destroy_all(void)
{
    atomic_store(&destroying_all, true);
    for (;;) {
        pthread_mutex_lock(&lock);
        struct loom_object *obj = live;
        if (obj != NULL) {
            live = obj->next;
            if (live != NULL)
                live->prev = NULL;
            slot_release(obj->slot);
        }
        pthread_mutex_unlock(&lock);
        if (obj == NULL)
            break;
        loom__log(1, "shutdown: destroying a %s object the host did not free", obj->cls->c.name);
        destroy(obj);
    }
    atomic_store(&destroying_all, false);
}

void *loom__object_backend_state(const loom_object *handle, const void *pack, const loom_call *call,
                                 loom_backend_state_create create, loom_backend_state_destroy destroy_fn)
{
    const char *why;
    struct loom_object *obj = resolve(handle, &why);
    loom_dl_device dev = call->ctx->device;
    void *state = NULL;

    if (obj == NULL) {
        loom__fail(LOOM_EINVAL, "object_backend_state: the object %s", why);
        return NULL;
    }
    pthread_mutex_lock(&obj->backend_lock);
    for (int32_t i = 0; i < obj->n_backend; i++)
        if (obj->backend[i].pack == pack && obj->backend[i].device.device_type == dev.device_type
            && obj->backend[i].device.device_id == dev.device_id) {
            state = obj->backend[i].state;
            goto out;
        }
    if (obj->n_backend == MAX_BACKEND_STATES) {
        loom__fail(LOOM_ENOMEM, "object_backend_state: a %s object has states on %d devices already (the most)",
                   obj->cls->c.name, MAX_BACKEND_STATES);
        goto out;
    }
    /* created under the object's lock: two first calls on one device make one state */
    if (create(call, obj->state, &state) != LOOM_OK) {
        state = NULL;
        goto out;
    }
    obj->backend[obj->n_backend++] = (backend_state){ pack, dev, state, destroy_fn };
out:
    pthread_mutex_unlock(&obj->backend_lock);
    return state;
}
