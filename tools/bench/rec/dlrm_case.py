# SPDX-License-Identifier: BSD-3-Clause
"""The DLRM case of tools/bench/rec/run: rec.dlrm_train_step against
torchrec's DLRMTrain on the same model, batch and initial weights.

The model is the Criteo layout with small tables: 13 dense features, 26
tables of ROWS x 64 (one id per sample and feature, uniform), dense arch
512-256-64, over arch 512-256-1, B = 2048. Both sides train with SGD
(lr 0.01): torch.optim.SGD on the dense parameters, and on the tables
torchrec's FusedEmbeddingBagCollection (fbgemm's fused exact SGD, the
update torchrec's training loop fuses into the backward) on one side,
rec.fused_embedding_bag_collection on the other; the reference step is
zero_grad, DLRMTrain's forward, backward, the dense step. Both update their
weights every call, so repeated calls keep training the same model.

Rate: training steps/s, in wall seconds and in CPU seconds per step (on a
machine shared with other work the wall time mostly measures the others).
"""
import os
import tempfile

import numpy as np

N_DENSE, N_SPARSE, DIM, BATCH = 13, 26, 64, 2048
DENSE_LAYERS, OVER_LAYERS = [512, 256, DIM], [512, 256, 1]
LR = 0.01


def build(tmp, rows):
    """(the loom Case, the reference step) on one model and one batch."""
    import torch
    from safetensors.torch import save_file
    from torchrec.datasets.utils import Batch
    from torchrec.models.dlrm import DLRM, DLRMTrain
    from torchrec.modules.embedding_configs import EmbeddingBagConfig
    from torchrec.modules.fused_embedding_modules import FusedEmbeddingBagCollection
    from torchrec.sparse.jagged_tensor import KeyedJaggedTensor

    import sidebyside

    keys = [f"cat_{k}" for k in range(N_SPARSE)]
    tables = [EmbeddingBagConfig(name=f"t{k}", num_embeddings=rows, embedding_dim=DIM, feature_names=[keys[k]])
              for k in range(N_SPARSE)]
    torch.manual_seed(0)
    ebc = FusedEmbeddingBagCollection(tables=tables, optimizer_type=torch.optim.SGD, optimizer_kwargs={"lr": LR})
    model = DLRM(embedding_bag_collection=ebc, dense_in_features=N_DENSE, dense_arch_layer_sizes=DENSE_LAYERS,
                 over_arch_layer_sizes=OVER_LAYERS)
    path = os.path.join(tmp, "dlrm.safetensors")
    save_file({k: v.detach().contiguous() for k, v in model.state_dict().items()}, path)

    rng = np.random.default_rng(5)
    dense = np.log1p(rng.exponential(20.0, (BATCH, N_DENSE))).astype(np.float32)
    values = rng.integers(0, rows, N_SPARSE * BATCH).astype(np.int64)
    lengths = np.ones(N_SPARSE * BATCH, np.int32)
    labels = (rng.uniform(size=BATCH) < 0.25).astype(np.float32)
    batch = Batch(dense_features=torch.from_numpy(dense),
                  sparse_features=KeyedJaggedTensor.from_lengths_sync(keys=keys, values=torch.from_numpy(values),
                                                                      lengths=torch.from_numpy(lengths)),
                  labels=torch.from_numpy(labels))
    trainer = DLRMTrain(model)
    dense_opt = torch.optim.SGD([p for n, p in model.named_parameters() if not n.startswith("sparse_arch.")], lr=LR)

    def reference():
        dense_opt.zero_grad()
        loss, _ = trainer(batch)
        loss.backward()
        dense_opt.step()

    attrs = {"tables": ",".join(f"t{k}" for k in range(N_SPARSE)),
             "num_embeddings": ",".join([str(rows)] * N_SPARSE),
             "embedding_dim": ",".join([str(DIM)] * N_SPARSE),
             "feature_names": ",".join(keys),
             "dense_in_features": str(N_DENSE),
             "dense_arch_layer_sizes": ",".join(map(str, DENSE_LAYERS)),
             "over_arch_layer_sizes": ",".join(map(str, OVER_LAYERS)),
             "lr": str(LR), "keys": ",".join(keys)}
    name = f"dlrm train step 26x{rows}x{DIM} B={BATCH}"
    case = sidebyside.Case(name=name, op="rec.dlrm_train_step",
                           inputs={"dense": dense, "values": values, "lengths": lengths, "labels": labels},
                           attrs=attrs, weights=path, reference=reference, items=1, unit="steps/s", target=1.5,
                           repeat=10, warmup=2)
    return case, reference


def run_dlrm(tmp, rows, threads):
    """The DLRM rows, wall and CPU seconds per step; returns the wall row (the target's)."""
    import torch

    import sidebyside

    case, reference = build(tmp, rows)
    torch.set_num_threads(threads)
    os.environ["LOOM_NUM_THREADS"] = str(threads)
    rows_out = []
    for cpu in (False, True):
        work = tempfile.mkdtemp(prefix="loom-bench-dlrm-", dir=tmp)
        ours = (sidebyside.cpu_loom if cpu else sidebyside.time_loom)(case, work)["median_s"]
        ref = (sidebyside.cpu_reference if cpu else sidebyside.time_reference)(reference, case.repeat, case.warmup)
        ratio = ref / ours if ours > 0 else float("inf")
        label = case.name + (" (cpu s)" if cpu else " (wall)")
        print(f"{label:<44} {ours * 1e3:>8.2f}ms {ref * 1e3:>8.2f}ms {1 / ours:>10.3g} {1 / ref:>10.3g} "
              f"{case.unit:<8} {ratio:>6.2f}x {case.target:>6.1f}x  [{threads} threads]")
        rows_out.append({"case": label, "loom_s": ours, "ref_s": ref, "ratio": ratio, "target": case.target})
    return rows_out
