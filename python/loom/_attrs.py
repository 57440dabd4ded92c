# SPDX-License-Identifier: BSD-3-Clause
"""Python values to a loom_attrs bag, checked against the declared types.

A value of the wrong Python type is refused here with a TypeError naming the
op and the attribute; value checks (ranges, choices) are the core's, whose
messages name them too. None, or the default the signature shows, leaves an
attribute to the core's default.
"""
import math
import operator
from ctypes import byref, c_double, c_int64, c_void_p

from . import _lib
from ._errors import error_for
from ._schema import (ATTR_BOOL, ATTR_FLOAT, ATTR_FLOATS, ATTR_INT, ATTR_INTS, ATTR_STRING,
                      ATTR_TENSOR, py_name)

lib = _lib.lib


def _int(v, what):
    if isinstance(v, bool):
        raise TypeError(f"{what} must be an int, not bool")
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"{what} must be an int, not {type(v).__name__}") from None


def _float(v, what):
    if isinstance(v, (bool, str)):
        raise TypeError(f"{what} must be a float, not {type(v).__name__}")
    try:
        return float(v)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be a float, not {type(v).__name__}") from None


def _seq(v, one, what, kind):
    if isinstance(v, (str, bytes)):
        raise TypeError(f"{what} must be a sequence of {kind}s, not {type(v).__name__}")
    try:
        items = list(v)
    except TypeError:
        return [one(v, what)]       # a single number stands for a list of one ([S] for S x S)
    return [one(x, f"{what}[{i}]") for i, x in enumerate(items)]


def _set(bag, a, v, what, keep):
    name = a.name.encode()
    t = a.type
    if t == ATTR_INT:
        return lib.loom_attrs_set_int(bag, name, _int(v, what))
    if t == ATTR_FLOAT:
        return lib.loom_attrs_set_float(bag, name, _float(v, what))
    if t == ATTR_BOOL:
        if not isinstance(v, bool) and type(v).__name__ != "bool_":
            raise TypeError(f"{what} must be a bool, not {type(v).__name__}")
        return lib.loom_attrs_set_bool(bag, name, 1 if v else 0)
    if t == ATTR_STRING:
        if not isinstance(v, str):
            raise TypeError(f"{what} must be a str, not {type(v).__name__}")
        return lib.loom_attrs_set_string(bag, name, v.encode())
    if t == ATTR_INTS:
        xs = _seq(v, _int, what, "int")
        return lib.loom_attrs_set_ints(bag, name, (c_int64 * max(len(xs), 1))(*xs), len(xs))
    if t == ATTR_FLOATS:
        xs = _seq(v, _float, what, "float")
        return lib.loom_attrs_set_floats(bag, name, (c_double * max(len(xs), 1))(*xs), len(xs))
    if t == ATTR_TENSOR:
        from ._dlpack import import_tensor
        from ._tensor import Tensor
        if type(v) is Tensor:
            keep.append(v)
            return lib.loom_attrs_set_tensor(bag, name, v._ptr)
        ptr, obj = import_tensor(v, what)
        keep.append(Tensor(ptr, obj))       # freed with the bag's user, after the call
        return lib.loom_attrs_set_tensor(bag, name, ptr)
    raise TypeError(f"{what}: attribute type {t} is unknown to this package")


def build(owner, defs, values, defaults, keep):
    """A new loom_attrs (address) holding values[i] for defs[i], skipping None and
    the signature's own default objects. keep receives what must outlive the
    call (tensors). owner names the op or class in errors."""
    bag = c_void_p()
    st = lib.loom_attrs_new(byref(bag))
    if st != 0:
        raise error_for(st)
    bag = bag.value
    try:
        for a, v, d in zip(defs, values, defaults):
            if v is None or v is d:
                continue
            st = _set(bag, a, v, f"{owner}: attribute '{py_name(a.name)}'", keep)
            if st != 0:
                raise error_for(st, owner)
    except BaseException:
        lib.loom_attrs_free(bag)
        raise
    return bag


def free(bag):
    lib.loom_attrs_free(bag)


def _exact(v):
    """v, or for a float (-0.0 equals 0.0 but is another value) v with its sign."""
    return (v, math.copysign(1.0, v)) if type(v) is float else v


def cache_key(values):
    """A hashable key of attribute values (lists become tuples), or None when a
    value cannot be one (a tensor is never cached: the bag borrows it). Keys
    of equal values are equal, and only then: -0.0 and 0.0 differ."""
    try:
        hash(values)
        key = values
    except TypeError:
        try:
            key = tuple(tuple(v) if isinstance(v, list) else v for v in values)
            hash(key)
        except TypeError:
            return None
    if 0.0 in key or any(type(v) is tuple and 0.0 in v for v in key):
        key = tuple(tuple(_exact(x) for x in v) if type(v) is tuple else _exact(v) for v in key)
    return key


