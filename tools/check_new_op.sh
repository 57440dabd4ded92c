#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# tools/check_new_op.sh - tools/new_op.py end to end, on a copy of the tree:
#   1. copy the tracked (and not ignored) files of this checkout to a
#      temporary directory; this tree is never touched
#   2. there, tools/new_op.py: demo.scale (a new pack), demo.shift --module
#      scale --no-cuda (an existing module of that pack, no cuda kernel) and
#      core.twice (a new module of an existing pack)
#   3. configure the copy, build the packs, tests and CLI those ops need
#      (with their cuda kernels when CUDA is found), and run the generated
#      tests, the core pack's empty-input test (whose coverage check sees
#      core.twice), the conformance harness on the new ops (their case
#      generators), the export check of the new packs and `loom info`
# Run by `tools/dev new-op-check`; takes 1-3 minutes (a configure and
# ~90 compilations), too long for `meson test`. Exit 0 when every step
# passed, 77 without python3, 1 otherwise. KEEP=1 keeps the copy.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JOBS=${LOOM_DEV_JOBS:-$(nproc 2>/dev/null || echo 2)}
read -r -a MESON_ARGS <<<"${LOOM_DEV_MESON_ARGS:-}"

command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3 to run tools/new_op.py"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/loom-new-op-XXXXXX")
if [[ ${KEEP:-0} == 1 ]]; then
    echo "the copy stays in $tmp"
else
    trap 'rm -rf "$tmp"' EXIT
fi
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { printf '== %s\n' "$*"; }

# 1. the copy
src=$tmp/src
mkdir -p "$src"
if git -C "$ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$ROOT" && git ls-files -z --cached --others --exclude-standard -- . ':(exclude).venv*' \
        | xargs -0 cp --parents -t "$src")
else
    (cd "$ROOT" && tar --exclude='./build*' --exclude='./.venv*' -cf - .) | tar -xf - -C "$src"
fi

# 2. the ops
step "tools/new_op.py demo.scale; demo.shift --module scale --no-cuda; core.twice"
python3 "$src/tools/new_op.py" demo.scale >"$tmp/new_op.log" 2>&1 || { cat "$tmp/new_op.log"; fail "demo.scale"; }
python3 "$src/tools/new_op.py" demo.shift --module scale --no-cuda >>"$tmp/new_op.log" 2>&1 \
    || { cat "$tmp/new_op.log"; fail "demo.shift"; }
python3 "$src/tools/new_op.py" core.twice >>"$tmp/new_op.log" 2>&1 || { cat "$tmp/new_op.log"; fail "core.twice"; }
if grep -q '^left to do:' "$tmp/new_op.log"; then
    cat "$tmp/new_op.log"
    fail "new_op.py left edits to do by hand in packs written with the toolkit"
fi
python3 "$src/tools/new_op.py" demo.scale >"$tmp/again.log" 2>&1 && fail "a second demo.scale was not refused"
grep -q 'exists already\|already defined' "$tmp/again.log" || { cat "$tmp/again.log"; fail "no reason for refusing"; }

# 3. build and test
step "meson setup"
build=$tmp/build
meson setup "$build" "$src" -Dtests=enabled "${MESON_ARGS[@]}" >"$tmp/setup.log" 2>&1 \
    || { tail -n 40 "$tmp/setup.log"; fail "meson setup of the copy"; }
targets=(plugins/core/core.so plugins/demo/demo.so tools/loom
         tests/demo/scale/test_demo_scale tests/demo/scale/test_demo_shift
         tests/coreops/twice/test_core_twice tests/coreops/test_coreops_empty tests/conformance/conformance)
cuda=0
if grep -q "^build plugins/demo/demo-cuda.so:" "$build/build.ninja"; then
    cuda=1
    targets+=(plugins/core/core-cuda.so plugins/demo/demo-cuda.so)
fi
step "ninja (${#targets[@]} targets, cuda kernels: $([[ $cuda == 1 ]] && echo yes || echo no))"
ninja -C "$build" -j "$JOBS" "${targets[@]}" >"$tmp/build.log" 2>&1 \
    || { grep -B2 -A12 'FAILED\|error' "$tmp/build.log" | head -n 80; fail "the generated code does not build"; }
if grep -E 'warning:' "$tmp/build.log" | grep -E 'demo/|twice' >/dev/null; then
    grep -E -A3 'warning:' "$tmp/build.log" | head -n 40
    fail "the generated code builds with warnings"
fi
step "meson test"
meson test -C "$build" --no-rebuild --print-errorlogs demo-scale demo-shift core-twice coreops-empty \
    >"$tmp/test.log" 2>&1 || { cat "$tmp/test.log"; fail "the generated tests"; }
grep -E '^ *[0-9]+/[0-9]+ ' "$tmp/test.log"
step "conformance of the new ops"
for ops in 'demo.*' core.twice; do
    LOOM_PLUGIN_PATH=$build/plugins/core:$build/plugins/demo "$build/tests/conformance/conformance" --op "$ops" \
        >"$tmp/conformance.log" 2>&1 || { cat "$tmp/conformance.log"; fail "conformance --op $ops"; }
    grep -E '^(not )?ok ' "$tmp/conformance.log"
done
packs=("$build/plugins/demo/demo.so")
[[ $cuda == 1 ]] && packs+=("$build/plugins/demo/demo-cuda.so")
sh "$src/tests/packs/check_exports.sh" "${packs[@]}" || fail "the new pack exports more than its entry"
LOOM_PLUGIN_PATH=$build/plugins/core:$build/plugins/demo LOOM_PLUGINS_SELECT='core*,demo*' \
    "$build/tools/loom" info demo.scale >"$tmp/info.log" 2>&1 || { cat "$tmp/info.log"; fail "loom info demo.scale"; }
grep -q 'cpu:elementwise' "$tmp/info.log" || { cat "$tmp/info.log"; fail "loom info shows no cpu kernel"; }
echo "new_op.py: ok"
