#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# loom ctc-lm convert through the CLI binary: the test ARPA model to loom's
# binary (floats and --quantize 8), each file starting with the format's
# magic; converting the binary again, or the ARPA file with other heap
# contents, gives the same bytes; a missing input
# fails (exit 1) naming it and leaves no output; bad command lines exit 2.
# Args: LOOM_CLI PACK_DIRS DATA_DIR
set -eu
cli=$1
export LOOM_PLUGIN_PATH="$2"
data=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$cli" ctc-lm convert "$data/lm3.arpa" "$tmp/lm.bin" > "$tmp/out"
grep -q "lm.bin: [0-9]* bytes (float probabilities)" "$tmp/out" || { cat "$tmp/out"; exit 1; }
"$cli" ctc-lm convert "$data/lm3.arpa" "$tmp/lm8.bin" --quantize 8 | grep -q "(quantised)"
for f in lm.bin lm8.bin; do
    [ "$(head -c 15 "$tmp/$f")" = "loom n-gram lm" ] || { echo "$f: no magic"; exit 1; }
done
"$cli" ctc-lm convert "$tmp/lm.bin" "$tmp/again.bin" > /dev/null
cmp "$tmp/lm.bin" "$tmp/again.bin"
# the same bytes whatever the heap held (no uninitialised memory in the file)
MALLOC_PERTURB_=165 "$cli" ctc-lm convert "$data/lm3.arpa" "$tmp/perturbed.bin" > /dev/null
cmp "$tmp/lm.bin" "$tmp/perturbed.bin"
rc=0
"$cli" ctc-lm convert "$tmp/missing.arpa" "$tmp/x.bin" 2> "$tmp/err" || rc=$?
[ "$rc" = 1 ] && grep -q "missing.arpa" "$tmp/err" && [ ! -e "$tmp/x.bin" ] || { cat "$tmp/err"; exit 1; }
for args in "" "convert" "convert a" "convert a b c" "convert a b --quantize 1" "convert a b --quantize" \
            "convert a b --level 3" "info a"; do
    rc=0
    # shellcheck disable=SC2086
    "$cli" ctc-lm $args 2> /dev/null || rc=$?
    [ "$rc" = 2 ] || { echo "ctc-lm $args: exit $rc, expected 2"; exit 1; }
done
echo "ctc-lm convert: ok"
