#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# run_examples.sh - the out-of-tree examples against an installed copy of this
# build, the way a user builds them:
#   1. meson install into a temporary DESTDIR
#   2. build examples/oppack with `pkg-config --cflags loom-plugin` only and
#      check that example.so exports loom_plugin_entry and nothing else
#   3. run example.scale through the installed `loom` CLI on .npy files,
#      with the pack found through LOOM_PLUGIN_PATH, and check the numbers;
#      examples/ctc-lm built the same way, its LM used by audio.ctc_decoder
#   4. build examples/host with `pkg-config --cflags --libs loom` and run it
#      (and examples/rl, the rl pack's step loop, when rl.so is installed);
#      the demo programs (examples/demos) installed in <libexecdir>/loom/demos
#      and run by the installed `loom demo`
#   5. the README's host snippet, compiled as C11 and as C++17, and run
# With a C++ compiler (CXX, the 7th argument), the C++ examples as well:
#   6. examples/oppack-cpp like examples/oppack: only loom_plugin_entry
#      exported, unmangled; examplecpp.topk_indices run through the CLI; its
#      throw_test attribute makes the kernel throw, and the call must fail
#      cleanly with the exception's message (the CLI) and status
#      (throw_check.cpp: LOOM_ENOMEM for std::bad_alloc, else LOOM_EINTERNAL)
#   7. examples/host-cpp: vision.nms from C++17, the kept indices checked
#   8. a C++ pack whose entry is mangled (tests/packs/mangledpack.cpp, no extern "C")
#      must be refused by the loader; `loom doctor` shows the reason
#
# usage: run_examples.sh BUILD_DIR SOURCE_DIR PREFIX LIBDIR "CC..." B_SANITIZE ["CXX..."] [LIBEXECDIR]
# Exit 77 (skipped) when pkg-config, make, nm or the C compiler is missing;
# without a C++ compiler steps 5 (its C++ half) to 8 are skipped, saying so.
set -euo pipefail

build=$1 source=$2 prefix=$3 libdir=$4 cc=$5 sanitize=${6:-none} cxx=${7:-} libexecdir=${8:-libexec}

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

# 1b. the installed tree behaves like a Debian library: the CLI runs with no
# LD_LIBRARY_PATH (RUNPATH $ORIGIN/../<libdir>), loom.pc asks a host for
# -lloom only (no Requires.private, no -I of libloom's own dependencies),
# and libloom's symbols carry the LOOM_1.0 version node.
env -u LD_LIBRARY_PATH LOOM_PLUGIN_PATH="$plugindir" "$cli" list >"$tmp/list.out" 2>&1 \
    || { cat "$tmp/list.out" >&2; fail "the installed loom does not run without LD_LIBRARY_PATH (RUNPATH)"; }
grep -q 'core.matmul' "$tmp/list.out" || fail "the installed loom lists no core.matmul"
if grep -qE '^Requires.private:|cjson|hwloc' "$inst_libdir/pkgconfig/loom.pc"; then
    fail "loom.pc names libloom's private dependencies: $(grep -E 'Requires|Cflags|Libs' "$inst_libdir/pkgconfig/loom.pc" | tr '\n' ' ')"
fi
libs=$($pc --libs loom); libs=${libs% }
[[ $libs == "-L$inst_libdir -lloom" ]] || fail "pkg-config --libs loom gives '$($pc --libs loom)'"
if command -v objdump >/dev/null 2>&1; then
    # (into a file first: grep -q closing the pipe early fails it under pipefail)
    objdump -T "$inst_libdir/libloom.so.0" >"$tmp/symbols.txt"
    grep -qE 'LOOM_1\.0 +loom_init$' "$tmp/symbols.txt" \
        || fail "libloom.so.0 exports loom_init without the LOOM_1.0 version node"
fi
echo "install: ok (RUNPATH, loom.pc, LOOM_1.0 symbols)"
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

# 3b. examples/ctc-lm, a third-party LM pack built out of tree the same way,
# offering the interface example.ctc_lm (<loom/ctc_lm.h>, installed), used
# by the installed audio pack's CTC decoder through the CLI
cp -r "$source/examples/ctc-lm" "$tmp/ctc-lm"
make -s -C "$tmp/ctc-lm" CC="$cc" PKG_CONFIG="$pc" CFLAGS="-O2 -g $san_flags" \
    LDFLAGS="$san_flags" >"$tmp/ctc-lm.log" 2>&1 \
    || { cat "$tmp/ctc-lm.log" >&2; fail "examples/ctc-lm did not build"; }
exports=$(nm -D --defined-only "$tmp/ctc-lm/ctclm.so" | awk '{ print $NF }' | sort | tr '\n' ' ')
[[ $exports == "loom_plugin_entry " ]] || fail "ctclm.so exports '$exports', want only loom_plugin_entry"
if [[ -e $plugindir/audio.so ]]; then
    cp "$tmp/ctc-lm/ctclm.so" "$tmp/packs/"
    ctc=$source/tests/data/audio/ctc
    "$cli" run audio.ctc_decoder --in emissions="$ctc/emissions.npy" --attr tokens="$ctc/tokens.txt" \
        --attr lexicon="$ctc/lexicon.txt" --attr lm=example.ctc_lm --out score="$tmp/ctc_score.npy" \
        >"$tmp/ctc.out" 2>&1 || { cat "$tmp/ctc.out" >&2; fail "audio.ctc_decoder lm=example.ctc_lm failed"; }
    echo "examples/ctc-lm: ok (audio.ctc_decoder lm=example.ctc_lm)"
else
    echo "SKIP (ctc-lm run): no audio pack installed; examples/ctc-lm was built only"
fi

# 4. the host program, against the installed libloom and core pack
export LOOM_PLUGIN_PATH=$plugindir
cp -r "$source/examples/host" "$tmp/host"
make -s -C "$tmp/host" CC="$cc" PKG_CONFIG="$pc" CFLAGS="-O2 -g $san_flags" \
    LDFLAGS="$san_flags" >"$tmp/host.log" 2>&1 \
    || { cat "$tmp/host.log" >&2; fail "examples/host did not build"; }
"$tmp/host/host" || fail "examples/host failed"
if [[ -f $plugindir/rl.so ]]; then      # the rl pack's Gym-like step loop
    cp -r "$source/examples/rl" "$tmp/rl"
    make -s -C "$tmp/rl" CC="$cc" PKG_CONFIG="$pc" CFLAGS="-O2 -g $san_flags" \
        LDFLAGS="$san_flags" >"$tmp/rl.log" 2>&1 \
        || { cat "$tmp/rl.log" >&2; fail "examples/rl did not build"; }
    "$tmp/rl/rl_loop" >"$tmp/rl.out" || { cat "$tmp/rl.out" >&2; fail "examples/rl failed"; }
    grep -q 'CartPole-v1: [1-9][0-9]* episodes' "$tmp/rl.out" || fail "examples/rl printed '$(cat "$tmp/rl.out")'"
    echo "examples/rl: ok ($(head -1 "$tmp/rl.out"))"
fi
# The staged demo directory is not where the installed CLI was configured to
# look (that is $prefix/...): LOOM_DEMO_PATH names it, as a user would.
[[ $libexecdir = /* ]] || libexecdir=$prefix/$libexecdir
demodir=$root$libexecdir/loom/demos
[[ -x $demodir/core_add ]] || fail "the demo programs were not installed in $demodir"
LOOM_DEMO_PATH=$demodir "$cli" demo add >"$tmp/demo.out" 2>&1 \
    || { cat "$tmp/demo.out" >&2; fail "the installed \`loom demo add\` failed"; }
grep -q 'add (broadcast)' "$tmp/demo.out" \
    || { cat "$tmp/demo.out" >&2; fail "the installed \`loom demo add\` did not run the installed demo"; }
echo "loom demo: ok (installed demos)"

# 4b. the same host program with CMake's find_package(loom) (loom::loom),
# found through CMAKE_PREFIX_PATH alone
# A compiler behind a launcher ("ccache cc", as meson reports it when ccache
# is installed) is the last word; the words before it are CMake's launcher.
if command -v cmake >/dev/null 2>&1; then
    cmake_cc=${cc_words[${#cc_words[@]}-1]}
    cmake_launcher=$(IFS=';'; echo "${cc_words[*]:0:${#cc_words[@]}-1}")
    cmake -S "$source/examples/host" -B "$tmp/host-cmake" -DCMAKE_PREFIX_PATH="$inst_prefix" \
        -DCMAKE_C_COMPILER="$cmake_cc" ${cmake_launcher:+-DCMAKE_C_COMPILER_LAUNCHER="$cmake_launcher"} \
        -DCMAKE_C_FLAGS="-O2 -g $san_flags" \
        -DCMAKE_EXE_LINKER_FLAGS="$san_flags" >"$tmp/cmake.log" 2>&1 \
        && cmake --build "$tmp/host-cmake" >>"$tmp/cmake.log" 2>&1 \
        || { cat "$tmp/cmake.log" >&2; fail "examples/host did not build with CMake's find_package(loom)"; }
    env -u LD_LIBRARY_PATH "$tmp/host-cmake/host" || fail "examples/host (CMake build) failed"
    echo "examples/host with find_package(loom): ok"
else
    echo "SKIP (CMake part): cmake not found; find_package(loom) was not checked"
fi

# 5. the README's host program ("## A host program"), as C and as C++
awk '/^## A host program/ { on = 1; next } on && /^```c$/ { code = 1; next }
     code && /^```$/ { exit } code { print }' "$source/README.md" >"$tmp/readme_host.c"
[[ -s $tmp/readme_host.c ]] || fail "no \`\`\`c block under '## A host program' in README.md"
# shellcheck disable=SC2046  # pkg-config output is meant to be split
$cc -std=c11 -Wall -Wextra -Wpedantic -Werror $san_flags $($pc --cflags loom) -o "$tmp/readme_host" \
    "$tmp/readme_host.c" $($pc --libs loom) >"$tmp/readme.log" 2>&1 \
    || { cat "$tmp/readme.log" >&2; fail "README.md's host program does not compile as C11"; }
"$tmp/readme_host" >/dev/null || fail "README.md's host program (C) failed"

read -r -a cxx_words <<<"$cxx"
if [[ ${#cxx_words[@]} -eq 0 ]] || ! command -v "${cxx_words[0]}" >/dev/null 2>&1; then
    echo "SKIP (C++ parts): no C++ compiler: README host as C++, examples/oppack-cpp, examples/host-cpp and the mangled-entry pack were not checked"
    echo "examples: ok"
    exit 0
fi
# shellcheck disable=SC2046
$cxx -x c++ -std=c++17 -Wall -Wextra -Wpedantic -Werror $san_flags $($pc --cflags loom) -o "$tmp/readme_host_cpp" \
    "$tmp/readme_host.c" $($pc --libs loom) >"$tmp/readme.log" 2>&1 \
    || { cat "$tmp/readme.log" >&2; fail "README.md's host program does not compile as C++17"; }
"$tmp/readme_host_cpp" >/dev/null || fail "README.md's host program (C++) failed"
echo "README host program: ok (C11 and C++17)"

# 6. the C++ op pack, out of tree
cp -r "$source/examples/oppack-cpp" "$tmp/oppack-cpp"
make -s -C "$tmp/oppack-cpp" CXX="$cxx" PKG_CONFIG="$pc" CXXFLAGS="-O2 -g $san_flags" \
    LDFLAGS="$san_flags" >"$tmp/oppack-cpp.log" 2>&1 \
    || { cat "$tmp/oppack-cpp.log" >&2; fail "examples/oppack-cpp did not build"; }
pack=$tmp/oppack-cpp/examplecpp.so
exports=$(nm -D --defined-only "$pack" | awk '{ print $NF }' | sort | tr '\n' ' ')
[[ $exports == "loom_plugin_entry " ]] \
    || fail "examplecpp.so exports '$exports', want only loom_plugin_entry (unmangled: C linkage)"
if nm -D --undefined-only "$pack" | grep -q ' loom_'; then
    fail "examplecpp.so needs symbols from libloom: $(nm -D --undefined-only "$pack" | grep ' loom_' | tr '\n' ' ')"
fi

# t = [2, 7, 7, 1, 9] as a little-endian f32 .npy (as x.npy above, shape (5,)).
header="{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }"
{
    printf '\x93NUMPY\x01\x00\x76\x00'
    printf '%-117s\n' "$header"
    printf '\x00\x00\x00\x40\x00\x00\xe0\x40\x00\x00\xe0\x40\x00\x00\x80\x3f\x00\x00\x10\x41'
} >"$tmp/t.npy"
[[ $(wc -c <"$tmp/t.npy") -eq 148 ]] || fail "test input t.npy has the wrong size"
# The i64 values of a .npy written by the CLI (format 1.0, 128-byte header).
ivalues() { tail -c +129 "$1" | od -An -v -td8 | tr -s ' \n' ' ' | sed 's/^ //; s/ $//'; }

mkdir "$tmp/packs-cpp"
cp "$pack" "$tmp/packs-cpp/"
export LOOM_PLUGIN_PATH=$tmp/packs-cpp:$plugindir
"$cli" run examplecpp.topk_indices --in input="$tmp/t.npy" --out output="$tmp/k.npy" >/dev/null \
    || fail "loom run examplecpp.topk_indices failed"
[[ $(ivalues "$tmp/k.npy") == "4 1 2" ]] \
    || fail "examplecpp.topk_indices (k=3) gave '$(ivalues "$tmp/k.npy")', want '4 1 2'"
"$cli" run examplecpp.topk_indices --in input="$tmp/t.npy" --attr k=10 --out output="$tmp/k10.npy" >/dev/null \
    || fail "loom run examplecpp.topk_indices --attr k=10 failed"
[[ $(ivalues "$tmp/k10.npy") == "4 1 2 0 3" ]] \
    || fail "examplecpp.topk_indices k=10 gave '$(ivalues "$tmp/k10.npy")', want '4 1 2 0 3'"
# An exception thrown in the kernel: a clean failure (exit status 1, not a
# signal), no output file, the exception's message on stderr.
for t in "1:out of memory (std::bad_alloc)" "2:C++ exception: throw_test=2 asked for it" "3:unknown C++ exception"; do
    mode=${t%%:*} want=${t#*:}
    rc=0
    "$cli" run examplecpp.topk_indices --in input="$tmp/t.npy" --attr throw_test="$mode" \
        --out output="$tmp/e$mode.npy" >"$tmp/e.out" 2>"$tmp/e.err" || rc=$?
    [[ $rc -eq 1 ]] || { cat "$tmp/e.err" >&2; fail "throw_test=$mode: loom run exited $rc, want 1 (a clean failure)"; }
    grep -qF "examplecpp.topk_indices" "$tmp/e.err" && grep -qF "$want" "$tmp/e.err" \
        || { cat "$tmp/e.err" >&2; fail "throw_test=$mode: stderr does not name the op and say '$want'"; }
    [[ ! -e $tmp/e$mode.npy ]] || fail "throw_test=$mode wrote an output file"
done
# shellcheck disable=SC2046
$cxx -std=c++17 -Wall -Wextra -Wpedantic -Werror $san_flags $($pc --cflags loom) -o "$tmp/throw_check" \
    "$source/tests/examples/throw_check.cpp" $($pc --libs loom) >"$tmp/throw_check.log" 2>&1 \
    || { cat "$tmp/throw_check.log" >&2; fail "tests/examples/throw_check.cpp did not build"; }
"$tmp/throw_check" || fail "examplecpp.topk_indices does not turn its exceptions into status codes"
echo "examplecpp.topk_indices: ok ($(ivalues "$tmp/k.npy"); exceptions become LOOM_ENOMEM / LOOM_EINTERNAL)"

# 7. the C++ host program, against the installed libloom and vision pack
export LOOM_PLUGIN_PATH=$plugindir
cp -r "$source/examples/host-cpp" "$tmp/host-cpp"
make -s -C "$tmp/host-cpp" CXX="$cxx" PKG_CONFIG="$pc" CXXFLAGS="-O2 -g $san_flags" \
    LDFLAGS="$san_flags" >"$tmp/host-cpp.log" 2>&1 \
    || { cat "$tmp/host-cpp.log" >&2; fail "examples/host-cpp did not build"; }
"$tmp/host-cpp/host-cpp" >"$tmp/host-cpp.out" || { cat "$tmp/host-cpp.out"; fail "examples/host-cpp failed"; }
grep -q '^vision.nms kept 3 0 2 ' "$tmp/host-cpp.out" \
    || fail "examples/host-cpp printed '$(cat "$tmp/host-cpp.out")', want 'vision.nms kept 3 0 2 (...)'"
cat "$tmp/host-cpp.out"

# 8. a C++ pack without extern "C": its entry is _Z17loom_plugin_entrytt
mkdir "$tmp/cxxentry"
# shellcheck disable=SC2046
$cxx -std=c++17 -Wall -Wextra -Wpedantic -Werror -fPIC -fvisibility=hidden -shared -Wl,-z,defs \
    $san_flags $($pc --cflags loom-plugin) -o "$tmp/cxxentry/cxxentry.so" \
    "$source/tests/packs/mangledpack.cpp" >"$tmp/cxxentry.log" 2>&1 \
    || { cat "$tmp/cxxentry.log" >&2; fail "tests/packs/mangledpack.cpp did not build"; }
nm -D --defined-only "$tmp/cxxentry/cxxentry.so" | grep -q ' _Z17loom_plugin_entrytt$' \
    || fail "mangledpack.cpp does not export the mangled entry it is meant to"
LOOM_PLUGIN_PATH=$tmp/cxxentry "$cli" doctor >"$tmp/doctor.out" 2>&1 || fail "loom doctor failed"
# "files seen:" lists "  refused   PATH" and the reason on the next line.
reason=$(awk -v p="$tmp/cxxentry/cxxentry.so" '$2 == p { state = $1; getline; sub(/^ +/, ""); print state ": " $0 }' \
    "$tmp/doctor.out")
[[ $reason == refused:* ]] || { cat "$tmp/doctor.out" >&2; fail "a pack with a mangled entry was not refused: '$reason'"; }
echo "mangled entry: $reason"
# the loader names the cause and the cure
[[ $reason == *C++-mangled* && $reason == *LOOM_PLUGIN_DEFINE* ]] \
    || fail "the loader does not say the entry is mangled: '$reason'"
echo "examples: ok"
