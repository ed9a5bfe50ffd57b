"""Annotated use of the public API, checked by mypy in tests/wheel/test_stubs.py (against the
package's inline types, ``py.typed`` and the extension's stubs) and also run there, so the
annotations are those of real values."""

from typing import NamedTuple

import numpy as np

import quabla as qb
import quabla.typing
from quabla import _quabla


class Params(NamedTuple):
    w: qb.Tensor
    b: qb.Tensor


def scale(x: quabla.typing.ArrayLike, by: float = 2.0) -> qb.Array:
    return qb.asarray(x) * by


def loss(p: Params, x: qb.Tensor) -> qb.Tensor:
    h: qb.Tensor = qb.tanh(x @ p.w + p.b)
    return (h * h).mean()


def main() -> None:
    t: qb.Tensor = qb.asarray(np.arange(6.0).reshape(2, 3))
    shape: tuple[int, ...] = t.shape
    assert shape == (2, 3) and t.ndim == 2 and t.size == 6 and t.itemsize == 8
    dt: qb.dtypes.DType = t.dtype
    assert dt == qb.float64
    col: qb.Tensor = t.sum(axis=0)
    total: float = float(t.sum())
    assert total == 15.0 and col.shape == (3,)
    first: bool | int | float = t[0, 0].item()
    assert first == 0.0
    view: np.ndarray = t.numpy()
    assert view.shape == (2, 3)
    rows: list[qb.Tensor] = list(t)
    assert len(rows) == 2 and len(t) == 2
    flipped: qb.Tensor = t.T.reshape(6)[::-1]
    assert flipped.tolist() == [5.0, 2.0, 4.0, 1.0, 3.0, 0.0]
    eq: qb.Tensor = t == t
    as_array: qb.Array = t
    assert isinstance(as_array, qb.Array)
    assert bool(eq.all())
    assert isinstance(scale(np.array([1.0, 2.0])), qb.Array) and isinstance(scale(3), qb.Array)

    p = Params(qb.ones((3, 4)), qb.zeros(4))
    g = qb.jit(qb.grad(loss))(p, t)
    assert isinstance(g, Params) and g.w.shape == (3, 4)
    leaves: list[qb.Tensor] = qb.tree.leaves(g)
    assert len(leaves) == 2

    # The extension's own API, as the stubs describe it.
    devs: list[str] = _quabla.devices()
    assert "cpu" in devs
    prog = _quabla.TraceBuilder([((2,), t._code)])
    (vid, vshape, vcode), = prog.params()
    done = prog.finish([vid])
    assert isinstance(done, _quabla.Program) and "func.func" in done.as_text()
    compiled: _quabla.Compiled = done.compile()
    out: list[qb.Tensor] = compiled([qb.asarray([1.0, 2.0])])
    assert out[0].tolist() == [1.0, 2.0] and compiled.device == "cpu"
    text: str = qb.export(lambda x: x * 2, qb.ShapeDtype((2,), qb.float32))
    assert "stablehlo" in text


if __name__ == "__main__":
    main()
    print("typed usage: ok")
