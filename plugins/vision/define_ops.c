/*
** define_ops.c - defines the ops of every vision module; compiled into both
** vision packs so that they define identical schemas.
*/
#include "vision_pack.h"
#include "register.h"

loom_status vision_define_ops(const loom_host_api *host, loom_registrar *reg)
{
    const struct { const loom_op_schema *const *ops; size_t n; } mods[] = {
        { vision_boxes_ops, vision_boxes_n_ops },
        { vision_roi_ops, vision_roi_n_ops },
        { vision_deform_ops, vision_deform_n_ops },
    };
    loom_status st = LOOM_OK;
    for (size_t m = 0; st == LOOM_OK && m < PK_COUNT(mods); m++)
        st = pk_define_ops(host, reg, mods[m].ops, mods[m].n);
    return st;
}
