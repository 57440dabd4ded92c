#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# check_exports.sh PACK.so... - every pack exports exactly one symbol,
# loom_plugin_entry, and links nothing from libloom (packs reach the core
# only through the host table). Exit 77 (skip) without nm.
command -v nm >/dev/null 2>&1 || { echo "nm not found: skipped"; exit 77; }
status=0
for pack in "$@"; do
    exported=$(nm -D --defined-only "$pack" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sort -u)
    if [ "$exported" != "loom_plugin_entry" ]; then
        echo "FAIL $pack exports: $(echo $exported | tr '\n' ' ')"
        status=1
    fi
    if nm -D --undefined-only "$pack" | grep -q ' loom_'; then
        echo "FAIL $pack needs symbols from libloom: $(nm -D --undefined-only "$pack" | grep ' loom_' | tr '\n' ' ')"
        status=1
    fi
    if ldd "$pack" 2>/dev/null | grep -q 'libloom'; then
        echo "FAIL $pack links libloom"
        status=1
    fi
    [ $status -eq 0 ] && echo "ok   $pack exports only loom_plugin_entry"
done
exit $status
