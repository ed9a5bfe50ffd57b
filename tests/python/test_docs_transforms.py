"""The docstring examples of the transforms (quabla._transforms) and of quabla.optim run."""

import builtins
import doctest

import pytest

import quabla as qb
from quabla import _transforms, optim

TESTS = [t for m in (_transforms, optim) for t in doctest.DocTestFinder().find(m) if t.examples]


@pytest.mark.parametrize("test", TESTS, ids=[t.name for t in TESTS])
def test_docstring_example(test):
    test.globs = {"qb": qb, "round": builtins.round}
    out = []
    r = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    r.run(test, out=out.append)
    assert r.failures == 0, "".join(out)
