#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# check_headers.sh - abi/loom/loom.h and abi/loom/plugin.h compile cleanly as
# C11 and as C++11, C++17 and C++20, with -Wall -Wextra -Werror -pedantic.
#
# usage: check_headers.sh INCLUDE_DIR SOURCE LANG:COMPILER...
#   INCLUDE_DIR   the folder holding loom/loom.h and loom/plugin.h
#   SOURCE        the translation unit (abi_headers.c), compiled as is for C
#                 and with -x c++ for C++
#   LANG:COMPILER c:gcc, c:clang, c++:g++, c++:clang++ ... (a compiler may be
#                 several words: "c:ccache cc"); duplicates are tested once
#
# Every compiler is run once per standard of its language and per variant
# (LOOM_PLUGIN_DEFINE, and LOOM_PLUGIN_DEFINE_DEPS with -DABI_TEST_DEPS=1).
# In every object, loom_plugin_entry (and abi_test_c_linkage, declared with
# LOOM_EXTERN_C) must be defined with C linkage: unmangled. Any failure fails
# the test, naming the compiler, the flags and the diagnostics. Exit 77
# (skipped) when no C++ compiler was found at all.
set -uo pipefail

inc=$1 src=$2
shift 2
flags=(-Wall -Wextra -Werror -pedantic)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

declare -A seen=()
specs=()
have_cxx=0
for spec in "$@"; do
    [[ -n ${seen[$spec]:-} ]] && continue
    seen[$spec]=1
    specs+=("$spec")
    [[ $spec == c++:* ]] && have_cxx=1
done
if [[ $have_cxx -eq 0 ]]; then
    echo "SKIP: no C++ compiler found (g++ comes with build-essential); the headers are not checked as C++"
    exit 77
fi
have_nm=1
command -v nm >/dev/null 2>&1 || { have_nm=0; echo "note: nm not found, the C-linkage check is skipped"; }

failures=0 runs=0 n=0
for spec in "${specs[@]}"; do
    lang=${spec%%:*}
    read -r -a cmd <<<"${spec#*:}"
    case $lang in
        c)   stds=(c11);             xlang=() ;;
        c++) stds=(c++11 c++17 c++20); xlang=(-x c++) ;;
        *)   echo "FAIL: unknown language in '$spec'"; failures=$((failures + 1)); continue ;;
    esac
    version=$("${cmd[@]}" --version 2>/dev/null | head -n 1)
    for std in "${stds[@]}"; do
        for deps in 0 1; do
            n=$((n + 1)) runs=$((runs + 1))
            obj=$tmp/tu$n.o
            line=("${cmd[@]}" "${xlang[@]}" "-std=$std" "${flags[@]}" -DABI_TEST_DEPS=$deps -I"$inc" -c "$src" -o "$obj")
            if ! "${line[@]}" >"$tmp/log" 2>&1; then
                echo "FAIL: $lang $std (${version:-${cmd[*]}}), ABI_TEST_DEPS=$deps:"
                echo "  ${line[*]}"
                sed 's/^/  | /' "$tmp/log"
                failures=$((failures + 1))
                continue
            fi
            if [[ -s $tmp/log ]]; then   # -Werror makes this unlikely, but say so
                echo "note: $lang $std (${cmd[*]}) printed:"; sed 's/^/  | /' "$tmp/log"
            fi
            ok=1
            if [[ $have_nm -eq 1 ]]; then
                defined=$(nm --defined-only -g "$obj" | awk '{ print $NF }')
                for sym in loom_plugin_entry abi_test_c_linkage; do
                    if ! grep -qx "$sym" <<<"$defined"; then
                        echo "FAIL: $lang $std (${cmd[*]}): $sym is not defined with C linkage; global symbols:"
                        sed 's/^/  | /' <<<"$defined"
                        failures=$((failures + 1)) ok=0
                    fi
                done
            fi
            [[ $ok -eq 1 ]] && echo "ok   $lang $std ABI_TEST_DEPS=$deps  ${version:-${cmd[*]}}"
        done
    done
done
echo "$runs compilations, $failures failures"
[[ $failures -eq 0 ]]
