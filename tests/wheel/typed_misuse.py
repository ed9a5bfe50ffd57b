"""Misuse that the stubs must make mypy reject (tests/wheel/test_stubs.py expects an error on
every line marked ``# E``); never run."""

import quabla as qb
from quabla import _quabla

t: qb.Tensor = qb.asarray([1.0])
t.no_such_method()  # E
n: str = t.ndim  # E
s: int = t.shape  # E
_quabla.devices(1)  # E
_quabla.opt_main("quabla-opt")  # E
c: _quabla.Compiled = _quabla.TraceBuilder([((2,), 0)])  # E
x: int = t.numpy()  # E
