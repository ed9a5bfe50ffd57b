"""Exports of the linear-algebra ops StableHLO has (`cholesky` as `stablehlo.cholesky` plus a
select zeroing the other triangle, `triangular_solve` as `stablehlo.triangular_solve`) verify
with jaxlib, run on XLA and equal Quabla's JIT, batched and differentiated (a GP-style
log-likelihood gradient); the ops StableHLO lacks (`lu`, `qr`, `eigh`, `svd`) are a typed
UnsupportedOperationError. IREE (the installed iree-compile) does not legalize
`stablehlo.cholesky` / `stablehlo.triangular_solve`: the last test pins that, so a future IREE
that runs them shows up."""
import numpy as np
import pytest

import quabla as qb

import harness as h


def _allclose(g, w, what):
    np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-10, err_msg=what)


def _check(fun, *args, iree=False):
    return h.check_fn(fun, *args, iree=iree, compare=_allclose)

def _spd(n, batch=()):
    r = np.random.RandomState(0)
    m = r.randn(*batch, n, n)
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


@pytest.mark.parametrize("lower", [True, False])
def test_export_cholesky(lower):
    a = _spd(4, (2,))
    text = _check(lambda x: qb.scipy.linalg.cholesky(x, lower=lower), a)
    assert "stablehlo.cholesky" in text


@pytest.mark.parametrize("lower,trans,unit", [(True, 0, False), (False, 1, False), (True, 1, True)])
def test_export_triangular_solve(lower, trans, unit):
    a = np.random.RandomState(1).randn(4, 4) + 4 * np.eye(4)
    b = np.random.RandomState(2).randn(4, 3)
    text = _check(lambda a, b: qb.scipy.linalg.solve_triangular(a, b, lower=lower, trans=trans, unit_diagonal=unit), a, b)
    assert "stablehlo.triangular_solve" in text


def test_export_cho_solve_and_gradient():
    a = _spd(5)
    y = np.random.RandomState(3).randn(5)

    def nll(a, y):
        c = qb.scipy.linalg.cho_factor(a, lower=True)
        return 0.5 * qb.sum(y * qb.scipy.linalg.cho_solve(c, y)) + qb.sum(qb.log(qb.sum(c[0] * qb.eye(5), axis=1)))

    _check(nll, a, y)
    _check(qb.grad(nll), a, y)
    _check(qb.vmap(lambda a: qb.linalg.cholesky(a)), _spd(3, (4,)))


def test_export_of_ops_without_stablehlo_form_is_typed():
    # det of 4x4 and larger goes through LU (no StableHLO form); 2x2 / 3x3 are the cofactor
    # formulas (as JAX), plain elementwise ops that export.
    a = _spd(3)
    for f, x in ((qb.linalg.det, _spd(4)), (lambda x: qb.linalg.qr(x)[0], a), (lambda x: qb.linalg.eigh(x)[0], a), (lambda x: qb.linalg.svd(x)[1], a)):
        with pytest.raises(qb.UnsupportedOperationError, match="stablehlo"):
            qb.export(f, x)


@pytest.mark.parametrize("n", [2, 3])
def test_export_small_det(n):
    _check(qb.linalg.det, _spd(n, (2,)))


def test_iree_does_not_legalize_cholesky():
    text = qb.export(qb.linalg.cholesky, _spd(3))
    with pytest.raises(Exception, match="stablehlo.cholesky"):
        h.iree_run(text, [_spd(3)])
