#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Goldens of rec.plan: torchrec's EmbeddingShardingPlanner on a set of
configs (table mixes, world sizes 2/4/8, tight and loose memory, constrained
sharding types, both partitioners, one that cannot fit).

Each case is tests/data/rec/planner/<name>.json:
  {"config": <the loom config, fed as is to rec.plan>,
   "torchrec": {"perf_rating": ms, "tables": [{"name", "sharding_type",
                "compute_kernel", "ranks", "shards": [{"rank", "offsets", "sizes",
                "perf": {...}, "storage": {"hbm", "ddr"}}]}]}
   or "torchrec": {"error": message} when torchrec finds no plan}
The planner runs on the meta device: nothing is allocated.

Run in the torchrec venv:  .venv-rec/bin/python tools/gen_rec_planner_goldens.py
"""
import json
import os
import sys

import torch
from torchrec import EmbeddingBagCollection, EmbeddingBagConfig
from torchrec.distributed.embeddingbag import EmbeddingBagCollectionSharder
from torchrec.distributed.planner import EmbeddingShardingPlanner, Topology
from torchrec.distributed.planner.partitioners import MemoryBalancedPartitioner
from torchrec.distributed.planner.types import ParameterConstraints, PlannerError
from torchrec.distributed.types import CacheParams
from torchrec.modules.embedding_configs import DataType, PoolingType

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "rec", "planner")
GB = 1024**3
# torchrec's bandwidths (constants.py) per second; the config speaks bytes/s
INTRA = 600 * GB
INTER = 12.5 * GB
# the kernels loom models (torchrec on cuda also enumerates fused_uvm and the KV kernels)
KERNELS = ["dense", "fused", "fused_uvm_caching"]
TYPES = ["data_parallel", "table_wise", "column_wise", "row_wise", "table_row_wise"]
CPU_TYPES = ["data_parallel", "table_wise", "column_wise"]


def table(name, rows, dim, pf=1.0, **kw):
    t = {"name": name, "num_embeddings": rows, "embedding_dim": dim, "feature_names": ["f_" + name],
         "pooling": "SUM", "data_type": "FP32", "pooling_factor": pf}
    t.update(kw)
    return t


def topo(ws, lws, device="cuda", hbm=None, ddr=128 * GB):
    t = {"world_size": ws, "local_world_size": lws, "compute_device": device, "ddr_cap": ddr,
         "intra_host_bw": INTRA, "inter_host_bw": INTER}
    if hbm is not None:
        t["hbm_cap"] = hbm
    return t


MIX_A = [table("t0", 100_000, 64, 2.0), table("t1", 50_000, 128, 1.0), table("t2", 1000, 16, 4.0),
         table("t3", 400_000, 32, 1.0)]
MIX_B = [table("user", 4_000_000, 128, 1.0), table("item", 1_000_000, 64, 4.0), table("cat", 1000, 32, 2.0),
         table("hist", 2_000_000, 256, 20.0), table("ads", 3_000_000, 64, 1.0)]
MIX_C = [table("e%d" % i, rows, dim, pf) for i, (rows, dim, pf) in enumerate(
    [(10_000_000, 128, 1.0), (500_000, 64, 8.0), (2_000, 32, 1.0), (6_000_000, 256, 2.0), (300_000, 16, 30.0),
     (1_500_000, 128, 4.0), (80_000, 64, 1.0), (7_000_000, 64, 1.0)])]


def restrict(tables, types=None, kernels=KERNELS):
    out = []
    for t in tables:
        t = dict(t)
        t.setdefault("sharding_types", list(types or TYPES))
        t.setdefault("compute_kernels", list(kernels))
        out.append(t)
    return out


CASES = {
    # loose memory: every table fits anywhere
    "ws2_loose": {"batch_size": 512, "topology": topo(2, 2), "tables": restrict(MIX_A)},
    # 1 GB of HBM for 4 x ~1.5 GB of tables: row-wise, caching
    "ws4_tight": {"batch_size": 512, "topology": topo(4, 2, hbm=1 * GB), "tables": restrict(MIX_B)},
    "ws4_loose": {"batch_size": 256, "topology": topo(4, 4, hbm=32 * GB), "tables": restrict(MIX_B)},
    # 8 tables: too many combinations for the grid search; greedy only
    "ws8_two_hosts": {"batch_size": 1024, "topology": topo(8, 4, hbm=4 * GB), "tables": restrict(MIX_C)},
    "ws8_tight": {"batch_size": 512, "topology": topo(8, 8, hbm=2 * GB), "tables": restrict(MIX_C)},
    # cpu: torchrec's cpu sharder offers data_parallel, table_wise, column_wise
    "cpu_ws2": {"batch_size": 512, "topology": topo(2, 2, device="cpu", ddr=8 * GB),
                "tables": restrict(MIX_A, CPU_TYPES, ["dense", "fused"])},
    "cpu_ws4_tight": {"batch_size": 512, "topology": topo(4, 4, device="cpu", ddr=3 * GB),
                      "tables": restrict(MIX_B, CPU_TYPES, ["dense", "fused"])},
    # constraints per table: one type each, a column-wise block, a cache load factor with prefetch
    "ws4_constrained": {"batch_size": 512, "topology": topo(4, 2, hbm=8 * GB), "tables": restrict([
        table("rw", 1_000_000, 128, 2.0, sharding_types=["row_wise"]),
        table("cw", 200_000, 256, 1.0, sharding_types=["column_wise"], min_partition=64),
        table("twrw", 3_000_000, 64, 3.0, sharding_types=["table_row_wise"]),
        table("tw", 10_000, 32, 1.0, sharding_types=["table_wise"]),
        table("cached", 5_000_000, 128, 1.0, sharding_types=["table_wise", "row_wise"],
              compute_kernels=["fused_uvm_caching"], cache_load_factor=0.3, prefetch_pipeline=True)])},
    # the memory-balanced partitioner
    "ws4_memory_balanced": {"batch_size": 512, "topology": topo(4, 4, hbm=16 * GB), "partitioner": "memory_balanced",
                            "tables": restrict(MIX_B)},
    # half-precision tables split by columns (blocks of min_partition 32)
    "ws2_fp16_cw": {"batch_size": 2048, "topology": topo(2, 2, hbm=2 * GB), "tables": restrict([
        table("a", 2_000_000, 128, 3.0, data_type="FP16", min_partition=32),
        table("b", 800_000, 96, 1.0, data_type="FP16", min_partition=32),
        table("c", 5_000, 64, 10.0, data_type="FP16")], ["table_wise", "column_wise"])},
    # one host of 8, small tables: data parallel pays
    "ws8_one_host": {"batch_size": 4096, "topology": topo(8, 8, hbm=16 * GB), "tables": restrict([
        table("s0", 500, 16, 1.0), table("s1", 2_000, 32, 2.0), table("m0", 200_000, 64, 1.0),
        table("l0", 8_000_000, 128, 1.0, min_partition=32)])},
    # cpu, small tables read many times: data parallel
    "cpu_ws2_small": {"batch_size": 8192, "topology": topo(2, 2, device="cpu", ddr=4 * GB), "tables": restrict([
        table("tiny", 200, 8, 50.0), table("small", 2_000, 16, 20.0), table("mid", 300_000, 64, 1.0)],
        CPU_TYPES, ["dense", "fused"])},
    # eight ranks on two hosts, memory balanced, caching allowed
    "ws8_memory_balanced": {"batch_size": 512, "topology": topo(8, 4, hbm=2 * GB), "partitioner": "memory_balanced",
                            "tables": restrict(MIX_C)},
    # nothing fits: 64 MB of HBM, no caching
    "ws2_no_fit": {"batch_size": 512, "topology": topo(2, 2, hbm=64 * 1024 * 1024),
                   "tables": restrict([table("big", 10_000_000, 128, 1.0), table("small", 1000, 16, 1.0)],
                                      kernels=["dense", "fused"])},
}


# configs whose golden also keeps torchrec's whole search space (every option's per-shard estimates)
SEARCH_SPACE_CASES = {"ws2_fp16_cw", "ws4_tight", "ws4_constrained", "ws8_two_hosts", "cpu_ws2", "cpu_ws2_small"}


def search_space(planner):
    """Every enumerated option: [fwd_compute, fwd_comms, bwd_compute, bwd_comms, prefetch_compute, total, hbm, ddr]
    per shard, as rec.plan's estimates print them with search_space=true."""
    out = []
    for so in planner._enumerator.last_stored_search_space:
        out.append({"name": so.name, "sharding_type": so.sharding_type, "compute_kernel": so.compute_kernel,
                    "shards": [[s.perf.fwd_compute, s.perf.fwd_comms, s.perf.bwd_compute, s.perf.bwd_comms,
                                s.perf.prefetch_compute, s.perf.total, s.storage.hbm, s.storage.ddr]
                               for s in so.shards]})
    return out


def torchrec_planner(cfg):
    """(planner, module, sharders) of torchrec for a loom config."""
    tp = cfg["topology"]
    tables, constraints = [], {}
    for t in cfg["tables"]:
        tables.append(EmbeddingBagConfig(name=t["name"], num_embeddings=t["num_embeddings"],
                                         embedding_dim=t["embedding_dim"], feature_names=t["feature_names"],
                                         pooling=PoolingType[t["pooling"]], data_type=DataType[t["data_type"]]))
        cache = None
        if "cache_load_factor" in t or t.get("prefetch_pipeline"):
            cache = CacheParams(load_factor=t.get("cache_load_factor"),
                                prefetch_pipeline=t.get("prefetch_pipeline", False))
        constraints[t["name"]] = ParameterConstraints(
            sharding_types=t.get("sharding_types"), compute_kernels=t.get("compute_kernels"),
            min_partition=t.get("min_partition"), pooling_factors=[t["pooling_factor"]], cache_params=cache)
    ebc = EmbeddingBagCollection(tables=tables, device=torch.device("meta"))
    topology = Topology(world_size=tp["world_size"], local_world_size=tp["local_world_size"],
                        compute_device=tp["compute_device"], hbm_cap=tp.get("hbm_cap"), ddr_cap=tp["ddr_cap"],
                        intra_host_bw=tp["intra_host_bw"] / 1000, inter_host_bw=tp["inter_host_bw"] / 1000)
    kw = {}
    if cfg.get("partitioner") == "memory_balanced":
        kw["partitioner"] = MemoryBalancedPartitioner()
    planner = EmbeddingShardingPlanner(topology=topology, batch_size=cfg["batch_size"], constraints=constraints,
                                       **kw)
    return planner, ebc, [EmbeddingBagCollectionSharder()]


def torchrec_plan(cfg, keep_search_space=False):
    tp = cfg["topology"]
    planner, ebc, sharders = torchrec_planner(cfg)
    try:
        planner.plan(ebc, sharders)
    except PlannerError as e:
        return {"error": str(e).splitlines()[0][:300]}
    best = planner._best_plan
    by_name = {so.name: so for so in best}
    perfs = [0.0] * tp["world_size"]
    for so in best:
        for s in so.shards:
            perfs[s.rank] += s.perf.total
    out = {"perf_rating": max(perfs), "proposals": planner._num_proposals, "tables": []}
    for t in cfg["tables"]:
        so = by_name[t["name"]]
        shards = []
        for s in so.shards:
            p = s.perf
            shards.append({"rank": s.rank, "offsets": list(s.offset), "sizes": list(s.size),
                           "perf": {"fwd_compute": p.fwd_compute, "fwd_comms": p.fwd_comms,
                                    "bwd_compute": p.bwd_compute, "bwd_comms": p.bwd_comms,
                                    "prefetch_compute": p.prefetch_compute, "total": p.total},
                           "storage": {"hbm": s.storage.hbm, "ddr": s.storage.ddr}})
        out["tables"].append({"name": so.name, "sharding_type": so.sharding_type,
                              "compute_kernel": so.compute_kernel, "ranks": [s.rank for s in so.shards],
                              "shards": shards})
    if keep_search_space:
        out["search_space"] = search_space(planner)
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    only = sys.argv[1:]
    for name, cfg in CASES.items():
        if only and name not in only:
            continue
        res = torchrec_plan(cfg, name in SEARCH_SPACE_CASES)
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            json.dump({"config": cfg, "torchrec": res}, f, indent=1)
            f.write("\n")
        kinds = res.get("error") or " ".join("%s:%s" % (t["sharding_type"], t["compute_kernel"]) for t in res["tables"])
        print(name, kinds)


if __name__ == "__main__":
    main()
