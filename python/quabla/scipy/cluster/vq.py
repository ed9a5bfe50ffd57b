"""``qb.scipy.cluster.vq``: ``jax.scipy.cluster.vq.vq`` built from Quabla ops.

Owns ``vq`` (assigns each observation the index of its nearest code, by Euclidean
distance). Differences from JAX: the codes are int32 (SciPy's dtype, and JAX's without x64;
JAX with x64 gives int64), and the gradient of a distance that is exactly zero is 0 (JAX's
is NaN there).

Example:
    >>> from quabla.scipy.cluster.vq import vq
    >>> codes, dists = vq(qb.array([[0.0], [2.9]]), qb.array([[0.0], [3.0]]))
    >>> codes.tolist(), [round(d, 6) for d in dists.tolist()]
    ([0, 1], [0.0, 0.1])
"""

from ... import _ops as _o
from ... import dtypes as _dt
from ..._indexing import take_along_axis as _take_along_axis
from ..._ops import _shape_str, _to_array, astype
from ...errors import DTypeError, ShapeError

__all__ = ["vq"]


def _real(name, x):
    a = _to_array(x)
    if not (a.dtype.is_float or a.dtype.is_bool or a.dtype.kind in "iu"):
        raise DTypeError(f"vq: {name} must be a real array, got dtype {a.dtype}")
    return a


def vq(obs, code_book, check_finite=True):
    """Assigns each observation the code of ``code_book`` nearest to it (Euclidean distance),
    as ``jax.scipy.cluster.vq.vq``.

    Args:
        obs: observations, shape (M, N) (one per row), or (M,) for M scalar observations.
        code_book: codes, shape (K, N) (one per row), or (K,) for scalar codes; of the rank of
            ``obs``.
        check_finite: unused (as JAX's; no check is made).

    Returns:
        ``(codes, dists)``: int32 indices of shape (M,) in [0, K) (the first nearest code on
        ties) and the distances to those codes, of the float dtype common to the inputs.

    Example:
        >>> from quabla.scipy.cluster.vq import vq
        >>> codes, dists = vq(qb.array([[1.0, 1.0]]), qb.array([[0.0, 0.0], [1.0, 2.0]]))
        >>> codes.tolist(), dists.tolist()
        ([1], [1.0])
    """
    del check_finite  # unused, as JAX's
    o = _real("obs", obs)
    c = _real("code_book", code_book)
    dt = _dt.to_inexact(_dt.result_type("vq", o.dtype, c.dtype))
    o, c = astype(o, dt), astype(c, dt)
    if o.ndim != c.ndim:
        raise ShapeError(f"vq: obs and code_book must have the same rank, got shapes {_shape_str(o.shape)} and {_shape_str(c.shape)}")
    if o.ndim == 1:
        o, c = o[:, None], c[:, None]
    if o.ndim != 2:
        raise ShapeError(f"vq: obs and code_book must be 1-D or 2-D, got shapes {_shape_str(o.shape)} and {_shape_str(c.shape)}")
    if o.shape[1] != c.shape[1]:
        raise ShapeError(
            f"vq: obs and code_book must have the same number of features, got shapes {_shape_str(o.shape)} and {_shape_str(c.shape)}"
        )
    diff = o[:, None, :] - c[None, :, :]
    d2 = _o.sum(diff * diff, axis=-1)
    # sqrt with a zero gradient (rather than NaN) where an observation sits on a code.
    pos = d2 > 0
    dist = _o.where(pos, _o.sqrt(_o.where(pos, d2, 1.0)), 0.0)
    code = astype(_o.argmin(dist, axis=-1), _dt.int32)
    best = _take_along_axis(dist, code[:, None], axis=-1)[:, 0]
    return code, best
