"""Tensors: creation, dtype rules, conversions and NumPy interop (buffer protocol import with
any layout, zero-copy read-only export, __array__)."""

import numpy as np
import pytest

import quabla as qb


def test_dtype_inference():
    assert qb.array(1.5).dtype == qb.float64
    assert qb.array(3).dtype == qb.int64
    assert qb.array(True).dtype == qb.bool_
    assert qb.array([[1, 2], [3, 4]]).dtype == qb.int64
    assert qb.array([1, 2.5]).dtype == qb.float64
    assert qb.array([True, False]).dtype == qb.bool_
    assert qb.array([[[[1.0]]]]).shape == (1, 1, 1, 1)
    for npd, qd in [(np.float32, qb.float32), (np.float64, qb.float64), (np.int32, qb.int32), (np.int64, qb.int64), (np.bool_, qb.bool_)]:
        assert qb.array(np.zeros(3, dtype=npd)).dtype == qd
    assert qb.array(np.arange(3, dtype=np.uint8)).dtype == qb.int32
    assert qb.array([1, 2], dtype=qb.float32).dtype == qb.float32
    assert qb.array([1.9, -1.9], dtype="int32").tolist() == [1, -1]


def test_dtype_objects():
    assert qb.float32 == np.float32 and qb.float32 == "float32" and np.dtype(qb.int64) == np.int64
    assert qb.dtype(float) is qb.float64 and qb.dtype("bool") is qb.bool_
    assert repr(qb.float32) == "quabla.float32"
    with pytest.raises(qb.DTypeError, match="float16"):
        qb.dtype(np.float16)


def test_properties_and_conversions():
    x = qb.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=qb.float32)
    assert x.shape == (2, 3) and x.ndim == 2 and x.size == 6 and x.dtype == qb.float32
    assert x.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert len(x) == 2
    s = qb.array(2.5)
    assert s.item() == 2.5 and float(s) == 2.5 and int(s) == 2 and bool(s) is True
    assert isinstance(qb.array(3).item(), int) and isinstance(qb.array(True).item(), bool)
    assert float(qb.array([[7.0]])) == 7.0
    assert repr(qb.array([1.0, 2.0], dtype=qb.float32)) == "Tensor([1., 2.], dtype=float32)"
    assert [t.item() for t in qb.array([1, 2, 3])] == [1, 2, 3]
    assert f"{qb.array(0.5):.2f}" == "0.50"


def test_factories():
    assert qb.zeros((2, 3)).tolist() == [[0.0] * 3] * 2 and qb.zeros(2).dtype == qb.float64
    assert qb.ones(3, dtype=qb.int32).tolist() == [1, 1, 1]
    assert qb.full((2,), 7).dtype == qb.int64 and qb.full((2,), 7.0).tolist() == [7.0, 7.0]
    assert qb.arange(5).tolist() == [0, 1, 2, 3, 4] and qb.arange(5).dtype == qb.int64
    assert qb.arange(1.0, 2.0, 0.5).tolist() == [1.0, 1.5]
    assert qb.linspace(0, 1, 5).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert qb.eye(2, 3).tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    x = qb.ones((2, 2), dtype=qb.int32)
    assert qb.zeros_like(x).dtype == qb.int32 and qb.ones_like(x, dtype=qb.float32).dtype == qb.float32
    assert qb.full_like(x, 3).tolist() == [[3, 3], [3, 3]]
    assert qb.devices() == ["cpu"] + (["mlx"] if qb._mlx.available() else []) + (["xla"] if qb.sharding.available() else [])


def test_array_of_tensor_shares_storage_and_asarray_identity():
    x = qb.array([1.0, 2.0])
    y = qb.array(x)
    assert y is not x and y._shares_storage(x)
    assert qb.asarray(x) is x
    assert qb.asarray(x, dtype=qb.float32).dtype == qb.float32


def test_import_copies_any_layout():
    a = np.arange(24, dtype=np.float64).reshape(4, 6)
    for view in [a[::2, 1::2], a.T, a[:, ::-1], np.asfortranarray(a)]:
        t = qb.array(view)
        np.testing.assert_array_equal(t.numpy(), view)
    b = np.arange(4.0)
    t = qb.array(b)
    b[0] = 100.0
    assert t.tolist()[0] == 0.0  # always a copy
    # memoryview and other buffer exporters
    assert qb.array(memoryview(np.arange(3, dtype=np.int32))).tolist() == [0, 1, 2]


def test_import_rejects_foreign_byte_order_and_bad_dtypes():
    with pytest.raises(qb.DTypeError, match="byte order|not supported"):
        qb.array(np.arange(3, dtype=">f8"))
    with pytest.raises(qb.DTypeError, match="float16"):
        qb.array(np.zeros(2, dtype=np.float16))
    with pytest.raises(qb.DTypeError):
        qb.array(np.zeros(2, dtype=np.complex128))
    with pytest.raises(qb.DTypeError):
        qb.array(["a", "b"])


def test_export_zero_copy_read_only():
    x = qb.arange(6.0).reshape(2, 3) if False else qb.array(np.arange(6.0).reshape(2, 3))
    a = x.numpy()
    assert a.ctypes.data == x._data_ptr
    assert not a.flags.writeable
    with pytest.raises(ValueError):
        a[0, 0] = 1.0
    b = np.asarray(x)
    assert b.ctypes.data == x._data_ptr and b.shape == (2, 3)
    m = memoryview(x)
    assert m.readonly and m.format == "d" and m.shape == (2, 3)
    del x
    assert a.sum() == 15.0  # the view keeps the storage alive
    assert np.asarray(qb.array(True)).dtype == np.bool_
    assert np.asarray(qb.array(3.0)).shape == ()


def test_array_protocol_dtype_and_copy():
    x = qb.array([1.0, 2.0], dtype=qb.float32)
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    c = np.array(x, copy=True)
    assert c.flags.writeable and c.ctypes.data != x._data_ptr
    with pytest.raises(ValueError, match="copy"):
        x.__array__(dtype=np.float64, copy=False)


def test_numpy_ops_defer_to_tensor():
    x = qb.array([1.0, 2.0])
    r = np.array([10.0, 20.0]) + x
    assert isinstance(r, qb.Tensor) and r.tolist() == [11.0, 22.0]


def test_large_round_trip():
    a = np.random.default_rng(0).random(1_000_000)
    t = qb.array(a)
    np.testing.assert_array_equal(t.numpy(), a)


def test_operators_defer_to_operands_that_opt_out_of_array_operators():
    # NumPy's protocol (__array_ufunc__ = None, as a sparse matrix sets): the Tensor's operator
    # returns NotImplemented and Python calls the operand's reflected method.
    class Opaque:
        __array_ufunc__ = None

        def __rmatmul__(self, x):
            return ("rmatmul", x.shape)

        def __radd__(self, x):
            return ("radd", x.shape)

        def __rmul__(self, x):
            return ("rmul", x.shape)

    x = qb.ones((2, 3))
    assert x @ Opaque() == ("rmatmul", (2, 3))
    assert x + Opaque() == ("radd", (2, 3)) and x * Opaque() == ("rmul", (2, 3))
    with pytest.raises(TypeError):  # no reflected method: Python's TypeError
        x - Opaque()
    # Other foreign operands are still Quabla's typed error.
    with pytest.raises(qb.errors.ArgumentTypeError):
        x @ object()
    with pytest.raises(qb.errors.ArgumentTypeError):
        x + "a"


def test_numpy_ufuncs_on_tensors():
    # NumPy's ufunc protocol: a plain call of a ufunc that quabla.numpy has is that function
    # (a Tensor, so `ndarray + tensor` stays a Tensor); reductions, out= into NumPy arrays and
    # ufuncs Quabla lacks run in NumPy on copies, as a JAX array converts.
    t = qb.asarray(np.array([1.0, -2.0, 3.0, np.inf]))
    a = np.array([0.5, 0.5, 0.5, 0.5])
    for f in (np.isfinite, np.exp, np.abs, np.square, np.negative):
        got = f(t)
        assert isinstance(got, qb.Tensor)
        np.testing.assert_allclose(np.asarray(got), f(np.asarray(t)), rtol=1e-15)
    for f in (np.add, np.maximum, np.less, np.multiply):
        got = f(a, t)
        assert isinstance(got, qb.Tensor)
        np.testing.assert_array_equal(np.asarray(got), f(a, np.asarray(t)))
    assert isinstance(a + t, qb.Tensor) and isinstance(a @ qb.ones(4), qb.Tensor)
    assert bool(np.isfinite(qb.asarray(1.5)))
    assert np.add.reduce(qb.arange(4.0)) == 6.0
    np.testing.assert_array_equal(np.multiply.accumulate(qb.arange(1.0, 5.0)), [1.0, 2.0, 6.0, 24.0])
    b = np.zeros(4)
    b += qb.arange(4.0)
    np.testing.assert_array_equal(b, [0.0, 1.0, 2.0, 3.0])
    with pytest.raises(qb.errors.UnsupportedOperationError, match="immutable"):
        np.add(a, a, out=qb.ones(4))
    # A tracer still refuses: NumPy cannot compute on it.
    with pytest.raises(TypeError):
        qb.jit(lambda x: np.exp(x))(qb.ones(2))


def test_item_with_indices():
    x = qb.asarray(np.arange(6.0).reshape(2, 3))
    assert x.item(4) == 4.0 and x.item(1, 0) == 3.0 and x.item((0, 2)) == 2.0
    assert qb.asarray(2.5).item() == 2.5
