"""The ``xla`` executor: Quabla programs compiled and run by XLA (through jaxlib's PJRT
client), on one device or partitioned over a :class:`qb.sharding.Mesh`.

Path of a call (docs/distributed.md):

1. Quabla traces the function once per signature and runs its own passes (autodiff, vmap,
   inlining, CSE, folding) exactly as for the ``cpu`` device; the program is exported to
   StableHLO text (``Program.stablehlo_text``).
2. :func:`annotate` puts the mesh (``sdy.mesh @mesh = <["a"=2, "b"=4]>``) at the top of the
   module and one ``sdy.sharding`` per ``@main`` argument and result (results whose sharding
   is unspecified are left to Shardy's propagation).
3. The PJRT client compiles the text with ``num_partitions = mesh.size``, SPMD
   partitioning and the Shardy partitioner; XLA splits the program per device and inserts
   the collectives (the all-reduce of a data-parallel gradient).
4. Arguments become XLA arrays laid out as the in-shardings say (an XLA array already laid
   out so is passed as is: no host copy); the per-device results are assembled into global
   XLA arrays, returned as they are (``resident=True``) or copied back into Quabla Tensors.

Used from JAX: jaxlib's client API (``compile_and_load``, ``execute_sharded``), the public
array constructors of ``jax`` and, for results whose layout XLA chose, the private
``GSPMDSharding``; hence the pinned version (``quabla[xla]``: jax/jaxlib 0.10.2).
"""

import functools
import importlib
import re
import sys
import threading

import numpy as np

from . import dtypes as _dt
from . import tree as _tree
from . import _quabla as _q
from ._ops import _to_array
from ._trace import Tracer
from ._trace import current as _current
from .errors import ArgumentTypeError, InvalidArgumentError, QuablaError, UnsupportedOperationError
from .sharding import Mesh, NamedSharding, _jax, _put as put, available

_jit = importlib.import_module(".jit", __package__)  # the module (the package attribute `jit` is the function)

__all__ = ["available", "annotate", "XlaJitted"]

Tensor = _q.Tensor

_TYPE = re.compile(r"tensor<((?:\d+x)*)(f32|f64|i1|i32|i64|ui8|ui32)>")
_NP = {"f32": np.float32, "f64": np.float64, "i1": np.bool_, "i32": np.int32, "i64": np.int64, "ui8": np.uint8, "ui32": np.uint32}
_MAIN = re.compile(r"func\.func @main\((?P<args>[^)]*)\)\s*->\s*(?:\((?P<results>[^)]*)\)|(?P<result>tensor<[^>]*>))\s*\{")


def _aval(ty):
    m = _TYPE.fullmatch(ty.strip())
    if m is None:
        raise QuablaError(f"xla: cannot read the StableHLO type {ty!r} (an internal error, please report it)")
    return tuple(int(d) for d in m.group(1).split("x") if d), np.dtype(_NP[m.group(2)])


def signature(text):
    """``(argument types, result types, match)`` of ``@main`` in Quabla's StableHLO text;
    each type is ``(shape, numpy dtype)``."""
    m = _MAIN.search(text)
    if m is None:
        raise QuablaError("xla: the exported module has no readable public @main (an internal error, please report it)")
    args = [a.split(":", 1)[1] for a in m.group("args").split(", ")] if m.group("args").strip() else []
    res = m.group("results")
    results = ([r for r in res.split(", ")] if res.strip() else []) if res is not None else [m.group("result")]
    return [_aval(a) for a in args], [_aval(r) for r in results], m


def annotate(text, mesh, in_shardings, out_shardings):
    """``text`` with ``mesh`` declared as ``@mesh`` and a Shardy sharding on each ``@main``
    argument and result (``None``: replicated for an argument, left to propagation for a
    result)."""
    ins, outs, m = signature(text)
    arg_names = [a.split(":", 1)[0].strip() for a in m.group("args").split(", ")] if ins else []

    def ty(shape, dt):
        code = {v: k for k, v in _NP.items()}[dt.type]
        return "tensor<" + "".join(f"{d}x" for d in shape) + code + ">"

    args = []
    for name, (shape, dt), s in zip(arg_names, ins, in_shardings):
        s = s if s is not None else NamedSharding(mesh)
        args.append(f"{name}: {ty(shape, dt)} {{sdy.sharding = {s.sdy(len(shape))}}}")
    results = []
    for (shape, dt), s in zip(outs, out_shardings):
        results.append(ty(shape, dt) + ("" if s is None else f" {{sdy.sharding = {s.sdy(len(shape))}}}"))
    decl = "  sdy.mesh @mesh = <[" + ", ".join(f'"{n}"={k}' for n, k in mesh.shape.items()) + "]>\n"
    head = text[: m.start()]
    if not head.lstrip().startswith("module {"):
        raise QuablaError("xla: the exported module does not start with 'module {' (an internal error, please report it)")
    head = head.replace("module {", "module {\n" + decl.rstrip("\n"), 1)
    return head + "func.func @main(" + ", ".join(args) + ") -> (" + ", ".join(results) + ") {" + text[m.end():]


def to_tensor(a):
    """A Quabla Tensor holding the XLA array ``a`` (gathered from every process if needed)."""
    if a.is_fully_addressable:
        h = np.asarray(a)
    elif a.sharding.is_fully_replicated:
        h = np.asarray(a.addressable_data(0))
    else:
        from jax.experimental import multihost_utils

        h = np.asarray(multihost_utils.process_allgather(a, tiled=True))
    return _to_array(h, h.dtype)  # the program's dtype (no widening of uint8)


class Executable:
    """One compiled XLA program over a mesh: its annotated StableHLO text, the PJRT
    executable, and how to lay out its arguments and assemble its results."""

    def __init__(self, text, mesh, in_shardings, out_shardings):
        jax = _jax()
        from jaxlib import xla_client

        self.mesh = mesh
        ins, outs, _ = signature(text)
        self.in_avals, self.out_avals = ins, outs
        self.in_shardings = [s if s is not None else NamedSharding(mesh) for s in in_shardings]
        sharded = any(s is not None for s in (*in_shardings, *out_shardings))
        self.text = annotate(text, mesh, in_shardings, out_shardings) if sharded else text
        devs = list(mesh.devices.flat)
        opts = xla_client.CompileOptions()
        b = opts.executable_build_options
        b.num_replicas, b.num_partitions = 1, mesh.size
        b.use_spmd_partitioning = mesh.size > 1
        b.use_shardy_partitioner = True
        b.device_assignment = xla_client.DeviceAssignment.create(np.array(mesh.device_ids).reshape(1, mesh.size))
        client = devs[0].client
        try:
            self.exe = client.compile_and_load(self.text, xla_client.DeviceList(tuple(devs)), opts)
        except Exception as e:  # noqa: BLE001 - XLA's own errors carry the reason
            raise UnsupportedOperationError(f"xla: XLA could not compile the exported program: {e}", op="xla", device="xla") from None
        self.out_shardings = []
        compiled = self.exe.get_output_shardings() if mesh.size > 1 and any(s is None for s in out_shardings) else None
        for i, s in enumerate(out_shardings):
            if s is not None:
                self.out_shardings.append(s.jax_sharding)
            elif compiled is None:  # one device
                self.out_shardings.append(jax.sharding.SingleDeviceSharding(devs[0]))
            else:  # the layout XLA chose
                from jax._src.sharding_impls import GSPMDSharding

                self.out_shardings.append(GSPMDSharding(tuple(devs), compiled[i]))
        self._jax_in = [s.jax_sharding for s in self.in_shardings]
        self._jax = jax

    def hlo_text(self):
        """XLA's optimized HLO after SPMD partitioning (collectives included)."""
        return self.exe.hlo_modules()[0].to_string()

    def __call__(self, leaves, what):
        jax = self._jax
        with jax.enable_x64(True):
            bufs = []
            for x, s, js, (shape, dt) in zip(leaves, self.in_shardings, self._jax_in, self.in_avals):
                if isinstance(x, jax.Array) and x.dtype == dt and x.sharding.is_equivalent_to(js, x.ndim):
                    bufs.append(x)
                else:
                    h = x if isinstance(x, jax.Array) else np.asarray(x)
                    bufs.append(put(h if h.dtype == dt else h.astype(dt), s, what))
            pieces = self.exe.execute_sharded(bufs).disassemble_into_single_device_arrays()
            return [jax.make_array_from_single_device_arrays(shape, s, p) for (shape, _), s, p in zip(self.out_avals, self.out_shardings, pieces)]


def _is_sharding(s):
    return s is None or isinstance(s, NamedSharding)


def _prefix(fname, what, spec, value, path):
    """The sharding of each leaf of ``value`` from ``spec``, a pytree prefix of ``value``
    whose leaves are NamedShardings or None (JAX's in_shardings/out_shardings rule)."""
    if _is_sharding(spec):
        return [spec] * len(_tree.leaves(value))
    if isinstance(spec, (tuple, list)) and isinstance(value, (tuple, list)) and len(spec) == len(value):
        return [s for i, (sp, v) in enumerate(zip(spec, value)) for s in _prefix(fname, what, sp, v, f"{path}[{i}]")]
    if isinstance(spec, dict) and isinstance(value, dict) and set(spec) == set(value):
        return [s for k in sorted(value) for s in _prefix(fname, what, spec[k], value[k], f"{path}[{k!r}]")]
    raise InvalidArgumentError(
        f"jit({fname}): {what}{path} is {type(spec).__name__} {spec!r}, which is neither a NamedSharding nor None nor a "
        f"prefix of the structure {_tree.structure(value)!r} there"
    )


def _leaf_key(x):
    jax = _jax() if not isinstance(x, (Tensor, np.ndarray, np.generic, bool, int, float, _jit.ShapeDtype)) else None
    if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):
        return ("static", type(x).__name__, _jit._Exact(x))
    if isinstance(x, (Tensor, _jit.ShapeDtype)):
        return (tuple(x.shape), x.dtype.code)
    if isinstance(x, (np.ndarray, np.generic)):  # NumPy data widens as in qb.asarray (uint8 -> int32)
        return (tuple(x.shape), (_dt.WIDEN.get(x.dtype) or _dt.dtype(x.dtype)).code)
    if jax is not None and isinstance(x, jax.Array):
        return (tuple(x.shape), _dt.dtype(x.dtype).code)
    raise ArgumentTypeError(
        f"jit: argument leaves on the xla device must be Tensors, NumPy arrays, XLA arrays or Python numbers, got {type(x).__name__}"
    )


class XlaJitted:
    """``qb.jit(f, device="xla", in_shardings=..., out_shardings=..., resident=...)``: traced
    and transformed by Quabla once per signature, compiled and run by XLA over the mesh of
    its shardings (one XLA device without shardings)."""

    _normalize_static = _jit.Jitted._normalize_static
    _split_kwargs = _jit.Jitted._split_kwargs

    def __init__(self, fun, in_shardings=None, out_shardings=None, static_argnums=None, static_argnames=None, max_traces=None, resident=False):
        self.__wrapped__ = fun
        functools.update_wrapper(self, fun, updated=())
        self._static_argnums, self._static_argnames, self._npos = _jit._static_options(fun, static_argnums, static_argnames)
        self._in_shardings = in_shardings
        self._out_shardings = out_shardings
        self._max_traces = _jit._max_traces(_jit._name(fun), max_traces)
        self._resident = bool(resident)
        self._cache = _jit._TraceCache(self._max_traces, self)
        self._lock = threading.Lock()
        meshes = {s.mesh for s in _tree.leaves((in_shardings, out_shardings), is_leaf=_is_sharding) if isinstance(s, NamedSharding)}
        bad = [s for s in _tree.leaves((in_shardings, out_shardings), is_leaf=_is_sharding) if not _is_sharding(s)]
        if bad:
            raise ArgumentTypeError(f"jit({_jit._name(fun)}): shardings must be qb.sharding.NamedSharding or None, got {type(bad[0]).__name__} {bad[0]!r}")
        if len(meshes) > 1:
            raise InvalidArgumentError(f"jit({_jit._name(fun)}): every sharding must be over one mesh, got {sorted(map(repr, meshes))}")
        self._mesh = next(iter(meshes)) if meshes else None

    def _split(self, args, kwargs):
        sa, args, static, kwargs, static_kw = _jit._split_static(self, args, kwargs or {})
        dyn_args = tuple(a for i, a in enumerate(args) if i not in sa) if sa else tuple(args)
        return sa, static, kwargs, static_kw, dyn_args

    def _arg_shardings(self, dyn_args, kwargs, nargs):
        fname = _jit._name(self.__wrapped__)
        spec = self._in_shardings
        if not _is_sharding(spec):
            if not isinstance(spec, (tuple, list)):
                raise InvalidArgumentError(f"jit({fname}): in_shardings must be a NamedSharding, None or a tuple with one entry per positional argument")
            if len(spec) == nargs and nargs != len(dyn_args):
                sa = self._normalize_static(nargs)
                spec = tuple(s for i, s in enumerate(spec) if i not in sa)
            if len(spec) != len(dyn_args):
                raise InvalidArgumentError(
                    f"jit({fname}): in_shardings has {len(spec)} entries for {len(dyn_args)} positional array arguments"
                )
        per = _prefix(fname, "in_shardings", spec, tuple(dyn_args), "")
        return per + [None] * len(_tree.leaves(kwargs))

    def _mesh_or_default(self):
        if self._mesh is not None:
            return self._mesh
        return Mesh(np.array(_jax().devices()[:1], dtype=object), ("_",))

    def _entry(self, args, kwargs):
        sa, static, kwargs, static_kw, dyn_args = self._split(args, kwargs)
        fname = _jit._name(self.__wrapped__)
        for i, s in zip(sa, static):
            _jit._check_hashable(self.__wrapped__, f"static argument {i}", s)
        leaves, dyn_tree = _tree.flatten((dyn_args, kwargs))
        key = (dyn_tree, tuple(_leaf_key(x) for x in leaves), tuple(map(_jit._Exact, static)), tuple((k, _jit._Exact(v)) for k, v in static_kw))
        arrays = [x for x in leaves if not (isinstance(x, (bool, int, float)) and not isinstance(x, np.generic))]
        entry = self._cache.get(key)
        if entry is None:
            with self._lock:
                entry = self._cache.get(key)
                if entry is None:
                    entry = self._build(fname, dyn_tree, leaves, dyn_args, kwargs, static, sa, len(args), static_kw)
                    self._cache.insert(key, entry)
        return entry, arrays, fname

    def _build(self, fname, dyn_tree, leaves, dyn_args, kwargs, static, sa, nargs, static_kw):
        per_leaf = self._arg_shardings(dyn_args, kwargs, nargs)
        abstract = []
        in_sh = []
        for x, s in zip(leaves, per_leaf):
            if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):
                abstract.append(x)
                continue
            abstract.append(_jit.ShapeDtype(x.shape, _dt.BY_CODE[_leaf_key(x)[1]]))
            if s is not None:
                s.check(f"jit({fname}): argument of shape {tuple(x.shape)}", x.shape)
            in_sh.append(s)
        program, out_tree = _jit._trace(self.__wrapped__, dyn_tree, abstract, static, sa, nargs, static_kw)
        shape_of_out = _tree.unflatten(out_tree, list(range(out_tree.num_leaves)))
        out_sh = _prefix(fname, "out_shardings", self._out_shardings, shape_of_out, "")
        text = program.stablehlo_text()
        _, outs, _ = signature(text)
        for (shape, _), s in zip(outs, out_sh):
            if s is not None:
                s.check(f"jit({fname}): result of shape {shape}", shape)
        entry = _Entry(program, Executable(text, self._mesh_or_default(), in_sh, out_sh), out_tree)
        if _jit._LOG:
            print(f"quabla: compiled jit({fname}) on xla over {entry.executable.mesh!r} for {dyn_tree!r}", file=sys.stderr)
        return entry

    def __call__(self, *args, **kwargs):
        fun = self.__wrapped__
        if _current() is not None or any(type(x) is Tracer for x in _tree.leaves((args, kwargs))):
            return fun(*args, **kwargs)
        entry, arrays, fname = self._entry(args, kwargs)
        outs = entry.executable(arrays, f"jit({fname})")
        if not self._resident:
            outs = [to_tensor(o) for o in outs]
        return _tree.unflatten(entry.out_tree, outs)

    def lower(self, *args, **kwargs):
        """Traces, exports and compiles for these arguments (arrays, XLA arrays or
        :class:`qb.ShapeDtype` leaves); returns an :class:`XlaLowered`."""
        entry, _, _ = self._entry(args, kwargs)
        return XlaLowered(self, entry)

    def clear_cache(self):
        """Drops every traced signature."""
        with self._lock:
            self._cache.clear()

    _cache_size = _jit.Jitted._cache_size
    __get__ = _jit.Jitted.__get__

    def __repr__(self):
        return f"<jit({_jit._name(self.__wrapped__)}) device='xla' mesh={self._mesh!r}>"


class _Entry:
    __slots__ = ("program", "executable", "out_tree")

    def __init__(self, program, executable, out_tree):
        self.program = program
        self.executable = executable
        self.out_tree = out_tree


class XlaLowered:
    """A traced signature of an ``xla`` jit: ``as_text(dialect="stablehlo")`` is the
    annotated module XLA compiles, ``compile()`` the compiled program."""

    def __init__(self, jitted, entry):
        self._jitted = jitted
        self._entry = entry
        self.program = entry.program
        self.out_tree = entry.out_tree

    def as_text(self, optimized=False, dialect="quabla"):
        """The quabla-dialect program (``optimized``: after Quabla's passes), or with
        ``dialect="stablehlo"`` the StableHLO text with its Shardy annotations."""
        if dialect == "stablehlo":
            return self._entry.executable.text
        if dialect != "quabla":
            raise UnsupportedOperationError(f"Lowered.as_text: dialect must be 'quabla' or 'stablehlo', got {dialect!r}", op="as_text")
        return self.program.optimized_text() if optimized else self.program.as_text()

    def compile(self):
        """The compiled program (:class:`XlaCompiled`)."""
        return XlaCompiled(self)


class XlaCompiled:
    """A compiled ``xla`` jit signature; ``as_text()`` is XLA's optimized HLO after SPMD
    partitioning (where the collectives show)."""

    def __init__(self, lowered):
        self._lowered = lowered

    def as_text(self):
        """XLA's optimized, partitioned HLO module as text."""
        return self._lowered._entry.executable.hlo_text()

    @property
    def input_shardings(self):
        """The NamedSharding of each flattened array argument."""
        return list(self._lowered._entry.executable.in_shardings)

    def __call__(self, *args, **kwargs):
        return self._lowered._jitted(*args, **kwargs)


_jit.PYTHON_EXECUTORS["xla"] = XlaJitted
