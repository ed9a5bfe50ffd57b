"""Unsigned integers and qb.random exported to StableHLO: the threefry2x32 programs (bits,
uniform, randint, split, a vmap over keys) and the unsigned ops verify with jaxlib, run on XLA
and IREE, and equal Quabla's own results, which equal jax.random's bitwise."""
import functools

import jax
import numpy as np
import pytest

import quabla as qb

import harness as h

jax.config.update("jax_enable_x64", True)

_check = functools.partial(h.check_fn, eager=True)


KEY = np.asarray(jax.random.PRNGKey(2026))


@pytest.mark.parametrize(
    "name,fun,jfun",
    [
        ("bits", lambda k: qb.random.bits(k, (3, 5)), lambda k: jax.random.bits(k, (3, 5), "uint32")),
        ("bits_u8", lambda k: qb.random.bits(k, (9,), "uint8"), lambda k: jax.random.bits(k, (9,), "uint8")),
        ("uniform", lambda k: qb.random.uniform(k, (7,), minval=-2.0, maxval=3.0), lambda k: jax.random.uniform(k, (7,), minval=-2.0, maxval=3.0)),
        ("uniform32", lambda k: qb.random.uniform(k, (7,), "float32"), lambda k: jax.random.uniform(k, (7,), "float32")),
        ("randint", lambda k: qb.random.randint(k, (6,), -3, 11), lambda k: jax.random.randint(k, (6,), -3, 11)),
        ("randint32", lambda k: qb.random.randint(k, (6,), 0, 1000, "int32"), lambda k: jax.random.randint(k, (6,), 0, 1000, "int32")),
        ("split", lambda k: qb.random.split(k, 4), lambda k: jax.random.split(k, 4)),
        ("vmap_keys", lambda k: qb.vmap(lambda kk: qb.random.uniform(kk, (2,)))(qb.random.split(k, 3)),
         lambda k: jax.vmap(lambda kk: jax.random.uniform(kk, (2,)))(jax.random.split(k, 3))),
    ],
)
def test_random_programs_run_on_xla_and_iree(name, fun, jfun):
    text = _check(fun, qb.asarray(KEY))
    assert "ui32" in text
    np.testing.assert_array_equal(np.asarray(qb.tree.leaves(fun(qb.asarray(KEY)))[0]), np.asarray(jfun(KEY)))


def test_unsigned_ops_run_on_xla_and_iree():
    a = np.array([0, 1, 7, 0x80000000, 0xFFFFFFFF, 12345], np.uint32)
    b = np.array([3, 0, 2, 31, 33, 7], np.uint32)

    def f(x, y):
        return (x // y, x % y, x >> 3, qb.shift_left(x, y), qb.shift_right_arithmetic(x, y), qb.maximum(x, y),
                (x < y), x.astype(qb.float64), x.astype(qb.uint8), qb.population_count(x), qb.sum(x), qb.max(x))

    _check(f, qb.asarray(a), qb.asarray(b))
