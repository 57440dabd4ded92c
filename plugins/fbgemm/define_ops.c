/*
** define_ops.c - defines the ops of every fbgemm module; compiled into both
** fbgemm packs so that they define identical schemas.
*/
#include "fbgemm_pack.h"

loom_status fbgemm_define_ops(const loom_host_api *host, loom_registrar *reg)
{
    const struct { const loom_op_schema *const *ops; size_t n; } mods[] = {
        { fbgemm_tbe_ops, fbgemm_tbe_n_ops },
        { fbgemm_jagged_ops, fbgemm_jagged_n_ops },
    };
    for (size_t m = 0; m < sizeof mods / sizeof mods[0]; m++)
        for (size_t i = 0; i < mods[m].n; i++) {
            loom_status st = host->define_op(reg, mods[m].ops[i]);
            if (st != LOOM_OK)
                return st;
        }
    return LOOM_OK;
}
