/* SPDX-License-Identifier: BSD-3-Clause */
/*
** rl_pack.h - what the files of the `rl` op pack (rl.so) share: the
** modules it registers, each in its own folder with a meson.build that
** appends to rl_cpu_src.
**   tensordict/  the TensorDict container, tensordict's memmap layout, the
**                rl.tensordict object and its rl.td_* methods
**   replay/      the rl.replay_buffer object (storages, writers, samplers)
*/
#ifndef LOOM_RL_PACK_H
#define LOOM_RL_PACK_H

#include "pack.h"

extern const pk_module rl_tensordict_cpu;
extern const pk_module rl_replay_cpu;

#endif /* LOOM_RL_PACK_H */
