"""Issue 18's reproducers for sizes, allocation and the exception hierarchy: every bad call
raises a typed QuablaError (also the builtin a NumPy user catches) and never succeeds with a
wrapped size, segfaults, aborts or panics.

No test allocates huge memory: each failure comes from the size check (before any
allocation) or from a failed allocation of a size no machine can serve (2**62 bytes, under a
raised ``QUABLA_MAX_BYTES`` in a subprocess, since the limit is read once per process)."""

import os
import subprocess
import sys

import pytest

import quabla as qb
from quabla import errors
from misuse import raises


def _size_error(info, *fragments):
    e = info.value
    assert isinstance(e, errors.QuablaError) and isinstance(e, ValueError) and isinstance(e, MemoryError)
    assert type(e) is errors.ArraySizeError
    for f in fragments:
        assert f in str(e), f"{f!r} not in {str(e)!r}"


def test_size_errors_are_value_and_memory_errors():
    assert issubclass(errors.ArraySizeError, (errors.QuablaError))
    assert issubclass(errors.ArraySizeError, ValueError) and issubclass(errors.ArraySizeError, MemoryError)
    assert issubclass(errors.OutOfMemoryError, errors.QuablaError) and issubclass(errors.OutOfMemoryError, MemoryError)
    assert qb.ArraySizeError is errors.ArraySizeError and qb.OutOfMemoryError is errors.OutOfMemoryError


def test_wrapping_element_count_is_rejected():
    # Used to succeed with size 0 and read uninitialised memory.
    with pytest.raises(errors.ArraySizeError) as info:
        qb.zeros((2**62, 4))
    _size_error(info, "zeros:", "tensor<4611686018427387904x4xf64>", "too big", "(size_overflow)")
    assert info.value.constraint == "size_overflow"
    assert info.value.actual == "tensor<4611686018427387904x4xf64>"


def test_ones_2_32_squared_is_rejected_before_indexing():
    with pytest.raises(errors.ArraySizeError) as info:
        qb.ones((2**32, 2**32))[5, 5]
    _size_error(info, "ones:", "[4294967296, 4294967296]")


def test_broadcast_to_a_wrapping_shape():
    with pytest.raises(errors.ArraySizeError) as info:
        qb.broadcast_to(qb.ones(1), (2**62, 4))[0]
    _size_error(info, "broadcast_to", "too big")


def test_traced_broadcast_to_a_wrapping_shape_is_a_shape_rule_error():
    f = qb.jit(lambda a: qb.broadcast_to(a, (2**62, 4)))
    with pytest.raises(errors.ArraySizeError) as info:
        f(qb.ones(1))
    _size_error(info, "too big")


def test_full_2_33_is_over_no_limit_or_allocates():
    # 2**33 float64 elements = 64 GiB: under the default limit of 1 TiB, so this allocates
    # lazily or fails; run with a lowered limit to keep the test independent of the machine.
    out = _run_with_limit(2**30, "qb.full((2**33,), 1.0)")
    assert "ArraySizeError" in out and "needs 68719476736 bytes" in out and "QUABLA_MAX_BYTES" in out, out


def test_zeros_2_31_squared_is_not_a_panic():
    # Was a Rust PanicException (multiply with overflow).
    with pytest.raises(errors.ArraySizeError) as info:
        qb.zeros((2**31, 2**31))
    _size_error(info, "zeros:", "[2147483648, 2147483648]")


def test_over_the_default_limit():
    # 2**41 bytes: representable, but over the default QUABLA_MAX_BYTES of 2**40.
    with pytest.raises(errors.ArraySizeError) as info:
        qb.zeros((2**38,))
    _size_error(info, "needs 2199023255552 bytes", "more than the limit of 1099511627776 bytes", "(size_limit)")


def _run_with_limit(limit, stmt):
    """Runs ``stmt`` in a fresh interpreter with QUABLA_MAX_BYTES=limit; returns the
    exception's class names (MRO) and message, or 'no error'."""
    code = (
        "import quabla as qb\n"
        "try:\n"
        f"    {stmt}\n"
        "    print('no error')\n"
        "except BaseException as e:\n"
        "    print(' '.join(c.__name__ for c in type(e).__mro__), '|', e)\n"
    )
    env = dict(os.environ, QUABLA_MAX_BYTES=str(limit))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_zeros_10_5_squared_is_a_memory_error():
    # 80 GB: under a lowered limit the size check refuses it; the class is a MemoryError.
    out = _run_with_limit(2**30, "qb.zeros((10**5, 10**5))")
    assert out.startswith("ArraySizeError QuablaError ValueError MemoryError"), out
    assert "needs 80000000000 bytes" in out, out


def test_a_failed_allocation_is_out_of_memory_not_an_abort():
    # 2**62 bytes pass a raised limit; no allocator can serve them.
    out = _run_with_limit(2**63 - 1, "qb.zeros((2**59,))")
    assert out.startswith("OutOfMemoryError QuablaError MemoryError"), out
    assert "out of memory: cannot allocate 4611686018427387904 bytes" in out, out
    out = _run_with_limit(2**63 - 1, "qb.full((2**60,), 1.5, dtype=qb.float32)")
    assert out.startswith("OutOfMemoryError"), out


def test_shape_dtype_sizes_are_checked():
    with pytest.raises(errors.ArraySizeError) as info:
        qb.jit(lambda a: a).lower(qb.ShapeDtype((2**62, 4), qb.float32)).compile()
    _size_error(info, "ShapeDtype:", "too big")


def test_shape_dtype_rejects_negative_extents():
    with raises(errors.ShapeError, "ShapeDtype:", "-1", "positive extents"):
        qb.ShapeDtype((-1,), qb.float32)
    with raises(errors.ShapeError, "positive extents"):
        qb.ShapeDtype((3, 0), qb.float64)


def test_arange_step_zero_is_a_zero_division_error():
    with pytest.raises(ZeroDivisionError) as info:
        qb.arange(0, 1, 0)
    assert type(info.value) is errors.ZeroStepError and isinstance(info.value, ValueError)
    assert isinstance(info.value, errors.QuablaError) and "step must not be zero" in str(info.value)
    with pytest.raises(errors.ZeroStepError):
        qb.arange(0.0, 1.0, 0.0)


def test_arange_sizes_are_checked():
    with pytest.raises(errors.ArraySizeError):
        qb.arange(0, 2**62)
    with pytest.raises(errors.ArraySizeError):
        qb.arange(0.0, 1.0, 1e-300)
    with raises(errors.ArraySizeError, "has no finite length"):
        qb.arange(0, 2**1100)
    with raises(errors.ArgumentTypeError, "arange: stop must be a real number"):
        qb.arange(0, "3")
    assert qb.arange(0.0, 1.0, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]


def test_eye_with_a_float_is_a_type_error():
    with pytest.raises(TypeError) as info:
        qb.eye(2.5)
    assert type(info.value) is errors.ArgumentTypeError and "eye: N must be an integer" in str(info.value)
    with raises(errors.ArgumentTypeError, "eye: M must be an integer"):
        qb.eye(2, 1.5)
    with pytest.raises(errors.ArraySizeError):
        qb.eye(2**32)
    assert qb.eye(2, 3, 1).tolist() == [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]


def test_constructor_argument_types():
    with raises(errors.ArgumentTypeError, "zeros: each extent of shape must be an integer"):
        qb.zeros((2.5,))
    with raises(errors.ArgumentTypeError, "ones: shape must be an int or a sequence of ints"):
        qb.ones(None)
    with raises(errors.ArgumentTypeError, "linspace: num must be an integer"):
        qb.linspace(0, 1, 2.5)
    with pytest.raises(errors.ArraySizeError):
        qb.linspace(0, 1, 2**62)
    with raises(errors.DTypeError, "full: the fill value must be a number, got str"):
        qb.full((2,), "x", dtype=qb.float32)
    with raises(errors.ArraySizeError, "full:", "an extent does not fit in 64 bits"):
        qb.full((2**64,), 1.0)
    with raises(errors.ArgumentTypeError, "expected an array"):
        qb.astype(object(), qb.float32)


def test_eq_and_ne_with_foreign_objects():
    x = qb.ones(2)
    assert (x == None) is False  # noqa: E711 - the point of the test
    assert (x != None) is True  # noqa: E711
    assert (x == "a") is False and (x != object()) is True
    assert (None == x) is False  # noqa: E711
    # Array-likes still compare elementwise.
    assert (x == 1.0).tolist() == [True, True]
    assert (x != [1.0, 2.0]).tolist() == [False, True]


def test_sizes_of_valid_constructors_are_unchanged():
    assert qb.zeros((2, 3)).size == 6
    assert qb.full((4,), 7).tolist() == [7, 7, 7, 7]
    assert qb.full((2,), True).tolist() == [True, True]
    assert qb.ones((1, 2), dtype=qb.int32).tolist() == [[1, 1]]
    assert qb.zeros(3, dtype=qb.float32).tolist() == [0.0, 0.0, 0.0]
    assert qb.full((3,), -0.0).tolist() == [-0.0, -0.0, -0.0]


def test_tensor_protocol_errors_are_in_the_hierarchy():
    with raises(errors.ArgumentTypeError, "len() of a 0-d tensor"):
        len(qb.array(1.0))
    with raises(errors.ArgumentTypeError, "can be used as an index"):
        [1, 2][qb.array(1.5)]
    assert [1, 2][qb.array(1)] == 2
    with raises(errors.ShapeError, "does not match the exported shape"):
        qb._quabla.from_buffer(qb.ones(4).numpy(), [3])
