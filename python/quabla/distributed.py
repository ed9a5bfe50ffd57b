"""``qb.distributed``: data-parallel gradients over XLA devices, and several processes.

:func:`value_and_grad` splits the batch arguments on axis 0 over the devices, evaluates the
loss per shard and reduces the losses and the replicated parameters' gradients over the
devices; XLA's SPMD partitioner turns that reduction into an all-reduce. :func:`initialize`
joins this process to a multi-process run (``jax.distributed``); the devices of every
process then form one mesh. :func:`all_reduce` reduces one array per local GPU through NCCL
(host arrays are reduced on the host). docs/distributed.md has the details.

Example:
    >>> import quabla as qb
    >>> loss = lambda w, x: qb.mean((x @ w) ** 2)
    >>> vg = qb.distributed.value_and_grad(loss, devices=1, shard_argnums=1)
    >>> v, g = vg(qb.ones((2,)), qb.ones((4, 2)))
    >>> v.item(), g.tolist()
    (4.0, [4.0, 4.0])
"""

import numpy as np

from . import _quabla as _q
from . import tree as _tree
from ._quabla import Tensor
from ._ops import mean, reshape, sum as _sum
from ._trace import Tracer
from ._trace import current as _current
from ._transforms import value_and_grad as _value_and_grad
from ._transforms import vmap
from .errors import ArgumentTypeError, DTypeError, InvalidArgumentError, ShapeError, UnsupportedOperationError
from .sharding import Mesh, NamedSharding, PartitionSpec, _jax, device_count, devices as _devices, make_mesh, process_count, process_index

__all__ = ["all_reduce", "initialize", "shutdown", "value_and_grad", "process_index", "process_count"]

_REDUCTIONS = {"mean": mean, "sum": _sum}


def _mesh(devices):
    if isinstance(devices, Mesh):
        return devices
    if isinstance(devices, (int, np.integer)) and not isinstance(devices, bool):
        n = int(devices)
        avail = device_count()
        if not 1 <= n <= avail:
            raise ShapeError(f"distributed.value_and_grad: devices={n}, but {avail} XLA devices are available (and at least 1 is needed)")
        return make_mesh((n,), ("batch",), _devices()[:n])
    try:
        devs = list(devices)
    except TypeError:
        raise ArgumentTypeError(
            f"distributed.value_and_grad: devices must be a count, a sequence of XLA devices or a qb.sharding.Mesh, got {type(devices).__name__}"
        ) from None
    arr = np.empty(len(devs), dtype=object)
    arr[:] = devs
    return Mesh(arr, ("batch",))


class _DataParallel:
    """The function :func:`value_and_grad` returns."""

    def __init__(self, fun, devices, shard_argnums, argnums, reduction, resident):
        if not callable(fun):
            raise ArgumentTypeError(f"distributed.value_and_grad: expected a callable, got {type(fun).__name__}")
        if not isinstance(reduction, str) or reduction not in _REDUCTIONS:
            raise InvalidArgumentError(f"distributed.value_and_grad: reduction must be 'mean' or 'sum', got {reduction!r}")
        try:
            shard = (shard_argnums,) if isinstance(shard_argnums, (int, np.integer)) else tuple(shard_argnums)
        except TypeError:
            shard = ()
        if not shard or not all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) and i >= 0 for i in shard):
            raise InvalidArgumentError(f"distributed.value_and_grad: shard_argnums must be non-negative ints (at least one), got {shard_argnums!r}")
        self.fun = fun
        self.mesh = _mesh(devices)
        self.n = self.mesh.size
        self.shard_argnums = tuple(sorted(set(int(i) for i in shard)))
        self.reduction = reduction
        self.resident = bool(resident)
        self.batch = NamedSharding(self.mesh, PartitionSpec(self.mesh.axis_names if len(self.mesh.axis_names) > 1 else self.mesh.axis_names[0]))
        self.replicated = NamedSharding(self.mesh)
        self.global_value_and_grad = _value_and_grad(self._reduced, argnums=argnums)
        self._jitted = {}
        self.__name__ = f"distributed_value_and_grad_{getattr(fun, '__name__', 'fun')}"

    def _reduced(self, *args):
        """The loss of the whole batch: ``fun`` on each device's shard, reduced over shards."""
        n = self.n
        if n == 1:  # one shard: the reduction is the identity (and the program has no batch axis)
            return self.fun(*args)
        split = [
            _tree.map(lambda a: reshape(a, (n, a.shape[0] // n) + tuple(a.shape[1:])), a) if i in self.shard_argnums else a
            for i, a in enumerate(args)
        ]
        in_axes = tuple(0 if i in self.shard_argnums else None for i in range(len(args)))
        per_shard = vmap(self.fun, in_axes=in_axes)(*split)
        return _REDUCTIONS[self.reduction](per_shard, axis=0)

    def _check(self, args):
        for i in self.shard_argnums:
            if i >= len(args):
                raise InvalidArgumentError(f"distributed.value_and_grad: shard_argnums {self.shard_argnums} names argument {i}, but {len(args)} are given")
            leaves = _tree.flatten_with_path(args[i])[0]
            if not leaves:
                raise InvalidArgumentError(f"distributed.value_and_grad: batch argument {i} holds no arrays (got {type(args[i]).__name__})")
            for path, a in leaves:
                if not (isinstance(a, (Tensor, np.ndarray, Tracer)) or hasattr(a, "sharding")):
                    raise ArgumentTypeError(
                        f"distributed.value_and_grad: batch argument {i}{_tree.keystr(path)} must be an array, got {type(a).__name__}"
                    )
                shape = tuple(a.shape)
                if len(shape) == 0 or shape[0] % self.n:
                    raise ShapeError(
                        f"distributed.value_and_grad: batch argument {i}{_tree.keystr(path)} has shape {shape}; its axis 0 must split "
                        f"evenly over the {self.n} devices of {self.mesh!r}"
                    )

    def __call__(self, *args):
        self._check(args)
        if _current() is not None or any(type(x) is Tracer for x in _tree.leaves(args)):
            return self.global_value_and_grad(*args)
        f = self._jitted.get(len(args))
        if f is None:
            from .jit import jit

            in_sh = tuple(self.batch if i in self.shard_argnums else self.replicated for i in range(len(args)))
            f = jit(self.global_value_and_grad, in_shardings=in_sh, out_shardings=self.replicated, resident=self.resident)
            self._jitted[len(args)] = f
        return f(*args)

    def lower(self, *args):
        """The xla jit's :class:`~quabla._xla.XlaLowered` for these arguments (its
        ``compile().as_text()`` shows the all-reduce)."""
        self(*args)
        return self._jitted[len(args)].lower(*args)


def value_and_grad(fun, *, devices, shard_argnums, argnums=0, reduction="mean", resident=False):
    """Data-parallel ``value_and_grad`` of a scalar loss over XLA devices.

    The arguments in ``shard_argnums`` (the batch: every leaf's axis 0) are split evenly over
    the devices; the others (the parameters) are replicated. ``fun`` runs on each shard; its
    values and the gradients with respect to ``argnums`` are reduced over the shards
    (``reduction="mean"``: averaged, as a per-batch mean loss needs to equal the loss of the
    whole batch; ``"sum"``: added) by an XLA all-reduce. Quabla traces and differentiates
    the program; XLA partitions and runs it.

    Args:
        fun: ``fun(*args) -> scalar``, the loss of one batch.
        devices: a device count (the first ones of :func:`qb.sharding.devices`), a sequence of
            XLA devices, or a :class:`qb.sharding.Mesh` (the batch is split over all its axes).
        shard_argnums: an int or ints: the batch arguments.
        argnums: what to differentiate, as in :func:`qb.value_and_grad`.
        reduction: ``"mean"`` or ``"sum"``.
        resident: return XLA arrays that stay on the devices instead of Tensors.

    Returns:
        A function of ``fun``'s arguments returning ``(value, grads)``, with results
        replicated on every device. Called inside a trace (another ``qb.jit``), it adds the
        same computation to that program, so a training step jitted with the same shardings
        partitions the same way.

    Raises:
        ShapeError: a batch argument's axis 0 does not split evenly over the devices, or more
            devices are asked for than exist.
        InvalidArgumentError: a bad ``reduction`` or ``shard_argnums``.

    Example:
        >>> vg = qb.distributed.value_and_grad(lambda w, x: qb.sum(x * w), devices=1, shard_argnums=1, reduction="sum")
        >>> vg(qb.array(2.0), qb.ones((4,)))[1].item()
        4.0
    """
    return _DataParallel(fun, devices, shard_argnums, argnums, reduction, resident)


def initialize(coordinator_address=None, num_processes=None, process_id=None, local_device_ids=None, *, initialization_timeout=300):
    """Joins this process to a run of ``num_processes`` processes coordinated at
    ``coordinator_address`` (``"host:port"`` of process 0), through ``jax.distributed``.
    Call it first, before anything runs on XLA; afterwards :func:`qb.sharding.devices`
    lists the devices of every process and meshes may span them. On a cluster that JAX
    detects (SLURM, ...) the arguments may be omitted.

    Raises:
        InvalidArgumentError: bad counts, or XLA already started in this process.

    Example (two machines):
        qb.distributed.initialize("10.0.0.1:1234", num_processes=2, process_id=0)  # on host 0
        qb.distributed.initialize("10.0.0.1:1234", num_processes=2, process_id=1)  # on host 1
    """
    if num_processes is not None and (not isinstance(num_processes, (int, np.integer)) or num_processes < 1):
        raise InvalidArgumentError(f"distributed.initialize: num_processes must be an int >= 1, got {num_processes!r}")
    if process_id is not None and (not isinstance(process_id, (int, np.integer)) or not 0 <= process_id < (num_processes or process_id + 1)):
        raise InvalidArgumentError(f"distributed.initialize: process_id must be in [0, num_processes={num_processes}), got {process_id!r}")
    jax = _jax()
    try:
        jax.distributed.initialize(
            coordinator_address=coordinator_address,
            num_processes=num_processes,
            process_id=process_id,
            local_device_ids=local_device_ids,
            initialization_timeout=initialization_timeout,
        )
    except (RuntimeError, ValueError) as e:
        raise InvalidArgumentError(f"distributed.initialize: {e}") from None


def shutdown():
    """Leaves the multi-process run (``jax.distributed.shutdown``)."""
    _jax().distributed.shutdown()



_COLLECTIVES = ("sum", "mean", "max", "min", "prod")


def all_reduce(xs, op="sum"):
    """Reduces one array per device across the devices; every device receives the result
    (an all-reduce, as ``jax.lax.psum``/``pmean``/``pmax``/``pmin`` over a device axis, called
    from the host). ``xs`` holds one array per device, all of one shape and dtype: arrays on
    distinct GPUs (``qb.device_put(x, "cuda:N")`` or results of programs compiled for them)
    are reduced by NCCL on the GPUs (one group of ``ncclAllReduce`` calls on their streams;
    result ``r`` stays on ``xs[r]``'s GPU); host arrays (``"cpu"``) are reduced on the host.
    ``op``: ``"sum"``, ``"mean"`` (floats), ``"max"``, ``"min"``, ``"prod"``; bools take
    ``"max"`` (or) and ``"min"`` (and). The order of a float sum is unspecified (NCCL's ring
    or tree on GPUs).

    Raises:
        InvalidArgumentError: an unknown ``op``, no arrays, arrays on different kinds of
            devices, or two arrays on one GPU.
        ShapeError / DTypeError: arrays of different shapes or dtypes, or an ``op`` the
            dtype lacks.
        UnsupportedOperationError: GPU arrays on a machine without NCCL (``.device``).

    Example:
        >>> [y.tolist() for y in qb.distributed.all_reduce([qb.array([1.0, 2.0]), qb.array([3.0, 4.0])])]
        [[4.0, 6.0], [4.0, 6.0]]
    """
    from . import _ops

    if not isinstance(op, str) or op not in _COLLECTIVES:
        raise InvalidArgumentError(f"all_reduce: op must be one of {', '.join(_COLLECTIVES)}, got {op!r}")
    try:
        xs = list(xs)
    except TypeError:
        raise ArgumentTypeError(f"all_reduce: expected a sequence of arrays (one per device), got {type(xs).__name__}") from None
    if not xs:
        raise InvalidArgumentError("all_reduce: needs at least one array")
    if any(isinstance(x, Tracer) for x in xs):
        raise UnsupportedOperationError("all_reduce: runs on concrete arrays across devices, not inside a traced function", op="all_reduce")
    xs = [_ops.asarray(x) for x in xs]
    shape, dtype = xs[0].shape, xs[0].dtype
    for k, x in enumerate(xs):
        if x.shape != shape:
            raise ShapeError(f"all_reduce: array {k} has shape {x.shape}, array 0 {shape}: one shape for every device")
        if x.dtype != dtype:
            raise DTypeError(f"all_reduce: array {k} is {x.dtype}, array 0 {dtype}: one dtype for every device")
    if op == "mean" and not dtype.is_float:
        raise DTypeError(f"all_reduce: op 'mean' takes floats, got {dtype}")
    if op in ("sum", "prod") and dtype == _ops.bool_:
        raise DTypeError(f"all_reduce: op {op!r} is not defined on bool (max is or, min is and)")
    devices = [x.device for x in xs]
    if all(d.startswith("cuda:") for d in devices):
        if len(set(devices)) != len(devices):
            raise InvalidArgumentError(f"all_reduce: one array per GPU, got the devices {devices}")
        return list(_q.nccl_all_reduce(xs, op))
    if any(d != "cpu" for d in devices):
        raise InvalidArgumentError(f"all_reduce: the arrays must all be on GPUs (cuda:N) or all on the host, got the devices {devices}")
    stacked = _ops.stack(xs)
    reduce = {"sum": _ops.sum, "mean": _ops.mean, "max": _ops.max, "min": _ops.min, "prod": _ops.prod}[op]
    r = reduce(stacked, axis=0)
    if r.dtype != dtype:
        # sum/prod of small ints widen in NumPy's rules; the reduction keeps the dtype (NCCL's).
        r = _ops.astype(r, dtype)
    return [r for _ in xs]
