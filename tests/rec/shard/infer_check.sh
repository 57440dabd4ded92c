#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# infer_check.sh MPI_RUN SHARDED_INFER WEIGHTS CONFIG NP CASE: the inference
# host examples/rec/sharded_infer against the unsharded model.
#   1. mpirun -np 1, no plan (the unsharded rec.dlrm): 100 generated requests
#      answered in batches of 24, the requests saved, the predictions the
#      reference;
#   2. mpirun -np NP with a plan for CASE over the generator's DLRM
#      (tests/data/rec/dlrm: 26 tables of D 4; num_embeddings from CONFIG):
#      the saved requests read back, broadcast, answered by the sharded
#      model, compared with the reference: bit for bit for `mixed`
#      (table-wise, column-wise and data-parallel tables: each pooled row is
#      the unsharded lookup's bits), within 1e-6 for `rw` (row-wise bags are
#      per-shard partial sums added across shards, another order of the same
#      additions; measured below 1e-7 on these logits).
set -eu
mpi_run=$1 infer=$2 weights=$3 config=$4 np=$5 case=$6
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ne=$(sed -n 's/^num_embeddings=//p' "$config")
tables="" feats="" dims=""
t=0
for e in $(echo "$ne" | tr ',' ' '); do
    sep=""; [ $t -gt 0 ] && sep=","
    tables="$tables${sep}t$t" feats="$feats${sep}cat_$t" dims="$dims${sep}4"
    t=$((t + 1))
done
attrs="--attr tables=$tables --attr num_embeddings=$ne --attr embedding_dim=$dims --attr feature_names=$feats
       --attr dense_arch_layer_sizes=16,4 --attr over_arch_layer_sizes=16,8,1"
# the plan: per table t, by CASE
plan="{\"format\":\"loom.rec.plan/1\",\"world_size\":$np,\"tables\":["
t=0
for e in $(echo "$ne" | tr ',' ' '); do
    [ $t -gt 0 ] && plan="$plan,"
    head="{\"name\":\"t$t\",\"num_embeddings\":$e,\"embedding_dim\":4,"
    kind=$((t % 3))
    [ "$case" = rw ] && kind=3
    case $kind in
    0) r=$((t % np))
       plan="$plan$head\"sharding_type\":\"table_wise\",\"compute_kernel\":\"fused\",\"ranks\":[$r],\"shards\":[{\"rank\":$r,\"offsets\":[0,0],\"sizes\":[$e,4]}]}" ;;
    1) r0=$((t % np)) r1=$(((t + 1) % np))
       plan="$plan$head\"sharding_type\":\"column_wise\",\"compute_kernel\":\"fused\",\"ranks\":[$r0,$r1],\"shards\":[{\"rank\":$r0,\"offsets\":[0,0],\"sizes\":[$e,2]},{\"rank\":$r1,\"offsets\":[0,2],\"sizes\":[$e,2]}]}" ;;
    2) ranks=$(seq -s, 0 $((np - 1)))
       plan="$plan$head\"sharding_type\":\"data_parallel\",\"compute_kernel\":\"dense\",\"ranks\":[$ranks],\"shards\":[]}" ;;
    3) block=$(((e + np - 1) / np)) ranks=$(seq -s, 0 $((np - 1))) shards=""
       for q in $(seq 0 $((np - 1))); do
           r0=$((block * q)); [ $r0 -gt $e ] && r0=$e
           r1=$((block * (q + 1))); [ $r1 -gt $e ] && r1=$e
           sep=""; [ $q -gt 0 ] && sep=","
           shards="$shards$sep{\"rank\":$q,\"offsets\":[$r0,0],\"sizes\":[$((r1 - r0)),4]}"
       done
       plan="$plan$head\"sharding_type\":\"row_wise\",\"compute_kernel\":\"fused\",\"ranks\":[$ranks],\"shards\":[$shards]}" ;;
    esac
    t=$((t + 1))
done
plan="$plan]}"
echo "$plan" > "$dir/plan.json"
tol=0
[ "$case" = rw ] && tol=1e-6
# shellcheck disable=SC2086
"$mpi_run" 1 pass "answered 100 requests" 60 "$infer" --weights "$weights" $attrs --generate 100 --seed 7 \
    --save-requests "$dir/requests.safetensors" --batch 24 --out "$dir/reference.npy"
# shellcheck disable=SC2086
"$mpi_run" "$np" pass "answered 100 requests" 60 "$infer" --weights "$weights" $attrs --plan "$dir/plan.json" \
    --requests "$dir/requests.safetensors" --batch 24 --out "$dir/sharded.npy" \
    --compare "$dir/reference.npy" --tolerance "$tol" > "$dir/out.txt" 2>&1 || { cat "$dir/out.txt"; exit 1; }
cat "$dir/out.txt"
grep -q "the 100 predictions equal" "$dir/out.txt" || { echo "infer_check: FAIL: no comparison"; exit 1; }
echo "infer_check: ok"
