#!/usr/bin/env bash
# run_examples.sh - the out-of-tree examples against an installed copy of this
# build, the way a user builds them:
#   1. meson install into a temporary DESTDIR
#   2. build examples/oppack with `pkg-config --cflags loom-plugin` only and
#      check that example.so exports loom_plugin_entry and nothing else
#   3. run example.scale through the installed `loom` CLI on .npy files,
#      with the pack found through LOOM_PLUGIN_PATH, and check the numbers
#   4. build examples/host with `pkg-config --cflags --libs loom` and run it
#
# usage: run_examples.sh BUILD_DIR SOURCE_DIR PREFIX LIBDIR "CC..." B_SANITIZE
# Exit 77 (skipped) when pkg-config, make, nm or the compiler is missing.
set -euo pipefail

build=$1 source=$2 prefix=$3 libdir=$4 cc=$5 sanitize=${6:-none}

read -r -a cc_words <<<"$cc"        # "cc", or "ccache cc"
for tool in pkg-config make nm "${cc_words[0]:-cc}"; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "SKIP: '$tool' not found; the examples need pkg-config, make, nm and a C compiler"
        exit 77
    fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Sanitized builds install sanitized libraries: their users need the same
# runtime, so the examples are compiled with the same -fsanitize.
san_flags=
if [[ $sanitize != none && -n $sanitize ]]; then
    san_flags="-fsanitize=$sanitize"
fi

# 1. install
root=$tmp/root
DESTDIR=$root meson install -C "$build" --no-rebuild --quiet >"$tmp/install.log" 2>&1 \
    || { cat "$tmp/install.log" >&2; fail "meson install into $root failed"; }
[[ $libdir = /* ]] || libdir=$prefix/$libdir
inst_prefix=$root$prefix
inst_libdir=$root$libdir
# The .pc files say prefix=$prefix: point them at the staged copy instead.
pc="pkg-config --define-variable=prefix=$inst_prefix"
export PKG_CONFIG_PATH=$inst_libdir/pkgconfig
$pc --exists loom loom-plugin || fail "loom.pc / loom-plugin.pc not installed in $PKG_CONFIG_PATH"
plugindir=$($pc --variable=plugindir loom-plugin)
[[ -d $plugindir ]] || fail "plugindir $plugindir (from loom-plugin.pc) does not exist after install"
cli=$inst_prefix/bin/loom
[[ -x $cli ]] || fail "the loom CLI was not installed as $cli"
export LD_LIBRARY_PATH=$inst_libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# 2. the op pack, out of tree
cp -r "$source/examples/oppack" "$tmp/oppack"
make -s -C "$tmp/oppack" CC="$cc" PKG_CONFIG="$pc" CFLAGS="-O2 -g $san_flags" \
    LDFLAGS="$san_flags" >"$tmp/oppack.log" 2>&1 \
    || { cat "$tmp/oppack.log" >&2; fail "examples/oppack did not build"; }
exports=$(nm -D --defined-only "$tmp/oppack/example.so" | awk '{ print $NF }' | sort | tr '\n' ' ')
[[ $exports == "loom_plugin_entry " ]] || fail "example.so exports '$exports', want only loom_plugin_entry"

# 3. run it through the CLI. x = [1, 2, 3, 4] as a little-endian f32 .npy
# (format 1.0: magic, version, header length 118, header padded to 128 bytes).
header="{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }"
{
    printf '\x93NUMPY\x01\x00\x76\x00'
    printf '%-117s\n' "$header"
    printf '\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x80\x40'
} >"$tmp/x.npy"
[[ $(wc -c <"$tmp/x.npy") -eq 144 ]] || fail "test input x.npy has the wrong size"

# The last 16 bytes of a 4-element f32 .npy are its data, whatever the header.
values() { tail -c 16 "$1" | od -An -v -tf4 | tr -s ' \n' ' ' | sed 's/^ //; s/ $//'; }

mkdir "$tmp/packs"
cp "$tmp/oppack/example.so" "$tmp/packs/"
export LOOM_PLUGIN_PATH=$tmp/packs:$plugindir
"$cli" run example.scale --in input="$tmp/x.npy" --attr factor=3 --out output="$tmp/y.npy" \
    || fail "loom run example.scale --attr factor=3 failed"
[[ $(values "$tmp/y.npy") == "3 6 9 12" ]] || fail "example.scale factor=3 gave '$(values "$tmp/y.npy")', want '3 6 9 12'"
"$cli" run example.scale --in input="$tmp/x.npy" --out output="$tmp/y2.npy" \
    || fail "loom run example.scale (default factor) failed"
[[ $(values "$tmp/y2.npy") == "2 4 6 8" ]] || fail "example.scale default factor gave '$(values "$tmp/y2.npy")', want '2 4 6 8'"
echo "example.scale: ok ($(values "$tmp/y.npy"))"

# 4. the host program, against the installed libloom and core pack
export LOOM_PLUGIN_PATH=$plugindir
cp -r "$source/examples/host" "$tmp/host"
make -s -C "$tmp/host" CC="$cc" PKG_CONFIG="$pc" CFLAGS="-O2 -g $san_flags" \
    LDFLAGS="$san_flags" >"$tmp/host.log" 2>&1 \
    || { cat "$tmp/host.log" >&2; fail "examples/host did not build"; }
"$tmp/host/host" || fail "examples/host failed"
echo "examples: ok"
