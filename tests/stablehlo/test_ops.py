"""Every op of the quabla op table, exported to StableHLO and run on XLA CPU and IREE
llvm-cpu, against Quabla's own CPU JIT (quabla-opt --run). One program per family and dtype,
one labelled output per op case, so a failure names the op. Programs are exported with the
explicit pipeline `convert-quabla-to-stablehlo` alone (no folding), so each op reaches the
export as written."""
import re
import subprocess

import numpy as np
import pytest

from harness import QOPT, Program, tensor_type

pytest.importorskip("jax", reason="the StableHLO tests run the export on jaxlib's XLA (requirements-dev.txt)")
pytest.importorskip("iree.compiler", reason="the StableHLO tests run the export on IREE (requirements-dev.txt)")

EXPORT_ONLY = "convert-quabla-to-stablehlo"
FLOATS = ["f32", "f64"]
INTS = ["i32", "i64"]
NP = {"f32": np.float32, "f64": np.float64, "i1": np.bool_, "i32": np.int32, "i64": np.int64}
NAN, INF = float("nan"), float("inf")

# Inputs of each float unary op (its domain, plus edge cases where StableHLO and quabla agree).
UNARY_FLOAT = {
    "neg": [0.0, -0.0, 1.5, -2.25, INF, NAN],
    "abs": [0.0, -0.0, 1.5, -2.25, -INF, NAN],
    "sign": [0.0, -0.0, 3.5, -0.25, -INF, NAN],
    "exp": [-5.0, -0.5, 0.0, 0.75, 3.0, 10.0],
    "exp2": [-5.0, -0.5, 0.0, 0.75, 3.0, 10.0],
    "expm1": [-1e-8, 3e-9, 1e-3, -0.3, 0.4, 2.0],
    "log": [1e-3, 0.5, 1.0, 2.0, 10.0, 1e6],
    "log1p": [-0.9, -1e-9, 2e-10, 0.5, 3.0, 100.0],
    "sin": [-3.0, -1.0, 0.0, 0.5, 2.0, 3.0],
    "cos": [-3.0, -1.0, 0.0, 0.5, 2.0, 3.0],
    "tan": [-1.2, -0.5, 0.0, 0.3, 1.0, 1.4],
    "tanh": [-20.0, -1.0, -0.1, 0.0, 0.7, 5.0],
    "logistic": [-30.0, -2.0, 0.0, 0.5, 3.0, 30.0],
    "sqrt": [0.0, 1e-4, 0.5, 2.0, 9.0, 1e8],
    "rsqrt": [1e-4, 0.5, 1.0, 2.0, 9.0, 1e8],
    "floor": [-2.5, -0.5, -0.0, 0.5, 1.5, 2.7],
    "ceil": [-2.5, -0.5, -0.0, 0.5, 1.5, 2.7],
    "round": [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5],
    "erf": [-3.0, -0.7, -1e-3, 0.0, 0.25, 1.8],
    "sinh": [-5.0, -0.5, -1e-4, 0.0, 0.75, 3.0],
    "cosh": [-5.0, -0.5, -1e-4, 0.0, 0.75, 3.0],
    "asin": [-0.99, -0.5, -1e-4, 0.0, 0.3, 1.0],
    "acos": [-0.99, -0.5, -1e-4, 0.0, 0.3, 1.0],
    "atan": [-30.0, -1.0, -1e-4, 0.0, 0.3, 5.0],
    "asinh": [-30.0, -1.0, -1e-4, 0.0, 0.3, 5.0],
    "acosh": [1.0, 1.001, 1.5, 2.0, 10.0, 1e4],
    "atanh": [-0.99, -0.5, -1e-4, 0.0, 0.3, 0.9],
    "cbrt": [-27.0, -0.5, -1e-4, 0.0, 8.0, 1e6],
    "erfc": [-3.0, -0.7, 0.0, 0.25, 1.8, 5.0],
    "erf_inv": [-0.99, -0.5, -1e-4, 0.0, 0.3, 0.9],
    "lgamma": [-2.5, -0.5, 0.5, 3.0, 7.5, 30.0],
    "digamma": [-2.5, -0.5, 0.5, 3.0, 7.5, 30.0],
}


def arr(vals, dt, shape=None):
    a = np.array(vals, dtype=NP[dt])
    return a.reshape(shape) if shape else a


def ty(a):
    return tensor_type(a.shape, {v: k for k, v in NP.items()}[a.dtype.type])


def rand(rng, shape, dt, lo=-3, hi=3):
    if dt in FLOATS:
        return rng.uniform(lo, hi, shape).astype(NP[dt])
    if dt == "i1":
        return rng.random(shape) < 0.5
    return rng.integers(lo, hi + 1, shape).astype(NP[dt])


@pytest.mark.parametrize("dt", FLOATS)
def test_unary_float(dt):
    p = Program()
    for name, vals in UNARY_FLOAT.items():
        x = p.arg(arr(vals, dt, (2, 3)))
        p.out(p.op(name, [x], x[1]), name)
    # is_finite: an i1 result of the operand's shape.
    x = p.arg(arr([0.0, -1.5, INF, -INF, NAN, 1e30], dt))
    p.out(p.op("is_finite", [x], tensor_type((6,), "i1")), "is_finite")
    p.check()


@pytest.mark.parametrize("dt", INTS + ["i1"])
def test_unary_integer(dt):
    p = Program()
    if dt == "i1":
        x = p.arg(arr([True, False, True, False], dt))
        p.out(p.op("not", [x], x[1]), "not")
    else:
        info = np.iinfo(NP[dt])
        x = p.arg(arr([info.min, info.min + 1, -7, -1, 0, 1, 5, info.max], dt))
        for name in ["neg", "abs", "sign", "not"]:
            p.out(p.op(name, [x], x[1]), name)
    p.check()


@pytest.mark.parametrize("dt", FLOATS)
def test_binary_float(dt):
    p = Program()
    a = p.arg(arr([1.5, -2.0, 0.0, 7.0, -3.25, NAN, INF, -0.0], dt))
    b = p.arg(arr([0.5, 3.0, 0.0, -2.0, 0.0, 1.0, 2.0, 0.0], dt))
    for name in ["add", "sub", "mul", "div", "rem", "max", "min"]:
        p.out(p.op(name, [a, b], a[1]), name)
    # pow (C pow): positive bases, negative bases with integer exponents, 0**0, 0**-1, NaN.
    # Signed zeros and infinities follow C (IEEE) pow.
    x = p.arg(arr([2.0, 0.5, -2.0, -3.0, 0.0, 0.0, -2.0, 9.0, 1.0, NAN, -1.0, -0.0, -0.0, -0.0, -INF, -INF, -INF, -0.5, -1.5, 1.5, 0.0], dt))
    y = p.arg(arr([0.5, -1.5, 3.0, 2.0, 0.0, 2.5, 0.5, 0.5, NAN, 0.0, INF, 3.0, -3.0, 0.5, 3.0, -3.0, 0.5, -INF, INF, -7.0, -1.0], dt))
    p.out(p.op("pow", [x, y], x[1]), "pow")
    # atan2 in all four quadrants and on the axes.
    u = p.arg(arr([1.0, 1.0, -1.0, -1.0, 0.0, 0.0, 2.0, -0.0], dt))
    v = p.arg(arr([1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 0.0, 1.0], dt))
    p.out(p.op("atan2", [u, v], u[1]), "atan2")
    # logaddexp: large gaps, equal infinities (-inf, -inf) -> -inf, inf + anything, NaN.
    g = p.arg(arr([0.0, 30.0, -INF, INF, -INF, 1.0, NAN, -2.5], dt))
    h = p.arg(arr([0.0, -30.0, -INF, INF, 3.0, INF, 1.0, 4.0], dt))
    p.out(p.op("logaddexp", [g, h], g[1]), "logaddexp")
    p.check()


@pytest.mark.parametrize("dt", INTS)
def test_binary_integer(dt):
    info = np.iinfo(NP[dt])
    p = Program()
    # Division by zero (x/0 = -1, x%0 = x), MIN / -1 = MIN, MIN % -1 = 0, truncation toward zero.
    a = p.arg(arr([7, -7, 7, -7, 5, info.min, info.min, info.max, 0, 3], dt))
    b = p.arg(arr([2, 2, -2, -2, 0, -1, 0, -1, 0, 7], dt))
    for name in ["add", "sub", "mul", "div", "rem", "max", "min", "and", "or", "xor"]:
        p.out(p.op(name, [a, b], a[1]), name)
    p.check()


def test_binary_bool():
    p = Program()
    a = p.arg(arr([True, True, False, False], "i1"))
    b = p.arg(arr([True, False, True, False], "i1"))
    for name in ["max", "min", "and", "or", "xor"]:
        p.out(p.op(name, [a, b], a[1]), name)
    p.check()


@pytest.mark.parametrize("dt", FLOATS + INTS)
def test_powi(dt):
    p = Program()
    if dt in FLOATS:
        x = p.arg(arr([1.5, -2.0, 0.5, -0.75, 3.0, 1.0], dt))
    else:
        x = p.arg(arr([2, -3, 1, -1, 0, 5], dt))
    for n in [0, 1, 2, 3, 5, 8, -1, -2, -3]:
        if dt in INTS or n >= -3:
            p.out(p.op("powi", [x], x[1], f"exponent = {n} : i64"), f"powi {n}")
    p.check()


@pytest.mark.parametrize("dt", FLOATS + INTS + ["i1"])
def test_compare_select(dt):
    p = Program()
    if dt in FLOATS:
        a = p.arg(arr([1.0, 2.0, NAN, 3.0, -0.0, NAN], dt))
        b = p.arg(arr([1.0, 1.0, 1.0, 4.0, 0.0, NAN], dt))
    elif dt == "i1":
        a = p.arg(arr([True, True, False, False, True, False], dt))
        b = p.arg(arr([True, False, True, False, False, True], dt))
    else:
        a = p.arg(arr([1, 2, -3, 3, 0, np.iinfo(NP[dt]).min], dt))
        b = p.arg(arr([1, 1, 1, 4, -1, 5], dt))
    c = None
    for d in ["eq", "ne", "lt", "le", "gt", "ge"]:
        c = p.op("compare", [a, b], tensor_type((6,), "i1"), f'direction = "{d}"')
        p.out(c, f"compare {d}")
    p.out(p.op("select", [c, a, b], a[1]), "select")
    p.check()


@pytest.mark.parametrize("src", FLOATS + INTS + ["i1"])
def test_convert(src):
    p = Program()
    if src in FLOATS:
        # Float -> int truncates toward zero (inputs within every integer range: out-of-range
        # and NaN are undefined in StableHLO); float -> i1 is x != 0, NaN included.
        vals = [-3.75, -0.5, -0.0, 0.0, 0.25, 1.0, 2.5, 100.9, 1e-30]
        x = p.arg(arr(vals, src))
        xn = p.arg(arr(vals + [NAN], src))
    elif src == "i1":
        x = xn = p.arg(arr([True, False, True], src))
    else:
        x = xn = p.arg(arr([-100000, -1, 0, 1, 7, 123456789], src))
    for to in FLOATS + INTS + ["i1"]:
        if to != src:
            v = x if to in INTS else xn
            p.out(p.op("convert", [v], tensor_type(shape_of(v[1]), to)), f"convert {src} -> {to}")
    p.check()


def shape_of(t):
    inner = t[len("tensor<"):-1]
    return tuple(int(d) for d in inner.split("x")[:-1])


def test_constant_iota():
    p = Program()
    consts = [
        ("f32", "dense<[[1.5, -0.0], [0x7F800000, 0x7FC00000]]> : tensor<2x2xf32>"),
        ("f64", "dense<[1.0e-300, -2.5, 0xFFF0000000000000]> : tensor<3xf64>"),
        ("i1", "dense<[true, false]> : tensor<2xi1>"),
        ("i32", "dense<[-2147483648, 7]> : tensor<2xi32>"),
        ("i64", "dense<-9223372036854775808> : tensor<i64>"),
        ("f32", "dense<2.5> : tensor<3x2xf32>"),
    ]
    for dt, lit in consts:
        t = lit.rsplit(" : ", 1)[1]
        p.out(p.op("constant", [], t, f"value = {lit}"), f"constant {lit}")
    for dt in FLOATS + INTS + ["i1"]:
        for dim in [0, 1]:
            t = tensor_type((3, 4), dt)
            p.out(p.op("iota", [], t, f"dim = {dim} : i64"), f"iota {dt} dim {dim}")
    p.check()


@pytest.mark.parametrize("dt", ["f64", "i32", "i1"])
def test_layout(dt):
    rng = np.random.default_rng(1)
    p = Program()
    x = p.arg(rand(rng, (2, 3, 4), dt))
    v = p.arg(rand(rng, (3,), dt))
    s = p.arg(rand(rng, (), dt))
    p.out(p.op("broadcast_in_dim", [v], tensor_type((2, 3), dt), "dims = array<i64: 1>"), "broadcast vector")
    p.out(p.op("broadcast_in_dim", [s], tensor_type((2, 2), dt), "dims = array<i64>"), "broadcast scalar")
    one = p.op("reshape", [v], tensor_type((3, 1), dt))
    p.out(one, "reshape to 3x1")
    p.out(p.op("broadcast_in_dim", [one], tensor_type((3, 5, 2), dt), "dims = array<i64: 0, 2>"), "broadcast extent 1")
    p.out(p.op("reshape", [x], tensor_type((6, 4), dt)), "reshape")
    p.out(p.op("reshape", [p.op("reshape", [s], tensor_type((1, 1), dt))], tensor_type((), dt)), "reshape to 0-d")
    p.out(p.op("transpose", [x], tensor_type((4, 2, 3), dt), "perm = array<i64: 2, 0, 1>"), "transpose")
    p.out(p.op("stop_gradient", [p.op("transpose", [x], tensor_type((4, 2, 3), dt), "perm = array<i64: 2, 0, 1>")], tensor_type((4, 2, 3), dt)), "stop_gradient")
    p.check()


@pytest.mark.parametrize("dt", ["f32", "i64"])
def test_slicing(dt):
    rng = np.random.default_rng(2)
    p = Program()
    x = p.arg(rand(rng, (4, 5), dt))
    y = p.arg(rand(rng, (4, 2), dt))
    pv = p.arg(rand(rng, (), dt))
    p.out(p.op("concatenate", [x, y], tensor_type((4, 7), dt), "dim = 1 : i64"), "concatenate dim 1")
    p.out(p.op("concatenate", [x, x], tensor_type((8, 5), dt), "dim = 0 : i64"), "concatenate dim 0")
    p.out(p.op("slice", [x], tensor_type((2, 2), dt), "start_indices = array<i64: 1, 0>, limit_indices = array<i64: 4, 4>, strides = array<i64: 2, 3>"), "slice")
    p.out(p.op("pad", [x, pv], tensor_type((8, 11), dt), "edge_padding_low = array<i64: 1, 0>, edge_padding_high = array<i64: 0, 2>, interior_padding = array<i64: 1, 1>"), "pad")
    for it in ["i32", "i64"]:
        for starts in [(1, 2), (-3, 9), (3, 0)]:
            ss = [p.arg(np.array(s, NP[it])) for s in starts]
            p.out(p.op("dynamic_slice", [x, *ss], tensor_type((2, 3), dt), "slice_sizes = array<i64: 2, 3>"), f"dynamic_slice {it} starts {starts}")
    p.check()


@pytest.mark.parametrize("dt", ["f32", "i64"])
def test_dynamic_update_slice(dt):
    rng = np.random.default_rng(7)
    p = Program()
    x = p.arg(rand(rng, (4, 5), dt))
    u = p.arg(rand(rng, (2, 3), dt))
    for it in ["i32", "i64"]:
        for starts in [(1, 2), (-3, 9), (3, 0)]:
            ss = [p.arg(np.array(s, NP[it])) for s in starts]
            p.out(p.op("dynamic_update_slice", [x, u, *ss], tensor_type((4, 5), dt)), f"dynamic_update_slice {it} starts {starts}")
    p.check()


@pytest.mark.parametrize("it", ["i32", "i64"])
def test_gather(it):
    rng = np.random.default_rng(3)
    p = Program()
    x = p.arg(rand(rng, (3, 4, 5), "f64"))
    cases = [
        (0, [2, -1, 7, 0]),  # out-of-range indices clamp to [0, n - 1]
        (1, [[3, 0, 1], [9, 2, -4]]),
        (2, 4),
        (2, [[0], [4]]),
    ]
    for axis, idx in cases:
        i = p.arg(np.array(idx, NP[it]))
        shape = (3, 4, 5)[:axis] + np.shape(idx) + (3, 4, 5)[axis + 1:]
        p.out(p.op("gather", [x, i], tensor_type(shape, "f64"), f"axis = {axis} : i64"), f"gather axis {axis} indices {np.shape(idx)}")
    p.check()


@pytest.mark.parametrize("dt", FLOATS + INTS + ["i1"])
def test_reduce(dt):
    rng = np.random.default_rng(4)
    p = Program()
    x = rand(rng, (3, 4, 2), dt, -2, 2)
    if dt in FLOATS:
        x[1, 2, 0] = np.nan  # max/min propagate NaN; sums too
    xa = p.arg(x)
    ops = ["reduce_max", "reduce_min"] if dt == "i1" else ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min"]
    for name in ops:
        for dims in [[0], [1], [2, 0], [0, 1, 2], []]:
            shape = tuple(d for i, d in enumerate((3, 4, 2)) if i not in dims)
            p.out(p.op(name, [xa], tensor_type(shape, dt), f"dims = array<i64{': ' + ', '.join(map(str, dims)) if dims else ''}>"), f"{name} dims {dims}")
    p.check()


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dt", FLOATS + INTS)
def test_argmax_argmin(dt, name):
    # One op per program, every output of its own type: the CPU JIT miscompiles two
    # same-typed reductions returned side by side (see test_programs.py).
    p = Program()
    if dt in FLOATS:
        # Ties pick the first index; NaN is maximal for argmax and minimal for argmin (first NaN wins).
        x = arr([[1.0, 3.0, 3.0, -1.0, 0.5], [NAN, 2.0, NAN, 5.0, 0.0], [-INF, -INF, -INF, -INF, -INF], [2.0, NAN, 7.0, 7.0, INF]], dt)
    else:
        info = np.iinfo(NP[dt])
        x = arr([[1, 3, 3, -1, 0], [info.min, info.min, info.min, info.min, info.min], [info.max, 0, info.max, 2, 2], [-5, -5, -6, -6, 9]], dt)
    xa = p.arg(x)
    for dim in [0, 1]:
        for it in ["i32", "i64"]:
            p.out(p.op(name, [xa], tensor_type((5 if dim == 0 else 4,), it), f"dim = {dim} : i64"), f"{name} dim {dim} -> {it}")
    p.check()


@pytest.mark.parametrize("dt", FLOATS + INTS)
def test_dot_general(dt):
    rng = np.random.default_rng(5)
    p = Program()
    dn = "lhs_batching_dimensions = array<i64{}>, rhs_batching_dimensions = array<i64{}>, lhs_contracting_dimensions = array<i64{}>, rhs_contracting_dimensions = array<i64{}>"

    def dims(*ls):
        return dn.format(*[(": " + ", ".join(map(str, l))) if l else "" for l in ls])

    a = p.arg(rand(rng, (3, 4), dt))
    b = p.arg(rand(rng, (4, 5), dt))
    p.out(p.op("dot_general", [a, b], tensor_type((3, 5), dt), dims([], [], [1], [0])), "matmul")
    p.out(p.op("dot_general", [a, a], tensor_type((4, 4), dt), dims([], [], [0], [0])), "transposed lhs")
    c = p.arg(rand(rng, (2, 3, 4), dt))
    d = p.arg(rand(rng, (2, 4, 5), dt))
    p.out(p.op("dot_general", [c, d], tensor_type((2, 3, 5), dt), dims([0], [0], [2], [1])), "batched")
    p.out(p.op("dot_general", [c, c], tensor_type((2,), dt), dims([0], [0], [1, 2], [1, 2])), "two contracting dims")
    u = p.arg(rand(rng, (3,), dt))
    w = p.arg(rand(rng, (2,), dt))
    p.out(p.op("dot_general", [u, w], tensor_type((3, 2), dt), dims([], [], [], [])), "outer product")
    p.out(p.op("dot_general", [u, u], tensor_type((), dt), dims([], [], [0], [0])), "inner product")
    p.check()


def test_every_op_is_covered():
    """Every op of the dialect (its IRDL definition) appears in a program of this file."""
    irdl = subprocess.run([QOPT, "--print-irdl"], capture_output=True, text=True, check=True).stdout
    ops = re.findall(r"irdl.operation @(\w+)", irdl)
    with open(__file__) as f:
        used = set(re.findall(r'"(\w+)"', f.read())) | set(UNARY_FLOAT)
    assert len(ops) > 40
    assert [o for o in ops if o not in used] == []


@pytest.mark.parametrize("dt", ["f64", "i32"])
def test_scatter(dt):
    # Take-along-axis form; duplicates accumulate, out-of-bounds updates are dropped. More in
    # test_scatter_export.py (general dimension numbers).
    rng = np.random.default_rng(9)
    p = Program()
    x = p.arg(rand(rng, (5, 2), dt))
    dn = "update_window_dims = array<i64: 1>, inserted_window_dims = array<i64: 0>, scatter_dims_to_operand_dims = array<i64: 0>, index_vector_dim = 1 : i64"
    for op in ["scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max"]:
        idx = [3, 0, 8] if op == "scatter" else [1, 4, 1, -2]
        i = p.arg(np.array(idx, np.int64))
        u = p.arg(rand(rng, (len(idx), 2), dt))
        p.out(p.op(op, [x, i, u], tensor_type((5, 2), dt), dn), f"{op} {dt}")
@pytest.mark.parametrize("dt", ["i32", "i64", "ui32"])
def test_shifts_and_population_count(dt):
    # Amounts at and beyond the width: StableHLO's results (0, or the sign fill) are quabla's.
    npd = {"i32": np.int32, "i64": np.int64, "ui32": np.uint32}[dt]
    w = np.iinfo(npd).bits
    p = Program()
    x = p.arg(np.array([1, 3, -1 if dt != "ui32" else 0xFFFFFFFF, 12345, 7, 0], npd))
    n = p.arg(np.array([0, 1, 5, w - 1, w, w + 2], npd))
    for name in ("shift_left", "shift_right_logical", "shift_right_arithmetic"):
        p.out(p.op(name, [x, n], x[1]), name)
    p.out(p.op("population_count", [x], x[1]), "population_count")
@pytest.mark.parametrize("dt", FLOATS)
def test_convolution_and_windows(dt):
    """The convolution and window families (quabla-opt text, not the Python front): strides,
    negative padding, dilations, groups; every window op with padding and dilation."""
    rng = np.random.default_rng(6)
    p = Program()

    def conv_attrs(strides, pad, ld, rd, fg, bg):
        a = lambda v: "array<i64: " + ", ".join(map(str, v)) + ">"  # noqa: E731
        return (f"window_strides = {a(strides)}, padding = {a(pad)}, lhs_dilation = {a(ld)}, rhs_dilation = {a(rd)}, "
                "input_batch_dimension = 0 : i64, input_feature_dimension = 1 : i64, input_spatial_dimensions = array<i64: 2, 3>, "
                "kernel_input_feature_dimension = 1 : i64, kernel_output_feature_dimension = 0 : i64, kernel_spatial_dimensions = array<i64: 2, 3>, "
                "output_batch_dimension = 0 : i64, output_feature_dimension = 1 : i64, output_spatial_dimensions = array<i64: 2, 3>, "
                f"feature_group_count = {fg} : i64, batch_group_count = {bg} : i64")

    x = p.arg(rand(rng, (2, 4, 7, 6), dt))
    w = p.arg(rand(rng, (6, 2, 3, 2), dt))
    p.out(p.op("convolution", [x, w], tensor_type((2, 6, 4, 10), dt), conv_attrs((2, 1), (1, 1, -1, 2), (1, 2), (1, 2), 2, 1)), "convolution groups")
    wb = p.arg(rand(rng, (4, 4, 2, 2), dt))
    p.out(p.op("convolution", [x, wb], tensor_type((1, 4, 6, 5), dt), conv_attrs((1, 1), (0, 0, 0, 0), (1, 1), (1, 1), 1, 2)), "convolution batch groups")

    def win(dims, strides, base, wdil, pad):
        a = lambda v: "array<i64: " + ", ".join(map(str, v)) + ">"  # noqa: E731
        return f"window_dimensions = {a(dims)}, window_strides = {a(strides)}, base_dilations = {a(base)}, window_dilations = {a(wdil)}, padding = {a(pad)}"

    y = p.arg(rand(rng, (3, 8), dt))
    wa = win((2, 3), (1, 2), (1, 1), (1, 2), (1, 0, 1, 1))
    for name in ["reduce_window_sum", "reduce_window_max", "reduce_window_min", "reduce_window_prod"]:
        p.out(p.op(name, [y], tensor_type((3, 3), dt), wa), name)
    src = p.arg(rand(rng, (3, 3), dt))
    t = p.arg(rand(rng, (3, 8), dt))
    p.out(p.op("select_and_scatter_add", [src, y], tensor_type((3, 8), dt), 'select = "ge", ' + wa), "select_and_scatter_add")
    p.out(p.op("select_and_gather_add", [t, y], tensor_type((3, 3), dt), 'select = "le", ' + wa), "select_and_gather_add")
    p.check()
@pytest.mark.parametrize("dt", FLOATS)
def test_linalg(dt):
    """`cholesky` and `triangular_solve` (stablehlo.cholesky / stablehlo.triangular_solve; XLA
    only: the installed IREE does not legalize them, see test_linalg_export.py)."""
    rng = np.random.default_rng(6)
    m = rng.standard_normal((2, 3, 3))
    p = Program()
    a = p.arg((m @ np.swapaxes(m, -1, -2) + 3 * np.eye(3)).astype(np.float32 if dt == "f32" else np.float64))
    t = p.arg((rng.standard_normal((3, 3)) + 3 * np.eye(3)).astype(np.float32 if dt == "f32" else np.float64))
    b = p.arg(rand(rng, (3, 2), dt))
    p.out(p.op("cholesky", [a], tensor_type((2, 3, 3), dt), "lower = true"), "cholesky lower")
    p.out(p.op("cholesky", [a], tensor_type((2, 3, 3), dt), "lower = false"), "cholesky upper")
    p.out(p.op("triangular_solve", [t, b], tensor_type((3, 2), dt), "left_side = true, lower = true, transpose_a = false, unit_diagonal = false"), "trsm left lower")
    p.out(p.op("triangular_solve", [t, b], tensor_type((3, 2), dt), "left_side = true, lower = false, transpose_a = true, unit_diagonal = true"), "trsm left upper transposed unit")
    p.check(iree=False)


@pytest.mark.parametrize("name,results", [("lu", "(tensor<3x3xf64>, tensor<3xi32>, tensor<3xi32>)"), ("qr", "(tensor<3x3xf64>, tensor<3x3xf64>)"), ("eigh", "(tensor<3x3xf64>, tensor<3xf64>)"), ("svd", "(tensor<3x3xf64>, tensor<3xf64>, tensor<3x3xf64>)")])
def test_linalg_decompositions_have_no_stablehlo_form(name, results, tmp_path):
    """StableHLO has no `lu`, `qr`, `eigh`, `svd`: their export is a typed error naming the op."""
    attrs = {"lu": "", "qr": " {full_matrices = false}", "eigh": " {lower = true}", "svd": " {full_matrices = false}"}[name]
    n = results.count("tensor")
    names = ", ".join(f"%r{i}" for i in range(n))
    text = f'func.func @main(%a: tensor<3x3xf64>) -> {results} {{\n  {names} = "quabla.{name}"(%a){attrs} : (tensor<3x3xf64>) -> {results}\n  return {names} : {results[1:-1]}\n}}\n'
    path = tmp_path / "m.mlir"
    path.write_text(text)
    r = subprocess.run([QOPT, str(path), f"--pass-pipeline=builtin.module({EXPORT_ONLY})"], capture_output=True, text=True, timeout=300)
    assert r.returncode != 0
    assert f"'quabla.{name}' op cannot be lowered: no stablehlo rule" in r.stderr
@pytest.mark.parametrize("dt", FLOATS + INTS + ["i1"])
def test_sort(dt):
    # Stable, NaN last ascending / first descending, ties in their original order. One op per
    # program: IREE merges sorts of the same operands whose comparators differ.
    if dt in FLOATS:
        x = arr([[3.0, NAN, 1.0, 3.0, -0.5], [0.0, 2.0, -INF, 2.0, NAN], [1.0, 1.0, 1.0, 1.0, 1.0], [INF, -2.0, 5.0, NAN, 0.25]], dt)
    elif dt == "i1":
        x = arr([[True, False, True, False, False], [False, True, True, True, False], [True, True, True, True, True], [False, False, True, False, True]], dt)
    else:
        x = arr([[3, -7, 1, 3, 0], [2, 2, 2, -1, 9], [1, 1, 1, 1, 1], [-5, 4, 4, 0, -5]], dt)
    for dim in [0, 1]:
        for d in ["lt", "gt"]:
            for name, rt in [("sort", dt), ("argsort", "i64")]:
                p = Program()
                xa = p.arg(x)
                p.out(p.op(name, [xa], tensor_type((4, 5), rt), f'dimension = {dim} : i64, direction = "{d}"'), f"{name} dim {dim} {d}")
                p.check()


def test_host_callback_is_a_host_only_custom_call():
    # The export keeps the callback as a side-effecting custom call (docs/stablehlo.md): the
    # text verifies with jaxlib's StableHLO dialect, the value passes through, and XLA, which
    # has no `quabla.host_callback` target, rejects the program when it compiles it.
    from harness import export, verify, xla_run

    p = Program()
    x = p.arg(np.array([1.5, -2.0]))
    y = p.op("host_callback", [x], tensor_type((2,), "f64"), "callback = 0 : i64, index = 0 : i64, count = 1 : i64, batched = array<i64>")
    p.out(p.op("add", [y, y], tensor_type((2,), "f64")), "passes through")
    hlo = export(p.text())
    assert hlo.count('"stablehlo.custom_call"') == 1 and 'call_target_name = "quabla.host_callback"' in hlo and "has_side_effect = true" in hlo
    verify(hlo)
    with pytest.raises(Exception, match="quabla.host_callback"):
        xla_run(hlo, p.inputs)


def test_callback_result_is_a_host_only_custom_call():
    # A pure callback's result exports as a side-effecting custom call with the result's type
    # (docs/stablehlo.md); XLA, with no `quabla.callback_result` target, rejects it.
    from harness import export, verify, xla_run

    p = Program()
    x = p.arg(np.array([1.5, -2.0]))
    d = p.op("host_callback", [x], tensor_type((2,), "f64"), "callback = 0 : i64, index = 0 : i64, count = 1 : i64, batched = array<i64>")
    r = p.op("callback_result", [], tensor_type((2,), "f64"), "callback = 0 : i64, index = 0 : i64, batched = array<i64>")
    p.out(p.op("add", [d, r], tensor_type((2,), "f64")), "delivered and fetched")
    hlo = export(p.text())
    assert 'call_target_name = "quabla.callback_result"' in hlo and hlo.count('"stablehlo.custom_call"') == 2
    verify(hlo)
    with pytest.raises(Exception, match="quabla"):
        xla_run(hlo, p.inputs)


def test_named_vmap_collectives_export():
    # "psum", "pmax", "pmin", "all_gather" and "axis_index" exist only inside the vmap naming
    # their axis: the export expands the vmap first, so XLA and IREE run ordinary reductions.
    import quabla as qb
    from harness import check_fn

    def f(x):
        def one(v):
            s = qb.lax.psum(v, "i")
            m = qb.lax.pmax(v, "i") - qb.lax.pmin(v, "i")
            g = qb.lax.all_gather(v, "i").sum(0)
            return v / s + m + g * qb.lax.axis_index("i")

        return qb.vmap(one, axis_name="i")(x)

    text = check_fn(f, np.arange(1.0, 13.0).reshape(3, 4))
    assert "quabla" not in text
