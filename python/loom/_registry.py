# SPDX-License-Identifier: BSD-3-Clause
"""loom.ops: one namespace per domain, made on first use from the schemas of
the packs loaded then, so a third-party pack's ops appear under its domain."""
import ctypes
import threading
import types

from . import _config, _lib, _schema
from ._ops import make_function

_lock = threading.Lock()
_domains = None             # domain -> module of op functions
_functions = {}             # "domain.op" -> function


class Domain(types.ModuleType):
    """The ops of one domain; a mistyped name gets loom's closest match."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        names = [n for n in vars(self) if not n.startswith("_")]
        hint = _suggest(name, names)
        more = f"; did you mean '{hint}'?" if hint else ""
        raise AttributeError(f"{self.__name__} has no op '{name}'{more}")


def _suggest(word, names):
    arr = (ctypes.c_char_p * max(len(names), 1))(*(n.encode() for n in names))
    return _lib.text(_lib.lib.loom_suggest(word.encode(), arr, len(names)))


def _build():
    global _domains
    with _lock:
        if _domains is not None:
            return _domains
        _config.ensure_init()
        domains = {}
        for schema in _schema.all_ops():
            mod_name = f"loom.ops.{schema.domain}"
            mod = domains.get(schema.domain)
            if mod is None:
                mod = domains[schema.domain] = Domain(
                    mod_name, f"loom ops of the domain {schema.domain}, generated from the registry's schemas.")
            fn = make_function(schema, mod_name)
            setattr(mod, fn.__name__, fn)
            _functions[schema.name] = fn
        _domains = domains
        return domains


def domains():
    return _domains if _domains is not None else _build()


def function(name):
    """The function of op "domain.op" (KeyError if none)."""
    domains()
    return _functions[name]
