# SPDX-License-Identifier: BSD-3-Clause
"""One rank of torchrec's DistributedModelParallel on CPU (gloo) for tools/bench/rec_dist/run:
the plan and the step of rec_dist.c (tables 0, 2, ... table-wise on rank t % W, 1, 3, ... row-wise;
pooling factor 2; forward, then backward of a gradient of ones with fused EXACT_SGD, lr 0.01).
Prints "cpu_s_per_step <rank> <s>" (time.process_time of this process) and "wall_s_per_step <rank> <s>"
(time.perf_counter over the timed steps, which start after a barrier)."""
import sys
import time

import torch
import torch.distributed as dist
import torchrec
from fbgemm_gpu.split_embedding_configs import EmbOptimType
from torchrec.distributed.embeddingbag import EmbeddingBagCollectionSharder
from torchrec.distributed.model_parallel import DistributedModelParallel
from torchrec.distributed.sharding_plan import construct_module_sharding_plan, row_wise, table_wise
from torchrec.distributed.types import ShardingEnv, ShardingPlan


def main():
    T, E, D, B, steps = (int(x) for x in sys.argv[1:6])
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    tables = [torchrec.EmbeddingBagConfig(name=f"t{t}", embedding_dim=D, num_embeddings=E, feature_names=[f"f{t}"])
              for t in range(T)]
    ebc = torchrec.EmbeddingBagCollection(tables=tables, device=torch.device("meta"))
    sharder = EmbeddingBagCollectionSharder(fused_params={"optimizer": EmbOptimType.EXACT_SGD, "learning_rate": 0.01})
    per_param = {f"t{t}": table_wise(rank=t % world) if t % 2 == 0 else row_wise() for t in range(T)}
    plan = ShardingPlan({"": construct_module_sharding_plan(ebc, per_param_sharding=per_param, local_size=world,
                                                            world_size=world, device_type="cpu", sharder=sharder)})
    model = DistributedModelParallel(ebc, device=torch.device("cpu"), plan=plan, sharders=[sharder],
                                     env=ShardingEnv.from_process_group(dist.group.WORLD))
    lengths = torch.full((T * B,), 2, dtype=torch.int64)
    values = torch.randint(0, E, (T * B * 2,), dtype=torch.int64)
    kjt = torchrec.KeyedJaggedTensor(keys=[f"f{t}" for t in range(T)], values=values, lengths=lengths)
    grad = torch.ones(B, T * D)
    t0 = w0 = 0.0
    for s in range(steps + 2):
        if s == 2:
            dist.barrier()
            t0 = time.process_time()
            w0 = time.perf_counter()
        y = model(kjt)
        y = y.wait() if hasattr(y, "wait") else y
        y.values().backward(grad)
    print("cpu_s_per_step %d %.6f" % (rank, (time.process_time() - t0) / steps), flush=True)
    print("wall_s_per_step %d %.6f" % (rank, (time.perf_counter() - w0) / steps), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
