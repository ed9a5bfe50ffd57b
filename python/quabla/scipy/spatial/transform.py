"""``qb.scipy.spatial.transform``: ``jax.scipy.spatial.transform``'s ``Rotation`` and
``Slerp`` built from Quabla ops.

``Rotation`` is a NamedTuple with one field, ``quat`` (scalar-last unit quaternions, shape
(4,) for a single rotation or (..., 4) for a batch), so it is a pytree as JAX's: it passes
through ``qb.jit``, ``qb.grad`` and ``qb.vmap``. Every map is vectorised over the leading
dimensions and keeps the input's float dtype (integer input computes in float, as JAX's).
Conventions are SciPy's: Euler sequences in lower case ('xyz') are extrinsic, in upper
case ('XYZ') intrinsic; ``as_euler`` gives the middle angle in [0, pi] (symmetric sequences) or
[-pi/2, pi/2] and, at gimbal lock, sets the third angle to zero, as JAX's and SciPy's.
``Slerp`` is a NamedTuple too (``Slerp.init(times, rotations)``, then ``slerp(times)``).

Differences from JAX: ``Rotation.random`` is implemented (JAX raises NotImplementedError):
unit quaternions from normalised Gaussian 4-vectors, uniform over rotations;
``Rotation.identity`` takes ``num`` (JAX asserts it is None); ``from_quat`` takes SciPy's
``scalar_first``; ``concatenate`` stacks single rotations as one-rotation batches (JAX
concatenates their quaternions into an (8,) array); a single-axis ``from_euler`` needs
angles whose last extent is 1 or scalar angles (as JAX); the small-angle branches of the
rotation-vector maps and ``magnitude`` have finite gradients at the identity (JAX's are NaN
there); ``identity``'s and ``random``'s ``dtype`` must be a float dtype; ``from_euler`` takes
nested lists as well as arrays; bad arguments raise Quabla's typed errors (``len`` or an
index of a single rotation an ArgumentTypeError, a TypeError as JAX's; ``mean`` of a single
rotation a ShapeError).

Example:
    >>> from quabla.scipy.spatial.transform import Rotation
    >>> r = Rotation.from_euler('z', 90.0, degrees=True)
    >>> [round(v, 6) for v in r.as_rotvec().tolist()]
    [0.0, 0.0, 1.570796]
"""

import math
import re
from typing import NamedTuple

import numpy as np

from ... import _ops as _o
from ... import dtypes as _dt
from ... import linalg as _la
from ... import random as _random
from ..._numpy import arctan2 as _atan2
from ..._numpy import hypot as _hypot
from ..._ops import _floatify, _shape_str, _to_array, astype
from ..._search import searchsorted as _searchsorted
from ..._trace import is_array
from ...errors import ArgumentTypeError, DTypeError, InvalidArgumentError, InvalidIndexError, QuablaError, ShapeError

__all__ = ["Rotation", "Slerp"]

_EPS_EULER = 1e-7  # JAX's and SciPy's gimbal-lock tolerance (radians, any dtype)
_SMALL_ANGLE = 1e-3  # below it the rotation-vector scales use their Taylor series


# ---------------------------------------------------------------------------------------------
# Arguments


def _float_arg(fname, name, x, tail):
    """``x`` as a float array whose trailing shape is ``tail`` (leading dims are a batch)."""
    if isinstance(x, (str, bytes)) or x is None or callable(x) and not is_array(x):
        raise ArgumentTypeError(f"{fname}: {name} must be an array, got {type(x).__name__}")
    a = _to_array(x)
    a = _floatify(a)
    if a.ndim < len(tail) or tuple(a.shape[a.ndim - len(tail):]) != tuple(tail):
        want = "(..., " + ", ".join(str(t) for t in tail) + ")"
        raise ShapeError(f"{fname}: {name} must have shape {want}, got shape {_shape_str(a.shape)}")
    return a


def _flag(fname, name, v, traced_ok=True):
    """A Python bool for a static flag, or a boolean array (a traced flag) where allowed."""
    if isinstance(v, (bool, np.bool_)) or (isinstance(v, (int, np.integer)) and not isinstance(v, bool)):
        return bool(v)
    if traced_ok and is_array(v) and v.ndim == 0:
        return v if v.dtype.is_bool else v != 0
    raise ArgumentTypeError(f"{fname}: {name} must be a bool, got {type(v).__name__}")


def _scaled(x, flag, factor):
    """``x * factor`` where ``flag`` holds (a static bool or a boolean scalar array)."""
    if flag is True:
        return x * factor
    if flag is False:
        return x
    return _o.where(flag, x * factor, x)


_DEG = math.pi / 180.0
_RAD = 180.0 / math.pi


def _seq_arg(fname, seq, lengths):
    """(lower-case axes as indices, extrinsic) for an Euler sequence, validated as SciPy's."""
    if not isinstance(seq, str):
        raise ArgumentTypeError(f"{fname}: seq must be a string such as 'xyz' or 'ZYX', got {type(seq).__name__}")
    if len(seq) not in lengths:
        want = "3 axes" if lengths == (3,) else "1 to 3 axes"
        raise InvalidArgumentError(f"{fname}: seq must name {want}, got {seq!r}")
    intrinsic = re.fullmatch(r"[XYZ]+", seq) is not None
    extrinsic = re.fullmatch(r"[xyz]+", seq) is not None
    if not (intrinsic or extrinsic):
        raise InvalidArgumentError(f"{fname}: seq must use axes from 'xyz' (extrinsic) or from 'XYZ' (intrinsic), not both, got {seq!r}")
    if any(seq[i] == seq[i + 1] for i in range(len(seq) - 1)):
        raise InvalidArgumentError(f"{fname}: consecutive axes of seq must differ, got {seq!r}")
    return ["xyz".index(c) for c in seq.lower()], extrinsic


def _dtype_arg(fname, dtype):
    try:
        d = _dt.dtype(dtype)
    except Exception as e:  # a typed error of dtypes, or anything a hostile value raises
        raise DTypeError(f"{fname}: dtype must be a float dtype, got {dtype!r}") from e
    if not d.is_float:
        raise DTypeError(f"{fname}: dtype must be a float dtype, got {d}")
    return d


def _num_arg(fname, num):
    if num is None:
        return None
    if isinstance(num, (bool, np.bool_)) or not isinstance(num, (int, np.integer)):
        raise ArgumentTypeError(f"{fname}: num must be None or a positive int, got {type(num).__name__}")
    if not 0 < int(num) < 2**31:
        raise InvalidArgumentError(f"{fname}: num must be a positive int, got {num}")
    return int(num)


# ---------------------------------------------------------------------------------------------
# Quaternion maps on (..., 4) arrays (scalar last)


def _parts(q, n=4):
    return [q[..., i] for i in range(n)]


def _join(parts):
    return _o.stack(parts, axis=-1)


def _safe_norm(v):
    """|v| over the last axis, with a zero (not NaN) gradient at v = 0."""
    n2 = _o.sum(v * v, axis=-1)
    pos = n2 > 0
    return _o.where(pos, _o.sqrt(_o.where(pos, n2, 1.0)), 0.0)


def _normalize(q):
    return q / _o.sqrt(_o.sum(q * q, axis=-1))[..., None]


def _compose(p, q):
    """The Hamilton product p q: the rotation q followed by p."""
    px, py, pz, pw = _parts(p)
    qx, qy, qz, qw = _parts(q)
    return _join([
        pw * qx + qw * px + (py * qz - pz * qy),
        pw * qy + qw * py + (pz * qx - px * qz),
        pw * qz + qw * pz + (px * qy - py * qx),
        pw * qw - px * qx - py * qy - pz * qz,
    ])


def _inv(q):
    x, y, z, w = _parts(q)
    return _join([-x, -y, -z, w])


def _as_matrix(q):
    x, y, z, w = _parts(q)
    x2, y2, z2, w2 = x * x, y * y, z * z, w * w
    xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
    rows = [
        [x2 - y2 - z2 + w2, 2 * (xy - zw), 2 * (xz + yw)],
        [2 * (xy + zw), -x2 + y2 - z2 + w2, 2 * (yz - xw)],
        [2 * (xz - yw), 2 * (yz + xw), -x2 - y2 + z2 + w2],
    ]
    return _o.stack([_join(r) for r in rows], axis=-2)


def _from_matrix(m):
    """Shepperd's method, as SciPy's: the candidate built around the largest of the diagonal
    and the trace, normalised."""
    e = [[m[..., r, c] for c in range(3)] for r in range(3)]
    tr = e[0][0] + e[1][1] + e[2][2]
    choice = _o.argmax(_join([e[0][0], e[1][1], e[2][2], tr]), axis=-1)
    quat = _join([e[2][1] - e[1][2], e[0][2] - e[2][0], e[1][0] - e[0][1], 1 + tr])
    for i in (2, 1, 0):
        j, k = (i + 1) % 3, (i + 2) % 3
        c = [None] * 4
        c[i] = 1 - tr + 2 * e[i][i]
        c[j] = e[j][i] + e[i][j]
        c[k] = e[k][i] + e[i][k]
        c[3] = e[k][j] - e[j][k]
        quat = _o.where((choice == i)[..., None], _join(c), quat)
    return _normalize(quat)


def _from_rotvec(rv):
    a2 = _o.sum(rv * rv, axis=-1)
    angle = _safe_norm(rv)
    small = angle <= _SMALL_ANGLE
    safe = _o.where(small, 1.0, angle)
    scale = _o.where(small, 0.5 - a2 / 48 + a2 * a2 / 3840, _o.sin(safe / 2) / safe)
    return _o.concatenate([scale[..., None] * rv, _o.cos(angle / 2)[..., None]], axis=-1)


def _as_rotvec(q, degrees):
    q = _o.where((q[..., 3] < 0)[..., None], -q, q)  # w >= 0: angle in [0, pi]
    v = q[..., :3]
    angle = 2 * _atan2(_safe_norm(v), q[..., 3])
    a2 = angle * angle
    small = angle <= _SMALL_ANGLE
    safe = _o.where(small, 1.0, angle)
    scale = _o.where(small, 2 + a2 / 12 + 7 * a2 * a2 / 2880, safe / _o.sin(safe / 2))
    return _scaled(scale, degrees, _RAD)[..., None] * v


def _from_mrp(p):
    s = _o.sum(p * p, axis=-1)[..., None] + 1
    return _o.concatenate([2 * p, 2 - s], axis=-1) / s


def _as_mrp(q):
    w = q[..., 3:]
    v = q[..., :3]
    neg = w < 0  # use the quaternion with w >= 0
    return _o.where(neg, -v, v) / (1 + _o.where(neg, -w, w))


def _magnitude(q):
    return 2 * _atan2(_safe_norm(q[..., :3]), _o.abs(q[..., 3]))


def _canonical(q):
    x, y, z, w = _parts(q)
    neg = (w < 0) | ((w == 0) & ((x < 0) | ((x == 0) & ((y < 0) | ((y == 0) & (z < 0))))))
    return _o.where(neg[..., None], -q, q)


def _from_euler(angles, axes, intrinsic):
    """The composition of the elementary rotations (intrinsic: each about the rotated frame's
    axis, so later ones compose on the right)."""
    result = None
    for n, ax in enumerate(axes):
        half = angles[..., n] / 2
        zero = _o.zeros_like(half)
        parts = [zero, zero, zero, _o.cos(half)]
        parts[ax] = _o.sin(half)
        q = _join(parts)
        if result is None:
            result = q
        else:
            result = _compose(result, q) if intrinsic else _compose(q, result)
    return result


def _as_euler(q, axes, extrinsic):
    """The Euler angles of ``q`` for the static sequence ``axes`` (Bernardes and Viollet's
    quaternion method, as SciPy's and JAX's, including their gimbal-lock handling)."""
    i, j, k = axes if extrinsic else axes[::-1]
    symmetric = i == k
    if symmetric:
        k = 3 - i - j
    sign = (i - j) * (j - k) * (k - i) // 2
    c = _parts(q)
    if symmetric:
        a, b, cc, d = c[3], c[i], c[j], c[k] * sign
    else:
        a, b, cc, d = c[3] - c[j], c[i] + c[k] * sign, c[j] + c[3], c[k] * sign - c[i]
    middle = 2 * _atan2(_hypot(cc, d), _hypot(a, b))
    lock_zero = _o.abs(middle) <= _EPS_EULER
    lock_pi = _o.abs(middle - math.pi) <= _EPS_EULER
    regular = ~(lock_zero | lock_pi)
    half_sum = _atan2(b, a)
    half_diff = _atan2(d, cc)
    # At gimbal lock the third angle is 0 and the first carries the whole rotation.
    locked_first = _o.where(lock_zero, 2 * half_sum, 2 * half_diff * (-1 if extrinsic else 1))
    zero = _o.zeros_like(middle)
    first, third = half_sum - half_diff, half_sum + half_diff
    if extrinsic:
        out0 = _o.where(regular, first, locked_first)
        out2 = _o.where(regular, third, zero)
    else:
        out0 = _o.where(regular, third, locked_first)
        out2 = _o.where(regular, first, zero)
    if not symmetric:
        if extrinsic:
            out2 = out2 * sign
        else:
            out0 = out0 * sign
        middle = middle - math.pi / 2
    angles = _join([out0, middle, out2])
    return _o.remainder(angles + math.pi, 2 * math.pi) - math.pi


def _apply(m, v, inverse):
    if inverse is True:
        m = _o.swapaxes(m, -1, -2)
    elif inverse is not False:
        m = _o.where(inverse, _o.swapaxes(m, -1, -2), m)
    return _o.sum(m * v[..., None, :], axis=-1)


def _batch(fname, *shapes):
    """The broadcast of batch shapes, or a ShapeError naming them."""
    out = ()
    for s in shapes:
        try:
            out = tuple(np.broadcast_shapes(out, tuple(s)))
        except ValueError:
            raise ShapeError(
                f"{fname}: batch shapes {', '.join(_shape_str(t) for t in shapes)} do not broadcast"
            ) from None
    return out


# ---------------------------------------------------------------------------------------------
# Rotation


class Rotation(NamedTuple):
    """Rotations in 3 dimensions (``jax.scipy.spatial.transform.Rotation``): a NamedTuple of
    scalar-last quaternions ``quat``, shape (4,) for one rotation or (..., 4) for a batch.

    Build one with the ``from_*`` class methods (``Rotation(quat)`` stores ``quat`` as
    given, unnormalised). A pytree: it passes through ``qb.jit``, ``qb.grad`` and
    ``qb.vmap``.

    Example:
        >>> from quabla.scipy.spatial.transform import Rotation, Slerp
        >>> r = Rotation.from_euler('z', 90.0, degrees=True)
        >>> [round(v, 6) for v in r.apply(qb.array([1.0, 0.0, 0.0])).tolist()]
        [0.0, 1.0, 0.0]
    """

    quat: object

    # -- constructors ---------------------------------------------------------------------

    @classmethod
    def concatenate(cls, rotations):
        """Joins rotations into one batch along the first axis.

        Args:
            rotations: a sequence of ``Rotation`` (single rotations count as batches of one).

        Returns:
            A ``Rotation`` holding all of them in order.

        Example:
            >>> from quabla.scipy.spatial.transform import Rotation, Slerp
            >>> r = Rotation.concatenate([Rotation.identity(), Rotation.identity(2)])
            >>> len(r)
            3
        """
        fname = "Rotation.concatenate"
        if isinstance(rotations, Rotation) or not isinstance(rotations, (list, tuple)):
            raise ArgumentTypeError(f"{fname}: rotations must be a list or tuple of Rotation, got {type(rotations).__name__}")
        if not rotations:
            raise InvalidArgumentError(f"{fname}: rotations must not be empty")
        quats = []
        for n, r in enumerate(rotations):
            if not isinstance(r, Rotation):
                raise ArgumentTypeError(f"{fname}: rotations[{n}] must be a Rotation, got {type(r).__name__}")
            q = _float_arg(fname, f"rotations[{n}].quat", r.quat, (4,))
            quats.append(q[None] if q.ndim == 1 else q)
        tails = {tuple(q.shape[1:]) for q in quats}
        if len(tails) > 1:
            raise ShapeError(f"{fname}: rotations must agree past the first axis, got quat shapes "
                             + ", ".join(_shape_str(q.shape) for q in quats))
        return cls(_o.concatenate(quats, axis=0))

    @classmethod
    def from_euler(cls, seq, angles, degrees=False):
        """Rotations from Euler angles.

        Args:
            seq: up to 3 axes, all from 'xyz' (extrinsic: about the fixed frame) or all from
                'XYZ' (intrinsic: about the rotating frame), no axis twice in a row.
            angles: shape (..., len(seq)) (a scalar for a single axis); one rotation per
                leading index.
            degrees: angles in degrees (default radians).

        Returns:
            A ``Rotation`` of batch shape ``angles.shape[:-1]``.

        Example:
            >>> from quabla.scipy.spatial.transform import Rotation, Slerp
            >>> q = Rotation.from_euler('x', 180.0, degrees=True).as_quat()
            >>> [round(v, 6) for v in q.tolist()]
            [1.0, 0.0, 0.0, 0.0]
        """
        fname = "Rotation.from_euler"
        axes, extrinsic = _seq_arg(fname, seq, (1, 2, 3))
        degrees = _flag(fname, "degrees", degrees)
        if isinstance(angles, (str, bytes)) or angles is None:
            raise ArgumentTypeError(f"{fname}: angles must be an array, got {type(angles).__name__}")
        a = _floatify(_to_array(angles))
        if a.ndim == 0:
            a = a[None]
        if a.shape[-1] != len(axes):
            raise ShapeError(f"{fname}: angles must have shape (..., {len(axes)}) for seq {seq!r}, got shape {_shape_str(a.shape)}")
        a = _scaled(a, degrees, _DEG)
        return cls(_from_euler(a, axes, not extrinsic))

    @classmethod
    def from_matrix(cls, matrix):
        """Rotations from rotation matrices.

        Args:
            matrix: shape (..., 3, 3), orthogonal with determinant 1.

        Returns:
            A ``Rotation`` of batch shape ``matrix.shape[:-2]``.

        Example:
            >>> from quabla.scipy.spatial.transform import Rotation, Slerp
            >>> Rotation.from_matrix(qb.eye(3)).as_quat().tolist()
            [0.0, 0.0, 0.0, 1.0]
        """
        return cls(_from_matrix(_float_arg("Rotation.from_matrix", "matrix", matrix, (3, 3))))

    @classmethod
    def from_mrp(cls, mrp):
        """Rotations from Modified Rodrigues Parameters (axis * tan(angle / 4)).

        Args:
            mrp: shape (..., 3).

        Returns:
            A ``Rotation`` of batch shape ``mrp.shape[:-1]``.

        Example:
            >>> from quabla.scipy.spatial.transform import Rotation, Slerp
            >>> Rotation.from_mrp(qb.array([0.0, 0.0, 1.0])).as_quat().tolist()
            [0.0, 0.0, 1.0, 0.0]
        """
        return cls(_from_mrp(_float_arg("Rotation.from_mrp", "mrp", mrp, (3,))))

    @classmethod
    def from_quat(cls, quat, scalar_first=False):
        """Rotations from quaternions (normalised here).

        Args:
            quat: shape (..., 4), scalar last (x, y, z, w).
            scalar_first: SciPy's option (not JAX's): quat is (w, x, y, z).

        Returns:
            A ``Rotation`` of batch shape ``quat.shape[:-1]``.

        Example:
            >>> from quabla.scipy.spatial.transform import Rotation, Slerp
            >>> Rotation.from_quat(qb.array([0.0, 0.0, 0.0, 2.0])).as_quat().tolist()
            [0.0, 0.0, 0.0, 1.0]
        """
        fname = "Rotation.from_quat"
        scalar_first = _flag(fname, "scalar_first", scalar_first, traced_ok=False)
        q = _float_arg(fname, "quat", quat, (4,))
        if scalar_first:
            q = _o.concatenate([q[..., 1:], q[..., :1]], axis=-1)
        return cls(_normalize(q))

    @classmethod
    def from_rotvec(cls, rotvec, degrees=False):
        """Rotations from rotation vectors (axis * angle).

        Args:
            rotvec: shape (..., 3).
            degrees: the norms are in degrees (default radians).

        Returns:
            A ``Rotation`` of batch shape ``rotvec.shape[:-1]``.

        Example:
            >>> from quabla.scipy.spatial.transform import Rotation, Slerp
            >>> q = Rotation.from_rotvec(qb.array([0.0, 0.0, 180.0]), degrees=True).as_quat()
            >>> [round(v, 6) for v in q.tolist()]
            [0.0, 0.0, 1.0, 0.0]
        """
        fname = "Rotation.from_rotvec"
        degrees = _flag(fname, "degrees", degrees)
        rv = _float_arg(fname, "rotvec", rotvec, (3,))
        return cls(_from_rotvec(_scaled(rv, degrees, _DEG)))

    @classmethod
    def identity(cls, num=None, dtype=float):
        """The identity rotation(s).

        Args:
            num: None for a single rotation, else the number of rotations (JAX allows only
                None).
            dtype: the float dtype of the quaternions (default float64).

        Returns:
            A ``Rotation`` of quaternions (0, 0, 0, 1).

        Example:
            >>> from quabla.scipy.spatial.transform import Rotation, Slerp
            >>> Rotation.identity(2).quat.shape
            (2, 4)
        """
        fname = "Rotation.identity"
        num = _num_arg(fname, num)
        d = _dtype_arg(fname, dtype)
        shape = (4,) if num is None else (num, 4)
        q = np.zeros(shape, d.np)
        q[..., 3] = 1
        return cls(_o.array(q, d))

    @classmethod
    def random(cls, random_key, num=None, dtype=float):
        """Rotations drawn uniformly (JAX raises NotImplementedError): normalised Gaussian
        quaternions.

        Args:
            random_key: a ``qb.random`` key.
            num: None for a single rotation, else the number of rotations.
            dtype: the float dtype of the quaternions (default float64).

        Returns:
            A ``Rotation`` of shape (4,) or (num, 4).

        Example:
            >>> from quabla.scipy.spatial.transform import Rotation, Slerp
            >>> r = Rotation.random(qb.random.PRNGKey(0), 5)
            >>> len(r), round(float(qb.numpy.linalg.norm(r.quat[0])), 6)
            (5, 1.0)
        """
        fname = "Rotation.random"
        num = _num_arg(fname, num)
        d = _dtype_arg(fname, dtype)
        shape = (4,) if num is None else (num, 4)
        return cls(_normalize(_random.normal(random_key, shape, d)))

    # -- container ------------------------------------------------------------------------

    @property
    def single(self):
        """True for a single rotation (``quat`` of shape (4,)).

        Example:
            >>> from quabla.scipy.spatial.transform import Rotation, Slerp
            >>> Rotation.identity().single
            True
        """
        return self._q("Rotation.single").ndim == 1

    def __len__(self):
        """The number of rotations along the first axis (a single rotation has no length:
        ArgumentTypeError, a TypeError, as JAX's).

        Example:
            >>> from quabla.scipy.spatial.transform import Rotation, Slerp
            >>> len(Rotation.identity(3))
            3
        """
        q = self._q("Rotation.__len__")
        if q.ndim == 1:
            raise ArgumentTypeError("Rotation: a single rotation has no len()")
        return q.shape[0]

    def __getitem__(self, indexer):
        """The rotation(s) at ``indexer`` of the batch axes (a single rotation is not
        subscriptable: ArgumentTypeError, a TypeError, as JAX's).

        Example:
            >>> from quabla.scipy.spatial.transform import Rotation, Slerp
            >>> Rotation.identity(3)[1:].quat.shape
            (2, 4)
        """
        q = self._q("Rotation.__getitem__")
        if q.ndim == 1:
            raise ArgumentTypeError("Rotation: a single rotation is not subscriptable")
        key = indexer if isinstance(indexer, tuple) else (indexer,)
        try:
            return Rotation(q[key + (slice(None),)])
        except QuablaError:
            raise
        except Exception as e:  # an index Quabla's indexing does not take (a ragged list ...)
            raise InvalidIndexError(
                f"Rotation.__getitem__: cannot index a batch of shape {_shape_str(q.shape[:-1])} with {indexer!r}"
            ) from e

    def __mul__(self, other):
        """The composition ``self * other``: ``other`` applied first, then ``self``
        (batches broadcast).

        Example:
            >>> from quabla.scipy.spatial.transform import Rotation, Slerp
            >>> r = Rotation.from_euler('z', 90.0, degrees=True)
            >>> round(float((r * r).magnitude()), 6)
            3.141593
        """
        if not isinstance(other, Rotation):
            raise ArgumentTypeError(f"Rotation.__mul__: can compose only with a Rotation, got {type(other).__name__}")
        p = _float_arg("Rotation.__mul__", "self.quat", self.quat, (4,))
        q = _float_arg("Rotation.__mul__", "other.quat", other.quat, (4,))
        _batch("Rotation.__mul__", p.shape[:-1], q.shape[:-1])
        return Rotation(_normalize(_compose(p, q)))

    # -- maps -----------------------------------------------------------------------------

    def _q(self, fname):
        return _float_arg(fname, "quat", self.quat, (4,))

    def apply(self, vectors, inverse=False):
        """Rotates vectors (``R @ v``; ``R.T @ v`` with ``inverse``).

        Args:
            vectors: shape (..., 3); batches broadcast with the rotations'.
            inverse: apply the inverse rotation(s).

        Returns:
            The rotated vectors, of the broadcast batch shape.

        Example:
            >>> from quabla.scipy.spatial.transform import Rotation, Slerp
            >>> r = Rotation.from_euler('z', 90.0, degrees=True)
            >>> [round(v, 6) for v in r.apply(qb.array([1.0, 0.0, 0.0]), inverse=True).tolist()]
            [0.0, -1.0, 0.0]
        """
        fname = "Rotation.apply"
        inverse = _flag(fname, "inverse", inverse)
        q = self._q(fname)
        v = _float_arg(fname, "vectors", vectors, (3,))
        _batch(fname, q.shape[:-1], v.shape[:-1])
        return _apply(_as_matrix(q), v, inverse)

    def as_euler(self, seq, degrees=False):
        """Euler angles of the rotation(s), SciPy's conventions: the first and third in
        [-pi, pi], the second in [0, pi] (symmetric sequences such as 'zxz') or
        [-pi/2, pi/2]; at gimbal lock (second angle within 1e-7 of its bounds) the third is
        set to 0.

        Args:
            seq: 3 axes, all from 'xyz' (extrinsic) or all from 'XYZ' (intrinsic), no axis
                twice in a row.
            degrees: return degrees (default radians).

        Returns:
            An array of shape (..., 3).

        Example:
            >>> from quabla.scipy.spatial.transform import Rotation, Slerp
            >>> r = Rotation.from_euler('ZYX', qb.array([10.0, 20.0, 30.0]), degrees=True)
            >>> [round(v, 4) for v in r.as_euler('ZYX', degrees=True).tolist()]
            [10.0, 20.0, 30.0]
        """
        fname = "Rotation.as_euler"
        axes, extrinsic = _seq_arg(fname, seq, (3,))
        degrees = _flag(fname, "degrees", degrees)
        return _scaled(_as_euler(self._q(fname), axes, extrinsic), degrees, _RAD)

    def as_matrix(self):
        """The rotation matrices.

        Returns:
            An array of shape (..., 3, 3).

        Example:
            >>> from quabla.scipy.spatial.transform import Rotation, Slerp
            >>> Rotation.identity().as_matrix().tolist()[0]
            [1.0, 0.0, 0.0]
        """
        return _as_matrix(self._q("Rotation.as_matrix"))

    def as_mrp(self):
        """Modified Rodrigues Parameters (axis * tan(angle / 4), angle in [0, pi]).

        Returns:
            An array of shape (..., 3).

        Example:
            >>> from quabla.scipy.spatial.transform import Rotation, Slerp
            >>> Rotation.from_quat(qb.array([0.0, 0.0, 1.0, 0.0])).as_mrp().tolist()
            [0.0, 0.0, 1.0]
        """
        return _as_mrp(self._q("Rotation.as_mrp"))

    def as_rotvec(self, degrees=False):
        """Rotation vectors (axis * angle, angle in [0, pi]).

        Args:
            degrees: return degrees (default radians).

        Returns:
            An array of shape (..., 3).

        Example:
            >>> from quabla.scipy.spatial.transform import Rotation, Slerp
            >>> r = Rotation.from_euler('y', 90.0, degrees=True)
            >>> [round(v, 6) for v in r.as_rotvec(degrees=True).tolist()]
            [0.0, 90.0, 0.0]
        """
        fname = "Rotation.as_rotvec"
        degrees = _flag(fname, "degrees", degrees)
        return _as_rotvec(self._q(fname), degrees)

    def as_quat(self, canonical=False, scalar_first=False):
        """The quaternions.

        Args:
            canonical: choose the sign with w > 0 (ties broken by the first nonzero of x, y, z
                being positive).
            scalar_first: return (w, x, y, z) instead of (x, y, z, w).

        Returns:
            An array of shape (..., 4).

        Example:
            >>> from quabla.scipy.spatial.transform import Rotation, Slerp
            >>> Rotation(qb.array([0.5, -0.5, 0.5, -0.5])).as_quat(canonical=True).tolist()
            [-0.5, 0.5, -0.5, 0.5]
        """
        fname = "Rotation.as_quat"
        canonical = _flag(fname, "canonical", canonical, traced_ok=False)
        scalar_first = _flag(fname, "scalar_first", scalar_first, traced_ok=False)
        q = self._q(fname)
        if canonical:
            q = _canonical(q)
        if scalar_first:
            q = _o.concatenate([q[..., 3:], q[..., :3]], axis=-1)
        return q

    def inv(self):
        """The inverse rotation(s) (the conjugate quaternions).

        Returns:
            A ``Rotation`` of the same shape.

        Example:
            >>> from quabla.scipy.spatial.transform import Rotation, Slerp
            >>> r = Rotation.from_euler('z', 30.0, degrees=True)
            >>> round(float((r * r.inv()).magnitude()), 6)
            0.0
        """
        return Rotation(_inv(self._q("Rotation.inv")))

    def magnitude(self):
        """The rotation angles, in [0, pi].

        Returns:
            An array of the batch shape.

        Example:
            >>> from quabla.scipy.spatial.transform import Rotation, Slerp
            >>> round(float(Rotation.from_euler('x', 1.25).magnitude()), 6)
            1.25
        """
        return _magnitude(self._q("Rotation.magnitude"))

    def mean(self, weights=None):
        """The (weighted) chordal L2 mean of a batch of rotations: the unit quaternion
        maximising sum_n w_n (q . q_n)^2 (the eigenvector of the largest eigenvalue; its sign
        is arbitrary, as JAX's).

        Args:
            weights: optional non-negative weights of shape (N,) for the N rotations.

        Returns:
            A single ``Rotation``.

        Example:
            >>> from quabla.scipy.spatial.transform import Rotation, Slerp
            >>> r = Rotation.from_euler('z', qb.array([[10.0], [30.0]]), degrees=True)
            >>> round(float(r.mean().magnitude()) * 180 / 3.141592653589793, 4)
            20.0
        """
        fname = "Rotation.mean"
        q = self._q(fname)
        if q.ndim != 2:
            raise ShapeError(f"{fname}: needs a 1-D batch of rotations (quat of shape (N, 4)), got quat of shape {_shape_str(q.shape)}")
        if weights is None:
            w = _o.ones((q.shape[0],), q.dtype)
        else:
            if isinstance(weights, (str, bytes)):
                raise ArgumentTypeError(f"{fname}: weights must be an array, got {type(weights).__name__}")
            w = astype(_to_array(weights), q.dtype)
            if w.ndim != 1:
                raise ShapeError(f"{fname}: weights must be 1-D, got shape {_shape_str(w.shape)}")
            if w.shape[0] != q.shape[0]:
                raise ShapeError(f"{fname}: weights must have one value per rotation ({q.shape[0]}), got shape {_shape_str(w.shape)}")
        k = _o.matmul(_o.transpose(w[:, None] * q), q)
        _, v = _la.eigh(k)
        return Rotation(v[:, -1])


# ---------------------------------------------------------------------------------------------
# Slerp


class Slerp(NamedTuple):
    """Spherical linear interpolation of rotations (``jax.scipy.spatial.transform.Slerp``), a
    NamedTuple (a pytree) of the key ``times``, their differences ``timedelta``, the key
    ``rotations`` but the last, and the rotation vectors ``rotvecs`` from each key rotation
    to the next. Build it with :meth:`Slerp.init`; call it with times. Times outside the
    keys give JAX's values (SciPy raises): before the first key the first interval is
    extrapolated; after the last key, time t gives the second-last key rotated by the last
    interval's rotation vector times (t - t_last) / (t_last - t_prev) (JAX reads the key time
    at the unclamped index and the interval at the clamped one). The key times are not checked
    to increase (as JAX's).

    Example:
        >>> from quabla.scipy.spatial.transform import Rotation, Slerp
        >>> keys = Rotation.from_euler('z', qb.array([[0.0], [90.0]]), degrees=True)
        >>> s = Slerp.init(qb.array([0.0, 1.0]), keys)
        >>> round(float(s(0.5).as_euler('xyz', degrees=True)[2]), 4)
        45.0
    """

    times: object
    timedelta: object
    rotations: Rotation
    rotvecs: object

    @classmethod
    def init(cls, times, rotations):
        """An interpolator through the key ``rotations`` at the key ``times``.

        Args:
            times: shape (N,), increasing (N >= 2).
            rotations: a ``Rotation`` batch of N rotations.

        Returns:
            A ``Slerp``.

        Example:
            >>> from quabla.scipy.spatial.transform import Rotation, Slerp
            >>> s = Slerp.init(qb.array([0.0, 1.0, 2.0]), Rotation.identity(3))
            >>> s.rotvecs.shape
            (2, 3)
        """
        fname = "Slerp.init"
        if not isinstance(rotations, Rotation):
            raise ArgumentTypeError(f"{fname}: rotations must be a Rotation, got {type(rotations).__name__}")
        q = _float_arg(fname, "rotations.quat", rotations.quat, (4,))
        if q.ndim != 2 or q.shape[0] < 2:
            raise ShapeError(
                f"{fname}: rotations must be a sequence of at least 2 rotations (quat of shape (N, 4)), "
                f"got quat of shape {_shape_str(q.shape)}"
            )
        if isinstance(times, (str, bytes)) or times is None:
            raise ArgumentTypeError(f"{fname}: times must be an array, got {type(times).__name__}")
        t = astype(_to_array(times), q.dtype)
        if t.ndim != 1:
            raise ShapeError(f"{fname}: times must be 1-D, got shape {_shape_str(t.shape)}")
        if t.shape[0] != q.shape[0]:
            raise ShapeError(f"{fname}: times must have one value per rotation ({q.shape[0]}), got {t.shape[0]}")
        start = q[:-1]
        rotvecs = _as_rotvec(_normalize(_compose(_inv(start), q[1:])), False)
        return cls(times=t, timedelta=t[1:] - t[:-1], rotations=Rotation(start), rotvecs=rotvecs)

    def __call__(self, times):
        """The interpolated rotations at ``times``.

        Args:
            times: a scalar or shape (T,).

        Returns:
            A single ``Rotation`` for a scalar time, else a batch of T.

        Example:
            >>> from quabla.scipy.spatial.transform import Rotation, Slerp
            >>> s = Slerp.init(qb.array([0.0, 2.0]), Rotation.from_rotvec(qb.array([[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]])))
            >>> [round(v, 6) for v in s(qb.array([1.0])).as_rotvec().tolist()[0]]
            [0.0, 0.0, 0.5]
        """
        fname = "Slerp.__call__"
        if isinstance(times, (str, bytes)) or times is None:
            raise ArgumentTypeError(f"{fname}: times must be an array, got {type(times).__name__}")
        kt = _to_array(self.times)
        t = astype(_to_array(times), kt.dtype)
        if t.ndim > 1:
            raise ShapeError(f"{fname}: times must be at most 1-D, got shape {_shape_str(t.shape)}")
        single = t.ndim == 0
        if single:
            t = t[None]
        n = kt.shape[0] - 1  # intervals
        # As JAX's: the key time is read at the unclamped interval index (the last key for
        # times after it), the interval's data at the index clamped into range.
        ind = _o.maximum(_searchsorted(kt, t) - 1, 0)
        seg = _o.minimum(ind, n - 1)
        alpha = (t - _o.take(kt, ind, axis=0)) / _o.take(_to_array(self.timedelta), seg, axis=0)
        start = _o.take(_to_array(self.rotations.quat), seg, axis=0)
        step = _from_rotvec(_o.take(_to_array(self.rotvecs), seg, axis=0) * alpha[:, None])
        out = Rotation(_normalize(_compose(start, step)))
        return out[0] if single else out
