#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# loom td info|load|save through the CLI binary: info of tensordict's own
# golden directory (keys, dtypes, shapes, NonTensorData), load a leaf out
# as .npy (the golden's bytes), save a new dict from .npy files and a JSON
# value and read it back, and the errors (a missing directory, a bad KEY=).
# Args: LOOM_CLI PACK_DIRS DATA_DIR
set -eu
cli=$1
export LOOM_PLUGIN_PATH="$2"
data=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$cli" td info "$data/py_memmap" > "$tmp/info"
for want in 'batch_size \[4\], 17 entries' 'next.reward  *f32  *\[4,1\]' 'brain  *bf16  *\[4\]' \
            'env_name  *NonTensorData "CartPole-v1"' 'traj.x  *f32  *\[4,2,5\]'; do
    grep -q "$want" "$tmp/info" || { cat "$tmp/info"; echo "td info lacks: $want"; exit 1; }
done
"$cli" td info "$data/py_memmap" --json | grep -q '"key":"next.info","kind":"non_tensor","value":3' \
    || { echo "td info --json lacks next.info"; exit 1; }
"$cli" td load "$data/py_memmap" --out next.reward="$tmp/r.npy" > /dev/null
cmp -s "$tmp/r.npy" "$data/expect/next.reward.npy" || { echo "td load: next.reward differs from the golden"; exit 1; }
"$cli" td save "$tmp/new" --batch-size 4 --in obs="$data/expect/observation.npy" \
    --in next.done="$data/expect/next.done.npy" --non-tensor 'env={"id": "CartPole-v1", "n": 2}' > /dev/null
"$cli" td info "$tmp/new" > "$tmp/info2"
grep -q 'next.done  *bool  *\[4,1\]' "$tmp/info2" && grep -q 'env  *NonTensorData {"id":"CartPole-v1","n":2}' "$tmp/info2" \
    || { cat "$tmp/info2"; echo "td save: not read back"; exit 1; }
if "$cli" td info "$tmp/none" 2> "$tmp/err"; then echo "td info of a missing directory succeeded"; exit 1; fi
grep -q 'meta.json: cannot open' "$tmp/err" || { cat "$tmp/err"; echo "no clear error"; exit 1; }
set +e
"$cli" td load "$data/py_memmap" --out broken 2> "$tmp/err"
rc=$?
set -e
[ $rc -eq 2 ] || { echo "td load --out broken: status $rc, want 2"; exit 1; }
echo "loom td via the CLI: ok"
