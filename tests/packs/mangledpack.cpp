/* SPDX-License-Identifier: BSD-3-Clause */
/*
** mangledpack.cpp - a C++ pack whose entry has C++ linkage (defined without
** LOOM_PLUGIN_DEFINE and without extern "C"), so the library exports
** _Z17loom_plugin_entrytt and no loom_plugin_entry: the loader must name
** the cause (test_loader.c, and tests/examples/run_examples.sh through
** `loom doctor`).
*/
#include <loom/plugin.h>

namespace {
loom_status init(const loom_host_api *, loom_registrar *) noexcept { return LOOM_OK; }
}

LOOM_PLUGIN_EXPORT const loom_plugin_desc *loom_plugin_entry(uint16_t core_major, uint16_t core_minor);
const loom_plugin_desc *loom_plugin_entry(uint16_t core_major, uint16_t core_minor)
{
    static const loom_plugin_desc desc = {
        LOOM_PLUGIN_MAGIC, LOOM_ABI_MAJOR, LOOM_ABI_MINOR, LOOM_TARGET_ABI_MINOR, 0,
        sizeof(loom_plugin_desc), "mangled", "1.0", "a C++ pack whose entry is mangled", init, nullptr,
        nullptr,
    };
    (void)core_minor;
    return core_major == LOOM_ABI_MAJOR ? &desc : nullptr;
}
