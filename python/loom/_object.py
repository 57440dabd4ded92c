# SPDX-License-Identifier: BSD-3-Clause
"""loom.Object: an instance of an object class (fbgemm.tbe, core.linear, ...).

Its methods (the ops whose schema names the class) are attributes; calling
the object calls the method named like the class (or its only method).
close(), or leaving a `with` block, frees it (loom_object_free) at once;
otherwise it goes with its last reference.
"""
import os
import functools
from collections.abc import Mapping
from ctypes import byref, c_void_p

from . import _attrs, _config, _lib, _registry, _schema
from ._errors import error_for
from ._schema import py_name

lib = _lib.lib
_classes = None


def _class(name):
    global _classes
    if _classes is None:
        _classes = {c.name: c for c in _schema.all_classes()}
    c = _classes.get(name)
    if c is None:
        hint = _registry._suggest(name, sorted(_classes))
        more = f"; did you mean '{hint}'?" if hint else f" (classes: {', '.join(sorted(_classes))})"
        from ._errors import NotFoundError
        raise NotFoundError(f"loom.Object: no object class '{name}'{more}", -4)
    return c


def parse_device(device, what):
    if device is None or device == "cpu":
        return _lib.DLDevice(1, 0)
    if isinstance(device, str):
        kind, _, index = device.partition(":")
        if kind == "cuda" and (index == "" or index.isdigit()):
            return _lib.DLDevice(2, int(index or 0))
    elif isinstance(device, tuple) and len(device) == 2:
        return _lib.DLDevice(int(device[0]), int(device[1]))
    raise ValueError(f"{what}: device must be 'cpu', 'cuda', 'cuda:N' or (device_type, id), not {device!r}")


class Object:
    """loom.Object(class_name, weights=None, *, device=None, files=None, attrs=None, **attributes)

    weights: a safetensors file (mapped, not copied), or {name: tensor} of
    CPU tensors with the names the class reads from such a file (NumPy
    arrays, PyTorch tensors, anything with __dlpack__; viewed, not copied,
    and kept alive by the object until it is closed); files: {name: path}
    for classes that read other files; attributes: the class's, by name.
    attrs: {name: value}, the class's attributes as a mapping, for those
    whose names are taken by this constructor's own arguments: the vision
    models' weight entry is the attribute `weights`, so
    loom.Object("vision.resnet50", "r50.safetensors", attrs={"weights": "IMAGENET1K_V2"}).
    """

    def __init__(self, class_name, weights=None, *, device=None, files=None, attrs=None, **attributes):
        self._ptr = None
        self._weights = None
        _config.ensure_init()
        cls = _class(class_name)
        self._class = cls
        by_name = {py_name(a.name): i for i, a in enumerate(cls.attrs)}
        values = [None] * len(cls.attrs)
        if attrs is not None:
            if not isinstance(attrs, Mapping):
                raise TypeError(f"{class_name}: attrs must be a mapping of attribute names to values, "
                                f"not {type(attrs).__name__}")
            twice = sorted(set(map(str, attrs)) & set(attributes))
            if twice:
                raise TypeError(f"{class_name}: attribute '{twice[0]}' given both in attrs and as a keyword")
            attributes = {**{str(k): v for k, v in attrs.items()}, **attributes}
        if (isinstance(weights, (str, os.PathLike)) and "weights" in by_name
                and not os.path.exists(os.fspath(weights))):
            # The class's own `weights` attribute names an entry; this argument is a file.
            raise FileNotFoundError(f"{class_name}: weights={os.fspath(weights)!r} is not a file; the "
                                    f"argument weights= is the safetensors file, and a weight entry goes in "
                                    f"attrs={{'weights': {os.fspath(weights)!r}}}")
        for k, v in attributes.items():
            i = by_name.get(k)
            if i is None:
                hint = _registry._suggest(k, list(by_name))
                more = f"; did you mean '{hint}'?" if hint else f" (attributes: {', '.join(by_name) or 'none'})"
                raise TypeError(f"{class_name}: no attribute '{k}'{more}")
            values[i] = v
        opts = _lib.struct_init(_lib.ObjectOptions)
        opts.device = parse_device(device, class_name)
        if isinstance(weights, Mapping):
            from ._dlpack import from_dlpack
            self._weights = [(str(k), from_dlpack(v)) for k, v in weights.items()]
            named = (_lib.NamedTensor * len(self._weights))(*(_lib.NamedTensor(k.encode(), t._ptr)
                                                             for k, t in self._weights))
            opts.n_tensors, opts.tensors = len(self._weights), named
        elif weights is not None:
            opts.weights_path = str(weights).encode()
        if files:
            named = (_lib.NamedFile * len(files))(*(_lib.NamedFile(str(k).encode(), str(p).encode())
                                                     for k, p in files.items()))
            opts.n_files, opts.files = len(files), named
        keep = []
        bag = _attrs.build(class_name, cls.attrs, tuple(values), [None] * len(values), keep)
        out = c_void_p()
        try:
            st = lib.loom_object_create_ex(byref(out), class_name.encode(), bag, byref(opts))
        finally:
            _attrs.free(bag)
        if st != 0:
            raise error_for(st)
        self._ptr = out.value
        self._options = _lib.struct_init(_lib.CallOptions, object=self._ptr)

    @property
    def class_name(self):
        return self._class.name

    @property
    def methods(self):
        """The short names of the class's methods."""
        return [m.split(".", 1)[1] for m in self._class.methods]

    @property
    def closed(self):
        return self._ptr is None

    def _options_for(self, op):
        if self._ptr is None:
            raise ValueError(f"{op}: the {self._class.name} object is closed")
        return byref(self._options)

    def __getattr__(self, name):
        cls = self.__dict__.get("_class")
        if cls is None or name.startswith("_"):
            raise AttributeError(name)
        full = f"{cls.name.split('.', 1)[0]}.{name}"
        if full not in cls.methods:
            hint = _registry._suggest(name, self.methods)
            more = f"; did you mean '{hint}'?" if hint else f" (methods: {', '.join(self.methods)})"
            raise AttributeError(f"{cls.name} has no method '{name}'{more}")
        fn = _registry.function(full)
        bound = functools.partial(fn, object=self)
        functools.update_wrapper(bound, fn)
        return bound

    def __call__(self, *args, **kwargs):
        cls = self._class
        name = cls.name if cls.name in cls.methods else (cls.methods[0] if len(cls.methods) == 1 else None)
        if name is None:
            raise TypeError(f"{cls.name} has no method named like the class: call one of "
                            f"{', '.join(self.methods)}")
        return _registry.function(name)(*args, object=self, **kwargs)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self.methods))

    def close(self):
        """Free the object now (a no-op when it is closed already)."""
        ptr, self._ptr = self._ptr, None
        if ptr:
            lib.loom_object_free(ptr)
        self._weights = None        # the object borrowed them until now

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_ptr", None):
            self.close()

    def __repr__(self):
        state = "closed" if self._ptr is None else f"methods {', '.join(self.methods)}"
        return f"loom.Object('{self._class.name}', {state})"


