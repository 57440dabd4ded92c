#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Golden data of the CTC beam-search decoder (tests/data/audio/ctc/), from
flashlight-text (the engine behind torchaudio's ctc_decoder), driven as
torchaudio's CTCDecoder drives it.

Writes
  tokens.txt, lexicon.txt  29 tokens (- | a..z '), the LM's words spelled
                           with a trailing | (and two words the LM lacks)
  emissions.npy            f32 [B, T, N] log-softmax emissions of a few
                           sentences, letters of 1-3 frames between blanks,
                           noise, a deliberate misspelling; lengths.npy [B]
  decode_cases.txt         one line per case: the decoder's attributes
  best_*.npy               flashlight's get_best_hypothesis(0) after every 7
                           frames (utterances 0 and 1 of the cases in
                           best_cases.npy), reduced as the final ones
  decode_{tokens,timesteps,offsets,words,words_offsets,score,hypotheses}.npy
                           every case's results concatenated, in the order
                           of decode_cases.txt; hypotheses [cases * B + 1]

  greedy_*.npy             audio.ctc_greedy_decoder's reference (torchaudio's
                           GreedyCTCDecoder: argmax, unique_consecutive, no
                           blanks) on emissions.npy with lengths, and on
                           greedy_emissions.npy [3, 9, 37] with ties, NaNs,
                           blank=5

Cases: lexicon and lexicon-free, the 3-gram LM of gen_ctc_lm.py (lm3.arpa)
and none, log_add on and off, nbest 1 and 5; then an unk_score case; then
lm=2, the custom LM of examples/ctc-lm (ToyLM here, a CTCDecoderLM). Run
gen_ctc_lm.py first. Run in .venv-ctc (tools/dev goldens does).
"""
import argparse
import itertools
import os

import numpy as np
from flashlight.lib.text.decoder import (LM, CriterionType, LexiconDecoder, LexiconDecoderOptions, LexiconFreeDecoder,
                                         LexiconFreeDecoderOptions, LMState, SmearingMode, Trie, ZeroLM)
from flashlight.lib.text.decoder.kenlm import KenLM
from flashlight.lib.text.dictionary import Dictionary

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOKENS = ["-", "|"] + [chr(c) for c in range(ord("a"), ord("z") + 1)] + ["'"]
EXTRA_WORDS = ["zebra", "cats"]
SENTENCES = ["the cat sat on the mat", "a big dog ran", "the red bird saw the moon", "my old house"]
MISSPELT = {3: "my old hpuse"}       # the acoustics of sentence 3 say "hpuse"


class ToyLM(LM):
    """examples/ctc-lm's model as a torchaudio CTCDecoderLM: word w costs
    -0.1 (1 + w % 7), the end -0.5; one state per history (child)."""

    def __init__(self):
        LM.__init__(self)

    def start(self, start_with_nothing):
        return LMState()

    def score(self, state, idx):
        return state.child(idx), -0.1 * (1 + idx % 7)

    def finish(self, state):
        return state.child(-1), -0.5


def lm_words():
    import gen_ctc_lm
    return list(gen_ctc_lm.WORDS)


def write_lexicon(path, words):
    with open(path, "w") as f:
        for w in words:
            f.write(w + "\t" + " ".join(w) + " |\n")


def emissions_for(rng, text, n_tok, frames):
    """Frames of a sentence: per letter 1-3 frames of that letter, blanks
    between (and always between doubled letters), | between words."""
    idx = {t: i for i, t in enumerate(TOKENS)}
    path = [0]
    for wi, word in enumerate(text.split()):
        if wi > 0:
            path += [idx["|"]] * int(rng.integers(1, 3))
        for ci, ch in enumerate(word):
            if ci > 0 and word[ci - 1] == ch:
                path.append(0)
            path += [idx[ch]] * int(rng.integers(1, 3))
            if rng.random() < 0.5:
                path.append(0)
    path += [idx["|"], 0]
    path = path[:frames] + [0] * max(0, frames - len(path))
    logits = rng.normal(0.0, 1.0, size=(frames, n_tok)).astype(np.float32)
    for t, k in enumerate(path):
        logits[t, k] += 4.0 + float(rng.random()) * 2
        # a confusable second choice, so beams have real alternatives
        logits[t, int(rng.integers(n_tok))] += 2.5
    m = logits.max(axis=1, keepdims=True)
    lse = m + np.log(np.exp(logits - m).sum(axis=1, keepdims=True))
    return (logits - lse).astype(np.float32), len([p for p in path])


def reduce_tokens(idxs, blank):
    """torchaudio's _get_tokens and _get_timesteps."""
    tokens = [g[0] for g in itertools.groupby(idxs)]
    tokens = [t for t in tokens if t != blank]
    steps = [i for i, t in enumerate(idxs) if t != blank and (i == 0 or t != idxs[i - 1])]
    return tokens, steps


def make_decoder(case, tokens_dict, lexicon_words, arpa):
    blank, sil = tokens_dict.get_index("-"), tokens_dict.get_index("|")
    lexicon = case["lexicon"]
    if lexicon:
        word_dict = Dictionary(lexicon_words + ["<unk>"])
        word_dict.set_default_index(word_dict.get_index("<unk>"))
    elif case["lm"] == 1:
        word_dict = Dictionary(TOKENS + ["<unk>"])
    else:
        word_dict = None
    lm = KenLM(arpa, word_dict) if case["lm"] == 1 else ToyLM() if case["lm"] == 2 else ZeroLM()
    if lexicon:
        trie = Trie(tokens_dict.index_size(), sil)
        start = lm.start(False)
        for w in lexicon_words + ["<unk>"]:
            wi = word_dict.get_index(w)
            _, score = lm.score(start, wi)
            if w != "<unk>":
                trie.insert([tokens_dict.get_index(c) for c in w] + [sil], wi, score)
        trie.smear(SmearingMode.MAX)
        opt = LexiconDecoderOptions(case["beam_size"], case["beam_size_token"], case["beam_threshold"],
                                    case["lm_weight"], case["word_score"], case["unk_score"], case["sil_score"],
                                    case["log_add"], CriterionType.CTC)
        dec = LexiconDecoder(opt, trie, lm, sil, blank, word_dict.get_index("<unk>"), [], False)
    else:
        opt = LexiconFreeDecoderOptions(case["beam_size"], case["beam_size_token"], case["beam_threshold"],
                                        case["lm_weight"], case["sil_score"], case["log_add"], CriterionType.CTC)
        dec = LexiconFreeDecoder(opt, lm, sil, blank, [])
    return dec, lm, word_dict, blank


def cases():
    out = []
    for lexicon in (1, 0):
        for lm in (1, 0):
            for log_add in (0, 1):
                for nbest in (1, 5):
                    out.append(dict(lexicon=lexicon, lm=lm, log_add=log_add, nbest=nbest, beam_size=12,
                                    beam_size_token=10, beam_threshold=25.0, lm_weight=1.5, word_score=-0.5,
                                    unk_score=float("-inf"), sil_score=0.25))
    out.append(dict(lexicon=1, lm=1, log_add=0, nbest=5, beam_size=12, beam_size_token=29, beam_threshold=25.0,
                    lm_weight=1.0, word_score=0.0, unk_score=-4.0, sil_score=0.0))
    # lm=2: the custom LM of examples/ctc-lm (audio.ctc_decoder lm=example.ctc_lm)
    for lexicon, log_add in ((1, 0), (0, 1)):
        out.append(dict(lexicon=lexicon, lm=2, log_add=log_add, nbest=5, beam_size=12, beam_size_token=10,
                        beam_threshold=25.0, lm_weight=1.5, word_score=-0.5, unk_score=float("-inf"),
                        sil_score=0.25))
    return out


def case_line(c):
    keys = ["nbest", "beam_size", "beam_size_token", "beam_threshold", "lm_weight", "word_score", "unk_score",
            "sil_score", "log_add"]
    parts = [f"lexicon={c['lexicon']}", f"lm={c['lm']}"]
    for k in keys:
        v = c[k]
        if k == "unk_score" and v == float("-inf"):
            continue
        parts.append(f"{k}={'true' if v is True else 'false' if v is False else v}")
    return ";".join(parts)


def greedy(emissions, lengths, blank):
    """argmax (the first maximum, NaN the maximum, as torch.argmax and
    numpy.argmax), repeats collapsed, blanks dropped; jagged."""
    tokens, offsets = [], [0]
    for b in range(emissions.shape[0]):
        best = np.argmax(emissions[b, : lengths[b]], axis=1)
        tokens += [int(k) for i, k in enumerate(best) if k != blank and (i == 0 or k != best[i - 1])]
        offsets.append(len(tokens))
    return np.array(tokens, dtype=np.int64), np.array(offsets, dtype=np.int64)


def write_greedy(out, rng, emissions, lengths):
    t, o = greedy(emissions, lengths, 0)
    np.save(os.path.join(out, "greedy_tokens.npy"), t)
    np.save(os.path.join(out, "greedy_offsets.npy"), o)
    e = rng.integers(-3, 3, size=(3, 9, 37)).astype(np.float32)      # many ties
    e[0, 2, 11] = np.nan
    e[1, 4, :] = np.nan
    e[2, 7, 36] = 100.0
    e[2, 8, 5] = 100.0
    np.save(os.path.join(out, "greedy_emissions.npy"), e)
    t, o = greedy(e, [9, 9, 9], 5)
    np.save(os.path.join(out, "greedy_ties_tokens.npy"), t)
    np.save(os.path.join(out, "greedy_ties_offsets.npy"), o)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "audio", "ctc"))
    a = ap.parse_args()
    import sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    rng = np.random.default_rng(1717)
    words = lm_words() + EXTRA_WORDS
    with open(os.path.join(a.out, "tokens.txt"), "w") as f:
        f.write("\n".join(TOKENS) + "\n")
    write_lexicon(os.path.join(a.out, "lexicon.txt"), words)
    tokens_dict = Dictionary(os.path.join(a.out, "tokens.txt"))
    n_tok = tokens_dict.index_size()
    T = 64
    em, lengths = [], []
    for i, s in enumerate(SENTENCES):
        e, n = emissions_for(rng, MISSPELT.get(i, s), n_tok, T)
        em.append(e)
        lengths.append(min(T, n + (i % 2) * 3))
    emissions = np.ascontiguousarray(np.stack(em))
    lengths = np.array(lengths, dtype=np.int64)
    np.save(os.path.join(a.out, "emissions.npy"), emissions)
    np.save(os.path.join(a.out, "lengths.npy"), lengths)
    write_greedy(a.out, rng, emissions, lengths)
    arpa = os.path.join(a.out, "lm3.arpa")
    if not os.path.exists(arpa):      # tools/dev goldens runs this script first
        import subprocess
        subprocess.run([sys.executable, os.path.join(ROOT, "tools", "gen_ctc_lm.py"), "--out", a.out], check=True)
    fields = {k: [] for k in ("tokens", "timesteps", "score", "words")}
    offsets, words_offsets, hyps = [0], [0], [0]
    lines = []
    for c in cases():
        dec, lm, word_dict, blank = make_decoder(c, tokens_dict, words, arpa)
        lines.append(case_line(c))
        for b in range(emissions.shape[0]):
            ptr = emissions.ctypes.data + b * emissions.strides[0]
            results = dec.decode(ptr, int(lengths[b]), n_tok)[: c["nbest"]]
            for r in results:
                toks, steps = reduce_tokens(list(r.tokens), blank)
                fields["tokens"] += toks
                fields["timesteps"] += steps
                offsets.append(len(fields["tokens"]))
                w = " ".join(word_dict.get_entry(x) for x in r.words if x >= 0) if c["lexicon"] else ""
                fields["words"] += list(w.encode())
                words_offsets.append(len(fields["words"]))
                fields["score"].append(r.score)
            hyps.append(hyps[-1] + len(results))
        del dec, lm
    # mid-stream: flashlight's get_best_hypothesis(0) after every 7 frames, for the
    # first case of each lexicon/LM combination and the first two utterances
    best = {k: [] for k in ("tokens", "timesteps", "score", "words")}
    boff, bwoff, bcase = [0], [0], []
    seen = set()
    for ci, c in enumerate(cases()):
        key = (c["lexicon"], c["lm"])
        if key in seen or c["lm"] == 2:
            continue
        seen.add(key)
        bcase.append(ci)
        dec, lm, word_dict, blank = make_decoder(c, tokens_dict, words, arpa)
        for b in range(2):
            dec.decode_begin()
            for t in range(0, int(lengths[b]), 7):
                n = min(7, int(lengths[b]) - t)
                dec.decode_step(emissions.ctypes.data + b * emissions.strides[0] + t * emissions.strides[1], n, n_tok)
                r = dec.get_best_hypothesis(0)
                toks, steps = reduce_tokens(list(r.tokens), blank)
                best["tokens"] += toks
                best["timesteps"] += steps
                boff.append(len(best["tokens"]))
                w = " ".join(word_dict.get_entry(x) for x in r.words if x >= 0) if c["lexicon"] else ""
                best["words"] += list(w.encode())
                bwoff.append(len(best["words"]))
                best["score"].append(r.score)
            dec.decode_end()
        del dec, lm
    for name, v, dt in (("tokens", best["tokens"], np.int64), ("timesteps", best["timesteps"], np.int64),
                        ("offsets", boff, np.int64), ("words", best["words"], np.uint8),
                        ("words_offsets", bwoff, np.int64), ("score", best["score"], np.float64),
                        ("cases", bcase, np.int64)):
        np.save(os.path.join(a.out, f"best_{name}.npy"), np.array(v, dtype=dt))
    with open(os.path.join(a.out, "decode_cases.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    save = lambda name, v, dt: np.save(os.path.join(a.out, f"decode_{name}.npy"), np.array(v, dtype=dt))
    save("tokens", fields["tokens"], np.int64)
    save("timesteps", fields["timesteps"], np.int64)
    save("offsets", offsets, np.int64)
    save("words", fields["words"], np.uint8)
    save("words_offsets", words_offsets, np.int64)
    save("score", fields["score"], np.float64)
    save("hypotheses", hyps, np.int64)
    print(f"{len(lines)} cases, {len(fields['score'])} hypotheses")


if __name__ == "__main__":
    main()
