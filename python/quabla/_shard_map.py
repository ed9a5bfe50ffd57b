"""``jax.shard_map`` for Quabla: a function mapped over the blocks of its arguments laid out
over a mesh, with the collectives of ``qb.lax`` (``psum``, ``all_gather``, ``psum_scatter``,
``ppermute``, ``axis_index``, ...) over the mesh's axis names.

How it runs: on this process's device, vectorised over the mesh, as ``qb.pmap`` is. Every
manual mesh axis becomes a named ``qb.vmap`` axis of the axis's size (the first mesh axis the
outermost). An argument's dimension partitioned over mesh axes is split into ``(axis size,
..., block)`` and mapped over those axes; dimensions not partitioned, and mesh axes its spec
does not mention, reach every instance whole (``in_axes=None``). Each output is put back
together by its ``out_spec``: the blocks of a partitioned dimension are concatenated in mesh
order, and a mesh axis the spec does not mention means the output is the same in every
instance along it (one copy is returned). Results are ordinary arrays of the global shape.

Differences from JAX:

* No devices are involved: a mesh axis may have any size (JAX needs a device per mesh
  position). A :class:`AbstractMesh` (device-less, as ``jax.sharding.AbstractMesh``) gives
  meshes larger than the device count; ``qb.sharding.Mesh``/``qb.make_mesh`` meshes and
  ``jax.sharding.Mesh``/``AbstractMesh`` objects work as well.
* ``mesh=None`` is an error (Quabla has no context mesh, ``jax.set_mesh``), and so is
  omitting ``in_specs`` (Quabla's meshes have no ``Explicit`` axis types to infer them from).
* ``check_vma=True`` (``check_rep`` of the experimental API) checks statically, from the
  traced program, that an output whose ``out_spec`` leaves out a mesh axis does not vary
  along it (it does not depend on a value mapped over that axis, other than through a
  reducing collective): JAX's rule, except that ``all_gather``'s result counts as equal in
  every instance here (JAX asks for ``all_gather_invariant``), so a few programs JAX rejects
  run. ``check_vma=False`` skips the check and returns the first instance's value along
  such axes.
* Gradients taken outside the shard_map are JAX's. Inside ``f``, reverse mode
  (``qb.grad``, ``qb.value_and_grad``, ``qb.vjp``, ``qb.jacrev``) raises
  UnsupportedOperationError with ``check_vma=True``: JAX then sums the gradient of a value
  replicated along a mesh axis over the instances (the transpose of its implicit
  ``pvary``), which this emulation cannot see; with ``check_vma=False`` each instance gets
  its own gradient, as in JAX, to ``psum``/``pmean`` by hand. Take the gradient outside (as
  JAX's data-parallel examples do) for JAX's default result.
* Partial-manual mode (``axis_names`` a strict subset of the mesh axes, or ``auto``): the
  other axes are ignored (XLA would partition them automatically; here nothing is split
  over them, and specs may not name them).
* ``PartitionSpec`` ``unreduced``/``reduced`` sets are not supported.
"""

import inspect
import math
import re
import sys

import numpy as np

from . import _collective
from . import _ops as _o
from . import _trace
from . import tree as _tree
from ._ops import _shape_str
from ._trace import Tracer, is_array
from ._transforms import _name, jit, vmap
from .errors import ArgumentTypeError, BatchingError, InvalidArgumentError, ShapeError, UnsupportedOperationError
from .sharding import AbstractMesh, Mesh, PartitionSpec

__all__ = ["shard_map", "experimental_shard_map"]


class _InferSpecs:
    """The default of ``in_specs`` (JAX's ``Infer``): specs from the arguments' shardings."""

    def __repr__(self):
        return "Infer"


_INFER = _InferSpecs()


def _is_spec(s):
    if isinstance(s, PartitionSpec):
        return True
    jax = sys.modules.get("jax")  # a JAX PartitionSpec exists only once JAX is imported
    sharding = getattr(jax, "sharding", None)
    cls = getattr(sharding, "PartitionSpec", None)
    return isinstance(cls, type) and isinstance(s, cls)


def _spec_leaf(s):
    return s is None or _is_spec(s)


def _spec_axes(fname, what, s):
    """The mesh axes of each dimension of spec ``s`` (a tuple of tuples of names)."""
    if isinstance(s, PartitionSpec):
        return tuple(s.axes())
    # a jax.sharding.PartitionSpec
    if getattr(s, "unreduced", None) or getattr(s, "reduced", None):
        raise UnsupportedOperationError(f"{fname}: {what} {s} has unreduced/reduced axes, which are not supported", op=fname)
    out = []
    for p in s:
        if p is None:
            out.append(())
        elif isinstance(p, str):
            out.append((p,))
        elif isinstance(p, tuple) and all(isinstance(a, str) for a in p):
            out.append(p)
        else:
            raise ArgumentTypeError(f"{fname}: {what} {s} has an entry {p!r} that is neither None, a mesh axis name nor a tuple of names")
    return tuple(out)


def _spec_str(axes):
    parts = []
    for a in axes:
        parts.append("None" if not a else repr(a[0]) if len(a) == 1 else repr(tuple(a)))
    return "P(" + ", ".join(parts) + ")"


def _mesh_axes(fname, mesh):
    """``((name, size), ...)`` of ``mesh`` in axis order."""
    if mesh is None:
        raise InvalidArgumentError(
            f"{fname}: mesh is None, and Quabla has no context mesh (jax.set_mesh) to take it from; pass mesh=... "
            "(qb.sharding.Mesh, qb.make_mesh(...) or a device-less AbstractMesh)"
        )
    if isinstance(mesh, (Mesh, AbstractMesh)):
        return tuple(mesh.shape.items())
    names = getattr(mesh, "axis_names", None)
    shape = getattr(mesh, "shape", None)
    try:
        axes = tuple((n, int(shape[n])) for n in names)
    except Exception:
        raise ArgumentTypeError(
            f"{fname}: mesh must be a qb.sharding.Mesh, an AbstractMesh or a jax.sharding.Mesh, got {type(mesh).__name__}"
        ) from None
    if not axes:
        raise InvalidArgumentError(f"{fname}: the mesh {mesh!r} has no axes")
    if any(s < 1 for _, s in axes):
        raise ShapeError(f"{fname}: mesh axis sizes must be >= 1, got {dict(axes)}")
    return axes


def _manual_axes(fname, axes, axis_names):
    """The manual axes, ``((name, size), ...)`` in mesh order."""
    if not isinstance(axis_names, (set, frozenset)):
        raise ArgumentTypeError(f"{fname}: axis_names must be a set or frozenset of mesh axis names, got {type(axis_names).__name__}")
    names = [n for n, _ in axes]
    if not axis_names:
        return axes
    bad = [n for n in axis_names if n not in names]
    if bad:
        raise InvalidArgumentError(f"{fname}: axis_names={set(axis_names)!r} must be a subset of the mesh's axis names {tuple(names)!r}; {bad[0]!r} is not one")
    return tuple((n, s) for n, s in axes if n in axis_names)


def _check_specs(fname, kind, specs, manual, all_names):
    """Validates the leaves of ``specs`` (in_specs or out_specs); returns nothing."""
    leaves, _ = _tree.flatten_with_path(specs, is_leaf=_spec_leaf)
    for path, s in leaves:
        where = f"{kind}{_tree.keystr(path)}"
        if s is None:
            if kind == "out_specs":
                raise ArgumentTypeError(f"{fname}: {where} is None; out_specs leaves must be PartitionSpecs (P() for a replicated output)")
            continue
        if not _is_spec(s):
            raise ArgumentTypeError(
                f"{fname}: {kind} must be a pytree of PartitionSpec instances, but {where} is {s!r} of type {type(s).__name__}"
            )
        used = set()
        for dim_axes in _spec_axes(fname, where, s):
            for a in dim_axes:
                if a not in manual:
                    extra = "" if a in all_names else " (the mesh has no such axis)"
                    raise InvalidArgumentError(
                        f"{fname}: {kind} must refer to mesh axes marked as manual {tuple(manual)}, but {where} refers to {a!r}{extra}"
                    )
                if a in used:
                    raise InvalidArgumentError(f"{fname}: {where} {s} uses mesh axis {a!r} for more than one dimension")
                used.add(a)


def _broadcast(fname, kind, specs, tree, base):
    """The spec leaf of ``specs`` (a pytree prefix of ``tree``) over each leaf of ``tree``:
    ``(leaves of tree, their spec leaves, their paths)``."""
    spec_leaves, spec_td = _tree.flatten(specs, is_leaf=_spec_leaf)
    try:
        subtrees = spec_td.flatten_up_to(tree)
    except Exception as e:
        raise InvalidArgumentError(
            f"{fname}: {kind} must be a pytree prefix of {base} (one PartitionSpec per leaf or subtree): {e}"
        ) from None
    leaves, specs_per_leaf, paths = [], [], []
    for s, sub in zip(spec_leaves, subtrees):
        sl = _tree.flatten_with_path(sub)[0]
        leaves += [v for _, v in sl]
        specs_per_leaf += [s] * len(sl)
    full = _tree.flatten_with_path(tree)[0]
    paths = [_tree.keystr(p) for p, _ in full]
    return leaves, specs_per_leaf, paths


def _shape_of(x):
    """The shape of an array leaf, or None for a leaf that is not an array or a number."""
    if is_array(x) or isinstance(x, (np.ndarray, np.generic)):
        return tuple(x.shape)
    if isinstance(x, (bool, int, float)):
        return ()
    return None


class _ShardMapped:
    """The function :func:`shard_map` returns."""

    def __init__(self, f, fname, axes, manual, in_specs, out_specs, check_vma):
        self.f = f
        self.fname = fname
        self.axes = axes  # every mesh axis: ((name, size), ...)
        self.manual = manual  # the manual ones, mesh order
        self.sizes = dict(manual)
        self.in_specs = in_specs
        self.out_specs = out_specs
        self.check_vma = bool(check_vma)
        self._compiled = {}
        self.__name__ = f"shard_map({_name(f)})"
        self.__qualname__ = self.__name__
        self.__doc__ = getattr(f, "__doc__", None)
        self.__wrapped__ = f
        try:
            self._sig = inspect.signature(f)
        except (TypeError, ValueError):
            self._sig = None

    def __repr__(self):
        return f"<{self.__name__}>"

    # -- the arguments ---------------------------------------------------------------------

    def _mesh_str(self):
        return f"the mesh of shape {tuple(s for _, s in self.axes)} with axis names {tuple(n for n, _ in self.axes)}"

    def _plan(self, args):
        """(leaves, in_tree, per-leaf spec axes (None: passed as is), paths)."""
        fname = self.fname
        in_specs = self.in_specs
        if isinstance(in_specs, list):
            in_specs = tuple(in_specs)
        _, in_tree = _tree.flatten(args)
        leaves, specs, paths = _broadcast(fname, "in_specs", in_specs, args, "the arguments (a tuple, one entry per positional argument)")
        if len(leaves) != in_tree.num_leaves:  # cannot happen: the prefix covers the tree
            raise InvalidArgumentError(f"{fname}: in_specs does not cover the arguments")
        axes = []
        for x, s, p in zip(leaves, specs, paths):
            where = f"args{p}"
            if s is None:
                axes.append(None)
                continue
            sa = _spec_axes(fname, "in_specs entry", s)
            shape = _shape_of(x)
            if shape is None:
                raise ArgumentTypeError(f"{fname}: {where} is a {type(x).__name__}, not an array; pass arrays (or give it an in_specs entry of None to pass it as is)")
            if len(sa) > len(shape):
                raise ShapeError(
                    f"{fname}: in_specs for {where} is {_spec_str(sa)}, of length {len(sa)}, but {where} has shape "
                    f"{_shape_str(shape)}, of rank {len(shape)}; an in_specs entry may be no longer than its argument's rank"
                    + (" (use P() for a scalar)" if not shape else "")
                )
            for d, dim_axes in enumerate(sa):
                n = math.prod(self.sizes[a] for a in dim_axes)
                if shape[d] % n:
                    names = f"axes {dim_axes}" if len(dim_axes) > 1 else f"axis {dim_axes[0]!r}"
                    raise ShapeError(
                        f"{fname}: {where} of shape {_shape_str(shape)} has in_specs {_spec_str(sa)}, which splits its "
                        f"dimension {d} (of size {shape[d]}) over mesh {names} (of total size {n}) of {self._mesh_str()}, "
                        f"but {n} does not evenly divide {shape[d]}"
                    )
            axes.append(sa)
        return leaves, in_tree, axes, paths

    # -- calling ---------------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        if kwargs:
            raise ArgumentTypeError(f"{self.fname}: the mapped function takes positional arguments only, got keywords {sorted(kwargs)}")
        if self._sig is not None:
            try:
                self._sig.bind(*args)
            except TypeError as e:
                raise ArgumentTypeError(f"{self.fname}: {_name(self.f)} cannot take the {len(args)} arguments passed: {e}") from None
        leaves, in_tree, axes, paths = self._plan(args)
        dyn = [i for i, a in enumerate(axes) if a is not None]
        static = tuple((i, leaves[i]) for i, a in enumerate(axes) if a is None)
        static_key = tuple((i, type(v), v) for i, v in static)  # 1 and 1.0 compile apart
        dyn_leaves = [leaves[i] for i in dyn]
        if _trace.current() is None and not any(isinstance(x, Tracer) for x in leaves):
            key = (in_tree, tuple(axes), static_key)
            try:
                hash(key)
            except TypeError:
                key = None
            if key is not None:
                run = self._compiled.get(key)
                if run is None:
                    if len(self._compiled) > 16:
                        self._compiled.clear()

                    def run(*dl):
                        return self._run(in_tree, axes, static, dl)

                    run.__name__ = self.__name__
                    run = self._compiled[key] = jit(run)
                return run(*dyn_leaves)
        return self._run(in_tree, axes, static, dyn_leaves)

    def _run(self, in_tree, axes, static, dyn_leaves):
        fname = self.fname
        manual = self.manual
        names = [n for n, _ in manual]
        dyn_axes = [a for a in axes if a is not None]
        prepared = []
        level_in = [[] for _ in manual]
        for x, sa in zip(dyn_leaves, dyn_axes):
            used = {a for dim_axes in sa for a in dim_axes}
            for k, n in enumerate(names):
                level_in[k].append(0 if n in used else None)
            if not used:
                prepared.append(x)
                continue
            x = x if is_array(x) else _o.asarray(x)
            exp, pos, block = [], {}, []
            for d, n in enumerate(x.shape):
                dim_axes = sa[d] if d < len(sa) else ()
                for a in dim_axes:
                    pos[a] = len(exp)
                    exp.append(self.sizes[a])
                block.append(len(exp))
                exp.append(n // math.prod(self.sizes[a] for a in dim_axes))
            perm = [pos[n] for n in names if n in pos] + block
            x = _o.reshape(x, tuple(exp))
            if perm != list(range(len(perm))):
                x = _o.transpose(x, perm)
            prepared.append(x)

        holder = {}
        vms = [None] * len(manual)
        all_leaves = [None] * in_tree.num_leaves
        for i, v in static:
            all_leaves[i] = v
        dyn_pos = [i for i, a in enumerate(axes) if a is not None]

        def body(*blocks):
            full = list(all_leaves)
            for i, b in zip(dyn_pos, blocks):
                full[i] = b
            with _collective.checking_vma(fname if self.check_vma else None):
                out = self.f(*_tree.unflatten(in_tree, full))
            outs, ospecs, opaths = _broadcast(fname, "out_specs", self.out_specs, out, f"the output of {_name(self.f)}")
            res, oaxes = [], []
            for v, s, p in zip(outs, ospecs, opaths):
                shape = _shape_of(v)
                if shape is None:
                    raise ArgumentTypeError(f"{fname}: output{p} of {_name(self.f)} is a {type(v).__name__}, not an array")
                v = v if is_array(v) else _o.asarray(v)
                sa = _spec_axes(fname, "out_specs entry", s)
                if len(sa) > len(shape):
                    raise ShapeError(
                        f"{fname}: out_specs for output{p} is {_spec_str(sa)}, of length {len(sa)}, but output{p} of "
                        f"{_name(self.f)} has shape {_shape_str(shape)}, of rank {len(shape)}; an out_specs entry may be "
                        "no longer than its output's rank"
                        + (" (for a rank-0 output that differs across the mesh, give it a singleton axis)" if not shape else "")
                    )
                res.append(v)
                oaxes.append(sa)
            holder["out"] = (_tree.structure(out), oaxes, opaths, [tuple(v.shape) for v in res])
            for k, n in enumerate(names):
                used = [any(n in d for d in sa) for sa in oaxes]
                vms[k].out_axes = tuple(0 if (u or not self.check_vma) else None for u in used)
            return tuple(res)

        body.__name__ = "_shard_map_body"
        fn = body
        for k in reversed(range(len(manual))):
            vm = vmap(fn, in_axes=tuple(level_in[k]), out_axes=0, axis_name=names[k], axis_size=manual[k][1])
            vms[k] = vm
            fn = self._level(vm, k, holder)
        res = fn(*prepared)

        out_td, oaxes, opaths, bshapes = holder["out"]
        outs = []
        for j, (r, sa, bshape) in enumerate(zip(res, oaxes, bshapes)):
            present = [n for k, n in enumerate(names) if vms[k].out_axes[j] == 0]
            if r.ndim != len(present) + len(bshape):  # the vmap levels placed the axes otherwise
                raise UnsupportedOperationError(f"{fname}: internal error: output {j} has shape {r.shape}, expected {len(present)} mesh axes before {bshape}", op="shard_map")
            used = {a for d in sa for a in d}
            drop = [n not in used for n in present]
            if any(drop):
                r = r[tuple(0 if dr else slice(None) for dr in drop)]
                present = [n for n in present if n in used]
            perm, final = [], []
            base = len(present)
            for d, n in enumerate(bshape):
                dim_axes = sa[d] if d < len(sa) else ()
                perm += [present.index(a) for a in dim_axes] + [base + d]
                final.append(n * math.prod(self.sizes[a] for a in dim_axes))
            if perm != list(range(len(perm))):
                r = _o.transpose(r, perm)
            if tuple(r.shape) != tuple(final):
                r = _o.reshape(r, tuple(final))
            outs.append(r)
        return _tree.unflatten(out_td, outs)

    def _level(self, vm, k, holder):
        """Calls ``vm`` (the vmap over manual axis ``k``), turning its out_axes=None failure
        into the replication error of ``check_vma``."""
        name = self.manual[k][0]

        def level(*a):
            try:
                return vm(*a)
            except BatchingError as e:
                msg = str(e)
                if not (msg.startswith(vm.__name__ + ":") and "out_axes=None" in msg):
                    raise
                m = re.search(r"output\[(\d+)\]", msg)
                _, oaxes, opaths, _ = holder.get("out", (None, [], [], []))
                if m and int(m.group(1)) < len(oaxes):
                    j = int(m.group(1))
                    what = f"out_specs for output{opaths[j]} is {_spec_str(oaxes[j])}"
                else:
                    what = "an out_specs entry"
                raise InvalidArgumentError(
                    f"{self.fname}: {what}, which says the output is the same in every instance along mesh axis {name!r}, "
                    f"but it may differ along it (it depends on values mapped over {name!r}, not only through a reducing "
                    f"collective such as psum); {self._mesh_str()}. Name {name!r} in the out_specs entry to concatenate the "
                    "instances' values, reduce over it (qb.lax.psum/pmean/...), or pass check_vma=False to take the first "
                    "instance's value"
                ) from None

        level.__name__ = f"_shard_map_level_{k}"
        return level


def _make(fname, f, mesh, in_specs, out_specs, axis_names, check_vma):
    if not callable(f):
        raise ArgumentTypeError(f"{fname}: the function to map must be callable, got {f!r} of type {type(f).__name__}")
    axes = _mesh_axes(fname, mesh)
    manual = _manual_axes(fname, axes, axis_names)
    if in_specs is _INFER:
        raise ArgumentTypeError(
            f"{fname}: in_specs is required: Quabla's meshes have no Explicit axis types to infer the specs from the "
            "arguments; pass a pytree of PartitionSpecs (P() for a replicated argument)"
        )
    all_names = [n for n, _ in axes]
    manual_names = [n for n, _ in manual]
    if in_specs is not None:
        _check_specs(fname, "in_specs", in_specs, manual_names, all_names)
    _check_specs(fname, "out_specs", out_specs, manual_names, all_names)
    if not isinstance(check_vma, (bool, np.bool_)):
        raise ArgumentTypeError(f"{fname}: check_vma must be a bool, got {type(check_vma).__name__}")
    return _ShardMapped(f, fname, axes, manual, in_specs, out_specs, check_vma)


def shard_map(f=None, /, *, out_specs=_INFER, in_specs=_INFER, mesh=None, axis_names=frozenset(), check_vma=True):
    """Maps ``f`` over the blocks of its arguments laid out over ``mesh``, as
    ``jax.shard_map``: each instance of ``f`` (one per position of the manual mesh axes) gets
    its block of every argument and returns its block of every output; inside ``f`` the mesh
    axis names work with ``qb.lax.psum``, ``pmean``, ``all_gather``, ``psum_scatter``,
    ``ppermute``, ``all_to_all``, ``axis_index``, ...

    Computed on this process's device as nested named ``qb.vmap``s over the manual mesh axes,
    so the mesh axes may have any sizes (JAX puts each block on its own device). Works
    eagerly (compiled once per argument signature), under ``qb.jit``, ``qb.grad`` and
    ``qb.vmap``.

    Args:
        f: the function (positional arguments, pytrees of arrays). Omitted: returns a
            decorator.
        out_specs: a pytree prefix of ``f``'s output with ``PartitionSpec`` leaves: per output
            dimension, the mesh axes whose instances' blocks are concatenated along it; a mesh
            axis the spec leaves out means the output is the same along it (one copy is
            returned).
        in_specs: a pytree prefix of the argument tuple with ``PartitionSpec`` leaves (per
            dimension, the mesh axes splitting it; dimensions past the spec's end, and mesh
            axes it leaves out, are not split) or ``None`` leaves (the argument is passed to
            every instance as it is). Required (JAX's ``Infer`` default needs Explicit mesh
            axes, which Quabla does not have).
        mesh: a ``qb.sharding.Mesh``, an :class:`AbstractMesh` or a ``jax.sharding`` mesh.
            Required (there is no context mesh).
        axis_names: the set of manual mesh axes (empty: all). Other axes are not mapped and
            specs may not name them.
        check_vma: check statically that outputs are the same along the mesh axes their
            out_specs leave out (see the module notes for the one difference from JAX).

    Returns:
        The mapped function: its results have the global shapes (ordinary arrays).

    Raises:
        ArgumentTypeError: ``f`` not callable, a spec leaf that is not a PartitionSpec, a
            mesh that is not one, a missing in_specs, an argument that is not an array.
        InvalidArgumentError: no mesh, a spec naming an axis that is not a manual mesh axis
            (or one axis twice), specs that are not a prefix of the arguments/outputs, an
            output that varies along an axis its out_spec leaves out (``check_vma``).
        ShapeError: a spec longer than its value's rank, a dimension its mesh axes do not
            divide.

    Example:
        >>> from quabla._shard_map import shard_map, AbstractMesh
        >>> from quabla.sharding import PartitionSpec as P
        >>> f = shard_map(lambda x: qb.lax.psum(x.sum(), "i"), mesh=AbstractMesh((4,), ("i",)), in_specs=P("i"), out_specs=P())
        >>> f(qb.arange(8.0)).item()
        28.0
    """
    if out_specs is _INFER:
        raise ArgumentTypeError("shard_map: out_specs is required (a keyword argument: a PartitionSpec, or a pytree prefix of them for the outputs)")

    def make(g):
        return _make("shard_map", g, mesh, in_specs, out_specs, axis_names, check_vma)

    if f is None:
        return make
    return make(f)


def experimental_shard_map(f, mesh, in_specs, out_specs, check_rep=True, auto=frozenset()):
    """``jax.experimental.shard_map.shard_map``: :func:`shard_map` with the older signature,
    ``check_rep`` for ``check_vma`` and ``auto`` (the mesh axes left out of the manual ones).

    Args:
        f: the function to map.
        mesh: a ``qb.sharding.Mesh``, an :class:`AbstractMesh` or a ``jax.sharding`` mesh.
        in_specs, out_specs: as :func:`shard_map`'s.
        check_rep: as ``check_vma``.
        auto: a set of mesh axes that are not manual (not mapped; specs may not name them).

    Returns:
        The mapped function.

    Example:
        >>> from quabla._shard_map import experimental_shard_map, AbstractMesh
        >>> from quabla.sharding import PartitionSpec as P
        >>> f = experimental_shard_map(lambda x: x * qb.lax.axis_index("i"), AbstractMesh((2,), ("i",)), P("i"), P("i"))
        >>> f(qb.ones(4)).tolist()
        [0.0, 0.0, 1.0, 1.0]
    """
    fname = "shard_map"
    if not isinstance(auto, (set, frozenset)):
        raise ArgumentTypeError(f"{fname}: auto must be a set or frozenset of mesh axis names, got {type(auto).__name__}")
    axis_names = frozenset()
    if auto:
        axes = _mesh_axes(fname, mesh)
        names = [n for n, _ in axes]
        bad = [a for a in auto if a not in names]
        if bad:
            raise InvalidArgumentError(f"{fname}: auto={set(auto)!r} names {bad[0]!r}, which is not an axis of the mesh {tuple(names)!r}")
        axis_names = frozenset(n for n in names if n not in auto)
        if not axis_names:
            raise InvalidArgumentError(f"{fname}: auto={set(auto)!r} leaves no manual mesh axis")
    return _make(fname, f, mesh, in_specs, out_specs, axis_names, check_rep)
