# SPDX-License-Identifier: BSD-3-Clause
"""The registry's schemas as plain Python values, read once through
loom_op_schema_at / loom_object_class_at (borrowed until loom_shutdown)."""
from dataclasses import dataclass, field
import keyword

from . import _lib

lib = _lib.lib

ATTR_INT, ATTR_FLOAT, ATTR_BOOL, ATTR_STRING, ATTR_INTS, ATTR_FLOATS, ATTR_TENSOR = range(1, 8)
ATTR_TYPE_NAMES = {ATTR_INT: "int", ATTR_FLOAT: "float", ATTR_BOOL: "bool", ATTR_STRING: "str",
                   ATTR_INTS: "Sequence[int]", ATTR_FLOATS: "Sequence[float]", ATTR_TENSOR: "TensorLike"}
ARG_OPTIONAL, ARG_JAGGED, ARG_OFFSETS = 0x1, 0x2, 0x4
ATTR_REQUIRED = 0x1

NO_DEFAULT = object()       # an attribute with neither default nor requirement: absent unless given


def py_name(name):
    """A schema name usable as a Python parameter (a keyword gains a trailing _)."""
    return name + "_" if keyword.iskeyword(name) or name == "object" else name


def dtype_names(mask):
    if mask == 0:
        return "any"
    return ",".join(_lib.text(lib.loom_dtype_name(d)) for d in range(1, 64) if mask >> d & 1)


@dataclass
class Arg:
    name: str
    dtypes: str
    optional: bool
    ndim: int
    doc: str


@dataclass
class Attr:
    name: str
    type: int
    required: bool
    default: object           # a Python value, or NO_DEFAULT
    doc: str
    choices: tuple = ()


@dataclass
class OpSchema:
    name: str
    version: int
    doc: str
    inputs: list
    outputs: list
    attrs: list
    object_class: str = None

    @property
    def domain(self):
        return self.name.split(".", 1)[0]

    @property
    def short_name(self):
        return self.name.split(".", 1)[1]


@dataclass
class ObjectClass:
    name: str
    doc: str
    attrs: list
    methods: list = field(default_factory=list)


def _value(v):
    """A resolved attribute value (a default) as a Python value."""
    if not v.is_set:
        return NO_DEFAULT
    t = v.type
    if t == ATTR_INT:
        return v.u.i
    if t == ATTR_FLOAT:
        return v.u.f
    if t == ATTR_BOOL:
        return bool(v.u.b)
    if t == ATTR_STRING:
        return _lib.text(v.u.s) or ""
    if t == ATTR_INTS:
        return tuple(v.u.ints[i] for i in range(v.count))
    if t == ATTR_FLOATS:
        return tuple(v.u.floats[i] for i in range(v.count))
    return NO_DEFAULT           # tensor defaults are not representable


def _args(ptr, n):
    return [Arg(_lib.text(a.name), dtype_names(a.dtypes), bool(a.flags & ARG_OPTIONAL), a.ndim,
                _lib.text(a.doc) or "") for a in (ptr[i] for i in range(n))]


def _attrs(ptr, n, choices_ptr, n_choices):
    choices = {}
    for i in range(n_choices):
        c = choices_ptr[i]
        values, j = [], 0
        while c.values[j]:
            values.append(_lib.text(c.values[j]))
            j += 1
        choices[c.attr] = tuple(values)
    out = []
    for i in range(n):
        a = ptr[i]
        out.append(Attr(_lib.text(a.name), a.type, bool(a.flags & ATTR_REQUIRED), _value(a.dflt),
                        _lib.text(a.doc) or "", choices.get(i, ())))
    return out


def read_op(s):
    """An OpSchema from a loom_op_schema."""
    n_choices = s.n_choices if s.struct_size >= _lib.OpSchema.choices.offset + 8 else 0
    return OpSchema(_lib.text(s.name), s.version, _lib.text(s.doc) or "",
                    _args(s.inputs, s.n_inputs), _args(s.outputs, s.n_outputs),
                    _attrs(s.attrs, s.n_attrs, s.choices, n_choices), _lib.text(s.object_class))


def all_ops():
    """Every op of the loaded packs, sorted by name."""
    return [read_op(lib.loom_op_schema_at(i).contents) for i in range(lib.loom_op_count())]


def all_classes():
    """Every object class, with the names of its methods."""
    ops = all_ops()
    out = []
    for i in range(lib.loom_object_class_count()):
        c = lib.loom_object_class_at(i).contents
        n_choices = c.n_choices if c.struct_size >= _lib.ObjectClass.choices.offset + 8 else 0
        cls = ObjectClass(_lib.text(c.name), _lib.text(c.doc) or "",
                          _attrs(c.attrs, c.n_attrs, c.choices, n_choices))
        cls.methods = [o.name for o in ops if o.object_class == cls.name]
        out.append(cls)
    return out


def describe(op):
    """The docstring of an op: its doc line, then inputs, attributes and outputs."""
    lines = [op.doc, ""]
    if op.object_class:
        lines += [f"A method of the object class {op.object_class}: call it on a loom.Object of that "
                  "class, or pass object=.", ""]

    def arg_lines(title, args):
        if args:
            lines.append(title + ":")
            for a in args:
                rank = "any rank" if a.ndim < 0 else f"rank {a.ndim}"
                opt = ", optional" if a.optional else ""
                lines.append(f"    {py_name(a.name)} ({a.dtypes}, {rank}{opt}): {a.doc}")
    arg_lines("Inputs", op.inputs)
    if op.attrs:
        lines.append("Attributes (keyword-only):")
        for a in op.attrs:
            lines.append(f"    {attr_summary(a)}")
    arg_lines("Outputs", op.outputs)
    return "\n".join(lines).rstrip()


def attr_summary(a):
    if a.required:
        how = "required"
    elif a.default is NO_DEFAULT:
        how = "default: absent"
    else:
        how = f"default {a.default!r}"
    choices = f"; one of {', '.join(a.choices)}" if a.choices else ""
    return f"{py_name(a.name)} ({ATTR_TYPE_NAMES.get(a.type, '?')}, {how}{choices}): {a.doc}"
