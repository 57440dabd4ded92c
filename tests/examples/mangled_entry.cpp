/*
** mangled_entry.cpp - the mistake a C++ pack makes without LOOM_PLUGIN_DEFINE:
** loom_plugin_entry defined with C++ linkage, so the file exports
** _Z17loom_plugin_entrytt and no loom_plugin_entry. run_examples.sh builds it
** and looks at what the loader says about it.
*/
#include <loom/plugin.h>

namespace {
loom_status init(const loom_host_api *, loom_registrar *) noexcept { return LOOM_OK; }
}

// No extern "C": this is the bug.
LOOM_PLUGIN_EXPORT const loom_plugin_desc *loom_plugin_entry(uint16_t core_major, uint16_t core_minor);
const loom_plugin_desc *loom_plugin_entry(uint16_t core_major, uint16_t core_minor)
{
    static const loom_plugin_desc desc = {
        LOOM_PLUGIN_MAGIC, LOOM_ABI_MAJOR, LOOM_ABI_MINOR, LOOM_TARGET_ABI_MINOR, 0,
        sizeof(loom_plugin_desc), "mangled", "1.0.0", "a C++ pack whose entry is mangled", init, nullptr,
        nullptr,
    };
    (void)core_minor;
    return core_major == LOOM_ABI_MAJOR ? &desc : nullptr;
}
