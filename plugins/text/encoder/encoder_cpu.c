/* SPDX-License-Identifier: BSD-3-Clause */
/*
** encoder_cpu.c - the encoder module of text.so: the text.bert_encoder
** op, its object class and its cpu kernel, registered under the name of
** the row kernels LOOM_CPU_MAX_ISA leaves (the products go through
** core.matmul, whose own kernel the core picks and LOOM_VERBOSE=2 shows).
*/
#include "cpu.h"
#include "encoder.h"
#include "register.h"

static const loom_object_class *const encoder_classes[] = { &text_encoder_class };

static loom_status encoder_register_kernels(const loom_host_api *host, loom_registrar *reg)
{
    const char *impl = enc_rows_current() == &enc_rows_avx2 ? "cpu:packed-rows-avx2-fma" : "cpu:packed-rows-scalar";
    const loom_kernel_desc ks[] = {
        PK_KERNEL_CPU(text_encoder_schema, impl, 0, enc_forward_run),
    };
    return pk_register_kernels(host, reg, ks, PK_COUNT(ks));
}

const pk_module text_encoder_cpu = {
    .name = "encoder", .ops = text_encoder_ops, .n_ops = PK_COUNT(text_encoder_ops),
    .classes = encoder_classes, .n_classes = PK_COUNT(encoder_classes),
    .register_more = encoder_register_kernels,
};
