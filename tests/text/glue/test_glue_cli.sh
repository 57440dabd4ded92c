#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The command of the issue through the loom CLI binary:
#   loom glue MRPC train path/
# on the sample files (tests/data/text/glue/root): the first rows and the
# counts; then a split the dataset lacks, a malformed row (its file and
# line) and --skip-malformed; the same rows from torchtext's zips
# (tests/data/text/glue/zips) and a zip without the split.
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
# torchtext's zips: the folder that holds them, and a zip itself
zips=$3/glue/zips
"$cli" glue SST-2 dev "$zips" > "$tmp/out"
"$cli" glue SST-2 dev "$root" | cmp -s - "$tmp/out" || { cat "$tmp/out"; echo "SST-2 dev: zip and files differ"; exit 1; }
"$cli" glue MNLI dev_mismatched "$zips/multinli_1.0.zip" > "$tmp/out"
"$cli" glue MNLI dev_mismatched "$root" | cmp -s - "$tmp/out" || { cat "$tmp/out"; echo "MNLI: zip and files differ"; exit 1; }
if "$cli" glue RTE train "$zips/WNLI.zip" 2> "$tmp/err"; then echo "wrong zip accepted"; exit 1; fi
grep -q 'WNLI.zip: no member RTE/train.tsv' "$tmp/err" || { cat "$tmp/err"; exit 1; }
echo "loom glue: ok"
