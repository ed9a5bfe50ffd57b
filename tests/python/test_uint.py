"""uint8/uint32 arrays and the bit operations: NumPy import/export, JAX's promotion rules,
unsigned arithmetic (wrapping, division, comparison, conversion) eager and under jit against
NumPy and JAX, the shifts and population_count against jax.lax, vmap against a loop, and the
typed errors of bad operands."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import quabla as qb

jax.config.update("jax_enable_x64", True)

U32 = np.array([0, 1, 2, 7, 31, 32, 33, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF], np.uint32)
U8 = np.array([0, 1, 2, 7, 8, 9, 100, 127, 128, 255], np.uint8)


def pairs(v):
    a, b = np.meshgrid(v, v, indexing="ij")
    return a.ravel(), b.ravel()


def test_dtypes_and_numpy_round_trip():
    assert qb.uint32 == np.uint32 and qb.uint8 == np.uint8
    assert qb.dtype("uint32") is qb.uint32 and qb.dtype(np.uint8) is qb.uint8
    x = qb.asarray(U32)
    assert x.dtype is qb.uint32
    assert np.asarray(x).dtype == np.uint32 and (np.asarray(x) == U32).all()
    assert x.tolist() == [int(v) for v in U32]
    y = qb.asarray(U8, dtype=qb.uint8)
    assert y.dtype is qb.uint8 and (y.numpy() == U8).all()
    # Explicit conversion keeps uint8; a NumPy uint8 array without dtype= widens (as before).
    assert qb.asarray(U8).dtype is qb.int32
    assert qb.asarray(U8).astype(qb.uint8).dtype is qb.uint8
    assert qb.full((2,), 255, dtype=qb.uint8).tolist() == [255, 255]
    assert qb.iinfo(qb.uint32).max == 2**32 - 1 and qb.iinfo(qb.uint8).bits == 8


@pytest.mark.parametrize(
    "a,b,want",
    [
        (qb.uint8, qb.uint32, qb.uint32),
        (qb.uint32, qb.int32, qb.int64),
        (qb.uint8, qb.int32, qb.int32),
        (qb.uint32, qb.int64, qb.int64),
        (qb.uint8, qb.int64, qb.int64),
        (qb.uint32, qb.bool_, qb.uint32),
        (qb.uint32, qb.float32, qb.float32),
        (qb.uint8, qb.float64, qb.float64),
    ],
)
def test_promotion_follows_jax(a, b, want):
    x = qb.ones((2,), dtype=a)
    y = qb.ones((2,), dtype=b)
    assert (x + y).dtype is want and (y + x).dtype is want
    jx, jy = jnp.ones((2,), a.np), jnp.ones((2,), b.np)
    assert (jx + jy).dtype == want.np


def test_weak_scalars_keep_the_unsigned_dtype_and_check_the_range():
    x = qb.asarray(U32)
    assert (x + 1).dtype is qb.uint32 and (x * 3).dtype is qb.uint32
    assert (x + 1.5).dtype is qb.float64
    # NumPy 2 and JAX raise OverflowError.
    with pytest.raises(qb.ScalarOverflowError, match="out of bounds for uint32"):
        x + (-1)
    with pytest.raises(OverflowError, match="out of bounds for uint8"):
        qb.asarray(U8, dtype=qb.uint8) + 256


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("vals", [U32, U8], ids=["u32", "u8"])
def test_arithmetic_matches_numpy(vals, jit):
    a, b = pairs(vals)
    dt = qb.dtype(vals.dtype)
    qa, qb_ = qb.asarray(a, dtype=dt), qb.asarray(b, dtype=dt)
    nz = b != 0
    cases = {
        "add": (lambda x, y: x + y, lambda x, y: x + y),
        "sub": (lambda x, y: x - y, lambda x, y: x - y),
        "mul": (lambda x, y: x * y, lambda x, y: x * y),
        "max": (qb.maximum, np.maximum),
        "min": (qb.minimum, np.minimum),
        "and": (lambda x, y: x & y, lambda x, y: x & y),
        "or": (lambda x, y: x | y, lambda x, y: x | y),
        "xor": (lambda x, y: x ^ y, lambda x, y: x ^ y),
        "lt": (lambda x, y: x < y, lambda x, y: x < y),
        "ge": (lambda x, y: x >= y, lambda x, y: x >= y),
        "ne": (lambda x, y: x != y, lambda x, y: x != y),
    }
    for name, (qf, nf) in cases.items():
        f = qb.jit(qf) if jit else qf
        got = np.asarray(f(qa, qb_))
        with np.errstate(over="ignore"):
            want = nf(a, b)
        assert got.dtype == want.dtype, name
        assert (got == want).all(), name
    for name, qf, nf in (("floor_divide", lambda x, y: x // y, np.floor_divide), ("remainder", lambda x, y: x % y, np.remainder)):
        f = qb.jit(qf) if jit else qf
        got = np.asarray(f(qa, qb_))
        assert (got[nz] == nf(a[nz], b[nz])).all(), name
    # Division by zero does not trap: x // 0 is all ones, x % 0 is x (lax semantics).
    z = qb.zeros((3,), dtype=dt)
    one = qb.asarray(np.array([5, 0, 1], vals.dtype), dtype=dt)
    assert (qb.jit(lambda x, y: x // y)(one, z)).tolist() == [int(np.iinfo(vals.dtype).max)] * 3
    assert (qb.jit(lambda x, y: x % y)(one, z)).tolist() == [5, 0, 1]


@pytest.mark.parametrize("vals", [U32, U8], ids=["u32", "u8"])
def test_unary_and_conversions_match_numpy(vals):
    dt = qb.dtype(vals.dtype)
    x = qb.asarray(vals, dtype=dt)
    with np.errstate(over="ignore"):
        assert ((-x).numpy() == (-vals)).all()
    assert ((~x).numpy() == ~vals).all()
    assert (qb.abs(x).numpy() == vals).all()
    assert (qb.sign(x).numpy() == np.sign(vals)).all()
    for to in (qb.float32, qb.float64, qb.int32, qb.int64, qb.uint8, qb.uint32, qb.bool_):
        for f in (lambda v: v.astype(to), qb.jit(lambda v: v.astype(to))):
            got = np.asarray(f(x))
            assert got.dtype == to.np and (got == vals.astype(to.np)).all(), to
    # Unsigned sums accumulate as uint32 (JAX x64: uint64, which Quabla lacks).
    assert (qb.jit(lambda v: qb.sum(v))(x)).item() == int(vals.astype(np.uint64).sum() % 2**32)
    assert qb.max(x).item() == vals.max() and qb.min(x).item() == vals.min()
    assert qb.argmax(x).item() == int(np.argmax(vals))
    assert (x ** 3).dtype is dt


def test_float_to_unsigned_conversion_truncates_and_saturates():
    f = np.array([-3.5, -0.5, 0.0, 2.9, 4294967295.0, 4294967296.0, 1e20, 200.7])
    got = qb.jit(lambda v: v.astype(qb.uint32))(qb.asarray(f))
    assert got.tolist() == [0, 0, 0, 2, 4294967295, 4294967295, 4294967295, 200]
    assert qb.asarray(f).astype(qb.uint32).tolist() == got.tolist()
    assert qb.asarray(f).astype(qb.uint8).tolist() == [0, 0, 0, 2, 255, 255, 255, 200]


@pytest.mark.parametrize("dt", [np.uint32, np.uint8, np.int32, np.int64])
def test_shifts_and_popcount_match_lax(dt):
    info = np.iinfo(dt)
    vals = np.array([0, 1, 3, info.max, info.min, info.max // 3, 5], dt)
    amounts = np.array([0, 1, 7, info.bits - 1, info.bits, info.bits + 3, 2], dt)
    a, b = pairs(vals)[0], np.tile(amounts, len(vals))
    qa, qb_ = qb.asarray(a, dtype=qb.dtype(dt)), qb.asarray(b, dtype=qb.dtype(dt))
    for qf, jf in (
        (qb.shift_left, jax.lax.shift_left),
        (qb.shift_right_logical, jax.lax.shift_right_logical),
        (qb.shift_right_arithmetic, jax.lax.shift_right_arithmetic),
    ):
        want = np.asarray(jf(jnp.asarray(a), jnp.asarray(b)))
        assert (qf(qa, qb_).numpy() == want).all(), qf.__name__
        assert (qb.jit(qf)(qa, qb_).numpy() == want).all(), qf.__name__
    assert (qb.population_count(qa).numpy() == np.asarray(jax.lax.population_count(jnp.asarray(a)))).all()
    # NumPy's operators: << and >> (arithmetic for signed, logical for unsigned).
    small = np.array([0, 1, 2, 3], dt)
    assert ((qb.asarray(vals) << qb.asarray(small[:1].repeat(len(vals)))).numpy() == (vals << small[0])).all()
    assert ((qb.asarray(vals) >> 2).numpy() == (vals >> dt(2))).all()
    assert (qb.jit(lambda v: v >> 1)(qb.asarray(vals)).numpy() == (vals >> dt(1))).all()


def test_bitwise_count_and_not():
    assert qb.bitwise_count(qb.array([-3, 7])).tolist() == np.bitwise_count(np.array([-3, 7])).tolist()
    assert qb.bitwise_count(qb.array([-3, 7])).dtype is qb.uint8
    assert qb.bitwise_not(qb.asarray(U8, dtype=qb.uint8)).tolist() == (~U8).tolist()
    with pytest.raises(qb.DTypeError, match="bitwise_not"):
        qb.bitwise_not(qb.array([1.0]))


def test_vmap_matches_a_loop():
    a = qb.asarray(U32.reshape(2, 5))
    f = lambda v: qb.shift_right_logical(v * 2654435761, 7) ^ v  # noqa: E731
    got = qb.vmap(f)(a).numpy()
    want = np.stack([f(a[i]).numpy() for i in range(2)])
    assert (got == want).all()


def test_bad_operands_raise_typed_errors():
    with pytest.raises(qb.DTypeError, match=r"shift_left: operand 0 has dtype float64 and shape \(2,\)"):
        qb.shift_left(qb.array([1.0, 2.0]), 1)
    with pytest.raises(qb.DTypeError, match="population_count"):
        qb.population_count(qb.array([True]))
    with pytest.raises(qb.DTypeError, match="quabla dtypes are .*uint8 and uint32"):
        qb.asarray(np.array([1], np.uint64))
    with pytest.raises(qb.DTypeError, match="right_shift: operand 0 has dtype float64"):
        qb.asarray(U32) >> 1.5
    with pytest.raises(qb.DTypeError, match="not an integer dtype"):
        qb.iinfo(qb.float32)


def test_grad_through_unsigned_is_zero_and_float_paths_differentiate():
    # Integer intermediates carry no tangent; a float path next to them differentiates.
    def f(x):
        bits = qb.asarray(np.array([3, 5], np.uint32))
        return qb.sum(x * (bits >> 1).astype(qb.float64))

    g = qb.grad(f)(qb.array([1.0, 2.0]))
    assert g.tolist() == [1.0, 2.0]


def test_stablehlo_export_spells_ui32():
    text = qb.jit(lambda x, y: (x // y) >> 3).lower(qb.asarray(U32), qb.asarray(U32)).as_text(dialect="stablehlo")
    assert "ui32" in text and "stablehlo.shift_right_logical" in text


def test_unsigned_window_min_max_compare_unsigned():
    # The CPU lowering compared unsigned window elements as signed: cummin of
    # uint8 [3, 1, 2] was [255, 255, 255]. Checked against NumPy's running extrema.
    for dt in (qb.uint8, qb.uint32):
        x = qb.asarray(np.array([3, 1, 2, 200, 0, 7])).astype(dt)
        v = np.array([3, 1, 2, 200, 0, 7])
        np.testing.assert_array_equal(np.asarray(qb.lax.cummin(x)), np.minimum.accumulate(v))
        np.testing.assert_array_equal(np.asarray(qb.lax.cummax(x)), np.maximum.accumulate(v))
        np.testing.assert_array_equal(np.asarray(qb.lax.cummin(x, reverse=True)), np.minimum.accumulate(v[::-1])[::-1])
        np.testing.assert_array_equal(np.asarray(qb.jit(lambda a: qb.lax.cummax(a, reverse=True))(x)), np.maximum.accumulate(v[::-1])[::-1])
