/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cudart_stub.c - libcudart_loomtest.so, a stand-in for the CUDA runtime:
** its name starts with "libcudart", so a pack that links it is a CUDA pack
** to the core's CUDA gate (core/cuda_gate.c), while it needs no CUDA to
** load. One function, which gatepack.c calls so that the link keeps the
** DT_NEEDED entry.
*/
#include <stdint.h>

__attribute__((visibility("default"))) int32_t cudart_loomtest_version(void);
int32_t cudart_loomtest_version(void) { return 4242; }
