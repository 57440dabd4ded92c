#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# readme_install.sh - README.md's "## Install" block, run as written: the
# first ```sh block under that heading, in the source tree, with HOME set to
# a scratch folder so its PREFIX=$HOME/... lands there. Every command must
# succeed; the host program and `loom list` must show the packs.
#
# usage: readme_install.sh SOURCE_DIR
set -euo pipefail
source=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$source/build-install" "$source/host"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

awk '/^## Install/ { on = 1; next } on && /^```sh$/ { code = 1; next }
     code && /^```$/ { exit } code { print }' "$source/README.md" >"$tmp/install.sh"
[[ -s $tmp/install.sh ]] || fail "no \`\`\`sh block under '## Install' in README.md"
[[ ! -e $source/build-install ]] || fail "$source/build-install exists: the README block would reuse it"
echo "running README.md's Install block:"
sed 's/^/  | /' "$tmp/install.sh"
(cd "$source" && env -u LD_LIBRARY_PATH -u LOOM_PLUGIN_PATH -u PKG_CONFIG_PATH HOME="$tmp/home" \
    bash -euo pipefail "$tmp/install.sh") >"$tmp/out.log" 2>&1 || { tail -n 40 "$tmp/out.log" >&2; fail "the README Install block failed"; }
grep -q 'core.matmul' "$tmp/out.log" || fail "the README Install block's loom list shows no core.matmul"
grep -q 'vision.nms' "$tmp/out.log" || fail "the README Install block's loom list shows no vision.nms"
[[ -x $tmp/home/.local/loom/bin/loom ]] || fail "nothing was installed into \$HOME/.local/loom"
echo "README Install block: ok (installed to \$HOME/.local/loom, host built and run, loom list shows the packs)"
