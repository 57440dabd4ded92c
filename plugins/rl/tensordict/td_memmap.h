/* SPDX-License-Identifier: BSD-3-Clause */
/*
** td_memmap.h - TensorDicts on disk in tensordict's memmap layout, which
** TensorDict.memmap(prefix) writes and TensorDict.load_memmap(prefix) reads:
**
**   DIR/meta.json      {"<key>": {"device": "cpu", "shape": [...], "dtype": "torch.float32",
**                                  "is_nested": false}            a tensor leaf
**                       "<key>": {"type": "TensorDict"}           a nested dict: DIR/<key>/
**                       "<key>": {"type": "NonTensorData"}        DIR/<key>/meta.json holds "data"
**                       "<key>": {"type": "NonTensorStack"}       DIR/<key>/meta.json: "data" nested as the batch
**                       "shape": batch_size, "device": "cpu", "_type": "<class 'tensordict._td.TensorDict'>"}
**   DIR/<key>.memmap   the leaf's raw bytes: C order, little-endian, no header
**                      (bool one byte); a leaf without elements has no file
**
** File names are tensordict's robust key encoding (every byte of
** / < > : " | ? * \ space NUL % and controls as %XX; "" as "%", "." and ".."
** as %2E...); load also finds a legacy unencoded name, as tensordict does.
** Leaves are written and mapped in parallel over the core's pool; a leaf is
** mapped (or read) by memmap_tensor.c, as a MemoryMappedTensor is.
*/
#ifndef LOOM_RL_TD_MEMMAP_H
#define LOOM_RL_TD_MEMMAP_H

#include "memmap_tensor.h"
#include "td.h"

/* Write td under dir (made if absent; files of the same names replaced). */
loom_status rl_td_save_memmap(const rl_td *td, const char *dir, loom_exec_ctx *ctx);

/* Read the TensorDict under dir. Errors name the file and what is wrong
** (invalid JSON and where, a missing or wrong member, an unknown dtype, a
** leaf file that is missing, shorter or longer than its shape says). */
loom_status rl_td_load_memmap(const char *dir, rl_map_mode mode, loom_exec_ctx *ctx, rl_td **out);

/* tensordict's robust filesystem encoding of one key component (malloc'd). */
char *rl_td_encode_key(const char *key);

#endif /* LOOM_RL_TD_MEMMAP_H */
