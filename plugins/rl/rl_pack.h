/* SPDX-License-Identifier: BSD-3-Clause */
/*
** rl_pack.h - what the files of the `rl` op pack (rl.so) share. Everything
** has hidden visibility: the pack exports only loom_plugin_entry.
**
** Modules, each in its own folder with a meson.build that appends to
** rl_cpu_src:
**   tensordict/  the TensorDict container, tensordict's memmap layout, the
**                rl.tensordict object and its rl.td_* methods; tensordict's
**                MemoryMappedTensor as the rl.memmap_tensor object (rl.mmt_*)
**   replay/      the rl.replay_buffer object (storages, writers, samplers)
**   value/       torchrl.objectives.value.functional: GAE, TD(0), TD(lambda)
**                and V-trace estimates over trajectories concatenated in time;
**                the ClipPPO, KL-penalty PPO and A2C loss terms and gradients
**   envs/        environments through the rl.env interface (loom/rl_env.h):
**                gymnasium's classic control, the rl.env object
**
** Invariant: pk_host (pack.h) is set by the pack's init before any kernel
** runs and stays valid until the core shuts down.
*/
#ifndef LOOM_RL_PACK_H
#define LOOM_RL_PACK_H

#include "describe.h"
#include "loom/plugin.h"
#include "pack.h"

/* The modules of the pack, in registration order (cpu_pack.c). */
extern const pk_module rl_tensordict_cpu;
extern const pk_module rl_memmap_tensor_cpu;
extern const pk_module rl_replay_cpu;
extern const pk_module rl_value_cpu;
extern const pk_module rl_loss_cpu;
extern const pk_module rl_envs_cpu;

#endif /* LOOM_RL_PACK_H */
