#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the golden data of rec.two_tower to tests/data/rec/two_tower/.

The model is torchrec's examples/retrieval/modules/two_tower.py TwoTower (the
example is not in the torchrec wheel, so its forward is restated here from the
same modules: one EmbeddingBagCollection with a query table and a candidate
table of one embedding_dim, and torchrec.modules.mlp.MLP(in_size=D,
layer_sizes) over each tower's pooled features; MLP puts relu after every
layer, the last included, as TwoTower uses it), random weights from
torch.manual_seed. Its state_dict (ebc.embedding_bags.<t>.weight,
query_proj._mlp.<i>._linear.{weight,bias}, candidate_proj...) is saved as
model.safetensors; the loss task's logits are (q * c).sum(dim=1).
Files: model.safetensors, <case>.{q_values,q_lengths,c_values,c_lengths,query,
candidate,logits}.npy and cases.inc: CASE(name, B).

    .venv-rec/bin/python tools/gen_rec_two_tower_goldens.py [OUTDIR]
"""
import os
import sys

import numpy as np
import torch
from safetensors.torch import save_file
from torch import nn
from torchrec.modules.embedding_configs import EmbeddingBagConfig
from torchrec.modules.embedding_modules import EmbeddingBagCollection
from torchrec.modules.mlp import MLP
from torchrec.sparse.jagged_tensor import KeyedJaggedTensor

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "rec", "two_tower")
D = 16
LAYERS = [32, 8]
USERS, ITEMS = 50, 80


class TwoTower(nn.Module):
    """torchrec's example TwoTower: the towers' MLPs over the EBC's pooled query and candidate features."""

    def __init__(self, ebc, layer_sizes):
        super().__init__()
        cfg = ebc.embedding_bag_configs()
        self._query_features = cfg[0].feature_names
        self._candidate_features = cfg[1].feature_names
        self.ebc = ebc
        self.query_proj = MLP(in_size=cfg[0].embedding_dim, layer_sizes=layer_sizes)
        self.candidate_proj = MLP(in_size=cfg[0].embedding_dim, layer_sizes=layer_sizes)

    def forward(self, kjt):
        pooled = self.ebc(kjt)
        q = self.query_proj(torch.cat([pooled[f] for f in self._query_features], dim=1))
        c = self.candidate_proj(torch.cat([pooled[f] for f in self._candidate_features], dim=1))
        return q, c


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(20261201)
    ebc = EmbeddingBagCollection(tables=[
        EmbeddingBagConfig(name="t_user", embedding_dim=D, num_embeddings=USERS, feature_names=["user_id"]),
        EmbeddingBagConfig(name="t_item", embedding_dim=D, num_embeddings=ITEMS, feature_names=["item_id"]),
    ])
    model = TwoTower(ebc, LAYERS).eval()
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, os.path.join(OUT, "model.safetensors"))
    rng = np.random.default_rng(20261201)
    cases = []
    for name, B in (("b7", 7), ("b1", 1)):
        ql = rng.integers(0, 4, size=B)
        cl = rng.integers(0, 4, size=B)
        qv = rng.integers(0, USERS, size=int(ql.sum()))
        cv = rng.integers(0, ITEMS, size=int(cl.sum()))
        kjt = KeyedJaggedTensor(keys=["user_id", "item_id"], values=torch.tensor(np.concatenate([qv, cv])),
                                lengths=torch.tensor(np.concatenate([ql, cl])))
        with torch.no_grad():
            q, c = model(kjt)
            logits = (q * c).sum(dim=1)
        for key, arr in (("q_values", qv.astype(np.int64)), ("q_lengths", ql.astype(np.int64)),
                         ("c_values", cv.astype(np.int64)), ("c_lengths", cl.astype(np.int64)),
                         ("query", q.numpy()), ("candidate", c.numpy()), ("logits", logits.numpy())):
            np.save(os.path.join(OUT, f"{name}.{key}.npy"), arr)
        cases.append(f"CASE({name}, {B})")
    with open(os.path.join(OUT, "cases.inc"), "w") as f:
        f.write("/* SPDX-License-Identifier: BSD-3-Clause */\n/* written by tools/gen_rec_two_tower_goldens.py */\n")
        f.write("\n".join(cases) + "\n")


if __name__ == "__main__":
    main()
