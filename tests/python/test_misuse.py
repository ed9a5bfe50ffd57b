"""One test per invalid call: the exception type (a QuablaError that is also the matching
builtin) and a message naming the op and the offending shapes/dtypes."""

import numpy as np
import pytest

import quabla as qb
from misuse import raises

X23 = qb.ones((2, 3))


def test_float32_float64_mix_asks_for_astype():
    with raises(qb.DTypeError, "add", "float32", "float64", "astype") as e:
        qb.ones(2, dtype=qb.float32) + qb.ones(2)
    assert isinstance(e.value, TypeError) and isinstance(e.value, qb.QuablaError)


def test_float32_float64_mix_in_jit():
    f = qb.jit(lambda a, b: a * b)
    with raises(qb.DTypeError, "mul", "float32", "float64"):
        f(qb.ones(2, dtype=qb.float32), qb.ones(2))


def test_broadcast_mismatch():
    with raises(qb.ShapeError, "add", "(2, 3)", "(4,)") as e:
        X23 + qb.ones(4)
    assert isinstance(e.value, ValueError)


def test_broadcast_to_bad_shape():
    with raises(qb.ShapeError, "broadcast_to", "(2, 3)", "(3, 3)"):
        qb.broadcast_to(X23, (3, 3))


def test_matmul_contracting_mismatch():
    with raises(qb.ShapeError, "matmul", "(2, 3)", "(4, 5)"):
        X23 @ qb.ones((4, 5))


def test_matmul_scalar_operand():
    with raises(qb.ShapeError, "matmul", "()"):
        qb.matmul(qb.array(1.0), X23)


def test_matmul_batch_mismatch():
    with raises(qb.ShapeError, "matmul", "(2,)", "(3,)"):
        qb.ones((2, 2, 3)) @ qb.ones((3, 3, 4))


def test_dot_not_aligned():
    with raises(qb.ShapeError, "dot", "(2, 3)", "(2,)"):
        qb.dot(X23, qb.ones(2))


def test_einsum_extent_mismatch():
    with raises(qb.ShapeError, "einsum", "'j'", "(4, 5)"):
        qb.einsum("ij,jk->ik", X23, qb.ones((4, 5)))


def test_bad_axis():
    with raises(qb.ShapeError, "sum", "axis 3", "(2, 3)"):
        qb.sum(X23, axis=3)


def test_bad_negative_axis():
    with raises(qb.ShapeError, "argmax", "axis -3", "(2, 3)"):
        qb.argmax(X23, axis=-3)


def test_repeated_axis():
    with raises(qb.ShapeError, "mean", "repeated axis", "(2, 3)"):
        qb.mean(X23, axis=(1, -1))


def test_reshape_size_mismatch():
    with raises(qb.ShapeError, "reshape", "(2, 3)", "(4,)"):
        X23.reshape(4)


def test_concatenate_shape_mismatch():
    with raises(qb.ShapeError, "concatenate", "(2, 3)", "(3, 2)"):
        qb.concatenate([X23, qb.ones((3, 2))], axis=0)


def test_stack_shape_mismatch():
    with raises(qb.ShapeError, "stack", "(2, 3)", "(3,)"):
        qb.stack([X23, qb.ones(3)])


def test_squeeze_non_unit_axis():
    with raises(qb.ShapeError, "squeeze", "axis 1", "(2, 3)"):
        qb.squeeze(X23, 1)


def test_split_uneven():
    with raises(qb.ShapeError, "split", "(2, 3)", "2 equal sections"):
        qb.split(X23, 2, axis=1)


def test_logical_op_on_floats_names_op_and_type():
    with raises(qb.DTypeError, "quabla.and", "tensor<2x3xf64>"):
        X23 & X23


def test_shape_rule_error_in_jit_points_at_user_line():
    def f(x):
        return x | x  # line checked below

    with raises(qb.DTypeError, "quabla.or", "tensor<2xf32>", f"{__file__}") as e:
        qb.jit(f)(qb.ones(2, dtype=qb.float32))
    assert f":{f.__code__.co_firstlineno + 1}:" in str(e.value)


def test_float16_array():
    with raises(qb.DTypeError, "float16"):
        qb.array(np.ones(3, dtype=np.float16))


def test_float16_astype():
    with raises(qb.DTypeError, "float16"):
        X23.astype(np.float16)


@pytest.mark.parametrize("make", [
    lambda: qb.array([]),
    lambda: qb.array(np.zeros((2, 0))),
    lambda: qb.zeros((0, 3)),
    lambda: qb.full((3, 0), 1.0),
    lambda: qb.arange(0),
    lambda: X23[1:1],
])
def test_empty_arrays(make):
    with raises(qb.ShapeError, "zero"):
        make()


def test_ragged_list():
    with raises(qb.ShapeError, "array"):
        qb.array([[1.0, 2.0], [3.0]])


@pytest.mark.parametrize("use,what", [
    (lambda x: 1 if x > 0 else 0, "bool()"),
    (lambda x: float(x), "float()"),
    (lambda x: int(x), "int()"),
    (lambda x: x.item(), ".item()"),
    (lambda x: x.numpy(), ".numpy()"),
    (lambda x: np.asarray(x), "np.asarray"),
    (lambda x: qb.ones(3)[x], "index"),
    (lambda x: range(x), "index"),
])
def test_tracer_misuse(use, what):
    with raises(qb.TracerError, what, "qb.where", "Tracer<") as e:
        qb.jit(use)(qb.array(1.0))
    assert isinstance(e.value, TypeError)


def test_leaked_tracer():
    box = []

    @qb.jit
    def f(x):
        box.append(x)
        return x + 1

    f(qb.ones(2))
    with raises(qb.TracerError, "escaped"):
        box[0] * 2


def test_max_traces_must_be_a_positive_integer():
    for bad in (0, -1, 2.5, True, "8"):
        with raises(qb.InvalidArgumentError, "max_traces must be a positive integer or None"):
            qb.jit(lambda x: x, max_traces=bad)


def test_unsupported_device():
    f = qb.jit(lambda x: x, device="cuda")
    with raises(qb.UnsupportedOperationError, "cuda", "not available") as e:
        f(qb.ones(2))
    assert e.value.device == "cuda" and e.value.op == "jit"
    assert isinstance(e.value, NotImplementedError) and isinstance(e.value, ValueError)


def test_einsum_ellipsis_unsupported():
    # Issue 11 adds '...' to einsum (tests/python/test_numpy_breadth.py); what stays a misuse
    # is a malformed ellipsis, a typed error naming einsum.
    with raises(ValueError, "einsum"):
        qb.einsum("..i->...", X23)


def test_boolean_mask_traced_or_empty():
    with raises(qb.errors.NonConcreteBooleanIndexError, "boolean index", "traced", "qb.where"):
        qb.jit(lambda x: x[x > 0])(X23)
    with raises(qb.ShapeError, "selects no element", "zero-size"):
        X23[np.zeros((2, 3), dtype=bool)]
    with raises(IndexError, "boolean index", "(3,)", "(2,)"):
        X23[np.ones(3, dtype=bool)]


def test_index_out_of_bounds():
    # Not an error: clamped after one wrap from the end, as JAX's gather (x[5] is the last row).
    assert X23[5].tolist() == X23[1].tolist() and X23[-5].tolist() == X23[0].tolist()


def test_take_out_of_range():
    with raises(IndexError, "take", "extent 3"):
        qb.take(X23, [3], axis=1, mode="raise")


def test_bool_of_multi_element_tensor():
    with raises(qb.ShapeError, "bool()", "[2, 3]", "qb.any"):
        bool(X23)


def test_item_of_multi_element_tensor():
    with raises(qb.ShapeError, "item()", "[2, 3]"):
        X23.item()


def test_jit_non_array_argument():
    with raises(TypeError, "argument leaves", "str", "static_argnums"):
        qb.jit(lambda x: x)("hello")


def test_unhashable_static_argument():
    with raises(TypeError, "static argument 1", "list"):
        qb.jit(lambda x, n: x, static_argnums=1)(qb.ones(2), [1])


def test_tensors_are_immutable():
    with pytest.raises((TypeError, AttributeError)):
        X23[0] = 1.0
    with pytest.raises((TypeError, BufferError)):
        memoryview(X23).cast("B")[0:1] = b"\x00"  # read-only export


def test_item_assignment_names_at():
    # Arrays are immutable, as JAX's: a typed TypeError pointing to .at[].set.
    with raises(TypeError, "immutable", "x.at[idx].set(y)"):
        X23[0, 0] = 1.0
    with raises(qb.ArgumentTypeError, "Tracer", "immutable"):
        qb.jit(lambda v: v.__setitem__(0, 1.0))(X23)
