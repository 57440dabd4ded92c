/*
** loom/plugin.h - the whole contract between the loom core and an operator pack.
**
** An operator pack is a shared object that exports exactly one symbol,
** loom_plugin_entry (see LOOM_PLUGIN_DEFINE at the end of this file). It never
** links against libloom: every service of the core reaches it through the
** loom_host_api table handed to its init function. This header is
** self-contained (C11 + <stddef.h>/<stdint.h>) so a pack builds with nothing
** but the `loom-plugin` pkg-config file.
**
** ABI rules (ABI major 1):
**  - The descriptor returned by loom_plugin_entry starts with a frozen prefix:
**    magic, ABI major, the minor the pack was built with, the minor it
**    requires. The core checks these before it reads anything else.
**  - Every struct that crosses the boundary and is passed by pointer starts
**    with `uint32_t struct_size`, grows only at its end, and is frozen per
**    released minor by the _Static_asserts below. A reader touches a member
**    only when LOOM_HAS_MEMBER says the writer knew it.
**  - Element types of arrays (loom_arg_def, loom_attr_def, loom_attr_value,
**    loom_tensor) are frozen for the whole major: arrays have no per-element
**    size to step with.
**  - Errors cross as loom_status codes plus a message stored by the core
**    (host->fail); never as exceptions or longjmp.
**  - Tensors are layout-compatible with DLPack's DLTensor.
*/
#ifndef LOOM_PLUGIN_H
#define LOOM_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ version */

#define LOOM_ABI_MAJOR 1
#define LOOM_ABI_MINOR 0
#define LOOM_PLUGIN_MAGIC 0x4D4F4F4Cu        /* "LOOM" read as little-endian */
#define LOOM_PLUGIN_ENTRY_SYMBOL "loom_plugin_entry"

/* A pack that calls nothing newer than minor N may define LOOM_TARGET_ABI_MINOR
** to N before including this header: it then loads into every core >= 1.N. */
#ifndef LOOM_TARGET_ABI_MINOR
#define LOOM_TARGET_ABI_MINOR 0
#endif

#if defined(__GNUC__)
#  define LOOM_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#  define LOOM_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#  define LOOM_PRINTF(fmt, args)
#  define LOOM_PLUGIN_EXPORT
#endif

/* True when the struct at p, written by a party that set p->struct_size,
** contains member m of type T: read m only then. */
#define LOOM_HAS_MEMBER(p, T, m) \
    ((p)->struct_size >= offsetof(T, m) + sizeof(((const T *)0)->m))

/* ------------------------------------------------------------------- status */

/* Negative is an error, zero is success. Callers branch on the code; the
** message (loom_last_error() on the host side) carries the detail. Append new
** codes at the end only. */
typedef enum loom_status {
    LOOM_OK        =  0,  /* success */
    LOOM_EINVAL    = -1,  /* an argument is invalid: shape, dtype, attribute, NULL */
    LOOM_ENOMEM    = -2,  /* an allocation failed */
    LOOM_ENOTSUP   = -3,  /* no kernel supports this call (dtype, layout, device) */
    LOOM_ENOENT    = -4,  /* no such operator, pack, object class or file */
    LOOM_EABI      = -5,  /* pack built against an incompatible ABI */
    LOOM_ENODEV    = -6,  /* the device a pack or call needs is not present */
    LOOM_EBUSY     = -7,  /* object still in use */
    LOOM_EDEVICE   = -8,  /* a backend library (CUDA, oneDNN, ...) reported an error */
    LOOM_EFORMAT   = -9,  /* a file is truncated, corrupt or lies about its contents */
    LOOM_EIO       = -10, /* an operating-system I/O call failed */
    LOOM_ECONFLICT = -11, /* schema clash or duplicate registration */
    LOOM_ESTRICT   = -12, /* LOOM_STRICT=1 forbade a fallback to another backend */
    LOOM_EINTERNAL = -13  /* a broken invariant inside loom: please report */
} loom_status;
#define LOOM_STATUS_MIN LOOM_EINTERNAL

/* ------------------------------------------------------------------- dtypes */

/* loom's own dtype index: a row in every dtype table, a bit in kernel masks.
** 0 is never a valid dtype. Tensors carry the DLPack code/bits/lanes triple;
** loom_dtype_from_dl() maps it here. Append only. */
typedef enum loom_dtype {
    LOOM_DTYPE_INVALID = 0,
    LOOM_DTYPE_F32,
    LOOM_DTYPE_F64,
    LOOM_DTYPE_F16,
    LOOM_DTYPE_BF16,
    LOOM_DTYPE_F8E4M3,    /* OCP e4m3fn (torch.float8_e4m3fn): bias 7, no inf, 0x7f/0xff NaN */
    LOOM_DTYPE_I8,
    LOOM_DTYPE_U8,
    LOOM_DTYPE_I16,
    LOOM_DTYPE_I32,
    LOOM_DTYPE_I64,
    LOOM_DTYPE_BOOL,
    LOOM_DTYPE_C64,
    LOOM_DTYPE_C128,
    LOOM_DTYPE_COUNT
} loom_dtype;

#define LOOM_DTYPE_BIT(d) (UINT64_C(1) << (unsigned)(d))
#define LOOM_DTYPES_FLOAT (LOOM_DTYPE_BIT(LOOM_DTYPE_F32) | LOOM_DTYPE_BIT(LOOM_DTYPE_F64) | \
                           LOOM_DTYPE_BIT(LOOM_DTYPE_F16) | LOOM_DTYPE_BIT(LOOM_DTYPE_BF16))
#define LOOM_DTYPES_ALL   ((LOOM_DTYPE_BIT(LOOM_DTYPE_COUNT) - 1) & ~LOOM_DTYPE_BIT(LOOM_DTYPE_INVALID))

/* ---------------------------------------------------- tensors (DLPack ABI) */

/* DLPack's DLDeviceType values. */
enum {
    LOOM_DEVICE_CPU          = 1,
    LOOM_DEVICE_CUDA         = 2,
    LOOM_DEVICE_CUDA_HOST    = 3,   /* pinned host memory */
    LOOM_DEVICE_CUDA_MANAGED = 13   /* unified memory */
};

/* DLPack's DLDataTypeCode values used by loom. */
enum {
    LOOM_DL_INT = 0, LOOM_DL_UINT = 1, LOOM_DL_FLOAT = 2, LOOM_DL_BFLOAT = 4,
    LOOM_DL_COMPLEX = 5, LOOM_DL_BOOL = 6, LOOM_DL_FLOAT8_E4M3FN = 10
};

typedef struct loom_dl_device { int32_t device_type; int32_t device_id; } loom_dl_device;
typedef struct loom_dl_dtype { uint8_t code; uint8_t bits; uint16_t lanes; } loom_dl_dtype;

#define LOOM_MAX_NDIM 12

/* Layout-identical to DLPack's DLTensor, so a DLTensor * can be passed where
** a loom_tensor * is expected and back. strides are in elements; NULL means
** compact row-major. The data start at (char *)data + byte_offset. */
typedef struct loom_tensor {
    void          *data;
    loom_dl_device device;
    int32_t        ndim;
    loom_dl_dtype  dtype;
    int64_t       *shape;
    int64_t       *strides;
    uint64_t       byte_offset;
} loom_tensor;

/* Layout-identical to DLPack 1.x DLManagedTensorVersioned. */
typedef struct loom_dlpack_version { uint32_t major; uint32_t minor; } loom_dlpack_version;
typedef struct loom_dlpack_managed {
    loom_dlpack_version version;
    void   *manager_ctx;
    void  (*deleter)(struct loom_dlpack_managed *self);
    uint64_t flags;                   /* LOOM_DLPACK_FLAG_* */
    loom_tensor dl_tensor;
} loom_dlpack_managed;
#define LOOM_DLPACK_MAJOR 1
#define LOOM_DLPACK_MINOR 1
#define LOOM_DLPACK_FLAG_READ_ONLY (UINT64_C(1) << 0)
#define LOOM_DLPACK_FLAG_IS_COPIED (UINT64_C(1) << 1)

_Static_assert(sizeof(loom_tensor) == 48, "loom_tensor must match DLTensor");
_Static_assert(offsetof(loom_tensor, byte_offset) == 40, "loom_tensor must match DLTensor");
_Static_assert(offsetof(loom_dlpack_managed, dl_tensor) == 32, "must match DLManagedTensorVersioned");

/* Map a DLPack dtype triple to loom's index; LOOM_DTYPE_INVALID if loom has none. */
static inline loom_dtype loom_dtype_from_dl(loom_dl_dtype t)
{
    if (t.lanes != 1)
        return LOOM_DTYPE_INVALID;
    switch (t.code) {
    case LOOM_DL_FLOAT:
        return t.bits == 32 ? LOOM_DTYPE_F32 : t.bits == 64 ? LOOM_DTYPE_F64
             : t.bits == 16 ? LOOM_DTYPE_F16 : LOOM_DTYPE_INVALID;
    case LOOM_DL_BFLOAT:  return t.bits == 16 ? LOOM_DTYPE_BF16 : LOOM_DTYPE_INVALID;
    case LOOM_DL_FLOAT8_E4M3FN: return t.bits == 8 ? LOOM_DTYPE_F8E4M3 : LOOM_DTYPE_INVALID;
    case LOOM_DL_INT:
        return t.bits == 8 ? LOOM_DTYPE_I8 : t.bits == 16 ? LOOM_DTYPE_I16
             : t.bits == 32 ? LOOM_DTYPE_I32 : t.bits == 64 ? LOOM_DTYPE_I64 : LOOM_DTYPE_INVALID;
    case LOOM_DL_UINT:    return t.bits == 8 ? LOOM_DTYPE_U8 : LOOM_DTYPE_INVALID;
    case LOOM_DL_BOOL:    return t.bits == 8 ? LOOM_DTYPE_BOOL : LOOM_DTYPE_INVALID;
    case LOOM_DL_COMPLEX:
        return t.bits == 64 ? LOOM_DTYPE_C64 : t.bits == 128 ? LOOM_DTYPE_C128 : LOOM_DTYPE_INVALID;
    default:              return LOOM_DTYPE_INVALID;
    }
}

static inline loom_dtype loom_tensor_dtype_of(const loom_tensor *t) { return loom_dtype_from_dl(t->dtype); }

/* Number of elements (1 for a scalar, ndim == 0). A tensor with a zero
** dimension has none, whatever its other dimensions (which are then allowed
** to be huge: the product is never formed, so it cannot overflow). */
static inline int64_t loom_numel(const loom_tensor *t)
{
    uint64_t n = 1;
    for (int32_t i = 0; i < t->ndim; i++)
        if (t->shape[i] == 0)
            return 0;
    for (int32_t i = 0; i < t->ndim; i++)
        n *= (uint64_t)t->shape[i];   /* unsigned: wraps instead of UB on a tensor no check has seen */
    return (int64_t)n;
}

/* True when the tensor is compact row-major. The one rule of loom (and
** torch's): size-1 dims may have any stride, and a tensor with no elements
** is contiguous whatever its strides. */
static inline int loom_is_contiguous(const loom_tensor *t)
{
    uint64_t expect = 1;
    if (t->strides == NULL)
        return 1;
    for (int32_t i = 0; i < t->ndim; i++)
        if (t->shape[i] == 0)
            return 1;
    for (int32_t i = t->ndim - 1; i >= 0; i--) {
        if (t->shape[i] != 1 && (uint64_t)t->strides[i] != expect)
            return 0;
        expect *= (uint64_t)t->shape[i];
    }
    return 1;
}

/* Address of the first element. */
static inline void *loom_data(const loom_tensor *t) { return (char *)t->data + t->byte_offset; }

/* ------------------------------------------------------------------ schemas */

typedef enum loom_attr_type {
    LOOM_ATTR_INT = 1,     /* int64_t            */
    LOOM_ATTR_FLOAT,       /* double             */
    LOOM_ATTR_BOOL,        /* int32_t 0/1        */
    LOOM_ATTR_STRING,      /* NUL-terminated     */
    LOOM_ATTR_INTS,        /* int64_t[count]     */
    LOOM_ATTR_FLOATS,      /* double[count]      */
    LOOM_ATTR_TENSOR       /* const loom_tensor *  */
} loom_attr_type;

/* A resolved attribute as a kernel sees it. Frozen for ABI major 1. */
typedef struct loom_attr_value {
    int32_t type;          /* loom_attr_type */
    int32_t is_set;        /* 0: absent optional attribute with no default */
    int64_t count;         /* elements of ints/floats; strlen of s */
    union {
        int64_t i;
        double f;
        int32_t b;
        const char *s;
        const int64_t *ints;
        const double *floats;
        const loom_tensor *t;
    } u;
} loom_attr_value;

#define LOOM_ARG_OPTIONAL 0x1u   /* an input that may be absent (NULL in the call) */

/* An input or output of an op. Frozen for ABI major 1. */
typedef struct loom_arg_def {
    const char *name;      /* the reference library's argument name */
    uint64_t dtypes;       /* LOOM_DTYPE_BIT mask of dtypes the op defines; 0 = any */
    uint32_t flags;        /* LOOM_ARG_* */
    int32_t  ndim;         /* required rank, -1 = any */
    const char *doc;
} loom_arg_def;

#define LOOM_ATTR_REQUIRED 0x1u
/* Value constraints, for int, float, ints and floats attributes. The core
** checks them on every call (and object create) before a kernel runs, and
** on the default when the pack registers; a violation fails the call with
** LOOM_EINVAL naming the op, the attribute and the value. Kernels may then
** rely on them. A core older than the pack ignores the bits, so a pack that
** must not see such values keeps its own check as well. */
#define LOOM_ATTR_FINITE   0x2u  /* not NaN and not +-inf */
#define LOOM_ATTR_POSITIVE 0x4u  /* > 0 (and not NaN) */
#define LOOM_ATTR_NONNEG   0x8u  /* >= 0 (and not NaN) */
#define LOOM_ATTR_FLAGS_KNOWN 0xFu  /* every LOOM_ATTR_* bit this header defines */

/* An attribute of an op or object class. Frozen for ABI major 1. The default
** is used when the caller gives none; with neither, is_set stays 0. */
typedef struct loom_attr_def {
    const char *name;
    int32_t type;          /* loom_attr_type */
    uint32_t flags;        /* LOOM_ATTR_* */
    loom_attr_value dflt;  /* default; .is_set = 0 for none */
    const char *doc;
} loom_attr_def;

struct loom_call;

/* An operator definition: `domain.op` plus typed inputs, outputs and
** attributes. The core hashes every data member; two packs that disagree on
** any of them for the same name and version are refused, naming both. */
typedef struct loom_op_schema {
    uint32_t struct_size;
    const char *name;               /* "domain.op" */
    uint32_t version;               /* op version, starts at 1 */
    const char *doc;                /* one line */
    uint32_t n_inputs;
    const loom_arg_def *inputs;
    uint32_t n_outputs;
    const loom_arg_def *outputs;
    uint32_t n_attrs;
    const loom_attr_def *attrs;
    /* Name of the object class this op is a method of, or NULL for a
    ** stateless op. A method is called with an object of that class. */
    const char *object_class;
    /* Optional: work done by a call, for `loom bench` GFLOP/s and GB/s.
    ** Either out-pointer may be left untouched (0 = not declared). */
    void (*cost)(const struct loom_call *call, double *flops, double *bytes);
} loom_op_schema;

/* ---------------------------------------------------------------- execution */

struct loom_host_api;

/* Where and how a call runs. Filled by the core; kernels only read it. */
typedef struct loom_exec_ctx {
    uint32_t struct_size;
    loom_dl_device device;          /* the device of the call's tensors */
    void *stream;                   /* cudaStream_t for CUDA calls, NULL = default stream */
    int32_t n_threads;              /* CPU thread budget for parallel_for */
    int32_t reserved;
    const struct loom_host_api *host;
    void *core;                     /* core-private: scratch arena and bookkeeping */
} loom_exec_ctx;

/* One operator call as a kernel sees it. Inputs and attributes are in schema
** order and borrowed for the duration of run(); outputs are obtained with
** host->alloc_output (which returns the caller's preallocated tensor when
** there is one). */
typedef struct loom_call {
    uint32_t struct_size;
    const loom_op_schema *schema;           /* the definition registered first */
    int32_t n_inputs;
    const loom_tensor *const *inputs;       /* NULL entries: absent optional inputs */
    int32_t n_outputs;
    loom_tensor **outputs;                  /* set by alloc_output */
    int32_t n_attrs;
    const loom_attr_value *attrs;           /* every attribute of the schema, resolved */
    void *object;                           /* state of the object for methods, else NULL */
    loom_exec_ctx *ctx;
} loom_call;

/* A kernel: one implementation of one op for one backend.
** dtypes: every present input's dtype must be in this mask (0 = any).
** supports (optional): finer check; on refusal return LOOM_ENOTSUP and write
**   a short reason into why[why_size]; the reason appears in LOOM_VERBOSE=2.
** run: compute; return LOOM_OK or host->fail(...). */
typedef struct loom_kernel_desc {
    uint32_t struct_size;
    const loom_op_schema *schema;           /* must equal the op's definition */
    const char *backend;                    /* "cpu", "onednn", "cuda", ... */
    int32_t device_type;                    /* LOOM_DEVICE_* the kernel runs on */
    int32_t priority;                       /* tie-break inside one backend, higher wins */
    const char *impl;                       /* implementation name, e.g. "cpu:avx2-blocked" */
    uint64_t dtypes;
    loom_status (*supports)(const loom_call *call, char *why, size_t why_size);
    loom_status (*run)(loom_call *call);
} loom_kernel_desc;

/* Arguments of an object's create(): resolved attributes (schema order of
** the class) and the weights file if the host gave one. */
struct loom_safetensors;
typedef struct loom_object_args {
    uint32_t struct_size;
    const char *class_name;
    int32_t n_attrs;
    const loom_attr_value *attrs;
    const struct loom_safetensors *weights; /* NULL when none was given */
    loom_exec_ctx *ctx;
} loom_object_args;

/* A class of stateful objects (models, tokenizers, tables, buffers...).
** create returns pack-private state in *state_out; destroy releases it. The
** core counts live objects per pack and refuses to unload a pack that has any.
** Only kernels of the pack that made an object, or of a pack of its family,
** receive its state: packs named P and P-<suffix> (say fbgemm and
** fbgemm-cuda) are one family, built from one source tree, and must agree on
** the state's layout. */
typedef struct loom_object_class {
    uint32_t struct_size;
    const char *name;                       /* "domain.class" */
    const char *doc;
    uint32_t n_attrs;
    const loom_attr_def *attrs;
    loom_status (*create)(const loom_object_args *args, void **state_out);
    void (*destroy)(void *state);
} loom_object_class;

/* A device provider: how the core allocates, copies and synchronises on a
** device type it does not know itself (CUDA). Registered by a pack. */
typedef struct loom_device_provider {
    uint32_t struct_size;
    int32_t device_type;                    /* LOOM_DEVICE_* */
    const char *name;                       /* "cuda" */
    int32_t (*count)(void);                 /* number of usable devices; 0 = none */
    /* One line per device: name, memory, capability. */
    loom_status (*describe)(int32_t device_id, char *buf, size_t buf_size);
    void *(*alloc)(int32_t device_id, size_t nbytes);
    void (*free)(int32_t device_id, void *ptr);
    /* Copy nbytes; kinds are the device types of dst and src (one may be CPU).
    ** Synchronous with respect to the host. */
    loom_status (*copy)(void *dst, loom_dl_device dst_dev, const void *src,
                      loom_dl_device src_dev, size_t nbytes);
    loom_status (*synchronize)(int32_t device_id, void *stream);
} loom_device_provider;

/* ---------------------------------------------------------------- host API */

typedef struct loom_registrar loom_registrar;   /* opaque: one per pack load */
typedef struct loom_safetensors loom_safetensors; /* opaque: a mapped weights file */

enum { LOOM_LOG_ERROR = 0, LOOM_LOG_WARN = 1, LOOM_LOG_INFO = 2, LOOM_LOG_DEBUG = 3 };

typedef void (*loom_range_fn)(void *user, int64_t begin, int64_t end, int32_t thread_index);

/* The core's services. Handed to the pack's init; valid until the core shuts
** down. Members are appended per minor, never moved. */
typedef struct loom_host_api {
    uint32_t struct_size;
    uint16_t abi_major, abi_minor;

    /* -- errors and logs -- */
    /* Store a message in the core's per-thread error slot and return status,
    ** so a kernel writes: return host->fail(LOOM_EINVAL, "...", ...). The
    ** core prefixes the op or pack that failed. */
    loom_status (*fail)(loom_status status, const char *fmt, ...) LOOM_PRINTF(2, 3);
    void (*log)(int level, const char *fmt, ...) LOOM_PRINTF(2, 3);

    /* -- registration: only inside the pack's init -- */
    loom_status (*define_op)(loom_registrar *reg, const loom_op_schema *schema);
    loom_status (*register_kernel)(loom_registrar *reg, const loom_kernel_desc *kernel);
    loom_status (*register_object_class)(loom_registrar *reg, const loom_object_class *cls);
    loom_status (*register_device)(loom_registrar *reg, const loom_device_provider *provider);

    /* -- memory -- */
    /* Aligned memory on a device (alignment is honoured on CPU; device
    ** allocators give at least 256). Release with free on the same device. */
    void *(*alloc)(loom_dl_device device, size_t nbytes, size_t alignment);
    void (*free)(loom_dl_device device, void *ptr);
    /* Scratch memory on the call's device, 64-byte aligned, released when
    ** the call returns. NULL (with the error set) when out of memory. */
    void *(*scratch)(loom_exec_ctx *ctx, size_t nbytes);
    /* Output `index` of the call with this dtype and shape, on the call's
    ** device. When the caller supplied that output, its dtype and shape are
    ** checked and it is returned; else a new compact tensor is allocated.
    ** The core owns it; on failure the core frees every output. */
    loom_status (*alloc_output)(loom_call *call, int32_t index, loom_dtype dtype,
                              int32_t ndim, const int64_t *shape, loom_tensor **out);

    /* -- threads -- */
    /* Run fn over [0, n) split in chunks of at least `grain` on the core's
    ** pool, within ctx->n_threads; returns when all chunks are done. Safe to
    ** call from any thread; a nested or concurrent call runs inline. */
    loom_status (*parallel_for)(loom_exec_ctx *ctx, int64_t n, int64_t grain,
                              loom_range_fn fn, void *user);

    /* -- files -- */
    /* Map a whole file read-only. *out points at its bytes; release with unmap. */
    loom_status (*map_file)(const char *path, const void **data_out, size_t *nbytes_out);
    void (*unmap_file)(const void *data, size_t nbytes);
    /* Tensors of a validated safetensors file, by name. The tensor (and its
    ** data in the mapping) is borrowed from st and lives as long as it. */
    loom_status (*safetensors_get)(const loom_safetensors *st, const char *name,
                                 const loom_tensor **out);
    int64_t (*safetensors_count)(const loom_safetensors *st);
    const char *(*safetensors_name)(const loom_safetensors *st, int64_t index);

    /* -- dtypes -- */
    size_t (*dtype_size)(loom_dtype dtype);           /* bytes per element */
    const char *(*dtype_name)(loom_dtype dtype);       /* "f32", "bf16", ... */
    loom_dl_dtype (*dtype_to_dl)(loom_dtype dtype);

    /* -- extensions -- */
    /* A named, versioned extension offered by the core or by another pack
    ** ("loom.cuda.stream"...), or NULL. */
    void *(*get_extension)(const char *name, uint32_t version);
    /* ---- end of ABI 1.0: append below, never reorder what is above ---- */
} loom_host_api;

/* Freeze ABI 1.0 of the host table: the last member of minor 0 sits here. */
_Static_assert(offsetof(loom_host_api, get_extension) == 8 + 19 * sizeof(void *),
               "loom_host_api 1.0 layout is frozen");

/* ------------------------------------------------------------ pack entry */

/* What loom_plugin_entry returns. The first five members are the frozen
** prefix of ABI major 1: the core reads them before anything else. */
typedef struct loom_plugin_desc {
    uint32_t magic;                         /* LOOM_PLUGIN_MAGIC */
    uint16_t abi_major;                     /* LOOM_ABI_MAJOR */
    uint16_t abi_minor_built;               /* LOOM_ABI_MINOR of the headers used */
    uint16_t abi_minor_required;            /* newest minor the pack calls into */
    uint16_t reserved;
    uint32_t struct_size;
    const char *name;                       /* pack name, e.g. "core", "vision" */
    const char *version;                    /* pack version string */
    const char *description;
    /* Register ops, kernels, classes and devices. Transactional: on failure
    ** the core discards everything this call registered. */
    loom_status (*init)(const loom_host_api *host, loom_registrar *reg);
    /* Optional: release pack-global resources; called once at core shutdown. */
    void (*fini)(void);
} loom_plugin_desc;

_Static_assert(offsetof(loom_plugin_desc, struct_size) == 12, "frozen prefix");
_Static_assert(offsetof(loom_plugin_desc, fini) == 48, "loom_plugin_desc 1.0 is frozen");

typedef const loom_plugin_desc *(*loom_plugin_entry_fn)(uint16_t core_abi_major,
                                                    uint16_t core_abi_minor);

/* Define the one exported entry of a pack:
**   LOOM_PLUGIN_DEFINE("vision", "0.1.0", "torchvision operators", vision_init, NULL)
** The entry returns NULL to a core of another ABI major. */
#define LOOM_PLUGIN_DEFINE(NAME, VERSION, DESCRIPTION, INIT, FINI)                    \
    LOOM_PLUGIN_EXPORT const loom_plugin_desc *loom_plugin_entry(uint16_t core_major,  \
                                                             uint16_t core_minor);   \
    LOOM_PLUGIN_EXPORT const loom_plugin_desc *loom_plugin_entry(uint16_t core_major,  \
                                                             uint16_t core_minor)    \
    {                                                                               \
        static const loom_plugin_desc desc = {                                       \
            .magic = LOOM_PLUGIN_MAGIC, .abi_major = LOOM_ABI_MAJOR,                  \
            .abi_minor_built = LOOM_ABI_MINOR,                                       \
            .abi_minor_required = LOOM_TARGET_ABI_MINOR,                             \
            .struct_size = sizeof(loom_plugin_desc),                                 \
            .name = NAME, .version = VERSION, .description = DESCRIPTION,            \
            .init = INIT, .fini = FINI,                                              \
        };                                                                          \
        (void)core_minor;                                                           \
        return core_major == LOOM_ABI_MAJOR ? &desc : NULL;                          \
    }

/* Attribute default initialisers for schema tables. */
#define LOOM_DEFAULT_NONE        { .type = 0, .is_set = 0, .count = 0, .u = { .i = 0 } }
#define LOOM_DEFAULT_INT(v)      { .type = LOOM_ATTR_INT, .is_set = 1, .count = 1, .u = { .i = (v) } }
#define LOOM_DEFAULT_FLOAT(v)    { .type = LOOM_ATTR_FLOAT, .is_set = 1, .count = 1, .u = { .f = (v) } }
#define LOOM_DEFAULT_BOOL(v)     { .type = LOOM_ATTR_BOOL, .is_set = 1, .count = 1, .u = { .b = (v) } }
#define LOOM_DEFAULT_STRING(v)   { .type = LOOM_ATTR_STRING, .is_set = 1, .count = sizeof(v) - 1, .u = { .s = (v) } }

#ifdef __cplusplus
}
#endif
#endif /* LOOM_PLUGIN_H */
