# SPDX-License-Identifier: BSD-3-Clause
"""Every loom op, as loom.ops.<domain>.<op>(...), generated at first use from
the schemas of the loaded packs (loom.init runs first, with defaults, if it
has not yet). ops.pyi, generated from the same schemas by
python/tools/gen_ops_stub.py, lets IDEs complete the names and arguments."""
from . import _registry


def __getattr__(domain):
    mods = _registry.domains()
    try:
        return mods[domain]
    except KeyError:
        names = sorted(mods)
        hint = _registry._suggest(domain, names)
        more = f"; did you mean '{hint}'?" if hint else f" (domains: {', '.join(names)})"
        raise AttributeError(f"loom.ops has no domain '{domain}'{more}") from None


def __dir__():
    return sorted(_registry.domains())
