/* SPDX-License-Identifier: BSD-3-Clause */
/*
** loom/loom.h - the public API of libloom, for host applications.
**
** A host initialises the core once (loom_init), which discovers operator
** packs, then calls operators by name on tensors. Everything a pack sees is in
** loom/plugin.h, which this header includes for the shared types (tensors,
** dtypes, schemas, status codes).
**
** Conventions:
**  - Functions return loom_status; on failure loom_last_error() holds a
**    message for the calling thread, valid until its next failing call.
**  - create/new functions write a caller-owned object to *out (NULL on
**    failure); the matching free/destroy accepts NULL.
**  - Strings and schemas returned by query functions are borrowed and valid
**    until loom_shutdown().
**  - Every function is thread-safe unless it says otherwise.
*/
#ifndef LOOM_LOOM_H
#define LOOM_LOOM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#  define LOOM_API __attribute__((visibility("default")))
#else
#  define LOOM_API
#endif

#define LOOM_VERSION_STRING "0.1.0"

/* ------------------------------------------------------------ init, errors */

/* Options of loom_init. Explicit values beat the environment. Zero or NULL
** members mean "from the environment, else the default". */
typedef struct loom_init_options {
    uint32_t struct_size;           /* sizeof(loom_init_options) */
    const char *plugin_path;        /* ':'-separated dirs searched first (beats LOOM_PLUGIN_PATH) */
    const char *backends;           /* like LOOM_BACKENDS */
    int32_t strict;                 /* 1 strict, -1 not strict, 0 environment */
    int32_t verbose;                /* 1..3, -1 quiet, 0 environment */
    int32_t num_threads;            /* >0 explicit, 0 environment/physical cores */
    int32_t no_default_dirs;        /* 1: search only plugin_path/LOOM_PLUGIN_PATH */
    FILE *log_stream;               /* where verbose lines go; NULL = stderr */
    /* ---- ABI 1.1 ---- */
    int32_t probe_packs;            /* 1: vet packs in a child process first (LOOM_PROBE), -1 never, 0 environment */
} loom_init_options;
/* LOOM_STRUCT_INIT(T): a T with every member zero and struct_size set: a
** designated initialiser in C, a value from an inline function in C++
** (which lacks designated initialisers before C++20). Every _INIT macro of
** this header is one of these. */
#ifdef __cplusplus
}   /* extern "C" */
template <typename T> static inline T loom_struct_init_()
{
    T v = T();
    v.struct_size = (uint32_t)sizeof(T);
    return v;
}
extern "C" {
#  define LOOM_STRUCT_INIT(T) loom_struct_init_<T>()
#else
#  define LOOM_STRUCT_INIT(T) { .struct_size = (uint32_t)sizeof(T) }
#endif
#define LOOM_INIT_OPTIONS_INIT LOOM_STRUCT_INIT(loom_init_options)

/* Initialise the core: read the environment, build the thread pool, load
** every pack found. Thread-safe and idempotent: a second call returns LOOM_OK
** and loads nothing again (its options are then ignored). A pack that is
** refused does not make init fail: see loom_pack_count/loom_scan_*. */
LOOM_API loom_status loom_init(const loom_init_options *options);

/* Release everything: objects still alive are reported at LOOM_VERBOSE>=1 and
** destroyed, packs get fini(). After this, loom_init may be called again. Not
** thread-safe with calls in flight. */
LOOM_API void loom_shutdown(void);

/* Give back to the system the CPU blocks loom keeps for reuse (freed outputs
** and scratch blocks of 64 KB and more, up to LOOM_ALLOC_CACHE bytes, default
** 1 GiB; LOOM_ALLOC_CACHE=0 turns the cache off). loom_shutdown does it too. */
LOOM_API void loom_trim(void);

LOOM_API const char *loom_version(void);           /* "0.1.0" */
LOOM_API uint32_t loom_abi_version(void);          /* major << 16 | minor */
LOOM_API const char *loom_last_error(void);        /* this thread's last failure */
LOOM_API loom_status loom_last_status(void);
LOOM_API const char *loom_status_name(loom_status status);  /* "LOOM_EINVAL" */
/* The candidate closest to a mistyped word, for a host's own "did you
** mean" (the core answers unknown op, class and backend names this way):
** within a third of the word's length in edits (at least 1, at most 3;
** an adjacent swap is one edit), else NULL. Needs no loom_init. */
LOOM_API const char *loom_suggest(const char *word, const char *const *candidates, int64_t n);
/* The report of `loom doctor` as text, for a host's own diagnostics: the
** versions, the configuration in effect and where each setting came from,
** the CPU topology, threads, devices, the plugin search directories, every
** file the loader saw and what happened to it, each pack's dependencies
** and whether they are satisfied, and the quarantined packs. As snprintf:
** writes at most size bytes to buf, NUL-terminated when size > 0, and
** returns the length of the whole report (call with NULL, 0 to size a
** buffer; the report can change between calls as packs load or objects
** live). After loom_init. */
LOOM_API size_t loom_doctor_report(char *buf, size_t size);
/* Whether dependency dep of a loaded pack (a pack name, or an op name with
** a dot; loom_scan_entry.depends) is satisfied now: 1 or 0, with what
** satisfies it or what is missing written to buf as snprintf does
** ("satisfied: pack loaded from PATH", "missing: no pack 'x' is loaded"). */
LOOM_API int loom_dependency_state(const char *dep, char *buf, size_t size);

/* Load one more pack file now, with the same checks as discovery. */
LOOM_API loom_status loom_load_pack(const char *path);

/* ------------------------------------------------------------------ dtypes */

LOOM_API size_t loom_dtype_size(loom_dtype dtype);
LOOM_API const char *loom_dtype_name(loom_dtype dtype);     /* "f32" ... */
LOOM_API loom_dtype loom_dtype_from_name(const char *name); /* also "float32", "torch.int64", "Half"... */
LOOM_API loom_dl_dtype loom_dtype_to_dl(loom_dtype dtype);

/* ----------------------------------------------------------------- tensors */

/* A new compact tensor on device, zero-filled on the CPU. device: NULL = CPU. */
LOOM_API loom_status loom_tensor_new(loom_tensor **out, loom_dtype dtype, int32_t ndim,
                                   const int64_t *shape, const loom_dl_device *device);
/* A tensor over memory the caller owns and keeps alive (strides NULL = compact). */
LOOM_API loom_status loom_tensor_wrap(loom_tensor **out, void *data, loom_dtype dtype, int32_t ndim,
                                    const int64_t *shape, const int64_t *strides,
                                    const loom_dl_device *device);
/* Free a tensor made by loom (new, wrap, op outputs, from_dlpack). NULL is a no-op. */
LOOM_API void loom_tensor_free(loom_tensor *t);
/* A compact copy of t on device (synchronises with pending device work). */
LOOM_API loom_status loom_tensor_copy_to(loom_tensor **out, const loom_tensor *t,
                                       const loom_dl_device *device);
LOOM_API size_t loom_tensor_nbytes(const loom_tensor *t);
/* Wait for device work that writes t (no-op on the CPU). */
LOOM_API loom_status loom_tensor_sync(const loom_tensor *t);

/* DLPack: import takes ownership of m (its deleter runs at loom_tensor_free);
** export hands t over to *out (t must not be freed afterwards; the consumer
** calls (*out)->deleter). */
LOOM_API loom_status loom_tensor_from_dlpack(loom_tensor **out, loom_dlpack_managed *m);
LOOM_API loom_status loom_tensor_to_dlpack(loom_dlpack_managed **out, loom_tensor *t);

/* Layout-identical to DLPack 0.x's unversioned DLManagedTensor, which
** NumPy's plain __dlpack__() and PyTorch before 2.4 hand out (capsule name
** "dltensor"). Imported like the versioned form: ownership passes to loom,
** the deleter runs at loom_tensor_free; it has no read-only flag, so the
** tensor is writable as its producer's is. */
typedef struct loom_dlpack_legacy {
    loom_tensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct loom_dlpack_legacy *self);
} loom_dlpack_legacy;
LOOM_API loom_status loom_tensor_from_dlpack_legacy(loom_tensor **out, loom_dlpack_legacy *m);

/* ------------------------------------------------------------------- attrs */

/* A bag of named attribute values, resolved against an op's schema at call
** time (unknown names and wrong types are errors then). Values are copied. */
typedef struct loom_attrs loom_attrs;
LOOM_API loom_status loom_attrs_new(loom_attrs **out);
LOOM_API void loom_attrs_free(loom_attrs *attrs);
LOOM_API loom_status loom_attrs_set_int(loom_attrs *a, const char *name, int64_t v);
LOOM_API loom_status loom_attrs_set_float(loom_attrs *a, const char *name, double v);
LOOM_API loom_status loom_attrs_set_bool(loom_attrs *a, const char *name, int v);
LOOM_API loom_status loom_attrs_set_string(loom_attrs *a, const char *name, const char *v);
LOOM_API loom_status loom_attrs_set_ints(loom_attrs *a, const char *name, const int64_t *v, int64_t count);
LOOM_API loom_status loom_attrs_set_floats(loom_attrs *a, const char *name, const double *v, int64_t count);
/* The tensor is borrowed: keep it alive until the call returns. */
LOOM_API loom_status loom_attrs_set_tensor(loom_attrs *a, const char *name, const loom_tensor *t);
/* Parse "value" as the type the op (or object class) declares for `name`:
** ints "3", floats "0.5", bools "true"/"false", lists "7,7". */
LOOM_API loom_status loom_attrs_parse(loom_attrs *a, const char *op_or_class, const char *name,
                                    const char *value);

/* -------------------------------------------------------------------- ops */

/* loom_op (an op handle), loom_object and loom_plan are declared in plugin.h. */

LOOM_API const loom_op *loom_op_find(const char *name);  /* NULL (error set) if none */
LOOM_API const loom_op_schema *loom_op_schema_of(const loom_op *op);

/* Options of a call. Zero members mean defaults. */
typedef struct loom_call_options {
    uint32_t struct_size;
    loom_object *object;            /* required for methods of an object class */
    const char *backend;            /* force one backend for this call, NULL = policy */
    void *stream;                   /* CUDA stream, NULL = default */
    int32_t num_threads;            /* 0 = the core's default */
} loom_call_options;
#define LOOM_CALL_OPTIONS_INIT LOOM_STRUCT_INIT(loom_call_options)

/* Run an op by name. inputs[n_inputs] follow the schema order (NULL = absent
** optional input). outputs[n_outputs]: an entry that is NULL receives a new
** tensor the caller frees with loom_tensor_free; a non-NULL entry is written
** in place after its dtype and shape are checked. n_outputs may be smaller
** than the schema's (trailing outputs are then dropped). */
LOOM_API loom_status loom_run(const char *op, const loom_tensor *const *inputs, int32_t n_inputs,
                             const loom_attrs *attrs, loom_tensor **outputs, int32_t n_outputs,
                             const loom_call_options *options);
/* The same with a looked-up op: skips the name lookup. */
LOOM_API loom_status loom_op_run(const loom_op *op, const loom_tensor *const *inputs, int32_t n_inputs,
                                const loom_attrs *attrs, loom_tensor **outputs, int32_t n_outputs,
                                const loom_call_options *options);

/* Prepared calls (ABI 1.1): the kernel, the resolved attributes, the output
** shapes and the scratch size are chosen once, from input descriptions
** (tensors whose data may be NULL: dtype, shape, device count), and reused
** by every loom_plan_run on inputs of those dtypes and shapes (checked). A
** plan is bound to one loom_init; loom_plan_run after loom_shutdown fails
** with LOOM_EINVAL. A plan may be run from several threads at once. */
LOOM_API loom_status loom_plan_create(loom_plan **out, const loom_op *op, const loom_tensor *const *inputs,
                                    int32_t n_inputs, const loom_attrs *attrs, const loom_call_options *options);
LOOM_API loom_status loom_plan_run(loom_plan *plan, const loom_tensor *const *inputs, int32_t n_inputs,
                                 loom_tensor **outputs, int32_t n_outputs);
LOOM_API void loom_plan_free(loom_plan *plan);

/* Estimated flops and bytes of the last successful call on this thread, if
** the op declares its cost (0 otherwise). */
LOOM_API void loom_last_call_cost(double *flops, double *bytes);

/* ----------------------------------------------------------------- objects */

/* Create an object of a class ("core.linear"), with attributes and an optional
** safetensors weights file (mapped, not copied). */
LOOM_API loom_status loom_object_create(loom_object **out, const char *class_name,
                                      const loom_attrs *attrs, const char *weights_path);
/* The same with everything an object may need (ABI 1.1). */
typedef struct loom_object_options {
    uint32_t struct_size;
    loom_dl_device device;          /* where to create it; {0,0} = CPU. ABI 1.5: an object made
                                    ** on a device runs its methods there (docs/abi.md) */
    const char *weights_path;       /* a safetensors file, or NULL */
    int32_t n_files;                /* named files: vocab, lexicon, lm, src, ... */
    const loom_named_file *files;
    const char *callbacks_name;     /* names the callback table's type, e.g. "loom.read.v1" */
    const void *callbacks;          /* a table of the host's callbacks, or NULL */
    /* ---- ABI 1.3 ---- */
    /* Weights from memory instead of weights_path (not both): the class sees
    ** them as its weights file, by name. Borrowed, not copied (a strided or
    ** misaligned CPU tensor is copied once into compact aligned memory): keep
    ** them valid and unchanged until loom_object_free, as ONNX Runtime's
    ** external initializers are kept. */
    int32_t n_tensors;
    const loom_named_tensor *tensors;
} loom_object_options;
#define LOOM_OBJECT_OPTIONS_INIT LOOM_STRUCT_INIT(loom_object_options)
LOOM_API loom_status loom_object_create_ex(loom_object **out, const char *class_name, const loom_attrs *attrs,
                                         const loom_object_options *options);
LOOM_API void loom_object_free(loom_object *obj);
LOOM_API const char *loom_object_class_name(const loom_object *obj);

/* --------------------------------------------------------------- dispatch */

/* Why the last call on this thread ran where it ran. */
typedef struct loom_dispatch_info {
    uint32_t struct_size;
    const char *op;                 /* borrowed until the next call on this thread */
    const char *backend;            /* chosen backend, NULL if none */
    const char *impl;               /* chosen kernel's implementation name */
    int32_t fallback;               /* 1 when a preferred backend declined */
    const char *text;               /* the full LOOM_VERBOSE=2 line: candidates and reasons */
} loom_dispatch_info;
#define LOOM_DISPATCH_INFO_INIT LOOM_STRUCT_INIT(loom_dispatch_info)
LOOM_API loom_status loom_last_dispatch(loom_dispatch_info *out);

/* ----------------------------------------------------------- introspection */

LOOM_API int64_t loom_op_count(void);
LOOM_API const loom_op_schema *loom_op_schema_at(int64_t index);   /* sorted by name */

/* Kernels of an op, in the dispatch order the current policy gives them. */
typedef struct loom_kernel_info {
    uint32_t struct_size;
    const char *backend;
    const char *impl;
    const char *pack;
    int32_t device_type;
    uint64_t dtypes;
    /* 1 when LOOM_BACKENDS leaves this kernel out for this op */
    int32_t excluded;
    /* 0 when no device of device_type is present: the kernel cannot run here */
    int32_t device_present;
} loom_kernel_info;
#define LOOM_KERNEL_INFO_INIT LOOM_STRUCT_INIT(loom_kernel_info)
LOOM_API int64_t loom_op_kernel_count(const loom_op *op);
LOOM_API loom_status loom_op_kernel_at(const loom_op *op, int64_t index, loom_kernel_info *out);

LOOM_API int64_t loom_object_class_count(void);
LOOM_API const loom_object_class *loom_object_class_at(int64_t index);

/* Every file the loader looked at, in search order, and what happened. */
typedef enum loom_scan_result {
    LOOM_SCAN_LOADED = 0,
    LOOM_SCAN_REFUSED,              /* see reason */
    LOOM_SCAN_SKIPPED,              /* filtered by LOOM_PLUGINS_SELECT/DISABLE, or a duplicate file */
    LOOM_SCAN_NO_DEVICE             /* pack loaded but its device is absent */
} loom_scan_result;

typedef struct loom_scan_entry {
    uint32_t struct_size;
    const char *path;
    const char *pack;               /* pack name if the entry was read, else NULL */
    const char *version;
    int32_t result;                 /* loom_scan_result */
    const char *reason;             /* one line */
    int64_t n_ops, n_kernels, n_classes;
    int64_t live_objects;           /* objects of this pack alive now */
    /* ---- ABI 1.1 ---- */
    const char *const *depends;     /* the pack's depends (NULL-terminated), or NULL */
} loom_scan_entry;
#define LOOM_SCAN_ENTRY_INIT LOOM_STRUCT_INIT(loom_scan_entry)
LOOM_API int64_t loom_scan_count(void);
LOOM_API loom_status loom_scan_at(int64_t index, loom_scan_entry *out);
/* "loaded", "refused", "skipped", "no device" (as loom doctor prints them). */
LOOM_API const char *loom_scan_result_name(int32_t result);

/* Vetted loading (ABI 1.1; loom_init_options.probe_packs, LOOM_PROBE=1): the
** probe cache, $XDG_CACHE_HOME/loom/probe-cache (else ~/.cache/loom/...).
** One record per pack file probed: quarantined (never loaded: its init
** crashed, hung or failed in the probe) or passed. loom_probe_record_count
** reads the file; the strings of loom_probe_record_at are valid until the
** next loom_probe_record_count. loom_probe_forget removes the records of a
** pack (a path, or a file name with or without ".so"), so it is probed again
** at the next loom_init; LOOM_ENOENT when there is none. None of these needs
** loom_init. */
typedef struct loom_probe_record {
    uint32_t struct_size;
    const char *path;
    int32_t quarantined;            /* 1: quarantined (reason says why); 0: passed */
    const char *reason;
    int64_t probed_at;              /* Unix time of the probe */
    uint64_t size;                  /* the file it applies to: size, mtime, FNV-1a 64 of its bytes */
    int64_t mtime_ns;
    uint64_t hash;
} loom_probe_record;
#define LOOM_PROBE_RECORD_INIT LOOM_STRUCT_INIT(loom_probe_record)
LOOM_API const char *loom_probe_cache_path(void);   /* NULL without XDG_CACHE_HOME and HOME */
LOOM_API int64_t loom_probe_record_count(void);
LOOM_API loom_status loom_probe_record_at(int64_t index, loom_probe_record *out);
LOOM_API loom_status loom_probe_forget(const char *pack, int64_t *n_forgotten);

/* Directories searched, in order, and where each came from. */
LOOM_API int64_t loom_search_dir_count(void);
LOOM_API const char *loom_search_dir_at(int64_t index, const char **origin);

/* The configuration in effect: one "NAME=value (source)" line per setting. */
LOOM_API int64_t loom_config_count(void);
LOOM_API const char *loom_config_at(int64_t index);

/* Devices: index 0 is the CPU; then each device of each provider. */
typedef struct loom_device_info {
    uint32_t struct_size;
    loom_dl_device device;
    const char *kind;               /* "cpu", "cuda" */
    const char *description;        /* one line */
} loom_device_info;
#define LOOM_DEVICE_INFO_INIT LOOM_STRUCT_INIT(loom_device_info)
LOOM_API int64_t loom_device_count(void);
LOOM_API loom_status loom_device_at(int64_t index, loom_device_info *out);
/* The CPU topology from hwloc, several lines (or a note that hwloc is absent). */
LOOM_API const char *loom_cpu_topology(void);
LOOM_API int32_t loom_num_threads(void);
/* LOOM_CPU_* bits in force (cpuid, capped by LOOM_CPU_MAX_ISA), and their
** names ("avx2 fma f16c ..."). */
LOOM_API uint64_t loom_cpu_features(void);
LOOM_API const char *loom_cpu_features_text(uint64_t features, char *buf, size_t size);

/* ------------------------------------------------------------------ files */

/* .npy: every dtype above; Fortran order and big-endian data are converted
** to compact little-endian row-major on read. bf16 travels as '|V2' and
** f8e4m3 as '|V1' (NumPy has no such types; view them with ml_dtypes).
** The data must be exactly numel * itemsize bytes: bytes after it are refused. */
LOOM_API loom_status loom_npy_read(loom_tensor **out, const char *path);
LOOM_API loom_status loom_npy_read_memory(loom_tensor **out, const void *data, size_t nbytes,
                                        const char *what);
/* t may live on any device (copied to the host first). */
LOOM_API loom_status loom_npy_write(const char *path, const loom_tensor *t);

/* safetensors: mapped read-only and validated (header JSON, dtypes, offsets,
** sizes, overlaps, coverage of the data area). */
LOOM_API loom_status loom_safetensors_open(loom_safetensors **out, const char *path);
LOOM_API void loom_safetensors_close(loom_safetensors *st);
LOOM_API int64_t loom_safetensors_count(const loom_safetensors *st);
/* Names in strcmp order, whatever order the file lists them in. */
LOOM_API const char *loom_safetensors_name(const loom_safetensors *st, int64_t index);
/* Borrowed tensor over the mapping (read-only data); lives as long as st.
** Data that is misaligned in the file is copied once, at open, into aligned
** memory, so readers may use typed pointers. */
LOOM_API loom_status loom_safetensors_get(const loom_safetensors *st, const char *name,
                                        const loom_tensor **out);
/* Write tensors (host or device) with these names, in this order. */
LOOM_API loom_status loom_safetensors_write(const char *path, const char *const *names,
                                          const loom_tensor *const *tensors, int64_t count);

#ifdef __cplusplus
}
#endif
#endif /* LOOM_LOOM_H */
