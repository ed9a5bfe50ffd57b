"""vmap equals a Python loop over examples and JAX's vmap: every op of the derivative table
with each mapped/unmapped operand combination and non-zero in_axes/out_axes; pytree
prefixes; vmap(grad) (per-example gradients w.r.t. unmapped params); vmap(vmap); vmap of an
HVP; composition with jit and grad; misuse errors naming the argument, shape and axis."""

import itertools

import numpy as np
import pytest

import quabla as qb
from misuse import raises

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402
from test_autodiff_jax import OPS, close  # noqa: E402

B = 3


def _loop(qf, args, in_axes, out_axes):
    """Stacks jit(qf) over the examples, along out_axes (leafwise)."""
    f = qb.jit(qf)
    outs = []
    for b in range(B):
        ex = [np.take(a, b, axis=ax) if ax is not None else a for a, ax in zip(args, in_axes)]
        outs.append(f(*[qb.array(e) for e in ex]))
    leaves0, tree = qb.tree.flatten(outs[0])
    cols = [[qb.tree.flatten(o)[0][k].numpy() for o in outs] for k in range(len(leaves0))]
    return qb.tree.unflatten(tree, [np.stack(c, axis=out_axes) for c in cols])


def _combos():
    out = []
    for name, qf, jf, args in OPS:
        n = len(args)
        for mask in itertools.product([True, False], repeat=n):
            if not any(mask):
                continue
            out.append(pytest.param(qf, jf, args, mask, id=f"{name}-" + "".join("m" if m else "u" for m in mask)))
    return out


@pytest.mark.parametrize("qf,jf,args,mask", _combos())
def test_vmap_op(qf, jf, args, mask):
    rng = np.random.default_rng(sum(mask) + len(mask))
    in_axes, bargs = [], []
    for k, (a, m) in enumerate(zip(args, mask)):
        if not m:
            in_axes.append(None)
            bargs.append(a)
            continue
        ax = (k + 1) % (a.ndim + 1)  # a non-zero axis where the rank allows
        stack = [a + 0.01 * rng.normal(size=a.shape) for _ in range(B)]
        bargs.append(np.stack(stack, axis=ax))
        in_axes.append(ax)
    out_axes = -1 if sum(mask) % 2 else 0
    got = qb.vmap(qf, in_axes=tuple(in_axes), out_axes=out_axes)(*[qb.array(a) for a in bargs])
    close(got, _loop(qf, bargs, in_axes, out_axes), what="vmap vs loop")
    close(got, jax.vmap(jf, in_axes=tuple(in_axes), out_axes=out_axes)(*bargs), what="vmap vs jax")


def test_pytree_prefixes_negative_axes_and_kwargs():
    rng = np.random.default_rng(0)
    p = {"w": rng.normal(size=(4, 3)), "b": rng.normal(size=(B, 3))}
    xs = [rng.normal(size=(4, B)), rng.normal(size=(B,))]

    def f(p, xs, scale=1.0):
        return {"y": qb.tanh(xs[0] @ p["w"] + p["b"]) * xs[1] * scale, "s": qb.sum(p["w"])}

    def fj(p, xs, scale=1.0):
        return {"y": jnp.tanh(xs[0] @ p["w"] + p["b"]) * xs[1] * scale, "s": jnp.sum(p["w"])}

    in_axes = ({"w": None, "b": 0}, [-1, 0])
    out_axes = {"y": 1, "s": None}
    qp = {k: qb.array(v) for k, v in p.items()}
    qxs = [qb.array(x) for x in xs]
    got = qb.vmap(f, in_axes=in_axes, out_axes=out_axes)(qp, qxs)
    want = jax.vmap(fj, in_axes=in_axes, out_axes=out_axes)(p, xs)
    close(got, want)
    assert got["y"].shape == (3, B) and got["s"].shape == ()
    # a list in_axes matches a tuple of arguments; keyword arguments are mapped along axis 0
    got = qb.vmap(f, in_axes=[{"w": None, "b": 0}, [1, 0]])(qp, qxs, scale=qb.array(np.arange(1.0, B + 1)))
    want = jax.vmap(fj, in_axes=({"w": None, "b": 0}, [1, 0]))(p, xs, scale=np.arange(1.0, B + 1))
    close(got, want)


def test_unmapped_results_broadcast_or_stay():
    x = qb.array(np.arange(6.0).reshape(B, 2))
    c = qb.array([1.0, 2.0])
    out = qb.vmap(lambda x, c: (x * 2.0, c * 3.0, 7.0), in_axes=(0, None))(x, c)
    assert out[0].shape == (B, 2) and out[1].shape == (B, 2) and out[2].shape == (B,)
    assert out[1].tolist() == [[3.0, 6.0]] * B and out[2].tolist() == [7.0] * B
    out = qb.vmap(lambda x, c: (x * 2.0, c * 3.0), in_axes=(0, None), out_axes=(0, None))(x, c)
    assert out[1].shape == (2,) and out[1].tolist() == [3.0, 6.0]


def test_vmap_grad_per_example_gradients():
    rng = np.random.default_rng(1)
    w, xs, ys = rng.normal(size=(3, 2)), rng.normal(size=(5, 3)), rng.normal(size=(5, 2))

    def loss(w, x, y):
        return qb.sum((qb.tanh(x @ w) - y) ** 2)

    def lossj(w, x, y):
        return jnp.sum((jnp.tanh(x @ w) - y) ** 2)

    got = qb.vmap(qb.grad(loss), in_axes=(None, 0, 0))(qb.array(w), qb.array(xs), qb.array(ys))
    assert got.shape == (5, 3, 2)
    close(got, jax.vmap(jax.grad(lossj), in_axes=(None, 0, 0))(w, xs, ys))
    g = qb.jit(qb.grad(loss))
    close(got, np.stack([g(qb.array(w), qb.array(x), qb.array(y)).numpy() for x, y in zip(xs, ys)]))
    # gradient w.r.t. the mapped argument and both, value_and_grad under vmap
    close(qb.vmap(qb.grad(loss, argnums=1), in_axes=(None, 0, 0))(qb.array(w), qb.array(xs), qb.array(ys)),
          jax.vmap(jax.grad(lossj, argnums=1), in_axes=(None, 0, 0))(w, xs, ys))
    close(qb.vmap(qb.value_and_grad(loss, argnums=(0, 1)), in_axes=(None, 0, 0))(qb.array(w), qb.array(xs), qb.array(ys)),
          jax.vmap(jax.value_and_grad(lossj, argnums=(0, 1)), in_axes=(None, 0, 0))(w, xs, ys))
    # grad of a loss over vmap: an ordinary gradient of a scalar
    bl = lambda w: qb.mean(qb.vmap(loss, in_axes=(None, 0, 0))(w, qb.array(xs), qb.array(ys)))  # noqa: E731
    blj = lambda w: jnp.mean(jax.vmap(lossj, in_axes=(None, 0, 0))(w, xs, ys))  # noqa: E731
    close(qb.grad(bl)(qb.array(w)), jax.grad(blj)(w))
    close(qb.jit(qb.value_and_grad(bl))(qb.array(w)), jax.value_and_grad(blj)(w))


def test_vmap_vmap():
    rng = np.random.default_rng(2)
    a, b, c = rng.normal(size=(4, 3)), rng.normal(size=(5, 3)), rng.normal(size=3)

    def f(x, y, z):
        return qb.sum(qb.sin(x * y) + z) * x

    def fj(x, y, z):
        return jnp.sum(jnp.sin(x * y) + z) * x

    inner = dict(in_axes=(None, 0, None))
    outer = dict(in_axes=(0, None, None), out_axes=-1)
    got = qb.vmap(qb.vmap(f, **inner), **outer)(qb.array(a), qb.array(b), qb.array(c))
    want = jax.vmap(jax.vmap(fj, **inner), **outer)(a, b, c)
    close(got, want)
    assert got.shape == (5, 3, 4)
    # three levels, jit around
    x = rng.normal(size=(2, 3, 4))
    got = qb.jit(qb.vmap(qb.vmap(qb.vmap(lambda t: t * qb.exp(t)))))(qb.array(x))
    close(got, x * np.exp(x))
    # vmap of jit, jit of vmap
    close(qb.vmap(qb.jit(lambda t: qb.sum(t**2)))(qb.array(a)), np.sum(a**2, axis=1))
    close(qb.jit(qb.vmap(lambda t: qb.sum(t**2), in_axes=1))(qb.array(a)), np.sum(a**2, axis=0))


def test_vmap_of_hvp_and_jacobian():
    rng = np.random.default_rng(3)
    x, vs = rng.normal(size=4), rng.normal(size=(6, 4))

    def f(x):
        return qb.sum(qb.tanh(x) ** 3) * qb.sum(x)

    def fj(x):
        return jnp.sum(jnp.tanh(x) ** 3) * jnp.sum(x)

    hvp = lambda v: qb.jvp(qb.grad(f), (qb.array(x),), (v,))[1]  # noqa: E731
    hvpj = lambda v: jax.jvp(jax.grad(fj), (x,), (v,))[1]  # noqa: E731
    close(qb.vmap(hvp)(qb.array(vs)), jax.vmap(hvpj)(vs))
    # batched points and directions
    xs = rng.normal(size=(6, 4))
    hv2 = lambda x, v: qb.jvp(qb.grad(f), (x,), (v,))[1]  # noqa: E731
    hv2j = lambda x, v: jax.jvp(jax.grad(fj), (x,), (v,))[1]  # noqa: E731
    close(qb.vmap(hv2)(qb.array(xs), qb.array(vs)), jax.vmap(hv2j)(xs, vs))
    # vmap of hessian and of jacobian, jacobian of vmap
    close(qb.vmap(qb.hessian(f))(qb.array(xs)), jax.vmap(jax.hessian(fj))(xs))
    close(qb.jacobian(qb.vmap(lambda t: qb.sin(t) * t[0]))(qb.array(xs[:2])),
          jax.jacobian(jax.vmap(lambda t: jnp.sin(t) * t[0]))(xs[:2]))


def test_vmap_closure_over_outer_tracer():
    rng = np.random.default_rng(4)
    xs, w = rng.normal(size=(5, 3)), rng.normal(size=3)

    def loss(w):
        return qb.sum(qb.vmap(lambda x: qb.sum(qb.sin(x * w)))(qb.array(xs)) ** 2)

    def lossj(w):
        return jnp.sum(jax.vmap(lambda x: jnp.sum(jnp.sin(x * w)))(xs) ** 2)

    close(qb.value_and_grad(loss)(qb.array(w)), jax.value_and_grad(lossj)(w))


# ---------------------------------------------------------------------------------------------
# Misuse


def test_mismatched_batch_sizes():
    def f(a, b):
        return a + b

    with raises(qb.BatchingError, "different sizes", "argument a of shape (3, 4) has size 3 along axis 0",
                "argument b of shape (5, 4) has size 5 along axis 0") as e:
        qb.vmap(f)(qb.ones((3, 4)), qb.ones((5, 4)))
    assert isinstance(e.value, qb.ShapeError) and isinstance(e.value, ValueError)
    with raises(qb.BatchingError, "argument p['x'] of shape (2, 3) has size 3 along axis 1",
                "argument y of shape (4,) has size 4 along axis 0"):
        qb.vmap(lambda p, y: p["x"][0] * y, in_axes=({"x": 1}, 0))({"x": qb.ones((2, 3))}, qb.ones(4))


def test_in_axes_out_of_range():
    with raises(qb.BatchingError, "in_axes=2", "argument a of shape (3, 4)", "axes -2..1"):
        qb.vmap(lambda a: a, in_axes=2)(qb.ones((3, 4)))
    with raises(qb.BatchingError, "in_axes=-3", "argument a of shape (3, 4)"):
        qb.vmap(lambda a: a, in_axes=-3)(qb.ones((3, 4)))
    with raises(qb.BatchingError, "argument a of shape ()", "rank-0"):
        qb.vmap(lambda a: a)(qb.array(1.0))
    with raises(qb.BatchingError, "argument n", "Python int"):
        qb.vmap(lambda a, n: a * n)(qb.ones(3), 2)
    with raises(qb.BatchingError, "out_axes=2", "per-example shape (4,)", "-2..1"):
        qb.vmap(lambda a: a, out_axes=2)(qb.ones((3, 4)))


def test_in_axes_structure_mismatch():
    x = qb.ones((3, 2))
    with raises(qb.BatchingError, "in_axes is a tuple of length 1", "2 positional arguments"):
        qb.vmap(lambda a, b: a, in_axes=(0,))(x, x)
    with raises(qb.BatchingError, "argument p", "keys ['a', 'c']", "keys ['a', 'b']"):
        qb.vmap(lambda p: p["a"], in_axes=({"a": 0, "c": 0},))({"a": x, "b": x})
    with raises(qb.BatchingError, "argument xs", "list of length 3", "list of length 2"):
        qb.vmap(lambda xs: xs[0], in_axes=([0, 0, 0],))([x, x])
    with raises(qb.BatchingError, "argument a", "is a list", "a leaf"):
        qb.vmap(lambda a: a, in_axes=([0],))(x)
    with raises(qb.BatchingError, "ints or None", "'zero'"):
        qb.vmap(lambda a: a, in_axes=("zero",))(x)
    with raises(qb.BatchingError, "no argument is mapped"):
        qb.vmap(lambda a: a, in_axes=None)(x)
    with raises(qb.BatchingError, "out_axes for the output", "tuple of length 3", "tuple of length 2"):
        qb.vmap(lambda a: (a, a), out_axes=(0, 0, 0))(x)


def test_out_axes_none_on_mapped_result():
    x, c = qb.ones((3, 2)), qb.ones(2)
    with raises(qb.BatchingError, "out_axes=None for output[1]", "per-example shape (2,)",
                "depends on a mapped argument", "batch of size 3"):
        qb.vmap(lambda x, c: (c * 2.0, x * c), in_axes=(0, None), out_axes=(None, None))(x, c)
    # also when the dependence goes through an inner transform
    with raises(qb.BatchingError, "out_axes=None"):
        qb.vmap(qb.grad(lambda x, c: qb.sum(x * c), argnums=1), in_axes=(0, None), out_axes=None)(x, c)
    # inside jit, the error is raised while tracing
    with raises(qb.BatchingError, "out_axes=None"):
        qb.jit(lambda x: qb.vmap(lambda t: t * 2.0, out_axes=None)(x))(x)


def test_axis_size_and_axis_name_as_jax():
    import jax
    import jax.numpy as jnp

    got = qb.vmap(lambda x: x * 2, in_axes=None, axis_size=3)(qb.ones(2))
    want = jax.vmap(lambda x: x * 2, in_axes=None, axis_size=3)(jnp.ones(2))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    got = qb.jit(qb.vmap(lambda x, y: x + y, in_axes=(None, 0), axis_size=2, axis_name="batch"))(qb.ones(2), qb.ones((2, 2)))
    assert got.tolist() == [[2.0, 2.0], [2.0, 2.0]]
    with pytest.raises(qb.BatchingError, match="axis_size=4"):
        qb.vmap(lambda x: x, axis_size=4)(qb.ones(3))
    with pytest.raises(qb.BatchingError, match="axis_size"):
        qb.vmap(lambda x: x, in_axes=None)(qb.ones(3))
    with pytest.raises(qb.UnsupportedOperationError, match="spmd_axis_name"):
        qb.vmap(lambda x: x, spmd_axis_name="d")
