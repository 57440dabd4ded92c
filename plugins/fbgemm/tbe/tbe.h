/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tbe.h - the internal contract of fbgemm.tbe: weight types, row layouts,
** the object state and the per-call plan every backend's forward consumes.
**
** Stability: backends outside this folder (tbe/cuda/) code against this
** header. It only grows: members are appended at the end of structs, enum
** values are never renumbered, functions are never changed in meaning.
**
** Names and codes are fbgemm_gpu's:
**   SparseType (include/fbgemm_gpu/embedding_common.h)  FP32=0 FP16=1 INT8=2
**     INT4=3 INT2=4 BF16=5 FP8=6
**   PoolingMode   SUM=0 MEAN=1 NONE=2
**   BoundsCheckMode FATAL=0 WARNING=1 IGNORE=2 NONE=3
**
** Row layouts, as IntNBitTableBatchedEmbeddingBagsCodegen stores them
** (row r of a table starts at base + r * row_stride):
**   FP32  D little-endian f32
**   FP16  D IEEE binary16
**   BF16  D bfloat16
**   FP8   D bytes of fbgemm's "hfp8" (1 sign, ebits exponent, 7-ebits
**         mantissa, exponent bias `bias`; default e4m3 bias 7; no NaN/Inf),
**         no scale/bias
**   INT8  [f16 scale][f16 bias][D u8]
**   INT4  [f16 scale][f16 bias][D/2 bytes], element i in byte i/2 at bit
**         (i%2)*4 (low nibble first)
**   INT2  [f16 scale][f16 bias][D/4 bytes], element i in byte i/4 at bit
**         (i%4)*2
**   then zero padding up to the table's row_stride.
** Dequantisation of the integer types: x = q * scale + bias (in f32).
**
** Output layouts (as fbgemm's forward):
**   pooled (SUM/MEAN), fixed batch: [B, total_D]; feature f occupies columns
**     D_offsets[f] .. D_offsets[f+1].
**   pooled, VBE: 1-D, rank-major: for rank r, for feature f, a row-major
**     [B[f][r], D_f] block (plan.vbe_output_offsets gives each block's start).
**   NONE: [n_indices, D], one row per index (every feature has the same D);
**     per_sample_weights are ignored there, as IntNBit's CPU kernel does.
** Accumulation is in f32; the result is cast (round to nearest even) to the
** output dtype. Empty bags give 0. MEAN multiplies by 1/L (L = bag length,
** pruned -1 entries included), also when per_sample_weights are given, as
** the IntNBit TBE's CPU kernel does (the training module's CPU kernel skips
** 1/L with weights; loom follows IntNBit). Index -1 marks a pruned row: it
** adds nothing (a NONE row of zeros) but counts in L. The cpu kernel
** accumulates acc = fma(w, x, acc) for float rows and
** acc = fma(scale*w, q, acc + bias*w) for integer rows, in index order
** (tbe_rows.h); that matches fbgemm's CPU kernels to < 1e-6 relative.
*/
#ifndef LOOM_FBGEMM_TBE_H
#define LOOM_FBGEMM_TBE_H

#include <stddef.h>
#include <stdint.h>

#include "loom/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ enums */

/* fbgemm's SparseType codes (weights and outputs). */
typedef enum fbg_wtype {
    FBG_WT_FP32 = 0,
    FBG_WT_FP16 = 1,
    FBG_WT_INT8 = 2,
    FBG_WT_INT4 = 3,
    FBG_WT_INT2 = 4,
    FBG_WT_BF16 = 5,
    FBG_WT_FP8 = 6,
    FBG_WT_COUNT = 7
} fbg_wtype;

typedef enum fbg_pooling {
    FBG_POOL_SUM = 0,
    FBG_POOL_MEAN = 1,
    FBG_POOL_NONE = 2
} fbg_pooling;

typedef enum fbg_bounds_check {
    FBG_BOUNDS_FATAL = 0,    /* any bad offset or index fails the call, naming it */
    FBG_BOUNDS_WARNING = 1,  /* repair (see below) and log once per object */
    FBG_BOUNDS_IGNORE = 2,   /* repair silently */
    FBG_BOUNDS_NONE = 3      /* fbgemm: no check. loom: repair silently, as IGNORE,
                             ** because a kernel must never read out of bounds */
} fbg_bounds_check;
/* Repair, as fbgemm's bounds_check_indices on CPU: when offsets[last] !=
** n_indices it is set to n_indices; each bag's start is clamped into
** [0, n_indices] and its end into [start, n_indices]; an index outside
** [0, rows) of its table is replaced by 0 (row 0 is read). Repairs are made
** on a private copy: the caller's tensors are never written. */

/* Bytes of the fp16 scale + bias header of INT8/INT4/INT2 rows. */
#define FBG_SCALE_BIAS_BYTES 4

/* fbgemm's default FP8 configuration (SparseType.FP8.default_config()). */
#define FBG_FP8_DEFAULT_EXPONENT_BITS 4
#define FBG_FP8_DEFAULT_EXPONENT_BIAS 7

/* ------------------------------------------------------------- row sizes */

/* The largest D (elements per row) and row_alignment loom accepts: fbgemm
** holds D in an int32, and with these bounds every row size below fits an
** int64 with room to spare (so no size computed from an attribute or a file
** header can overflow). */
#define FBG_MAX_DIM INT64_C(2147483647)
#define FBG_MAX_ROW_ALIGNMENT 4096

/* 1 when fbgemm packs D elements of type t without losing data: INT4 needs
** even D, INT2 D % 4 == 0. Every type needs 0 < D <= FBG_MAX_DIM. */
static inline int fbg_dim_ok(fbg_wtype t, int64_t dim)
{
    if (dim <= 0 || dim > FBG_MAX_DIM)
        return 0;
    return t == FBG_WT_INT4 ? dim % 2 == 0 : t == FBG_WT_INT2 ? dim % 4 == 0 : 1;
}

/* fbgemm's unpadded_row_size_in_bytes; 0 for an unknown type, -1 for a dim
** outside [0, FBG_MAX_DIM]. */
static inline int64_t fbg_row_bytes_unpadded(fbg_wtype t, int64_t dim)
{
    if (dim < 0 || dim > FBG_MAX_DIM)
        return -1;
    switch (t) {
    case FBG_WT_FP32: return 4 * dim;
    case FBG_WT_FP16:
    case FBG_WT_BF16: return 2 * dim;
    case FBG_WT_FP8:  return dim;
    case FBG_WT_INT8: return dim + FBG_SCALE_BIAS_BYTES;
    case FBG_WT_INT4: return dim / 2 + FBG_SCALE_BIAS_BYTES;
    case FBG_WT_INT2: return dim / 4 + FBG_SCALE_BIAS_BYTES;
    default:          return 0;
    }
}

/* fbgemm's padded_row_size_in_bytes: unpadded rounded up to row_alignment
** (>= 1; fbgemm uses 1 on CPU, 16 on GPU); -1 for a dim outside [0,
** FBG_MAX_DIM] or an alignment above FBG_MAX_ROW_ALIGNMENT. */
static inline int64_t fbg_row_bytes_padded(fbg_wtype t, int64_t dim, int64_t row_alignment)
{
    int64_t u = fbg_row_bytes_unpadded(t, dim);
    int64_t a = row_alignment > 0 ? row_alignment : 1;
    if (u < 0 || a > FBG_MAX_ROW_ALIGNMENT)
        return -1;
    return (u + a - 1) / a * a;
}

/* 1 for the types with a scale/bias header. */
static inline int fbg_wtype_is_int(fbg_wtype t)
{
    return t == FBG_WT_INT8 || t == FBG_WT_INT4 || t == FBG_WT_INT2;
}

/* ---------------------------------------------------------- object state */

struct fbg_cache;

/* One physical table. */
typedef struct fbg_tbe_table {
    const uint8_t *base;        /* host address of row 0 (in the mapped weights file,
                                ** which lives as long as the object) */
    int64_t rows;               /* E_t */
    int32_t dim;                /* D_t, elements per row */
    int32_t wtype;              /* fbg_wtype */
    int64_t row_stride;         /* bytes from row r to row r+1 (the padded row size) */
} fbg_tbe_table;

/* The state of one fbgemm.tbe object (loom_call.object for its methods).
** Built by the cpu pack's create and read-only afterwards, except the
** members marked "mutable", which only the owner (named there) touches. */
typedef struct fbg_tbe_state {
    uint32_t struct_size;       /* sizeof(fbg_tbe_state) of the creator */

    int32_t n_tables;           /* physical tables */
    const fbg_tbe_table *tables;/* [n_tables] */

    int32_t n_features;         /* T in fbgemm's forward: len(feature_table_map) */
    const int32_t *feature_table_map; /* [n_features] physical table of each feature */
    const int64_t *D_offsets;   /* [n_features + 1] cumulative D over features */
    int64_t total_D;            /* D_offsets[n_features] */
    int32_t max_D;              /* largest D of any feature */
    int32_t all_same_D;         /* 1 when every feature has the same D (NONE pooling needs it) */

    int32_t pooling;            /* fbg_pooling: the object's default */
    int32_t output_wtype;       /* fbg_wtype of the output: FP32, FP16 or BF16 */
    int32_t bounds_check_mode;  /* fbg_bounds_check */
    int32_t row_alignment;      /* bytes (>= 1) */
    int32_t fp8_exponent_bits;  /* FP8 tables: exponent bits (1..7) */
    int32_t fp8_exponent_bias;  /* FP8 tables: exponent bias */

    double cache_load_factor;   /* 1.0 = everything in memory, no cache */
    int32_t cache_algorithm;    /* fbg_cache_algo: 0 LRU, 1 LFU */
    int32_t cache_assoc;        /* ways per set */
    struct fbg_cache *cache;    /* NULL without a cache (cache/cache.h) */

    /* Mutable, owned by a device backend: per-object device state (device
    ** copies of the tables...) created lazily on the first call of that
    ** backend, released through device_state_free(device_state) when the
    ** object is destroyed. The backend serialises its own first-call set-up. */
    void *device_state;
    void (*device_state_free)(void *device_state);

    /* Private to the cpu pack (locks, the prefetch queue, warning flags). */
    void *cpu_private;
} fbg_tbe_state;

/* Element count of the output for pooled fixed-batch calls: B * total_D. */

/* ------------------------------------------------------------ call plan */

/* One forward call, resolved and checked by the op's front end (shared by
** every backend, tbe_plan.c) before the backend kernel runs.
** Pointers to indices, offsets, per_sample_weights and output are on the
** call's device; the metadata arrays (vbe_*) are host memory. */
typedef struct fbg_tbe_plan {
    uint32_t struct_size;

    const fbg_tbe_state *state;

    /* indices[n_indices] and offsets[n_offsets], both of index_dtype
    ** (LOOM_DTYPE_I32 or LOOM_DTYPE_I64). Bag k (0 <= k < n_bags) is
    ** indices[offsets[k] .. offsets[k+1]); bags run feature-major: feature
    ** f's bags are bag_offsets(f) .. bag_offsets(f+1) (see below). After
    ** the front end these are valid: 0 <= offsets[k] <= offsets[k+1] <=
    ** n_indices and every index is inside its table, unless
    ** `needs_bounds_check` is 1 (a backend that does its own check on
    ** device sets the plan up that way; the cpu front end never does). */
    const void *indices;
    const void *offsets;
    int32_t index_dtype;        /* loom_dtype */
    int32_t needs_bounds_check; /* 0: indices/offsets are already valid */
    int64_t n_indices;
    int64_t n_offsets;          /* n_bags + 1 */

    const float *per_sample_weights; /* [n_indices] or NULL */

    int32_t n_features;         /* T */
    int32_t pooling;            /* fbg_pooling for this call (op attr or object default) */

    /* Fixed batch: B bags per feature, n_bags = T * B, feature f's bags
    ** start at f * B. vbe = 0. */
    int64_t B;
    int64_t n_bags;

    /* VBE (vbe = 1): batch_size_per_feature_per_rank [T, R].
    **   vbe_B_offsets[f]            first bag of feature f ([T+1], host)
    **   vbe_B_offsets_rank_per_feature[f*(R+1) + r]
    **                               first bag of rank r within feature f
    **                               ([T*(R+1)], host)
    **   vbe_output_offsets[r*T + f] start (in elements) of the [B[f][r], D_f]
    **                               block of (rank r, feature f) in the 1-D
    **                               output ([R*T+1], host; the last entry is
    **                               the output length)
    ** B is 0 with VBE; n_bags = vbe_B_offsets[T]. */
    int32_t vbe;
    int32_t vbe_ranks;          /* R */
    const int64_t *vbe_B_offsets;
    const int64_t *vbe_B_offsets_rank_per_feature;
    const int64_t *vbe_output_offsets;

    /* Output: pooled [B, total_D] (fixed batch), 1-D (VBE) or [n_indices, D]
    ** (NONE), compact, of output_dtype (LOOM_DTYPE_F32, F16 or BF16). */
    void *output;
    int32_t output_dtype;       /* loom_dtype */
    int32_t reserved0;
    int64_t output_numel;

    /* Cache (cpu): locations[i] for indices[i] from fbg_cache_lookup (the
    ** slot holding the row, or -1: read the table), or NULL without a
    ** cache. */
    const int32_t *cache_locations;
} fbg_tbe_plan;

/* First bag of feature f (0 <= f <= n_features) for either batch layout. */
static inline int64_t fbg_plan_feature_bag(const fbg_tbe_plan *p, int32_t f)
{
    return p->vbe ? p->vbe_B_offsets[f] : (int64_t)f * p->B;
}

/* ------------------------------------------------------- the front end */

/* Shared by every backend (tbe_plan.c is compiled into both packs).
**
** fbg_tbe_plan_build resolves and checks one call of fbgemm.tbe or
** fbgemm.tbe_prefetch (call->object is the fbg_tbe_state) into *plan:
** dtypes, shapes, the op attributes over the object's defaults, and the VBE
** metadata from bsz (batch_size_per_feature_per_rank as host memory,
** [T*R]; NULL for a fixed batch); it refuses a call on an object whose
** weights file was truncated since create (LOOM_EFORMAT, one fstat, before
** any table row is read). It reads no index or offset values and
** allocates no output (plan->output stays NULL); it sets
** needs_bounds_check = 1. The VBE arrays live in *store until
** fbg_plan_store_free. `op` names the op in messages. */
typedef struct fbg_plan_store {
    int64_t *vbe;               /* one allocation for the three VBE arrays */
} fbg_plan_store;
loom_status fbg_tbe_plan_build(const loom_call *call, const fbg_tbe_state *s, const int64_t *bsz,
                             const char *op, fbg_tbe_plan *plan, fbg_plan_store *store);
void fbg_plan_store_free(fbg_plan_store *store);
/* Output rank and shape of a built plan (shape[0..rank)). */
int32_t fbg_tbe_output_shape(const fbg_tbe_plan *plan, int64_t shape[2]);
/* The bounds-check mode of a call: its bounds_check_mode attribute when
** set, else the object's (fbg_bounds_check). */
int32_t fbg_tbe_call_bounds_mode(const loom_call *call, const fbg_tbe_state *s);
/* fbgemm's bounds_check_indices on HOST indices/offsets (tbe.h "Repair"):
** FATAL fails naming the bag or index; the other modes repair a private
** copy in call scratch and point the plan at it. A device backend checks
** on its device instead (or copies to the host first): scratch is on the
** call's device. Clears needs_bounds_check. */
loom_status fbg_tbe_bounds_check_host(loom_call *call, const fbg_tbe_state *s, int32_t mode,
                                    fbg_tbe_plan *plan, const char *op);

/* Backends: the cpu kernels are in this folder; tbe/cuda/ (when it has a
** meson.build) provides the module fbgemm_tbe_cuda (fbgemm_pack.h, its
** ops built from FBG_TBE_OPS), else tbe_cuda_none.c gives it with no
** kernels. Note: the core dispatches a method only
** to kernels of the pack that created the object (fbgemm.so creates every
** fbgemm.tbe object). */

#ifdef __cplusplus
}
#endif
#endif /* LOOM_FBGEMM_TBE_H */
