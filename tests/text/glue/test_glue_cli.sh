#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The command of the issue through the loom CLI binary:
#   loom glue MRPC train path/
# on the sample files (tests/data/text/glue/root): the first rows and the
# counts; then a split the dataset lacks, a malformed row (its file and
# line) and --skip-malformed.
# Args: LOOM_CLI PACK_DIRS DATA_DIR
set -eu
cli=$1
export LOOM_PLUGIN_PATH="$2"
root=$3/glue/root
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$cli" glue MRPC train "$root" > "$tmp/out"
grep -q '^0:  label=1  text1="Amrozi accused his brother' "$tmp/out" || { cat "$tmp/out"; echo "MRPC: first row"; exit 1; }
grep -q '^MRPC train: 2 rows, 0 filtered as torchtext filters, 3 lines$' "$tmp/out" || { cat "$tmp/out"; echo "MRPC: counts"; exit 1; }
"$cli" glue MNLI train "$root" --rows 1 > "$tmp/out"
grep -q '^MNLI train: 3 rows, 1 filtered' "$tmp/out" || { cat "$tmp/out"; echo "MNLI: counts"; exit 1; }
[ "$(grep -c '^[0-9]*:' "$tmp/out")" = 1 ] || { cat "$tmp/out"; echo "MNLI: --rows 1"; exit 1; }
"$cli" glue STS-B train "$root" | grep -q '^0:  idx=1  score=5  text1="A plane is taking off."' \
    || { echo "STS-B: first row"; exit 1; }
if "$cli" glue MRPC dev "$root" 2> "$tmp/err"; then echo "MRPC dev accepted"; exit 1; fi
grep -q "MRPC has no split 'dev' (its splits: train, test)" "$tmp/err" || { cat "$tmp/err"; exit 1; }
printf 'sentence\tlabel\nok\t1\nbad\tx\n' > "$tmp/train.tsv"
if "$cli" glue SST2 train "$tmp/train.tsv" 2> "$tmp/err"; then echo "malformed row accepted"; exit 1; fi
grep -q 'train.tsv:3: malformed row' "$tmp/err" || { cat "$tmp/err"; exit 1; }
"$cli" glue SST2 train "$tmp/train.tsv" --skip-malformed | grep -q '1 rows, 0 filtered as torchtext filters, 1 malformed skipped, 3 lines' \
    || { echo "--skip-malformed counts"; exit 1; }
echo "loom glue: ok"
