/* SPDX-License-Identifier: BSD-3-Clause */
/*
** op_cases.h - table-driven op tests shared by the suites of the op packs
** (core, vision, fbgemm): a case names an op, its inputs by dtype and shape
** (optionally with values), its attributes as text and what the call must
** give: the output dtypes and shapes, or a refusal with a message.
**
** oc_run runs a case on the cpu backend twice: once with outputs the core
** allocates, once with caller-made outputs of the expected shapes (whose
** data pointer is NULL when they have no elements), so a kernel that
** touches the data of an empty tensor (memset/memcpy of NULL included)
** fails under ASan/UBSan. Inputs without elements have NULL data as well.
**
** oc_check_coverage fails, naming them, for every registered op with the
** given prefix that no case of the table exercises: a new op cannot be
** forgotten.
*/
#ifndef OP_CASES_H
#define OP_CASES_H

#include <stddef.h>
#include <stdint.h>

#include "loom/loom.h"

#define OC_MAX_IN 14     /* vision.vit_encoder_block has 14 (packed_weights last) */
#define OC_MAX_OUT 14    /* audio.stream_reader_src_stream_info has 11, the KJT ops 12, rec.criteo_reader 14 */

/* A tensor: dtype 0 means absent (an optional input left out). vals, when
** not NULL, holds numel values (converted to the dtype); else zeros. */
typedef struct oc_tensor {
    loom_dtype dtype;
    int32_t ndim;
    int64_t shape[6];
    const double *vals;
} oc_tensor;

typedef struct oc_case {
    const char *op;
    const char *what;           /* what the case is about (printed on failure) */
    oc_tensor in[OC_MAX_IN];    /* schema order */
    const char *attrs;          /* "name=value;name=value", parsed with loom_attrs_parse */
    oc_tensor out[OC_MAX_OUT];  /* expected outputs, schema order (when expect is LOOM_OK); an
                                ** output of dtype 0 may have any shape (then no second run) */
    loom_status expect;         /* LOOM_OK, or the status of the refusal */
    const char *message;        /* refusal: a substring of loom_last_error() */
    unsigned zeros;             /* bit k set: every element of output k must be 0 (OC_ALL: of all) */
    int object;                 /* methods: index into the objects given to oc_run (1-based) */
} oc_case;

/* T(F32, 2, 0, 4): an f32 [0, 4] tensor. TV(I64, vals, 1, 3): with values. */
#define OC_ALL 0x3fffu

#define OC_T(dt, nd, ...) { .dtype = LOOM_DTYPE_##dt, .ndim = (nd), .shape = { __VA_ARGS__ } }
#define OC_TV(dt, v, nd, ...) { .dtype = LOOM_DTYPE_##dt, .ndim = (nd), .shape = { __VA_ARGS__ }, .vals = (v) }

/* Run one case (see above); objects[c->object - 1] for methods. */
void oc_run(const oc_case *c, loom_object *const *objects, size_t n_objects);
/* Name prefixes (NULL-terminated) of ops of the prefix that another test
** covers: oc_check_coverage passes over those that have no case here. */
extern const char *const *oc_covered_elsewhere;
/* Every op whose name starts with prefix has a case in the table. */
void oc_check_coverage(const char *prefix, const oc_case *cases, size_t n);

/* The objects the cases' `object` members index (set by a group setup). */
extern loom_object *oc_objects[16];

/* A cmocka group named `group`: the coverage check of `prefix` (none when
** prefix is NULL), then one
** test per case (named after its op and what), between setup and teardown
** (which init loom, and make oc_objects). Returns cmocka's result. */
int oc_run_group(const char *group, const char *prefix, const oc_case *cases, size_t n,
                 int (*setup)(void **), int (*teardown)(void **));

/* One attribute of one op: a valid call, then that attribute at each bad
** value, every one refused with `status` (0: LOOM_EINVAL) and a message
** containing `message` (NULL: the attribute's name in quotes). */
typedef struct oc_attr_family {
    const char *op;
    oc_tensor in[OC_MAX_IN];
    const char *attrs;          /* the valid call's other attributes */
    const char *attr;
    const char *bad[8];         /* values refused, NULL-terminated when fewer */
    const char *message;
    loom_status status;
    int object;
} oc_attr_family;

/* A new table: one refusal case per family and bad value, then the extra
** cases; *n_out is its length. Free it with oc_free_cases. */
oc_case *oc_attr_cases(const oc_attr_family *families, size_t n_families, const oc_case *extra, size_t n_extra,
                       size_t *n_out);
void oc_free_cases(oc_case *cases, size_t n, size_t n_extra);

/* A tensor from a spec (zeros or its values; NULL data without elements);
** free with loom_tensor_free. */
loom_tensor *oc_make(const oc_tensor *spec);

#endif
