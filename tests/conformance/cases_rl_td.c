/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cases_rl_td.c - the TensorDict, MemoryMappedTensor and replay-buffer methods of the rl pack.
** They are methods of rl.tensordict, rl.memmap_tensor, rl.replay_buffer and
** rl.replay_buffer_ensemble objects whose state (a dict's entries, a
** buffer's storage, trees and cursor) no generic case can set up, and the
** rl pack has only cpu kernels, so there is no other backend to compare:
** each is checked by the tests named, against tensordict's and torchrl's
** goldens.
*/
#include "conformance.h"

#define TD "tests/rl/test_td_container.c: a method of rl.tensordict (object state, cpu only)"
#define TDM "tests/rl/test_td_memmap.c: tensordict's memmap layout on disk (object state, cpu only)"
#define MMT "tests/rl/test_td_mmt.c: a method of rl.memmap_tensor against tensordict's files (object state, cpu only)"
#define RB "tests/rl/test_replay_buffer.c: a method of rl.replay_buffer (object state, cpu only)"

const cf_gen cf_rl_td_gens[] = {
    { .op = "rl.td_set", .covered_by = TD },
    { .op = "rl.td_get", .covered_by = TD },
    { .op = "rl.td_set_non_tensor", .covered_by = TD },
    { .op = "rl.td_get_non_tensor", .covered_by = TD },
    { .op = "rl.td_del", .covered_by = TD },
    { .op = "rl.td_keys", .covered_by = TD },
    { .op = "rl.td_batch_size", .covered_by = TD },
    { .op = "rl.td_describe", .covered_by = "tests/rl/test_td_cli.sh and tests/fuzz/fuzz_td_meta.c: a dict's structure" },
    { .op = "rl.td_id", .covered_by = TD },
    { .op = "rl.td_index", .covered_by = TD },
    { .op = "rl.td_select", .covered_by = TD },
    { .op = "rl.td_exclude", .covered_by = TD },
    { .op = "rl.td_flatten_keys", .covered_by = TD },
    { .op = "rl.td_unflatten_keys", .covered_by = TD },
    { .op = "rl.td_apply", .covered_by = TD },
    { .op = "rl.td_update", .covered_by = TD },
    { .op = "rl.td_save", .covered_by = TDM },
    { .op = "rl.mmt_as_tensor", .covered_by = MMT },
    { .op = "rl.mmt_write", .covered_by = MMT },
    { .op = "rl.mmt_flush", .covered_by = MMT },
    { .op = "rl.mmt_describe", .covered_by = MMT },
    { .op = "rl.rb_extend", .covered_by = RB },
    { .op = "rl.rb_sample", .covered_by = RB },
    { .op = "rl.rb_update_priority", .covered_by = RB },
    { .op = "rl.rb_priority_weight", .covered_by = RB },
    { .op = "rl.rb_priorities", .covered_by = RB },
    { .op = "rl.rb_len", .covered_by = RB },
    { .op = "rl.rb_dumps", .covered_by = "tests/rl/test_replay_dumps.c: atomic dumps, 50 SIGKILLs" },
    { .op = "rl.rb_loads", .covered_by = "tests/rl/test_replay_dumps.c: atomic dumps, 50 SIGKILLs" },
    { .op = "rl.rb_id", .covered_by = RB },
    { .op = "rl.rb_extend_list", .covered_by = RB },
    { .op = "rl.rb_extend_ted", .covered_by = "tests/rl/test_ted.c: a TED dataset of torchrl's" },
    { .op = "rl.rb_ensemble_sample", .covered_by = RB },
    { .op = "rl.rb_trajectories", .covered_by = "tests/rl/test_replay_slice.c: torchrl's trajectory boundaries (object state, cpu only)" },
};
const size_t cf_rl_td_n_gens = sizeof cf_rl_td_gens / sizeof cf_rl_td_gens[0];
