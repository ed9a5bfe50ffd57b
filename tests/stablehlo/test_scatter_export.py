"""The scatter family exported to StableHLO (`stablehlo.scatter` with the same dimension
numbers and a combiner region) and run on XLA CPU and IREE llvm-cpu, against Quabla's CPU
JIT: every combiner, float and integer, the take-along-axis form with duplicate (add, mul,
min, max) and out-of-bounds (dropped) indices, and general dimension numbers (an index
vector with partial windows; XLA only, IREE's compiler rejects that form). `scatter` (set) uses distinct indices: which duplicate wins
is implementation-defined in StableHLO."""
import numpy as np
import pytest

from harness import Program, tensor_type

pytest.importorskip("jax", reason="the StableHLO tests run the export on jaxlib's XLA (requirements-dev.txt)")
pytest.importorskip("iree.compiler", reason="the StableHLO tests run the export on IREE (requirements-dev.txt)")

NP = {"f64": np.float64, "f32": np.float32, "i32": np.int32, "i64": np.int64}
OPS = ["scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max"]


def arr_i64(v):
    return "array<i64" + (": " + ", ".join(str(x) for x in v) if v else "") + ">"


def attrs(uwd, iwd, s2o, ivd):
    return f"update_window_dims = {arr_i64(uwd)}, inserted_window_dims = {arr_i64(iwd)}, scatter_dims_to_operand_dims = {arr_i64(s2o)}, index_vector_dim = {ivd} : i64"


def vals(rng, shape, dt):
    if dt.startswith("f"):
        return rng.uniform(-2, 2, shape).astype(NP[dt])
    return rng.integers(-3, 4, shape).astype(NP[dt])


@pytest.mark.parametrize("dt", ["f64", "f32", "i32", "i64"])
def test_scatter_take_form(dt):
    rng = np.random.default_rng(7)
    p = Program()
    x = p.arg(vals(rng, (6, 3), dt))
    for op in OPS:
        idx = [4, 0, 9, -1, 2] if op == "scatter" else [1, 4, 1, 9, -1, 1]
        i = p.arg(np.array(idx, np.int32))
        u = p.arg(vals(rng, (len(idx), 3), dt))
        t = tensor_type((6, 3), dt)
        p.out(p.op(op, [x, i, u], t, attrs([1], [0], [0], 1)), f"{op} axis 0 {dt}")
    # Along axis 1 with 2-d indices.
    y = p.arg(vals(rng, (2, 5), dt))
    i = p.arg(np.array([[0, 4], [7, 2]], np.int64))
    u = p.arg(vals(rng, (2, 2, 2), dt))
    p.out(p.op("scatter_add", [y, i, u], tensor_type((2, 5), dt), attrs([0], [1], [1], 2)), f"scatter_add axis 1 {dt}")
    p.check()


def test_scatter_general_dimension_numbers():
    rng = np.random.default_rng(8)
    p = Program()
    x = p.arg(vals(rng, (4, 6), "f64"))
    # (row, col) starts, windows of 1 x 3; starts (3, 4) and (-1, 0) do not fit: dropped.
    i = p.arg(np.array([[0, 0], [3, 3], [3, 4], [2, 1], [-1, 0]], np.int32))
    u = p.arg(vals(rng, (5, 3), "f64"))
    for op in OPS[1:]:
        p.out(p.op(op, [x, i, u], tensor_type((4, 6), "f64"), attrs([1], [0], [0, 1], 1)), f"{op} windows")
    # IREE's scatter lowering rejects this form at compile time ("expected indices to be
    # equal to batch rank or batch rank + 1"): XLA only.
    p.check(iree=False)
