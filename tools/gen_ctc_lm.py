#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Golden data of the CTC decoder's n-gram LM (tests/data/audio/ctc/).

Writes
  corpus.txt          a small seeded text corpus: sentences over a 40-word
                      vocabulary, made by a random bigram walk
  lm3.arpa            a 3-gram model of it, estimated here with interpolated
                      modified Kneser-Ney (Chen & Goodman 1998, the estimator
                      of KenLM's lmplz, without pruning)
  lm_sentences.txt    sentences to score, one per line (known and unknown
                      words, repeated words, an empty line)
  lm_scores.npy       f64 [S, 4]: kenlm.Model(lm3.arpa).score(s, bos, eos)
                      for (bos, eos) = (1,1), (1,0), (0,1), (0,0)

Debian does not package KenLM's lmplz, so the estimator is this script's;
the reference for scoring is KenLM's own Python module (kenlm on PyPI).
Run in .venv-ctc (tools/dev goldens does): numpy, kenlm.

  tools/gen_ctc_lm.py [--out tests/data/audio/ctc] [--corpus FILE] [--order 3]
"""
import argparse
import math
import os
from collections import defaultdict

import numpy as np

WORDS = ("the a cat dog sat ran on under mat rug house big small red blue green old new my your "
         "one two three and but then quick slow bird fish tree park see saw here there sun moon day "
         "night").split()


def make_corpus(rng, n_sentences=160):
    """A random walk over the words with a fixed sparse bigram table, so the
    corpus has repeated n-grams of every order."""
    v = len(WORDS)
    succ = [rng.choice(v, size=5, replace=False) for _ in range(v)]
    out = []
    for _ in range(n_sentences):
        w = int(rng.integers(v))
        sent = [WORDS[w]]
        for _ in range(int(rng.integers(2, 9))):
            w = int(succ[w][int(rng.integers(5))]) if rng.random() < 0.85 else int(rng.integers(v))
            sent.append(WORDS[w])
        out.append(" ".join(sent))
    return out


def estimate_mkn(sentences, order):
    """Interpolated modified Kneser-Ney: {n: {ngram: (log10 p, log10 backoff or None)}}."""
    raw = [defaultdict(int) for _ in range(order + 1)]
    for s in sentences:
        toks = ["<s>"] + s.split() + ["</s>"]
        for n in range(1, order + 1):
            for i in range(len(toks) - n + 1):
                g = tuple(toks[i:i + n])
                if g == ("<s>",):
                    continue
                raw[n][g] += 1
    # adjusted counts: the highest order and n-grams starting with <s> keep
    # their counts, the others count their distinct left extensions
    adj = [dict() for _ in range(order + 1)]
    adj[order] = dict(raw[order])
    for n in range(order - 1, 0, -1):
        left = defaultdict(int)
        for g in raw[n + 1]:
            left[g[1:]] += 1
        for g, c in raw[n].items():
            adj[n][g] = c if g[0] == "<s>" else left.get(g, c)
    disc = [None] * (order + 1)
    for n in range(1, order + 1):
        t = [0] * 5
        for c in adj[n].values():
            if c <= 4:
                t[c] += 1
        t = [max(x, 1) for x in t]
        y = t[1] / (t[1] + 2 * t[2])
        disc[n] = (0.0, 1 - 2 * y * t[2] / t[1], 2 - 3 * y * t[3] / t[2], 3 - 4 * y * t[4] / t[3])

    def dis(n, c):
        return disc[n][min(c, 3)]

    # per context: total adjusted count and the mass given to lower orders
    tot = [defaultdict(float) for _ in range(order + 1)]
    gamma_num = [defaultdict(float) for _ in range(order + 1)]
    for n in range(1, order + 1):
        for g, c in adj[n].items():
            tot[n][g[:-1]] += c
            gamma_num[n][g[:-1]] += dis(n, c)
    vocab = sorted({g[0] for g in adj[1]} | {"<unk>"})
    prob = [dict() for _ in range(order + 1)]
    uniform = 1.0 / len(vocab)
    g0 = gamma_num[1][()] / tot[1][()]
    for w in vocab:
        c = adj[1].get((w,), 0)
        prob[1][(w,)] = max(c - dis(1, c), 0.0) / tot[1][()] + g0 * uniform
    for n in range(2, order + 1):
        for g, c in adj[n].items():
            h = g[:-1]
            lower = prob[n - 1][g[1:]]
            prob[n][g] = (c - dis(n, c)) / tot[n][h] + gamma_num[n][h] / tot[n][h] * lower
    model = {}
    for n in range(1, order + 1):
        rows = {}
        for g, p in prob[n].items():
            bo = None
            if n < order and g in tot[n + 1]:
                bo = math.log10(gamma_num[n + 1][g] / tot[n + 1][g])
            rows[g] = (math.log10(p), bo)
        if n == 1:
            bo = math.log10(gamma_num[2][("<s>",)] / tot[2][("<s>",)])
            rows[("<s>",)] = (-99.0, bo)
        model[n] = rows
    return model


def write_arpa(model, path):
    order = max(model)
    with open(path, "w") as f:
        f.write("\\data\\\n")
        for n in range(1, order + 1):
            f.write(f"ngram {n}={len(model[n])}\n")
        for n in range(1, order + 1):
            f.write(f"\n\\{n}-grams:\n")
            for g in sorted(model[n]):
                p, bo = model[n][g]
                line = f"{p:.6f}\t{' '.join(g)}"
                if bo is not None:
                    line += f"\t{bo:.6f}"
                f.write(line + "\n")
        f.write("\n\\end\\\n")


def test_sentences(rng, corpus):
    out = list(corpus[:6])
    for _ in range(14):
        n = int(rng.integers(1, 10))
        out.append(" ".join(WORDS[int(i)] for i in rng.integers(len(WORDS), size=n)))
    out += ["zebra", "the zebra sat on the mat", "cat cat cat cat", "", "  the   dog  ", "<unk> the </s>",
            "the <s> cat", "moon moon night day sun"]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--out", default=os.path.join(root, "tests", "data", "audio", "ctc"))
    ap.add_argument("--corpus", help="estimate from this text file (one sentence per line) instead")
    ap.add_argument("--order", type=int, default=3)
    ap.add_argument("--arpa", default="lm3.arpa", help="name of the model written under --out")
    ap.add_argument("--no-scores", action="store_true", help="write the model only")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rng = np.random.default_rng(17)
    if a.corpus:
        with open(a.corpus) as f:
            corpus = [l.strip() for l in f if l.strip()]
    else:
        corpus = make_corpus(rng)
        with open(os.path.join(a.out, "corpus.txt"), "w") as f:
            f.write("\n".join(corpus) + "\n")
    arpa = os.path.join(a.out, a.arpa)
    write_arpa(estimate_mkn(corpus, a.order), arpa)
    if a.no_scores:
        return
    import kenlm
    m = kenlm.Model(arpa)
    sents = test_sentences(rng, corpus)
    scores = np.array([[m.score(s, bos=b, eos=e) for b, e in ((1, 1), (1, 0), (0, 1), (0, 0))] for s in sents],
                      dtype=np.float64)
    with open(os.path.join(a.out, "lm_sentences.txt"), "w") as f:
        f.write("\n".join(sents) + "\n")
    np.save(os.path.join(a.out, "lm_scores.npy"), scores)
    print(f"{arpa}: {os.path.getsize(arpa)} bytes; {len(sents)} sentences scored")


if __name__ == "__main__":
    main()
