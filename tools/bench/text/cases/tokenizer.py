# SPDX-License-Identifier: BSD-3-Clause
"""text.bert_tokenizer against tokenizers' BertWordPieceTokenizer (compat=hf)
and torchtext's BERTTokenizer (compat=torchtext), the real uncased vocab,
no special tokens. Both sides get the whole corpus as one batch: loom one
call on the jagged strings, tokenizers one encode_batch (its Rust loop, so
no Python per line), torchtext one call on the list. Throughput is the
reference's token count over its time, and loom's the same count over
loom's time (the tests check the ids are equal).
"""
import os
import warnings

import numpy as np

import sidebyside

VOCAB = os.path.join(sidebyside.ROOT, "tests", "data", "text", "vocab.txt")


def jagged(lines):
    data = [s.encode("utf-8") for s in lines]
    values = np.frombuffer(b"".join(data), dtype=np.uint8)
    offsets = np.cumsum([0] + [len(d) for d in data]).astype(np.int64)
    return {"text": values, "text_offsets": offsets}


def cases(corpus, threads):
    from tokenizers import BertWordPieceTokenizer
    hf = BertWordPieceTokenizer(VOCAB, lowercase=True)
    n_hf = sum(len(e.ids) for e in hf.encode_batch(corpus, add_special_tokens=False))
    inputs = jagged(corpus)
    what = "single thread" if threads == 1 else f"batch of {len(corpus)} lines, {threads} threads"
    out = [sidebyside.Case(
        name=f"tokenizer vs tokenizers, {what}", op="text.bert_tokenizer", inputs=inputs,
        attrs={"vocab": VOCAB, "compat": "hf", "add_special_tokens": "false"},
        reference=lambda: hf.encode_batch(corpus, add_special_tokens=False),
        items=n_hf, unit="tokens/s", target=5.0 if threads == 1 else 2.0, repeat=5, warmup=1)]
    if threads == 1:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import torchtext
            torchtext.disable_torchtext_deprecation_warning()
            from torchtext.transforms import BERTTokenizer
        tt = BERTTokenizer(VOCAB, do_lower_case=True)
        n_tt = sum(len(r) for r in tt(corpus))
        out.append(sidebyside.Case(
            name="tokenizer vs torchtext, single thread", op="text.bert_tokenizer", inputs=inputs,
            attrs={"vocab": VOCAB}, reference=lambda: tt(corpus), items=n_tt, unit="tokens/s", repeat=5,
            warmup=1))
    return out
