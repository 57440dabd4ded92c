/*
** define_ops.c - defines the ops of every vision module; compiled into both
** vision packs so that they define identical schemas.
*/
#include "vision_pack.h"

loom_status vision_define_ops(const loom_host_api *host, loom_registrar *reg)
{
    const struct { const loom_op_schema *const *ops; size_t n; } mods[] = {
        { vision_boxes_ops, vision_boxes_n_ops },
        { vision_roi_ops, vision_roi_n_ops },
        { vision_deform_ops, vision_deform_n_ops },
    };
    for (size_t m = 0; m < sizeof mods / sizeof mods[0]; m++)
        for (size_t i = 0; i < mods[m].n; i++) {
            loom_status st = host->define_op(reg, mods[m].ops[i]);
            if (st != LOOM_OK)
                return st;
        }
    return LOOM_OK;
}
