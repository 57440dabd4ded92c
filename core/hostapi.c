/* SPDX-License-Identifier: BSD-3-Clause */
/*
** hostapi.c - the table of core services handed to every pack.
**
** Members are appended per ABI minor and never moved (see plugin.h); the
** _Static_asserts there freeze each released layout.
*/
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"

loom_status loom__host_define_op(loom_registrar *reg, const loom_op_schema *schema);
loom_status loom__host_register_kernel(loom_registrar *reg, const loom_kernel_desc *k);
loom_status loom__host_register_object_class(loom_registrar *reg, const loom_object_class *c);
loom_status loom__host_register_device(loom_registrar *reg, const loom_device_provider *p);

static void host_log(int level, const char *fmt, ...) LOOM_PRINTF(2, 3);
static void host_log(int level, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    const char *ctx = loom__error_context_get();

    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    /* LOOM_LOG_ERROR/WARN print always; INFO at verbose 1, DEBUG at 2. */
    loom__log(level <= LOOM_LOG_WARN ? 0 : level - 1, "%s%s%s", ctx ? ctx : "", ctx ? ": " : "", buf);
}

static void *host_alloc(loom_dl_device device, size_t nbytes, size_t alignment)
{
    if (loom__alloc_cap_check(nbytes, "alloc") != LOOM_OK)
        return NULL;
    return loom__dev_alloc(device, nbytes, alignment);
}

static void host_free(loom_dl_device device, void *ptr) { loom__dev_free(device, ptr); }

static loom_status host_map_file(const char *path, const void **data, size_t *nbytes)
{
    return loom__map_file(path, data, nbytes);
}

static void host_unmap_file(const void *data, size_t nbytes) { loom__unmap_file(data, nbytes); }

static int64_t host_st_count(const loom_safetensors *st) { return loom_safetensors_count(st); }
static const char *host_st_name(const loom_safetensors *st, int64_t i) { return loom_safetensors_name(st, i); }

static uint64_t host_cpu_features(void) { return loom__cpu_features(); }

/* Re-open a library the pack already links with RTLD_GLOBAL, so libraries
** that look their own symbols up globally (MPI's plugins, OpenMP) work from
** a pack loaded RTLD_LOCAL. Only during a pack's init. */
static loom_status host_load_global(const char *soname)
{
    void *h;
    if (soname == NULL || soname[0] == '\0')
        return loom__fail(LOOM_EINVAL, "load_global: no library name");
    h = dlopen(soname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
    if (h == NULL)
        h = dlopen(soname, RTLD_NOW | RTLD_GLOBAL);
    if (h == NULL)
        return loom__fail(LOOM_ENOENT, "load_global: %s: %s", soname, dlerror());
    /* the handle stays open: the library must outlive the pack */
    loom__log(1, "load_global: %s is now global", soname);
    return LOOM_OK;
}

const loom_host_api loom__host_api = {
    .struct_size = sizeof(loom_host_api),
    .abi_major = LOOM_ABI_MAJOR,
    .abi_minor = LOOM_ABI_MINOR,
    .fail = loom__fail,
    .log = host_log,
    .define_op = loom__host_define_op,
    .register_kernel = loom__host_register_kernel,
    .register_object_class = loom__host_register_object_class,
    .register_device = loom__host_register_device,
    .alloc = host_alloc,
    .free = host_free,
    .scratch = loom__scratch,
    .alloc_output = loom__alloc_output,
    .parallel_for = loom__parallel_for,
    .map_file = host_map_file,
    .unmap_file = host_unmap_file,
    .safetensors_get = loom__safetensors_get,
    .safetensors_count = host_st_count,
    .safetensors_name = host_st_name,
    .dtype_size = loom_dtype_size,
    .dtype_name = loom_dtype_name,
    .dtype_to_dl = loom_dtype_to_dl,
    .get_extension = loom__get_extension,   /* the interfaces packs registered; none of the core's own yet */
    /* ABI 1.1 */
    .cpu_features = host_cpu_features,
    .op_find = loom__host_op_find,
    .op_call = loom__host_op_call,
    .tensor_free = loom__host_tensor_free,
    .plan_create = loom__host_plan_create,
    .plan_run = loom__host_plan_run,
    .plan_free = loom_plan_free,
    .object_backend_state = loom__host_object_backend_state,
    .register_interface = loom__host_register_interface,
    .load_global = host_load_global,
    /* ABI 1.3 */
    .object_create = loom__host_object_create,
    .object_free = loom_object_free,
    /* ABI 1.6 */
    .adopt_output = loom__adopt_output,
    .dtype_from_name = loom_dtype_from_name,
};
