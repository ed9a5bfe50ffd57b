"""quabla._shard_map (``jax.shard_map``) against JAX 0.10.2 (x64).

Meshes larger than one device: JAX's results come from one subprocess with
``XLA_FLAGS=--xla_force_host_platform_device_count=8`` (this file run as a script, results
through np.savez); Quabla runs the same cases in this process on device-less meshes
(``AbstractMesh``), eagerly and under jit. Size-1 meshes: in this process against
jax.shard_map, with ``qb.make_mesh``. Then gradients, vmap, f32, the decorator and the
experimental API, and the typed errors."""

import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import quabla as qb
from breadth_util import assert_close
from quabla import _shard_map as sm
from quabla import errors
from quabla.errors import ArgumentTypeError, InvalidArgumentError, ShapeError
from quabla.sharding import PartitionSpec as QP

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")

RNG = np.random.default_rng(0)
A = RNG.standard_normal((8, 12))
B = RNG.standard_normal((12, 6))
X8 = np.arange(8.0) - 2.5
X24 = RNG.standard_normal((4, 6))
W = RNG.standard_normal((3,))
XB = RNG.standard_normal((8, 3))
YB = XB @ np.array([1.0, -2.0, 0.5]) + 0.3


class NS:
    """The library a case runs on: ``np`` (numpy namespace), ``lax``, ``sm`` (shard_map),
    ``mesh(sizes, names)``, ``P``, ``grad``."""

    def __init__(self, lib):
        if lib == "qb":
            self.np, self.lax, self.sm, self.P, self.grad = qb.numpy, qb.lax, sm.shard_map, QP, qb.grad
            self.mesh = lambda sizes, names: sm.AbstractMesh(sizes, names)
        else:
            import jax.numpy as jnp

            self.np, self.lax, self.sm, self.P, self.grad = jnp, jax.lax, jax.shard_map, jax.sharding.PartitionSpec, jax.grad
            auto = jax.sharding.AxisType.Auto
            self.mesh = lambda sizes, names: jax.make_mesh(sizes, names, axis_types=(auto,) * len(names))


def c_matmul_psum(L, a, b):
    """JAX docs: a contracting dimension split over 'y', the partial products psum'd."""
    m = L.mesh((2, 4), ("x", "y"))
    f = L.sm(lambda ab, bb: L.lax.psum(ab @ bb, "y"), mesh=m, in_specs=(L.P("x", "y"), L.P("y", None)), out_specs=L.P("x", None))
    return f(a, b)


def c_matmul_allgather(L, a, b):
    """JAX docs: the right operand all_gather'ed (tiled) in every instance."""
    m = L.mesh((4,), ("i",))
    f = L.sm(lambda ab, bb: ab @ L.lax.all_gather(bb, "i", tiled=True), mesh=m, in_specs=(L.P("i", None), L.P("i", None)), out_specs=L.P("i", None))
    return f(a, b)


def c_matmul_psum_scatter(L, a, b):
    """JAX docs: reduce-scatter of the partial products."""
    m = L.mesh((4,), ("i",))
    f = L.sm(lambda ab, bb: L.lax.psum_scatter(ab @ bb, "i", scatter_dimension=0, tiled=True), mesh=m,
             in_specs=(L.P(None, "i"), L.P("i", None)), out_specs=L.P("i", None))
    return f(a, b)


def c_all_gather_untiled(L, x):
    m = L.mesh((4,), ("i",))
    return L.sm(lambda v: L.lax.all_gather(v, "i"), mesh=m, in_specs=L.P("i"), out_specs=L.P("i"))(x)


def c_all_gather_replicated(L, x):
    """The gathered value as one copy (JAX counts all_gather's result as varying: check_vma off)."""
    m = L.mesh((4,), ("i",))
    return L.sm(lambda v: L.lax.all_gather(v, "i", tiled=True), mesh=m, in_specs=L.P("i"), out_specs=L.P(), check_vma=False)(x)


def c_ppermute_ring(L, x):
    m = L.mesh((4,), ("i",))
    perm = [(j, (j + 1) % 4) for j in range(4)]
    return L.sm(lambda v: L.lax.ppermute(v, "i", perm), mesh=m, in_specs=L.P("i"), out_specs=L.P("i"))(x)


def c_axis_index_2d(L, x):
    """A dimension over a tuple of mesh axes (major first), axis_index of a tuple."""
    m = L.mesh((2, 4), ("x", "y"))
    f = L.sm(lambda v: v * 10.0 + L.lax.axis_index(("x", "y")), mesh=m, in_specs=L.P(("x", "y")), out_specs=L.P(("x", "y")))
    return f(x)


def c_transposed_layout(L, x):
    """Mesh axes in the other order than the mesh's over two dims, out_specs swapping them."""
    m = L.mesh((2, 3), ("x", "y"))
    f = L.sm(lambda v: v + L.lax.axis_index("x") * 100.0 + L.lax.axis_index("y"), mesh=m, in_specs=L.P("y", "x"), out_specs=L.P("x", "y"))
    return f(x[:2].reshape(6, 4))


def c_replicated_psum(L, x):
    """A replicated argument psum'd over an axis its spec leaves out: times the axis size."""
    m = L.mesh((2, 4), ("x", "y"))
    return L.sm(lambda v: L.lax.psum(v, "y"), mesh=m, in_specs=L.P("x"), out_specs=L.P("x"))(x)


def c_pytrees(L, x, w):
    """Nested argument and output pytrees, spec prefixes, P() and pmean/pmax."""
    m = L.mesh((2, 2), ("a", "b"))

    def f(d, t):
        s = d["x"] * t[0] + t[1]
        return {"mean": L.lax.pmean(L.np.sum(s, axis=1), "b"), "max": (L.lax.pmax(s, ("a", "b")), s)}

    g = L.sm(f, mesh=m, in_specs=({"x": L.P("a", "b")}, L.P()),
             out_specs={"mean": L.P("a"), "max": (L.P(), L.P("a", "b"))})
    return g({"x": x}, (w[0], w[1:2]))


def c_all_to_all(L, x):
    m = L.mesh((2,), ("i",))
    return L.sm(lambda v: L.lax.all_to_all(v, "i", 1, 0, tiled=True), mesh=m, in_specs=L.P("i", None), out_specs=L.P(None, "i"))(x)


def c_unchecked_first_instance(L, x):
    """check_vma=False: an out_spec leaving out a varying axis gives instance 0's value."""
    m = L.mesh((4,), ("i",))
    return L.sm(lambda v: v * 2.0, mesh=m, in_specs=L.P("i"), out_specs=L.P(), check_vma=False)(x)


def c_scalar_outputs(L, x):
    """A per-instance scalar gathered with a singleton axis, and a psum'd scalar."""
    m = L.mesh((4,), ("i",))
    f = L.sm(lambda v: (L.np.sum(v)[None], L.lax.psum(L.np.sum(v * v), "i")), mesh=m, in_specs=L.P("i"), out_specs=(L.P("i"), L.P()))
    return f(x)


def c_grad_outside(L, a, b):
    """grad through the shard_map (cotangents of sharded and replicated inputs)."""
    m = L.mesh((2, 4), ("x", "y"))
    f = L.sm(lambda ab, bb: L.lax.psum(ab @ bb, "y"), mesh=m, in_specs=(L.P("x", "y"), L.P("y", None)), out_specs=L.P("x", None))
    return L.grad(lambda a, b: L.np.sum(L.np.sin(f(a, b))), argnums=(0, 1))(a, b)


def c_grad_replicated(L, x):
    """grad of a replicated argument concatenated over the axis (every instance's use counts)."""
    m = L.mesh((4,), ("i",))
    f = L.sm(lambda v: (v * v * (1.0 + L.lax.axis_index("i")))[None], mesh=m, in_specs=L.P(), out_specs=L.P("i"))
    return L.grad(lambda v: L.np.sum(f(v)))(x)


def _dp_loss(L, w, x, y):
    return L.np.mean((x @ w[:3] * w[3] - y) ** 2)


def c_data_parallel_step(L, w, xb, yb):
    """JAX docs: data-parallel training: the loss shard_map'd over the batch (pmean'd), its
    gradient taken outside, two SGD steps."""
    m = L.mesh((4,), ("batch",))
    loss_dp = L.sm(lambda w, x, y: L.lax.pmean(_dp_loss(L, w, x, y), "batch"), mesh=m,
                   in_specs=(L.P(), L.P("batch"), L.P("batch")), out_specs=L.P())
    losses = []
    for _ in range(2):
        losses.append(loss_dp(w, xb, yb))
        w = w - 0.1 * L.grad(loss_dp)(w, xb, yb)
    return w, L.np.stack(losses)


def c_data_parallel_inner_grad(L, w, xb, yb):
    """pmap style: per-shard gradients inside, pmean'd (check_vma=False: JAX then keeps each
    instance's own gradient, as Quabla always does)."""
    m = L.mesh((4,), ("batch",))

    def step(w, x, y):
        g = L.lax.pmean(L.grad(lambda w: _dp_loss(L, w, x, y))(w), "batch")
        return w - 0.1 * g, L.lax.pmean(_dp_loss(L, w, x, y), "batch")

    f = L.sm(step, mesh=m, in_specs=(L.P(), L.P("batch"), L.P("batch")), out_specs=(L.P(), L.P()), check_vma=False)
    w1, l1 = f(w, xb, yb)
    w2, l2 = f(w1, xb, yb)
    return w2, L.np.stack([l1, l2])


W4 = np.concatenate([W, [0.7]])
CASES = {
    "matmul_psum": (c_matmul_psum, (A, B)),
    "matmul_allgather": (c_matmul_allgather, (A, B)),
    "matmul_psum_scatter": (c_matmul_psum_scatter, (A, B)),
    "all_gather_untiled": (c_all_gather_untiled, (X8,)),
    "all_gather_replicated": (c_all_gather_replicated, (X8,)),
    "ppermute_ring": (c_ppermute_ring, (X8,)),
    "axis_index_2d": (c_axis_index_2d, (X8,)),
    "transposed_layout": (c_transposed_layout, (A,)),
    "replicated_psum": (c_replicated_psum, (X24,)),
    "pytrees": (c_pytrees, (X24, W)),
    "all_to_all": (c_all_to_all, (A[:4, :6],)),
    "unchecked_first_instance": (c_unchecked_first_instance, (X8,)),
    "scalar_outputs": (c_scalar_outputs, (X8,)),
    "grad_outside": (c_grad_outside, (A, B)),
    "grad_replicated": (c_grad_replicated, (X8,)),
    "data_parallel_step": (c_data_parallel_step, (W4, XB, YB)),
    "data_parallel_inner_grad": (c_data_parallel_inner_grad, (W4, XB, YB)),
}
# Cases also run under qb.jit (the rest eagerly only, to keep the file fast).
JIT_CASES = {"matmul_psum", "matmul_psum_scatter", "pytrees", "grad_outside", "data_parallel_step", "axis_index_2d"}


def _leaves(x, lib):
    if lib == "jax":
        return [np.asarray(v) for v in jax.tree_util.tree_leaves(x)]
    return [np.asarray(v) for v in qb.tree.leaves(x)]


def _oracle_main(path):
    """In the subprocess: every case with jax.shard_map on 8 CPU devices."""
    assert jax.device_count() == 8, jax.devices()
    L = NS("jax")
    out = {}
    for name, (fn, args) in CASES.items():
        for k, v in enumerate(_leaves(fn(L, *args), "jax")):
            out[f"{name}/{k}"] = v
    np.savez(path, **out)


@pytest.fixture(scope="module")
def oracle():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "oracle.npz")
        env = dict(os.environ)
        env["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
        env["PYTHONPATH"] = os.path.dirname(os.path.abspath(__file__)) + os.pathsep + env.get("PYTHONPATH", "")
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--oracle", path], env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, f"JAX oracle failed:\n{r.stdout[-3000:]}\n{r.stderr[-5000:]}"
        with np.load(path) as z:
            res = {k: z[k] for k in z.files}
    want = {}
    for k, v in res.items():
        name, i = k.split("/")
        want.setdefault(name, {})[int(i)] = v
    return {n: [d[i] for i in sorted(d)] for n, d in want.items()}


@pytest.mark.parametrize("name", list(CASES))
def test_against_jax_8_devices(oracle, name):
    fn, args = CASES[name]
    L = NS("qb")
    want = oracle[name]
    got = _leaves(fn(L, *args), "qb")
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype, (name, g.dtype, w.dtype)
        assert_close(g, w, 1e-11, 1e-11, what=name)
    if name in JIT_CASES:
        got = _leaves(qb.jit(lambda *a: fn(L, *a))(*args), "qb")
        for g, w in zip(got, want):
            assert_close(g, w, 1e-11, 1e-11, what=f"jit {name}")


# -- size-1 meshes, in process against jax.shard_map ----------------------------------------

def test_one_device_mesh_against_jax():
    P, JP = QP, jax.sharding.PartitionSpec
    qm = qb.make_mesh((1,), ("i",))
    jm = jax.make_mesh((1,), ("i",), axis_types=(jax.sharding.AxisType.Auto,))

    def f(L, a, b):
        return L.lax.psum(a @ b, "i") + L.lax.axis_index("i")

    qf = sm.shard_map(lambda a, b: f(qb, a, b), mesh=qm, in_specs=(P("i"), P(None, "i")), out_specs=P("i"))
    jf = jax.shard_map(lambda a, b: f(jax, a, b), mesh=jm, in_specs=(JP("i"), JP(None, "i")), out_specs=JP("i"))
    assert_close(qf(A, B), jf(A, B), what="value")
    assert_close(qb.jit(qf)(A, B), jf(A, B), what="jit")
    qg = qb.grad(lambda a, b: qb.sum(qb.tanh(qf(a, b))), argnums=(0, 1))(A, B)
    jg = jax.grad(lambda a, b: jax.numpy.sum(jax.numpy.tanh(jf(a, b))), argnums=(0, 1))(A, B)
    assert_close(list(qg), list(jg), 1e-11, 1e-11, what="grad")
    # a jax.sharding.Mesh and JAX PartitionSpecs are accepted as well
    hf = sm.shard_map(lambda a, b: f(qb, a, b), mesh=jm, in_specs=(JP("i"), JP(None, "i")), out_specs=JP("i"))
    assert_close(hf(A, B), jf(A, B), what="jax mesh")


def test_vmap_of_shard_map_and_f32():
    m = sm.AbstractMesh((2,), ("i",))
    f = sm.shard_map(lambda v: v / qb.lax.psum(qb.sum(v), "i"), mesh=m, in_specs=QP("i"), out_specs=QP("i"))
    xs = np.abs(RNG.standard_normal((3, 4))) + 0.5
    got = qb.vmap(f)(xs)
    assert_close(got, xs / xs.sum(1, keepdims=True))
    r = f(xs[0].astype(np.float32))
    assert r.dtype == qb.float32
    assert_close(r, (xs[0] / xs[0].sum()).astype(np.float32), 1e-6, 1e-6)
    # in_specs None passes an argument as it is (a Python value here)
    g = sm.shard_map(lambda v, k: v * k["s"], mesh=m, in_specs=(QP("i"), None), out_specs=QP("i"))
    assert_close(g(xs[0], {"s": 3}), xs[0] * 3)


def test_edge_cases():
    m = sm.AbstractMesh((2, 2), ("i", "j"))
    P = QP
    # no outputs, no arguments, only static arguments, Python scalars, a list of in_specs
    assert sm.shard_map(lambda v: None, mesh=m, in_specs=P("i"), out_specs=P())(np.ones(4)) is None
    assert sm.shard_map(lambda: qb.lax.axis_index("j")[None], mesh=m, in_specs=(), out_specs=P("j"))().tolist() == [0, 1]
    assert_close(sm.shard_map(lambda k: qb.ones(2) * k, mesh=m, in_specs=None, out_specs=P())(3.0), np.full(2, 3.0))
    assert_close(sm.shard_map(lambda v, s: v * s, mesh=m, in_specs=[P("i"), P()], out_specs=P("i"))(X8, 2.0), X8 * 2)
    # integers and booleans keep their dtypes; a tuple of axes in a collective
    r = sm.shard_map(lambda v: qb.lax.psum(v, ("i", "j")), mesh=m, in_specs=P(("i", "j")), out_specs=P())(np.arange(4))
    assert r.dtype == qb.int64 and r.tolist() == [6]
    b = np.array([True, False])
    assert sm.shard_map(lambda v: v, mesh=m, in_specs=P("j"), out_specs=P("j"))(b).tolist() == [True, False]
    # a shard_map nested in another one, over its own mesh
    inner = sm.shard_map(lambda u: qb.lax.psum(u, "j"), mesh=sm.AbstractMesh((2,), ("j",)), in_specs=P("j"), out_specs=P())
    outer = sm.shard_map(inner, mesh=sm.AbstractMesh((2,), ("i",)), in_specs=P("i"), out_specs=P("i"))
    assert outer(np.arange(8.0)).tolist() == [2.0, 4.0, 10.0, 12.0]
    # inside f with check_vma=True, reverse mode raises: JAX sums the gradient of a replicated
    # value over the instances, the emulation would give each instance's own
    body = lambda w, v: qb.lax.psum(qb.grad(lambda w: qb.sum(w * v))(w), "i")  # noqa: E731
    f = sm.shard_map(body, mesh=m, in_specs=(P(), P("i")), out_specs=P())
    for call in (lambda: f(1.5, X8), lambda: qb.jit(f)(1.5, X8)):
        with pytest.raises(errors.UnsupportedOperationError, match="check_vma=True"):
            call()
    v = sm.shard_map(lambda w, v: qb.lax.pmean(qb.vjp(lambda w: qb.sum(w * v), w)[1](1.0)[0], "i"), mesh=m, in_specs=(P(), P("i")), out_specs=P())
    with pytest.raises(errors.UnsupportedOperationError, match="check_vma=True"):
        v(1.5, X8)
    # with check_vma=False each instance's own gradient, psum'd by hand: sum(x) here
    f = sm.shard_map(body, mesh=m, in_specs=(P(), P("i")), out_specs=P(), check_vma=False)
    assert_close(f(1.5, X8), X8.sum())
    # check_vma=False under grad: the first instance's value, and its gradient
    g = sm.shard_map(lambda v: v * v, mesh=m, in_specs=P("i"), out_specs=P(), check_vma=False)
    assert_close(qb.grad(lambda x: qb.sum(g(x)))(X8), np.concatenate([2 * X8[:4], np.zeros(4)]))


def test_decorator_and_experimental():
    m = sm.AbstractMesh((2, 2), ("x", "y"))

    deco = sm.shard_map(mesh=m, in_specs=QP("x", "y"), out_specs=QP("x"))

    @deco
    def rowsum(v):
        return qb.lax.psum(qb.sum(v, axis=1), "y")

    assert_close(rowsum(X24), X24.sum(1))
    # the experimental API: check_rep and auto (partial manual: 'y' not mapped)
    f = sm.experimental_shard_map(lambda v: qb.lax.psum(qb.sum(v, axis=0), "x"), m, QP("x"), QP(), check_rep=True, auto=frozenset({"y"}))
    assert_close(f(X24), X24.sum(0))
    g = sm.shard_map(lambda v: v * qb.lax.axis_size("x"), mesh=m, in_specs=QP("x"), out_specs=QP("x"), axis_names={"x"})
    assert_close(g(X24), X24 * 2)
    with pytest.raises(InvalidArgumentError):
        sm.shard_map(lambda v: v, mesh=m, in_specs=QP("y"), out_specs=QP("y"), axis_names={"x"})


def test_errors():
    m = sm.AbstractMesh((2, 3), ("x", "y"))
    P = QP
    ok = dict(mesh=m, in_specs=P("x"), out_specs=P("x"))
    with pytest.raises(ShapeError, match="does not evenly divide"):
        sm.shard_map(lambda v: v, **ok)(np.ones(5))
    with pytest.raises(ShapeError, match="total size 6"):
        sm.shard_map(lambda v: v, mesh=m, in_specs=P(("x", "y")), out_specs=P(("x", "y")))(np.ones(8))
    with pytest.raises(ShapeError, match="rank"):
        sm.shard_map(lambda v: v, mesh=m, in_specs=P("x", "y"), out_specs=P())(np.ones(6))
    with pytest.raises(ShapeError, match="rank"):
        sm.shard_map(lambda v: qb.sum(v), **ok)(np.ones(6))
    with pytest.raises(InvalidArgumentError, match="'z'"):
        sm.shard_map(lambda v: v, mesh=m, in_specs=P("z"), out_specs=P())
    with pytest.raises(InvalidArgumentError, match="more than one dimension"):
        sm.shard_map(lambda v: v, mesh=m, in_specs=P("x", "x"), out_specs=P())
    with pytest.raises(InvalidArgumentError, match="same in every instance"):
        sm.shard_map(lambda v: v * 2, mesh=m, in_specs=P("x"), out_specs=P())(np.ones(6))
    with pytest.raises(InvalidArgumentError, match="prefix"):
        sm.shard_map(lambda a, b: a, mesh=m, in_specs=(P("x"),), out_specs=P("x"))(np.ones(6), np.ones(6))
    with pytest.raises(InvalidArgumentError, match="prefix"):
        sm.shard_map(lambda a: (a, a), mesh=m, in_specs=P("x"), out_specs=(P("x"),) * 3)(np.ones(6))
    with pytest.raises(InvalidArgumentError, match="mesh is None"):
        sm.shard_map(lambda v: v, in_specs=P(), out_specs=P())
    with pytest.raises(ArgumentTypeError, match="in_specs is required"):
        sm.shard_map(lambda v: v, mesh=m, out_specs=P())
    with pytest.raises(ArgumentTypeError, match="callable"):
        sm.shard_map("f", **ok)
    with pytest.raises(ArgumentTypeError, match="mesh must be"):
        sm.shard_map(lambda v: v, mesh="mesh", in_specs=P(), out_specs=P())
    with pytest.raises(ArgumentTypeError, match="PartitionSpec"):
        sm.shard_map(lambda v: v, mesh=m, in_specs=("x",), out_specs=P())
    with pytest.raises(ArgumentTypeError, match="axis_names"):
        sm.shard_map(lambda v: v, mesh=m, in_specs=P(), out_specs=P(), axis_names=["x"])
    with pytest.raises(ArgumentTypeError, match="not an array"):
        sm.shard_map(lambda v: v, **ok)("abc")
    with pytest.raises(ArgumentTypeError, match="keyword"):
        sm.shard_map(lambda v: v, **ok)(v=np.ones(6))
    with pytest.raises(ShapeError):
        sm.AbstractMesh((2, 0), ("a", "b"))
    with pytest.raises(InvalidArgumentError):
        sm.AbstractMesh((2, 2), ("a", "a"))


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "--oracle":
    _oracle_main(sys.argv[2])
