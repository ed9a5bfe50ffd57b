"""Collectives over named vmap axes (``qb.lax.psum`` and the rest under ``qb.vmap(...,
axis_name=...)`` and ``qb.pmap``) against JAX 0.10.2 (x64): values eagerly and under jit,
nested vmaps (shadowing and tuples of names), derivatives through them (grad outside and inside
the vmap, jacfwd), control flow holding them, pmap with static arguments, and the typed errors
(an unbound name is UnboundAxisNameError, JAX's NameError)."""

import numpy as np
import pytest

import quabla as qb
from quabla.errors import ArgumentTypeError, InvalidArgumentError, QuablaError, ShapeError, UnboundAxisNameError, UnsupportedOperationError

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")

X = (np.arange(12.0).reshape(3, 4) - 5.0) / 7.0
SQ = np.arange(9.0).reshape(3, 3) / 5.0


def both(fn):
    """``fn(L)`` with L = quabla and L = jax: the values (and dtypes) agree."""
    got, want = np.asarray(fn(qb)), np.asarray(fn(jax))
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


CASES = {
    "psum": lambda L: L.vmap(lambda v: v / L.lax.psum(v, "i"), axis_name="i")(X),
    "pmean": lambda L: L.vmap(lambda v: v - L.lax.pmean(v, "i"), axis_name="i")(X),
    "pmax": lambda L: L.vmap(lambda v: L.lax.pmax(v, "i"), axis_name="i")(X),
    "pmin": lambda L: L.vmap(lambda v: L.lax.pmin(v, "i"), axis_name="i")(X),
    "axis_index": lambda L: L.vmap(lambda v: v * L.lax.axis_index("i"), axis_name="i")(X),
    "axis_index_dtype": lambda L: L.vmap(lambda v: L.lax.axis_index("i"), axis_name="i")(X),
    "axis_size": lambda L: L.vmap(lambda v: v * L.lax.axis_size("i"), axis_name="i")(X),
    "psum_python_int": lambda L: L.vmap(lambda v: v * L.lax.psum(1, "i"), axis_name="i")(X),
    "psum_ints": lambda L: L.vmap(lambda v: L.lax.psum(v, "i"), axis_name="i")(np.arange(6).reshape(3, 2)),
    "pmean_ints": lambda L: L.vmap(lambda v: L.lax.pmean(v, "i"), axis_name="i")(np.array([1, 2, 4])),
    "psum_bools": lambda L: L.vmap(lambda v: L.lax.psum(v, "i"), axis_name="i")(np.array([True, False, True])),
    "pmax_bools": lambda L: L.vmap(lambda v: L.lax.pmax(v, "i"), axis_name="i")(np.array([True, False, False])),
    "psum_unmapped": lambda L: L.vmap(lambda v, w: v * L.lax.psum(w, "i"), in_axes=(0, None), axis_name="i")(X, X[0]),
    "psum_pytree": lambda L: L.vmap(lambda v: L.lax.psum({"a": v, "b": (2 * v,)}, "i")["b"][0], axis_name="i")(X),
    "all_gather": lambda L: L.vmap(lambda v: L.lax.all_gather(v, "i"), axis_name="i")(X),
    "all_gather_axis1": lambda L: L.vmap(lambda v: L.lax.all_gather(v, "i", axis=1), axis_name="i")(X[:, None, :]),
    "all_gather_tiled": lambda L: L.vmap(lambda v: L.lax.all_gather(v, "i", tiled=True), axis_name="i")(X),
    "ppermute": lambda L: L.vmap(lambda v: L.lax.ppermute(v, "i", [(0, 1), (1, 2), (2, 0)]), axis_name="i")(X),
    "pshuffle": lambda L: L.vmap(lambda v: L.lax.pshuffle(v, "i", [2, 0, 1]), axis_name="i")(X),
    "psum_scatter": lambda L: L.vmap(lambda v: L.lax.psum_scatter(v, "i"), axis_name="i")(SQ),
    "psum_scatter_tiled": lambda L: L.vmap(lambda v: L.lax.psum_scatter(v, "i", scatter_dimension=1, tiled=True), axis_name="i")(np.arange(18.0).reshape(3, 1, 6)),
    "all_to_all": lambda L: L.vmap(lambda v: L.lax.all_to_all(v, "i", 0, 0), axis_name="i")(SQ),
    "all_to_all_tiled": lambda L: L.vmap(lambda v: L.lax.all_to_all(v, "i", 0, 1, tiled=True), axis_name="i")(np.arange(36.0).reshape(3, 6, 2)),
    "nested_outer": lambda L: L.vmap(L.vmap(lambda v: v / L.lax.psum(v, "i"), axis_name="j"), axis_name="i")(X),
    "nested_inner": lambda L: L.vmap(L.vmap(lambda v: v / L.lax.psum(v, "j") + L.lax.axis_index("i"), axis_name="j"), axis_name="i")(X),
    "nested_tuple": lambda L: L.vmap(L.vmap(lambda v: v / L.lax.psum(v, ("i", "j")), axis_name="j"), axis_name="i")(X),
    "nested_index_tuple": lambda L: L.vmap(L.vmap(lambda v: L.lax.axis_index(("i", "j")), axis_name="j"), axis_name="i")(X),
    "shadowing": lambda L: L.vmap(L.vmap(lambda v: L.lax.psum(v, "i"), axis_name="i"), axis_name="i")(X),
    "unnamed_between": lambda L: L.vmap(L.vmap(lambda v: L.lax.pmax(v, "i")), axis_name="i")(X),
    "jit": lambda L: L.jit(L.vmap(lambda v: v / L.lax.psum(v, "i"), axis_name="i"))(X),
    "jit_inside": lambda L: L.vmap(L.jit(lambda v: v / L.lax.psum(v, "i")), axis_name="i")(X),
    "grad_outside": lambda L: L.grad(lambda z: (L.vmap(lambda v: (v / L.lax.psum(v, "i")) ** 2, axis_name="i")(z)).sum())(X),
    "grad_inside": lambda L: L.vmap(L.grad(lambda v: (v / L.lax.psum(v, "i")) ** 2), axis_name="i")(X[:, 0]),
    "grad_pmean": lambda L: L.grad(lambda z: L.vmap(lambda v: L.numpy.sin(L.lax.pmean(v, "i")) * v, axis_name="i")(z).sum())(X),
    "grad_all_gather": lambda L: L.grad(lambda z: L.vmap(lambda v: (L.lax.all_gather(v, "i") * L.numpy.arange(3.0)[:, None]).sum(), axis_name="i")(z).sum())(X),
    "jacfwd_outside": lambda L: L.jacfwd(lambda z: L.vmap(lambda v: v / L.lax.psum(v, "i"), axis_name="i")(z))(X[:, 0]),
    "jacfwd_inside": lambda L: L.vmap(L.jacfwd(lambda v: v / L.lax.psum(v, "i")), axis_name="i")(X),
    "cond": lambda L: L.vmap(lambda v: L.lax.cond(v[0] > 0.0, lambda u: L.lax.psum(u, "i"), lambda u: u, v), axis_name="i")(X),
    "scan": lambda L: L.vmap(lambda v: L.lax.scan(lambda c, u: (c + L.lax.psum(u, "i"), c), 0.0, v)[0], axis_name="i")(X),
    "fori_axis_index": lambda L: L.vmap(lambda v: L.lax.fori_loop(0, 3, lambda k, c: c + L.lax.axis_index("i"), v), axis_name="i")(X),
    "batchnorm": lambda L: L.vmap(lambda v: (v - L.lax.pmean(v, "b")) / L.numpy.sqrt(L.lax.pmean((v - L.lax.pmean(v, "b")) ** 2, "b") + 1e-5), axis_name="b")(X),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_jax(name):
    both(CASES[name])


def test_pmax_grad_averages_ties():
    # JAX has no derivative for pmax; Quabla's passes the tangent of the maxima, split over ties.
    x = np.array([1.0, 3.0, 3.0, 2.0])
    g = qb.grad(lambda z: qb.vmap(lambda v: qb.lax.pmax(v, "i"), axis_name="i")(z).sum())(x)
    np.testing.assert_allclose(np.asarray(g), [0.0, 2.0, 2.0, 0.0])
    g = qb.grad(lambda z: qb.vmap(lambda v: qb.lax.pmin(v, "i") * (qb.lax.axis_index("i") + 1), axis_name="i")(z).sum())(x)
    np.testing.assert_allclose(np.asarray(g), [10.0, 0.0, 0.0, 0.0])
    # Finite differences of the forward mode agree.
    t = np.array([0.3, -0.2, 0.5, 0.1])
    f = lambda z: qb.vmap(lambda v: qb.lax.pmax(v, "i") ** 2, axis_name="i")(z)
    _, jt = qb.jvp(f, (x,), (t,))
    np.testing.assert_allclose(np.asarray(jt), np.full(4, 2 * 3.0 * (0.5 - 0.2) / 2))


def test_pmap_against_jax():
    x = np.arange(8.0).reshape(2, 4)
    # JAX's pmap needs as many devices as examples: compare with its vmap, which pmap equals.
    f = qb.pmap(lambda v: v / qb.lax.psum(v, "d"), axis_name="d")
    want = jax.vmap(lambda v: v / jax.lax.psum(v, "d"), axis_name="d")(x)
    np.testing.assert_allclose(np.asarray(f(x)), np.asarray(want))
    g = qb.pmap(lambda v, k, w: v * k + w, axis_name="d", in_axes=(0, None, None), static_broadcasted_argnums=1)
    np.testing.assert_allclose(np.asarray(g(x, 3, 1.0)), x * 3 + 1)
    np.testing.assert_allclose(np.asarray(g(x, 4, 1.0)), x * 4 + 1)
    one = jax.pmap(lambda v: v / jax.lax.psum(v, "d"), axis_name="d")(x[:1])
    np.testing.assert_allclose(np.asarray(f(x[:1])), np.asarray(one))
    r = qb.device_put_replicated(qb.array([1.0, 2.0]), qb.local_devices() * 2)
    assert r.shape == (2, 2)
    s = qb.device_put_sharded([qb.array([1.0]), qb.array([2.0])], qb.local_devices() * 2)
    np.testing.assert_allclose(np.asarray(s), [[1.0], [2.0]])


def test_spmd_training_step():
    # The data-parallel step of jax/examples/spmd_mnist_classifier_fromscratch.py: per-device
    # gradients averaged with pmean over the mapped axis.
    rng = np.random.default_rng(0)
    w, xb, yb = rng.normal(size=(5, 3)), rng.normal(size=(2, 8, 5)), rng.normal(size=(2, 8, 3))

    def step(L):
        def loss(w, x, y):
            return L.numpy.mean((L.numpy.tanh(x @ w) - y) ** 2)

        def upd(w, x, y):
            g = L.grad(loss)(w, x, y)
            return w - 0.1 * L.lax.pmean(g, "batch")

        return L.vmap(upd, in_axes=(None, 0, 0), axis_name="batch")(w, xb, yb)

    both(step)
    got = qb.pmap(lambda w, x, y: w - 0.1 * qb.lax.pmean(qb.grad(lambda w: qb.mean((qb.tanh(x @ w) - y) ** 2))(w), "batch"), axis_name="batch", in_axes=(None, 0, 0))(w, xb, yb)
    np.testing.assert_allclose(np.asarray(got), np.asarray(step(jax)), rtol=1e-12)


def test_errors():
    x = qb.asarray(X)
    with pytest.raises(UnboundAxisNameError, match="unbound axis name 'k'"):
        qb.vmap(lambda v: qb.lax.psum(v, "k"), axis_name="i")(x)
    with pytest.raises(NameError):
        qb.lax.psum(x, "i")
    with pytest.raises(UnboundAxisNameError):
        qb.jit(lambda v: qb.lax.axis_index("i"))(x)
    with pytest.raises(UnsupportedOperationError):
        qb.vmap(lambda v: qb.lax.psum(v, "i", axis_index_groups=[[0, 1], [2]]), axis_name="i")(x)
    with pytest.raises(InvalidArgumentError):
        qb.vmap(lambda v: qb.lax.ppermute(v, "i", [(0, 5)]), axis_name="i")(x)
    with pytest.raises(InvalidArgumentError):
        qb.vmap(lambda v: qb.lax.ppermute(v, "i", [(0, 1), (2, 1)]), axis_name="i")(x)
    with pytest.raises(InvalidArgumentError):
        qb.vmap(lambda v: qb.lax.pshuffle(v, "i", [0, 0, 1]), axis_name="i")(x)
    with pytest.raises(ShapeError):
        qb.vmap(lambda v: qb.lax.psum_scatter(v, "i"), axis_name="i")(x)
    with pytest.raises(ShapeError):
        qb.vmap(lambda v: qb.lax.all_to_all(v, "i", 0, 0), axis_name="i")(x)
    with pytest.raises(ArgumentTypeError):
        qb.vmap(lambda v: qb.lax.psum(v, ["i", {}]), axis_name="i")(x)
    with pytest.raises(InvalidArgumentError):
        qb.vmap(lambda v: qb.lax.psum(v, ()), axis_name="i")(x)
    with pytest.raises(ArgumentTypeError):
        qb.vmap(lambda v: qb.lax.psum("s", "i"), axis_name="i")(x)
    with pytest.raises(UnsupportedOperationError):
        qb.pmap(lambda v: v, global_arg_shapes=((2,),))
    with pytest.raises(ArgumentTypeError):
        qb.pmap(3)
    with pytest.raises(QuablaError):
        qb.device_put_sharded([qb.ones(1)], qb.local_devices() * 2)


def test_any_hashable_name():
    # Names that are not identifiers (ints, strings with spaces, long ones) are interned (a
    # tuple names several axes, as in JAX).
    for name in [7, 2.5, "my axis", "x" * 100, frozenset({"a"})]:
        r = qb.vmap(lambda v: qb.lax.psum(v, name), axis_name=name)(qb.asarray(X))
        np.testing.assert_allclose(np.asarray(r), np.broadcast_to(X.sum(0), X.shape))


def test_quabla_opt_resolves_named_vmap(tmp_path):
    # The dialect text: a vmap transform with quabla.axis_name resolves the psum of its body.
    import subprocess
    import pathlib
    src = """
module {
  func.func private @f(%x: tensor<2xf64>) -> tensor<2xf64> {
    %s = "quabla.psum"(%x) {axis_name = "i"} : (tensor<2xf64>) -> tensor<2xf64>
    %r = "quabla.div"(%x, %s) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
    return %r : tensor<2xf64>
  }
  func.func private @f_vmap(tensor<3x2xf64>) -> (tensor<3x2xf64>) attributes {quabla.of = @f, quabla.transform = "vmap", quabla.axis_name = "i", quabla.axis_size = 3 : i64, quabla.in_axes = array<i64: 0>, quabla.out_axes = array<i64: 0>}
  func.func @main(%x: tensor<3x2xf64>) -> tensor<3x2xf64> {
    %r = func.call @f_vmap(%x) : (tensor<3x2xf64>) -> tensor<3x2xf64>
    return %r : tensor<3x2xf64>
  }
}
"""
    root = pathlib.Path(__file__).resolve().parents[2]
    opt = root / "target" / "debug" / "quabla-opt"
    if not opt.exists():
        pytest.skip("quabla-opt is not built")
    p = tmp_path / "m.mlir"
    p.write_text(src)
    out = subprocess.run([str(opt), str(p), "--pass-pipeline=quabla-autodiff,quabla-inline,quabla-canonicalize,quabla-symbol-dce"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "quabla.psum" not in out.stdout and "reduce_sum" in out.stdout
    bad = tmp_path / "bad.mlir"
    bad.write_text(src.replace('quabla.axis_name = "i", ', ""))
    out = subprocess.run([str(opt), str(bad), "--pass-pipeline=quabla-autodiff", "--emit=linalg"], capture_output=True, text=True)
    assert out.returncode != 0 and "bound by no enclosing vmap" in out.stderr
