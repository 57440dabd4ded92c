/* SPDX-License-Identifier: BSD-3-Clause */
/*
** pack.h - the one way a pack declares its ops, kernels and entry, shared
** by every pack (linked in from the pack_common static library).
**
** A pack is a list of modules (one folder each); a module is one op list.
** From that list come the schema table, the kernel table of each backend,
** the attribute index enum and the registration, so an op is named once:
**
**   // roi_schemas.c: the attributes of one op, then its schema
**   #define ROI_ALIGN_ATTRS(A, op)                                        \
**       A(op, spatial_scale, FLOAT, LOOM_DEFAULT_FLOAT(1.0), LOOM_ATTR_FINITE, "doc", ) \
**       A(op, aligned, BOOL, LOOM_DEFAULT_BOOL(0), 0, "doc", )
**   PK_ATTR_TABLE(roi_align, ROI_ALIGN_ATTRS);      // roi_align_attrs[]
**   PK_SCHEMA(roi_align_schema, "vision.roi_align", 1, "one line",
**             PK_INPUTS(align_inputs), PK_OUTPUTS(one_output),
**             PK_ATTRS(roi_align_attrs));
**
**   // roi.h: the index of each attribute, for kernels
**   PK_ATTR_ENUM(roi_align, ROI_ALIGN_ATTRS);       // PK_ATTR(roi_align, aligned) == 1
**   ... call->attrs[PK_ATTR(roi_align, aligned)].u.b ...
**
**   // roi_cpu.c: the kernel table of one backend
**   static const loom_kernel_desc roi_cpu_kernels[] = {
**       PK_KERNEL_CPU(roi_align_schema, "cpu:separable", PK_FLOAT_MASK, roi_run_cpu, .user = &ids[0]),
**       PK_KERNEL_CPU(roi_pool_schema, "cpu:nhwc-max", PK_F32_F64, roi_run_cpu),
**   };
**
**   // the module, per backend: its ops (shared) and its kernels
**   const pk_module vision_roi_cpu = PK_MODULE("roi", vision_roi_ops, roi_cpu_kernels, NULL);
**
**   // cpu_pack.c: the entry
**   PK_PACK_DEFINE("vision", "0.1.0", "doc", NULL, &vision_boxes_cpu, &vision_roi_cpu)
**
** Attribute rows: A(op, name, TYPE, default, flags, doc, extra) where TYPE
** is the loom_attr_type without its LOOM_ATTR_ prefix (INT, FLOAT, BOOL,
** STRING, INTS, FLOATS), flags the LOOM_ATTR_* constraint bits (0 for none)
** and extra is empty or more designated initialisers of loom_attr_def.
*/
#ifndef LOOM_PACK_PACK_H
#define LOOM_PACK_PACK_H

#include <stddef.h>

#include "loom/plugin.h"
#include "register.h"

/* ------------------------------------------------------------ attributes */

#define PK_ATTR(op, name) op##__##name
#define PK_ATTR_ENUM_ROW_(OP, N, T, DFLT, FLAGS, DOC, EXTRA) PK_ATTR(OP, N),
#define PK_ATTR_DEF_ROW_(OP, N, T, DFLT, FLAGS, DOC, EXTRA)                                     \
    { .name = #N, .type = LOOM_ATTR_##T, .flags = (FLAGS), .dflt = DFLT, .doc = (DOC), EXTRA },

/* enum { op__name0, op__name1, ..., op__n_attrs } */
#define PK_ATTR_ENUM(op, LIST) enum { LIST(PK_ATTR_ENUM_ROW_, op) op##__n_attrs }
/* static const loom_attr_def op_attrs[] = { ... } in list order */
#define PK_ATTR_TABLE(op, LIST) static const loom_attr_def op##_attrs[] = { LIST(PK_ATTR_DEF_ROW_, op) }

/* ---------------------------------------------------------------- schemas */

#define PK_INPUTS(arr) .n_inputs = (uint32_t)PK_COUNT(arr), .inputs = (arr)
#define PK_OUTPUTS(arr) .n_outputs = (uint32_t)PK_COUNT(arr), .outputs = (arr)
#define PK_ATTRS(arr) .n_attrs = (uint32_t)PK_COUNT(arr), .attrs = (arr)
#define PK_CHOICES(arr) .n_choices = (uint32_t)PK_COUNT(arr), .choices = (arr)

/* const loom_op_schema VAR = { name, version, doc, then the PK_INPUTS,
** PK_OUTPUTS, PK_ATTRS, .cost = ..., .object_class = ... given }. */
#define PK_SCHEMA(VAR, NAME, VERSION, DOC, ...)                                                 \
    const loom_op_schema VAR = { .struct_size = sizeof(loom_op_schema), .name = (NAME),         \
                                 .version = (VERSION), .doc = (DOC), __VA_ARGS__ }

/* ---------------------------------------------------------------- op lists */

/* A module's op list as an X-macro of its schema variables: the header
** declares the schemas and the module's ops table (sized by the list, so
** PK_MODULE can count it), the schemas file defines the table once, and it
** is compiled into every backend's pack so all define the same ops:
**   #define ROI_OPS(X) X(roi_align_schema) X(roi_pool_schema)
**   PK_OPS_DECLARE(roi_ops, ROI_OPS);            // in the module header
**   PK_OPS_DEFINE(roi_ops, ROI_OPS);             // in roi_schemas.c */
#define PK_OP_EXTERN_ROW_(VAR) extern const loom_op_schema VAR;
#define PK_OP_REF_ROW_(VAR) &(VAR),
#define PK_OP_ONE_(VAR) +1
#define PK_OPS_DECLARE(name, LIST) \
    LIST(PK_OP_EXTERN_ROW_) extern const loom_op_schema *const name[0 LIST(PK_OP_ONE_)]
#define PK_OPS_DEFINE(name, LIST) const loom_op_schema *const name[] = { LIST(PK_OP_REF_ROW_) }

/* ---------------------------------------------------------------- kernels */

/* One loom_kernel_desc initialiser (a table row or a variable's value).
** The last arguments are the run function, then optionally more designated
** initialisers: PK_KERNEL_CPU(s, "cpu:x", mask, run) or
** PK_KERNEL_CPU(s, "cpu:x", mask, run, .user = &ids[2], .supports = ok). */
#define PK_KERNEL(SCHEMA, BACKEND, DEVICE, IMPL, DTYPES, ...)                                   \
    { .struct_size = sizeof(loom_kernel_desc), .schema = &(SCHEMA), .backend = (BACKEND),       \
      .device_type = (DEVICE), .impl = (IMPL), .dtypes = (DTYPES), .run = __VA_ARGS__ }
#define PK_KERNEL_CPU(SCHEMA, IMPL, DTYPES, ...) \
    PK_KERNEL(SCHEMA, "cpu", LOOM_DEVICE_CPU, IMPL, DTYPES, __VA_ARGS__)
#define PK_KERNEL_CUDA(SCHEMA, IMPL, DTYPES, ...) \
    PK_KERNEL(SCHEMA, "cuda", LOOM_DEVICE_CUDA, IMPL, DTYPES, __VA_ARGS__)

/* ---------------------------------------------------------------- modules */

/* What one module gives one pack (one backend): the ops it defines (the
** same table in every backend's pack, so they define identical schemas),
** its object classes, its kernels, and an optional hook run before its
** kernels are registered (to choose ISA-dependent impl names on copies, or
** to register kernels that need more than a table). */
typedef struct pk_module {
    const char *name;
    const loom_op_schema *const *ops;
    size_t n_ops;
    const loom_object_class *const *classes;
    size_t n_classes;
    const loom_kernel_desc *kernels;
    size_t n_kernels;
    loom_status (*register_more)(const loom_host_api *host, loom_registrar *reg);
} pk_module;

#define PK_MODULE(NAME, OPS, KERNELS, MORE)                                                     \
    { .name = (NAME), .ops = (OPS), .n_ops = PK_COUNT(OPS), .kernels = (KERNELS),              \
      .n_kernels = PK_COUNT(KERNELS), .register_more = (MORE) }

/* The host of the pack this file is linked into: set by the pack's init
** before any kernel, object or callback of the pack runs (each pack links
** its own copy of pack_common, so each has its own pk_host). */
extern const loom_host_api *pk_host;

/* The init every PK_PACK_DEFINE pack runs: pk_host, pk_cpu_init, then
** `setup` when given (the pack's own: its device provider, tables that
** depend on the CPU), then every module's ops,
** every module's classes, every module's kernels (table, then
** register_more), in module order; stops at the first refusal. */
loom_status pk_pack_init(const loom_host_api *host, loom_registrar *reg, const pk_module *const *mods, size_t n,
                         loom_status (*setup)(const loom_host_api *host, loom_registrar *reg));

/* The entry of a pack made of modules. SETUP and FINI may be NULL;
** DEPS is a NULL-terminated `static const char *const[]` or NULL. */
#define PK_PACK_DEFINE_DEPS(NAME, VERSION, DOC, SETUP, FINI, DEPS, ...)                        \
    static const pk_module *const pk_pack_modules_[] = { __VA_ARGS__ };                         \
    static loom_status pk_pack_entry_init_(const loom_host_api *host, loom_registrar *reg)      \
    {                                                                                           \
        return pk_pack_init(host, reg, pk_pack_modules_, PK_COUNT(pk_pack_modules_), SETUP);   \
    }                                                                                           \
    LOOM_PLUGIN_DEFINE_DEPS(NAME, VERSION, DOC, pk_pack_entry_init_, FINI, DEPS)
#define PK_PACK_DEFINE(NAME, VERSION, DOC, SETUP, FINI, ...) \
    PK_PACK_DEFINE_DEPS(NAME, VERSION, DOC, SETUP, FINI, NULL, __VA_ARGS__)

#endif /* LOOM_PACK_PACK_H */
