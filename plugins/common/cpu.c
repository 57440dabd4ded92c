/*
** cpu.c - see cpu.h.
*/
#include <stdlib.h>
#include <strings.h>

#include "cpu.h"

int pk_cpu_avx2(int extra)
{
    const char *cap = getenv("LOOM_CPU_MAX_ISA");
    if (cap != NULL && cap[0] != '\0' && strncasecmp(cap, "avx2", 4) != 0 && strncasecmp(cap, "avx512", 6) != 0)
        return 0;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && (!(extra & PK_CPU_FMA) || __builtin_cpu_supports("fma"))
           && (!(extra & PK_CPU_F16C) || __builtin_cpu_supports("f16c"));
#else
    (void)extra;
    return 0;
#endif
}
