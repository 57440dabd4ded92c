#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The command of the issue through the loom CLI binary:
#   loom rl rollout CartPole-v1 --steps 1000 --policy random
# (its report: episodes finished, mean return, steps/s), the same seed twice
# (the same episodes), a batch of environments and a box action space, then
# the refusals: an unknown environment (exit 1, named), bad options (exit 2).
# Args: LOOM_CLI PACK_DIRS
set -eu
cli=$1
export LOOM_PLUGIN_PATH="$2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$cli" rl rollout CartPole-v1 --steps 1000 --policy random > "$tmp/a"
grep -q '^CartPole-v1: 1 environment x 1000 steps, policy random$' "$tmp/a" || { cat "$tmp/a"; exit 1; }
grep -q '^episodes finished: [1-9][0-9]*, mean return ' "$tmp/a" || { cat "$tmp/a"; echo "no episodes"; exit 1; }
grep -q ' steps/s ' "$tmp/a" || { cat "$tmp/a"; exit 1; }
"$cli" rl rollout CartPole-v1 --steps 1000 --policy random > "$tmp/b"
[ "$(sed -n 2p "$tmp/a")" = "$(sed -n 2p "$tmp/b")" ] || { echo "the same seed gave other episodes"; exit 1; }
"$cli" rl rollout Pendulum-v1 --steps 450 --envs 3 --seed 4 > "$tmp/c"
# 200-step episodes: each of the 3 environments finishes 2 in 450 steps
grep -q '^episodes finished: 6, mean return ' "$tmp/c" || { cat "$tmp/c"; exit 1; }
if "$cli" rl rollout NoSuchEnv-v0 2> "$tmp/err"; then echo "an unknown environment was accepted"; exit 1; fi
grep -q "NoSuchEnv-v0" "$tmp/err" || { cat "$tmp/err"; exit 1; }
rc=0; "$cli" rl rollout CartPole-v1 --steps -3 2> /dev/null || rc=$?
[ "$rc" = 2 ] || { echo "--steps -3: exit $rc, want 2"; exit 1; }
rc=0; "$cli" rl walk CartPole-v1 2> /dev/null || rc=$?
[ "$rc" = 2 ] || { echo "rl walk: exit $rc, want 2"; exit 1; }
echo "loom rl rollout: ok"
