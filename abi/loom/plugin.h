/* SPDX-License-Identifier: BSD-3-Clause */
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
** ABI rules (ABI major 1; docs/abi.md has the history and the rules of a minor):
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
#define LOOM_ABI_MINOR 6
#define LOOM_PLUGIN_MAGIC 0x4D4F4F4Cu        /* "LOOM" read as little-endian */
#define LOOM_PLUGIN_ENTRY_SYMBOL "loom_plugin_entry"

/* A pack that calls nothing newer than minor N may define LOOM_TARGET_ABI_MINOR
** to N before including this header: it then loads into every core >= 1.N. */
#ifndef LOOM_TARGET_ABI_MINOR
#define LOOM_TARGET_ABI_MINOR 0
#endif

/* The header compiles as C11 and as C++11/17/20. */
#ifdef __cplusplus
#  define LOOM_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#  define LOOM_EXTERN_C extern "C"
#else
#  define LOOM_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#  define LOOM_EXTERN_C
#endif

#if defined(__GNUC__)
#  define LOOM_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#  define LOOM_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#  define LOOM_PRINTF(fmt, args)
#  define LOOM_PLUGIN_EXPORT
#endif

/* ------------------------------------------------------------------- limits */

/* Every fixed limit of the core, in one place. A pack or call that hits one
** is refused with a message naming the limit; nothing is truncated. */
#define LOOM_MAX_NDIM               12    /* dimensions of a tensor */
#define LOOM_MAX_ARGS               32    /* inputs, and outputs, of an op */
#define LOOM_MAX_ATTRS              64    /* attributes of an op or object class */
#define LOOM_MAX_KERNELS            16    /* kernels of one op, all packs together */
#define LOOM_MAX_NAME               128   /* bytes of an op, class, argument, attribute or backend name */
#define LOOM_MAX_ATTR_COUNT         65536 /* elements of a list or string attribute default */
#define LOOM_MAX_PACK_PROVIDERS     4     /* device providers one pack registers */
#define LOOM_MAX_DEVICE_PROVIDERS   8     /* device providers in the core */
#define LOOM_MAX_DEVICES_PER_KIND   16    /* devices one provider may report */
#define LOOM_MAX_SCRATCH_BLOCKS     16    /* oversize scratch blocks of one call */
#define LOOM_MAX_SCRATCH_ARENA      (1u << 30) /* bytes a thread's scratch arena grows to */
#define LOOM_MAX_NESTING            16    /* depth of op calls made by kernels (op_call) */
#define LOOM_MAX_BACKEND_RULES      32    /* per-op rules in LOOM_BACKENDS */

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
    LOOM_DTYPE_U16,       /* 1.4: torch.uint16 (16-bit PNG), npy u2, safetensors U16 */
    LOOM_DTYPE_U32,       /* 1.4: torch.uint32, npy u4, safetensors U32 */
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

LOOM_STATIC_ASSERT(sizeof(loom_tensor) == 48, "loom_tensor must match DLTensor");
LOOM_STATIC_ASSERT(offsetof(loom_tensor, byte_offset) == 40, "loom_tensor must match DLTensor");
LOOM_STATIC_ASSERT(offsetof(loom_dlpack_managed, dl_tensor) == 32, "must match DLManagedTensorVersioned");

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
    case LOOM_DL_UINT:
        return t.bits == 8 ? LOOM_DTYPE_U8 : t.bits == 16 ? LOOM_DTYPE_U16
             : t.bits == 32 ? LOOM_DTYPE_U32 : LOOM_DTYPE_INVALID;
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
/* Jagged data (ABI 1.1), loom's one convention for strings, token ids and
** ragged results: a values tensor flagged LOOM_ARG_JAGGED, immediately
** followed by its i64 offsets tensor [B+1] flagged LOOM_ARG_OFFSETS and named
** "<values>_offsets". Row b is values[offsets[b]:offsets[b+1]] along dim 0;
** strings are u8 UTF-8 values. The core checks the pair's dtypes and ranks.
** Strings: a batch of B strings is the u8 values of their bytes, concatenated
** with no separator or terminator, and offsets [B+1] in bytes (string b may
** hold any byte, NUL included; a pack that needs UTF-8 checks it and names
** the row and byte of a malformed sequence). The CLI's --lines NAME=FILE.txt
** makes NAME and NAME_offsets from a text file, one string per line.
** Outputs that vary per row follow the same form: values plus i64 offsets
** [B+1]; several value outputs with the same rows (token ids and their
** character spans, say) may share one unflagged i64 [B+1] output named
** "offsets", and an output not asked for is then an empty tensor. */
#define LOOM_ARG_JAGGED  0x2u
#define LOOM_ARG_OFFSETS 0x4u
/* "Same dtype as input k" (ABI 1.1): for an output, the core checks that a
** supplied output (and, after run, the produced one) has input k's dtype;
** for an input, that it matches input k (k before it). */
#define LOOM_ARG_SAME_DTYPE_AS(k)    ((((uint32_t)(k) + 1u) & 0xFFu) << 8)
#define LOOM_ARG_SAME_DTYPE_INDEX(f) ((int32_t)(((f) >> 8) & 0xFFu) - 1)   /* -1: none */
#define LOOM_ARG_FLAGS_KNOWN (0x7u | 0xFF00u)  /* every LOOM_ARG_* bit this header defines */

/* An input or output of an op. Frozen for ABI major 1. */
typedef struct loom_arg_def {
    const char *name;      /* the reference library's argument name */
    uint64_t dtypes;       /* LOOM_DTYPE_BIT mask of dtypes the op defines; 0 = any */
    uint32_t flags;        /* LOOM_ARG_* */
    int32_t  ndim;         /* required rank, -1 = any */
    const char *doc;
} loom_arg_def;

/* The allowed values of one string attribute (ABI 1.1). Frozen for the major. */
typedef struct loom_attr_choices {
    uint32_t attr;                   /* index into the attribute table */
    const char *const *values;       /* NULL-terminated */
} loom_attr_choices;

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
** attributes. The core hashes every data member. The first pack to define
** a name (in search order) holds it. A later pack that defines it
** differently loses that definition and its kernels for the op, while the
** rest of the pack loads; its scan entry names both packs and the first
** difference. A pack that defines one name twice differently is refused. */
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
    /* ---- ABI 1.1 ---- */
    /* Enumerated string attributes: for each listed attribute, the values it
    ** may take. The core refuses any other value by name, and `loom info`
    ** and the CLI show the list. */
    uint32_t n_choices;
    const struct loom_attr_choices *choices;
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
    /* ---- ABI 1.1 ---- */
    uint64_t cpu_features;          /* LOOM_CPU_* bits, capped by LOOM_CPU_MAX_ISA */
    int32_t depth;                  /* 0 for a host's call, 1 + the caller's for op_call */
    int32_t reserved2;
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
    /* ---- ABI 1.1 ---- */
    const struct loom_kernel_desc *kernel;  /* the kernel being run (its `user` pointer) */
    void *plan_state;                       /* what the kernel's prepare() made, for planned calls */
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
    /* ---- ABI 1.1 ---- */
    /* The kernel's own data, seen as call->kernel->user: one run() can serve
    ** several ops or variants without comparing names. */
    const void *user;
    /* Optional: work done once per plan (loom_plan_create), e.g. build a
    ** oneDNN primitive for these shapes. call has inputs whose data may be
    ** NULL (descriptions only) and no outputs. The state reaches run() as
    ** call->plan_state and is released with release() when the plan is freed. */
    loom_status (*prepare)(const loom_call *call, void **plan_state);
    void (*release)(void *plan_state);
    /* ---- ABI 1.2 ---- */
    /* LOOM_KERNEL_* bits. Without LOOM_KERNEL_STRIDED (and for every 1.0 and
    ** 1.1 kernel) run() sees only compact host inputs: the core copies a
    ** strided host input into a compact scratch tensor for the call
    ** (LOOM_VERBOSE=2 logs it; LOOM_STRICT=1 refuses it instead), and
    ** refuses a strided device input naming it. */
    uint32_t flags;
} loom_kernel_desc;

/* run() reads each input through its strides (any layout, including zero
** strides of a broadcast view): the core hands views through unchanged. */
#define LOOM_KERNEL_STRIDED 0x1u
/* The bits this header knows; the core refuses a kernel with any other. */
#define LOOM_KERNEL_FLAGS_KNOWN 0x1u

/* Arguments of an object's create(): resolved attributes (schema order of
** the class) and the weights file if the host gave one. */
struct loom_safetensors;
/* A named file handed to an object's create (ABI 1.1): a vocabulary, a
** lexicon, an ARPA model, a media URL, a replay-buffer directory. Frozen for
** the major. */
typedef struct loom_named_file {
    const char *name;                       /* "vocab", "lexicon", "lm", "src", ... */
    const char *path;
} loom_named_file;

/* A tensor under a name: the weights of an object made from memory
** (loom_object_options.tensors, host->object_create) instead of a
** safetensors file. ABI 1.3; frozen for the major. */
typedef struct loom_named_tensor {
    const char *name;                       /* "weight", "embedding_bags.t0.weight", ... */
    const loom_tensor *tensor;              /* a CPU tensor */
} loom_named_tensor;

typedef struct loom_object_args {
    uint32_t struct_size;
    const char *class_name;
    int32_t n_attrs;
    const loom_attr_value *attrs;
    const struct loom_safetensors *weights; /* NULL when none was given */
    loom_exec_ctx *ctx;
    /* ---- ABI 1.1 ---- */
    loom_dl_device device;                  /* where the host asked for the object */
    int32_t n_files;
    const loom_named_file *files;           /* NULL when none */
    const char *callbacks_name;             /* what the callback table is, e.g. "loom.read.v1" */
    const void *callbacks;                  /* the host's table (a read callback...), or NULL */
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
    /* ---- ABI 1.1 ---- */
    uint32_t n_choices;                     /* enumerated string attributes, as in loom_op_schema */
    const struct loom_attr_choices *choices;
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

/* ------------------------------------------------------ composition (1.1) */

typedef struct loom_op loom_op;                 /* an op handle (loom_op_find / host->op_find) */
typedef struct loom_object loom_object;         /* an object handle */
typedef struct loom_plan loom_plan;             /* a prepared call */

/* One attribute of a nested call, by name. Frozen for the major. */
typedef struct loom_named_attr {
    const char *name;
    loom_attr_value value;                      /* type and is_set = 1; lists and strings borrowed */
} loom_named_attr;

/* A call made by a kernel or object method through host->op_call. It is
** dispatched exactly as a host's call (device of the tensors, LOOM_BACKENDS,
** dtype masks, supports()) and inherits the caller's context: stream, thread
** budget, CPU features and scratch arena (the nested call's scratch is
** released when it returns). An output entry that is NULL receives a new
** tensor the caller frees with host->tensor_free; a non-NULL entry (e.g. a
** model's activation buffer) is written in place after its checks. */
typedef struct loom_op_call {
    uint32_t struct_size;
    const loom_op *op;
    int32_t n_inputs;
    const loom_tensor *const *inputs;
    int32_t n_outputs;
    loom_tensor **outputs;
    int32_t n_attrs;
    const loom_named_attr *attrs;
    const char *backend;                        /* force one backend, NULL = policy */
    loom_object *object;                        /* for methods of an object class, else NULL */
} loom_op_call;

/* An object a kernel or method makes through host->object_create (ABI 1.3):
** a model composed of other packs' objects (a core.linear per dense layer,
** an fbgemm.tbe per table group). The class sees `tensors` as its weights
** file (safetensors_get/count/name), by name, exactly as if they had been
** read from one; they are borrowed, not copied (a strided or misaligned one
** is copied once into compact aligned memory), so they must stay valid and
** unchanged until the object is freed, as a mapped file stays mapped. */
typedef struct loom_object_request {
    uint32_t struct_size;
    const char *class_name;                 /* "core.linear" */
    int32_t n_attrs;
    const loom_named_attr *attrs;           /* by name, resolved against the class */
    int32_t n_tensors;
    const loom_named_tensor *tensors;       /* the weights; NULL when none */
    int32_t n_files;
    const loom_named_file *files;           /* NULL when none */
    loom_dl_device device;                  /* {0,0}: the calling context's device */
} loom_object_request;

/* CPU features the core found (cpuid and the OS's XSAVE support), capped by
** LOOM_CPU_MAX_ISA: exec_ctx->cpu_features and host->cpu_features(). A pack
** never reads the environment or cpuid to choose its ISA. */
#define LOOM_CPU_SSE42        (UINT64_C(1) << 0)
#define LOOM_CPU_AVX          (UINT64_C(1) << 1)
#define LOOM_CPU_AVX2         (UINT64_C(1) << 2)
#define LOOM_CPU_FMA          (UINT64_C(1) << 3)
#define LOOM_CPU_F16C         (UINT64_C(1) << 4)
#define LOOM_CPU_AVX512F      (UINT64_C(1) << 5)
#define LOOM_CPU_AVX512BW     (UINT64_C(1) << 6)
#define LOOM_CPU_AVX512VL     (UINT64_C(1) << 7)
#define LOOM_CPU_AVX512DQ     (UINT64_C(1) << 8)
#define LOOM_CPU_AVX512VNNI   (UINT64_C(1) << 9)
#define LOOM_CPU_AVX512BF16   (UINT64_C(1) << 10)
#define LOOM_CPU_AVX512FP16   (UINT64_C(1) << 11)
#define LOOM_CPU_AMX_TILE     (UINT64_C(1) << 12)
#define LOOM_CPU_AMX_BF16     (UINT64_C(1) << 13)
#define LOOM_CPU_AMX_INT8     (UINT64_C(1) << 14)
/* What each LOOM_CPU_MAX_ISA level allows. */
#define LOOM_CPU_LEVEL_SCALAR 0
#define LOOM_CPU_LEVEL_SSE4   (LOOM_CPU_SSE42)
#define LOOM_CPU_LEVEL_AVX2   (LOOM_CPU_LEVEL_SSE4 | LOOM_CPU_AVX | LOOM_CPU_AVX2 | LOOM_CPU_FMA | LOOM_CPU_F16C)
#define LOOM_CPU_LEVEL_AVX512 (LOOM_CPU_LEVEL_AVX2 | LOOM_CPU_AVX512F | LOOM_CPU_AVX512BW | LOOM_CPU_AVX512VL \
                               | LOOM_CPU_AVX512DQ | LOOM_CPU_AVX512VNNI | LOOM_CPU_AVX512BF16 | LOOM_CPU_AVX512FP16)
#define LOOM_CPU_LEVEL_AMX    (LOOM_CPU_LEVEL_AVX512 | LOOM_CPU_AMX_TILE | LOOM_CPU_AMX_BF16 | LOOM_CPU_AMX_INT8)

/* Per-device object state (ABI 1.1): made by create on the first call of an
** object on a device by this pack, kept until the object is destroyed. */
typedef loom_status (*loom_backend_state_create)(const loom_call *call, void *base_state, void **state_out);
typedef void (*loom_backend_state_destroy)(void *state);

/* ------------------------------------------------ adopted outputs (1.6) */

/* Called once when the last reference to an adopted buffer goes (see
** host->adopt_output): user and data as the kernel gave them. */
typedef void (*loom_buffer_release)(void *user, void *data);

/* The alignment an adopted buffer's data must have, on every device: what
** host->alloc_output gives on the CPU, so SIMD code that relies on it keeps
** working on adopted outputs (cudaMalloc gives 256). */
#define LOOM_ADOPT_ALIGNMENT 64

/* A buffer a kernel owns, offered as the storage of one output (ABI 1.6).
** Size-prefixed: set struct_size = sizeof(loom_output_storage). */
typedef struct loom_output_storage {
    uint32_t struct_size;
    int32_t dtype;                  /* loom_dtype of the elements */
    int32_t ndim;                   /* 0..LOOM_MAX_NDIM */
    int32_t reserved;
    const int64_t *shape;           /* ndim dims, each >= 0; copied by the core */
    const int64_t *strides;         /* in elements, each >= 0; NULL = compact row-major; copied */
    void *data;                     /* the first element; LOOM_ADOPT_ALIGNMENT-aligned */
    size_t nbytes;                  /* bytes from data that every element lies within */
    loom_buffer_release release;    /* must not be NULL */
    void *user;                     /* handed back to release */
} loom_output_storage;

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
    ** call from any thread: concurrent callers share the pool's workers
    ** fairly, each within its own budget; a call made from inside a chunk
    ** (a nested parallel_for, or a kernel's op_call whose kernel calls it
    ** again) runs inline on the calling thread. */
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

    /* ---- ABI 1.1: read only when LOOM_HAS_MEMBER(host, loom_host_api, m) ---- */
    /* LOOM_CPU_* bits, capped by LOOM_CPU_MAX_ISA (also in exec_ctx). */
    uint64_t (*cpu_features)(void);
    /* Composition: find an op once (at init or object create; NULL with the
    ** error set when absent) and call it from a kernel or method. */
    const loom_op *(*op_find)(const char *name);
    loom_status (*op_call)(loom_exec_ctx *ctx, const loom_op_call *call);
    void (*tensor_free)(loom_tensor *t);        /* an output op_call allocated */
    /* Prepared calls: the descriptor -> primitive split. proto->inputs give
    ** dtypes, shapes and devices (data may be NULL); its outputs are ignored. */
    loom_status (*plan_create)(loom_exec_ctx *ctx, const loom_op_call *proto, loom_plan **out);
    loom_status (*plan_run)(loom_exec_ctx *ctx, loom_plan *plan, const loom_tensor *const *inputs,
                          int32_t n_inputs, loom_tensor **outputs, int32_t n_outputs);
    void (*plan_free)(loom_plan *plan);
    /* Per-device object state, keyed by (this pack, the call's device): the
    ** state made by create on the first call, then the same pointer; NULL
    ** with the error set if create failed. call must be a method call. */
    void *(*object_backend_state)(loom_call *call, loom_backend_state_create create,
                                  loom_backend_state_destroy destroy);
    /* Interfaces packs offer each other (language models for a decoder,
    ** environments for rl): a versioned, size-prefixed vtable under a name,
    ** registered during init and found by get_extension(name, version). */
    loom_status (*register_interface)(loom_registrar *reg, const char *name, uint32_t version,
                                    const void *vtable);
    /* Re-open an already-linked library with RTLD_GLOBAL (MPI, oneDNN's
    ** OpenMP runtime need their symbols global); only during init. */
    loom_status (*load_global)(const char *soname);

    /* ---- ABI 1.3: read only when LOOM_HAS_MEMBER(host, loom_host_api, m) ---- */
    /* Objects made by packs: create one of any loaded class (NULL with the
    ** error set on failure) and free it. The object belongs to the caller,
    ** which frees it (typically in its own class's destroy); one it forgets
    ** is destroyed at loom_shutdown after its maker. Not during init. */
    loom_object *(*object_create)(loom_exec_ctx *ctx, const loom_object_request *request);
    void (*object_free)(loom_object *object);

    /* ---- ABI 1.6: read only when LOOM_HAS_MEMBER(host, loom_host_api, m) ---- */
    /* Output `index` of the call made of a buffer the kernel owns, without a
    ** copy: for ops whose output size is known only once it is made, or
    ** whose memory is the kernel's own (a reader's chunk pool, a decoder's
    ** frame). The rules:
    **  - Checks: storage->dtype must be in the output's dtype mask and
    **    ndim equal its rank (unless the schema says any); shape and
    **    strides non-negative, every element within [data, data + nbytes),
    **    data LOOM_ADOPT_ALIGNMENT-aligned, on the call's device (the
    **    call's ctx->device). An output already made in this call (by
    **    alloc_output or adopt_output) is refused.
    **  - Ownership: once storage and its release are non-NULL, the buffer is
    **    the core's whatever adopt_output returns. On a refusal, release is
    **    called before adopt_output returns; on success, exactly once when
    **    the output tensor is freed: by the host (loom_tensor_free), by the
    **    deleter of a DLPack export of it, by host->tensor_free for an
    **    op_call output, or by the core when the call fails after the
    **    adoption (a later alloc_output refused, run() returning an error,
    **    the core's output checks) or the caller did not ask for that output.
    **    With storage or release NULL nothing is called and the buffer stays
    **    the kernel's. The kernel neither frees nor writes the buffer after
    **    the call returns.
    **  - A supplied output: when the caller passed that output in, the
    **    buffer is copied into it (its dtype and shape must match, as with
    **    alloc_output), released at once, and *out is the caller's tensor.
    **  - Thread and lifetime: release may run on any thread, at any time
    **    after adopt_output (concurrently with other calls of the pack, and
    **    after the object whose memory it was has been destroyed, or after
    **    loom_shutdown: packs stay mapped), so it must be thread-safe and
    **    keep alive whatever it touches (a refcounted pool, say).
    ** *out is the output tensor (as call->outputs[index]); its strides are
    ** the storage's, so a consumer reads it through them (DLPack does). */
    loom_status (*adopt_output)(loom_call *call, int32_t index, const loom_output_storage *storage,
                              loom_tensor **out);
    /* The dtype a name means, as the core reads one everywhere (the CLI,
    ** attributes): loom's own names ("f32", "bf16"), NumPy's and torch's
    ** ("float32", "float", "half", "long", "uint8"...), optionally prefixed
    ** "torch." ("torch.float16"), ASCII case ignored; LOOM_DTYPE_INVALID for
    ** any other (or NULL). So packs need no alias tables of their own. */
    loom_dtype (*dtype_from_name)(const char *name);
} loom_host_api;

/* Freeze ABI 1.0 of the host table: the last member of minor 0 sits here. */
LOOM_STATIC_ASSERT(offsetof(loom_host_api, get_extension) == 8 + 19 * sizeof(void *),
                   "loom_host_api 1.0 layout is frozen");
LOOM_STATIC_ASSERT(offsetof(loom_host_api, load_global) == 8 + 29 * sizeof(void *),
                   "loom_host_api 1.1 layout is frozen");
LOOM_STATIC_ASSERT(offsetof(loom_host_api, object_free) == 8 + 31 * sizeof(void *),
                   "loom_host_api 1.3 layout is frozen");
LOOM_STATIC_ASSERT(offsetof(loom_host_api, dtype_from_name) == 8 + 33 * sizeof(void *),
                   "loom_host_api 1.6 layout is frozen");

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
    /* Register ops, kernels, classes, devices and interfaces. Transactional:
    ** on failure the core discards everything this call registered. A kernel
    ** for an op, backend and device type that an earlier pack provides, or an
    ** object class it registered, is dropped the way a clashing definition
    ** is; the register call returns LOOM_OK for a dropped registration. */
    loom_status (*init)(const loom_host_api *host, loom_registrar *reg);
    /* Optional: release pack-global resources; called once at core shutdown. */
    void (*fini)(void);
    /* ---- ABI 1.1 ---- */
    /* What the pack needs before its init runs, NULL-terminated: pack names
    ** ("core-cuda") or op names ("vision.nms", they contain a dot). The
    ** loader initialises packs in dependency order, refuses a pack whose
    ** dependency is missing (naming it) and every pack of a cycle. */
    const char *const *depends;
} loom_plugin_desc;

LOOM_STATIC_ASSERT(offsetof(loom_plugin_desc, struct_size) == 12, "frozen prefix");
LOOM_STATIC_ASSERT(offsetof(loom_plugin_desc, fini) == 48, "loom_plugin_desc 1.0 is frozen");
LOOM_STATIC_ASSERT(offsetof(loom_plugin_desc, depends) == 56, "loom_plugin_desc 1.1 is frozen");

/* Every released layout, frozen (LP64: the layouts the packs of this tree
** are built for). An element type of an array never changes in the major;
** a size-prefixed struct grows only after its last frozen member. */
#if UINTPTR_MAX == UINT64_MAX
LOOM_STATIC_ASSERT(sizeof(loom_attr_value) == 24, "loom_attr_value is frozen for the major");
LOOM_STATIC_ASSERT(sizeof(loom_arg_def) == 32, "loom_arg_def is frozen for the major");
LOOM_STATIC_ASSERT(sizeof(loom_attr_def) == 48, "loom_attr_def is frozen for the major");
LOOM_STATIC_ASSERT(sizeof(loom_attr_choices) == 16, "loom_attr_choices is frozen for the major");
LOOM_STATIC_ASSERT(sizeof(loom_named_attr) == 32, "loom_named_attr is frozen for the major");
LOOM_STATIC_ASSERT(sizeof(loom_named_file) == 16, "loom_named_file is frozen for the major");
LOOM_STATIC_ASSERT(offsetof(loom_op_schema, cost) == 88, "loom_op_schema 1.0 is frozen");
LOOM_STATIC_ASSERT(offsetof(loom_op_schema, choices) == 104, "loom_op_schema 1.1 is frozen");
LOOM_STATIC_ASSERT(offsetof(loom_exec_ctx, core) == 40, "loom_exec_ctx 1.0 is frozen");
LOOM_STATIC_ASSERT(offsetof(loom_exec_ctx, depth) == 56, "loom_exec_ctx 1.1 is frozen");
LOOM_STATIC_ASSERT(offsetof(loom_call, ctx) == 72, "loom_call 1.0 is frozen");
LOOM_STATIC_ASSERT(offsetof(loom_call, plan_state) == 88, "loom_call 1.1 is frozen");
LOOM_STATIC_ASSERT(offsetof(loom_kernel_desc, run) == 56, "loom_kernel_desc 1.0 is frozen");
LOOM_STATIC_ASSERT(offsetof(loom_kernel_desc, release) == 80, "loom_kernel_desc 1.1 is frozen");
LOOM_STATIC_ASSERT(offsetof(loom_kernel_desc, flags) == 88, "loom_kernel_desc 1.2 is frozen");
LOOM_STATIC_ASSERT(offsetof(loom_object_args, ctx) == 40, "loom_object_args 1.0 is frozen");
LOOM_STATIC_ASSERT(offsetof(loom_object_args, callbacks) == 80, "loom_object_args 1.1 is frozen");
LOOM_STATIC_ASSERT(offsetof(loom_object_class, destroy) == 48, "loom_object_class 1.0 is frozen");
LOOM_STATIC_ASSERT(offsetof(loom_object_class, choices) == 64, "loom_object_class 1.1 is frozen");
LOOM_STATIC_ASSERT(offsetof(loom_device_provider, synchronize) == 56, "loom_device_provider 1.0 is frozen");
LOOM_STATIC_ASSERT(offsetof(loom_op_call, object) == 72, "loom_op_call 1.1 is frozen");
LOOM_STATIC_ASSERT(offsetof(loom_output_storage, user) == 56, "loom_output_storage 1.6 is frozen");
#endif

typedef const loom_plugin_desc *(*loom_plugin_entry_fn)(uint16_t core_abi_major,
                                                    uint16_t core_abi_minor);

/* Define the one exported entry of a pack, with C linkage also when the
** pack is written in C++ (a mangled entry is not found by the loader):
**   LOOM_PLUGIN_DEFINE("vision", "0.1.0", "torchvision operators", vision_init, NULL)
**   LOOM_PLUGIN_DEFINE_DEPS("audio-cuda", "0.1.0", "...", init, NULL, audio_cuda_deps)
** where audio_cuda_deps is a NULL-terminated `static const char *const[]`.
** The entry returns NULL to a core of another ABI major. The initialiser is
** positional so that it is valid C and C++11 alike. */
#define LOOM_PLUGIN_DEFINE_DEPS(NAME, VERSION, DESCRIPTION, INIT, FINI, DEPENDS)              \
    LOOM_EXTERN_C LOOM_PLUGIN_EXPORT const loom_plugin_desc *loom_plugin_entry(uint16_t core_major, \
                                                                          uint16_t core_minor); \
    LOOM_EXTERN_C LOOM_PLUGIN_EXPORT const loom_plugin_desc *loom_plugin_entry(uint16_t core_major, \
                                                                          uint16_t core_minor)  \
    {                                                                                       \
        static const loom_plugin_desc desc = {                                              \
            LOOM_PLUGIN_MAGIC, LOOM_ABI_MAJOR, LOOM_ABI_MINOR, LOOM_TARGET_ABI_MINOR, 0,      \
            (uint32_t)sizeof(loom_plugin_desc), NAME, VERSION, DESCRIPTION, INIT, FINI,       \
            DEPENDS                                                                         \
        };                                                                                  \
        (void)core_minor;                                                                   \
        return core_major == LOOM_ABI_MAJOR ? &desc : NULL;                                  \
    }
#define LOOM_PLUGIN_DEFINE(NAME, VERSION, DESCRIPTION, INIT, FINI) \
    LOOM_PLUGIN_DEFINE_DEPS(NAME, VERSION, DESCRIPTION, INIT, FINI, NULL)

/* Attribute default initialisers for schema tables. In C++ (which has no
** designated initialisers before C++20) they are inline functions, usable
** in the initialiser of a static table. */
#ifndef __cplusplus
#define LOOM_DEFAULT_NONE        { .type = 0, .is_set = 0, .count = 0, .u = { .i = 0 } }
#define LOOM_DEFAULT_INT(v)      { .type = LOOM_ATTR_INT, .is_set = 1, .count = 1, .u = { .i = (v) } }
#define LOOM_DEFAULT_FLOAT(v)    { .type = LOOM_ATTR_FLOAT, .is_set = 1, .count = 1, .u = { .f = (v) } }
#define LOOM_DEFAULT_BOOL(v)     { .type = LOOM_ATTR_BOOL, .is_set = 1, .count = 1, .u = { .b = (v) } }
#define LOOM_DEFAULT_STRING(v)   { .type = LOOM_ATTR_STRING, .is_set = 1, .count = sizeof(v) - 1, .u = { .s = (v) } }
#else
static inline loom_attr_value loom_default_value_(int32_t type, int64_t count)
{
    loom_attr_value v;
    v.type = type;
    v.is_set = type != 0;
    v.count = count;
    v.u.i = 0;
    return v;
}
static inline loom_attr_value loom_default_int_(int64_t x) { loom_attr_value v = loom_default_value_(LOOM_ATTR_INT, 1); v.u.i = x; return v; }
static inline loom_attr_value loom_default_float_(double x) { loom_attr_value v = loom_default_value_(LOOM_ATTR_FLOAT, 1); v.u.f = x; return v; }
static inline loom_attr_value loom_default_bool_(int32_t x) { loom_attr_value v = loom_default_value_(LOOM_ATTR_BOOL, 1); v.u.b = x; return v; }
static inline loom_attr_value loom_default_string_(const char *x, int64_t n) { loom_attr_value v = loom_default_value_(LOOM_ATTR_STRING, n); v.u.s = x; return v; }
#define LOOM_DEFAULT_NONE        loom_default_value_(0, 0)
#define LOOM_DEFAULT_INT(v)      loom_default_int_(v)
#define LOOM_DEFAULT_FLOAT(v)    loom_default_float_(v)
#define LOOM_DEFAULT_BOOL(v)     loom_default_bool_(v)
#define LOOM_DEFAULT_STRING(v)   loom_default_string_((v), (int64_t)sizeof(v) - 1)
#endif

#ifdef __cplusplus
}
#endif
#endif /* LOOM_PLUGIN_H */
