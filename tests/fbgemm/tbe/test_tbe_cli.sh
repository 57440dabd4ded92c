#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The command of the issue through the loom CLI binary:
#   loom run fbgemm.tbe --weights tables.safetensors --in indices=i.npy
#     --in offsets=o.npy --attr pooling_mode=sum --out output=y.npy
# on golden fp32 tables (3 tables, one feature each; fbgemm's output byte
# for byte, the same f32 additions in the same order), then the same with
# per_sample_weights; the output must have the fbgemm shape [B, total_D].
# Args: LOOM_CLI PACK_DIRS DATA_DIR
set -eu
cli=$1
export LOOM_PLUGIN_PATH="$2"
data=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$cli" run fbgemm.tbe --weights "$data/tables_fp32_pooled.safetensors" \
    --in indices="$data/cli_indices.npy" --in offsets="$data/cli_offsets.npy" \
    --attr pooling_mode=sum --out output="$tmp/y.npy" > "$tmp/log"
grep -q 'output: f32\[' "$tmp/log" || { cat "$tmp/log"; echo "no f32 output reported"; exit 1; }
# f32 [4, 64]: the last 1024 bytes of both .npy files are the data
tail -c 1024 "$tmp/y.npy" > "$tmp/got"
tail -c 1024 "$data/cli_out.npy" > "$tmp/want"
cmp -s "$tmp/got" "$tmp/want" || { echo "output differs from tests/data/fbgemm/tbe/cli_out.npy"; exit 1; }
"$cli" run fbgemm.tbe --weights "$data/tables_fp32_pooled.safetensors" \
    --in indices="$data/cli_indices.npy" --in offsets="$data/cli_offsets.npy" \
    --in per_sample_weights="$data/cli_psw.npy" --attr pooling_mode=mean --out output="$tmp/w.npy" > /dev/null
[ -s "$tmp/w.npy" ] || { echo "no weighted output"; exit 1; }
echo "fbgemm.tbe via the CLI: ok"
