/* SPDX-License-Identifier: BSD-3-Clause */
/*
** registry.c - registration of packs (transactional) and the published
** snapshot of ops, kernels and object classes.
**
** Invariant: a pack's registrations reach a snapshot only through
** loom__registrar_commit, which checks them all against the current
** snapshot first; a failed check publishes nothing, and nothing of a
** refused pack (kernel, class, device provider) stays reachable.
**
** Every field of a schema, kernel, object class and device provider is
** checked when it is registered; an invalid one refuses the whole pack, with
** a message naming the op (or class) and the field.
**
** Clash rule: the first pack to define an op (packs load in search order)
** holds its definition. A later pack that defines the same op differently
** loses only that registration: its definition and its kernels for that op
** are dropped, and its scan entry names both packs, why the first one is in
** force, and the first difference; the rest of the later pack loads. The
** same holds for a kernel (same op, backend and device type) or an object
** class that an earlier pack already registered. A pack that contradicts
** itself (one op defined twice differently, one class registered twice) is
** refused whole, as is a pack that would take an op past LOOM_MAX_KERNELS.
** A dropped registration returns LOOM_OK to the pack, whose init goes on.
*/
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"

pthread_mutex_t loom__registry_lock = PTHREAD_MUTEX_INITIALIZER;
loom__pack **loom__packs;
int64_t loom__n_packs;

static _Atomic(loom__snapshot *) current;

const loom__snapshot *loom__snapshot_get(void)
{
    return atomic_load_explicit(&current, memory_order_acquire);
}

/* ------------------------------------------------------------- hashing */

static uint64_t fnv(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static uint64_t fnv_str(uint64_t h, const char *s)
{
    return s != NULL ? fnv(h, s, strlen(s) + 1) : fnv(h, "", 1);
}

/* Hash of a default; only ever called on values check_attr_defs accepted. */
static uint64_t hash_value(uint64_t h, const loom_attr_value *v)
{
    h = fnv(h, &v->is_set, sizeof v->is_set);
    if (!v->is_set)
        return h;
    switch (v->type) {
    case LOOM_ATTR_INT:    return fnv(h, &v->u.i, sizeof v->u.i);
    case LOOM_ATTR_FLOAT:  return fnv(h, &v->u.f, sizeof v->u.f);
    case LOOM_ATTR_BOOL:   return fnv(h, &v->u.b, sizeof v->u.b);
    case LOOM_ATTR_STRING: return fnv_str(h, v->u.s);
    case LOOM_ATTR_INTS:   return fnv(h, v->u.ints, (size_t)v->count * sizeof(int64_t));
    case LOOM_ATTR_FLOATS: return fnv(h, v->u.floats, (size_t)v->count * sizeof(double));
    default:               return h;
    }
}

static uint64_t hash_args(uint64_t h, const loom_arg_def *a, uint32_t n)
{
    h = fnv(h, &n, sizeof n);
    for (uint32_t i = 0; i < n; i++) {
        h = fnv_str(h, a[i].name);
        h = fnv(h, &a[i].dtypes, sizeof a[i].dtypes);
        h = fnv(h, &a[i].flags, sizeof a[i].flags);
        h = fnv(h, &a[i].ndim, sizeof a[i].ndim);
    }
    return h;
}

/* The choices in a canonical order (by attribute index), each list as given. */
static uint64_t hash_choices(uint64_t h, const loom_attr_choices *c, uint32_t n)
{
    uint32_t last = 0;
    for (uint32_t done = 0; done < n; done++) {
        const loom_attr_choices *next = NULL;
        for (uint32_t i = 0; i < n; i++)
            if ((done == 0 || c[i].attr > last) && (next == NULL || c[i].attr < next->attr))
                next = &c[i];
        last = next->attr;
        h = fnv(h, &next->attr, sizeof next->attr);
        for (const char *const *v = next->values; *v != NULL; v++)
            h = fnv_str(h, *v);
        h = fnv(h, "", 1);
    }
    return h;
}

/* Canonical hash of every data member of a schema (docs excluded). */
static uint64_t schema_hash(const loom_op_schema *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    h = fnv_str(h, s->name);
    h = fnv(h, &s->version, sizeof s->version);
    h = hash_args(h, s->inputs, s->n_inputs);
    h = hash_args(h, s->outputs, s->n_outputs);
    h = fnv(h, &s->n_attrs, sizeof s->n_attrs);
    for (uint32_t i = 0; i < s->n_attrs; i++) {
        h = fnv_str(h, s->attrs[i].name);
        h = fnv(h, &s->attrs[i].type, sizeof s->attrs[i].type);
        h = fnv(h, &s->attrs[i].flags, sizeof s->attrs[i].flags);
        h = hash_value(h, &s->attrs[i].dflt);
    }
    h = fnv_str(h, s->object_class);
    if (LOOM_HAS_MEMBER(s, loom_op_schema, choices))
        h = hash_choices(h, s->choices, s->n_choices);
    return h;
}

static bool arg_diff(const char *what, uint32_t i, const loom_arg_def *a, const loom_arg_def *b, char *buf,
                     size_t size)
{
    if (strcmp(a->name, b->name) != 0)
        snprintf(buf, size, "%s %u is '%s' vs '%s'", what, i, a->name, b->name);
    else if (a->dtypes != b->dtypes)
        snprintf(buf, size, "%s '%s' takes dtypes 0x%llx vs 0x%llx", what, a->name,
                 (unsigned long long)a->dtypes, (unsigned long long)b->dtypes);
    else if (a->flags != b->flags)
        snprintf(buf, size, "%s '%s' has flags 0x%x vs 0x%x", what, a->name, a->flags, b->flags);
    else if (a->ndim != b->ndim)
        snprintf(buf, size, "%s '%s' has rank %d vs %d", what, a->name, a->ndim, b->ndim);
    else
        return false;
    return true;
}

/* The first difference between two valid schemas of one name, in words. */
static void schema_diff(const loom_op_schema *a, const loom_op_schema *b, char *buf, size_t size)
{
    if (a->version != b->version) {
        snprintf(buf, size, "version %u vs %u", a->version, b->version);
        return;
    }
    if (a->n_inputs != b->n_inputs) {
        snprintf(buf, size, "%u inputs vs %u", a->n_inputs, b->n_inputs);
        return;
    }
    if (a->n_outputs != b->n_outputs) {
        snprintf(buf, size, "%u outputs vs %u", a->n_outputs, b->n_outputs);
        return;
    }
    if (a->n_attrs != b->n_attrs) {
        snprintf(buf, size, "%u attributes vs %u", a->n_attrs, b->n_attrs);
        return;
    }
    for (uint32_t i = 0; i < a->n_inputs; i++)
        if (arg_diff("input", i, &a->inputs[i], &b->inputs[i], buf, size))
            return;
    for (uint32_t i = 0; i < a->n_outputs; i++)
        if (arg_diff("output", i, &a->outputs[i], &b->outputs[i], buf, size))
            return;
    for (uint32_t i = 0; i < a->n_attrs; i++) {
        const loom_attr_def *x = &a->attrs[i], *y = &b->attrs[i];
        if (strcmp(x->name, y->name) != 0)
            snprintf(buf, size, "attribute %u is '%s' vs '%s'", i, x->name, y->name);
        else if (x->type != y->type)
            snprintf(buf, size, "attribute '%s' has type %d vs %d", x->name, x->type, y->type);
        else if (x->flags != y->flags)
            snprintf(buf, size, "attribute '%s' has flags 0x%x vs 0x%x", x->name, x->flags, y->flags);
        else if (hash_value(0, &x->dflt) != hash_value(0, &y->dflt))
            snprintf(buf, size, "attribute '%s' has another default", x->name);
        else
            continue;
        return;
    }
    {
        uint32_t na = LOOM_HAS_MEMBER(a, loom_op_schema, choices) ? a->n_choices : 0;
        uint32_t nb = LOOM_HAS_MEMBER(b, loom_op_schema, choices) ? b->n_choices : 0;
        if (hash_choices(0, na ? a->choices : NULL, na) != hash_choices(0, nb ? b->choices : NULL, nb)) {
            snprintf(buf, size, "the choices of string attributes (%u lists vs %u)", na, nb);
            return;
        }
    }
    if ((a->object_class == NULL) != (b->object_class == NULL)
        || (a->object_class != NULL && strcmp(a->object_class, b->object_class) != 0))
        snprintf(buf, size, "object class %s vs %s", a->object_class ? a->object_class : "(none)",
                 b->object_class ? b->object_class : "(none)");
    else
        snprintf(buf, size, "no member differs, yet the hashes do");
}

/* ----------------------------------------------------------- validation */

/* s for a message: at most 48 bytes, anything but printable ASCII as '?'. */
static const char *shown(const char *s, char *buf, size_t size)
{
    size_t i = 0;
    if (s == NULL)
        return "(null)";
    for (; s[i] != '\0' && i + 4 < size && i < 48; i++)
        buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
    if (s[i] != '\0')
        buf[i++] = '.', buf[i++] = '.', buf[i++] = '.';
    buf[i] = '\0';
    return buf;
}
#define SHOWN(s) shown((s), (char[64]){ 0 }, 64)

#define STR_(x) #x
#define STR(x) STR_(x)
#define TOO_LONG "is as long as LOOM_MAX_NAME (" STR(LOOM_MAX_NAME) " bytes) or longer"

static bool word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

/* NULL when s is a valid argument, attribute, backend or device name: 1 to
** LOOM_MAX_NAME - 1 bytes of [A-Za-z0-9_-] (with '.' between words when
** qualified, which then needs at least two: "domain.op"); else what is wrong.
** The alphabet keeps names usable in LOOM_BACKENDS rules (',' ';' '=' and
** glob characters are syntax there) and in the CLI's NAME=VALUE forms. */
static const char *bad_name(const char *s, bool qualified)
{
    size_t n;
    bool dot = false;

    if (s == NULL)
        return "is NULL";
    if (s[0] == '\0')
        return "is empty";
    n = strnlen(s, LOOM_MAX_NAME);
    if (n == LOOM_MAX_NAME)
        return TOO_LONG;
    for (size_t i = 0; i < n; i++) {
        if (qualified && s[i] == '.') {
            if (i == 0 || i + 1 == n || s[i + 1] == '.')
                return "has an empty part between dots (the form is domain.name)";
            dot = true;
        } else if (!word_char(s[i])) {
            return qualified ? "has a character other than A-Z a-z 0-9 _ - and '.'"
                             : "has a character other than A-Z a-z 0-9 _ -";
        }
    }
    if (qualified && !dot)
        return "is not of the form domain.name";
    return NULL;
}

/* NULL when s is NULL or printable ASCII without spaces, shorter than
** LOOM_MAX_NAME (kernel implementation names: "cpu:avx2-blocked"). */
static const char *bad_label(const char *s)
{
    size_t n;
    if (s == NULL)
        return NULL;
    n = strnlen(s, LOOM_MAX_NAME);
    if (n == 0)
        return "is empty (use NULL for none)";
    if (n == LOOM_MAX_NAME)
        return TOO_LONG;
    for (size_t i = 0; i < n; i++)
        if (s[i] <= 0x20 || s[i] >= 0x7f)
            return "has a space or a character that is not printable ASCII";
    return NULL;
}

/* Inputs or outputs (`what` = "inputs"/"outputs") of the op `owner`, which
** has n_inputs inputs.
**
** Names are unique within the inputs and within the outputs. An input may
** share its name with an output or an attribute: the CLI names them with
** separate options (--in, --out, --attr) and the API passes tensors by
** position, so no call becomes ambiguous; the same name twice in one table
** would make the second unreachable (`--in NAME=` picks the first). */
static loom_status check_args(const char *owner, const char *what, const loom_arg_def *a, uint32_t n,
                              uint32_t n_inputs)
{
    const bool inputs = what[0] == 'i';
    const char *why;

    for (uint32_t i = 0; i < n; i++) {
        uint32_t f = a[i].flags;
        int32_t same = LOOM_ARG_SAME_DTYPE_INDEX(f);
        if ((why = bad_name(a[i].name, false)) != NULL)
            return loom__fail(LOOM_EINVAL, "%s: %s[%u].name '%s' %s", owner, what, i, SHOWN(a[i].name), why);
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(a[j].name, a[i].name) == 0)
                return loom__fail(LOOM_EINVAL, "%s: %s[%u] and %s[%u] are both named '%s' (names must be unique)",
                                  owner, what, j, what, i, a[i].name);
        if ((a[i].dtypes & ~LOOM_DTYPES_ALL) != 0)
            return loom__fail(LOOM_EINVAL, "%s: %s[%u] '%s': .dtypes 0x%llx has bits outside LOOM_DTYPES_ALL "
                              "(0x%llx)", owner, what, i, a[i].name, (unsigned long long)a[i].dtypes,
                              (unsigned long long)LOOM_DTYPES_ALL);
        if ((f & ~(uint32_t)LOOM_ARG_FLAGS_KNOWN) != 0)
            return loom__fail(LOOM_EINVAL, "%s: %s[%u] '%s': .flags 0x%x has bits outside LOOM_ARG_FLAGS_KNOWN "
                              "(0x%x)", owner, what, i, a[i].name, f, (unsigned)LOOM_ARG_FLAGS_KNOWN);
        if (a[i].ndim < -1 || a[i].ndim > LOOM_MAX_NDIM)
            return loom__fail(LOOM_EINVAL, "%s: %s[%u] '%s': .ndim %d is outside -1..%d (LOOM_MAX_NDIM)", owner,
                              what, i, a[i].name, a[i].ndim, LOOM_MAX_NDIM);
        if (same >= 0 && (inputs ? (uint32_t)same >= i : (uint32_t)same >= n_inputs))
            return loom__fail(LOOM_EINVAL, "%s: %s[%u] '%s': LOOM_ARG_SAME_DTYPE_AS(%d) names no %s", owner, what,
                              i, a[i].name, same, inputs ? "earlier input" : "input");
        if ((f & LOOM_ARG_JAGGED) && (f & LOOM_ARG_OFFSETS))
            return loom__fail(LOOM_EINVAL, "%s: %s[%u] '%s': .flags has both LOOM_ARG_JAGGED and LOOM_ARG_OFFSETS",
                              owner, what, i, a[i].name);
        if (f & LOOM_ARG_JAGGED) {
            size_t len = strlen(a[i].name);
            if (i + 1 == n || !(a[i + 1].flags & LOOM_ARG_OFFSETS) || a[i + 1].name == NULL
                || strncmp(a[i + 1].name, a[i].name, len) != 0 || strcmp(a[i + 1].name + len, "_offsets") != 0)
                return loom__fail(LOOM_EINVAL, "%s: %s[%u] '%s' is LOOM_ARG_JAGGED: the next %s must be its "
                                  "LOOM_ARG_OFFSETS tensor '%s_offsets'", owner, what, i, a[i].name, what,
                                  a[i].name);
        }
        if (f & LOOM_ARG_OFFSETS) {
            if (i == 0 || !(a[i - 1].flags & LOOM_ARG_JAGGED))
                return loom__fail(LOOM_EINVAL, "%s: %s[%u] '%s' is LOOM_ARG_OFFSETS but does not follow a "
                                  "LOOM_ARG_JAGGED values tensor", owner, what, i, a[i].name);
            if ((a[i].dtypes != 0 && a[i].dtypes != LOOM_DTYPE_BIT(LOOM_DTYPE_I64))
                || (a[i].ndim != -1 && a[i].ndim != 1))
                return loom__fail(LOOM_EINVAL, "%s: %s[%u] '%s': offsets are i64 of rank 1 (.dtypes 0x%llx, "
                                  ".ndim %d)", owner, what, i, a[i].name, (unsigned long long)a[i].dtypes,
                                  a[i].ndim);
        }
    }
    return LOOM_OK;
}

/* The allowed values of string attributes (ABI 1.1) of `owner`, whose
** attribute table (already checked) is attrs[n_attrs]. */
static loom_status check_choices(const char *owner, const loom_attr_choices *c, uint32_t n, const loom_attr_def *attrs,
                                 uint32_t n_attrs)
{
    const char *why;

    if (n == 0)
        return LOOM_OK;
    if (c == NULL)
        return loom__fail(LOOM_EINVAL, "%s: .choices is NULL with .n_choices %u", owner, n);
    if (n > n_attrs)
        return loom__fail(LOOM_EINVAL, "%s: .n_choices %u is more than its %u attributes", owner, n, n_attrs);
    for (uint32_t i = 0; i < n; i++) {
        const loom_attr_def *d;
        int64_t k = 0;
        if (c[i].attr >= n_attrs)
            return loom__fail(LOOM_EINVAL, "%s: choices[%u].attr %u is not an attribute index (%u attributes)",
                              owner, i, c[i].attr, n_attrs);
        d = &attrs[c[i].attr];
        for (uint32_t j = 0; j < i; j++)
            if (c[j].attr == c[i].attr)
                return loom__fail(LOOM_EINVAL, "%s: choices[%u] and choices[%u] are both for attribute '%s'", owner,
                                  j, i, d->name);
        if (d->type != LOOM_ATTR_STRING)
            return loom__fail(LOOM_EINVAL, "%s: choices[%u] is for attribute '%s', which is not a string", owner, i,
                              d->name);
        if (c[i].values == NULL || c[i].values[0] == NULL)
            return loom__fail(LOOM_EINVAL, "%s: choices[%u] (attribute '%s') has no values", owner, i, d->name);
        for (; c[i].values[k] != NULL; k++) {
            if (k == LOOM_MAX_ATTR_COUNT)
                return loom__fail(LOOM_EINVAL, "%s: choices[%u] (attribute '%s') has more than %d values "
                                  "(LOOM_MAX_ATTR_COUNT), or no NULL at its end", owner, i, d->name,
                                  LOOM_MAX_ATTR_COUNT);
            if ((why = bad_label(c[i].values[k])) != NULL)
                return loom__fail(LOOM_EINVAL, "%s: choices[%u].values[%lld] '%s' (attribute '%s') %s", owner, i,
                                  (long long)k, SHOWN(c[i].values[k]), d->name, why);
            for (int64_t j = 0; j < k; j++)
                if (strcmp(c[i].values[j], c[i].values[k]) == 0)
                    return loom__fail(LOOM_EINVAL, "%s: choices[%u] (attribute '%s') lists '%s' twice", owner, i,
                                      d->name, c[i].values[k]);
        }
        if (d->dflt.is_set) {
            bool listed = false;
            for (int64_t j = 0; j < k && !listed; j++)
                listed = strcmp(c[i].values[j], d->dflt.u.s) == 0;
            if (!listed)
                return loom__fail(LOOM_EINVAL, "%s: attribute '%s': the default '%s' is not one of its choices "
                                  "(choices[%u])", owner, d->name, SHOWN(d->dflt.u.s), i);
        }
    }
    return LOOM_OK;
}

/* The attribute table of the op or object class `owner` ("op vision.nms").
** Names are unique within the table. */
static loom_status check_attr_defs(const char *owner, const loom_attr_def *a, uint32_t n)
{
    const uint32_t constraints = LOOM_ATTR_FINITE | LOOM_ATTR_POSITIVE | LOOM_ATTR_NONNEG;
    const char *why;
    loom_status st;

    for (uint32_t i = 0; i < n; i++) {
        const loom_attr_def *d = &a[i];
        const loom_attr_value *v = &d->dflt;

        if ((why = bad_name(d->name, false)) != NULL)
            return loom__fail(LOOM_EINVAL, "%s: attrs[%u].name '%s' %s", owner, i, SHOWN(d->name), why);
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(a[j].name, d->name) == 0)
                return loom__fail(LOOM_EINVAL, "%s: attrs[%u] and attrs[%u] are both named '%s' (names must be "
                                  "unique)", owner, j, i, d->name);
        if (d->type < LOOM_ATTR_INT || d->type > LOOM_ATTR_TENSOR)
            return loom__fail(LOOM_EINVAL, "%s: attribute '%s' (attrs[%u]): .type %d is not a loom_attr_type",
                              owner, d->name, i, d->type);
        if ((d->flags & ~LOOM_ATTR_FLAGS_KNOWN) != 0)
            return loom__fail(LOOM_EINVAL, "%s: attribute '%s' (attrs[%u]): .flags 0x%x has bits outside "
                              "LOOM_ATTR_FLAGS_KNOWN (0x%x)", owner, d->name, i, d->flags, LOOM_ATTR_FLAGS_KNOWN);
        if ((d->flags & constraints) != 0 && d->type != LOOM_ATTR_INT && d->type != LOOM_ATTR_FLOAT
            && d->type != LOOM_ATTR_INTS && d->type != LOOM_ATTR_FLOATS)
            return loom__fail(LOOM_EINVAL, "%s: attribute '%s' (attrs[%u]): .flags LOOM_ATTR_FINITE/POSITIVE/"
                              "NONNEG apply to int, float, ints and floats attributes only", owner, d->name, i);
        if (v->is_set != 0 && v->is_set != 1)
            return loom__fail(LOOM_EINVAL, "%s: attribute '%s' (attrs[%u]): .dflt.is_set is %d (0 or 1)", owner,
                              d->name, i, v->is_set);
        if (!v->is_set)
            continue;
        if (d->flags & LOOM_ATTR_REQUIRED)
            return loom__fail(LOOM_EINVAL, "%s: attribute '%s' (attrs[%u]) is LOOM_ATTR_REQUIRED and has a "
                              "default (.dflt.is_set must be 0)", owner, d->name, i);
        if (v->type != d->type)
            return loom__fail(LOOM_EINVAL, "%s: attribute '%s' (attrs[%u]): .dflt.type %d differs from the "
                              "attribute's .type %d", owner, d->name, i, v->type, d->type);
        switch (d->type) {
        case LOOM_ATTR_INT:
        case LOOM_ATTR_FLOAT:
        case LOOM_ATTR_BOOL:
            if (v->count != 0 && v->count != 1)
                return loom__fail(LOOM_EINVAL, "%s: attribute '%s' (attrs[%u]): .dflt.count %lld for a scalar "
                                  "(0 or 1)", owner, d->name, i, (long long)v->count);
            if (d->type == LOOM_ATTR_BOOL && v->u.b != 0 && v->u.b != 1)
                return loom__fail(LOOM_EINVAL, "%s: attribute '%s' (attrs[%u]): bool default %d (0 or 1)", owner,
                                  d->name, i, v->u.b);
            break;
        case LOOM_ATTR_STRING:
            if (v->u.s == NULL)
                return loom__fail(LOOM_EINVAL, "%s: attribute '%s' (attrs[%u]): string default .dflt.u.s is NULL",
                                  owner, d->name, i);
            if (v->count < 0 || v->count > LOOM_MAX_ATTR_COUNT
                || strnlen(v->u.s, (size_t)v->count + 1) != (size_t)v->count)
                return loom__fail(LOOM_EINVAL, "%s: attribute '%s' (attrs[%u]): .dflt.count %lld is not the "
                                  "length of the string default (at most %d, LOOM_MAX_ATTR_COUNT)", owner, d->name,
                                  i, (long long)v->count, LOOM_MAX_ATTR_COUNT);
            break;
        case LOOM_ATTR_INTS:
        case LOOM_ATTR_FLOATS:
            if (v->count < 0 || v->count > LOOM_MAX_ATTR_COUNT)
                return loom__fail(LOOM_EINVAL, "%s: attribute '%s' (attrs[%u]): .dflt.count %lld is outside "
                                  "0..%d (LOOM_MAX_ATTR_COUNT)", owner, d->name, i, (long long)v->count,
                                  LOOM_MAX_ATTR_COUNT);
            if (v->count > 0 && v->u.ints == NULL)
                return loom__fail(LOOM_EINVAL, "%s: attribute '%s' (attrs[%u]): .dflt has %lld elements and NULL "
                                  "data", owner, d->name, i, (long long)v->count);
            break;
        default:   /* LOOM_ATTR_TENSOR */
            return loom__fail(LOOM_EINVAL, "%s: attribute '%s' (attrs[%u]): a tensor attribute cannot have a "
                              "default", owner, d->name, i);
        }
        if ((st = loom__attr_check_value(d, v, owner)) != LOOM_OK)
            return loom__fail(st, "%s (the default, attrs[%u].dflt)", loom_last_error(), i);
    }
    return LOOM_OK;
}

/* The ABI 1.0 layouts: a writer's struct_size must cover them whole. */
#define SIZE_1_0(T, last) (offsetof(T, last) + sizeof(((const T *)0)->last))

static loom_status check_schema(const loom_op_schema *s)
{
    char owner[LOOM_MAX_NAME + 8];
    const char *why;
    loom_status st;

    if (s == NULL)
        return loom__fail(LOOM_EINVAL, "op schema is NULL");
    if (s->struct_size < SIZE_1_0(loom_op_schema, cost))
        return loom__fail(LOOM_EABI, "op schema %s: struct_size %u is smaller than ABI 1.0's %zu",
                          s->struct_size >= SIZE_1_0(loom_op_schema, name) ? SHOWN(s->name) : "(unnamed)",
                          s->struct_size, SIZE_1_0(loom_op_schema, cost));
    if ((why = bad_name(s->name, true)) != NULL)
        return loom__fail(LOOM_EINVAL, "op name '%s' %s (ops are named domain.op)", SHOWN(s->name), why);
    snprintf(owner, sizeof owner, "op %s", s->name);
    if (s->version == 0)
        return loom__fail(LOOM_EINVAL, "%s: .version is 0 (op versions start at 1)", owner);
    if (s->n_inputs > LOOM__MAX_ARGS)
        return loom__fail(LOOM_EINVAL, "%s: .n_inputs %u is over the limit of %d (LOOM_MAX_ARGS)", owner,
                          s->n_inputs, LOOM__MAX_ARGS);
    if (s->n_outputs > LOOM__MAX_ARGS)
        return loom__fail(LOOM_EINVAL, "%s: .n_outputs %u is over the limit of %d (LOOM_MAX_ARGS)", owner,
                          s->n_outputs, LOOM__MAX_ARGS);
    if (s->n_attrs > LOOM__MAX_ATTRS)
        return loom__fail(LOOM_EINVAL, "%s: .n_attrs %u is over the limit of %d (LOOM_MAX_ATTRS)", owner,
                          s->n_attrs, LOOM__MAX_ATTRS);
    if (s->n_inputs > 0 && s->inputs == NULL)
        return loom__fail(LOOM_EINVAL, "%s: .inputs is NULL with .n_inputs %u", owner, s->n_inputs);
    if (s->n_outputs > 0 && s->outputs == NULL)
        return loom__fail(LOOM_EINVAL, "%s: .outputs is NULL with .n_outputs %u", owner, s->n_outputs);
    if (s->n_attrs > 0 && s->attrs == NULL)
        return loom__fail(LOOM_EINVAL, "%s: .attrs is NULL with .n_attrs %u", owner, s->n_attrs);
    if ((st = check_args(owner, "inputs", s->inputs, s->n_inputs, s->n_inputs)) != LOOM_OK
        || (st = check_args(owner, "outputs", s->outputs, s->n_outputs, s->n_inputs)) != LOOM_OK
        || (st = check_attr_defs(owner, s->attrs, s->n_attrs)) != LOOM_OK)
        return st;
    if (LOOM_HAS_MEMBER(s, loom_op_schema, choices)
        && (st = check_choices(owner, s->choices, s->n_choices, s->attrs, s->n_attrs)) != LOOM_OK)
        return st;
    if (s->object_class != NULL && (why = bad_name(s->object_class, true)) != NULL)
        return loom__fail(LOOM_EINVAL, "%s: .object_class '%s' %s (classes are named domain.class)", owner,
                          SHOWN(s->object_class), why);
    return LOOM_OK;
}

/* ------------------------------------------------------------ registrar */

/* What one pack said about one op name. */
enum { OP_NEW, OP_KNOWN, OP_DROPPED };
typedef struct staged_op {
    const loom_op_schema *schema;   /* the first schema this pack gave for the name */
    uint64_t hash;
    int state;                      /* OP_NEW: this pack defines it; OP_KNOWN: identical to the
                                    ** published definition; OP_DROPPED: differs from it */
    int64_t n_kernels;              /* this pack's kernels for it (OP_DROPPED: dropped ones) */
    const struct loom_op *published;    /* OP_KNOWN, OP_DROPPED */
    char *diff;                     /* OP_DROPPED: the first difference */
} staged_op;

struct loom_registrar {
    loom__pack *pack;
    staged_op *ops;       int64_t n_ops, cap_ops;
    loom__kernel **kernels; int64_t n_kernels, cap_kernels;
    loom__class **classes;  int64_t n_classes, cap_classes;
    const loom_device_provider *providers[LOOM_MAX_PACK_PROVIDERS]; int n_providers;
    char **notes;         int64_t n_notes, cap_notes;   /* dropped kernels and classes */
    loom_status failed;   /* first registration error: init success still aborts */
    char *failed_msg;     /* its message */
};

static bool grow(void **arr, int64_t *cap, int64_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    int64_t n = *cap ? 2 * *cap : 16;
    while (n < need)
        n *= 2;
    void *p = realloc(*arr, (size_t)n * elem);
    if (p == NULL)
        return false;
    *arr = p;
    *cap = n;
    return true;
}

/* printf into a new string (NULL when out of memory). */
static char *format(const char *fmt, ...) LOOM_PRINTF(1, 2);
static char *format(const char *fmt, ...)
{
    va_list ap;
    int n;
    char *s;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || (s = malloc((size_t)n + 1)) == NULL)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

loom_status loom__registrar_begin(loom_registrar **out, loom__pack *pack)
{
    *out = calloc(1, sizeof **out);
    if (*out == NULL)
        return loom__fail(LOOM_ENOMEM, "out of memory");
    (*out)->pack = pack;
    return LOOM_OK;
}

void loom__registrar_abort(loom_registrar *reg)
{
    if (reg == NULL)
        return;
    loom__interfaces_abort(reg);   /* drops what is still staged: nothing after a commit */
    for (int64_t i = 0; i < reg->n_kernels; i++)
        free(reg->kernels[i]);
    for (int64_t i = 0; i < reg->n_classes; i++)
        free(reg->classes[i]);
    for (int64_t i = 0; i < reg->n_ops; i++)
        free(reg->ops[i].diff);
    for (int64_t i = 0; i < reg->n_notes; i++)
        free(reg->notes[i]);
    free(reg->ops);
    free(reg->kernels);
    free(reg->classes);
    free(reg->notes);
    free(reg->failed_msg);
    free(reg);
}

static loom_status record(loom_registrar *reg, loom_status st)
{
    if (st != LOOM_OK && reg->failed == LOOM_OK) {
        reg->failed = st;
        reg->failed_msg = loom__strdup(loom_last_error());
    }
    return st;
}

static loom_status add_note(loom_registrar *reg, char *note)
{
    if (note == NULL || !grow((void **)&reg->notes, &reg->cap_notes, reg->n_notes + 1, sizeof *reg->notes)) {
        free(note);
        return record(reg, loom__fail(LOOM_ENOMEM, "out of memory"));
    }
    reg->notes[reg->n_notes++] = note;
    return LOOM_OK;
}

/* Why pack p holds what it registered, for messages. */
static const char *held_because(const loom__pack *p)
{
    return p->origin != NULL ? p->origin : "it was loaded first";
}

static staged_op *find_own(loom_registrar *reg, const char *name)
{
    for (int64_t i = 0; i < reg->n_ops; i++)
        if (strcmp(reg->ops[i].schema->name, name) == 0)
            return &reg->ops[i];
    return NULL;
}

/* Validate schema and note what this pack says about its name (*out). */
static loom_status define(loom_registrar *reg, const loom_op_schema *schema, staged_op **out)
{
    const loom__snapshot *snap = loom__snapshot_get();
    const struct loom_op *published;
    staged_op *own, e = { 0 };
    char diff[512];
    loom_status st;

    if ((st = check_schema(schema)) != LOOM_OK)
        return record(reg, st);
    e.schema = schema;
    e.hash = schema_hash(schema);
    own = find_own(reg, schema->name);
    if (own != NULL) {
        if (own->hash == e.hash) {
            *out = own;
            return LOOM_OK;   /* identical re-definition: a no-op */
        }
        schema_diff(schema, own->schema, diff, sizeof diff);
        return record(reg, loom__fail(LOOM_ECONFLICT, "schema clash for %s: pack %s defines it twice, "
                                      "differently (%s: this registration vs the earlier one)", schema->name,
                                      reg->pack->path, diff));
    }
    published = snap != NULL ? loom__op_lookup(snap, schema->name) : NULL;
    e.state = OP_NEW;
    if (published != NULL) {
        e.published = published;
        e.state = published->hash == e.hash ? OP_KNOWN : OP_DROPPED;
        if (e.state == OP_DROPPED) {
            schema_diff(schema, published->schema, diff, sizeof diff);
            if ((e.diff = loom__strdup(diff)) == NULL)
                return record(reg, loom__fail(LOOM_ENOMEM, "out of memory"));
        }
    }
    if (!grow((void **)&reg->ops, &reg->cap_ops, reg->n_ops + 1, sizeof *reg->ops)) {
        free(e.diff);
        return record(reg, loom__fail(LOOM_ENOMEM, "out of memory"));
    }
    reg->ops[reg->n_ops] = e;
    *out = &reg->ops[reg->n_ops++];
    return LOOM_OK;
}

static loom_status define_op(loom_registrar *reg, const loom_op_schema *schema)
{
    staged_op *op;
    if (reg == NULL)
        return loom__fail(LOOM_EINVAL, "define_op: registrar is NULL (called outside init?)");
    return define(reg, schema, &op);
}

static loom_status register_kernel(loom_registrar *reg, const loom_kernel_desc *k)
{
    loom__kernel *kern;
    staged_op *op;
    const char *why, *impl;
    int32_t device_type;
    loom_status st;
    int n;

    if (reg == NULL)
        return loom__fail(LOOM_EINVAL, "register_kernel: registrar is NULL (called outside init?)");
    if (k == NULL || k->struct_size < SIZE_1_0(loom_kernel_desc, run))
        return record(reg, loom__fail(LOOM_EABI, "kernel descriptor is NULL or its struct_size is too small"));
    if (k->schema == NULL || k->run == NULL)
        return record(reg, loom__fail(LOOM_EINVAL, "kernel %s: schema and run are required",
                                      bad_label(k->impl) == NULL && k->impl ? k->impl : "(unnamed)"));
    /* An op seen first through a kernel is defined by it; a kernel whose
    ** schema differs from an earlier pack's definition is dropped with it. */
    if ((st = define(reg, k->schema, &op)) != LOOM_OK)
        return record(reg, st);
    if ((why = bad_name(k->backend, false)) != NULL)
        return record(reg, loom__fail(LOOM_EINVAL, "kernel of op %s: .backend '%s' %s", k->schema->name,
                                      SHOWN(k->backend), why));
    if ((why = bad_label(k->impl)) != NULL)
        return record(reg, loom__fail(LOOM_EINVAL, "kernel of op %s (backend %s): .impl '%s' %s", k->schema->name,
                                      k->backend, SHOWN(k->impl), why));
    impl = k->impl != NULL ? k->impl : k->backend;
    if ((k->dtypes & ~LOOM_DTYPES_ALL) != 0)
        return record(reg, loom__fail(LOOM_EINVAL, "kernel %s of op %s: .dtypes 0x%llx has bits outside "
                                      "LOOM_DTYPES_ALL (0x%llx)", impl, k->schema->name,
                                      (unsigned long long)k->dtypes, (unsigned long long)LOOM_DTYPES_ALL));
    if (k->device_type < 0)
        return record(reg, loom__fail(LOOM_EINVAL, "kernel %s of op %s: .device_type %d is negative", impl,
                                      k->schema->name, k->device_type));
    if (k->struct_size >= SIZE_1_0(loom_kernel_desc, flags) && (k->flags & ~LOOM_KERNEL_FLAGS_KNOWN) != 0)
        return record(reg, loom__fail(LOOM_EINVAL, "kernel %s of op %s: .flags 0x%x has bits this core does not "
                                      "know (LOOM_KERNEL_FLAGS_KNOWN 0x%x)", impl, k->schema->name, k->flags,
                                      LOOM_KERNEL_FLAGS_KNOWN));
    device_type = k->device_type != 0 ? k->device_type : LOOM_DEVICE_CPU;
    if (op->state == OP_DROPPED) {
        op->n_kernels++;   /* goes with its definition: reported at commit */
        return LOOM_OK;
    }
    /* Duplicate kernel: same op, backend and device as an earlier pack's. */
    for (int32_t j = 0; op->state == OP_KNOWN && j < op->published->n_kernels; j++) {
        const loom__kernel *o = op->published->kernels[j];
        if (strcmp(o->k.backend, k->backend) == 0 && o->k.device_type == device_type)
            return add_note(reg, format("%s: refused the duplicate kernel %s of %s: %s already provides a kernel "
                                        "for backend %s on device type %d (%s)", k->schema->name, impl,
                                        reg->pack->path, o->pack->path, k->backend, device_type,
                                        held_because(o->pack)));
    }
    n = snprintf(NULL, 0, "%s [%s]", k->schema->name, impl);
    if (!grow((void **)&reg->kernels, &reg->cap_kernels, reg->n_kernels + 1, sizeof *reg->kernels)
        || (kern = calloc(1, sizeof *kern + (size_t)n + 1)) == NULL)
        return record(reg, loom__fail(LOOM_ENOMEM, "out of memory"));
    memcpy(&kern->k, k, k->struct_size < sizeof kern->k ? k->struct_size : sizeof kern->k);
    kern->k.struct_size = sizeof kern->k;
    kern->k.device_type = device_type;
    kern->pack = reg->pack;
    snprintf(kern->label, (size_t)n + 1, "%s [%s]", k->schema->name, impl);
    reg->kernels[reg->n_kernels++] = kern;
    op->n_kernels++;
    return LOOM_OK;
}

static loom_status register_object_class(loom_registrar *reg, const loom_object_class *c)
{
    loom__class *cls;
    const loom__snapshot *s = loom__snapshot_get();
    const loom__class *known;
    char owner[LOOM_MAX_NAME + 16];
    const char *why;
    loom_status st;

    if (reg == NULL)
        return loom__fail(LOOM_EINVAL, "register_object_class: registrar is NULL (called outside init?)");
    if (c == NULL || c->struct_size < SIZE_1_0(loom_object_class, destroy))
        return record(reg, loom__fail(LOOM_EABI, "object class is NULL or its struct_size is too small"));
    if ((why = bad_name(c->name, true)) != NULL)
        return record(reg, loom__fail(LOOM_EINVAL, "object class name '%s' %s (classes are named domain.class)",
                                      SHOWN(c->name), why));
    snprintf(owner, sizeof owner, "object class %s", c->name);
    if (c->create == NULL || c->destroy == NULL)
        return record(reg, loom__fail(LOOM_EINVAL, "%s: .create and .destroy are required", owner));
    if (c->n_attrs > LOOM__MAX_ATTRS)
        return record(reg, loom__fail(LOOM_EINVAL, "%s: .n_attrs %u is over the limit of %d (LOOM_MAX_ATTRS)",
                                      owner, c->n_attrs, LOOM__MAX_ATTRS));
    if (c->n_attrs > 0 && c->attrs == NULL)
        return record(reg, loom__fail(LOOM_EINVAL, "%s: .attrs is NULL with .n_attrs %u", owner, c->n_attrs));
    if ((st = check_attr_defs(owner, c->attrs, c->n_attrs)) != LOOM_OK)
        return record(reg, st);
    if (LOOM_HAS_MEMBER(c, loom_object_class, choices)
        && (st = check_choices(owner, c->choices, c->n_choices, c->attrs, c->n_attrs)) != LOOM_OK)
        return record(reg, st);
    for (int64_t i = 0; i < reg->n_classes; i++)
        if (strcmp(reg->classes[i]->c.name, c->name) == 0)
            return record(reg, loom__fail(LOOM_ECONFLICT, "object class %s registered twice by pack %s", c->name,
                                          reg->pack->path));
    if (s != NULL && (known = loom__class_lookup(s, c->name)) != NULL)
        return add_note(reg, format("object class %s: refused the registration of %s: %s already registers "
                                    "it (%s)", c->name, reg->pack->path, known->pack->path,
                                    held_because(known->pack)));
    if (!grow((void **)&reg->classes, &reg->cap_classes, reg->n_classes + 1, sizeof *reg->classes)
        || (cls = calloc(1, sizeof *cls)) == NULL)
        return record(reg, loom__fail(LOOM_ENOMEM, "out of memory"));
    memcpy(&cls->c, c, c->struct_size < sizeof cls->c ? c->struct_size : sizeof cls->c);
    cls->c.struct_size = sizeof cls->c;
    cls->pack = reg->pack;
    reg->classes[reg->n_classes++] = cls;
    return LOOM_OK;
}

static loom_status register_device(loom_registrar *reg, const loom_device_provider *p)
{
    const char *why;

    if (reg == NULL)
        return loom__fail(LOOM_EINVAL, "register_device: registrar is NULL (called outside init?)");
    if (p == NULL || p->struct_size < SIZE_1_0(loom_device_provider, synchronize))
        return record(reg, loom__fail(LOOM_EABI, "device provider is NULL or its struct_size is too small"));
    if ((why = bad_name(p->name, false)) != NULL)
        return record(reg, loom__fail(LOOM_EINVAL, "device provider for device type %d: .name '%s' %s",
                                      p->device_type, SHOWN(p->name), why));
    if (p->device_type <= 0 || p->device_type == LOOM_DEVICE_CPU || p->device_type == LOOM_DEVICE_CUDA_HOST
        || p->device_type == LOOM_DEVICE_CUDA_MANAGED)
        return record(reg, loom__fail(LOOM_EINVAL, "device provider %s: .device_type %d cannot have a provider "
                                      "(the CPU is the core's; CUDA host and managed memory are the CUDA "
                                      "provider's)", p->name, p->device_type));
    if (reg->n_providers == LOOM_MAX_PACK_PROVIDERS)
        return record(reg, loom__fail(LOOM_EINVAL, "device provider %s: a pack registers at most %d device "
                                      "providers (LOOM_MAX_PACK_PROVIDERS)", p->name, LOOM_MAX_PACK_PROVIDERS));
    reg->providers[reg->n_providers++] = p;
    return LOOM_OK;
}

/* Host-table entry points (see hostapi.c). */
loom_status loom__host_define_op(loom_registrar *reg, const loom_op_schema *schema);
loom_status loom__host_register_kernel(loom_registrar *reg, const loom_kernel_desc *k);
loom_status loom__host_register_object_class(loom_registrar *reg, const loom_object_class *c);
loom_status loom__host_register_device(loom_registrar *reg, const loom_device_provider *p);
loom_status loom__host_define_op(loom_registrar *reg, const loom_op_schema *s) { return define_op(reg, s); }
loom_status loom__host_register_kernel(loom_registrar *reg, const loom_kernel_desc *k) { return register_kernel(reg, k); }
loom_status loom__host_register_object_class(loom_registrar *reg, const loom_object_class *c)
{
    return register_object_class(reg, c);
}
loom_status loom__host_register_device(loom_registrar *reg, const loom_device_provider *p)
{
    return register_device(reg, p);
}

/* ------------------------------------------------------------- policy */

/* One parsed LOOM_BACKENDS: a default list plus per-op overrides. */
typedef struct policy_rule { char *glob; char *list; } policy_rule;
static char *default_list;
static policy_rule rules[LOOM_MAX_BACKEND_RULES];
static int n_rules;
static bool policy_parsed;

static void policy_free(void)
{
    free(default_list);
    default_list = NULL;
    for (int i = 0; i < n_rules; i++) {
        free(rules[i].glob);
        free(rules[i].list);
    }
    n_rules = 0;
    policy_parsed = false;
}

/* "cuda,onednn,cpu;vision.nms=cpu;text.*=cpu,onednn" */
static void policy_parse(void)
{
    const char *env = loom__cfg.backends;
    char *copy, *save = NULL;

    policy_free();
    policy_parsed = true;
    if (env == NULL || env[0] == '\0')
        return;
    if ((copy = loom__strdup(env)) == NULL) {
        loom__log(0, "LOOM_BACKENDS: out of memory; ignored");
        return;
    }
    for (char *part = strtok_r(copy, ";", &save); part != NULL; part = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(part, '=');
        if (eq == NULL) {
            free(default_list);
            default_list = loom__strdup(part);
        } else if (n_rules < LOOM_MAX_BACKEND_RULES) {
            *eq = '\0';
            rules[n_rules].glob = loom__strdup(part);
            rules[n_rules].list = loom__strdup(eq + 1);
            if (rules[n_rules].glob == NULL || rules[n_rules].list == NULL) {
                free(rules[n_rules].glob);
                free(rules[n_rules].list);
                loom__log(0, "LOOM_BACKENDS: out of memory; rule '%s' ignored", part);
            } else {
                n_rules++;
            }
        } else {
            loom__log(0, "LOOM_BACKENDS: more than %d per-op rules (LOOM_MAX_BACKEND_RULES); '%s' ignored",
                      LOOM_MAX_BACKEND_RULES, part);
        }
    }
    free(copy);
}

/* Position of backend in a ','-separated list, or -1. */
static int32_t position(const char *list, const char *backend)
{
    size_t n = strlen(backend);
    int32_t pos = 0;
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        while (len > 0 && *p == ' ') {
            p++;
            len--;
        }
        while (len > 0 && p[len - 1] == ' ')
            len--;
        if (len == n && strncmp(p, backend, n) == 0)
            return pos;
        pos++;
        if (end == NULL)
            break;
        p = end + 1;
    }
    return -1;
}

int32_t loom__backend_rank(const char *op, const char *backend)
{
    static const char *const builtin = "cuda,onednn,cpu";
    int32_t pos;

    if (!policy_parsed)
        policy_parse();
    for (int i = 0; i < n_rules; i++)
        if (fnmatch(rules[i].glob, op, 0) == 0)
            return position(rules[i].list, backend);
    if (default_list != NULL)
        return position(default_list, backend);
    pos = position(builtin, backend);
    return pos >= 0 ? pos : 100;   /* third-party backends after the built-in ones */
}

/* Every distinct backend name of the current registry plus the built-in
** ones, into names[] (up to max); returns the count. */
int64_t loom__op_backends(const struct loom_op *op, const char **names, int64_t n, int64_t max)
{
    for (int32_t k = 0; k < op->n_kernels; k++) {
        const char *be = op->kernels[k]->k.backend;
        int64_t j = 0;
        while (j < n && strcmp(names[j], be) != 0)
            j++;
        if (j == n && n < max)
            names[n++] = be;
    }
    return n;
}

static int64_t known_backends(const loom__snapshot *snap, const char **names, int64_t max)
{
    static const char *const builtin[] = { "cuda", "onednn", "cpu" };
    int64_t n = 0;
    for (size_t b = 0; b < sizeof builtin / sizeof builtin[0] && n < max; b++)
        names[n++] = builtin[b];
    for (int64_t i = 0; snap != NULL && i < snap->n_ops; i++)
        n = loom__op_backends(snap->ops[i], names, n, max);
    return n;
}

/* Check one ','-separated backend list of LOOM_BACKENDS (`where` names the
** part: "the default list" or "rule 'vision.*'"). */
static loom_status check_backend_list(const char *list, const char *where, const char **known, int64_t n_known)
{
    loom_status st = LOOM_OK;
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        while (len > 0 && *p == ' ') {
            p++;
            len--;
        }
        while (len > 0 && p[len - 1] == ' ')
            len--;
        char word[LOOM_MAX_NAME];
        if (len > 0 && len < sizeof word) {
            memcpy(word, p, len);
            word[len] = '\0';
            int64_t j = 0;
            while (j < n_known && strcmp(known[j], word) != 0)
                j++;
            if (j == n_known) {
                const char *near = loom__closest(word, known, n_known);
                char hint[LOOM_MAX_NAME + 32] = "";
                if (near != NULL)
                    snprintf(hint, sizeof hint, "; did you mean '%s'?", near);
                loom__log(0, "LOOM_BACKENDS: '%s' in %s is not a backend of any loaded pack%s", word, where, hint);
                if (st == LOOM_OK && loom__cfg.strict)
                    st = loom__fail(LOOM_EINVAL, "LOOM_BACKENDS: '%s' in %s is not a backend of any loaded pack%s "
                                    "(LOOM_STRICT=1)", word, where, hint);
            }
        }
        if (end == NULL)
            break;
        p = end + 1;
    }
    return st;
}

loom_status loom__policy_check(void)
{
    const loom__snapshot *snap = loom__snapshot_get();
    const char *known[64];
    int64_t n_known = known_backends(snap, known, 64);
    loom_status st = LOOM_OK, s2;

    if (!policy_parsed)
        policy_parse();
    if (default_list != NULL && (s2 = check_backend_list(default_list, "the default list", known, n_known)) != LOOM_OK
        && st == LOOM_OK)
        st = s2;
    for (int i = 0; i < n_rules; i++) {
        char where[LOOM_MAX_NAME + 16];
        snprintf(where, sizeof where, "rule '%.*s'", LOOM_MAX_NAME - 1, rules[i].glob);
        if ((s2 = check_backend_list(rules[i].list, where, known, n_known)) != LOOM_OK && st == LOOM_OK)
            st = s2;
        bool matched = false;
        for (int64_t o = 0; snap != NULL && o < snap->n_ops && !matched; o++)
            matched = fnmatch(rules[i].glob, snap->ops[o]->schema->name, 0) == 0;
        if (!matched) {
            const char *near = loom__closest_op(rules[i].glob);
            char hint[LOOM_MAX_NAME + 32] = "";
            if (near != NULL)
                snprintf(hint, sizeof hint, "; did you mean '%s'?", near);
            loom__log(0, "LOOM_BACKENDS: rule '%s' matches no loaded op%s", rules[i].glob, hint);
            if (st == LOOM_OK && loom__cfg.strict)
                st = loom__fail(LOOM_EINVAL, "LOOM_BACKENDS: rule '%s' matches no loaded op%s (LOOM_STRICT=1)",
                                rules[i].glob, hint);
        }
    }
    return st;
}

/* Order kernels: by backend rank (excluded last), then priority. */
static void order_kernels(struct loom_op *op)
{
    for (int32_t i = 0; i < op->n_kernels; i++)
        op->rank[i] = loom__backend_rank(op->schema->name, op->kernels[i]->k.backend);
    for (int32_t i = 1; i < op->n_kernels; i++) {
        for (int32_t j = i; j > 0; j--) {
            int32_t ra = op->rank[j - 1] < 0 ? 1 << 30 : op->rank[j - 1];
            int32_t rb = op->rank[j] < 0 ? 1 << 30 : op->rank[j];
            if (ra < rb || (ra == rb && op->kernels[j - 1]->k.priority >= op->kernels[j]->k.priority))
                break;
            loom__kernel *tk = op->kernels[j];
            int32_t tr = op->rank[j];
            op->kernels[j] = op->kernels[j - 1];
            op->rank[j] = op->rank[j - 1];
            op->kernels[j - 1] = tk;
            op->rank[j - 1] = tr;
        }
    }
}

/* ------------------------------------------------------------ snapshot */

static uint64_t name_hash(const char *s)
{
    return fnv_str(0xcbf29ce484222325ull, s);
}

const struct loom_op *loom__op_lookup(const loom__snapshot *s, const char *name)
{
    if (s == NULL || s->table == NULL)
        return NULL;
    for (uint64_t i = name_hash(name) & s->table_mask;; i = (i + 1) & s->table_mask) {
        const struct loom_op *op = s->table[i];
        if (op == NULL)
            return NULL;
        if (strcmp(op->schema->name, name) == 0)
            return op;
    }
}

const loom__class *loom__class_lookup(const loom__snapshot *s, const char *name)
{
    for (int64_t i = 0; s != NULL && i < s->n_classes; i++)
        if (strcmp(s->classes[i]->c.name, name) == 0)
            return s->classes[i];
    return NULL;
}

static int cmp_ops(const void *a, const void *b)
{
    return strcmp((*(struct loom_op *const *)a)->schema->name, (*(struct loom_op *const *)b)->schema->name);
}

/* The closest of the n names name_at(s, i) to word (for "did you mean"). */
static const char *closest_in(const char *word, const loom__snapshot *s, int64_t n,
                              const char *(*name_at)(const loom__snapshot *s, int64_t i))
{
    if (s == NULL || n == 0)
        return NULL;
    const char **names = malloc((size_t)n * sizeof *names);
    if (names == NULL)
        return NULL;
    for (int64_t i = 0; i < n; i++)
        names[i] = name_at(s, i);
    const char *best = loom__closest(word, names, n);
    free(names);
    return best;
}

static const char *op_name_at(const loom__snapshot *s, int64_t i) { return s->ops[i]->schema->name; }
static const char *class_name_at(const loom__snapshot *s, int64_t i) { return s->classes[i]->c.name; }

const char *loom__closest_op(const char *name)
{
    const loom__snapshot *s = loom__snapshot_get();
    return closest_in(name, s, s != NULL ? s->n_ops : 0, op_name_at);
}

const char *loom__closest_class(const char *name)
{
    const loom__snapshot *s = loom__snapshot_get();
    return closest_in(name, s, s != NULL ? s->n_classes : 0, class_name_at);
}

static void snapshot_free(loom__snapshot *s)
{
    if (s == NULL)
        return;
    for (int64_t i = 0; i < s->n_ops; i++)
        free(s->ops[i]);
    free(s->ops);
    free(s->table);
    free(s->classes);
    free(s);
}

/* A new snapshot: copies of old's ops (with added kernels) plus the
** registrar's staged definitions; classes appended. */
static loom_status build_snapshot(const loom__snapshot *old, loom_registrar *reg, loom__snapshot **out)
{
    loom__snapshot *s = calloc(1, sizeof *s);
    int64_t n_old = old ? old->n_ops : 0, cap = n_old + (reg ? reg->n_ops : 0);
    uint64_t size = 16;

    if (s == NULL || (s->ops = calloc((size_t)cap + 1, sizeof *s->ops)) == NULL)
        goto oom;
    for (int64_t i = 0; i < n_old; i++) {
        if ((s->ops[i] = malloc(sizeof *s->ops[i])) == NULL)
            goto oom;
        *s->ops[i] = *old->ops[i];
        s->n_ops++;
    }
    for (int64_t i = 0; reg && i < reg->n_ops; i++) {
        struct loom_op *op;
        if (reg->ops[i].state != OP_NEW)
            continue;
        if ((op = calloc(1, sizeof *op)) == NULL)
            goto oom;
        op->schema = reg->ops[i].schema;
        op->hash = reg->ops[i].hash;
        op->def_pack = reg->pack;
        s->ops[s->n_ops++] = op;
    }
    qsort(s->ops, (size_t)s->n_ops, sizeof *s->ops, cmp_ops);
    while (size < 2 * (uint64_t)s->n_ops)
        size *= 2;
    if ((s->table = calloc(size, sizeof *s->table)) == NULL)
        goto oom;
    s->table_mask = size - 1;
    for (int64_t i = 0; i < s->n_ops; i++) {
        uint64_t h = name_hash(s->ops[i]->schema->name) & s->table_mask;
        while (s->table[h] != NULL)
            h = (h + 1) & s->table_mask;
        s->table[h] = s->ops[i];
    }
    for (int64_t i = 0; reg && i < reg->n_kernels; i++) {
        const char *name = reg->kernels[i]->k.schema->name;
        struct loom_op *op = (struct loom_op *)loom__op_lookup(s, name);
        /* Commit checked both already: a failure here is a broken invariant. */
        if (op == NULL || op->n_kernels == LOOM__MAX_KERNELS) {
            snapshot_free(s);
            return loom__fail(LOOM_EINTERNAL, "op %s: %s building the registry", name,
                              op == NULL ? "kernel without a definition" : "kernel limit passed");
        }
        op->kernels[op->n_kernels++] = reg->kernels[i];
    }
    for (int64_t i = 0; i < s->n_ops; i++)
        order_kernels(s->ops[i]);
    s->n_classes = (old ? old->n_classes : 0) + (reg ? reg->n_classes : 0);
    if ((s->classes = calloc((size_t)s->n_classes + 1, sizeof *s->classes)) == NULL)
        goto oom;
    for (int64_t i = 0; old && i < old->n_classes; i++)
        s->classes[i] = old->classes[i];
    for (int64_t i = 0; reg && i < reg->n_classes; i++)
        s->classes[(old ? old->n_classes : 0) + i] = reg->classes[i];
    *out = s;
    return LOOM_OK;
oom:
    snapshot_free(s);
    return loom__fail(LOOM_ENOMEM, "out of memory building the registry");
}

static void publish(loom__snapshot *s)
{
    s->older = atomic_load(&current);
    atomic_store_explicit(&current, s, memory_order_release);
}

/* The registrations dropped in favour of earlier packs, as one text. */
static loom_status refused_text(loom_registrar *reg, char **out, int32_t *count)
{
    size_t len = 0, cap = 0;
    char *text = NULL;

    *out = NULL;
    *count = 0;
    for (int64_t i = 0; i < reg->n_ops + reg->n_notes; i++) {
        char *note = NULL;
        if (i < reg->n_ops) {
            const staged_op *op = &reg->ops[i];
            if (op->state != OP_DROPPED)
                continue;
            char kernels[48] = "";
            if (op->n_kernels > 0)
                snprintf(kernels, sizeof kernels, " and its %lld kernel%s", (long long)op->n_kernels,
                         op->n_kernels == 1 ? "" : "s");
            note = format("%s: refused the definition%s of %s: it differs from the definition in force, that "
                          "of %s (%s); first difference: %s (this pack vs the one in force)", op->schema->name,
                          kernels, reg->pack->path, op->published->def_pack->path,
                          held_because(op->published->def_pack), op->diff);
            if (note == NULL)
                goto oom;
        }
        const char *item = note != NULL ? note : reg->notes[i - reg->n_ops];
        size_t n = strlen(item);
        if (len + n + 3 > cap) {
            size_t c = 2 * (len + n + 3);
            char *grown = realloc(text, c);
            if (grown == NULL) {
                free(note);
                goto oom;
            }
            text = grown;
            cap = c;
        }
        if (len > 0) {
            memcpy(text + len, "; ", 2);
            len += 2;
        }
        memcpy(text + len, item, n + 1);
        len += n;
        free(note);
        (*count)++;
    }
    *out = text;
    return LOOM_OK;
oom:
    free(text);
    *count = 0;
    return loom__fail(LOOM_ENOMEM, "out of memory");
}

loom_status loom__registrar_commit(loom_registrar *reg)
{
    const loom__snapshot *old = loom__snapshot_get();
    loom__snapshot *s;
    char *refused;
    int32_t n_refused, counts[LOOM_MAX_PACK_PROVIDERS];
    int64_t n_ops = 0;
    loom_status st;

    if (reg->failed != LOOM_OK)
        return loom__fail(reg->failed, "%s", reg->failed_msg != NULL ? reg->failed_msg : "registration failed");
    /* Every check comes before anything is built or added: a refusal here
    ** leaves no trace of the pack (no provider, no kernel). */
    for (int64_t i = 0; i < reg->n_ops; i++) {
        const staged_op *op = &reg->ops[i];
        int64_t have = op->state == OP_KNOWN ? op->published->n_kernels : 0;
        if (op->state != OP_DROPPED && have + op->n_kernels > LOOM__MAX_KERNELS)
            return loom__fail(LOOM_EINVAL, "op %s would have %lld kernels (%lld of this pack, %lld already "
                              "registered): the limit is %d kernels per op (LOOM_MAX_KERNELS)", op->schema->name,
                              (long long)(have + op->n_kernels), (long long)op->n_kernels, (long long)have,
                              LOOM__MAX_KERNELS);
        n_ops += op->state == OP_NEW;
    }
    if ((st = refused_text(reg, &refused, &n_refused)) != LOOM_OK)
        return st;
    /* Last, as it runs the providers' count(): only memory can fail after it. */
    if ((st = loom__device_check_providers(reg->providers, reg->n_providers, counts)) != LOOM_OK) {
        free(refused);
        return st;
    }
    if ((st = build_snapshot(old, reg, &s)) != LOOM_OK) {
        free(refused);
        return st;
    }
    /* Nothing can fail any more: the providers (checked above, under the
    ** registry lock that every add takes), then the snapshot. */
    for (int i = 0; i < reg->n_providers; i++)
        loom__device_add_checked(reg->providers[i], reg->pack->name, counts[i]);
    reg->pack->n_ops = n_ops;
    reg->pack->n_kernels = reg->n_kernels;
    reg->pack->n_classes = reg->n_classes;
    reg->pack->refused = refused;
    reg->pack->n_refused = n_refused;
    publish(s);
    loom__interfaces_commit(reg, reg->pack->name);
    /* Kernels and classes now belong to the snapshot. */
    reg->n_kernels = reg->n_classes = 0;
    loom__registrar_abort(reg);
    return LOOM_OK;
}

loom_status loom__registry_republish(void)
{
    loom__snapshot *s;
    loom_status st;

    policy_parse();
    if ((st = build_snapshot(loom__snapshot_get(), NULL, &s)) != LOOM_OK)
        return st;
    publish(s);
    return LOOM_OK;
}

void loom__registry_reset(void)
{
    loom__snapshot *s = atomic_exchange(&current, NULL);
    /* Kernels and classes are shared by every snapshot: free them once,
    ** from the newest. */
    if (s != NULL) {
        for (int64_t i = 0; i < s->n_ops; i++)
            for (int32_t j = 0; j < s->ops[i]->n_kernels; j++)
                free(s->ops[i]->kernels[j]);
        for (int64_t i = 0; i < s->n_classes; i++)
            free(s->classes[i]);
    }
    while (s != NULL) {
        loom__snapshot *older = s->older;
        snapshot_free(s);
        s = older;
    }
    policy_free();
}

/* ------------------------------------------------------- introspection */

const loom_attr_def *loom__class_attr_defs_of(const char *name, uint32_t *n_out)
{
    const loom__class *c = loom__class_lookup(loom__snapshot_get(), name);
    if (c == NULL)
        return NULL;
    *n_out = c->c.n_attrs;
    return c->c.attrs ? c->c.attrs : (const loom_attr_def *)"";
}

const loom_attr_def *loom__attr_defs_of(const char *name, uint32_t *n_out)
{
    const loom__snapshot *s = loom__snapshot_get();
    const struct loom_op *op = loom__op_lookup(s, name);
    const loom__class *c;

    if (op != NULL) {
        *n_out = op->schema->n_attrs;
        return op->schema->attrs ? op->schema->attrs : (const loom_attr_def *)"";
    }
    c = loom__class_lookup(s, name);
    if (c != NULL) {
        *n_out = c->c.n_attrs;
        return c->c.attrs ? c->c.attrs : (const loom_attr_def *)"";
    }
    return NULL;
}

LOOM_API int64_t loom_op_count(void)
{
    const loom__snapshot *s = loom__snapshot_get();
    return s ? s->n_ops : 0;
}

LOOM_API const loom_op_schema *loom_op_schema_at(int64_t index)
{
    const loom__snapshot *s = loom__snapshot_get();
    if (s == NULL || index < 0 || index >= s->n_ops) {
        loom__fail(LOOM_ENOENT, "loom_op_schema_at: no op %lld", (long long)index);
        return NULL;
    }
    return s->ops[index]->schema;
}

/* loom_op_schema_of, loom_op_kernel_count and loom_op_kernel_at take op
** handles: they live in dispatch.c with the handle table. */

LOOM_API int64_t loom_object_class_count(void)
{
    const loom__snapshot *s = loom__snapshot_get();
    return s ? s->n_classes : 0;
}

LOOM_API const loom_object_class *loom_object_class_at(int64_t index)
{
    const loom__snapshot *s = loom__snapshot_get();
    if (s == NULL || index < 0 || index >= s->n_classes) {
        loom__fail(LOOM_ENOENT, "loom_object_class_at: no class %lld", (long long)index);
        return NULL;
    }
    return &s->classes[index]->c;
}
