"""``qb.sharding``: meshes of XLA devices and how arrays are laid out over them, as in
``jax.sharding``.

A :class:`Mesh` names the axes of an n-d array of XLA devices; a :class:`PartitionSpec`
says, per array dimension, which mesh axes split it (``None``: not split); a
:class:`NamedSharding` pairs the two. ``qb.jit(f, in_shardings=..., out_shardings=...)``
runs ``f`` on the ``xla`` executor over the mesh: Quabla traces and transforms ``f``, exports
StableHLO whose ``@main`` carries one Shardy ``sdy.sharding`` per argument and result, and
XLA partitions it and inserts the collectives (docs/distributed.md).

The XLA devices are JAX's (``jax.devices()``); their number is fixed when XLA first starts
in a process (``XLA_FLAGS=--xla_force_host_platform_device_count=8`` gives 8 CPU devices).
Nothing here imports JAX until a function needs the devices.

Example:
    >>> import quabla as qb
    >>> from quabla.sharding import Mesh, NamedSharding, PartitionSpec as P
    >>> mesh = Mesh(qb.sharding.devices()[:1], ("batch",))
    >>> NamedSharding(mesh, P("batch", None))
    NamedSharding(mesh=Mesh('batch': 1), spec=PartitionSpec('batch', None))
"""

import importlib.util
import math

import numpy as np

from . import _quabla as _q
from . import dtypes as _dt
from .errors import ArgumentTypeError, InvalidArgumentError, ShapeError, UnsupportedOperationError

__all__ = [
    "AbstractMesh",
    "Mesh",
    "NamedSharding",
    "PartitionSpec",
    "device_count",
    "device_put",
    "devices",
    "local_devices",
    "make_array_from_process_local_data",
    "make_mesh",
    "process_count",
    "process_index",
]

_JAX = None


def _jax():
    """The ``jax`` module (imported on first use), or UnsupportedOperationError."""
    global _JAX
    if _JAX is None:
        if importlib.util.find_spec("jax") is None or importlib.util.find_spec("jaxlib") is None:
            raise UnsupportedOperationError(
                "the xla executor needs jax and jaxlib (pip install 'quabla[xla]', which pins jax==0.10.2)", op="xla", device="xla"
            )
        import jax

        _JAX = jax
    return _JAX


def available():
    """Whether the ``xla`` executor can run here (jax and jaxlib are installed); imports nothing."""
    return importlib.util.find_spec("jax") is not None and importlib.util.find_spec("jaxlib") is not None


_PLATFORMS = {"xla": None, "cpu": "cpu", "gpu": "gpu", "cuda": "cuda", "rocm": "rocm", "tpu": "tpu"}


def _platform(fname, backend):
    if not isinstance(backend, str) or backend not in _PLATFORMS:
        raise InvalidArgumentError(f"{fname}: backend must be one of {', '.join(map(repr, _PLATFORMS))}, got {backend!r}")
    return _PLATFORMS[backend]


def devices(backend="xla"):
    """The XLA devices of every process (``jax.devices()``): ``backend="xla"`` gives XLA's
    default platform, a platform name (``"cpu"``, ``"gpu"``, ``"tpu"``) that platform's.

    Example:
        >>> len(qb.sharding.devices()) >= 1
        True
    """
    p = _platform("devices", backend)
    jax = _jax()
    try:
        return list(jax.devices(p))
    except RuntimeError as e:
        raise UnsupportedOperationError(f"devices: XLA has no {backend!r} devices here: {e}", op="devices", device="xla") from None


_all_devices = devices  # for functions whose parameter is named `devices`


def local_devices(backend="xla"):
    """The XLA devices this process drives (all of them unless several processes run)."""
    p = _platform("local_devices", backend)
    return list(_jax().local_devices(backend=p))


def device_count(backend="xla"):
    """The number of XLA devices over all processes.

    Example:
        >>> qb.sharding.device_count() >= 1
        True
    """
    return len(devices(backend))


def process_index():
    """This process's index among the processes of :func:`qb.distributed.initialize` (0 alone)."""
    return _jax().process_index()


def process_count():
    """The number of processes (1 unless :func:`qb.distributed.initialize` was called)."""
    return _jax().process_count()


def _axis_names(fname, axis_names):
    """``axis_names`` as a tuple of distinct strings (a str for one axis)."""
    if isinstance(axis_names, str):
        return (axis_names,)
    try:
        names = tuple(axis_names)
    except TypeError:
        raise ArgumentTypeError(f"{fname}: axis_names must be a str or a sequence of str, got {type(axis_names).__name__}") from None
    if not all(isinstance(n, str) for n in names):
        raise InvalidArgumentError(f"{fname}: axis_names must be strings, got {names!r}")
    if len(set(names)) != len(names):
        raise InvalidArgumentError(f"{fname}: axis_names must be distinct, got {names!r}")
    return names


def _axis_sizes(fname, sizes):
    """``sizes`` (an int or a sequence of ints) as a tuple of ints."""
    try:
        shape = (sizes,) if isinstance(sizes, (int, np.integer)) else tuple(sizes)
    except TypeError:
        shape = None
    if shape is None or not all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) for s in shape):
        raise ArgumentTypeError(f"{fname}: the axis sizes must be an int or a sequence of ints, got {sizes!r}")
    return tuple(int(s) for s in shape)


def _is_device(d):
    jax = _jax()
    return isinstance(d, jax.Device)


class PartitionSpec(tuple):
    """Per array dimension, the mesh axis (a name), the mesh axes (a tuple of names, major
    first) or ``None`` (not split) that partitions it; dimensions past the end are not split.

    Example:
        >>> P = qb.sharding.PartitionSpec
        >>> P("batch", None)
        PartitionSpec('batch', None)
    """

    def __new__(cls, *parts):
        for p in parts:
            if p is None or isinstance(p, str):
                continue
            if isinstance(p, tuple) and all(isinstance(a, str) for a in p):
                continue
            raise ArgumentTypeError(
                f"PartitionSpec: each entry must be None, a mesh axis name or a tuple of names, got {p!r} ({type(p).__name__})"
            )
        return super().__new__(cls, parts)

    def axes(self):
        """The mesh axis names of each dimension's entry (a tuple per dimension)."""
        return [() if p is None else (p,) if isinstance(p, str) else p for p in self]

    def __repr__(self):
        return "PartitionSpec(" + ", ".join(map(repr, self)) + ")"

    def __reduce__(self):
        return (PartitionSpec, tuple(self))


P = PartitionSpec


class Mesh:
    """An n-d array of distinct XLA devices with a name per axis (``jax.sharding.Mesh``).

    Args:
        devices: an array (or nested lists) of XLA devices, of rank ``len(axis_names)``.
        axis_names: a name per axis (a str for a 1-d mesh).

    Raises:
        ShapeError: the devices array's rank differs from the number of names, or it is empty.
        InvalidArgumentError: repeated or non-string axis names, repeated devices, or
            entries that are not XLA devices.

    Example:
        >>> mesh = qb.sharding.Mesh(qb.sharding.devices()[:1], "data")
        >>> mesh.shape
        {'data': 1}
    """

    def __init__(self, devices, axis_names):
        names = _axis_names("Mesh", axis_names)
        try:
            arr = np.array(devices, dtype=object)
        except ValueError as e:
            raise ShapeError(f"Mesh: devices must form a rectangular array: {e}") from None
        if arr.ndim != len(names):
            raise ShapeError(
                f"Mesh: a devices array of shape {arr.shape} (rank {arr.ndim}) needs {arr.ndim} axis names, got {len(names)}: {names!r}"
            )
        if arr.size == 0:
            raise ShapeError(f"Mesh: the devices array of shape {arr.shape} is empty")
        flat = list(arr.flat)
        bad = [d for d in flat if not _is_device(d)]
        if bad:
            raise InvalidArgumentError(f"Mesh: devices must be XLA devices (qb.sharding.devices()), got {type(bad[0]).__name__} {bad[0]!r}")
        if len({(d.platform, d.id) for d in flat}) != len(flat):
            raise InvalidArgumentError(f"Mesh: each device may appear once, got {[d.id for d in flat]}")
        self.devices = arr
        self.axis_names = names
        self._jax_mesh = None

    @property
    def shape(self):
        """``{axis name: size}`` in axis order."""
        return dict(zip(self.axis_names, self.devices.shape))

    @property
    def size(self):
        """The number of devices."""
        return self.devices.size

    @property
    def device_ids(self):
        """The device ids in row-major mesh order (how the program's partitions are assigned)."""
        return [d.id for d in self.devices.flat]

    @property
    def jax_mesh(self):
        """The same mesh as a ``jax.sharding.Mesh``."""
        if self._jax_mesh is None:
            self._jax_mesh = _jax().sharding.Mesh(self.devices, self.axis_names)
        return self._jax_mesh

    def _key(self):
        return (self.axis_names, self.devices.shape, tuple((d.platform, d.id) for d in self.devices.flat))

    def __eq__(self, other):
        return isinstance(other, Mesh) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return "Mesh(" + ", ".join(f"{n!r}: {s}" for n, s in self.shape.items()) + ")"


class AbstractMesh:
    """A mesh of named axes with sizes and no devices (``jax.sharding.AbstractMesh``): what
    :func:`shard_map` needs, so any sizes work on one device.

    Args:
        axis_sizes: an int per axis, each >= 1.
        axis_names: a distinct name (str) per axis (a str for a 1-d mesh).
        axis_types: accepted for compatibility and ignored (Quabla has no axis types).

    Attributes:
        shape: ``{axis name: size}`` in axis order; also ``axis_names``, ``axis_sizes``,
            ``size`` (the product), ``shape_tuple`` (``((name, size), ...)``), ``empty``.

    Example:
        >>> qb.sharding.AbstractMesh((2, 4), ("x", "y")).shape
        {'x': 2, 'y': 4}
    """

    def __init__(self, axis_sizes, axis_names, axis_types=None):
        names = _axis_names("AbstractMesh", axis_names)
        sizes = _axis_sizes("AbstractMesh", axis_sizes)
        if len(sizes) != len(names):
            raise ShapeError(f"AbstractMesh: {len(sizes)} axis sizes {sizes} for {len(names)} axis names {names!r}")
        if any(s < 1 for s in sizes):
            raise ShapeError(f"AbstractMesh: axis sizes must be >= 1, got {sizes}")
        self.axis_sizes = tuple(int(s) for s in sizes)
        self.axis_names = names
        self.axis_types = axis_types

    @property
    def shape(self):
        return dict(zip(self.axis_names, self.axis_sizes))

    @property
    def shape_tuple(self):
        return tuple(zip(self.axis_names, self.axis_sizes))

    @property
    def size(self):
        return math.prod(self.axis_sizes)

    @property
    def empty(self):
        return not self.axis_names

    @property
    def abstract_mesh(self):
        return self

    def __eq__(self, other):
        return isinstance(other, AbstractMesh) and self.shape_tuple == other.shape_tuple

    def __hash__(self):
        return hash(("AbstractMesh", self.shape_tuple))

    def __repr__(self):
        return "AbstractMesh(" + ", ".join(f"{n!r}: {s}" for n, s in self.shape_tuple) + ")"


def make_mesh(axis_shapes, axis_names, devices=None):
    """A mesh of shape ``axis_shapes`` over ``devices`` (default: every XLA device), as
    ``jax.make_mesh``; the number of devices must equal the product of the shape.

    Raises:
        ShapeError: the shape's product differs from the number of devices, or a size is < 1.

    Example:
        >>> qb.sharding.make_mesh((1,), ("batch",))
        Mesh('batch': 1)
    """
    shape = _axis_sizes("make_mesh", axis_shapes)
    names = _axis_names("make_mesh", axis_names)
    try:
        devs = list(_all_devices() if devices is None else devices)
    except TypeError:
        raise ArgumentTypeError(f"make_mesh: devices must be a sequence of XLA devices, got {type(devices).__name__}") from None
    if any(s < 1 for s in shape):
        raise ShapeError(f"make_mesh: mesh axis sizes must be >= 1, got {shape}")
    if len(shape) != len(names):
        raise ShapeError(f"make_mesh: mesh shape {shape} has {len(shape)} axes but {len(names)} axis names {names!r}")
    if math.prod(shape) != len(devs):
        raise ShapeError(f"make_mesh: mesh shape {shape} needs {math.prod(shape)} devices, {len(devs)} are given (available XLA devices: {device_count()})")
    arr = np.empty(len(devs), dtype=object)
    arr[:] = devs
    return Mesh(arr.reshape(shape), names)


class NamedSharding:
    """An array laid out over ``mesh`` by ``spec`` (``jax.sharding.NamedSharding``).

    Raises:
        InvalidArgumentError: ``spec`` names an axis ``mesh`` lacks, or uses an axis twice.

    Example:
        >>> mesh = qb.sharding.make_mesh((1,), ("batch",))
        >>> NamedSharding(mesh, P("batch")).shard_shape((8, 3))
        (8, 3)
    """

    def __init__(self, mesh, spec=None):
        if not isinstance(mesh, Mesh):
            raise ArgumentTypeError(f"NamedSharding: mesh must be a qb.sharding.Mesh, got {type(mesh).__name__}")
        if spec is None:
            spec = PartitionSpec()
        elif not isinstance(spec, PartitionSpec):
            if not isinstance(spec, (tuple, list)):
                raise ArgumentTypeError(f"NamedSharding: spec must be a PartitionSpec, got {type(spec).__name__}")
            spec = PartitionSpec(*spec)
        used = []
        for axes in spec.axes():
            for a in axes:
                if a not in mesh.axis_names:
                    raise InvalidArgumentError(
                        f"NamedSharding: {spec!r} names mesh axis {a!r}, which the mesh {mesh!r} does not have (axes: {', '.join(mesh.axis_names)})"
                    )
                if a in used:
                    raise InvalidArgumentError(f"NamedSharding: {spec!r} uses mesh axis {a!r} for more than one dimension")
                used.append(a)
        self.mesh = mesh
        self.spec = spec
        self._jax = None

    def _factors(self):
        sizes = self.mesh.shape
        return [math.prod(sizes[a] for a in axes) for axes in self.spec.axes()]

    def check(self, what, shape):
        """Raises ShapeError when an array of ``shape`` cannot be laid out this way (``what``
        names the array in the message)."""
        shape = tuple(shape)
        if len(self.spec) > len(shape):
            raise ShapeError(f"{what}: {self.spec!r} has {len(self.spec)} entries, more than the rank {len(shape)} of shape {shape}")
        for dim, (n, axes) in enumerate(zip(self._factors(), self.spec.axes())):
            if shape[dim] % n:
                raise ShapeError(
                    f"{what}: dimension {dim} of shape {shape} has size {shape[dim]}, not divisible by {n} "
                    f"(the size of mesh axes {', '.join(map(repr, axes))} of {self.mesh!r} that {self.spec!r} splits it over)"
                )

    def shard_shape(self, shape):
        """The shape of one device's piece of an array of ``shape``."""
        self.check("shard_shape", shape)
        f = self._factors()
        return tuple(d // f[i] if i < len(f) else d for i, d in enumerate(shape))

    @property
    def is_fully_replicated(self):
        """Whether every device holds the whole array."""
        return all(n == 1 for n in self._factors())

    def sdy(self, ndim):
        """This sharding of a rank-``ndim`` array as a Shardy attribute on mesh ``@mesh``:
        one ``{axes}`` per dimension (``{}``: not split)."""
        dims = []
        for i in range(ndim):
            axes = self.spec.axes()[i] if i < len(self.spec) else ()
            dims.append("{" + ", ".join(f'"{a}"' for a in axes) + "}")
        return "#sdy.sharding<@mesh, [" + ", ".join(dims) + "]>"

    @property
    def jax_sharding(self):
        """The same sharding as a ``jax.sharding.NamedSharding``."""
        if self._jax is None:
            jax = _jax()
            self._jax = jax.sharding.NamedSharding(self.mesh.jax_mesh, jax.sharding.PartitionSpec(*self.spec))
        return self._jax

    def _key(self):
        axes = list(self.spec.axes())
        while axes and not axes[-1]:  # P("b") == P("b", None)
            axes.pop()
        return (self.mesh, tuple(axes))

    def __eq__(self, other):
        return isinstance(other, NamedSharding) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r})"


def device_put(x, sharding):
    """``x`` (a Tensor, NumPy array or XLA array) as an XLA array laid out by ``sharding``:
    each device gets its piece, and it stays there between calls of ``qb.jit(...,
    resident=True)`` functions. With several processes every process passes the same global
    value (each keeps only its own devices' pieces).

    Raises:
        ShapeError: ``x``'s shape cannot be split as ``sharding`` says.

    Example:
        >>> a = qb.sharding.device_put(qb.ones((4, 2)), NamedSharding(qb.sharding.make_mesh((1,), "b"), P("b")))
        >>> a.shape
        (4, 2)
    """
    if not isinstance(sharding, NamedSharding):
        raise ArgumentTypeError(f"device_put: sharding must be a qb.sharding.NamedSharding, got {type(sharding).__name__}")
    return _put(x, sharding, "device_put")


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
    """A global XLA array laid out by ``sharding`` from this process's part of it, as
    ``jax.make_array_from_process_local_data``: with several processes each one loads only
    its slice of the batch (the rows its devices hold under ``sharding``). ``global_shape``
    defaults to the local shape scaled by the number of processes along the sharded
    dimensions (JAX's rule).

    Example:
        >>> s = NamedSharding(qb.sharding.make_mesh((1,), "b"), P("b"))
        >>> qb.sharding.make_array_from_process_local_data(s, qb.ones((4, 2))).shape
        (4, 2)
    """
    if not isinstance(sharding, NamedSharding):
        raise ArgumentTypeError(
            f"make_array_from_process_local_data: sharding must be a qb.sharding.NamedSharding, got {type(sharding).__name__}"
        )
    jax = _jax()
    h = _host(local_data, "make_array_from_process_local_data")
    shape = None
    if global_shape is not None:
        try:
            shape = tuple(global_shape)
        except TypeError:
            shape = (None,)
        if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0 for d in shape):
            raise ArgumentTypeError(f"make_array_from_process_local_data: global_shape must be a sequence of ints >= 0, got {global_shape!r}")
        shape = tuple(int(d) for d in shape)
        sharding.check("make_array_from_process_local_data", shape)
    with jax.enable_x64(True):
        try:
            return jax.make_array_from_process_local_data(sharding.jax_sharding, h, shape)
        except ValueError as e:
            raise ShapeError(f"make_array_from_process_local_data: local data of shape {h.shape} for {sharding!r}: {e}") from None


def _host(x, what):
    """A NumPy view of a Tensor / NumPy value (for making XLA arrays), of a Quabla dtype."""
    if not isinstance(x, (_q.Tensor, np.ndarray, np.generic)):
        raise ArgumentTypeError(f"{what}: expected a Tensor, a NumPy array or an XLA array, got {type(x).__name__}")
    h = np.asarray(x)
    _dt.dtype(h.dtype)
    return h


def _put(x, sharding, what):
    """``x`` as a global XLA array laid out by ``sharding`` (a NamedSharding)."""
    jax = _jax()
    js = sharding.jax_sharding
    with jax.enable_x64(True):
        if isinstance(x, jax.Array):
            sharding.check(what, x.shape)
            if x.sharding.is_equivalent_to(js, x.ndim):
                return x
            return jax.device_put(x, js)
        h = _host(x, what)
        sharding.check(what, h.shape)
        return jax.make_array_from_callback(h.shape, js, lambda idx: h[idx])
