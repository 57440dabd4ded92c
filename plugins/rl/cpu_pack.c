/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cpu_pack.c - the entry of rl.so: the modules of rl_pack.h.
*/
#include "rl_pack.h"

PK_PACK_DEFINE("rl", "0.1.0", "TorchRL and TensorDict: TensorDicts, tensordict's memmap layout, replay buffers (cpu)",
               NULL, NULL, &rl_tensordict_cpu, &rl_replay_cpu)
