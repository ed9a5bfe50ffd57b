"""Misuse of grad/value_and_grad/jvp/vjp/jacobian: one test per mistake, asserting the
exception type and the message's content (the function, the argument, shapes, dtypes)."""


import quabla as qb
from misuse import raises


def loss(x):
    return x * 2.0


def test_int_argument_differentiated():
    with raises(qb.DTypeError, "grad(<lambda>)", "argument n (0)", "int64", "astype") as e:
        qb.grad(lambda n: qb.sum(n * 2.0))(qb.array([1, 2]))
    assert isinstance(e.value, TypeError)
    with raises(qb.DTypeError, "argument m (1)", "int32"):
        qb.grad(lambda x, m: qb.sum(x * m), argnums=(0, 1))(qb.ones(2), qb.array([1, 2], dtype=qb.int32))
    with raises(qb.DTypeError, "jacobian", "argument k (0)", "bool_"):
        qb.jacobian(lambda k: qb.where(k, 1.0, 0.0))(qb.array([True, False]))
    with raises(qb.DTypeError, "value_and_grad(<lambda>)", "int64"):
        qb.jit(qb.value_and_grad(lambda n: qb.sum(n * 2.0)))(qb.array([1, 2]))


def test_non_scalar_grad_output():
    with raises(qb.ShapeError, "grad(loss)", "scalar", "shape (3,)", "float64", "qb.jacobian"):
        qb.grad(loss)(qb.ones(3))
    with raises(qb.ShapeError, "shape (2, 2)"):
        qb.value_and_grad(lambda x: qb.ones((2, 2)) * x)(1.0)
    with raises(qb.ShapeError, "dtype int64"):
        qb.grad(lambda x: qb.argmax(x))(qb.ones(3))
    with raises(TypeError, "single array"):
        qb.grad(lambda x: (x, x))(1.0)


def test_has_aux_structure():
    with raises(TypeError, "has_aux=True", "pair"):
        qb.grad(lambda x: x * 2.0, has_aux=True)(1.0)
    with raises(TypeError, "has_aux=True"):
        qb.vjp(lambda x: x * 2.0, 1.0, has_aux=True)


def test_argnums():
    with raises(ValueError, "argnums 2", "2 positional arguments"):
        qb.grad(lambda x, y: x * y, argnums=2)(1.0, 2.0)
    with raises(ValueError, "repeated"):
        qb.grad(lambda x, y: x * y, argnums=(0, 0))(1.0, 2.0)
    with raises(TypeError, "argnums must be an int"):
        qb.grad(lambda x: x, argnums="x")(1.0)


def test_tangent_and_cotangent_mismatch():
    x = qb.ones(3)
    with raises(qb.ShapeError, "tangent x", "shape (2,)", "primal has shape (3,)"):
        qb.jvp(lambda x: x * 2.0, (x,), (qb.ones(2),))
    with raises(qb.ShapeError, "dtype float32", "float64"):
        qb.jvp(lambda x: x * 2.0, (x,), (qb.ones(3, dtype=qb.float32),))
    with raises(ValueError, "2 primals but 1 tangents"):
        qb.jvp(lambda x, y: x * y, (x, x), (x,))
    with raises(ValueError, "structure"):
        qb.jvp(lambda p: p["a"], ({"a": x},), ({"b": x},))
    with raises(TypeError, "tuples or lists"):
        qb.jvp(lambda x: x, x, x)
    _, pull = qb.vjp(lambda x: x * 2.0, x)
    with raises(qb.ShapeError, "cotangent", "shape (4,)", "shape (3,)"):
        pull(qb.ones(4))
    with raises(ValueError, "cotangent has structure"):
        pull((qb.ones(3), qb.ones(3)))


def test_bad_arguments():
    with raises(TypeError, "argument x", "str"):
        qb.grad(lambda x: 1.0)("a")
    with raises(TypeError, "expected a callable"):
        qb.grad(3)
    with raises(TypeError, "outputs must be pytrees of arrays", "str"):
        qb.jit(qb.vmap(lambda x: "s"))(qb.ones(2))


def test_escaped_tracer_through_transform():
    box = []

    def f(x):
        box.append(x)
        return qb.sum(x)

    qb.grad(f)(qb.ones(2))
    with raises(qb.TracerError, "escaped"):
        qb.grad(lambda y: qb.sum(y * box[0]))(qb.ones(2))
