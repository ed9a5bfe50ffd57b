"""Issue 18's reproducers for sizes, allocation and the exception hierarchy: every bad call
raises a typed QuablaError (also the builtin a NumPy user catches) and never succeeds with a
wrapped size, segfaults, aborts or panics.

No test allocates huge memory: each failure comes from the size check (before any
allocation) or from a failed allocation of a size no machine can serve (2**62 bytes, under a
raised ``QUABLA_MAX_BYTES`` in a subprocess, since the limit is read once per process)."""

import os
import subprocess
import sys

import numpy as np
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
    # 2**41 bytes: representable, but over the default QUABLA_MAX_BYTES (the machine's memory).
    if "QUABLA_MAX_BYTES" in os.environ or _machine_memory() >= 2**41:
        pytest.skip("a QUABLA_MAX_BYTES is set, or the machine has 2 TiB")
    with pytest.raises(errors.ArraySizeError) as info:
        qb.zeros((2**38,))
    _size_error(info, "needs 2199023255552 bytes", f"more than the limit of {_machine_memory()} bytes", "(size_limit)")


def _run_with_limit(limit, stmt, **env):
    """Runs ``stmt`` in a fresh interpreter with QUABLA_MAX_BYTES=limit (and the variables
    ``env``); returns the exception's class names (MRO) and message, or 'no error'."""
    code = (
        "import quabla as qb\n"
        "try:\n"
        f"    {stmt}\n"
        "    print('no error')\n"
        "except BaseException as e:\n"
        "    print(' '.join(c.__name__ for c in type(e).__mro__), '|', e)\n"
    )
    env = dict(os.environ, QUABLA_MAX_BYTES=str(limit), **env)
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


def test_a_failed_allocation_in_compiled_code_is_out_of_memory_not_a_segfault():
    # The program's temporaries (2**59 elements, or a part's 2**55 when the sum is split
    # between threads: quabla_lowering's reduce::thread_partials) pass a raised limit; the
    # compiled code's own malloc fails, and the allocation guard turns that into an error
    # return.
    stmt = "qb.jit(lambda a: qb.sum(qb.sin(qb.broadcast_to(a, (2**59,)))))(qb.ones(1))"
    out = _run_with_limit(2**63 - 1, stmt)
    assert out.startswith("OutOfMemoryError QuablaError MemoryError"), out
    assert "the compiled code could not allocate a temporary of " in out, out
    assert int(out.split("a temporary of ")[1].split()[0]) >= 2**55, out
    # The process goes on: after the failure, programs with temporaries run and agree with
    # NumPy, the failing one raises again.
    code = (
        "import numpy as np, quabla as qb\n"
        "big = qb.jit(lambda a: qb.sum(qb.sin(qb.broadcast_to(a, (2**59,)))))\n"
        "for _ in range(3):\n"
        "    try:\n"
        "        big(qb.ones(1))\n"
        "    except MemoryError:\n"
        "        pass\n"
        "f = qb.jit(lambda a: qb.sum(qb.sin(qb.broadcast_to(a, (1000,))) * qb.cos(a)))\n"
        "print(float(f(qb.ones(1))), 1000 * np.sin(1.0) * np.cos(1.0))\n"
    )
    env = dict(os.environ, QUABLA_MAX_BYTES=str(2**63 - 1))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    got, want = map(float, r.stdout.split())
    assert abs(got - want) < 1e-9, r.stdout


def test_a_failed_allocation_in_the_interpreter_is_out_of_memory_not_an_abort():
    # Eager ops on the reference interpreter: the result buffer (broadcast_in_dim's) and the
    # result-sized temporaries (iota's) are fallible allocations.
    out = _run_with_limit(2**63 - 1, "qb.broadcast_to(qb.ones(1), (2**59,))", QUABLA_EAGER="interp")
    assert out.startswith("OutOfMemoryError QuablaError MemoryError"), out
    assert "'quabla.broadcast_in_dim' op: out of memory: cannot allocate 4611686018427387904 bytes" in out, out
    out = _run_with_limit(2**40, "qb.broadcast_to(qb.ones(1), (2**59,))", QUABLA_EAGER="interp")
    assert out.startswith("ArraySizeError"), out


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
    with raises(errors.ArgumentTypeError, "zeros: each entry of shape must be an integer"):
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


def test_eager_cache_is_bounded():
    # 200 operand shapes of one op through a 16-entry cache: the cache stays within its
    # bound, evicted programs are freed, and every result is right (recompiled on a miss).
    code = (
        "import numpy as np, quabla as qb, quabla._quabla as q\n"
        "assert q.eager_cache_capacity() == 16, q.eager_cache_capacity()\n"
        "for n in list(range(1, 201)) + list(range(1, 21)):\n"
        "    x = np.linspace(0.0, 1.0, n)\n"
        "    np.testing.assert_allclose(np.asarray(qb.sin(qb.array(x))), np.sin(x), rtol=1e-15)\n"
        "    assert q.eager_cache_size() <= 16, q.eager_cache_size()\n"
        "print('ok')\n"
    )
    env = dict(os.environ, QUABLA_EAGER_CACHE_SIZE="16")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_a_rust_panic_is_a_quabla_error():
    # The debug hook panics inside a guarded entry point: never pyo3's PanicException (a
    # BaseException), always "internal error, please report" with the panic message.
    with pytest.raises(errors.QuablaError) as info:
        qb._quabla._panic_for_test("hook message 42")
    assert type(info.value) is errors.QuablaError
    assert str(info.value) == "internal error, please report: hook message 42"
    # The process and the extension keep working.
    assert qb.jit(lambda x: x * 2.0)(qb.ones(2)).tolist() == [2.0, 2.0]


# Python entry points of the extension that only read a field of their object (no Rust code
# that could panic), and the GC/buffer-release slots, which cannot raise.
UNGUARDED = {"__traverse__", "__releasebuffer__", "_code", "ndim", "size", "itemsize", "_data_ptr", "_shares_storage",
             "engine", "device", "name", "closed", "num_ops", "num_funcs", "_fast_size", "eager_device_name", "dtype",
             "__repr__", "eager_cache_size", "eager_cache_capacity", "error_variants", "live_programs"}


def _entry_points():
    """(file, fn name, first body line) of every #[pyfunction] and #[pymethods] fn of python/src."""
    import pathlib
    import re

    src = pathlib.Path(__file__).resolve().parents[2] / "python" / "src"
    out = []
    for path in sorted(src.glob("*.rs")):
        lines = path.read_text().split("\n")
        in_methods = pending = False
        for i, line in enumerate(lines):
            if line.strip() == "#[pymethods]":
                in_methods = True
            elif line.strip() == "#[pyfunction]":
                pending = True
            elif in_methods and line == "}":
                in_methods = False
            m = re.match(r"^(\s*)(pub )?(unsafe )?fn (\w+)", line)
            if m and (pending or (in_methods and m.group(1) == "    ")):
                pending = False
                out.append((path.name, m.group(4), lines[i + 1].strip()))
    return out


def test_every_extension_entry_point_catches_panics():
    entries = _entry_points()
    assert len(entries) > 40, entries
    unguarded = [(f, n) for f, n, first in entries if n not in UNGUARDED and not first.startswith(("errors::guard(", "guard("))]
    assert not unguarded, f"entry points without errors::guard: {unguarded}"
    assert {n for _, n, _ in entries} >= UNGUARDED, "stale names in UNGUARDED"


# --- wrong answers of issue 18, against NumPy (JAX where NumPy has none) ----------------


def test_logical_ops_on_numbers_return_bools():
    import numpy as np

    a = np.array([0, 3, -2, 0], dtype=np.int32)
    b = np.array([1, 0, 5, 0], dtype=np.int64)
    f = np.array([0.0, 2.5, -0.0, float("nan")])
    for name in ["logical_and", "logical_or", "logical_xor"]:
        for x, y in [(a, b), (f, a), (a, 1), (0, b), (f, f)]:
            want = getattr(np, name)(x, y)
            got = getattr(qb, name)(*(qb.array(v) if isinstance(v, np.ndarray) else v for v in (x, y)))
            assert got.dtype is qb.bool_ and got.tolist() == want.tolist(), (name, x, y)
    # The reproducer: logical_not([0, 3]) gave [-1, -4].
    assert qb.logical_not(qb.array([0, 3])).tolist() == [True, False]
    assert qb.logical_not(qb.array(f)).tolist() == np.logical_not(f).tolist()
    # Under jit too; `~` stays bitwise on integers (NumPy's invert).
    assert qb.jit(qb.logical_not)(qb.array(a)).tolist() == np.logical_not(a).tolist()
    assert (~qb.array(a)).tolist() == (~a).tolist()
    assert qb.invert(qb.array([True, False])).tolist() == [False, True]


def test_python_ints_outside_the_dtype_raise_overflow_errors():
    i32 = qb.ones(2, dtype=qb.int32)
    # NumPy 2 raises OverflowError where Quabla used to wrap (returning the input).
    with raises(errors.ScalarOverflowError, "the Python int 4294967296 is out of bounds for int32"):
        i32 + 2**32
    with pytest.raises(OverflowError):
        2**31 + i32
    with raises(errors.ScalarOverflowError, "out of bounds for int64"):
        qb.array(2**70)  # used to saturate to 2**63 - 1
    with pytest.raises(OverflowError):
        qb.array(2**63)
    with raises(errors.ScalarOverflowError, "full: the Python int 1099511627776 is out of bounds for int32"):
        qb.full((2,), 2**40, dtype=qb.int32)
    with pytest.raises(OverflowError):
        qb.int32(2**40)
    with pytest.raises(OverflowError):
        qb.uint8(-1)
    with raises(errors.ScalarOverflowError, "too large"):
        qb.ones(2) + 2**2000
    assert issubclass(errors.ScalarOverflowError, errors.QuablaError) and issubclass(errors.ScalarOverflowError, OverflowError)
    # The edges of each range are exact, as in NumPy.
    assert (i32 + (2**31 - 2)).tolist() == [2**31 - 1] * 2
    assert (i32 + (-(2**31))).tolist() == [-(2**31) + 1] * 2
    assert qb.array(2**63 - 1).item() == 2**63 - 1 and qb.array(-(2**63)).item() == -(2**63)
    assert qb.full((1,), 255, dtype=qb.uint8).tolist() == [255]
    assert qb.full((1,), 2**70, dtype=qb.bool_).tolist() == [True]
    assert (qb.ones(1, dtype=qb.float32) + 2**200).tolist() == [float("inf")]  # NumPy: inf too


def test_var_and_std_with_ddof_at_least_n_are_inf_or_nan():
    import numpy as np

    x = np.array([[1.0, 2.0, 4.0], [3.0, 3.0, 3.0]])
    with np.errstate(divide="ignore", invalid="ignore"), pytest.warns(RuntimeWarning):
        for ddof in [2, 3, 5]:
            for axis in [None, 0, 1]:
                np.testing.assert_array_equal(qb.var(qb.array(x), axis=axis, ddof=ddof).numpy(), np.var(x, axis=axis, ddof=ddof))
                np.testing.assert_array_equal(qb.std(qb.array(x), axis=axis, ddof=ddof).numpy(), np.std(x, axis=axis, ddof=ddof))
    # Never negative (used to be var([1., 2.], ddof=3) == -0.5).
    assert float(qb.var(qb.array([1.0, 2.0]), ddof=3)) == float("inf")
    w = np.array([[True, True, False], [True, False, False]])
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.var(x, axis=1, ddof=2, where=w)
    np.testing.assert_array_equal(qb.var(qb.array(x), axis=1, ddof=2, where=qb.array(w)).numpy(), want)


def test_float_floor_divide_is_numpys():
    import numpy as np

    assert float(qb.floor_divide(-5.0, float("inf"))) == -1.0
    assert float(qb.floor_divide(1.0, 0.1)) == 9.0 == 1.0 // 0.1
    v = [-5.0, 5.0, 1.0, -1.0, 0.0, -0.0, 7.0, 0.3, -7.5, 1e300, 1e-300, float("inf"), -float("inf"), float("nan"), 2.5, 0.1]
    x, y = (a.ravel() for a in np.meshgrid(np.array(v), np.array(v)))
    for dt in (np.float64, np.float32):
        with np.errstate(all="ignore"):
            xd, yd = x.astype(dt), y.astype(dt)
            want = np.floor_divide(xd, yd)
        for got in (qb.floor_divide(qb.array(xd), qb.array(yd)), qb.jit(qb.floor_divide)(qb.array(xd), qb.array(yd))):
            got = got.numpy()
            np.testing.assert_array_equal(got, want)
            assert (np.signbit(got) == np.signbit(want)).all()
    # The // operator is the same function.
    assert (qb.array([1.0, -5.0]) // qb.array([0.1, float("inf")])).tolist() == [9.0, -1.0]


def test_static_arguments_are_keyed_by_their_exact_bits():
    # 0.0 == -0.0 and nan != nan in Python: the cache key must not use ==.
    f = qb.jit(lambda x, s: x / s, static_argnums=1)
    one = qb.ones(1)
    assert f(one, 0.0).tolist() == [float("inf")]
    assert f(one, -0.0).tolist() == [-float("inf")]  # was inf: -0.0 hit 0.0's trace
    assert f._cache_size == 2
    for _ in range(5):
        assert str(f(one, float("nan")).numpy()[0]) == "nan"
    assert f._cache_size == 3  # one trace for NaN, not one per call


def test_clear_cache_drops_the_fast_path_too():
    # Repeated clear_cache must not accumulate compiled signatures in the Rust fast path.
    f = qb.jit(lambda x: x * 2.0)
    for n in range(1, 6):
        assert f(qb.ones(n)).tolist() == [2.0] * n
    assert f._fast_size() == 5 and f._cache_size == 5
    f.clear_cache()
    assert f._fast_size() == 0 and f._cache_size == 0
    assert f(qb.ones(2)).tolist() == [2.0, 2.0]  # traced again
    assert f._fast_size() == 1 and f._cache_size == 1


def test_reshape_to_a_wrapping_shape_is_a_shape_error():
    # The infer_reshape multiply-with-overflow, from Python: eager and traced.
    for f in (lambda a: qb.reshape(a, (2**62, 4, -1)), qb.jit(lambda a: qb.reshape(a, (2**31, 2**31)))):
        with raises(errors.ShapeError, "cannot reshape a tensor of shape (4,)"):
            f(qb.ones(4))
    with raises(errors.ArgumentTypeError, "reshape: each entry of shape must be an integer"):
        qb.reshape(qb.ones(4), (2, "2"))


def test_diag_with_a_huge_offset_is_a_size_error():
    # Found by the hostile-call fuzzer: the index grid was built by NumPy without a size check.
    with raises(errors.ArraySizeError, "iota:", "overflows"):
        qb.diag(qb.ones(3), 2**31)
    assert qb.diag(qb.array([1, 2]), -1).tolist() == [[0, 0, 0], [1, 0, 0], [0, 2, 0]]


def test_reduce_window_rejects_a_non_scalar_init_value():
    for bad in (None, np.array([], np.float32), np.ones(2), "0"):
        with pytest.raises(qb.ArgumentTypeError, match="reduce_window: init_value"):
            qb.reduce_window(qb.ones(4), bad, qb.add, (2,), (1,), "VALID")


def test_reduce_window_rejects_an_array_computation():
    # An array compared with "add" is an array, whose truth value NumPy refuses (ValueError):
    # the computation is checked as a string only when it is one (found by the API fuzzer).
    for bad in (np.array([], np.float32), np.array([1.0, 2.0])):
        with pytest.raises(qb.UnsupportedOperationError, match="reduce_window: computation"):
            qb.reduce_window(qb.ones(4), 0.0, bad, (2,), (1,), "VALID")
    assert qb.reduce_window(qb.arange(5.0), 0.0, "add", (2,), (1,), "VALID").tolist() == [1.0, 3.0, 5.0, 7.0]


def test_keepdims_flip_axes_and_tri_dtype_are_checked():
    # Found by the API fuzzer: `if keepdims` on an array raised NumPy's ValueError, a float
    # axis of flip a TypeError, dtype=False of tri an AttributeError.
    bad = np.array([], np.float32)
    for f in (qb.all, qb.any, qb.norm, qb.sum, qb.max, qb.argmax, qb.logsumexp, qb.linalg.norm):
        with pytest.raises(qb.ArgumentTypeError, match="keepdims must be a bool"):
            f(qb.ones((2, 3)), keepdims=bad)
    assert qb.sum(qb.ones((2, 3)), axis=1, keepdims=1).shape == (2, 1)
    assert qb.argmax(qb.array([1.0, 3.0]), keepdims=np.bool_(True)).tolist() == [1]
    with pytest.raises(qb.ArgumentTypeError, match="flip: axis"):
        qb.flip(qb.ones(3), 0.0)
    assert qb.flip(qb.arange(3.0), (0,)).tolist() == [2.0, 1.0, 0.0]
    with pytest.raises(qb.DTypeError, match="^tri: not a dtype: False"):
        qb.tri(1, None, 0, False)
    assert qb.tri(2, dtype=qb.float32).dtype == qb.float32
    # dtype=<array> (`dtype or float64` took its truth value), a struct-spec string NumPy
    # parses as code (b"," raised SyntaxError), non-bool flags, non-int split points.
    for f in (qb.ones, qb.zeros):
        with pytest.raises(qb.DTypeError, match=f"^{f.__name__}: not a dtype"):
            f(1, bad)
    with pytest.raises(qb.DTypeError, match="not a dtype"):
        qb.cumprod(qb.ones(3), None, b",")
    # qb.dtype's second argument names a function: an array there (found by the API fuzzer)
    # is a typed error, not NumPy's ambiguous-truth ValueError.
    with pytest.raises(qb.ArgumentTypeError, match="dtype: op must be"):
        qb.dtype(None, np.array([], dtype=np.float32))
    with pytest.raises(qb.ArgumentTypeError, match="linspace: endpoint must be a bool"):
        qb.linspace(0.0, 1.0, 3, bad)
    for points in (":", None, [1.5]):
        with pytest.raises(qb.ArgumentTypeError, match="split: .*indices_or_sections"):
            qb.split(qb.arange(6), points)
    assert [p.shape for p in qb.split(qb.arange(6), np.array([2]))] == [(2,), (4,)]
    # A mode or a flag given an array, ragged indices, decimals past a double's range.
    with pytest.raises(qb.UnsupportedOperationError, match="take_along_axis: mode"):
        qb.take_along_axis(qb.ones((2, 2)), np.zeros((2, 1), np.int64), 1, bad)
    with pytest.raises(qb.ArgumentTypeError, match="pad: mode must be a string"):
        qb.pad(qb.ones(2), 1, bad)
    with pytest.raises(qb.ArgumentTypeError, match="take: indices must be an array of integers"):
        qb.take(qb.ones(4), [1, [2, 3]])
    assert qb.round(qb.array([1.25]), 309).tolist() == [1.25]
    with pytest.raises(qb.ArgumentTypeError, match="correlate: mode"):
        qb.correlate(qb.ones(3), qb.ones(2), bad)
    with pytest.raises(qb.ShapeError, match=r"transpose: axes \(0,\) are not a permutation"):
        qb.transpose(qb.ones((2, 3)), 0)
    with pytest.raises(qb.ArgumentError, match="value_and_grad: argnums"):
        qb.value_and_grad(qb.sin, bad)
    assert qb.grad(lambda a, b: a * b, argnums=[0, 1])(2.0, 3.0)[0].item() == 3.0
    with pytest.raises(qb.ArgumentTypeError, match="cummax: reverse must be a bool"):
        qb.cummax(qb.ones(3), 0, bad)
    # An exponent past int64 takes the float path instead of overflowing powi's attribute.
    assert qb.power(qb.array(1.0), 2**63).item() == 1.0


# --- bounded trace caches, checked sizes and the byte limit (issue 18, second part) -------


def test_evicted_traces_free_their_compiled_code():
    # 40 signatures through an 8-entry trace cache: the cache and the fast path stay bounded,
    # every result is right, and the evicted programs' code is unloaded (the runtime's count
    # of loaded CPU programs does not grow past the bound).
    import gc

    import numpy as np

    q = qb._quabla
    f = qb.jit(lambda x: qb.sin(x) * 2.0 + 1.0, max_traces=8)
    f(qb.ones(1))
    gc.collect()
    base = q.live_programs()
    for n in range(2, 41):
        x = np.linspace(0.0, 1.0, n)
        np.testing.assert_allclose(f(qb.array(x)).numpy(), np.sin(x) * 2.0 + 1.0, rtol=1e-15)
        assert f._cache_size <= 8 and f._fast_size() <= 8
    gc.collect()
    assert q.live_programs() <= base + 7, (base, q.live_programs())
    del f
    gc.collect()
    assert q.live_programs() <= base - 1, (base, q.live_programs())


def test_max_traces_default_comes_from_the_environment():
    code = (
        "import quabla as qb\n"
        "f = qb.jit(lambda x: x + 1)\n"
        "for n in range(1, 6):\n"
        "    assert f(qb.ones(n)).tolist() == [2.0] * n\n"
        "print(f._cache_size, qb.jit(lambda x: x, max_traces=5)._max_traces)\n"
    )
    env = dict(os.environ, QUABLA_MAX_TRACES="3")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.split() == ["3", "5"], r.stdout + r.stderr


def test_the_default_byte_limit_is_the_machine_memory():
    # Linux overcommits: without a limit, a tensor larger than the memory would be "allocated"
    # and the OOM killer would end the process on first touch. The default limit is MemTotal
    # (or the cgroup's limit when smaller).
    total = _machine_memory()
    n = total // 8 + 1  # one float64 element more than the memory holds
    env = {k: v for k, v in os.environ.items() if k != "QUABLA_MAX_BYTES"}
    code = (
        "import quabla as qb\n"
        "try:\n"
        f"    qb.zeros(({n},))\n"
        "    print('no error')\n"
        "except MemoryError as e:\n"
        "    print(type(e).__name__, '|', e)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ArraySizeError"), r.stdout
    assert f"more than the limit of {total} bytes" in r.stdout, r.stdout



def _machine_memory():
    """MemTotal, lowered to the cgroup's memory limit: the default QUABLA_MAX_BYTES."""
    import pathlib

    total = int(next(l for l in pathlib.Path("/proc/meminfo").read_text().splitlines() if l.startswith("MemTotal:")).split()[1]) * 1024
    for cg in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            total = min(total, int(pathlib.Path(cg).read_text().strip()))
        except (OSError, ValueError):
            pass
    return total

