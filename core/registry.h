/* SPDX-License-Identifier: BSD-3-Clause */
/*
** registry.h - packs, operators, kernels and object classes as the core
** keeps them, and the immutable snapshot that dispatch reads.
**
** Writers (pack loading) serialise on one mutex and publish a complete new
** snapshot with one atomic store; readers load the pointer once per call
** and never lock. Old snapshots stay alive until loom_shutdown, so handles
** (loom_op *) stay valid for the life of the core.
*/
#ifndef LOOM_REGISTRY_H
#define LOOM_REGISTRY_H

#include <pthread.h>

#include "internal.h"

/* The core's limits are plugin.h's LOOM_MAX_*; each one that a pack hits
** refuses the pack with a message naming it, none truncates silently. */
#define LOOM__MAX_ATTRS LOOM_MAX_ATTRS      /* attributes of an op or object class */
#define LOOM__MAX_ARGS LOOM_MAX_ARGS        /* inputs, and outputs, of an op */
#define LOOM__MAX_KERNELS LOOM_MAX_KERNELS  /* kernels of one op, all packs together */

typedef struct loom__pack {
    char *path;
    char *name, *version, *description;
    void *lib;                          /* dlopen handle; NULL for static packs */
    void (*fini)(void);
    int64_t n_ops, n_kernels, n_classes;
    atomic_llong live_objects;
    /* Why this pack is the one in force for what it registered: "it came
    ** first in the search order: found in DIR (ORIGIN)" (set by the loader). */
    char *origin;
    /* Registrations dropped at commit because an earlier pack holds them
    ** (see registry.c), as "; "-separated text, and how many; NULL/0 if none. */
    char *refused;
    int32_t n_refused;
    /* The descriptor's depends (ABI 1.1), copied: NULL-terminated, or NULL. */
    char **depends;
    /* The minor of the headers the pack was built with: a pack older than
    ** 1.4 knows no u16/u32, so dispatch keeps those from its kernels. */
    uint16_t abi_minor_built;
} loom__pack;

typedef struct loom__kernel {
    loom_kernel_desc k;                 /* our layout; members newer than the pack are zero */
    const loom__pack *pack;
    char label[];                       /* "core.matmul [onednn:matmul]" for messages, whole */
} loom__kernel;

struct loom_op {
    const loom_op_schema *schema;       /* the definition: memory of the defining pack */
    const loom__pack *def_pack;
    uint64_t hash;
    int32_t n_kernels;
    loom__kernel *kernels[LOOM__MAX_KERNELS];   /* in policy order */
    int32_t rank[LOOM__MAX_KERNELS];    /* backend position in the policy, -1 = excluded */
};

typedef struct loom__class {
    loom_object_class c;
    const loom__pack *pack;
} loom__class;

typedef struct loom__snapshot {
    struct loom_op **ops;               /* sorted by name */
    int64_t n_ops;
    struct loom_op **table;             /* open-addressing hash of ops by name */
    uint64_t table_mask;
    loom__class **classes;
    int64_t n_classes;
    struct loom__snapshot *older;       /* chain kept until shutdown */
} loom__snapshot;

/* The current snapshot, or NULL before init. */
const loom__snapshot *loom__snapshot_get(void);
const struct loom_op *loom__op_lookup(const loom__snapshot *s, const char *name);
const loom__class *loom__class_lookup(const loom__snapshot *s, const char *name);
/* Append the backends of op's kernels not yet in names[0..n) (up to max);
** returns the new count. */
int64_t loom__op_backends(const struct loom_op *op, const char **names, int64_t n, int64_t max);
/* The registered op / class name closest to a mistyped one, or NULL. */
const char *loom__closest_op(const char *name);
const char *loom__closest_class(const char *name);
/* Check LOOM_BACKENDS against what loaded: each backend it names must be a
** backend of some kernel (or a built-in one: cuda, onednn, cpu) and each
** per-op glob must match some op. A mistake is logged, naming the closest
** match; with LOOM_STRICT=1 the first one is returned as an error (EINVAL,
** message set). Called once by loom_init after the packs load. */
loom_status loom__policy_check(void);

/* Registration of one pack: begin, let the pack's init register into the
** registrar, then commit or abort. Caller holds the lock. Commit publishes
** every registration of the pack or none, except those an earlier pack
** already holds (a clashing definition with its kernels, a duplicate kernel
** or class): those are dropped and listed in pack->refused. */
struct loom_registrar;
loom_status loom__registrar_begin(struct loom_registrar **out, loom__pack *pack);
loom_status loom__registrar_commit(struct loom_registrar *reg);
void loom__registrar_abort(struct loom_registrar *reg);

/* Rebuild the policy order of every op (after the config changed). */
loom_status loom__registry_republish(void);
void loom__registry_reset(void);
extern pthread_mutex_t loom__registry_lock;

/* Packs loaded, in load order (read under the lock or after init). */
extern loom__pack **loom__packs;
extern int64_t loom__n_packs;

/* Parse LOOM_BACKENDS for one op: the ordered backend list in force. */
int32_t loom__backend_rank(const char *op, const char *backend);

/* object.c: the state of obj for a method of class cls, the pack that made
** it and the device it was made for (loom_object_options.device). */
loom_status loom__object_state(const loom_object *obj, const char *cls, void **state, const void **pack,
                               loom_dl_device *device);
void loom__objects_destroy_all(void);

/* object.c: per-device state of an object for a pack (host->object_backend_state). */
void *loom__object_backend_state(const loom_object *handle, const void *pack, const loom_call *call,
                                 loom_backend_state_create create, loom_backend_state_destroy destroy);

/* interfaces.c: vtables packs offer each other, staged per registrar;
** the registry commits or aborts them with the pack. */
loom_status loom__host_register_interface(loom_registrar *reg, const char *name, uint32_t version,
                                        const void *vtable);
void loom__interfaces_commit(const loom_registrar *reg, const char *pack);
void loom__interfaces_abort(const loom_registrar *reg);
void loom__interfaces_reset(void);
void *loom__get_extension(const char *name, uint32_t version);
int64_t loom__interface_count(void);

/* dispatch.c: the host-table services of composition (ABI 1.1). */
const loom_op *loom__host_op_find(const char *name);
loom_status loom__host_op_call(loom_exec_ctx *ctx, const loom_op_call *call);
loom_object *loom__host_object_create(loom_exec_ctx *ctx, const loom_object_request *req);
void loom__host_tensor_free(loom_tensor *t);
loom_status loom__host_plan_create(loom_exec_ctx *ctx, const loom_op_call *proto, loom_plan **out);
loom_status loom__host_plan_run(loom_exec_ctx *ctx, loom_plan *plan, const loom_tensor *const *inputs,
                              int32_t n_inputs, loom_tensor **outputs, int32_t n_outputs);
void *loom__host_object_backend_state(loom_call *call, loom_backend_state_create create,
                                      loom_backend_state_destroy destroy);

/* dispatch.c: the registry record behind a host's op handle, or NULL with
** the error set (`what` names the API function); and the reset of the
** handle table at shutdown. */
const struct loom_op *loom__op_resolve(const loom_op *handle, const char *what);
void loom__op_handles_reset(void);
/* dispatch.c: release the kernel state of every live plan (at shutdown,
** before the packs' fini); the plans stay the host's to free. */
void loom__plans_release_all(void);

/* dispatch.c: host-table services tied to a call. */
void *loom__scratch(loom_exec_ctx *ctx, size_t nbytes);
loom_status loom__alloc_output(loom_call *call, int32_t index, loom_dtype dtype, int32_t ndim,
                             const int64_t *shape, loom_tensor **out);
/* host->adopt_output (ABI 1.6); the rules are in plugin.h. */
loom_status loom__adopt_output(loom_call *call, int32_t index, const loom_output_storage *storage,
                             loom_tensor **out);

/* device.c: a pack's providers at commit. Check: LOOM_OK when every one of
** p[0..n) can be added, its count() (the only function of a provider called
** before it is added) in counts[i]; else the reason, naming the limit. Add:
** publish p with the count checked; cannot fail after a passed check (the
** caller holds the registry lock). */
loom_status loom__device_check_providers(const loom_device_provider *const *p, int n, int32_t *counts);
void loom__device_add_checked(const loom_device_provider *p, const char *pack, int32_t count);

/* probe.c: the descriptor checks and entry look-up the loader and the
** probe helper share, and vetted loading (LOOM_PROBE). */
loom_plugin_entry_fn loom__entry_lookup(void *lib, bool *mangled);
const char *loom__entry_missing_text(bool mangled, char *buf, size_t size);
const char *loom__desc_problem(const loom_plugin_desc *desc, char *buf, size_t size);
const char *const *loom__desc_depends(const loom_plugin_desc *desc);
/* config.c: LOOM_PROBE / loom_init_options.probe_packs, LOOM_PROBE_TIMEOUT (seconds, 0 = default 5). */
extern bool loom__probe_packs;
extern double loom__probe_timeout;
/* Verdicts of the probe on one pack file. */
enum {
    LOOM__PROBE_GOOD,       /* passed now or before (cached): the host may load it */
    LOOM__PROBE_NEEDS_DEPS, /* opened cleanly; it has dependencies: probe its init with loom__probe_init */
    LOOM__PROBE_REFUSE,     /* the loader refuses it before init anyway (*reason says why) */
    LOOM__PROBE_BAD,        /* quarantined, now or before: *reason is the scan entry's text */
    LOOM__PROBE_ERROR       /* it could not be probed: *reason says why; the host must not load it */
};
/* Around a scan (under the registry lock): read the cache, forget it. */
void loom__probe_begin(void);
void loom__probe_end(void);
/* Before the host opens path. *reason: NULL or a new string. */
int loom__probe_open(const char *path, char **reason);
/* Its init, after the already loaded packs deps[0..n) it needs, in load order. */
int loom__probe_init(const char *path, const char *const *deps, int n_deps, char **reason);

/* loader.c */
void loom__loader_scan(void);
void loom__loader_reset(void);
void loom__loader_unload(void);

/* init.c: set once the first loom_init has published a registry. */
extern atomic_int loom__initialized;
/* init.c: bumped by every loom_init and every loom_shutdown, so handles
** (objects, ops, plans) record the init they belong to. */
extern atomic_uint loom__epoch;

#endif /* LOOM_REGISTRY_H */
