/*
** define_ops.c - defines the ops of every fbgemm module; compiled into both
** fbgemm packs so that they define identical schemas.
*/
#include "fbgemm_pack.h"
#include "register.h"

loom_status fbgemm_define_ops(const loom_host_api *host, loom_registrar *reg)
{
    const struct { const loom_op_schema *const *ops; size_t n; } mods[] = {
        { fbgemm_tbe_ops, fbgemm_tbe_n_ops },
        { fbgemm_jagged_ops, fbgemm_jagged_n_ops },
    };
    loom_status st = LOOM_OK;
    for (size_t m = 0; st == LOOM_OK && m < PK_COUNT(mods); m++)
        st = pk_define_ops(host, reg, mods[m].ops, mods[m].n);
    return st;
}
