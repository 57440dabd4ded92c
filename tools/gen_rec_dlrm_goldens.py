#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the golden data of rec.dlrm to tests/data/rec/dlrm/.

    .venv-rec/bin/python tools/gen_rec_dlrm_goldens.py [OUTDIR]

The model: torchrec.models.dlrm.DLRM on the Criteo layout, 13 dense and 26
sparse features (cat_0..cat_25, one table t<k> each, NUM_EMBEDDINGS[k] rows
of D = 4), dense_arch_layer_sizes 16,4 and over_arch_layer_sizes 16,8,1,
random weights (torch.manual_seed). Its sparse arch is torchrec's
FusedEmbeddingBagCollection (the same state_dict keys and forward as the
EmbeddingBagCollection, with fbgemm's fused optimizer, which rec.dlrm runs
through rec.fused_embedding_bag_collection).

The data: tests/data/rec/criteo/day_0.tsv (tools/gen_rec_criteo.py, 200
rows) parsed by torchrec.datasets.criteo.BinaryCriteoUtils.tsv_to_npys
(dense log(x - min + 2), an empty category read as id 0), the ids taken mod
NUM_EMBEDDINGS as InMemoryBinaryCriteoIterDataPipe hashes them: what
rec.criteo_reader gives with dense_transform=shift_min, missing=zero,
hashes=NUM_EMBEDDINGS. Ten batches of B = 20 rows in file order.

Training: torchrec.models.dlrm.DLRMTrain (BCEWithLogitsLoss, mean) for 10
steps, one per batch:
  sgd      torch.optim.SGD(lr=LR) on the dense parameters, the fused
           EXACT_SGD (torch.optim.SGD, lr=LR) on the tables
  adagrad  torch.optim.Adagrad(lr=ADAGRAD_LR, eps=EPS) on the dense
           parameters, torchrec.optim.RowWiseAdagrad(lr=ADAGRAD_LR, eps=EPS)
           on the tables. Adagrad's first steps are lr * g / |g|: where a
           gradient is a sum that nearly cancels (a row many samples hit,
           an interaction column of small products), its few ulps of
           summation order become a change of the step's size, so its lr
           is a tenth of SGD's, to keep those within the test's tolerance.
Files:
  model.safetensors          DLRM's state_dict before training
  forward.logits.npy         f32 [20, 1] DLRM(dense, kjt) of batch 0
  <case>.losses.npy          f32 [10] the loss of each step (before its update)
  <case>.safetensors         DLRM's state_dict after the 10 steps
  config.txt                 the attributes of the test, one name=value a line
"""
import os
import sys

import numpy as np
import torch
from safetensors.numpy import save_file
from torchrec.datasets.criteo import BinaryCriteoUtils
from torchrec.datasets.utils import Batch
from torchrec.models.dlrm import DLRM, DLRMTrain
from torchrec.modules.embedding_configs import EmbeddingBagConfig
from torchrec.modules.fused_embedding_modules import FusedEmbeddingBagCollection
from torchrec.optim import RowWiseAdagrad
from torchrec.sparse.jagged_tensor import KeyedJaggedTensor

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "tests", "data", "rec", "dlrm")
TSV = os.path.join(HERE, "..", "tests", "data", "rec", "criteo", "day_0.tsv")
N_SPARSE, D, B, STEPS = 26, 4, 20, 10
NUM_EMBEDDINGS = [int(n) for n in np.random.default_rng(19).integers(20, 60, size=N_SPARSE)]
DENSE_LAYERS, OVER_LAYERS = [16, D], [16, 8, 1]
LR, ADAGRAD_LR, EPS = 0.1, 0.01, 1e-8
KEYS = [f"cat_{k}" for k in range(N_SPARSE)]


def batches():
    tmp = os.path.join(OUT, "tmp")
    BinaryCriteoUtils.tsv_to_npys(TSV, tmp + "_dense.npy", tmp + "_sparse.npy", tmp + "_labels.npy",
                                  dataset_name="criteo_1tb")  # "test" in the path would fake the labels
    dense, sparse, labels = (np.load(tmp + s) for s in ("_dense.npy", "_sparse.npy", "_labels.npy"))
    for s in ("_dense.npy", "_sparse.npy", "_labels.npy"):
        os.remove(tmp + s)
    sparse = sparse % np.array(NUM_EMBEDDINGS).reshape(1, N_SPARSE)
    out = []
    for s in range(STEPS):
        rows = slice(s * B, (s + 1) * B)
        values = torch.from_numpy(np.ascontiguousarray(sparse[rows].T).reshape(-1).astype(np.int64))
        kjt = KeyedJaggedTensor.from_lengths_sync(keys=KEYS, values=values,
                                                  lengths=torch.ones(N_SPARSE * B, dtype=torch.int32))
        out.append(Batch(dense_features=torch.from_numpy(dense[rows].astype(np.float32)), sparse_features=kjt,
                         labels=torch.from_numpy(labels[rows].reshape(-1).astype(np.float32))))
    return out


def model(optimizer_type, optimizer_kwargs):
    tables = [EmbeddingBagConfig(name=f"t{k}", num_embeddings=NUM_EMBEDDINGS[k], embedding_dim=D,
                                 feature_names=[KEYS[k]]) for k in range(N_SPARSE)]
    torch.manual_seed(0)
    ebc = FusedEmbeddingBagCollection(tables=tables, optimizer_type=optimizer_type,
                                      optimizer_kwargs=optimizer_kwargs)
    return DLRM(embedding_bag_collection=ebc, dense_in_features=13, dense_arch_layer_sizes=DENSE_LAYERS,
                over_arch_layer_sizes=OVER_LAYERS)


def state(m):
    return {k: v.detach().contiguous().numpy() for k, v in m.state_dict().items()}


def train(name, m, dense_opt, data):
    trainer = DLRMTrain(m)
    losses = []
    for batch in data:
        dense_opt.zero_grad()
        loss, _ = trainer(batch)
        loss.backward()        # the tables take their fused step here
        dense_opt.step()
        losses.append(loss.item())
    np.save(os.path.join(OUT, f"{name}.losses.npy"), np.array(losses, dtype=np.float32))
    save_file(state(m), os.path.join(OUT, f"{name}.safetensors"))


def dense_params(m):
    return [p for n, p in m.named_parameters() if not n.startswith("sparse_arch.")]


def main():
    os.makedirs(OUT, exist_ok=True)
    data = batches()
    m = model(torch.optim.SGD, {"lr": LR})
    save_file(state(m), os.path.join(OUT, "model.safetensors"))
    with torch.no_grad():
        logits = m(data[0].dense_features, data[0].sparse_features)
    np.save(os.path.join(OUT, "forward.logits.npy"), logits.numpy().astype(np.float32))
    train("sgd", m, torch.optim.SGD(dense_params(m), lr=LR), data)
    m = model(RowWiseAdagrad, {"lr": ADAGRAD_LR, "eps": EPS})
    train("adagrad", m, torch.optim.Adagrad(dense_params(m), lr=ADAGRAD_LR, eps=EPS), data)
    with open(os.path.join(OUT, "config.txt"), "w") as f:
        f.write(f"num_embeddings={','.join(str(n) for n in NUM_EMBEDDINGS)}\n")
        f.write(f"batch_size={B}\nsteps={STEPS}\nlr={LR}\nadagrad_lr={ADAGRAD_LR}\neps={EPS}\n")


if __name__ == "__main__":
    main()
