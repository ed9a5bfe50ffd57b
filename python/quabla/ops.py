"""``qb.ops``: ``jax.ops``'s segment reductions (graph message passing, per-segment pooling).

Each is a scatter of the data's rows into ``num_segments`` rows holding the reduction's
identity (``x.at[segment_ids].add(data)`` and its kin: on the CPU a row scatter, one step per
segment id, in index order), so they differentiate, batch and lower as those scatters do.
Ids outside ``[0, num_segments)`` are dropped, as JAX's default mode does.
"""

import numpy as np

from . import _ops as _o
from ._search import _concrete
from .errors import DTypeError, ShapeError

__all__ = ["segment_sum", "segment_prod", "segment_max", "segment_min"]


def _segment(name, combiner, identity, data, segment_ids, num_segments, indices_are_sorted, unique_indices, bucket_size, mode):
    data, ids = _o._to_array(data), _o._to_array(segment_ids)
    if ids.dtype.kind not in "iu":
        raise DTypeError(f"{name}: segment_ids must be integers, got {ids.dtype.name} of shape {ids.shape}")
    if ids.ndim != 1 or data.ndim < 1 or ids.shape[0] != data.shape[0]:
        raise ShapeError(f"{name}: segment_ids must be 1-D with one id per row of data (its leading axis), got segment_ids of shape {ids.shape} and data of shape {data.shape}")
    if mode not in (None, "drop", "promise_in_bounds", "clip"):
        raise ShapeError(f"{name}: mode must be None, 'drop', 'promise_in_bounds' or 'clip', got {mode!r}")
    # Accepted for JAX compatibility: hints that do not change the result.
    del indices_are_sorted, unique_indices, bucket_size
    if num_segments is None:
        num_segments = int(_concrete(name, ids, "segment_ids", "num_segments", "to count the segments").max()) + 1 if ids.shape[0] else 0
    n = int(num_segments)
    if n < 0:
        raise ShapeError(f"{name}: num_segments must be >= 0, got {num_segments}")
    out = _o.full((n,) + tuple(data.shape[1:]), identity(data.dtype), data.dtype)
    # Segment ids are not Python indices: a negative one is out of range (dropped, or clamped
    # to 0), where `.at[]` would count it from the end.
    ids = _o.clip(ids, 0, max(n - 1, 0)) if mode == "clip" else _o.where(ids < 0, n, ids)
    return getattr(out.at[ids], combiner)(data, mode="drop")


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(np.dtype(dtype.name)).min


def _highest(dtype):
    return np.inf if dtype.kind == "f" else np.iinfo(np.dtype(dtype.name)).max


def segment_sum(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False, bucket_size=None, mode=None):
    """The sum of the rows of ``data`` in each segment (``jax.ops.segment_sum``).

    Args:
        data: array whose leading axis is segmented.
        segment_ids: 1-D integer array, one segment per row of ``data``.
        num_segments: the segments of the result (needed under jit); None counts them from
            the largest id.
        indices_are_sorted, unique_indices, bucket_size: accepted for compatibility.
        mode: None, 'drop' or 'promise_in_bounds' drop out-of-range ids (negative ones too);
            'clip' clamps them.

    Returns:
        Array of shape ``(num_segments,) + data.shape[1:]``; empty segments are 0.

    Example:
        >>> qb.ops.segment_sum(qb.array([1.0, 2.0, 3.0, 4.0]), qb.array([0, 0, 2, 1]), 3).tolist()
        [3.0, 4.0, 3.0]
    """
    return _segment("segment_sum", "add", lambda d: 0, data, segment_ids, num_segments, indices_are_sorted, unique_indices, bucket_size, mode)


def segment_prod(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False, bucket_size=None, mode=None):
    """The product of the rows of ``data`` in each segment (``jax.ops.segment_prod``); empty
    segments are 1.

    Example:
        >>> qb.ops.segment_prod(qb.array([2.0, 3.0, 4.0]), qb.array([0, 0, 1]), 3).tolist()
        [6.0, 4.0, 1.0]
    """
    return _segment("segment_prod", "multiply", lambda d: 1, data, segment_ids, num_segments, indices_are_sorted, unique_indices, bucket_size, mode)


def segment_max(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False, bucket_size=None, mode=None):
    """The maximum of the rows of ``data`` in each segment (``jax.ops.segment_max``); empty
    segments hold the dtype's lowest value (-inf for floats).

    Example:
        >>> qb.ops.segment_max(qb.array([2.0, 5.0, 4.0]), qb.array([1, 1, 0]), 2).tolist()
        [4.0, 5.0]
    """
    return _segment("segment_max", "max", _lowest, data, segment_ids, num_segments, indices_are_sorted, unique_indices, bucket_size, mode)


def segment_min(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False, bucket_size=None, mode=None):
    """The minimum of the rows of ``data`` in each segment (``jax.ops.segment_min``); empty
    segments hold the dtype's highest value (inf for floats).

    Example:
        >>> qb.ops.segment_min(qb.array([2.0, 5.0, 4.0]), qb.array([1, 1, 0]), 2).tolist()
        [4.0, 2.0]
    """
    return _segment("segment_min", "min", _highest, data, segment_ids, num_segments, indices_are_sorted, unique_indices, bucket_size, mode)
