/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cuda_gate.c - CUDA packs are not opened where CUDA cannot run.
**
** A pack that links the CUDA libraries (cudart, cuBLAS, cuDNN, cuFFT, NCCL,
** the driver) maps hundreds of MB of them and spends seconds in their
** constructors when dlopen'ed, even on a host without a GPU, where its
** kernels could never run. So before the loader opens a pack file it reads
** the file's ELF dynamic section (no code of the file runs): a pack with a
** DT_NEEDED entry starting with one of the CUDA library prefixes below is a
** CUDA pack, and it is opened only when the CUDA driver is present and sees
** at least one device. The driver is asked once per process: dlopen of
** libcuda.so.1 (RTLD_LAZY | RTLD_LOCAL), cuInit(0), cuDeviceGetCount, found
** with dlsym so the core never links CUDA. The answer is cached under
** pthread_once (thread-safe, and the same for every later loom_init); the
** driver library stays mapped once cuInit ran, since it may have started
** threads. LOOM_CUDA_GATE=0 (config.c) turns the gate off.
**
** The ELF reader trusts nothing in the file: every offset and size is
** checked against the file's length, and a file it cannot read as an ELF
** shared object of this process's class and byte order is "not a CUDA
** pack" here, so that dlopen reports what is wrong with it as before.
*/
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* The NEEDED prefixes that make a pack a CUDA pack. */
static const char *const cuda_prefixes[] = {
    "libcuda", "libcudart", "libcublas", "libcudnn", "libcufft", "libnccl",
};

/* [off, off + len) lies within a file of size n. */
static bool in_file(uint64_t off, uint64_t len, uint64_t n)
{
    return off <= n && len <= n - off;
}

/* The file offset of virtual address vaddr, through the PT_LOAD segments. */
static bool vaddr_to_offset(const unsigned char *base, uint64_t size, const ElfW(Ehdr) *eh, uint64_t vaddr,
                            uint64_t *off)
{
    for (unsigned i = 0; i < eh->e_phnum; i++) {
        ElfW(Phdr) ph;
        memcpy(&ph, base + eh->e_phoff + (uint64_t)i * eh->e_phentsize, sizeof ph);
        if (ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr < ph.p_filesz) {
            uint64_t o = ph.p_offset + (vaddr - ph.p_vaddr);
            if (o < size) {
                *off = o;
                return true;
            }
        }
    }
    return false;
}

static bool is_cuda_name(const char *name, size_t maxlen)
{
    for (size_t i = 0; i < sizeof cuda_prefixes / sizeof cuda_prefixes[0]; i++) {
        size_t n = strlen(cuda_prefixes[i]);
        if (n <= maxlen && strncmp(name, cuda_prefixes[i], n) == 0)
            return true;
    }
    return false;
}

/* The first CUDA library among the NEEDED entries of an image in memory. */
static bool image_cuda_needed(const unsigned char *base, uint64_t size, char *lib, size_t lib_size)
{
    ElfW(Ehdr) eh;
    ElfW(Phdr) dyn_ph = { 0 };
    uint64_t strtab = 0, strsz = 0, stroff;
    bool have_dyn = false, have_strtab = false;

    if (size < sizeof eh)
        return false;
    memcpy(&eh, base, sizeof eh);
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64
                                                                                                  : ELFCLASS32))
        return false;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (eh.e_ident[EI_DATA] != ELFDATA2LSB)
        return false;
#else
    if (eh.e_ident[EI_DATA] != ELFDATA2MSB)
        return false;
#endif
    if (eh.e_phentsize < sizeof(ElfW(Phdr)) || !in_file(eh.e_phoff, (uint64_t)eh.e_phnum * eh.e_phentsize, size))
        return false;
    for (unsigned i = 0; i < eh.e_phnum && !have_dyn; i++) {
        memcpy(&dyn_ph, base + eh.e_phoff + (uint64_t)i * eh.e_phentsize, sizeof dyn_ph);
        have_dyn = dyn_ph.p_type == PT_DYNAMIC;
    }
    if (!have_dyn || !in_file(dyn_ph.p_offset, dyn_ph.p_filesz, size))
        return false;
    uint64_t n_dyn = dyn_ph.p_filesz / sizeof(ElfW(Dyn));
    /* First the string table's place, then the NEEDED names in it. */
    for (uint64_t i = 0; i < n_dyn; i++) {
        ElfW(Dyn) d;
        memcpy(&d, base + dyn_ph.p_offset + i * sizeof d, sizeof d);
        if (d.d_tag == DT_NULL)
            break;
        if (d.d_tag == DT_STRTAB) {
            strtab = d.d_un.d_ptr;
            have_strtab = true;
        } else if (d.d_tag == DT_STRSZ) {
            strsz = d.d_un.d_val;
        }
    }
    if (!have_strtab || !vaddr_to_offset(base, size, &eh, strtab, &stroff))
        return false;
    if (strsz == 0 || strsz > size - stroff)
        strsz = size - stroff;
    for (uint64_t i = 0; i < n_dyn; i++) {
        ElfW(Dyn) d;
        memcpy(&d, base + dyn_ph.p_offset + i * sizeof d, sizeof d);
        if (d.d_tag == DT_NULL)
            break;
        if (d.d_tag != DT_NEEDED || d.d_un.d_val >= strsz)
            continue;
        const char *name = (const char *)base + stroff + d.d_un.d_val;
        size_t maxlen = (size_t)(strsz - d.d_un.d_val);
        size_t len = strnlen(name, maxlen);
        if (len < maxlen && is_cuda_name(name, len)) {
            snprintf(lib, lib_size, "%s", name);
            return true;
        }
    }
    return false;
}

bool loom__cuda_pack_needs(const char *path, char *lib, size_t lib_size)
{
    struct stat sb;
    void *map;
    bool found = false;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (lib_size > 0)
        lib[0] = '\0';
    if (fd < 0)
        return false;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0) {
        map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map != MAP_FAILED) {
            found = image_cuda_needed(map, (uint64_t)sb.st_size, lib, lib_size);
            munmap(map, (size_t)sb.st_size);
        }
    }
    close(fd);
    return found;
}

/* ------------------------------------------------------------ the driver */

typedef int (*cu_init_fn)(unsigned int);
typedef int (*cu_count_fn)(int *);

static pthread_once_t driver_once = PTHREAD_ONCE_INIT;
static int driver_state;
static char driver_detail[256];

static void ask_driver(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    cu_init_fn cu_init;
    cu_count_fn cu_count;
    int count = 0, rc;

    if (lib == NULL) {
        const char *e = dlerror();
        driver_state = LOOM__CUDA_NO_DRIVER;
        snprintf(driver_detail, sizeof driver_detail, "%s", e != NULL ? e : "libcuda.so.1 not found");
        return;
    }
    cu_init = (cu_init_fn)(uintptr_t)dlsym(lib, "cuInit");
    cu_count = (cu_count_fn)(uintptr_t)dlsym(lib, "cuDeviceGetCount");
    if (cu_init == NULL || cu_count == NULL) {
        driver_state = LOOM__CUDA_NO_DRIVER;
        snprintf(driver_detail, sizeof driver_detail, "libcuda.so.1 lacks cuInit or cuDeviceGetCount");
        dlclose(lib);
        return;
    }
    /* From here the library stays mapped: cuInit may have started threads. */
    if ((rc = cu_init(0)) != 0) {
        driver_state = LOOM__CUDA_NO_DEVICE;
        snprintf(driver_detail, sizeof driver_detail, "cuInit returned CUDA error %d", rc);
        return;
    }
    if ((rc = cu_count(&count)) != 0 || count <= 0) {
        driver_state = LOOM__CUDA_NO_DEVICE;
        snprintf(driver_detail, sizeof driver_detail,
                 rc != 0 ? "cuDeviceGetCount returned CUDA error %d" : "the driver reports 0 devices", rc);
        return;
    }
    driver_state = LOOM__CUDA_READY;
    snprintf(driver_detail, sizeof driver_detail, "%d device%s", count, count == 1 ? "" : "s");
}

int loom__cuda_driver_state(const char **detail)
{
    pthread_once(&driver_once, ask_driver);
    if (detail != NULL)
        *detail = driver_detail;
    return driver_state;
}

bool loom__cuda_gate_closed(const char *path, const char *pack, char *why, size_t size)
{
    char lib[256];
    const char *detail;
    int state;

    if (!loom__cfg.cuda_gate || !loom__cuda_pack_needs(path, lib, sizeof lib))
        return false;
    if ((state = loom__cuda_driver_state(&detail)) == LOOM__CUDA_READY)
        return false;
    snprintf(why, size, "cuda pack %s not opened: %s (%s; it needs %s; LOOM_CUDA_GATE=0 opens it anyway)", pack,
             state == LOOM__CUDA_NO_DRIVER ? "no CUDA driver" : "no device", detail, lib);
    return true;
}
