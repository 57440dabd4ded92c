/* SPDX-License-Identifier: BSD-3-Clause */
/*
** attrs.c - the caller's bag of named attributes, and its resolution
** against an op's or object class's attribute definitions.
**
** The bag copies every value it is given (strings, lists); tensors are
** borrowed unless the bag read them from a file (loom_attrs_parse), in which
** case it owns them.
*/
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct entry {
    char *name;
    loom_attr_value v;
    void *owned;                 /* copied string or list */
    loom_tensor *owned_tensor;   /* tensor read by parse */
} entry;

struct loom_attrs {
    entry *entries;
    int32_t count, cap;
};

static const char *type_name(int32_t type)
{
    static const char *const names[] = { "?", "int", "float", "bool", "string", "ints", "floats", "tensor" };
    return type >= 1 && type <= LOOM_ATTR_TENSOR ? names[type] : "?";
}

LOOM_API loom_status loom_attrs_new(loom_attrs **out)
{
    if (out == NULL)
        return loom__fail(LOOM_EINVAL, "loom_attrs_new: out is NULL");
    *out = calloc(1, sizeof **out);
    return *out != NULL ? LOOM_OK : loom__fail(LOOM_ENOMEM, "loom_attrs_new: out of memory");
}

static void clear_entry(entry *e)
{
    free(e->owned);
    loom_tensor_free(e->owned_tensor);
    e->owned = NULL;
    e->owned_tensor = NULL;
}

LOOM_API void loom_attrs_free(loom_attrs *a)
{
    if (a == NULL)
        return;
    for (int32_t i = 0; i < a->count; i++) {
        clear_entry(&a->entries[i]);
        free(a->entries[i].name);
    }
    free(a->entries);
    free(a);
}

/* The entry for name, created empty if absent (a second set replaces). */
static entry *slot_for(loom_attrs *a, const char *name)
{
    for (int32_t i = 0; i < a->count; i++) {
        if (strcmp(a->entries[i].name, name) == 0) {
            clear_entry(&a->entries[i]);
            return &a->entries[i];
        }
    }
    if (a->count == a->cap) {
        int32_t cap = a->cap ? 2 * a->cap : 8;
        entry *grown = realloc(a->entries, (size_t)cap * sizeof *grown);
        if (grown == NULL)
            return NULL;
        a->entries = grown;
        a->cap = cap;
    }
    entry *e = &a->entries[a->count];
    memset(e, 0, sizeof *e);
    e->name = loom__strdup(name);
    if (e->name == NULL)
        return NULL;
    a->count++;
    return e;
}

static loom_status set_value(loom_attrs *a, const char *name, loom_attr_value v, const void *copy,
                           size_t copy_bytes)
{
    entry *e;

    if (a == NULL || name == NULL)
        return loom__fail(LOOM_EINVAL, "loom_attrs_set: attrs or name is NULL");
    e = slot_for(a, name);
    if (e == NULL)
        return loom__fail(LOOM_ENOMEM, "loom_attrs_set: out of memory");
    if (copy != NULL) {
        e->owned = malloc(copy_bytes ? copy_bytes : 1);
        if (e->owned == NULL)
            return loom__fail(LOOM_ENOMEM, "loom_attrs_set: out of memory");
        memcpy(e->owned, copy, copy_bytes);
        if (v.type == LOOM_ATTR_STRING)
            v.u.s = e->owned;
        else if (v.type == LOOM_ATTR_INTS)
            v.u.ints = e->owned;
        else
            v.u.floats = e->owned;
    }
    v.is_set = 1;
    e->v = v;
    return LOOM_OK;
}

LOOM_API loom_status loom_attrs_set_int(loom_attrs *a, const char *name, int64_t v)
{
    return set_value(a, name, (loom_attr_value){ .type = LOOM_ATTR_INT, .count = 1, .u.i = v }, NULL, 0);
}

LOOM_API loom_status loom_attrs_set_float(loom_attrs *a, const char *name, double v)
{
    return set_value(a, name, (loom_attr_value){ .type = LOOM_ATTR_FLOAT, .count = 1, .u.f = v }, NULL, 0);
}

LOOM_API loom_status loom_attrs_set_bool(loom_attrs *a, const char *name, int v)
{
    return set_value(a, name, (loom_attr_value){ .type = LOOM_ATTR_BOOL, .count = 1, .u.b = v != 0 }, NULL, 0);
}

LOOM_API loom_status loom_attrs_set_string(loom_attrs *a, const char *name, const char *v)
{
    if (v == NULL)
        return loom__fail(LOOM_EINVAL, "loom_attrs_set_string: value of '%s' is NULL", name ? name : "?");
    return set_value(a, name, (loom_attr_value){ .type = LOOM_ATTR_STRING, .count = (int64_t)strlen(v) },
                     v, strlen(v) + 1);
}

LOOM_API loom_status loom_attrs_set_ints(loom_attrs *a, const char *name, const int64_t *v, int64_t count)
{
    if (count < 0 || (count > 0 && v == NULL))
        return loom__fail(LOOM_EINVAL, "loom_attrs_set_ints: bad list for '%s'", name ? name : "?");
    return set_value(a, name, (loom_attr_value){ .type = LOOM_ATTR_INTS, .count = count },
                     v, (size_t)count * sizeof *v);
}

LOOM_API loom_status loom_attrs_set_floats(loom_attrs *a, const char *name, const double *v, int64_t count)
{
    if (count < 0 || (count > 0 && v == NULL))
        return loom__fail(LOOM_EINVAL, "loom_attrs_set_floats: bad list for '%s'", name ? name : "?");
    return set_value(a, name, (loom_attr_value){ .type = LOOM_ATTR_FLOATS, .count = count },
                     v, (size_t)count * sizeof *v);
}

LOOM_API loom_status loom_attrs_set_tensor(loom_attrs *a, const char *name, const loom_tensor *t)
{
    loom_status st = loom__tensor_check(t, "attribute tensor");
    if (st != LOOM_OK)
        return st;
    return set_value(a, name, (loom_attr_value){ .type = LOOM_ATTR_TENSOR, .count = 1, .u.t = t }, NULL, 0);
}

/* ---------------------------------------------------------------- parse */

static bool parse_int(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 0);
    if (errno != 0 || end == s)
        return false;
    while (*end == ' ')
        end++;
    *out = v;
    return *end == '\0';
}

static bool parse_float(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno == ERANGE && fabs(v) > 1.0)
        return false;
    if (end == s)
        return false;
    while (*end == ' ')
        end++;
    *out = v;
    return *end == '\0';
}

/* Split "a,b,c" (brackets and spaces tolerated) and parse each item. */
static loom_status parse_list(loom_attrs *a, const char *name, const char *value, bool ints)
{
    char *copy = loom__strdup(value), *save = NULL;
    int64_t count = 0, cap = 8;
    void *items = malloc((size_t)cap * 8);
    loom_status st = LOOM_OK;

    if (copy == NULL || items == NULL) {
        free(copy);
        free(items);
        return loom__fail(LOOM_ENOMEM, "attribute '%s': out of memory", name);
    }
    for (char *p = copy; *p; p++)
        if (*p == '[' || *p == ']' || *p == '(' || *p == ')')
            *p = ' ';
    for (char *tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ')
            tok++;
        if (*tok == '\0')
            continue;
        if (count == cap) {
            void *grown = realloc(items, (size_t)(cap *= 2) * 8);
            if (grown == NULL) {
                st = loom__fail(LOOM_ENOMEM, "attribute '%s': out of memory", name);
                break;
            }
            items = grown;
        }
        bool ok = ints ? parse_int(tok, (int64_t *)items + count) : parse_float(tok, (double *)items + count);
        if (!ok) {
            st = loom__fail(LOOM_EINVAL, "attribute '%s': '%s' is not a%s", name, tok,
                            ints ? "n integer" : " number");
            break;
        }
        count++;
    }
    if (st == LOOM_OK)
        st = ints ? loom_attrs_set_ints(a, name, items, count) : loom_attrs_set_floats(a, name, items, count);
    free(items);
    free(copy);
    return st;
}

LOOM_API loom_status loom_attrs_parse(loom_attrs *a, const char *owner, const char *name, const char *value)
{
    const loom_attr_def *defs, *def = NULL;
    uint32_t n = 0;
    int64_t i64;
    double f64;

    if (a == NULL || owner == NULL || name == NULL || value == NULL)
        return loom__fail(LOOM_EINVAL, "loom_attrs_parse: NULL argument");
    defs = loom__attr_defs_of(owner, &n);
    if (defs == NULL)
        return loom__fail(LOOM_ENOENT, "no operator or object class named '%s'", owner);
    for (uint32_t k = 0; k < n; k++)
        if (strcmp(defs[k].name, name) == 0)
            def = &defs[k];
    if (def == NULL) {
        /* an op and the object class it is a method of may share a name
        ** (fbgemm.tbe): then the class's attributes are the owner's too */
        uint32_t nc = 0;
        const loom_attr_def *cdefs = loom__class_attr_defs_of(owner, &nc);
        for (uint32_t k = 0; cdefs != NULL && cdefs != defs && k < nc; k++)
            if (strcmp(cdefs[k].name, name) == 0)
                def = &cdefs[k];
    }
    if (def == NULL) {
        char names[512] = "";
        for (uint32_t k = 0; k < n; k++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", k ? ", " : "", defs[k].name);
        return loom__fail(LOOM_EINVAL, "%s has no attribute '%s' (attributes: %s)", owner, name,
                          n ? names : "none");
    }
    switch (def->type) {
    case LOOM_ATTR_INT:
        if (!parse_int(value, &i64))
            return loom__fail(LOOM_EINVAL, "%s: attribute '%s' wants an integer, got '%s'", owner, name, value);
        return loom_attrs_set_int(a, name, i64);
    case LOOM_ATTR_FLOAT:
        if (!parse_float(value, &f64))
            return loom__fail(LOOM_EINVAL, "%s: attribute '%s' wants a number, got '%s'", owner, name, value);
        return loom_attrs_set_float(a, name, f64);
    case LOOM_ATTR_BOOL:
        if (strcmp(value, "true") == 0 || strcmp(value, "1") == 0 || strcmp(value, "True") == 0)
            return loom_attrs_set_bool(a, name, 1);
        if (strcmp(value, "false") == 0 || strcmp(value, "0") == 0 || strcmp(value, "False") == 0)
            return loom_attrs_set_bool(a, name, 0);
        return loom__fail(LOOM_EINVAL, "%s: attribute '%s' wants true or false, got '%s'", owner, name, value);
    case LOOM_ATTR_STRING:
        return loom_attrs_set_string(a, name, value);
    case LOOM_ATTR_INTS:
        return parse_list(a, name, value, true);
    case LOOM_ATTR_FLOATS:
        return parse_list(a, name, value, false);
    case LOOM_ATTR_TENSOR: {
        loom_tensor *t;
        loom_status st = loom_npy_read(&t, value);
        if (st != LOOM_OK)
            return st;
        st = loom_attrs_set_tensor(a, name, t);
        if (st != LOOM_OK) {
            loom_tensor_free(t);
            return st;
        }
        for (int32_t k = 0; k < a->count; k++)
            if (strcmp(a->entries[k].name, name) == 0)
                a->entries[k].owned_tensor = t;
        return LOOM_OK;
    }
    default:
        return loom__fail(LOOM_EINTERNAL, "%s: attribute '%s' has unknown type %d", owner, name, def->type);
    }
}

/* -------------------------------------------------------------- resolve */

/* Convert v to the defined type where the conversion loses nothing. */
static bool coerce(loom_attr_value *v, int32_t want)
{
    if (v->type == want)
        return true;
    if (want == LOOM_ATTR_FLOAT && v->type == LOOM_ATTR_INT) {
        v->u.f = (double)v->u.i;
    } else if (want == LOOM_ATTR_BOOL && v->type == LOOM_ATTR_INT && (v->u.i == 0 || v->u.i == 1)) {
        v->u.b = (int32_t)v->u.i;
    } else if (want == LOOM_ATTR_FLOATS && v->type == LOOM_ATTR_INTS && v->count == 0) {
        v->u.floats = NULL;
    } else {
        return false;
    }
    v->type = want;
    return true;
}

/* True when x satisfies the LOOM_ATTR_FINITE/POSITIVE/NONNEG bits of flags. */
static bool number_ok(double x, uint32_t flags)
{
    if ((flags & LOOM_ATTR_FINITE) && !isfinite(x))
        return false;
    if ((flags & LOOM_ATTR_POSITIVE) && !(x > 0))
        return false;
    if ((flags & LOOM_ATTR_NONNEG) && !(x >= 0))
        return false;
    return true;
}

static const char *constraint_text(uint32_t flags)
{
    switch (flags & (LOOM_ATTR_FINITE | LOOM_ATTR_POSITIVE | LOOM_ATTR_NONNEG)) {
    case LOOM_ATTR_FINITE:                        return "finite";
    case LOOM_ATTR_POSITIVE:                      return "> 0";
    case LOOM_ATTR_NONNEG:                        return ">= 0";
    case LOOM_ATTR_FINITE | LOOM_ATTR_POSITIVE:   return "finite and > 0";
    case LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG:     return "finite and >= 0";
    default:                                      return "finite, > 0 and >= 0";
    }
}

loom_status loom__attr_check_value(const loom_attr_def *def, const loom_attr_value *v, const char *owner)
{
    uint32_t flags = def->flags & (LOOM_ATTR_FINITE | LOOM_ATTR_POSITIVE | LOOM_ATTR_NONNEG);

    if (flags == 0 || !v->is_set)
        return LOOM_OK;
    switch (v->type) {
    case LOOM_ATTR_INT:
        if (!number_ok((double)v->u.i, flags))
            return loom__fail(LOOM_EINVAL, "%s: attribute '%s' must be %s, got %lld", owner, def->name,
                              constraint_text(flags), (long long)v->u.i);
        return LOOM_OK;
    case LOOM_ATTR_FLOAT:
        if (!number_ok(v->u.f, flags))
            return loom__fail(LOOM_EINVAL, "%s: attribute '%s' must be %s, got %g", owner, def->name,
                              constraint_text(flags), v->u.f);
        return LOOM_OK;
    case LOOM_ATTR_INTS:
        for (int64_t i = 0; i < v->count; i++)
            if (!number_ok((double)v->u.ints[i], flags))
                return loom__fail(LOOM_EINVAL, "%s: attribute '%s' must be %s, got %lld at [%lld]", owner,
                                  def->name, constraint_text(flags), (long long)v->u.ints[i], (long long)i);
        return LOOM_OK;
    case LOOM_ATTR_FLOATS:
        for (int64_t i = 0; i < v->count; i++)
            if (!number_ok(v->u.floats[i], flags))
                return loom__fail(LOOM_EINVAL, "%s: attribute '%s' must be %s, got %g at [%lld]", owner,
                                  def->name, constraint_text(flags), v->u.floats[i], (long long)i);
        return LOOM_OK;
    default:
        return LOOM_OK;
    }
}

/* The checks every resolution ends with: required attributes present,
** value constraints. */
static loom_status finish(const loom_attr_def *defs, uint32_t n_defs, const char *owner, const loom_attr_value *values)
{
    for (uint32_t k = 0; k < n_defs; k++) {
        loom_status st;
        if ((defs[k].flags & LOOM_ATTR_REQUIRED) && !values[k].is_set)
            return loom__fail(LOOM_EINVAL, "%s: required attribute '%s' (%s) is missing", owner,
                              defs[k].name, type_name(defs[k].type));
        if ((st = loom__attr_check_value(&defs[k], &values[k], owner)) != LOOM_OK)
            return st;
    }
    return LOOM_OK;
}

loom_status loom__attrs_resolve(const loom_attrs *attrs, const loom_attr_def *defs, uint32_t n_defs,
                              const char *owner, loom_attr_value *values)
{
    for (uint32_t k = 0; k < n_defs; k++) {
        values[k] = defs[k].dflt;
        values[k].type = defs[k].type;
    }
    for (int32_t i = 0; attrs != NULL && i < attrs->count; i++) {
        const entry *e = &attrs->entries[i];
        uint32_t k;
        for (k = 0; k < n_defs; k++)
            if (strcmp(defs[k].name, e->name) == 0)
                break;
        if (k == n_defs) {
            char names[512] = "";
            for (uint32_t j = 0; j < n_defs; j++)
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", j ? ", " : "",
                         defs[j].name);
            return loom__fail(LOOM_EINVAL, "%s has no attribute '%s' (attributes: %s)", owner, e->name,
                              n_defs ? names : "none");
        }
        loom_attr_value v = e->v;
        if (!coerce(&v, defs[k].type))
            return loom__fail(LOOM_EINVAL, "%s: attribute '%s' must be %s, got %s", owner, e->name,
                              type_name(defs[k].type), type_name(e->v.type));
        values[k] = v;
    }
    return finish(defs, n_defs, owner, values);
}

loom_status loom__attrs_resolve_named(const loom_named_attr *named, int32_t n_named, const loom_attr_def *defs,
                                    uint32_t n_defs, const char *owner, loom_attr_value *values)
{
    for (uint32_t k = 0; k < n_defs; k++) {
        values[k] = defs[k].dflt;
        values[k].type = defs[k].type;
    }
    if (n_named < 0 || (n_named > 0 && named == NULL))
        return loom__fail(LOOM_EINVAL, "%s: attribute list is NULL or negative (%d)", owner, n_named);
    for (int32_t i = 0; i < n_named; i++) {
        uint32_t k;
        if (named[i].name == NULL)
            return loom__fail(LOOM_EINVAL, "%s: attribute %d has no name", owner, i);
        for (k = 0; k < n_defs; k++)
            if (strcmp(defs[k].name, named[i].name) == 0)
                break;
        if (k == n_defs)
            return loom__fail(LOOM_EINVAL, "%s has no attribute '%s'", owner, named[i].name);
        loom_attr_value v = named[i].value;
        v.is_set = 1;
        if (v.type == LOOM_ATTR_STRING && v.u.s == NULL)
            return loom__fail(LOOM_EINVAL, "%s: attribute '%s' is a NULL string", owner, named[i].name);
        if (v.type == LOOM_ATTR_STRING)
            v.count = (int64_t)strlen(v.u.s);
        if ((v.type == LOOM_ATTR_INTS || v.type == LOOM_ATTR_FLOATS)
            && (v.count < 0 || (v.count > 0 && v.u.ints == NULL)))
            return loom__fail(LOOM_EINVAL, "%s: attribute '%s' is a bad list (count %lld)", owner, named[i].name,
                              (long long)v.count);
        if (!coerce(&v, defs[k].type))
            return loom__fail(LOOM_EINVAL, "%s: attribute '%s' must be %s, got %s", owner, named[i].name,
                              type_name(defs[k].type), type_name(named[i].value.type));
        values[k] = v;
    }
    return finish(defs, n_defs, owner, values);
}

loom_status loom__attrs_check_choices(const loom_attr_value *values, const loom_attr_def *defs, uint32_t n_defs,
                                    const loom_attr_choices *choices, uint32_t n_choices, const char *owner)
{
    for (uint32_t c = 0; c < n_choices; c++) {
        const loom_attr_choices *ch = &choices[c];
        const loom_attr_value *v;
        char allowed[512] = "";
        if (ch->attr >= n_defs || ch->values == NULL)
            continue;   /* refused at registration; never reached */
        v = &values[ch->attr];
        if (!v->is_set || v->type != LOOM_ATTR_STRING)
            continue;
        for (const char *const *a = ch->values; *a != NULL; a++)
            if (strcmp(*a, v->u.s) == 0)
                goto next;
        for (const char *const *a = ch->values; *a != NULL; a++)
            snprintf(allowed + strlen(allowed), sizeof allowed - strlen(allowed), "%s%s",
                     a == ch->values ? "" : ", ", *a);
        return loom__fail(LOOM_EINVAL, "%s: attribute '%s' is '%s'; expected one of %s", owner,
                          defs[ch->attr].name, v->u.s, allowed);
    next:;
    }
    return LOOM_OK;
}
