/*
** registry.c - registration of packs (transactional) and the published
** snapshot of ops, kernels and object classes.
**
** Invariant: a pack's registrations reach a snapshot only through
** loom__registrar_commit, which checks them all against the current
** snapshot first; a failed check publishes nothing.
*/
#include <fnmatch.h>
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
    return fnv_str(h, s->object_class);
}

/* The first difference between two schemas of one name, in words. */
static void schema_diff(const loom_op_schema *a, const loom_op_schema *b, char *buf, size_t size)
{
    if (a->version != b->version)
        snprintf(buf, size, "version %u vs %u", a->version, b->version);
    else if (a->n_inputs != b->n_inputs)
        snprintf(buf, size, "%u inputs vs %u", a->n_inputs, b->n_inputs);
    else if (a->n_outputs != b->n_outputs)
        snprintf(buf, size, "%u outputs vs %u", a->n_outputs, b->n_outputs);
    else if (a->n_attrs != b->n_attrs)
        snprintf(buf, size, "%u attributes vs %u", a->n_attrs, b->n_attrs);
    else {
        for (uint32_t i = 0; i < a->n_inputs; i++)
            if (hash_args(0, &a->inputs[i], 1) != hash_args(0, &b->inputs[i], 1)) {
                snprintf(buf, size, "input %u ('%s' vs '%s', or its dtypes/rank)", i, a->inputs[i].name,
                         b->inputs[i].name);
                return;
            }
        for (uint32_t i = 0; i < a->n_attrs; i++)
            if (strcmp(a->attrs[i].name, b->attrs[i].name) != 0 || a->attrs[i].type != b->attrs[i].type) {
                snprintf(buf, size, "attribute %u ('%s' vs '%s', or its type)", i, a->attrs[i].name,
                         b->attrs[i].name);
                return;
            }
        snprintf(buf, size, "outputs, attribute defaults or object class");
    }
}

/* ------------------------------------------------------------ registrar */

typedef struct staged_op { const loom_op_schema *schema; uint64_t hash; } staged_op;

struct loom_registrar {
    loom__pack *pack;
    staged_op *ops;       int64_t n_ops, cap_ops;
    loom__kernel **kernels; int64_t n_kernels, cap_kernels;
    loom__class **classes;  int64_t n_classes, cap_classes;
    const loom_device_provider *providers[4]; int n_providers;
    loom_status failed;   /* first registration error: init success still aborts */
};

static bool grow(void **arr, int64_t *cap, int64_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    int64_t n = *cap ? 2 * *cap : 16;
    void *p = realloc(*arr, (size_t)n * elem);
    if (p == NULL)
        return false;
    *arr = p;
    *cap = n;
    return true;
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
    free(reg->ops);
    free(reg->kernels);
    free(reg->classes);
    free(reg);
}

/* The definition of name: staged in this registrar, else published. */
static const loom_op_schema *find_definition(loom_registrar *reg, const char *name, uint64_t *hash,
                                           const char **pack_out)
{
    const loom__snapshot *s = loom__snapshot_get();
    const struct loom_op *op;

    for (int64_t i = 0; i < reg->n_ops; i++)
        if (strcmp(reg->ops[i].schema->name, name) == 0) {
            *hash = reg->ops[i].hash;
            *pack_out = reg->pack->path;
            return reg->ops[i].schema;
        }
    op = s != NULL ? loom__op_lookup(s, name) : NULL;
    if (op == NULL)
        return NULL;
    *hash = op->hash;
    *pack_out = op->def_pack->path;
    return op->schema;
}

static loom_status record(loom_registrar *reg, loom_status st)
{
    if (st != LOOM_OK && reg->failed == LOOM_OK)
        reg->failed = st;
    return st;
}

static loom_status check_schema(const loom_op_schema *s)
{
    const char *dot;
    if (s == NULL || s->struct_size < offsetof(loom_op_schema, object_class))
        return loom__fail(LOOM_EABI, "op schema is NULL or its struct_size is too small");
    if (s->name == NULL || (dot = strchr(s->name, '.')) == NULL || dot == s->name || dot[1] == '\0')
        return loom__fail(LOOM_EINVAL, "op name '%s' is not of the form domain.op", s->name ? s->name : "(null)");
    if (s->n_attrs > LOOM__MAX_ATTRS || s->n_inputs > LOOM__MAX_ARGS || s->n_outputs > LOOM__MAX_ARGS)
        return loom__fail(LOOM_EINVAL, "op %s: too many inputs, outputs or attributes (max %d/%d/%d)",
                          s->name, LOOM__MAX_ARGS, LOOM__MAX_ARGS, LOOM__MAX_ATTRS);
    if ((s->n_inputs && s->inputs == NULL) || (s->n_outputs && s->outputs == NULL)
        || (s->n_attrs && s->attrs == NULL))
        return loom__fail(LOOM_EINVAL, "op %s: an argument table is NULL", s->name);
    for (uint32_t i = 0; i < s->n_attrs; i++)
        if (s->attrs[i].name == NULL || s->attrs[i].type < LOOM_ATTR_INT || s->attrs[i].type > LOOM_ATTR_TENSOR)
            return loom__fail(LOOM_EINVAL, "op %s: attribute %u has no name or an unknown type", s->name, i);
    for (uint32_t i = 0; i < s->n_inputs; i++)
        if (s->inputs[i].name == NULL)
            return loom__fail(LOOM_EINVAL, "op %s: input %u has no name", s->name, i);
    for (uint32_t i = 0; i < s->n_outputs; i++)
        if (s->outputs[i].name == NULL)
            return loom__fail(LOOM_EINVAL, "op %s: output %u has no name", s->name, i);
    return LOOM_OK;
}

static loom_status define_op(loom_registrar *reg, const loom_op_schema *schema)
{
    uint64_t hash, known_hash;
    const char *known_pack;
    const loom_op_schema *known;
    loom_status st;

    if (reg == NULL)
        return loom__fail(LOOM_EINVAL, "define_op: registrar is NULL (called outside init?)");
    if ((st = check_schema(schema)) != LOOM_OK)
        return record(reg, st);
    hash = schema_hash(schema);
    known = find_definition(reg, schema->name, &known_hash, &known_pack);
    if (known != NULL) {
        char diff[160];
        if (known_hash == hash)
            return LOOM_OK;   /* identical re-definition: a no-op */
        schema_diff(schema, known, diff, sizeof diff);
        return record(reg, loom__fail(LOOM_ECONFLICT, "schema clash for %s: pack %s defines it differently "
                                      "from %s (%s: this pack vs the definition)", schema->name, reg->pack->path,
                                      known_pack, diff));
    }
    if (!grow((void **)&reg->ops, &reg->cap_ops, reg->n_ops + 1, sizeof *reg->ops))
        return record(reg, loom__fail(LOOM_ENOMEM, "out of memory"));
    reg->ops[reg->n_ops++] = (staged_op){ schema, hash };
    return LOOM_OK;
}

static loom_status register_kernel(loom_registrar *reg, const loom_kernel_desc *k)
{
    loom__kernel *kern;
    loom_status st;

    if (reg == NULL)
        return loom__fail(LOOM_EINVAL, "register_kernel: registrar is NULL (called outside init?)");
    if (k == NULL || k->struct_size < offsetof(loom_kernel_desc, run) + sizeof k->run)
        return record(reg, loom__fail(LOOM_EABI, "kernel descriptor is NULL or its struct_size is too small"));
    if (k->schema == NULL || k->backend == NULL || k->backend[0] == '\0' || k->run == NULL)
        return record(reg, loom__fail(LOOM_EINVAL, "kernel %s: schema, backend and run are required",
                                      k->impl ? k->impl : "(unnamed)"));
    /* A kernel whose schema is not the op's definition is refused here,
    ** naming both packs; an op seen first through a kernel is defined by it. */
    if ((st = define_op(reg, k->schema)) != LOOM_OK)
        return record(reg, st);
    if (!grow((void **)&reg->kernels, &reg->cap_kernels, reg->n_kernels + 1, sizeof *reg->kernels)
        || (kern = calloc(1, sizeof *kern)) == NULL)
        return record(reg, loom__fail(LOOM_ENOMEM, "out of memory"));
    memcpy(&kern->k, k, k->struct_size < sizeof kern->k ? k->struct_size : sizeof kern->k);
    kern->k.struct_size = sizeof kern->k;
    if (kern->k.device_type == 0)
        kern->k.device_type = LOOM_DEVICE_CPU;
    kern->pack = reg->pack;
    snprintf(kern->label, sizeof kern->label, "%s [%s]", k->schema->name, k->impl ? k->impl : k->backend);
    reg->kernels[reg->n_kernels++] = kern;
    return LOOM_OK;
}

static loom_status register_object_class(loom_registrar *reg, const loom_object_class *c)
{
    loom__class *cls;
    const loom__snapshot *s = loom__snapshot_get();

    if (reg == NULL)
        return loom__fail(LOOM_EINVAL, "register_object_class: registrar is NULL (called outside init?)");
    if (c == NULL || c->struct_size < offsetof(loom_object_class, destroy) + sizeof c->destroy
        || c->name == NULL || c->create == NULL || c->destroy == NULL
        || (c->n_attrs && c->attrs == NULL) || c->n_attrs > LOOM__MAX_ATTRS)
        return record(reg, loom__fail(LOOM_EINVAL, "object class %s: name, create, destroy and a valid "
                                      "attribute table are required", c && c->name ? c->name : "(unnamed)"));
    if ((s != NULL && loom__class_lookup(s, c->name) != NULL))
        return record(reg, loom__fail(LOOM_ECONFLICT, "object class %s is already registered by pack %s",
                                      c->name, loom__class_lookup(s, c->name)->pack->path));
    for (int64_t i = 0; i < reg->n_classes; i++)
        if (strcmp(reg->classes[i]->c.name, c->name) == 0)
            return record(reg, loom__fail(LOOM_ECONFLICT, "object class %s registered twice", c->name));
    if (!grow((void **)&reg->classes, &reg->cap_classes, reg->n_classes + 1, sizeof *reg->classes)
        || (cls = calloc(1, sizeof *cls)) == NULL)
        return record(reg, loom__fail(LOOM_ENOMEM, "out of memory"));
    memcpy(&cls->c, c, c->struct_size < sizeof cls->c ? c->struct_size : sizeof cls->c);
    cls->pack = reg->pack;
    reg->classes[reg->n_classes++] = cls;
    return LOOM_OK;
}

static loom_status register_device(loom_registrar *reg, const loom_device_provider *p)
{
    if (reg == NULL)
        return loom__fail(LOOM_EINVAL, "register_device: registrar is NULL (called outside init?)");
    if (p == NULL || p->struct_size < offsetof(loom_device_provider, synchronize) + sizeof p->synchronize
        || p->name == NULL || p->device_type == LOOM_DEVICE_CPU)
        return record(reg, loom__fail(LOOM_EINVAL, "device provider is NULL, too old, unnamed or for the CPU"));
    if (reg->n_providers == 4)
        return record(reg, loom__fail(LOOM_EINVAL, "too many device providers in one pack"));
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
static policy_rule rules[32];
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
    copy = loom__strdup(env);
    for (char *part = strtok_r(copy, ";", &save); part != NULL; part = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(part, '=');
        if (eq == NULL) {
            free(default_list);
            default_list = loom__strdup(part);
        } else if (n_rules < 32) {
            *eq = '\0';
            rules[n_rules].glob = loom__strdup(part);
            rules[n_rules].list = loom__strdup(eq + 1);
            n_rules++;
        } else {
            loom__log(0, "LOOM_BACKENDS: more than 32 per-op rules; '%s' ignored", part);
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
        struct loom_op *op = calloc(1, sizeof *op);
        if (op == NULL)
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
        struct loom_op *op = (struct loom_op *)loom__op_lookup(s, reg->kernels[i]->k.schema->name);
        if (op->n_kernels == LOOM__MAX_KERNELS) {
            snapshot_free(s);
            return loom__fail(LOOM_ENOMEM, "op %s has more than %d kernels", op->schema->name, LOOM__MAX_KERNELS);
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

loom_status loom__registrar_commit(loom_registrar *reg)
{
    const loom__snapshot *old = loom__snapshot_get();
    loom__snapshot *s;
    loom_status st;

    if (reg->failed != LOOM_OK)
        return reg->failed;
    /* Duplicate kernels: same op, backend and device from another pack. */
    for (int64_t i = 0; i < reg->n_kernels; i++) {
        const loom__kernel *k = reg->kernels[i];
        const struct loom_op *op = old ? loom__op_lookup(old, k->k.schema->name) : NULL;
        for (int32_t j = 0; op && j < op->n_kernels; j++) {
            const loom__kernel *o = op->kernels[j];
            if (strcmp(o->k.backend, k->k.backend) == 0 && o->k.device_type == k->k.device_type)
                return loom__fail(LOOM_ECONFLICT, "duplicate kernel: %s for backend %s is already provided by "
                                  "pack %s", k->k.schema->name, k->k.backend, o->pack->path);
        }
    }
    for (int i = 0; i < reg->n_providers; i++)
        if ((st = loom__device_add_provider(reg->providers[i], reg->pack->name)) != LOOM_OK)
            return st;
    if ((st = build_snapshot(old, reg, &s)) != LOOM_OK)
        return st;
    reg->pack->n_ops = reg->n_ops;
    reg->pack->n_kernels = reg->n_kernels;
    reg->pack->n_classes = reg->n_classes;
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
