#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The command of the issue through the loom CLI binary, with strings read by
# --lines:
#   loom run text.bert_tokenizer --attr vocab=vocab.txt --lines text=in.txt
#     --out input_ids=ids.npy --out offsets=off.npy
# on the corpus (400 lines): the offsets of compat=hf equal tokenizers'
# (tests/data/text/tokenizer/hf_uncased_offsets.npy, i64 [401]) byte for
# byte; then what `loom info` says about strings, and the refusals of
# --lines (a missing file, a name that is not a string input, a name given
# twice).
# Args: LOOM_CLI PACK_DIRS DATA_DIR
set -eu
cli=$1
export LOOM_PLUGIN_PATH="$2"
data=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$cli" run text.bert_tokenizer --attr vocab="$data/vocab.txt" --lines text="$data/corpus.txt" \
    --out input_ids="$tmp/ids.npy" --out offsets="$tmp/off.npy" > "$tmp/log"
grep -q 'input_ids: i64\[' "$tmp/log" || { cat "$tmp/log"; echo "no i64 input_ids reported"; exit 1; }
grep -q 'offsets: i64\[401\]' "$tmp/log" || { cat "$tmp/log"; echo "offsets are not i64 [401]"; exit 1; }
"$cli" run text.bert_tokenizer --attr vocab="$data/vocab.txt" --attr compat=hf --attr add_special_tokens=false \
    --lines text="$data/corpus.txt" --out offsets="$tmp/hf_off.npy" > /dev/null
tail -c 3208 "$tmp/hf_off.npy" > "$tmp/got"
tail -c 3208 "$data/tokenizer/hf_uncased_offsets.npy" > "$tmp/want"
cmp -s "$tmp/got" "$tmp/want" || { echo "offsets differ from tests/data/text/tokenizer/hf_uncased_offsets.npy"; exit 1; }
"$cli" info text.bert_tokenizer > "$tmp/info"
grep -q -- '--lines text=FILE.txt gives text and text_offsets' "$tmp/info" || { cat "$tmp/info"; echo "info: no --lines"; exit 1; }
if "$cli" run text.bert_tokenizer --attr vocab="$data/vocab.txt" --lines text="$tmp/none.txt" 2> "$tmp/err"; then
    echo "a missing --lines file was accepted"; exit 1
fi
grep -q 'cannot open' "$tmp/err" || { cat "$tmp/err"; exit 1; }
if "$cli" run text.bert_tokenizer --attr vocab="$data/vocab.txt" --lines text_offsets="$data/corpus.txt" 2> "$tmp/err"; then
    echo "--lines on offsets was accepted"; exit 1
fi
grep -q 'is not a jagged input' "$tmp/err" || { cat "$tmp/err"; exit 1; }
if "$cli" run text.bert_tokenizer --attr vocab="$data/vocab.txt" --lines text="$data/corpus.txt" \
    --lines text="$data/corpus.txt" 2> "$tmp/err"; then
    echo "--lines twice was accepted"; exit 1
fi
printf 'one\ntwo\n\nthree' > "$tmp/four.txt"
"$cli" run text.bert_tokenizer --attr vocab="$data/vocab.txt" --lines text="$tmp/four.txt" > "$tmp/log"
grep -q 'offsets: i64\[5\]' "$tmp/log" || { cat "$tmp/log"; echo "4 lines (one empty, no final newline) are not 4 rows"; exit 1; }
echo "text.bert_tokenizer via the CLI: ok"
