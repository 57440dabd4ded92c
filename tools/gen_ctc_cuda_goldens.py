#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Golden data of audio.cuda_ctc_decoder (tests/data/audio/ctc/cuda_ctc_*):
the blank-collapsing prefix beam search that torchaudio 2.1 added as
cuda_ctc_decoder (src/libtorchaudio/cuctc, CUDA only), reimplemented here
step by step in NumPy float32, as its kernels compute it, so that loom's cpu
kernel (the reference of its cuda one) is checked without a GPU.

The algorithm, per utterance (blank is token 0, as torchaudio requires):
  - frames whose blank log-prob is >= log(blank_skip_threshold) are skipped;
    the others, in order, are the steps; need_add_blank(i): the frame of
    step i + 1 is not the next frame (blanks were skipped after step i);
  - step 0: the beam best tokens of the first frame, best first; a blank
    is the empty prefix (pb = p), a token c the prefix "c" (pnb = p, or
    pb = p when need_add_blank(0));
  - step i: for each beam j and token c != blank: c == last(j): pnb of
    "j c" = p_c + pb(j), and j stays with pnb = p_c + pnb(j); else pnb of
    "j c" = p_c + lse(pb(j), pnb(j)); j stays with pb = p_blank + lse(pb(j),
    pnb(j)) (and pnb -FLT_MAX when j is empty); then where beam t is beam a
    extended by last(t), a's extension by last(t) is merged into t's stay
    (lse of both pb and pnb) and dropped; then the beam best of all beam x V
    candidates by lse(pb, pnb), best first (ties: the lower j * V + c), each
    with pb, pnb, or (score, -FLT_MAX) when need_add_blank(i);
  - the result: the beam's prefixes and scores after the utterance's last
    step, best first; nbest of them. No selected frame: nbest empty
    hypotheses of score 0 (torchaudio leaves the score unset).
lse(a, b) = max + log(1 + exp(-|a - b|)) in float32; -FLT_MAX is "none".

Writes cuda_ctc_emissions.npy f32 [B, T, V] (log-softmax, peaky with long
blank runs, so frames are skipped), cuda_ctc_lengths.npy i64 [B] (one
utterance of 0 frames, one whose frames are all blank-dominant),
cuda_ctc_cases.txt (one case a line: beam_size=..;nbest=..;
blank_skip_threshold=..) and, every case's results concatenated,
cuda_ctc_tokens.npy i64, cuda_ctc_offsets.npy i64 [cases * B * nbest + 1]
(hypothesis rows), cuda_ctc_score.npy f32.
Run in .venv-ctc (tools/dev goldens does); needs only NumPy.
"""
import argparse
import math
import os

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
F32 = np.float32
NONE = F32(-np.finfo(np.float32).max)      # torchaudio's -FLT_MAX
CASES = [(10, 1, 0.95), (10, 3, 0.95), (4, 4, 1.0), (16, 2, 0.5), (30, 5, 0.95), (1, 1, 0.95), (7, 7, 0.2)]


def lse(a, b):
    m = a if a > b else b
    d = (b - a) if (a - b) > F32(0) else (a - b)
    return F32(m + np.log(F32(1) + np.exp(F32(d))))


def top(keys, k):
    """Indices of the k best keys, best first; ties: the lower index."""
    return sorted(range(len(keys)), key=lambda i: (-float(keys[i]), i))[:k]


def decode_one(lp, length, beam, nbest, threshold):
    """lp [T, V] float32; returns [(tokens, score)] * nbest."""
    V = lp.shape[1]
    sel = [t for t in range(length) if lp[t, 0] < threshold]
    if not sel:
        return [([], F32(0))] * nbest

    def add_blank(i):
        return i + 1 < len(sel) and sel[i + 1] - sel[i] > 1

    first = lp[sel[0]]
    beams = []            # (prefix tuple, pb, pnb)
    scores = []
    for c in top(first, beam):
        key = F32(first[c])
        if c == 0:
            beams.append(((), key, NONE))
        else:
            beams.append(((c,), key, NONE) if add_blank(0) else ((c,), NONE, key))
        scores.append(key)
    for i in range(1, len(sel)):
        p = lp[sel[i]]
        nb = len(beams)
        table = np.full((nb, V), NONE, dtype=F32)      # ends in blank
        tablen = np.full((nb, V), NONE, dtype=F32)     # ends in a token
        for j, (pre, pb, pnb) in enumerate(beams):
            last = pre[-1] if pre else 0
            both = lse(pb, pnb)
            for c in range(1, V):
                if c == last:
                    tablen[j, c] = F32(p[c] + pb)
                    tablen[j, 0] = F32(p[c] + pnb)
                else:
                    tablen[j, c] = F32(p[c] + both)
            table[j, 0] = F32(p[0] + both)
            if last == 0:
                tablen[j, 0] = NONE
        for t, (pre_t, _, _) in enumerate(beams):
            for a, (pre_a, _, _) in enumerate(beams):
                if len(pre_t) == len(pre_a) + 1 and pre_t[:-1] == pre_a:
                    c = pre_t[-1]
                    table[t, 0] = lse(table[t, 0], table[a, c])
                    tablen[t, 0] = lse(tablen[t, 0], tablen[a, c])
                    table[a, c] = NONE
                    tablen[a, c] = NONE
        keys = [lse(table[j, c], tablen[j, c]) for j in range(nb) for c in range(V)]
        new_beams, scores = [], []
        for idx in top(keys, beam):
            j, c = divmod(idx, V)
            pre = beams[j][0] if c == 0 else beams[j][0] + (c,)
            x, y = table[j, c], tablen[j, c]
            s = lse(x, y)
            scores.append(s)
            new_beams.append((pre, s, NONE) if add_blank(i) else (pre, x, y))
        beams = new_beams
    return [(list(beams[k][0]), scores[k]) for k in range(nbest)]


def make_emissions(rng, B, T, V):
    em = np.empty((B, T, V), dtype=F32)
    for b in range(B):
        logits = rng.normal(0.0, 1.0, size=(T, V))
        t = 0
        while t < T:
            if rng.random() < 0.45:        # a blank run, often confident enough to be skipped
                n = int(rng.integers(1, 5))
                logits[t:t + n, 0] += rng.choice([2.0, 7.0])
            else:                          # a token for 1-3 frames
                n = int(rng.integers(1, 4))
                logits[t:t + n, int(rng.integers(1, V))] += 4.0
            t += n
        m = logits.max(axis=1, keepdims=True)
        em[b] = (logits - (m + np.log(np.exp(logits - m).sum(axis=1, keepdims=True)))).astype(F32)
    em[3, :, 0] = F32(-1e-4)               # every frame blank-dominant: nothing selected at 0.95
    em[3, :, 1:] = F32(-12.0)
    return em


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "audio", "ctc"))
    args = ap.parse_args()
    rng = np.random.default_rng(2111)
    B, T, V = 6, 40, 12
    em = make_emissions(rng, B, T, V)
    lengths = np.array([40, 31, 0, 40, 17, 40], dtype=np.int64)
    tokens, offsets, scores, lines = [], [0], [], []
    for beam_size, nbest, thr in CASES:
        beam = min(beam_size, V)
        threshold = F32(math.log(thr))
        lines.append(f"beam_size={beam_size};nbest={nbest};blank_skip_threshold={thr}")
        for b in range(B):
            for toks, s in decode_one(em[b], int(lengths[b]), beam, nbest, threshold):
                tokens += toks
                offsets.append(len(tokens))
                scores.append(s)
    np.save(os.path.join(args.out, "cuda_ctc_emissions.npy"), em)
    np.save(os.path.join(args.out, "cuda_ctc_lengths.npy"), lengths)
    np.save(os.path.join(args.out, "cuda_ctc_tokens.npy"), np.array(tokens, dtype=np.int64))
    np.save(os.path.join(args.out, "cuda_ctc_offsets.npy"), np.array(offsets, dtype=np.int64))
    np.save(os.path.join(args.out, "cuda_ctc_score.npy"), np.array(scores, dtype=F32))
    with open(os.path.join(args.out, "cuda_ctc_cases.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{len(CASES)} cases x {B} utterances: {len(tokens)} tokens, {len(scores)} hypotheses")


if __name__ == "__main__":
    main()
