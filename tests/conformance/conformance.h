/* SPDX-License-Identifier: BSD-3-Clause */
/*
** conformance.h - what the conformance harness (conformance.c) and its case
** generators (cases_<domain>.c, registered in cases.c) share.
**
** Every registered op has one entry in the table: a generator that makes
** case `index` of dtype `dtype` (host inputs, attributes, an object for the
** methods of a class, how each output compares with the cpu's), or the test
** file that covers the op and why no generic case can. The harness runs
** each case on the op's cpu kernel and on every other backend's kernel, on
** the same inputs, and compares. A generator is a pure function of (op,
** dtype, index): the harness calls it once per backend, so an object is
** fresh for every backend and none sees state another one left.
**
** Inputs come from one counter-based RNG (plugins/common/rng.h): draw i of
** stream s of a case is pk_rng_uniform(case seed + s, i), the same on every
** machine and in every order of generation.
*/
#ifndef LOOM_TESTS_CONFORMANCE_H
#define LOOM_TESTS_CONFORMANCE_H

#include <stddef.h>
#include <stdint.h>

#include "loom/loom.h"

#define CF_MAX_IN 8
#define CF_MAX_OUT 5
#define CF_MAX_OWNED 24

/* How one output of a backend is compared with the cpu kernel's. */
typedef enum cf_cmp {
    CF_BYTES = 0,       /* same dtype, shape and bytes */
    CF_CLOSE,           /* floats (through f64): |got - ref| <= atol + rtol |ref|, NaN
                        ** where ref is NaN, equal infinities; other dtypes: same bytes */
    CF_CUSTOM,          /* the case's check function */
} cf_cmp;

typedef struct cf_tol {
    cf_cmp cmp;
    double rtol, atol;
} cf_tol;

typedef struct cf_case cf_case;

/* CF_CUSTOM: 1 when output `out` of a backend (got, on the host) agrees
** with the cpu's (ref), else 0 with a one-line reason in err. */
typedef int (*cf_check_fn)(const cf_case *c, int32_t out, const loom_tensor *got, const loom_tensor *ref,
                           char *err, size_t size);

struct cf_case {
    /* set by the harness */
    const char *op;
    loom_dtype dtype;               /* LOOM_DTYPE_INVALID for an op without a dtype axis */
    int index;
    uint64_t seed;                  /* a function of op, dtype and index */
    /* set by the generator */
    char what[160];                 /* the case in a few words: shapes, attributes */
    const loom_tensor *in[CF_MAX_IN];   /* host tensors in schema order; NULL: an absent optional */
    int32_t n_in;
    loom_attrs *attrs;              /* NULL: none */
    loom_object *object;            /* methods of a class: made on the cpu by the generator */
    int32_t n_out;                  /* the first n_out outputs of the schema are compared */
    cf_tol tol[CF_MAX_OUT];
    cf_check_fn check;
    const loom_tensor *aux[4];      /* what a check function needs besides the inputs */
    /* released with the case (cf_case_free) */
    loom_tensor *owned[CF_MAX_OWNED];
    int n_owned;
    char file[256];                 /* a file the generator wrote, removed */
};

/* One row of the table. make returns 1 when it made the case, 0 when the
** op has no case `index` for this dtype (the count differs by dtype). */
typedef struct cf_gen {
    const char *op;
    uint64_t dtypes;                /* LOOM_DTYPE_BIT mask; 0: no dtype axis (no inputs) */
    int n_cases;                    /* per dtype, at most */
    int (*make)(cf_case *c);
    const char *covered_by;         /* instead of make: "<test file>: <why no generic case>" */
} cf_gen;

/* cases.c: the one table of every domain's generators. */
const cf_gen *cf_find_gen(const char *op);
/* The file whose table holds op's domain ("cases_vision.c"), for messages. */
const char *cf_domain_file(const char *op);

/* Each domain's rows (cases_core.c, cases_vision.c, cases_fbgemm.c, cases_text.c). */
extern const cf_gen cf_core_gens[];
extern const size_t cf_core_n_gens;
extern const cf_gen cf_vision_gens[];
extern const size_t cf_vision_n_gens;
extern const cf_gen cf_fbgemm_gens[];
extern const size_t cf_fbgemm_n_gens;
extern const cf_gen cf_audio_gens[];
extern const size_t cf_audio_n_gens;
extern const cf_gen cf_audio_beamform_gens[];   /* the beamforming ops of the audio pack */
extern const size_t cf_audio_beamform_n_gens;
extern const cf_gen cf_text_gens[];
extern const size_t cf_text_n_gens;
extern const cf_gen cf_rl_gens[];
extern const size_t cf_rl_n_gens;
extern const cf_gen cf_rl_td_gens[];            /* the TensorDict and replay-buffer methods of the rl pack */
extern const size_t cf_rl_td_n_gens;
extern const cf_gen cf_rec_gens[];
extern const size_t cf_rec_n_gens;

/* ---------------------------------------------- helpers of the generators
** (gen.c). Any failure is a broken generator: they print "Bail out!" with
** the reason and exit(1). Tensors they return are owned by the case. */

_Noreturn void cf_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cf_what(cf_case *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Draw i of stream `stream` of the case, uniform in [0, 1). */
double cf_draw(const cf_case *c, uint64_t stream, uint64_t i);

/* A host tensor of dtype dt: lo + (hi - lo) * draw, made in f64 and cast on
** the cpu (core.cast) when dt is another dtype. */
loom_tensor *cf_uniform(cf_case *c, loom_dtype dt, int32_t ndim, const int64_t *shape, uint64_t stream,
                        double lo, double hi);
/* A host tensor of dtype dt from numel f64 values, cast on the cpu. */
loom_tensor *cf_values(cf_case *c, loom_dtype dt, int32_t ndim, const int64_t *shape, const double *v);
/* A host i32 or i64 tensor from numel values. */
loom_tensor *cf_index(cf_case *c, loom_dtype dt, int32_t ndim, const int64_t *shape, const int64_t *v);
/* A zero-filled host tensor (for raw bytes, e.g. u8 table rows). */
loom_tensor *cf_zeros(cf_case *c, loom_dtype dt, int32_t ndim, const int64_t *shape);
/* t converted to dt by core.cast on the cpu. */
loom_tensor *cf_cast(cf_case *c, const loom_tensor *t, loom_dtype dt);
/* Outputs of op on the cpu (forced backend), owned by the case: for inputs
** that come from another op (a forward's argmax for its backward). */
void cf_cpu_run(cf_case *c, const char *op, const loom_tensor *const *in, int32_t n_in, const char *attrs,
                loom_tensor **out, int32_t n_out);

/* The case's attributes from "name=value;name=value", parsed against the op. */
void cf_attrs(cf_case *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Every output compared the same way. */
void cf_tol_all(cf_case *c, cf_cmp cmp, double rtol, double atol);
/* An object of class cls over a safetensors file of the given tensors
** (written to a scratch file owned by the case), with attributes
** "name=value;..." (NULL: none) parsed against the class. */
loom_object *cf_object(cf_case *c, const char *cls, const char *attrs, const char *const *names,
                       const loom_tensor *const *tensors, int64_t n);

/* Releases what the generator made. */
void cf_case_free(cf_case *c);

/* ----------------------------------------------- the harness (compare.c) */

/* 1 when output `out` of a backend (got, on the host) agrees with the cpu
** kernel's (ref) as c->tol[out] says, else 0 with the first difference in err. */
int cf_compare(const cf_case *c, int32_t out, const loom_tensor *got, const loom_tensor *ref, char *err,
               size_t size);

/* Element i of a compact f64 tensor. */
static inline double cf_f64(const loom_tensor *t, int64_t i) { return ((const double *)loom_data(t))[i]; }

#endif /* LOOM_TESTS_CONFORMANCE_H */
