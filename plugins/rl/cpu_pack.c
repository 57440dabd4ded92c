/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cpu_pack.c - the entry of rl.so: defines the rl ops and classes and
** registers their cpu kernels, module by module (rl_pack.h).
*/
#include "rl_pack.h"

PK_PACK_DEFINE("rl", "0.1.0",
               "TorchRL and TensorDict: TensorDicts in tensordict's memmap layout, MemoryMappedTensors, replay buffers, value estimators, "
               "PPO and A2C losses, environments (cpu)",
               NULL, NULL, &rl_tensordict_cpu, &rl_memmap_tensor_cpu, &rl_replay_cpu, &rl_value_cpu, &rl_loss_cpu, &rl_envs_cpu)
