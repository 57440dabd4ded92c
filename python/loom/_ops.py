# SPDX-License-Identifier: BSD-3-Clause
"""Op functions, generated from the registry's schemas.

For each op, a Python function with the schema's signature: inputs
positional or keyword in schema order (optional ones default to None),
attributes keyword-only with the schema's defaults, and `object=` for the
methods of an object class. Its docstring is the schema's docs. The hot
path (invoke) does as little as it can: the op handle is looked up once,
the ctypes array types are made once, an attribute bag is built once per
distinct set of values and reused (bags are only read by calls, so threads
share them), and outputs become the caller's kind of tensor directly.
"""
import sys
import threading
from ctypes import c_void_p

from . import _attrs, _lib
from ._dlpack import drop_owned, import_tensor, owned_capsule
from ._errors import error_for
from ._schema import ATTR_TENSOR, NO_DEFAULT, describe, py_name
from ._tensor import HostView, Tensor

lib = _lib.lib
_run = lib.loom_op_run
_free = lib.loom_tensor_free
ATTR_CACHE_MAX = 64          # distinct attribute sets kept per op


class OpState:
    """What every call of one op reuses."""

    def __init__(self, schema):
        self.schema = schema
        self.name = schema.name
        self.handle = lib.loom_op_find(schema.name.encode())
        if not self.handle:
            raise error_for(-4)
        self.n_in = len(schema.inputs)
        self.n_out = len(schema.outputs)
        self.inputs_type = c_void_p * max(self.n_in, 1)
        self.outputs_type = c_void_p * max(self.n_out, 1)
        self.input_what = [f"{self.name}: input '{py_name(a.name)}'" for a in schema.inputs]
        self.required = [not a.optional for a in schema.inputs]
        self.defaults = [a.default if a.default is not NO_DEFAULT else None for a in schema.attrs]
        self.cacheable = all(a.type != ATTR_TENSOR for a in schema.attrs)
        self.method_of = schema.object_class
        self.cache = {}
        self.lock = threading.Lock()

    def attrs_for(self, values, keep):
        """(a loom_attrs address for values, whether the caller frees it)."""
        if not values:
            return None, False
        if self.cacheable:
            key = _attrs.cache_key(values)
            if key is not None:
                bag = self.cache.get(key)
                if bag is not None:
                    return bag, False
                bag = _attrs.build(self.name, self.schema.attrs, values, self.defaults, keep)
                with self.lock:
                    if len(self.cache) < ATTR_CACHE_MAX and key not in self.cache:
                        self.cache[key] = bag
                        return bag, False
                return bag, True
        return _attrs.build(self.name, self.schema.attrs, values, self.defaults, keep), True


# ------------------------------------------------------------ output kinds

def _as_loom(ptr):
    return Tensor(ptr)


def _as_numpy(ptr):
    import numpy
    return numpy.asarray(HostView(Tensor(ptr)))


def _as_torch(ptr):
    import torch
    capsule, m = owned_capsule(ptr)
    try:
        return torch.from_dlpack(capsule)
    except BaseException:
        drop_owned(m)
        raise


def _from_dlpack_of(module):
    def convert(ptr):
        return module.from_dlpack(Tensor(ptr))
    return convert


_kinds = {Tensor: _as_loom}


def _kind_of(tp):
    """How to hand results back to a caller whose first input is of type tp."""
    kind = _kinds.get(tp)
    if kind is None:
        np = sys.modules.get("numpy")
        torch = sys.modules.get("torch")
        top = sys.modules.get(tp.__module__.split(".", 1)[0])
        if np is not None and issubclass(tp, np.ndarray):
            kind = _as_numpy
        elif torch is not None and issubclass(tp, torch.Tensor):
            kind = _as_torch
        elif top is not None and callable(getattr(top, "from_dlpack", None)):
            kind = _from_dlpack_of(top)       # CuPy and the like: their own from_dlpack
        else:
            kind = _as_loom
        _kinds[tp] = kind
    return kind


# ------------------------------------------------------------------ invoke

def invoke(state, inputs, values, obj):
    """One call: inputs and attribute values in schema order."""
    options = None
    if state.method_of is not None:
        options_for = getattr(obj, "_options_for", None)
        if options_for is None:
            raise TypeError(f"{state.name} is a method of {state.method_of}: call it on a "
                            f"loom.Object('{state.method_of}', ...) or pass object=, not "
                            f"{type(obj).__name__}")
        options = options_for(state.name)       # ValueError when the object is closed
    n_in = state.n_in
    ins = state.inputs_type()
    owned = []
    keep = []
    kind = None
    try:
        for i in range(n_in):
            x = inputs[i]
            if x is None:
                if state.required[i]:
                    raise TypeError(f"{state.input_what[i]} is required")
                continue
            tp = type(x)
            if tp is Tensor:
                if not x._ptr:
                    raise ValueError(f"{state.input_what[i]}: the tensor was freed")
                ins[i] = x._ptr
            else:
                ptr, k = import_tensor(x, state.input_what[i])
                owned.append(ptr)
                if k is not None:
                    keep.append(k)
                ins[i] = ptr
            if kind is None:
                kind = _kinds.get(tp) or _kind_of(tp)
    except BaseException:
        for p in owned:         # the inputs imported before the bad one
            _free(p)
        raise
    try:
        bag, free_bag = state.attrs_for(values, keep)
    except BaseException:
        for p in owned:
            _free(p)
        raise
    n_out = state.n_out
    outs = state.outputs_type()
    st = _run(state.handle, ins, n_in, bag, outs, n_out, options)
    err = error_for(st) if st != 0 else None    # this thread's message, before anything else runs
    for p in owned:
        _free(p)
    if free_bag:
        _attrs.free(bag)
    if err is not None:
        raise err
    if kind is None:
        kind = _as_loom
    if n_out == 1:
        return kind(outs[0])
    if n_out == 0:
        return None
    results = []
    try:
        for i in range(n_out):
            results.append(kind(outs[i]))
            outs[i] = None
    finally:
        for i in range(len(results), n_out):
            if outs[i]:
                _free(outs[i])
    return tuple(results)


# ----------------------------------------------------------- generation

def _is_tensor(v):
    """Whether a value for a name that is both an input and an attribute is
    the tensor form (anything with __dlpack__) rather than the attribute's."""
    return hasattr(v, "__dlpack__")


def _tensor_part(v):
    return v if _is_tensor(v) else None


def _attr_part(v, default):
    return default if v is None or _is_tensor(v) else v


def make_function(schema, module_name):
    """The Python function of one op. A name that is both an input and an
    attribute (audio's reference_channel: an int, or a tensor of weights)
    is one parameter, in the input's place: a tensor goes to the input,
    anything else to the attribute, as torchaudio takes either."""
    state = OpState(schema)
    params, in_exprs = [], []
    input_names = {py_name(a.name) for a in schema.inputs}
    seen_optional = False
    for a in schema.inputs:
        n = py_name(a.name)
        seen_optional = seen_optional or a.optional
        params.append(f"{n}=None" if seen_optional else n)   # required after optional: checked by invoke
    defaults = {"_tensor_part": _tensor_part, "_attr_part": _attr_part}
    shared = set()
    kw = []
    attr_exprs = []
    for i, a in enumerate(schema.attrs):
        n = py_name(a.name)
        dflt = f"_d{i}"
        defaults[dflt] = None if a.required else state.defaults[i]
        if n in input_names:
            shared.add(n)
            attr_exprs.append(f"_attr_part({n}, {dflt})")
            continue
        attr_exprs.append(n)
        kw.append(n if a.required else f"{n}={dflt}")
    for a in schema.inputs:
        n = py_name(a.name)
        in_exprs.append(f"_tensor_part({n})" if n in shared else n)
    if schema.object_class:
        kw.append("object=None")
    if kw:
        params.append("*")
        params += kw
    fname = py_name(schema.short_name)
    obj = "object" if schema.object_class else "None"
    src = (f"def {fname}({', '.join(params)}):\n"
           f"    return _invoke(_state, ({''.join(e + ', ' for e in in_exprs)}), "
           f"({''.join(e + ', ' for e in attr_exprs)}), {obj})\n")
    scope = {"_invoke": invoke, "_state": state, **defaults}
    exec(compile(src, f"<loom op {schema.name}>", "exec"), scope)
    fn = scope[fname]
    fn.__doc__ = describe(schema)
    fn.__module__ = module_name
    fn.__qualname__ = fname
    fn._loom_state = state
    return fn


