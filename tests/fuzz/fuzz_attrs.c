/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fuzz_attrs.c - feeds: attribute text to loom_attrs_parse(attrs, owner,
** name, value) against the real registry (every op and object class of the
** core, vision and fbgemm packs): the owner is one of them (by index, or by
** name: the seeds name theirs, so they survive new ops) or fuzzed text,
** each name one of the owner's attributes or fuzzed text, each value fuzzed
** text (a tensor attribute gets the path of a file holding the rest of the
** input). Then, for a stateless op, one loom_run with those attributes on
** small inputs of the schema's ranks and dtypes (shapes and data from the
** input); for an object class, one loom_object_create without weights.
** Asserts: no sanitizer report; a refused attribute sets a message; every
** status is a known one. An error from the run or the create is fine.
** Only cheap calls run: inputs have at most 5 elements per dim and values
** in [0, 4) (valid as indices, lengths and box corners; every dtype, f16,
** bf16 and f8 included); the product of the magnitudes of all integer
** attribute values is at most 64 and every finite float attribute is
** within +-64 (NaN and infinities do run). Larger sizes, sampling ratios or
** scales make ops allocate or loop for minutes legitimately (roi_align
** with output_size 999 and sampling_ratio 999), which is not what this
** target looks for; such values are still parsed.
*/
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

#define MAX_PAIRS 8
#define MAX_VALUE 96

static int64_t n_ops, n_classes;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init("core,vision,fbgemm");
    n_ops = loom_op_count();
    n_classes = loom_object_class_count();
    FZ_CHECK(loom_op_find("vision.nms") != NULL && loom_op_find("fbgemm.tbe") != NULL && loom_op_find("core.add"),
             "the core, vision and fbgemm packs did not all load (%lld ops)", (long long)n_ops);
    return 0;
}

/* The cost budget of a run (see the top): multiplies *budget by the
** magnitude of each integer of value (a list or one), or fails when a float
** is finite and beyond +-64; 0 when the call would not be cheap. */
#define INT_BUDGET 64.0
static int cheap(const loom_attr_def *def, const char *value, double *budget)
{
    const int ints = def->type == LOOM_ATTR_INT || def->type == LOOM_ATTR_INTS;
    if ((!ints && def->type != LOOM_ATTR_FLOAT && def->type != LOOM_ATTR_FLOATS) || strcmp(def->name, "seed") == 0)
        return 1;               /* a random seed costs nothing, whatever its value */
    char *copy = strdup(value), *save = NULL;
    int ok = copy != NULL;
    for (char *p = copy; ok && *p; p++)
        if (*p == '[' || *p == ']' || *p == '(' || *p == ')')
            *p = ' ';
    for (char *tok = ok ? strtok_r(copy, ",", &save) : NULL; ok && tok; tok = strtok_r(NULL, ",", &save)) {
        char *end;
        while (*tok == ' ')
            tok++;
        if (*tok == '\0')
            continue;
        if (ints) {
            long long v = strtoll(tok, &end, 0);
            double m = v == LLONG_MIN ? 9.3e18 : (double)(v < 0 ? -v : v);
            *budget *= m > 1 ? m : 1;
            ok = end != tok && *budget <= INT_BUDGET;
        } else {
            double v = strtod(tok, &end);
            ok = end != tok && (isnan(v) || isinf(v) || fabs(v) <= 64);
        }
    }
    free(copy);
    return ok;
}

static const loom_attr_def *find_def(const loom_attr_def *defs, uint32_t n, const char *name)
{
    for (uint32_t k = 0; k < n; k++)
        if (strcmp(defs[k].name, name) == 0)
            return &defs[k];
    return NULL;
}

/* Small tensors for the inputs of s, from the cursor. NULL entries stay
** absent (optional inputs the input chose to leave out). */
static int make_inputs(const loom_op_schema *s, fz_cursor *c, loom_tensor **in)
{
    uint32_t rng = fz_u32(c) | 1u;
    for (uint32_t i = 0; i < s->n_inputs; i++) {
        const loom_arg_def *arg = &s->inputs[i];
        const uint8_t k = fz_u8(c);
        in[i] = NULL;
        if ((arg->flags & LOOM_ARG_OPTIONAL) && (k & 1))
            continue;
        /* the (k >> 1)-th dtype the argument allows, cyclically */
        uint64_t mask = arg->dtypes ? arg->dtypes : LOOM_DTYPES_ALL;
        int allowed[64], na = 0;
        for (int d = 1; d < LOOM_DTYPE_COUNT; d++)
            if (mask & LOOM_DTYPE_BIT(d))
                allowed[na++] = d;
        if (na == 0)
            return 0;
        const loom_dtype dt = (loom_dtype)allowed[(k >> 1) % na];
        const int32_t ndim = arg->ndim >= 0 ? arg->ndim : (k >> 5) % 4;
        if (ndim > LOOM_MAX_NDIM)
            return 0;
        int64_t shape[LOOM_MAX_NDIM];
        for (int32_t d = 0; d < ndim; d++)
            shape[d] = fz_u8(c) % 6;
        if (loom_tensor_new(&in[i], dt, ndim, shape, NULL) != LOOM_OK)
            return 0;
        fz_debug("input %s: %s, %d dims [%lld, %lld, %lld, %lld]", arg->name, loom_dtype_name(dt), (int)ndim,
                 (long long)(ndim > 0 ? shape[0] : -1), (long long)(ndim > 1 ? shape[1] : -1),
                 (long long)(ndim > 2 ? shape[2] : -1), (long long)(ndim > 3 ? shape[3] : -1));
        unsigned char *p = loom_data(in[i]);
        const size_t item = loom_dtype_size(dt), nb = loom_tensor_nbytes(in[i]);
        for (size_t b = 0; b < nb; b += item) {
            rng = rng * 1664525u + 1013904223u;
            const int small = (int)(rng >> 28) % 4;     /* 0..3: valid as an index, a length, a box corner */
            const float f = (float)small + (float)((rng >> 8) & 0xff) / 256.0f;
            uint32_t bits;
            memcpy(&bits, &f, 4);
            switch (dt) {
            case LOOM_DTYPE_F32: memcpy(p + b, &f, 4); break;
            case LOOM_DTYPE_C64: memcpy(p + b, &f, 4); memcpy(p + b + 4, &f, 4); break;
            case LOOM_DTYPE_F64: { double d = f; memcpy(p + b, &d, 8); break; }
            case LOOM_DTYPE_C128: { double d = f; memcpy(p + b, &d, 8); memcpy(p + b + 8, &d, 8); break; }
            case LOOM_DTYPE_BF16: { uint16_t h = (uint16_t)(bits >> 16); memcpy(p + b, &h, 2); break; }
            case LOOM_DTYPE_F16: {
                /* f in [0, 4): exponent 15 + e, 10 mantissa bits of f32's 23 */
                int e = (int)((bits >> 23) & 0xff) - 127;
                uint16_t h = f < 6.2e-5f ? 0 : (uint16_t)((e + 15) << 10 | ((bits >> 13) & 0x3ff));
                memcpy(p + b, &h, 2);
                break;
            }
            case LOOM_DTYPE_F8E4M3: p[b] = (unsigned char)(0x30 + ((rng >> 8) & 0x1f)); break;  /* 0.25 .. 3.75 */
            case LOOM_DTYPE_I64: { int64_t v = small; memcpy(p + b, &v, 8); break; }
            case LOOM_DTYPE_I32: { int32_t v = small; memcpy(p + b, &v, 4); break; }
            case LOOM_DTYPE_I16: { int16_t v = (int16_t)small; memcpy(p + b, &v, 2); break; }
            case LOOM_DTYPE_U16: { uint16_t v = (uint16_t)small; memcpy(p + b, &v, 2); break; }
            case LOOM_DTYPE_U32: { uint32_t v = (uint32_t)small; memcpy(p + b, &v, 4); break; }
            case LOOM_DTYPE_BOOL: p[b] = (unsigned char)(small & 1); break;
            default: p[b] = (unsigned char)small; break;    /* i8, u8 */
            }
        }
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_cursor c = { data, size };
    if (size < 2)
        return 0;

    /* the owner: an op, a class, or fuzzed text */
    const uint8_t sel = fz_u8(&c);
    const loom_op_schema *op = NULL;
    const loom_object_class *cls = NULL;
    char *own = NULL;
    const char *owner;
    if (sel == 0xFF) {
        /* text; when it names an op or class, that one's attributes apply */
        own = fz_str(&c, 0, 64);
        owner = own;
        const loom_op *found = loom_op_find(own);
        op = found ? loom_op_schema_of(found) : NULL;
        for (int64_t i = 0; (op == NULL || op->object_class != NULL) && cls == NULL && i < n_classes; i++)
            if (strcmp(loom_object_class_at(i)->name, own) == 0)
                cls = loom_object_class_at(i);     /* fbgemm.tbe: the class, not its method */
        if (cls != NULL)
            op = NULL;
    } else if (sel % (n_ops + n_classes) < n_ops) {
        op = loom_op_schema_at(sel % (n_ops + n_classes));
        owner = op->name;
    } else {
        cls = loom_object_class_at(sel % (n_ops + n_classes) - n_ops);
        owner = cls->name;
    }
    const loom_attr_def *defs = op ? op->attrs : cls ? cls->attrs : NULL;
    const uint32_t n_defs = op ? op->n_attrs : cls ? cls->n_attrs : 0;

    loom_attrs *a = NULL;
    FZ_CHECK(loom_attrs_new(&a) == LOOM_OK, "attrs");
    int runnable = op != NULL || cls != NULL;
    double budget = 1;
    const int n_pairs = fz_u8(&c) % (MAX_PAIRS + 1);
    for (int k = 0; k < n_pairs && c.n > 0; k++) {
        const uint8_t pick = fz_u8(&c);
        char *nm = NULL;
        const char *name;
        const loom_attr_def *def = NULL;
        if (pick < 0xF0 && n_defs > 0) {
            def = &defs[pick % n_defs];
            name = def->name;
        } else {
            nm = fz_str(&c, 0, 48);
            name = nm;
            def = defs ? find_def(defs, n_defs, name) : NULL;
        }
        char *value = fz_str(&c, 0, MAX_VALUE);
        if (def != NULL && def->type == LOOM_ATTR_TENSOR) {
            /* a tensor attribute names a .npy file: the rest of the input */
            free(value);
            value = strdup(fz_file(c.p, c.n));
            c.n = 0;
        }
        loom_status st = loom_attrs_parse(a, owner, name, value);
        fz_debug("%s: %s = '%s': %s", owner, name, value, loom_status_name(st));
        if (st != LOOM_OK) {
            FZ_CHECK(loom_last_error()[0] != '\0', "refusal %s without a message", loom_status_name(st));
            FZ_CHECK(strcmp(loom_status_name(st), "?") != 0, "unknown status %d", (int)st);
        } else if (def != NULL && !cheap(def, value, &budget)) {
            runnable = 0;
        }
        free(nm);
        free(value);
    }

    if (runnable && cls != NULL) {
        loom_object *obj = (loom_object *)1;
        loom_status st = loom_object_create(&obj, cls->name, a, NULL);
        fz_debug("create %s: %s", cls->name, loom_status_name(st));
        FZ_CHECK(st != LOOM_OK || obj != NULL, "create succeeded without an object");
        FZ_CHECK(st == LOOM_OK || obj == NULL, "failed create left an object");
        loom_object_free(obj);
    } else if (runnable && op != NULL && op->object_class == NULL && op->n_inputs <= 16 && op->n_outputs <= 16) {
        loom_tensor *in[16] = { NULL }, *out[16] = { NULL };
        if (make_inputs(op, &c, in)) {
            loom_status st = loom_run(op->name, (const loom_tensor *const *)in, (int32_t)op->n_inputs, a, out,
                                      (int32_t)op->n_outputs, NULL);
            fz_debug("run %s: %s %s", op->name, loom_status_name(st), st == LOOM_OK ? "" : loom_last_error());
            if (st == LOOM_OK) {
                for (uint32_t o = 0; o < op->n_outputs; o++)
                    if (out[o] != NULL)
                        fz_touch_tensor(out[o]);
            } else {
                FZ_CHECK(loom_last_error()[0] != '\0', "failure %s without a message", loom_status_name(st));
            }
        }
        for (int i = 0; i < 16; i++) {
            loom_tensor_free(in[i]);
            loom_tensor_free(out[i]);
        }
    }
    loom_attrs_free(a);
    free(own);
    return 0;
}
