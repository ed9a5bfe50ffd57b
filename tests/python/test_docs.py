"""The docstring examples of the public API run, and docs/api.md is current."""

import builtins
import doctest
import os
import subprocess
import sys

import pytest

import quabla as qb
from quabla import _callback, _collective, _compat, _compat_more, _control, _shard_map, _conv, _math, _ops, _search, _select, _shape, dtypes, jit, lax, ops, tree, tree_util

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import quabla.numpy  # noqa: E402
import quabla.scipy.special  # noqa: E402
from quabla import _indexing, _initializers, _solvers, errors, example_libraries, experimental, flatten_util, image  # noqa: E402

MODULES = (qb, _callback, _collective, _compat, _ops, _control, _conv, _search, _math, _shape, _select, lax, quabla.numpy, ops, jit, tree, tree_util, dtypes, qb.nn,
           qb.random, qb.linalg, quabla.scipy.special, quabla.scipy.stats, quabla.scipy.linalg, quabla.scipy.optimize,
           quabla.scipy.sparse.linalg, _indexing, _initializers, _solvers, errors, example_libraries.stax, example_libraries.optimizers,
           experimental.ode, experimental.checkify, flatten_util, image,
           lax.linalg, quabla.scipy.signal, quabla.scipy.integrate, quabla.scipy.ndimage, quabla.scipy.interpolate,
           quabla.scipy.spatial.transform, quabla.scipy.cluster.vq,
           _compat_more, _shard_map, qb.profiler, experimental.shard_map,
           experimental.sparse, experimental.sparse._bcoo, experimental.sparse._bcsr, experimental.sparse._transform)
TESTS = [t for m in MODULES for t in doctest.DocTestFinder().find(m) if t.examples]


@pytest.mark.parametrize("test", TESTS, ids=[t.name for t in TESTS])
def test_docstring_example(test):
    test.globs = {"qb": qb, "round": builtins.round, "np": __import__("numpy")}
    out = []
    r = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    r.run(test, out=out.append)
    assert r.failures == 0, "".join(out)


def test_api_md_is_current():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "python", "tools", "gen_api_docs.py"), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr + r.stdout
