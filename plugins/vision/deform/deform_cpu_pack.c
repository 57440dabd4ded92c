/*
** deform_cpu_pack.c - registers the cpu kernels of the deform module
** (deform_conv_cpu.c, dropout_cpu.c) into vision.so.
*/
#include "deform.h"

loom_status vision_deform_register_cpu(const loom_host_api *host, loom_registrar *reg)
{
    loom_status st = vision_deform_conv_register_cpu(host, reg);
    if (st == LOOM_OK)
        st = vision_deform_dropout_register_cpu(host, reg);
    return st;
}
