/* SPDX-License-Identifier: BSD-3-Clause */
/*
** probe.c - vetted pack loading (loom_init_options.probe_packs, LOOM_PROBE=1).
**
** With probing on, a pack the core has not seen before is first loaded in a
** short-lived child process: the child dlopens it, calls its entry and its
** init with a host table whose registration calls only record, runs the
** count() of the device providers it registered (what commit runs), and
** reports each step through a pipe. The parent waits at most
** LOOM_PROBE_TIMEOUT seconds (default 5). A pack whose init crashes (a
** signal), hangs (the child is killed at the timeout) or fails is recorded
** as quarantined in a cache; a pack that passed is recorded as good, and
** neither is probed again while its file is unchanged. The host process
** never dlopens a quarantined pack.
**
** Why a helper executable (posix_spawn of loom-probe) and not fork():
** loom_init runs in processes that already have threads (the core's own
** pool is started before packs are scanned; hosts have theirs), and after
** fork() a child of a multithreaded process may only call async-signal-safe
** functions until it execs. dlopen, malloc and a pack's init are not: a lock
** held by another thread at the fork (the loader's, malloc's, stdio's)
** stays locked forever in the child, which then deadlocks, and would be
** reported as a hanging pack. Forking before any thread exists is not
** something a library can guarantee. So the child execs loom-probe, this
** same file built with LOOM_PROBE_HELPER, a small program that links only
** libdl: it starts clean, shares no state with the host, and dies with
** whatever the pack does. It is installed in <libdir>/loom/ (next to the
** plugin directory) and found relative to libloom like the plugins (dladdr),
** then in the configured install directory, then in the build tree when
** libloom runs from it.
**
** A pack that declares dependencies is probed in two steps: its entry (and
** the constructors dlopen runs) at once, and its init when its turn comes,
** in a child that first initialises, with the same recording host, the
** already loaded packs it depends on (transitively), so that its op_find and
** get_extension calls see what they will see in the host.
**
** The cache is one text file, $XDG_CACHE_HOME/loom/probe-cache (else
** $HOME/.cache/loom/probe-cache), one line per file: verdict, content hash,
** size, mtime, probe time, path, reason. A record applies only while path,
** size, mtime (nanoseconds) and the content hash all match. The hash is
** 64-bit FNV-1a over the file's bytes: cheap (packs are a few MB) and enough
** to notice a rebuilt or replaced file; it is not a defence against an
** attacker who can write the pack, who could run code anyway. Writes replace
** the file atomically (temp file + rename); a file that does not parse is
** ignored with a log line and rewritten on the next probe, never fatal.
*/
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom/plugin.h"
#include "dtype_names.h"

/* The C++-mangled name of loom_plugin_entry(uint16_t, uint16_t): what a C++
** pack that defines the entry without extern "C" exports. */
#define MANGLED_ENTRY "_Z17loom_plugin_entrytt"

#ifdef LOOM_PROBE_HELPER
#  define SHARED static
#else
#  include "registry.h"
#  define SHARED
#endif

/* ---------------------------------------------- shared with the helper */

/* ISO C has no object-to-function pointer conversion; POSIX guarantees it
** for dlsym(). This is the only place in loom that performs it. *mangled is
** set when only the C++-mangled entry exists. */
SHARED loom_plugin_entry_fn loom__entry_lookup(void *lib, bool *mangled)
{
    void *sym = dlsym(lib, LOOM_PLUGIN_ENTRY_SYMBOL);
    loom_plugin_entry_fn fn;
    _Static_assert(sizeof fn == sizeof sym, "function and data pointers differ");
    *mangled = false;
    if (sym == NULL) {
        *mangled = dlsym(lib, MANGLED_ENTRY) != NULL;
        return NULL;
    }
    memcpy(&fn, &sym, sizeof fn);
    return fn;
}

SHARED const char *loom__entry_missing_text(bool mangled, char *buf, size_t size)
{
    if (mangled)
        snprintf(buf, size, "no entry symbol %s; the library exports the C++-mangled %s: define the entry with "
                 "LOOM_PLUGIN_DEFINE, which gives it C linkage", LOOM_PLUGIN_ENTRY_SYMBOL, MANGLED_ENTRY);
    else
        snprintf(buf, size, "no entry symbol %s (not a loom pack?)", LOOM_PLUGIN_ENTRY_SYMBOL);
    return buf;
}

/* Why the loader refuses this descriptor, or NULL when it may be read. */
SHARED const char *loom__desc_problem(const loom_plugin_desc *desc, char *buf, size_t size)
{
    if (desc == NULL)
        snprintf(buf, size, "entry returned no descriptor for ABI %d.%d (the pack does not support this core's "
                 "ABI major)", LOOM_ABI_MAJOR, LOOM_ABI_MINOR);
    else if (desc->magic != LOOM_PLUGIN_MAGIC)
        snprintf(buf, size, "bad magic 0x%08x (expected 0x%08x)", desc->magic, LOOM_PLUGIN_MAGIC);
    else if (desc->abi_major != LOOM_ABI_MAJOR)
        snprintf(buf, size, "built for ABI major %u (ABI %u.%u), this core speaks ABI %d.%d", desc->abi_major,
                 desc->abi_major, desc->abi_minor_built, LOOM_ABI_MAJOR, LOOM_ABI_MINOR);
    else if (desc->abi_minor_required > LOOM_ABI_MINOR)
        snprintf(buf, size, "requires ABI %u.%u but this core provides ABI %d.%d: update loom", desc->abi_major,
                 desc->abi_minor_required, LOOM_ABI_MAJOR, LOOM_ABI_MINOR);
    else if (desc->struct_size < offsetof(loom_plugin_desc, fini) || desc->name == NULL || desc->init == NULL)
        snprintf(buf, size, "descriptor too small (%u bytes) or without name/init", desc->struct_size);
    else
        return NULL;
    return buf;
}

/* desc->depends when the descriptor has the member, else NULL. */
SHARED const char *const *loom__desc_depends(const loom_plugin_desc *desc)
{
    return LOOM_HAS_MEMBER(desc, loom_plugin_desc, depends) ? desc->depends : NULL;
}

#ifdef LOOM_PROBE_HELPER
/* ====================================================== the helper (child)
**
** loom-probe --fd N --cpu-features HEX [--describe] -- PACK...
**
** Loads each PACK in order, calling its init with the recording host; the
** last one is the pack being vetted, the others are its dependencies. With
** --describe only the last is given, and its init runs only when it has no
** dependencies. Writes lines to fd N:
**   stage I open|entry|init|devices   before each step of pack I
**   ok I                             pack I passed every step
**   deps I                           (--describe) pack I has dependencies: init not run
**   refuse I TEXT                    the loader refuses pack I before init (TEXT says why)
**   fail I STATUS TEXT               pack I's init returned STATUS (a loom_status)
**   end                              done; the helper exits at once
** A child that stops without "end" crashed or hung in its last stage.
*/
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

struct loom_registrar { int pack; };

static int out_fd = -1;
static uint64_t cpu_bits;
static _Thread_local char fail_text[1024];

typedef struct rec_op { const char *name; int pack; } rec_op;
typedef struct rec_iface { const char *name; uint32_t version; const void *vtable; int pack; } rec_iface;
static rec_op *ops;
static size_t n_ops, cap_ops;
static rec_iface *ifaces;
static size_t n_ifaces, cap_ifaces;
static const loom_device_provider *providers[64];
static int provider_pack[64];
static int n_providers;
static int committed = -1;    /* packs [0, committed] passed init: their ops are visible */

static void emit(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void emit(const char *fmt, ...)
{
    char line[1200];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof line - 2)
        n = (int)sizeof line - 2;
    for (int i = 0; i < n; i++)
        if (line[i] == '\n' || line[i] == '\r')
            line[i] = ' ';
    line[n++] = '\n';
    for (int off = 0; off < n;) {
        ssize_t w = write(out_fd, line + off, (size_t)(n - off));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            _exit(3);
        off += (int)w;
    }
}

static bool grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t n = *cap ? 2 * *cap : 64;
    void *p = realloc(*arr, n * elem);
    if (p == NULL)
        return false;
    *arr = p;
    *cap = n;
    return true;
}

static loom_status p_fail(loom_status status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static loom_status p_fail(loom_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fail_text, sizeof fail_text, fmt, ap);
    va_end(ap);
    return status;
}

static void p_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void p_log(int level, const char *fmt, ...)
{
    va_list ap;
    (void)level;
    fputs("loom-probe: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static loom_status record_op(loom_registrar *reg, const char *name)
{
    if (reg == NULL)
        return p_fail(LOOM_EINVAL, "registrar is NULL (called outside init?)");
    if (name == NULL)
        return LOOM_OK;   /* the host would refuse it at commit; not the probe's business */
    if (!grow((void **)&ops, &cap_ops, n_ops + 1, sizeof *ops))
        return p_fail(LOOM_ENOMEM, "out of memory");
    ops[n_ops++] = (rec_op){ name, reg->pack };
    return LOOM_OK;
}

static loom_status p_define_op(loom_registrar *reg, const loom_op_schema *s)
{
    return record_op(reg, s != NULL && s->struct_size >= offsetof(loom_op_schema, name) + sizeof s->name
                         ? s->name : NULL);
}

static loom_status p_register_kernel(loom_registrar *reg, const loom_kernel_desc *k)
{
    const loom_op_schema *s = k != NULL && k->struct_size >= offsetof(loom_kernel_desc, schema) + sizeof k->schema
                            ? k->schema : NULL;
    return record_op(reg, s != NULL ? s->name : NULL);
}

static loom_status p_register_object_class(loom_registrar *reg, const loom_object_class *c)
{
    (void)c;
    return reg == NULL ? p_fail(LOOM_EINVAL, "registrar is NULL (called outside init?)") : LOOM_OK;
}

static loom_status p_register_device(loom_registrar *reg, const loom_device_provider *p)
{
    if (reg == NULL)
        return p_fail(LOOM_EINVAL, "registrar is NULL (called outside init?)");
    if (p != NULL && n_providers < (int)(sizeof providers / sizeof providers[0])) {
        provider_pack[n_providers] = reg->pack;
        providers[n_providers++] = p;
    }
    return LOOM_OK;
}

static loom_status p_register_interface(loom_registrar *reg, const char *name, uint32_t version, const void *vt)
{
    if (reg == NULL)
        return p_fail(LOOM_EINVAL, "registrar is NULL (called outside init?)");
    if (name == NULL || vt == NULL)
        return p_fail(LOOM_EINVAL, "register_interface: name and vtable are required");
    if (!grow((void **)&ifaces, &cap_ifaces, n_ifaces + 1, sizeof *ifaces))
        return p_fail(LOOM_ENOMEM, "out of memory");
    ifaces[n_ifaces++] = (rec_iface){ name, version, vt, reg->pack };
    return LOOM_OK;
}

static void *p_get_extension(const char *name, uint32_t version)
{
    for (size_t i = 0; name != NULL && i < n_ifaces; i++)
        if (ifaces[i].pack <= committed && ifaces[i].version == version && strcmp(ifaces[i].name, name) == 0)
            return (void *)(uintptr_t)ifaces[i].vtable;
    return NULL;
}

/* A handle that only says "this op exists": nothing can be called with it. */
static const char op_token[1];

static const loom_op *p_op_find(const char *name)
{
    for (size_t i = 0; name != NULL && i < n_ops; i++)
        if (ops[i].pack <= committed && strcmp(ops[i].name, name) == 0)
            return (const loom_op *)(const void *)op_token;
    p_fail(LOOM_ENOENT, "op_find: no operator named '%s' (a pack that calls it lists its pack in depends)",
           name != NULL ? name : "(null)");
    return NULL;
}

static loom_status p_op_call(loom_exec_ctx *ctx, const loom_op_call *call)
{
    (void)ctx;
    (void)call;
    return p_fail(LOOM_ENOTSUP, "op_call is not available while the pack is probed");
}

static void p_tensor_free(loom_tensor *t) { (void)t; }

static loom_status p_plan_create(loom_exec_ctx *ctx, const loom_op_call *proto, loom_plan **out)
{
    (void)ctx;
    (void)proto;
    if (out != NULL)
        *out = NULL;
    return p_fail(LOOM_ENOTSUP, "plan_create is not available while the pack is probed");
}

static loom_status p_plan_run(loom_exec_ctx *ctx, loom_plan *plan, const loom_tensor *const *inputs,
                            int32_t n_inputs, loom_tensor **outputs, int32_t n_outputs)
{
    (void)ctx; (void)plan; (void)inputs; (void)n_inputs; (void)outputs; (void)n_outputs;
    return p_fail(LOOM_ENOTSUP, "plan_run is not available while the pack is probed");
}

static void p_plan_free(loom_plan *plan) { (void)plan; }

static void *p_object_backend_state(loom_call *call, loom_backend_state_create create,
                                    loom_backend_state_destroy destroy)
{
    (void)call; (void)create; (void)destroy;
    p_fail(LOOM_ENOTSUP, "object_backend_state is not available while the pack is probed");
    return NULL;
}

static loom_object *p_object_create(loom_exec_ctx *ctx, const loom_object_request *request)
{
    (void)ctx; (void)request;
    p_fail(LOOM_ENOTSUP, "object_create is not available while the pack is probed");
    return NULL;
}

static void p_object_free(loom_object *object) { (void)object; }

static void *p_alloc(loom_dl_device device, size_t nbytes, size_t alignment)
{
    void *p = NULL;
    if (device.device_type != LOOM_DEVICE_CPU) {
        p_fail(LOOM_ENODEV, "alloc: only CPU memory while the pack is probed");
        return NULL;
    }
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0)
        alignment = 64;
    if (posix_memalign(&p, alignment, nbytes ? nbytes : 1) != 0) {
        p_fail(LOOM_ENOMEM, "alloc: out of memory");
        return NULL;
    }
    return p;
}

static void p_free(loom_dl_device device, void *ptr)
{
    (void)device;
    free(ptr);
}

static void *p_scratch(loom_exec_ctx *ctx, size_t nbytes)
{
    (void)ctx;
    (void)nbytes;
    p_fail(LOOM_ENOTSUP, "scratch: no call is running while the pack is probed");
    return NULL;
}

static loom_status p_alloc_output(loom_call *call, int32_t index, loom_dtype dtype, int32_t ndim,
                                const int64_t *shape, loom_tensor **out)
{
    (void)call; (void)index; (void)dtype; (void)ndim; (void)shape;
    if (out != NULL)
        *out = NULL;
    return p_fail(LOOM_ENOTSUP, "alloc_output: no call is running while the pack is probed");
}

static loom_status p_adopt_output(loom_call *call, int32_t index, const loom_output_storage *storage,
                                loom_tensor **out)
{
    (void)call; (void)index;
    if (out != NULL)
        *out = NULL;
    if (storage != NULL && storage->release != NULL)
        storage->release(storage->user, storage->data);   /* the buffer is the core's once offered */
    return p_fail(LOOM_ENOTSUP, "adopt_output: no call is running while the pack is probed");
}

static loom_status p_parallel_for(loom_exec_ctx *ctx, int64_t n, int64_t grain, loom_range_fn fn, void *user)
{
    (void)ctx;
    (void)grain;
    if (fn != NULL && n > 0)
        fn(user, 0, n, 0);
    return LOOM_OK;
}

static loom_status p_map_file(const char *path, const void **data, size_t *nbytes)
{
    static const unsigned char empty[1];
    struct stat sb;
    int fd;

    if (data == NULL || nbytes == NULL || path == NULL)
        return p_fail(LOOM_EINVAL, "map_file: path and out pointers must not be NULL");
    *data = NULL;
    *nbytes = 0;
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return p_fail(errno == ENOENT ? LOOM_ENOENT : LOOM_EIO, "cannot open '%s': %s", path, strerror(errno));
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return p_fail(LOOM_EIO, "cannot map '%s'", path);
    }
    if (sb.st_size == 0) {
        close(fd);
        *data = empty;
        return LOOM_OK;
    }
    void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return p_fail(LOOM_EIO, "cannot map '%s': %s", path, strerror(errno));
    *data = p;
    *nbytes = (size_t)sb.st_size;
    return LOOM_OK;
}

static void p_unmap_file(const void *data, size_t nbytes)
{
    if (data != NULL && nbytes > 0)
        munmap((void *)(uintptr_t)data, nbytes);
}

static loom_status p_st_get(const loom_safetensors *st, const char *name, const loom_tensor **out)
{
    (void)st;
    (void)name;
    if (out != NULL)
        *out = NULL;
    return p_fail(LOOM_ENOTSUP, "safetensors_get: no weights while the pack is probed");
}
static int64_t p_st_count(const loom_safetensors *st) { (void)st; return 0; }
static const char *p_st_name(const loom_safetensors *st, int64_t i) { (void)st; (void)i; return NULL; }

static const struct { const char *name; size_t size; loom_dl_dtype dl; } dtypes[LOOM_DTYPE_COUNT] = {
    [LOOM_DTYPE_F32] = { "f32", 4, { LOOM_DL_FLOAT, 32, 1 } },
    [LOOM_DTYPE_F64] = { "f64", 8, { LOOM_DL_FLOAT, 64, 1 } },
    [LOOM_DTYPE_F16] = { "f16", 2, { LOOM_DL_FLOAT, 16, 1 } },
    [LOOM_DTYPE_BF16] = { "bf16", 2, { LOOM_DL_BFLOAT, 16, 1 } },
    [LOOM_DTYPE_F8E4M3] = { "f8e4m3", 1, { LOOM_DL_FLOAT8_E4M3FN, 8, 1 } },
    [LOOM_DTYPE_I8] = { "i8", 1, { LOOM_DL_INT, 8, 1 } },
    [LOOM_DTYPE_U8] = { "u8", 1, { LOOM_DL_UINT, 8, 1 } },
    [LOOM_DTYPE_I16] = { "i16", 2, { LOOM_DL_INT, 16, 1 } },
    [LOOM_DTYPE_I32] = { "i32", 4, { LOOM_DL_INT, 32, 1 } },
    [LOOM_DTYPE_I64] = { "i64", 8, { LOOM_DL_INT, 64, 1 } },
    [LOOM_DTYPE_BOOL] = { "bool", 1, { LOOM_DL_BOOL, 8, 1 } },
    [LOOM_DTYPE_C64] = { "c64", 8, { LOOM_DL_COMPLEX, 64, 1 } },
    [LOOM_DTYPE_C128] = { "c128", 16, { LOOM_DL_COMPLEX, 128, 1 } },
    [LOOM_DTYPE_U16] = { "u16", 2, { LOOM_DL_UINT, 16, 1 } },
    [LOOM_DTYPE_U32] = { "u32", 4, { LOOM_DL_UINT, 32, 1 } },
};
static bool dtype_ok(loom_dtype d) { return d > LOOM_DTYPE_INVALID && d < LOOM_DTYPE_COUNT; }
static size_t p_dtype_size(loom_dtype d) { return dtype_ok(d) ? dtypes[d].size : 0; }
static const char *p_dtype_name(loom_dtype d) { return dtype_ok(d) ? dtypes[d].name : "invalid"; }
static loom_dl_dtype p_dtype_to_dl(loom_dtype d)
{
    loom_dl_dtype none = { 0, 0, 0 };
    return dtype_ok(d) ? dtypes[d].dl : none;
}

static loom_dtype p_dtype_from_name(const char *name) { return loom__dtype_parse(name, p_dtype_name); }

static uint64_t p_cpu_features(void) { return cpu_bits; }

static loom_status p_load_global(const char *soname)
{
    if (soname == NULL || soname[0] == '\0')
        return p_fail(LOOM_EINVAL, "load_global: no library name");
    if (dlopen(soname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD) == NULL && dlopen(soname, RTLD_NOW | RTLD_GLOBAL) == NULL)
        return p_fail(LOOM_ENOENT, "load_global: %s: %s", soname, dlerror());
    return LOOM_OK;
}

static const loom_host_api probe_host = {
    .struct_size = sizeof(loom_host_api),
    .abi_major = LOOM_ABI_MAJOR,
    .abi_minor = LOOM_ABI_MINOR,
    .fail = p_fail,
    .log = p_log,
    .define_op = p_define_op,
    .register_kernel = p_register_kernel,
    .register_object_class = p_register_object_class,
    .register_device = p_register_device,
    .alloc = p_alloc,
    .free = p_free,
    .scratch = p_scratch,
    .alloc_output = p_alloc_output,
    .parallel_for = p_parallel_for,
    .map_file = p_map_file,
    .unmap_file = p_unmap_file,
    .safetensors_get = p_st_get,
    .safetensors_count = p_st_count,
    .safetensors_name = p_st_name,
    .dtype_size = p_dtype_size,
    .dtype_name = p_dtype_name,
    .dtype_to_dl = p_dtype_to_dl,
    .get_extension = p_get_extension,
    .cpu_features = p_cpu_features,
    .op_find = p_op_find,
    .op_call = p_op_call,
    .tensor_free = p_tensor_free,
    .plan_create = p_plan_create,
    .plan_run = p_plan_run,
    .plan_free = p_plan_free,
    .object_backend_state = p_object_backend_state,
    .register_interface = p_register_interface,
    .load_global = p_load_global,
    .object_create = p_object_create,
    .object_free = p_object_free,
    .adopt_output = p_adopt_output,
    .dtype_from_name = p_dtype_from_name,
};

static int usage(void)
{
    fprintf(stderr, "usage: loom-probe --fd N --cpu-features HEX [--describe] -- PACK...\n"
                    "  The child process of loom's vetted pack loading (LOOM_PROBE=1); not meant to be run by hand.\n");
    return 2;
}

int main(int argc, char **argv)
{
    bool describe = false;
    int first = -1;
    char text[1024];

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--fd") == 0 && i + 1 < argc)
            out_fd = atoi(argv[++i]);
        else if (strcmp(argv[i], "--cpu-features") == 0 && i + 1 < argc)
            cpu_bits = strtoull(argv[++i], NULL, 16);
        else if (strcmp(argv[i], "--describe") == 0)
            describe = true;
        else if (strcmp(argv[i], "--") == 0) {
            first = i + 1;
            break;
        } else
            return usage();
    }
    if (out_fd < 0 || first < 0 || first >= argc)
        return usage();
    int n = argc - first;
    for (int i = 0; i < n; i++) {
        const char *path = argv[first + i];
        struct loom_registrar reg = { i };
        loom_plugin_entry_fn entry;
        const loom_plugin_desc *desc;
        const char *problem;
        const char *const *deps;
        bool mangled;
        loom_status st;

        emit("stage %d open", i);
        void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (lib == NULL) {
            emit("refuse %d not loadable: %s", i, dlerror());
            break;
        }
        emit("stage %d entry", i);
        if ((entry = loom__entry_lookup(lib, &mangled)) == NULL) {
            emit("refuse %d %s", i, loom__entry_missing_text(mangled, text, sizeof text));
            break;
        }
        desc = entry(LOOM_ABI_MAJOR, LOOM_ABI_MINOR);
        if ((problem = loom__desc_problem(desc, text, sizeof text)) != NULL) {
            emit("refuse %d %s", i, problem);
            break;
        }
        deps = loom__desc_depends(desc);
        if (describe && deps != NULL && deps[0] != NULL) {
            emit("deps %d", i);
            break;
        }
        emit("stage %d init", i);
        fail_text[0] = '\0';
        st = desc->init(&probe_host, &reg);
        if (st != LOOM_OK) {
            emit("fail %d %d %s", i, (int)st, fail_text[0] ? fail_text : "(no message)");
            break;
        }
        committed = i;
        emit("stage %d devices", i);
        for (int p = 0; p < n_providers; p++)
            if (provider_pack[p] == i && providers[p]->struct_size >= offsetof(loom_device_provider, count)
                + sizeof providers[p]->count && providers[p]->count != NULL)
                (void)providers[p]->count();
        emit("ok %d", i);
    }
    emit("end");
    /* No fini, no atexit handlers, no leak report: the packs stay as they are. */
    _exit(0);
}

#else
/* ====================================================== the core (parent) */

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define CACHE_HEADER "# loom probe cache 1"
#define HELPER_NAME "loom-probe"

/* ------------------------------------------------------------- the cache */

typedef struct probe_rec {
    char *path;
    bool bad;
    char *reason;           /* "" for a good record */
    int64_t probed_at;      /* Unix seconds */
    uint64_t size;
    int64_t mtime_ns;
    uint64_t hash;
} probe_rec;

typedef struct probe_cache {
    probe_rec *recs;
    int64_t n, cap;
} probe_cache;

static void cache_clear(probe_cache *c)
{
    for (int64_t i = 0; i < c->n; i++) {
        free(c->recs[i].path);
        free(c->recs[i].reason);
    }
    free(c->recs);
    memset(c, 0, sizeof *c);
}

/* The cache file, or false when neither XDG_CACHE_HOME nor HOME is set
** (privileged processes: secure_getenv). dir gets its directory. */
static bool cache_file(char *file, size_t size, char *dir, size_t dir_size)
{
    const char *xdg = secure_getenv("XDG_CACHE_HOME"), *home = secure_getenv("HOME");
    int n;

    if (xdg != NULL && xdg[0] == '/')
        n = snprintf(dir, dir_size, "%s/loom", xdg);
    else if (home != NULL && home[0] == '/')
        n = snprintf(dir, dir_size, "%s/.cache/loom", home);
    else
        return false;
    if (n < 0 || (size_t)n >= dir_size)
        return false;
    n = snprintf(file, size, "%s/probe-cache", dir);
    return n > 0 && (size_t)n < size;
}

static bool parse_u64(const char *s, int base, uint64_t *out)
{
    char *end;
    if (s[0] == '\0' || s[0] == '-')
        return false;
    errno = 0;
    *out = strtoull(s, &end, base);
    return *end == '\0' && errno == 0;
}

static bool parse_i64(const char *s, int64_t *out)
{
    char *end;
    if (s[0] == '\0')
        return false;
    errno = 0;
    *out = strtoll(s, &end, 10);
    return *end == '\0' && errno == 0;
}

/* One line "good|bad \t hash \t size \t mtime_ns \t probed_at \t path \t reason". */
static bool parse_line(char *line, probe_rec *r)
{
    char *field[7];
    int n = 0;

    memset(r, 0, sizeof *r);
    for (char *p = line; n < 7; n++) {
        field[n] = p;
        char *tab = n < 6 ? strchr(p, '\t') : NULL;
        if (n < 6 && tab == NULL)
            return false;
        if (tab != NULL) {
            *tab = '\0';
            p = tab + 1;
        }
    }
    if (strcmp(field[0], "good") != 0 && strcmp(field[0], "bad") != 0)
        return false;
    r->bad = field[0][0] == 'b';
    if (!parse_u64(field[1], 16, &r->hash) || !parse_u64(field[2], 10, &r->size)
        || !parse_i64(field[3], &r->mtime_ns) || !parse_i64(field[4], &r->probed_at)
        || field[5][0] != '/' || strchr(field[6], '\t') != NULL)
        return false;
    r->path = loom__strdup(field[5]);
    r->reason = loom__strdup(field[6]);
    if (r->path == NULL || r->reason == NULL) {
        free(r->path);
        free(r->reason);
        return false;
    }
    return true;
}

static bool cache_add(probe_cache *c, const probe_rec *r)
{
    if (c->n == c->cap) {
        int64_t cap = c->cap ? 2 * c->cap : 16;
        probe_rec *p = realloc(c->recs, (size_t)cap * sizeof *p);
        if (p == NULL)
            return false;
        c->recs = p;
        c->cap = cap;
    }
    c->recs[c->n++] = *r;
    return true;
}

/* Read the cache file into c (empty when absent). A file that does not
** parse is ignored, with a log line naming it and the line (unless quiet:
** a re-read before a write, which then replaces it). */
static void cache_load_quiet(probe_cache *c, bool quiet)
{
    char file[PATH_MAX], dir[PATH_MAX];
    FILE *f;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int64_t lineno = 0;

    cache_clear(c);
    if (!cache_file(file, sizeof file, dir, sizeof dir) || (f = fopen(file, "re")) == NULL)
        return;
    while ((len = getline(&line, &cap, f)) >= 0) {
        probe_rec r;
        lineno++;
        if (len > 0 && line[len - 1] == '\n')
            line[--len] = '\0';
        if (lineno == 1) {
            if (strcmp(line, CACHE_HEADER) != 0)
                goto corrupt;
            continue;
        }
        if (line[0] == '\0')
            continue;
        if (!parse_line(line, &r))
            goto corrupt;
        if (!cache_add(c, &r)) {
            free(r.path);
            free(r.reason);
            loom__log(0, "probe cache %s: out of memory reading it; ignored", file);
            cache_clear(c);
            break;
        }
    }
    free(line);
    fclose(f);
    return;
corrupt:
    if (!quiet)
        loom__log(0, "probe cache %s is corrupt (line %lld does not parse); ignored: every pack is probed again "
                  "and the file is rewritten", file, (long long)lineno);
    free(line);
    fclose(f);
    cache_clear(c);
}

static void cache_load(probe_cache *c) { cache_load_quiet(c, false); }

static int mkdir_p(const char *dir)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *p = buf + 1; *p != '\0'; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0700) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(buf, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

/* Write c over the cache file atomically. */
static loom_status cache_save(const probe_cache *c)
{
    char file[PATH_MAX], dir[PATH_MAX];
    size_t len = 0, cap = 256;
    char *text = malloc(cap);
    loom_status st;

    if (!cache_file(file, sizeof file, dir, sizeof dir)) {
        free(text);
        return loom__fail(LOOM_ENOENT, "no probe cache: neither XDG_CACHE_HOME nor HOME is set");
    }
    if (text == NULL)
        return loom__fail(LOOM_ENOMEM, "out of memory");
    len = (size_t)snprintf(text, cap, "%s\n", CACHE_HEADER);
    for (int64_t i = 0; i < c->n; i++) {
        const probe_rec *r = &c->recs[i];
        for (;;) {
            int n = snprintf(text + len, cap - len, "%s\t%016llx\t%llu\t%lld\t%lld\t%s\t%s\n", r->bad ? "bad" : "good",
                             (unsigned long long)r->hash, (unsigned long long)r->size, (long long)r->mtime_ns,
                             (long long)r->probed_at, r->path, r->reason);
            if (n >= 0 && (size_t)n < cap - len) {
                len += (size_t)n;
                break;
            }
            char *grown = n >= 0 ? realloc(text, 2 * cap + (size_t)n) : NULL;
            if (grown == NULL) {
                free(text);
                return loom__fail(LOOM_ENOMEM, "out of memory");
            }
            text = grown;
            cap = 2 * cap + (size_t)n;
        }
    }
    if (mkdir_p(dir) != 0) {
        st = loom__fail(LOOM_EIO, "cannot create %s: %s", dir, strerror(errno));
    } else {
        const void *chunks[1] = { text };
        size_t sizes[1] = { len };
        st = loom__write_file(file, chunks, sizes, 1);
    }
    free(text);
    return st;
}

/* A path or reason that fits in one field of a line. */
static bool storable(const char *s)
{
    return s[0] == '/' && strpbrk(s, "\t\n\r") == NULL;
}

/* --------------------------------------------------------- file identity */

typedef struct file_key { uint64_t size, hash; int64_t mtime_ns; } file_key;

static bool key_of(const char *path, file_key *k, char *why, size_t why_size)
{
    unsigned char buf[1 << 16];
    struct stat sb;
    uint64_t h = 0xcbf29ce484222325ull;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n;

    if (fd < 0 || fstat(fd, &sb) != 0) {
        snprintf(why, why_size, "cannot read it: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return false;
    }
    while ((n = read(fd, buf, sizeof buf)) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            snprintf(why, why_size, "cannot read it: %s", strerror(errno));
            close(fd);
            return false;
        }
        for (ssize_t i = 0; i < n; i++)
            h = (h ^ buf[i]) * 0x100000001b3ull;
    }
    close(fd);
    k->size = (uint64_t)sb.st_size;
    k->mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
    k->hash = h;
    return true;
}

/* ------------------------------------------------------------ the helper */

static bool executable_at(char *buf, size_t size, const char *fmt, const char *dir)
{
    int n = snprintf(buf, size, fmt, dir);
    return n > 0 && (size_t)n < size && access(buf, X_OK) == 0;
}

/* loom-probe next to libloom (<libdir>/loom/), installed, or in the build tree. */
static bool find_helper(char *buf, size_t size)
{
    char here[PATH_MAX], root[PATH_MAX];
    Dl_info info;

    here[0] = '\0';
    if (dladdr((void *)(uintptr_t)&find_helper, &info) != 0 && info.dli_fname != NULL
        && realpath(info.dli_fname, here) != NULL) {
        char *slash = strrchr(here, '/');
        if (slash != NULL)
            *slash = '\0';
    }
    if (here[0] != '\0' && executable_at(buf, size, "%s/loom/" HELPER_NAME, here))
        return true;
    snprintf(root, sizeof root, "%s", LOOM_PLUGIN_DIR);           /* <libdir>/loom/plugins */
    if (strrchr(root, '/') != NULL)
        *strrchr(root, '/') = '\0';
    if (executable_at(buf, size, "%s/" HELPER_NAME, root))
        return true;
    snprintf(root, sizeof root, "%s", LOOM_BUILD_PLUGIN_DIR);     /* <build>/plugins */
    if (strrchr(root, '/') != NULL)
        *strrchr(root, '/') = '\0';
    if (here[0] != '\0' && strncmp(here, root, strlen(root)) == 0
        && executable_at(buf, size, "%s/core/" HELPER_NAME, root))
        return true;
    return false;
}

/* ------------------------------------------------------------- one probe */

enum { OUT_OK, OUT_DEPS, OUT_REFUSE, OUT_FAIL, OUT_CRASH, OUT_TIMEOUT, OUT_EXIT, OUT_ERROR };

typedef struct probe_outcome {
    int kind;
    int index;              /* the pack it is about (OUT_CRASH/TIMEOUT/EXIT: the last stage's) */
    char stage[16];         /* the last stage reached */
    int status;             /* OUT_FAIL: the loom_status; OUT_EXIT: the exit status; OUT_CRASH: the signal */
    char text[1024];
} probe_outcome;

static double probe_timeout(void)
{
    return loom__probe_timeout > 0 ? loom__probe_timeout : 5.0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Parse the child's lines into o; true once "end" was seen. */
static bool parse_report(char *text, probe_outcome *o)
{
    bool end = false;
    for (char *line = text, *next; line != NULL && *line != '\0'; line = next) {
        char word[16];
        int i = -1, pos = 0;
        next = strchr(line, '\n');
        if (next == NULL)
            break;                       /* an incomplete last line */
        *next++ = '\0';
        if (sscanf(line, "%15s %d %n", word, &i, &pos) < 1)
            continue;
        if (strcmp(word, "end") == 0) {
            end = true;
        } else if (strcmp(word, "stage") == 0 && i >= 0) {
            o->index = i;
            snprintf(o->stage, sizeof o->stage, "%s", line + pos);
        } else if (strcmp(word, "ok") == 0 && i >= 0) {
            o->kind = OUT_OK;
            o->index = i;
        } else if (strcmp(word, "deps") == 0 && i >= 0) {
            o->kind = OUT_DEPS;
            o->index = i;
        } else if (strcmp(word, "refuse") == 0 && i >= 0) {
            o->kind = OUT_REFUSE;
            o->index = i;
            snprintf(o->text, sizeof o->text, "%s", line + pos);
        } else if (strcmp(word, "fail") == 0 && i >= 0) {
            int st = 0, p2 = 0;
            o->kind = OUT_FAIL;
            o->index = i;
            if (sscanf(line + pos, "%d %n", &st, &p2) >= 1)
                pos += p2;
            o->status = st;
            snprintf(o->text, sizeof o->text, "%s", line + pos);
        }
    }
    return end;
}

/* Run the helper on paths[0..n) (the last is the pack vetted). */
static void run_probe(const char *const *paths, int n, bool describe, probe_outcome *o)
{
    char helper[PATH_MAX], features[32];
    const char **argv = calloc((size_t)n + 9, sizeof *argv);
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none, all;
    int fds[2] = { -1, -1 }, wfd = -1, rc, status = 0;
    pid_t pid = -1;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    bool end = false, timed_out = false, reaped = false;
    double deadline;

    memset(o, 0, sizeof *o);
    o->kind = OUT_ERROR;
    o->index = -1;
    if (argv == NULL) {
        snprintf(o->text, sizeof o->text, "out of memory");
        return;
    }
    if (!find_helper(helper, sizeof helper)) {
        snprintf(o->text, sizeof o->text, "the probe helper %s was not found (next to libloom in <libdir>/loom/, "
                 "or in %s/..)", HELPER_NAME, LOOM_PLUGIN_DIR);
        free(argv);
        return;
    }
    if (pipe2(fds, O_CLOEXEC) != 0) {
        snprintf(o->text, sizeof o->text, "pipe: %s", strerror(errno));
        free(argv);
        return;
    }
    /* The write end becomes fd 3 in the child; dup it away from 3 first, as
    ** dup2 onto itself would keep its close-on-exec flag. */
    wfd = fds[1] == 3 ? fcntl(fds[1], F_DUPFD_CLOEXEC, 10) : fds[1];
    snprintf(features, sizeof features, "%llx", (unsigned long long)loom__cpu_features());
    int a = 0;
    argv[a++] = helper;
    argv[a++] = "--fd";
    argv[a++] = "3";
    argv[a++] = "--cpu-features";
    argv[a++] = features;
    if (describe)
        argv[a++] = "--describe";
    argv[a++] = "--";
    for (int i = 0; i < n; i++)
        argv[a++] = paths[i];
    argv[a] = NULL;

    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, wfd, 3);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (loom__cfg.verbose < 2) {   /* what the pack prints is noise unless asked for */
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    }
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    posix_spawn_file_actions_addclosefrom_np(&fa, 4);
#endif
    posix_spawnattr_init(&attr);
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setpgroup(&attr, 0);   /* its own group: a timeout kills what it started too */
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
    rc = posix_spawn(&pid, helper, &fa, &attr, (char *const *)(uintptr_t)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (wfd != fds[1])
        close(wfd);
    close(fds[1]);
    free(argv);
    if (rc != 0) {
        snprintf(o->text, sizeof o->text, "cannot run the probe helper %.900s: %s", helper, strerror(rc));
        close(fds[0]);
        return;
    }

    deadline = now_s() + probe_timeout();
    while (!end) {
        double left = deadline - now_s();
        struct pollfd p = { fds[0], POLLIN, 0 };
        if (left <= 0) {
            timed_out = true;
            break;
        }
        int pr = poll(&p, 1, (int)(left * 1000) + 1);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            continue;    /* the deadline is checked above */
        if (len + 4096 + 1 > cap) {
            size_t c = cap ? 2 * cap : 8192;
            char *g = c <= (1u << 20) ? realloc(buf, c) : NULL;
            if (g == NULL)
                break;   /* a child that writes a megabyte is not speaking the protocol */
            buf = g;
            cap = c;
        }
        ssize_t r = read(fds[0], buf + len, cap - len - 1);
        if (r < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (r <= 0)
            break;       /* EOF: the child is gone, or closed its end */
        len += (size_t)r;
        buf[len] = '\0';
        end = strncmp(buf, "end\n", 4) == 0 || strstr(buf, "\nend\n") != NULL;
    }
    close(fds[0]);
    /* Reap it. A child that said "end" or closed the pipe exits at once or
    ** is killed at the deadline (it hangs with the pipe closed); one still
    ** running at the deadline is killed. */
    while (!timed_out) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) {
            reaped = true;
            break;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            break;           /* ECHILD: the host ignores SIGCHLD; the report has to do */
        if (now_s() >= deadline) {
            timed_out = !end;
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
            reaped = !timed_out;
            break;
        }
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    if (timed_out && !reaped) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    if (buf != NULL)
        end = parse_report(buf, o);
    free(buf);
    if (end && (o->kind == OUT_OK || o->kind == OUT_DEPS || o->kind == OUT_REFUSE || o->kind == OUT_FAIL))
        return;
    if (end) {
        o->kind = OUT_ERROR;
        snprintf(o->text, sizeof o->text, "the probe helper ended without a verdict");
        return;
    }
    if (timed_out) {
        o->kind = OUT_TIMEOUT;
    } else if (reaped && WIFSIGNALED(status)) {
        o->kind = OUT_CRASH;
        o->status = WTERMSIG(status);
    } else if (reaped && WIFEXITED(status)) {
        o->kind = OUT_EXIT;
        o->status = WEXITSTATUS(status);
    } else {
        o->kind = OUT_CRASH;   /* gone without a report or an exit status (SIGCHLD ignored) */
        o->status = 0;
    }
    if (o->index < 0 || o->stage[0] == '\0') {
        /* it died before it said anything: the helper itself did not run */
        if (o->kind == OUT_TIMEOUT)
            snprintf(o->text, sizeof o->text, "the probe helper %.900s did not start within %g s", helper,
                     probe_timeout());
        else
            snprintf(o->text, sizeof o->text, "the probe helper %.900s %s %d before it started", helper,
                     o->kind == OUT_EXIT ? "exited with status" : "died of signal", o->status);
        o->kind = OUT_ERROR;
    }
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS:  return "SIGBUS";
    case SIGFPE:  return "SIGFPE";
    case SIGILL:  return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS:  return "SIGSYS";
    case SIGTERM: return "SIGTERM";
    default:      return NULL;
    }
}

static const char *stage_words(const char *stage)
{
    if (strcmp(stage, "open") == 0)
        return "while being opened (dlopen, its constructors)";
    if (strcmp(stage, "entry") == 0)
        return "in its entry function";
    if (strcmp(stage, "init") == 0)
        return "in its init";
    if (strcmp(stage, "devices") == 0)
        return "in the count() of a device provider it registered";
    return "";
}

/* What went wrong with the vetted pack, in words, when it is its fault. */
static bool outcome_is_bad(const probe_outcome *o, int target, char *why, size_t size)
{
    const char *sig;
    char num[32];

    if (o->index != target)
        return false;
    switch (o->kind) {
    case OUT_FAIL:
        snprintf(why, size, "init failed with %s: %s", loom_status_name((loom_status)o->status), o->text);
        return true;
    case OUT_CRASH:
        sig = signal_name(o->status);
        snprintf(num, sizeof num, "signal %d", o->status);
        snprintf(why, size, "crashed with %s %s", sig != NULL ? sig : num, stage_words(o->stage));
        return true;
    case OUT_TIMEOUT:
        snprintf(why, size, "did not return within %g s %s (killed; LOOM_PROBE_TIMEOUT sets the limit)",
                 probe_timeout(), stage_words(o->stage));
        return true;
    case OUT_EXIT:
        snprintf(why, size, "exited the process with status %d %s", o->status, stage_words(o->stage));
        return true;
    default:
        return false;
    }
}

/* ------------------------------------------------ the loader's interface */

static probe_cache session;     /* under the registry lock, during a scan */

void loom__probe_begin(void)
{
    cache_load(&session);
}

void loom__probe_end(void)
{
    cache_clear(&session);
}

static probe_rec *find_rec(probe_cache *c, const char *path)
{
    for (int64_t i = 0; i < c->n; i++)
        if (strcmp(c->recs[i].path, path) == 0)
            return &c->recs[i];
    return NULL;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

static char *quarantine_text(const probe_rec *r)
{
    char when[64];
    time_t t = (time_t)r->probed_at;
    struct tm tm;
    static const char fmt[] = "quarantined: %s (probed %s); `loom doctor --forget %s` to retry";

    if (localtime_r(&t, &tm) == NULL || strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm) == 0)
        snprintf(when, sizeof when, "at %lld", (long long)r->probed_at);
    int n = snprintf(NULL, 0, fmt, r->reason, when, base_name(r->path));
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s != NULL)
        snprintf(s, (size_t)n + 1, fmt, r->reason, when, base_name(r->path));
    return s;
}

static char *dup_text(const char *fmt, const char *a, const char *b)
{
    int n = snprintf(NULL, 0, fmt, a, b);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s != NULL)
        snprintf(s, (size_t)n + 1, fmt, a, b);
    return s;
}

/* Record a verdict on path (key k) in the cache file, merged with what
** other processes wrote since it was read. */
static void remember(const char *path, const file_key *k, bool bad, const char *reason, int64_t when)
{
    probe_rec r = { 0 }, *old;
    loom_status st;

    if (!storable(path)) {
        loom__log(1, "probe: %s has a tab or newline in its path: its verdict is not cached", path);
        return;
    }
    cache_load_quiet(&session, true);
    /* Drop the records of files that are gone, so the file does not grow forever. */
    int64_t kept = 0;
    for (int64_t i = 0; i < session.n; i++) {
        struct stat sb;
        if (stat(session.recs[i].path, &sb) == 0) {
            session.recs[kept++] = session.recs[i];
        } else {
            free(session.recs[i].path);
            free(session.recs[i].reason);
        }
    }
    session.n = kept;
    r.path = loom__strdup(path);
    r.reason = loom__strdup(reason);
    if (r.path == NULL || r.reason == NULL) {
        free(r.path);
        free(r.reason);
        return;
    }
    for (char *p = r.reason; *p != '\0'; p++)
        if (*p == '\t' || *p == '\n' || *p == '\r')
            *p = ' ';
    r.bad = bad;
    r.probed_at = when;
    r.size = k->size;
    r.mtime_ns = k->mtime_ns;
    r.hash = k->hash;
    if ((old = find_rec(&session, path)) != NULL) {
        free(old->path);
        free(old->reason);
        *old = r;
    } else if (!cache_add(&session, &r)) {
        free(r.path);
        free(r.reason);
        return;
    }
    if ((st = cache_save(&session)) != LOOM_OK)
        loom__log(0, "probe: the verdict on %s is not cached: %s", path, loom_last_error());
}

/* The verdict of a finished probe of path (key k). */
static int conclude(const char *path, const file_key *k, bool have_key, const probe_outcome *o, int target,
                    char **reason)
{
    char why[1200];

    if (o->kind == OUT_OK && o->index == target) {
        loom__log(1, "probe: %s passed", path);
        if (have_key)
            remember(path, k, false, "", (int64_t)time(NULL));
        return LOOM__PROBE_GOOD;
    }
    if (o->kind == OUT_DEPS && o->index == target)
        return LOOM__PROBE_NEEDS_DEPS;
    if (o->kind == OUT_REFUSE && o->index == target) {
        *reason = loom__strdup(o->text);
        return LOOM__PROBE_REFUSE;
    }
    if (outcome_is_bad(o, target, why, sizeof why)) {
        probe_rec r = { 0 };
        r.path = (char *)(uintptr_t)path;
        r.reason = why;
        r.probed_at = (int64_t)time(NULL);
        loom__log(1, "probe: %s is quarantined: %s", path, why);
        if (have_key)
            remember(path, k, true, why, r.probed_at);
        *reason = quarantine_text(&r);
        return LOOM__PROBE_BAD;
    }
    *reason = dup_text("not probed (LOOM_PROBE=1): %s%s", o->kind == OUT_ERROR ? o->text
                       : "the probe helper gave no verdict on it", "");
    return LOOM__PROBE_ERROR;
}

int loom__probe_open(const char *path, char **reason)
{
    file_key k;
    char why[512];
    probe_rec *r;
    probe_outcome o;
    bool have_key = key_of(path, &k, why, sizeof why);

    *reason = NULL;
    if (have_key && (r = find_rec(&session, path)) != NULL && r->size == k.size && r->mtime_ns == k.mtime_ns
        && r->hash == k.hash) {
        if (r->bad) {
            *reason = quarantine_text(r);
            return LOOM__PROBE_BAD;
        }
        loom__log(1, "probe: %s passed before; not probed again (cached)", path);
        return LOOM__PROBE_GOOD;
    }
    loom__log(1, "probing %s", path);
    run_probe(&path, 1, true, &o);
    return conclude(path, &k, have_key, &o, 0, reason);
}

int loom__probe_init(const char *path, const char *const *deps, int n_deps, char **reason)
{
    file_key k;
    char why[512];
    probe_outcome o;
    bool have_key = key_of(path, &k, why, sizeof why);
    const char **all = calloc((size_t)n_deps + 1, sizeof *all);
    int st;

    *reason = NULL;
    if (all == NULL) {
        *reason = loom__strdup("not probed: out of memory");
        return LOOM__PROBE_ERROR;
    }
    for (int i = 0; i < n_deps; i++)
        all[i] = deps[i];
    all[n_deps] = path;
    loom__log(1, "probing the init of %s, after %d dependenc%s", path, n_deps, n_deps == 1 ? "y" : "ies");
    run_probe(all, n_deps + 1, false, &o);
    if (o.index >= 0 && o.index < n_deps && o.kind != OUT_OK && o.kind != OUT_ERROR) {
        *reason = dup_text("not probed (LOOM_PROBE=1): its dependency %s failed in the probe%s", all[o.index],
                           ", though it loaded here");
        free(all);
        return LOOM__PROBE_ERROR;
    }
    free(all);
    st = conclude(path, &k, have_key, &o, n_deps, reason);
    return st == LOOM__PROBE_NEEDS_DEPS ? LOOM__PROBE_ERROR : st;
}

/* ----------------------------------------------------------- public API */

static pthread_mutex_t api_lock = PTHREAD_MUTEX_INITIALIZER;
static probe_cache api_view;
static char api_file[PATH_MAX];

LOOM_API const char *loom_probe_cache_path(void)
{
    char dir[PATH_MAX];
    pthread_mutex_lock(&api_lock);
    if (!cache_file(api_file, sizeof api_file, dir, sizeof dir))
        api_file[0] = '\0';
    pthread_mutex_unlock(&api_lock);
    return api_file[0] != '\0' ? api_file : NULL;
}

LOOM_API int64_t loom_probe_record_count(void)
{
    int64_t n;
    pthread_mutex_lock(&api_lock);
    cache_load(&api_view);
    n = api_view.n;
    pthread_mutex_unlock(&api_lock);
    return n;
}

LOOM_API loom_status loom_probe_record_at(int64_t index, loom_probe_record *out)
{
    loom_probe_record e = LOOM_PROBE_RECORD_INIT;
    loom_status st;

    pthread_mutex_lock(&api_lock);
    if (index < 0 || index >= api_view.n) {
        pthread_mutex_unlock(&api_lock);
        return loom__fail(LOOM_ENOENT, "loom_probe_record_at: no record %lld (loom_probe_record_count reads the "
                          "cache)", (long long)index);
    }
    const probe_rec *r = &api_view.recs[index];
    e.path = r->path;
    e.quarantined = r->bad;
    e.reason = r->reason;
    e.probed_at = r->probed_at;
    e.size = r->size;
    e.mtime_ns = r->mtime_ns;
    e.hash = r->hash;
    st = loom__struct_out(out, &e, sizeof e, "loom_probe_record_at");
    pthread_mutex_unlock(&api_lock);
    return st;
}

/* pack names a record: its path (as given or resolved), or its file name
** with or without ".so". */
static bool names(const char *pack, const char *real, const char *path)
{
    const char *base = base_name(path);
    size_t n = strlen(pack);
    if (strchr(pack, '/') != NULL)
        return strcmp(pack, path) == 0 || (real[0] != '\0' && strcmp(real, path) == 0);
    return strcmp(base, pack) == 0 || (strncmp(base, pack, n) == 0 && strcmp(base + n, ".so") == 0);
}

LOOM_API loom_status loom_probe_forget(const char *pack, int64_t *n_forgotten)
{
    probe_cache c = { 0 };
    char real[PATH_MAX];
    int64_t kept = 0, gone = 0;
    loom_status st = LOOM_OK;

    if (n_forgotten != NULL)
        *n_forgotten = 0;
    if (pack == NULL || pack[0] == '\0')
        return loom__fail(LOOM_EINVAL, "loom_probe_forget: no pack named");
    if (realpath(pack, real) == NULL)
        real[0] = '\0';
    pthread_mutex_lock(&api_lock);
    cache_load(&c);
    for (int64_t i = 0; i < c.n; i++) {
        if (names(pack, real, c.recs[i].path)) {
            free(c.recs[i].path);
            free(c.recs[i].reason);
            gone++;
        } else {
            c.recs[kept++] = c.recs[i];
        }
    }
    c.n = kept;
    if (gone > 0)
        st = cache_save(&c);
    else
        st = loom__fail(LOOM_ENOENT, "loom_probe_forget: the probe cache has no record of '%s'", pack);
    cache_clear(&c);
    pthread_mutex_unlock(&api_lock);
    if (st == LOOM_OK && n_forgotten != NULL)
        *n_forgotten = gone;
    return st;
}
#endif
