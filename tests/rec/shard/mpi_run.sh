#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# mpi_run.sh NP EXPECT PATTERN LIMIT_S PROGRAM ARGS...: runs PROGRAM on NP
# ranks of this machine under mpirun (oversubscribed: the ranks may
# outnumber the cores; as root with OpenMPI's consent variables) and checks
# the outcome:
#   EXPECT pass: mpirun exits 0 and every rank printed PATTERN;
#   EXPECT fail: mpirun exits non-zero, and the output has PATTERN (an
#                extended regular expression);
# both within LIMIT_S seconds (a hang is killed at LIMIT_S + 30 and fails).
# Exit 77 (skipped) without mpirun, or when every rank printed ": skipped: "
# (a check whose hardware is missing, such as the GPUs of --device cuda).
set -u
np=$1 expect=$2 pattern=$3 limit=$4
shift 4
command -v mpirun >/dev/null 2>&1 || { echo "mpirun not found: skipped"; exit 77; }
# shared memory between the ranks of one machine, no network probing; the
# single-copy (CMA) mechanism needs ptrace rights that containers lack
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# gcc 12's LeakSanitizer can crash in its own tracer at a rank's exit while
# OpenMPI's helper threads are alive ("Tracer caught signal 11"), a fault of
# the tool and not of the test: such a run is run once more, saying so.
for attempt in 1 2; do
    start=$(date +%s)
    timeout -k 5 $((limit + 30)) mpirun --oversubscribe -np "$np" "$@" >"$out" 2>&1
    rc=$?
    elapsed=$(( $(date +%s) - start ))
    cat "$out"
    grep -q "Tracer caught signal" "$out" && [ "$attempt" -eq 1 ] || break
    echo "mpi_run: LeakSanitizer's tracer crashed at exit; running once more"
done
echo "mpi_run: mpirun -np $np exited $rc after ${elapsed} s (limit ${limit} s)"
if [ "$elapsed" -gt "$limit" ]; then
    echo "mpi_run: FAIL: took longer than ${limit} s"
    exit 1
fi
if [ "$rc" -eq 0 ] && [ "$(grep -c ': skipped: ' "$out")" -eq "$np" ]; then
    echo "mpi_run: skipped"
    exit 77
fi
case $expect in
pass)
    [ "$rc" -eq 0 ] || { echo "mpi_run: FAIL: expected success"; exit 1; }
    n=$(grep -c -E "$pattern" "$out")
    [ "$n" -eq "$np" ] || { echo "mpi_run: FAIL: $n of $np ranks printed /$pattern/"; exit 1; }
    ;;
fail)
    [ "$rc" -ne 0 ] || { echo "mpi_run: FAIL: expected a failure"; exit 1; }
    grep -q -E "$pattern" "$out" || { echo "mpi_run: FAIL: no /$pattern/ in the output"; exit 1; }
    ;;
esac
echo "mpi_run: ok"
