/* SPDX-License-Identifier: BSD-3-Clause */
/*
** internal.h - declarations shared by the files of libloom. Not installed.
**
** Naming: loom__<object>_<verb> for core-internal functions used across
** files; static functions inside a file carry no prefix.
*/
#ifndef LOOM_INTERNAL_H
#define LOOM_INTERNAL_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "loom/loom.h"

#define LOOM_HIDDEN __attribute__((visibility("hidden")))

/* ------------------------------------------------------------ status.c */

/* Record status and a printf-style message in this thread's error slot and
** return status. The message is prefixed with the current context (the op
** being called or the pack being loaded) when one is set. */
loom_status loom__fail(loom_status status, const char *fmt, ...) LOOM_PRINTF(2, 3);
loom_status loom__failv(loom_status status, const char *fmt, va_list ap);
/* Context prefix for messages from this thread ("vision.nms" or a pack path);
** NULL clears it. The string must outlive the context. */
void loom__error_context(const char *context);
const char *loom__error_context_get(void);

/* ------------------------------------------------------------- dtype.c */

typedef struct loom__dtype_info {
    const char *name;           /* "f32" */
    size_t size;                /* bytes per element */
    loom_dl_dtype dl;
    const char *npy_descr;      /* little-endian descr without the byte-order char: "f4" */
    const char *safetensors;    /* "F32", NULL if safetensors has none */
} loom__dtype_info;

/* NULL for LOOM_DTYPE_INVALID or out of range. */
const loom__dtype_info *loom__dtype(loom_dtype dtype);

/* ------------------------------------------------------------ tensor.c */

/* Every tensor made by loom is one of these; the public loom_tensor is its
** first member, so a loom_tensor * converts back with loom__box(). */
#define LOOM__TENSOR_MAGIC 0x544D4F4Cu
typedef struct loom__tensor {
    loom_tensor t;
    uint32_t magic;
    int32_t owns_data;              /* 1: data was allocated by loom__dev_alloc */
    loom_dlpack_managed *managed;   /* imported DLPack tensor to release, or NULL */
    loom_dlpack_legacy *legacy;     /* imported DLPack 0.x tensor to release, or NULL */
    bool read_only;                 /* imported with LOOM_DLPACK_FLAG_READ_ONLY */
    loom_buffer_release release;    /* adopted storage (host->adopt_output): called once at free */
    void *release_user, *release_data;
    int64_t shape[LOOM_MAX_NDIM];
    int64_t strides[LOOM_MAX_NDIM];
} loom__tensor;

/* The box of t, or NULL if t was not made by loom (a caller's DLTensor). */
loom__tensor *loom__box(const loom_tensor *t);

/* A new compact tensor; data zero-filled on the CPU when zero is true. */
loom_status loom__tensor_alloc(loom_tensor **out, loom_dtype dtype, int32_t ndim,
                             const int64_t *shape, loom_dl_device device, bool zero);
/* A tensor over storage a kernel adopted as an output (host->adopt_output):
** shape and strides copied, release(user, data) called when it is freed.
** On failure release is called before it returns. */
loom_status loom__tensor_adopt(loom_tensor **out, const loom_output_storage *s, loom_dl_device device);
/* Checks every field of a tensor a caller or pack handed in: known dtype,
** 0 <= ndim <= LOOM_MAX_NDIM, non-negative dims, data non-NULL when numel>0.
** `what` names it in the message ("input 'a' of core.matmul"). */
loom_status loom__tensor_check(const loom_tensor *t, const char *what);
/* Bytes of a compact tensor with t's shape and dtype. */
size_t loom__tensor_nbytes(const loom_tensor *t);
/* Copy a strided host tensor (t->strides set) into compact dst. */
void loom__tensor_gather(void *dst, const loom_tensor *t, size_t esize);
/* Write "f32[2,3]" into buf. Returns buf. */
char *loom__tensor_describe(const loom_tensor *t, char *buf, size_t size);

/* ------------------------------------------------------------ device.c */

static inline loom_dl_device loom__cpu(void) { return (loom_dl_device){ LOOM_DEVICE_CPU, 0 }; }
static inline bool loom__is_host(loom_dl_device d)
{
    return d.device_type == LOOM_DEVICE_CPU || d.device_type == LOOM_DEVICE_CUDA_HOST
        || d.device_type == LOOM_DEVICE_CUDA_MANAGED;
}
/* hostcache.c: CPU memory with a cache of freed large blocks (see there).
** loom__host_free takes only what loom__host_alloc returned. */
void *loom__host_alloc(size_t nbytes, size_t alignment);
void loom__host_free(void *p);
void loom__host_cache_trim(void);
/* explicit_setting: LOOM_ALLOC_CACHE was given (bytes, 0 = off); else the default. */
void loom__host_cache_configure(bool explicit_setting, uint64_t bytes);
void loom__host_cache_stats(uint64_t *bytes, uint64_t *hits, uint64_t *misses);

/* Allocate on a device: CPU memory directly, others through the provider
** a pack registered. NULL with the error set on failure. */
void *loom__dev_alloc(loom_dl_device device, size_t nbytes, size_t alignment);
void loom__dev_free(loom_dl_device device, void *ptr);
/* Copy between any two devices (at least one side CPU, or the same provider). */
loom_status loom__dev_copy(void *dst, loom_dl_device dst_dev, const void *src,
                         loom_dl_device src_dev, size_t nbytes);
loom_status loom__dev_sync(loom_dl_device device, void *stream);
/* Providers are added by the registry at pack commit. */
loom_status loom__device_add_provider(const loom_device_provider *p, const char *pack);
void loom__device_reset(void);
/* A device of this LOOM_DEVICE_* type is present (the cpu always is). */
bool loom__device_type_present(int32_t device_type);

/* ------------------------------------------------------------ fileio.c */

/* Map a whole file read-only (an empty file maps to a non-NULL dummy). */
loom_status loom__map_file(const char *path, const void **data_out, size_t *nbytes_out);
void loom__unmap_file(const void *data, size_t nbytes);
/* Write nbytes to path atomically (temp file + rename). */
loom_status loom__write_file(const char *path, const void *const *chunks,
                           const size_t *sizes, int n_chunks);

/* --------------------------------------------------------- safetensors.c */

/* The host-table views of a safetensors file. */
loom_status loom__safetensors_get(const loom_safetensors *st, const char *name,
                                const loom_tensor **out);
/* A view of named CPU tensors as a safetensors file (safetensors.c). */
loom_status loom__safetensors_from_tensors(loom_safetensors **out, const loom_named_tensor *tensors,
                                           int32_t n, const char *what);

/* --------------------------------------------------------------- attrs.c */

/* Resolve a caller's attribute bag against a list of attribute definitions
** (an op's or an object class's) into values[n_defs] in definition order.
** Unknown names, wrong types and missing required attributes fail, naming
** `owner` and the attribute. The values borrow memory from attrs and defs. */
loom_status loom__attrs_resolve(const loom_attrs *attrs, const loom_attr_def *defs, uint32_t n_defs,
                              const char *owner, loom_attr_value *values);

/* The same from a nested call's named attributes (host->op_call). */
loom_status loom__attrs_resolve_named(const loom_named_attr *named, int32_t n_named, const loom_attr_def *defs,
                                    uint32_t n_defs, const char *owner, loom_attr_value *values);
/* Enumerated string attributes: each listed attribute's value is one of its
** choices, else LOOM_EINVAL naming the allowed values. */
loom_status loom__attrs_check_choices(const loom_attr_value *values, const loom_attr_def *defs, uint32_t n_defs,
                                    const loom_attr_choices *choices, uint32_t n_choices, const char *owner);

/* The LOOM_ATTR_FINITE/POSITIVE/NONNEG constraints of def on a resolved
** value v (type already def->type); LOOM_OK when v is unset or fits. */
loom_status loom__attr_check_value(const loom_attr_def *def, const loom_attr_value *v, const char *owner);

/* ---------------------------------------------------------- threadpool.c */

loom_status loom__pool_start(int32_t n_threads);
void loom__pool_stop(void);
int32_t loom__pool_size(void);
loom_status loom__parallel_for(loom_exec_ctx *ctx, int64_t n, int64_t grain, loom_range_fn fn, void *user);
const char *loom__topology_text(void);
int32_t loom__physical_cores(void);

/* -------------------------------------------------------------- config.c */

typedef struct loom__config {
    char *plugin_path;              /* ':'-separated, may be NULL */
    const char *plugin_path_origin;
    char *select, *disable;         /* ','-separated globs, may be NULL */
    char *backends;                 /* raw LOOM_BACKENDS */
    bool strict;
    int verbose;
    int num_threads;
    char *cpu_max_isa;
    bool no_default_dirs;
    FILE *log;
    bool secure;                    /* path variables were ignored (setuid) */
    uint64_t max_alloc;             /* LOOM_MAX_ALLOC: bytes one allocation may take, 0 = no cap */
    bool alloc_cache_set;           /* LOOM_ALLOC_CACHE was given */
    uint64_t alloc_cache;           /* its value in bytes (0 = off) */
    bool cuda_gate;                 /* LOOM_CUDA_GATE: CUDA packs open only with a driver and a device */
} loom__config;

/* Read the environment and the explicit options (options win). */
loom_status loom__config_load(loom__config *cfg, const loom_init_options *opts);
void loom__config_free(loom__config *cfg);
extern loom__config loom__cfg;
/* Lines for loom_config_at(). */
void loom__config_lines(char ***lines_out, int64_t *count_out);

/* LOOM_OK when one allocation of nbytes is within LOOM_MAX_ALLOC; else
** LOOM_ENOMEM with a message naming `what` (an output, "scratch", ...). */
loom_status loom__alloc_cap_check(uint64_t nbytes, const char *what);

/* The CUDA gate (cuda_gate.c). loom__cuda_pack_needs: whether the ELF
** file at path has a DT_NEEDED entry on a CUDA library (libcuda*,
** libcudart*, libcublas*, libcudnn*, libcufft*, libnccl*), the first one
** copied into lib; false for any file it cannot read as an ELF object of
** this process's class. loom__cuda_driver_state: LOOM__CUDA_*, asked of the
** driver once per process (thread-safe); *detail the driver's words.
** loom__cuda_gate_closed: true, with the reason in why, when path is a
** CUDA pack that must not be opened (gate on and driver not ready). */
enum { LOOM__CUDA_READY = 1, LOOM__CUDA_NO_DRIVER, LOOM__CUDA_NO_DEVICE };
bool loom__cuda_pack_needs(const char *path, char *lib, size_t lib_size);
int loom__cuda_driver_state(const char **detail);
bool loom__cuda_gate_closed(const char *path, const char *pack, char *why, size_t size);

/* Log at level (1..3 = LOOM_VERBOSE threshold; 0 always). */
void loom__log(int level, const char *fmt, ...) LOOM_PRINTF(2, 3);

/* ------------------------------------------------------------ suggest.c */

/* The candidate closest to word within a few edits ("did you mean"), or
** NULL when none is close. */
const char *loom__closest(const char *word, const char *const *candidates, int64_t n);

/* --------------------------------------------------------------- cpu.c */

/* What cpuid and the OS allow, uncapped (LOOM_CPU_* bits). */
uint64_t loom__cpu_detect(void);
/* The LOOM_CPU_LEVEL_* mask named by a LOOM_CPU_MAX_ISA value ("scalar",
** "sse4", "avx2", "avx512", "amx", "native"); false when unknown. */
bool loom__cpu_level(const char *name, uint64_t *mask);
/* Compute the features in force (detect() capped by max_isa, NULL = none). */
void loom__cpu_init(const char *max_isa);
uint64_t loom__cpu_features(void);

/* ------------------------------------------------------------ hostapi.c */

extern const loom_host_api loom__host_api;

/* --------------------------------------------------------------- misc */

/* Copy our out-struct src (src_size bytes, first member uint32_t
** struct_size) into a caller's dst, no more than dst->struct_size bytes:
** a caller built against an older, smaller layout gets the prefix it knows. */
static inline loom_status loom__struct_out(void *dst, const void *src, size_t src_size, const char *what)
{
    uint32_t dst_size;
    if (dst == NULL)
        return loom__fail(LOOM_EINVAL, "%s: out is NULL", what);
    memcpy(&dst_size, dst, sizeof dst_size);
    if (dst_size < sizeof(uint32_t))
        return loom__fail(LOOM_EINVAL, "%s: out->struct_size is not set (use the _INIT macro)", what);
    if (dst_size > src_size)
        dst_size = (uint32_t)src_size;
    memcpy(dst, src, dst_size);
    memcpy(dst, &dst_size, sizeof dst_size);
    return LOOM_OK;
}

/* Registry look-ups used by attrs.c and object.c (registry.c). */
const loom_attr_def *loom__attr_defs_of(const char *op_or_class, uint32_t *n_out);
/* The attribute definitions of the object class `name` only; NULL if none. */
const loom_attr_def *loom__class_attr_defs_of(const char *name, uint32_t *n_out);

char *loom__strdup(const char *s);
/* fnmatch-style glob match of name against a ','-separated list. */
bool loom__glob_list_match(const char *list, const char *name);

#endif /* LOOM_INTERNAL_H */
