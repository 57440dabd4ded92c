#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# package_deb.sh - the Debian packages of one staged install:
#   libloom0     libloom.so.0 (soname 0 = plugin ABI major 1) and loom-probe
#   libloom-dev  headers, libloom.so, loom.pc, loom-plugin.pc, the CMake config
#   loom-packs   the operator packs (<libdir>/loom/plugins)
#   loom         the loom command, its demos, bash completion, man pages and docs
# built with dpkg-deb from the files `meson install` put under STAGE (a
# build configured with --prefix=/usr), Depends from dpkg-shlibdeps.
#
# usage: package_deb.sh STAGE OUTDIR VERSION SOURCE_DIR
set -euo pipefail

stage=$(cd "$1" && pwd) out=$2 version=$3 source=$4
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
lib=usr/lib/$multiarch
[[ -e $stage/$lib/libloom.so.0 ]] || { echo "package_deb.sh: no $lib/libloom.so.0 under $stage" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# move PATHS... (relative to the stage) into package root $1
take() {
    local pkg=$1
    shift
    for p in "$@"; do
        [[ -e $stage/$p || -L $stage/$p ]] || continue
        mkdir -p "$work/$pkg/$(dirname "$p")"
        cp -a "$stage/$p" "$work/$pkg/$p"
    done
}
take libloom0 $(cd "$stage" && ls -d "$lib"/libloom.so.0*) "$lib/loom/loom-probe"
take libloom-dev usr/include/loom "$lib/libloom.so" "$lib/pkgconfig" "$lib/cmake"
take loom-packs "$lib/loom/plugins"
take loom usr/bin/loom usr/libexec/loom usr/share/man usr/share/bash-completion usr/share/doc/loom

# Depends of each package's ELF files, as dpkg-shlibdeps computes them
# (rec.so links Debian's libfaiss-dev statically, so its run-time needs are
# the shared libraries FAISS uses: libgomp1, libblas3, liblapack3, libstdc++6,
# all found here)
# (it wants a debian/control; a minimal one in a scratch dir serves)
mkdir -p "$work/shlibs/debian"
printf 'Source: loom\n\nPackage: loom\nArchitecture: any\n' >"$work/shlibs/debian/control"
depends() {
    local pkg=$1 f files=()
    while IFS= read -r -d '' f; do
        # analysed where meson installed it, so its $ORIGIN RUNPATH resolves
        [[ $(head -c 4 "$f" | od -An -tx1 | tr -d ' \n') == 7f454c46 ]] && files+=("$stage/${f#"$work/$pkg/"}")
    done < <(find "$work/$pkg" -type f -print0)
    [[ ${#files[@]} -gt 0 ]] || return 0
    # libloom.so.0 is this build's own (no shlibs file yet): it is named by
    # hand in control(), and dpkg-shlibdeps is told to skip it
    (cd "$work/shlibs" && dpkg-shlibdeps -O --ignore-missing-info -xlibloom0 -l"$stage/$lib" \
        "${files[@]}" 2>>"$work/shlibs.log") | sed -n 's/^shlibs:Depends=//p' || {
        cat "$work/shlibs.log" >&2
        return 1
    }
}

control() {
    local pkg=$1 desc=$2 extra=$3 deps
    deps=$(depends "$pkg")
    [[ -n $extra ]] && deps=${deps:+$deps, }$extra
    mkdir -p "$work/$pkg/DEBIAN"
    {
        echo "Package: $pkg"
        echo "Version: $version"
        echo "Architecture: $arch"
        echo "Maintainer: the loom authors <loom@localhost>"
        echo "Section: libs"
        echo "Priority: optional"
        [[ -n $deps ]] && echo "Depends: $deps"
        echo "Description: $desc"
        echo " loom: a C11 kernel framework whose dispatcher core loads operator packs"
        echo " at run time and routes each call to the best kernel for its device."
    } >"$work/$pkg/DEBIAN/control"
    # shared libraries run ldconfig (Debian policy 8.1.1, through a trigger)
    [[ $pkg == libloom0 ]] && echo "activate-noawait ldconfig" >"$work/$pkg/DEBIAN/triggers"
    mkdir -p "$work/$pkg/usr/share/doc/$pkg"
    cp "$source/LICENSE" "$work/$pkg/usr/share/doc/$pkg/copyright"
    dpkg-deb --root-owner-group --build "$work/$pkg" "$out/${pkg}_${version}_$arch.deb" >/dev/null
}
control libloom0 "loom dispatcher core (shared library)" ""
control libloom-dev "loom headers, pkg-config and CMake files" "libloom0 (= $version)"
control loom-packs "loom operator packs: core, vision, fbgemm, audio, text, rl, rec (their libraries: Depends from dpkg-shlibdeps)" "libloom0 (>= $version)"
control loom "loom command-line tool" "libloom0 (>= $version), loom-packs (= $version)"
ls "$out"
