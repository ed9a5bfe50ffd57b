"""qb.lax against jax.lax (x64): every name eagerly and under jit (values and dtypes), the
gradients of a representative subset against jax.grad (and check_grads to second order),
vmap against jax.vmap, and the typed errors of lax's strict dtype/shape rules."""

import os
import re

import numpy as np
import pytest

import quabla as qb
from breadth_util import assert_close

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402

RNG = np.random.default_rng(3)


def U(*shape, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, size=shape)


def I(*shape, lo=-9, hi=9, dtype=np.int64):  # noqa: E743
    return RNG.integers(lo, hi, size=shape).astype(dtype)


def dt(L, name):
    return getattr(qb, name) if L is qb.lax else np.dtype(name)


X = U(3, 4)
XP = U(3, 4, lo=0.2, hi=3.0)
XU = U(3, 4, lo=-0.9, hi=0.9)
Y = U(3, 4)
N = I(3, 4)
M = I(3, 4, lo=1, hi=5)
B = RNG.random((3, 4)) > 0.5
U32 = RNG.integers(0, 2**32 - 1, size=(3, 4)).astype(np.uint32)
X32 = X.astype(np.float32)
HALF = np.array([0.5, 1.5, -2.5, 2.5, -0.5, 0.3, -1.7, 0.0])

UN_F = ["sqrt", "rsqrt", "log", "lgamma", "digamma"]
UN_ANY = ["neg", "sign", "abs", "square", "cbrt", "exp", "exp2", "expm1", "logistic", "tanh", "sin", "cos", "tan",
          "atan", "sinh", "cosh", "asinh", "erf", "erfc", "floor", "ceil", "is_finite", "reciprocal"]

CASES = []


def case(name, fn, *args, grad=False, tol=1e-12, id=None):  # noqa: A002
    CASES.append(pytest.param(name, fn, args, grad, tol, id=id or name))


for n in UN_ANY:
    case(n, lambda L, x, n=n: getattr(L, n)(x), X, grad=n not in ("sign", "floor", "ceil", "is_finite"))
for n in UN_F:
    case(n, lambda L, x, n=n: getattr(L, n)(x), XP, grad=True, tol=1e-11)
for n in ("asin", "acos", "atanh", "erf_inv"):
    case(n, lambda L, x, n=n: getattr(L, n)(x), XU, grad=True)
case("acosh", lambda L, x: L.acosh(x), XP + 1.0, grad=True)
case("log1p", lambda L, x: L.log1p(x), XP, grad=True)
case("neg_int", lambda L, x: L.neg(x), N, id="neg_int")
case("abs_int", lambda L, x: L.abs(x), N, id="abs_int")
case("sign_int", lambda L, x: L.sign(x), N, id="sign_int")
case("square_f32", lambda L, x: L.square(x), X32, id="square_f32")
case("exp_f32", lambda L, x: L.exp(x), X32, tol=1e-6, id="exp_f32")
case("round", lambda L, x: L.round(x), HALF)
case("round_even", lambda L, x: L.round(x, L.RoundingMethod.TO_NEAREST_EVEN), HALF)
case("round_special", lambda L, x: L.round(x), np.array([np.inf, -np.inf, np.nan, -0.0, 1e300, -0.3]))
case("pow_scalar_exp", lambda L, x: L.pow(x, 3), X, grad=True)
case("round_even_int", lambda L, x: L.round(x, 1), HALF, id="round_even_int")
for n in ("add", "sub", "mul", "max", "min"):
    case(n, lambda L, x, y, n=n: getattr(L, n)(x, y), X, Y, grad=True)
    case(n + "_int", lambda L, x, y, n=n: getattr(L, n)(x, y), N, M, id=n + "_int")
case("add_scalar", lambda L, x: L.add(x, 2.0), X, grad=True)
case("add_rank0", lambda L, x, y: L.mul(x, y), X, np.array(3.0), grad=True)
case("div", lambda L, x, y: L.div(x, y), X, XP, grad=True)
case("div_int", lambda L, x, y: L.div(x, y), N, M * np.sign(I(3, 4) + 0.5).astype(np.int64))
case("rem", lambda L, x, y: L.rem(x, y), X * 3, XP)
case("rem_int", lambda L, x, y: L.rem(x, y), N, M * np.sign(I(3, 4) + 0.5).astype(np.int64))
case("pow", lambda L, x, y: L.pow(x, y), XP, Y, grad=True)
case("pow_int_exp", lambda L, x, y: L.pow(x, y), X, I(3, 4, lo=0, hi=4))
case("integer_pow", lambda L, x: L.integer_pow(x, 5), X, grad=True)
case("integer_pow_neg", lambda L, x: L.integer_pow(x, -3), XP, grad=True)
case("integer_pow_int", lambda L, x: L.integer_pow(x, 3), N)
case("integer_pow_0", lambda L, x: L.integer_pow(x, 0), X)
case("atan2", lambda L, x, y: L.atan2(x, y), X, Y, grad=True)
for n in ("eq", "ne", "lt", "le", "gt", "ge"):
    case(n, lambda L, x, y, n=n: getattr(L, n)(x, y), N, M)
for n in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    case(n, lambda L, x, y, n=n: getattr(L, n)(x, y), N, M)
    case(n + "_bool", lambda L, x, y, n=n: getattr(L, n)(x, y), B, ~B)
case("bitwise_not", lambda L, x: L.bitwise_not(x), N)
case("bitwise_not_bool", lambda L, x: L.bitwise_not(x), B)
for n in ("shift_left", "shift_right_logical", "shift_right_arithmetic"):
    case(n, lambda L, x, y, n=n: getattr(L, n)(x, y), U32, I(3, 4, lo=0, hi=33, dtype=np.uint32))
    case(n + "_i32", lambda L, x, y, n=n: getattr(L, n)(x, y), N.astype(np.int32) * 1000, I(3, 4, lo=0, hi=33, dtype=np.int32))
case("population_count", lambda L, x: L.population_count(x), N)
case("clz", lambda L, x: L.clz(x), N.astype(np.int32) * 12345)
case("clz_u32", lambda L, x: L.clz(x), U32)
case("clz_u8", lambda L, x: L.clz(x), U32.astype(np.uint8))
case("select", lambda L, p, x, y: L.select(p, x, y), B, X, Y, grad=True)
case("select_scalar_pred", lambda L, x, y: L.select(np.bool_(True), x, y), X, Y)
case("select_n", lambda L, w, x, y, z: L.select_n(w, x, y, z), I(3, 4, lo=0, hi=3, dtype=np.int32), X, Y, X * 2, grad=True)
case("select_n_bool", lambda L, w, x, y: L.select_n(w, x, y), B, X, Y)
case("clamp", lambda L, x: L.clamp(-0.5, x, 1.0), X, grad=True)
case("clamp_arrays", lambda L, lo, x, hi: L.clamp(lo, x, hi), X - 1, Y, X + 1, grad=True)
case("convert_element_type", lambda L, x: L.convert_element_type(x * 3, dt(L, "int32")), X)
case("convert_f32", lambda L, x: L.convert_element_type(x, dt(L, "float32")), X, grad=True)
# shapes
V = U(5)
case("broadcast", lambda L, x: L.broadcast(x, (2, 3)), V, grad=True)
case("broadcast_in_dim", lambda L, x: L.broadcast_in_dim(x, (3, 2, 4), (0, 2)), X, grad=True)
case("broadcast_in_dim_1", lambda L, x: L.broadcast_in_dim(x[:1], (3, 2, 4), (1, 2)), X)
case("broadcast_to_rank", lambda L, x: L.broadcast_to_rank(x, 4), X)
case("iota", lambda L: L.iota(dt(L, "float32"), 5))
case("broadcasted_iota", lambda L: L.broadcasted_iota(dt(L, "int32"), (2, 3, 4), 1))
case("full", lambda L: L.full((2, 3), 1.5, dt(L, "float32")))
case("full_like", lambda L, x: L.full_like(x, 4), N)
case("reshape", lambda L, x: L.reshape(x, (2, 6)), X, grad=True)
case("reshape_dims", lambda L, x: L.reshape(x, (12,), (1, 0)), X, grad=True)
case("transpose", lambda L, x: L.transpose(x, (2, 0, 1)), U(2, 3, 4), grad=True)
case("squeeze", lambda L, x: L.squeeze(x, (0, 2)), U(1, 3, 1, 2), grad=True)
case("expand_dims", lambda L, x: L.expand_dims(x, (0, -1)), X, grad=True)
case("collapse", lambda L, x: L.collapse(x, 1, 3), U(2, 3, 4, 2))
case("rev", lambda L, x: L.rev(x, (0, 1)), X, grad=True)
case("tile", lambda L, x: L.tile(x, (2, 1)), X)
case("concatenate", lambda L, x, y: L.concatenate([x, y], 1), X, Y, grad=True)
case("split", lambda L, x: tuple(L.split(x, (1, 3), axis=1)), X)
case("pad", lambda L, x: L.pad(x, 0.5, [(1, 2, 1), (-1, 0, 2)]), X, grad=True)
case("pad_int", lambda L, x: L.pad(x, -1, [(0, -1, 0), (2, -3, 1)]), N)
case("pad_traced_value", lambda L, x, v: L.pad(x, v, [(1, 1, 0), (0, 0, 1)]), X, np.array(2.0), grad=True)
# slicing
case("slice", lambda L, x: L.slice(x, (0, 1), (3, 4), (2, 2)), X, grad=True)
case("slice_nostride", lambda L, x: L.slice(x, (1, 0), (2, 3)), X)
case("slice_in_dim", lambda L, x: L.slice_in_dim(x, -3, None, 2, axis=1), X, grad=True)
case("index_in_dim", lambda L, x: L.index_in_dim(x, -1, 1, False), X)
case("index_in_dim_keep", lambda L, x: L.index_in_dim(x, 1), X)
case("dynamic_slice", lambda L, x, i: L.dynamic_slice(x, (i, 1), (2, 2)), X, np.int64(1), grad=True)
case("dynamic_slice_neg", lambda L, x, i: L.dynamic_slice(x, (i, 0), (2, 2)), X, np.int64(-1))
case("dynamic_slice_in_dim", lambda L, x, i: L.dynamic_slice_in_dim(x, i, 2, axis=1), X, np.int32(3))
case("dynamic_index_in_dim", lambda L, x, i: L.dynamic_index_in_dim(x, i, 1, keepdims=False), X, np.int64(2))
case("dynamic_update_slice", lambda L, x, u, i: L.dynamic_update_slice(x, u, (i, 0)), X, U(2, 2), np.int64(1), grad=True)
case("dynamic_update_slice_in_dim", lambda L, x, u, i: L.dynamic_update_slice_in_dim(x, u, i, 1), X, U(3, 2), np.int64(5))
case("dynamic_update_index_in_dim", lambda L, x, u, i: L.dynamic_update_index_in_dim(x, u, i, 0), X, U(4), np.int64(2), grad=True)
case("dynamic_update_index_keep", lambda L, x, u, i: L.dynamic_update_index_in_dim(x, u, i, 1), X, U(3, 1), np.int64(0))
# products
case("dot", lambda L, a, b: L.dot(a, b), X, U(4), grad=True, id="dot_mv")
case("dot_mm", lambda L, a, b: L.dot(a, b, precision=L.Precision.HIGHEST), X, U(4, 2), grad=True)
case("dot_vv", lambda L, a, b: L.dot(a, b), U(4), U(4))
case("dot_general", lambda L, a, b: L.dot_general(a, b, (((3,), (1,)), ((0,), (2,)))), U(2, 3, 1, 4), U(5, 4, 2), grad=True)
case("dot_general_multi", lambda L, a, b: L.dot_general(a, b, (((1, 2), (2, 0)), ((), ()))), U(2, 3, 4), U(4, 5, 3), grad=True)
case("dot_general_int_pref", lambda L, a, b: L.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=dt(L, "float64")),
     N.astype(np.int32), M.T.astype(np.int32))
case("batch_matmul", lambda L, a, b: L.batch_matmul(a, b), U(2, 3, 4), U(2, 4, 5), grad=True)
# reductions
for n in ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod"):
    case(n, lambda L, x, n=n: getattr(L, n)(x, (0, 2)), U(3, 2, 4), grad=True)
    case(n + "_i32", lambda L, x, n=n: getattr(L, n)(x, (1,)), N.astype(np.int32))
for n in ("reduce_and", "reduce_or", "reduce_xor"):
    case(n, lambda L, x, n=n: getattr(L, n)(x, (1,)), I(3, 5, lo=0, hi=64))
    case(n + "_bool", lambda L, x, n=n: getattr(L, n)(x, (0, 1)), B)
case("reduce", lambda L, x: L.reduce(x, 0.0, L.add, (1,)), X, grad=True, id="reduce_add")
case("reduce_max_op", lambda L, x: L.reduce(x, -np.inf, L.max, (0,)), X, grad=True)
case("reduce_init", lambda L, x: L.reduce(x, 1.5, L.add, (0, 1)), X, grad=True)
case("reduce_callable", lambda L, x: L.reduce(x, 0.0, lambda a, b: L.add(a, b), (1,)), U(3, 7), grad=True)
case("reduce_multi", lambda L, x, y: L.reduce((x, y), (0.0, 1.0), lambda a, b: (L.add(a[0], b[0]), L.mul(a[1], b[1])), (0,)),
     U(5, 3), U(5, 3), grad=True)
case("reduce_argmax_pair", lambda L, x, i: L.reduce(
    (x, i), (-np.inf, np.int64(0)),
    lambda a, b: (L.select(L.ge(a[0], b[0]), a[0], b[0]), L.select(L.ge(a[0], b[0]), a[1], b[1])), (0,)),
    U(6, 3), np.broadcast_to(np.arange(6)[:, None], (6, 3)).copy())
case("argmax", lambda L, x: L.argmax(x, 1, dt(L, "int32")), X)
case("argmin", lambda L, x: L.argmin(x, 0, dt(L, "int64")), X)
case("cumsum", lambda L, x: L.cumsum(x, 1, reverse=True), X, grad=True)
case("cumsum_i32", lambda L, x: L.cumsum(x), N.astype(np.int32))
case("cumprod", lambda L, x: L.cumprod(x, 0), X, grad=True)
case("cummax", lambda L, x: L.cummax(x, 1), X)
case("cummin", lambda L, x: L.cummin(x, 0, reverse=True), X)
case("cumlogsumexp", lambda L, x: L.cumlogsumexp(x, 1), X, grad=True)
case("sort", lambda L, x: L.sort(x, 0), X, grad=True)
case("sort_multi", lambda L, k, v: L.sort((k, v), 1, num_keys=1), I(3, 6, lo=0, hi=3), U(3, 6), grad=True)
case("sort_multi_2keys", lambda L, k1, k2, v: L.sort([k1, k2, v], num_keys=2), I(2, 8, lo=0, hi=2), I(2, 8, lo=0, hi=3), U(2, 8))
case("sort_key_val", lambda L, k, v: L.sort_key_val(k, v), I(3, 6, lo=0, hi=4), U(3, 6), grad=True)
case("top_k", lambda L, x: L.top_k(x, 2), X, grad=True)
case("top_k_axis0", lambda L, x: L.top_k(x, 2, axis=0), X)
# control flow
case("map", lambda L, x: L.map(lambda r: L.sin(r) * L.reduce_sum(r, (0,)), x), X, grad=True)
case("map_batch", lambda L, x: L.map(lambda r: L.exp(r) * 2.0, x, batch_size=2), U(5, 2), grad=True)
case("map_batch_exact", lambda L, x: L.map(lambda r: L.exp(r), x, batch_size=3), U(6, 2))
case("scan", lambda L, x: L.scan(lambda c, r: (c + r, c * r), L.full((4,), 1.0, x.dtype), x)[1], X, grad=True)
case("fori_loop", lambda L, x: L.fori_loop(0, 3, lambda i, c: c * 2.0 + L.sin(c), x), X, grad=True)
case("while_loop", lambda L, x: L.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, c[1] * 1.5), (0, x))[1], X)
case("cond", lambda L, x: L.cond(True, lambda a, b: a * b, lambda a, b: a - b, x, x), X, grad=True)
case("switch", lambda L, x, i: L.switch(i, [L.sin, L.cos, L.exp], x), X, np.int64(1), grad=True)
case("associative_scan", lambda L, x: L.associative_scan(L.add, x, axis=1), X, grad=True)
case("stop_gradient", lambda L, x: L.stop_gradient(x) * x, X, grad=True)
case("optimization_barrier", lambda L, x: L.optimization_barrier((x, x * 2))[1], X)
# convolutions and windows
IMG, KER = U(2, 3, 6, 5), U(4, 3, 3, 2)
case("conv_general_dilated", lambda L, a, b: L.conv_general_dilated(a, b, (1, 2), "SAME", rhs_dilation=(2, 1)), IMG, KER, grad=True)
case("conv", lambda L, a, b: L.conv(a, b, (1, 1), "VALID"), IMG, KER, grad=True)
case("conv_with_general_padding", lambda L, a, b: L.conv_with_general_padding(a, b, (1, 1), [(1, 0), (0, 2)], (2, 1), None), IMG, KER, grad=True)
case("conv_transpose", lambda L, a, b: L.conv_transpose(a, b, (2,), "SAME", dimension_numbers=("NWC", "WIO", "NWC")), U(1, 5, 2), U(3, 2, 3), grad=True)
case("reduce_window", lambda L, x: L.reduce_window(x, -np.inf, L.max, (2, 2), (1, 2), "SAME"), X, grad=True)
case("reduce_window_add", lambda L, x: L.reduce_window(x, 0.0, L.add, (2, 3)), X, grad=True)


def _np(r):
    if isinstance(r, (tuple, list)):
        return [_np(v) for v in r]
    return np.asarray(r.numpy() if isinstance(r, qb.Tensor) else r)


def _cmp(got, want, tol, what):
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), what
        for g, w in zip(got, want):
            _cmp(g, w, tol, what)
        return
    g, w = _np(got), np.asarray(want)
    assert g.dtype == w.dtype, f"{what}: dtype {g.dtype} vs {w.dtype}"
    assert_close(g, w, tol, tol, what)


def _jax_args(args):
    return [jnp.asarray(a) for a in args]


def _qb_args(args):
    return [qb.asarray(a, dtype=np.asarray(a).dtype) for a in args]


@pytest.mark.parametrize("name,fn,args,grad,tol", CASES)
def test_value_eager_jit(name, fn, args, grad, tol):
    want = jax.tree_util.tree_map(np.asarray, fn(jax.lax, *_jax_args(args)))
    _cmp(fn(qb.lax, *_qb_args(args)), want, tol, "eager")
    _cmp(qb.jit(lambda *a: fn(qb.lax, *a))(*_qb_args(args)), want, tol, "jit")


GRAD_CASES = [c for c in CASES if c.values[3]]


def _scalarize(L, fn, ws):
    def f(*a):
        leaves = jax.tree_util.tree_leaves(fn(L, *a)) if L is jax.lax else qb.tree.leaves(fn(L, *a))
        total = 0.0
        for leaf, w in zip(leaves, ws):
            if leaf.dtype.kind == "f" if L is jax.lax else leaf.dtype.is_float:
                total = total + (leaf * (w.astype(leaf.dtype) if L is jax.lax else qb.astype(w, leaf.dtype))).sum()
        return total

    return f


@pytest.mark.parametrize("name,fn,args,grad,tol", GRAD_CASES)
def test_grad_against_jax(name, fn, args, grad, tol):
    outs = jax.tree_util.tree_leaves(fn(jax.lax, *_jax_args(args)))
    ws = [RNG.uniform(0.5, 1.5, size=np.shape(o)) for o in outs]
    fargs = [i for i, a in enumerate(args) if np.asarray(a).dtype.kind == "f"]
    want = jax.grad(_scalarize(jax.lax, fn, [jnp.asarray(w) for w in ws]), argnums=tuple(fargs))(*_jax_args(args))
    got = qb.grad(_scalarize(qb.lax, fn, [qb.asarray(w) for w in ws]), argnums=tuple(fargs))(*_qb_args(args))
    for g, w in zip(got, want):
        assert_close(_np(g), np.asarray(w), 1e-9, 1e-9, name)


@pytest.mark.parametrize("name", ["pad", "dot_general", "slice", "rev", "dynamic_slice", "reduce_callable", "sort_multi", "map_batch", "clamp"])
def test_check_grads_second_order(name):
    (c,) = [c for c in CASES if c.id == name]
    _, fn, args, _, _ = c.values
    qargs = tuple(qb.asarray(a) for a in args)
    fl = [i for i, a in enumerate(args) if np.asarray(a).dtype.kind == "f"]

    def f(*fa):
        a = list(qargs)
        for i, v in zip(fl, fa):
            a[i] = v
        return qb.tree.leaves(fn(qb.lax, *a))[-1 if name == "sort_multi" else 0]

    qb.test_util.check_grads(f, tuple(qargs[i] for i in fl), order=2)


@pytest.mark.parametrize("name", ["add", "pad", "dot_general", "slice", "rev", "reduce_callable", "sort_multi", "select_n", "clamp",
                                  "dynamic_slice", "integer_pow", "round", "clz", "reduce_xor", "top_k", "cumsum"])
def test_vmap_against_jax(name):
    (c,) = [c for c in CASES if c.id == name]
    _, fn, args, _, _ = c.values
    batch = [np.stack([np.asarray(a) * (1 + k) if np.asarray(a).dtype.kind == "f" else np.asarray(a) for k in range(3)]) for a in args]
    in_axes = tuple(0 if np.asarray(a).ndim else None for a in args)
    batch = [b if ax == 0 else a for b, a, ax in zip(batch, args, in_axes)]
    want = jax.tree_util.tree_map(np.asarray, jax.vmap(lambda *a: fn(jax.lax, *a), in_axes)(*_jax_args(batch)))
    got = qb.vmap(lambda *a: fn(qb.lax, *a), in_axes)(*_qb_args(batch))
    _cmp(got, want, 1e-12, "vmap")


def test_every_public_name_is_tested_or_exempt():
    tested = {c.values[0] for c in CASES}
    exempt = {"Precision", "RoundingMethod", "and_", "or_", "xor", "not_", "ConvDimensionNumbers"}
    # Tested in their own files: test_lax_breadth.py (gather/scatter, conv helpers, bits,
    # special functions), test_solvers.py (custom_root, custom_linear_solve) and
    # test_collectives.py (psum and the other collectives over named vmap axes).
    src = "".join(open(os.path.join(os.path.dirname(__file__), f)).read() for f in ("test_lax_breadth.py", "test_solvers.py", "test_collectives.py"))
    exempt |= {n for n in qb.lax.__all__ if re.search(rf"(\b(lax|L|_solvers)\.{n}\b|\"{n}\")", src)}
    missing = [n for n in qb.lax.__all__ if n not in tested and n not in exempt]
    assert not missing, missing
    for n in qb.lax.__all__:
        assert hasattr(jax.lax, n) or n in {"and_", "or_", "xor", "not_"}, n
        assert getattr(qb.lax, n).__doc__, n


def test_aliases_and_enums():
    assert qb.lax.and_ is qb.lax.bitwise_and and qb.lax.not_ is qb.lax.bitwise_not
    assert int(qb.lax.RoundingMethod.AWAY_FROM_ZERO) == int(jax.lax.RoundingMethod.AWAY_FROM_ZERO)
    assert qb.lax.xor(qb.array([True]), True).tolist() == [False]


def test_f32_kept():
    x = qb.asarray(X32)
    for r in (qb.lax.sin(x), qb.lax.add(x, 1.0), qb.lax.pow(x, 2), qb.lax.integer_pow(x, 2), qb.lax.round(x), qb.lax.reduce(x, 0.0, qb.lax.add, (0,)),
              qb.lax.pad(x, 0.0, [(1, 1, 1), (0, 0, 0)]), qb.lax.dot_general(x, x, (((1,), (1,)), ((), ()))), qb.lax.clamp(0.0, x, 1.0)):
        assert r.dtype == qb.float32


def test_errors():
    x, n = qb.asarray(X), qb.asarray(N)
    with pytest.raises(qb.DTypeError, match="lax.add"):
        qb.lax.add(x, n)
    with pytest.raises(qb.DTypeError, match="lax.add"):
        qb.lax.add(x, qb.asarray(X32))
    with pytest.raises(qb.DTypeError, match="lax.add"):
        qb.lax.add(n, 1.5)
    with pytest.raises(qb.DTypeError, match="lax.sin"):
        qb.lax.sin(n)
    with pytest.raises(qb.DTypeError, match="lax.abs"):
        qb.lax.abs(qb.asarray(U32))
    with pytest.raises(qb.DTypeError, match="lax.add"):
        qb.lax.add(qb.asarray(B), qb.asarray(B))
    with pytest.raises(qb.ShapeError, match="lax.mul"):
        qb.lax.mul(x, qb.ones((4,)))
    with pytest.raises(qb.ShapeError, match="lax.select"):
        qb.lax.select(qb.asarray([True, False]), x, x)
    with pytest.raises(qb.ShapeError, match="lax.pad"):
        qb.lax.pad(x, 0.0, [(0, 0, 0)])
    with pytest.raises(qb.DTypeError, match="lax.pad"):
        qb.lax.pad(x, qb.asarray(np.float32(0)), [(0, 0, 0), (0, 0, 0)])
    with pytest.raises(qb.ShapeError, match="lax.slice"):
        qb.lax.slice(x, (0, 0), (4, 4))
    with pytest.raises(qb.ShapeError, match="lax.dot_general"):
        qb.lax.dot_general(x, x, (((1,), (0,)), ((), ())))
    with pytest.raises(qb.DTypeError, match="lax.dot_general"):
        qb.lax.dot_general(x, n, (((1,), (1,)), ((), ())))
    with pytest.raises(qb.ShapeError, match="lax.dot"):
        qb.lax.dot(qb.ones((2, 3, 4)), qb.ones((4,)))
    with pytest.raises(qb.ShapeError, match="lax.reshape"):
        qb.lax.reshape(x, (5, 2))
    with pytest.raises(qb.ShapeError, match="lax.squeeze"):
        qb.lax.squeeze(x, (0,))
    with pytest.raises(qb.ShapeError, match="lax.broadcast_in_dim"):
        qb.lax.broadcast_in_dim(x, (3, 5), (0, 1))
    with pytest.raises(qb.ShapeError, match="lax.transpose"):
        qb.lax.transpose(x, (0, 0))
    with pytest.raises(qb.InvalidArgumentError, match="lax.sort"):
        qb.lax.sort((x, x), num_keys=3)
    with pytest.raises(qb.ShapeError, match="lax.sort"):
        qb.lax.sort((x, qb.ones((2,))))
    with pytest.raises(qb.DTypeError, match="lax.integer_pow"):
        qb.lax.integer_pow(n, -1)
    with pytest.raises(qb.InvalidArgumentError, match="lax.round"):
        qb.lax.round(x, 5)
    with pytest.raises(qb.DTypeError, match="lax.concatenate"):
        qb.lax.concatenate([x, n], 0)
    with pytest.raises(qb.DTypeError, match="lax.reduce"):
        qb.lax.reduce(x, qb.asarray(np.float32(0)), qb.lax.add, (0,))
    with pytest.raises(qb.DTypeError, match="lax.argmax"):
        qb.lax.argmax(x, 0, qb.float32)
    with pytest.raises(qb.ShapeError, match="lax.map"):
        qb.lax.map(lambda a: a, (x, qb.ones((2,))))
    with pytest.raises(qb.ShapeError, match="lax.split"):
        qb.lax.split(x, (1, 1), 0)
