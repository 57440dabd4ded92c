/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cpu_pack.c - the entry of rl.so: defines the rl ops and registers their
** cpu kernels, module by module (rl_pack.h).
*/
#include "rl_pack.h"

PK_PACK_DEFINE("rl", "0.1.0", "torchrl: value estimators, PPO and A2C losses, environments (cpu)", NULL, NULL, &rl_value_cpu,
               &rl_loss_cpu, &rl_envs_cpu)
