#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# check_debs.sh - the Debian packages of tools/package_deb.sh, as a user gets
# them: unpacked into a scratch root (dpkg -x, no root needed), then
#   1. each package holds what it should (the library in libloom0, headers,
#      .pc and CMake files in libloom-dev, the packs in loom-packs, the tool
#      and its man page and completion in loom), and says what it depends on
#   2. examples/host built with pkg-config against the unpacked libloom-dev
#      and run: libloom finds the packs next to itself, in loom-packs
#   3. the unpacked loom lists the packs' ops
#
# usage: check_debs.sh DEB_DIR SOURCE_DIR
set -euo pipefail
debs=$1 source=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
lib=usr/lib/$multiarch

for pkg in libloom0 libloom-dev loom-packs loom; do
    deb=$(ls "$debs"/"${pkg}"_*.deb 2>/dev/null | head -n 1)
    [[ -n $deb ]] || fail "no $pkg package in $debs"
    dpkg-deb --info "$deb" >"$tmp/$pkg.info" || fail "$deb is not a Debian package"
    dpkg-deb --contents "$deb" >"$tmp/$pkg.list"
    dpkg -x "$deb" "$root"
done
want() { grep -q "$2" "$tmp/$1.list" || fail "$1 has no $2"; }
want libloom0 "./$lib/libloom.so.0"
want libloom0 "./$lib/loom/loom-probe"
want libloom-dev "./usr/include/loom/loom.h"
want libloom-dev "./$lib/pkgconfig/loom.pc"
want libloom-dev "./$lib/cmake/loom/loomConfig.cmake"
want loom-packs "./$lib/loom/plugins/core/core.so\\|./$lib/loom/plugins/core.so"
want loom "./usr/bin/loom"
want loom "./usr/share/man/man1/loom.1"
want loom "./usr/share/bash-completion/completions/loom"
want loom "./usr/libexec/loom/demos/core_matmul"
want loom "./usr/share/doc/loom/api.md"
grep -q '^ Depends: .*libloom0' "$tmp/libloom-dev.info" || fail "libloom-dev does not depend on libloom0"
grep -q '^ Depends: .*libc6' "$tmp/libloom0.info" || fail "libloom0 has no shared-library Depends (dpkg-shlibdeps)"
if grep -q "libloom.so" "$tmp/libloom0.list" && grep -q "\./$lib/libloom.so " "$tmp/libloom0.list"; then
    fail "libloom0 ships the unversioned libloom.so (it belongs in libloom-dev)"
fi
echo "packages: ok ($(ls "$debs" | tr '\n' ' '))"

# 2. a host program against the unpacked tree
pc="pkg-config --define-variable=prefix=$root/usr"
export PKG_CONFIG_PATH=$root/$lib/pkgconfig
cp -r "$source/examples/host" "$tmp/host"
make -s -C "$tmp/host" PKG_CONFIG="$pc" >"$tmp/host.log" 2>&1 || { cat "$tmp/host.log" >&2; fail "examples/host did not build"; }
LD_LIBRARY_PATH=$root/$lib "$tmp/host/host" >"$tmp/host.out" || { cat "$tmp/host.out"; fail "examples/host failed"; }
echo "examples/host against the packages: ok"

# 3. the tool, with nothing set: RUNPATH finds libloom, libloom its packs
env -u LD_LIBRARY_PATH -u LOOM_PLUGIN_PATH "$root/usr/bin/loom" list >"$tmp/list.out" 2>&1 \
    || { cat "$tmp/list.out" >&2; fail "the packaged loom does not run"; }
grep -q 'vision.nms' "$tmp/list.out" || fail "the packaged loom lists no vision.nms (packs not found)"
env -u LD_LIBRARY_PATH -u LOOM_PLUGIN_PATH LOOM_DEMO_PATH="$root/usr/libexec/loom/demos" "$root/usr/bin/loom" demo --list \
    >"$tmp/demos.out" 2>&1 || { cat "$tmp/demos.out" >&2; fail "loom demo --list from the packages failed"; }
grep -q 'matmul' "$tmp/demos.out" || fail "the packaged demos are not listed: $(cat "$tmp/demos.out")"
echo "loom from the packages: ok ($(grep -c '^  [a-z]' "$tmp/list.out") lines, demos listed)"
