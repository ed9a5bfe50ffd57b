"""qb.debug.print / qb.debug.callback against jax.debug.print / jax.debug.callback: the same
program written once for both namespaces, run under eager, jit, grad, jvp, vmap (nested too),
loops and cond; the lines each prints to stdout must be the same, in the same order. Plus the
interpreter, the StableHLO export (a host-only custom call), misuse and a raising callback."""

import sys
from types import SimpleNamespace

import numpy as np
import pytest

import quabla as qb

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402

QB = SimpleNamespace(np=qb, debug=qb.debug, jit=qb.jit, grad=qb.grad, value_and_grad=qb.value_and_grad, vmap=qb.vmap, jvp=qb.jvp, fori_loop=qb.fori_loop, cond=qb.cond, sync=lambda: None)
JX = SimpleNamespace(np=jnp, debug=jax.debug, jit=jax.jit, grad=jax.grad, value_and_grad=jax.value_and_grad, vmap=jax.vmap, jvp=jax.jvp, fori_loop=jax.lax.fori_loop, cond=jax.lax.cond, sync=jax.effects_barrier)


def _eager(m):
    x = m.np.array([1.0, 2.0])
    m.debug.print("x = {x}, s = {}", m.np.sum(x), x=x)


def _jit_twice(m):
    def f(x, y):
        m.debug.print("x = {x} y = {y}", x=x, y=y)
        y2 = x * 2
        m.debug.print("second {}", y2)
        return y2

    g = m.jit(f)
    g(m.np.arange(3.0), 2)
    g(m.np.arange(3.0) + 1, 2)


def _grad(m):
    def f(x):
        m.debug.print("primal {x}", x=x)
        return m.np.sum(m.np.sin(x) * x)

    m.grad(f)(m.np.array([0.5, 1.5]))
    v, g = m.jit(m.value_and_grad(f))(m.np.array([0.25, 1.0]))
    m.debug.print("{:.6f} {}", v, np.round(np.asarray(g), 6))


def _jvp(m):
    def f(x):
        m.debug.print("p {:.3f}", x)
        return x * x

    m.jvp(f, (m.np.array(3.0),), (m.np.array(1.0),))


def _vmap(m):
    def f(x, y):
        m.debug.print("x={} y={}", x, y)
        return x + y

    m.vmap(f, in_axes=(0, None))(m.np.arange(3.0), 2.0)
    m.jit(m.vmap(f, in_axes=(None, 1)))(m.np.array(5.0), m.np.arange(4.0).reshape(2, 2))


def _vmap_nested(m):
    def g(a, b):
        m.debug.print("a={a} b={b}", a=a, b=b)
        return a + b

    a, b = m.np.array([1.0, 2.0, 3.0]), m.np.array([10.0, 20.0])
    m.vmap(lambda a: m.vmap(lambda b: g(a, b))(b))(a)
    m.vmap(m.vmap(g, in_axes=(0, None)), in_axes=(None, 0))(a, b)
    m.vmap(m.vmap(g))(m.np.ones((2, 2)), m.np.arange(4.0).reshape(2, 2))


def _loop_and_cond(m):
    def body(i, c):
        m.debug.print("i={i} c={c}", i=i, c=c)
        return c * 2.0

    m.jit(lambda c: m.fori_loop(0, 3, body, c))(m.np.array(1.0))

    def br(name, s):
        def f(x):
            m.debug.print(name + " {}", x)
            return x * s

        return f

    h = m.jit(lambda x: m.cond(x > 0, br("pos", 2.0), br("neg", -1.0), x))
    h(m.np.array(-1.5))
    h(m.np.array(2.5))


def _grad_loop(m):
    def body(i, c):
        m.debug.print("i={i} c={c}", i=i, c=c)
        return c * c

    g = m.grad(lambda c: m.fori_loop(0, 2, body, c))(m.np.array(1.5))
    m.debug.print("g={}", g)


def _grad_cond(m):
    def f(x):
        return m.cond(x > 0, lambda x: (m.debug.print("pos {}", x), x * x)[1], lambda x: x, x)

    m.grad(f)(m.np.array(3.0))


def _no_arrays(m):
    h = m.jit(lambda x: (m.debug.print("hi {} {k}", 5, k="k"), x + 1)[1])
    h(m.np.array(1.0))
    h(m.np.array(2.0))


def _dtypes_and_trees(m):
    # (JAX's debug callbacks are unordered: one per program keeps its output comparable.)
    def f(a, b, c):
        m.debug.print("{} {} {}", a, b, c)
        return a

    def g(d):
        m.debug.callback(lambda t, s: print(sorted(t), np.asarray(t["p"]).tolist(), np.asarray(t["q"][0]).tolist(), s), d, "s")
        return d["p"]

    m.jit(f)(m.np.array([1, 2], dtype=m.np.int32), m.np.array([True, False]), m.np.array(7, dtype=m.np.uint8))
    m.sync()
    m.jit(g)({"p": m.np.array([1.0, 2.0]), "q": (m.np.array(3),)})


def _print_of_a_dead_carry(m):
    # The printed carry's result is unused and no other carry reads it: DCE must keep it.
    def body(i, c):
        a, b = c
        m.debug.print("b={}", b)
        return a + 1.0, b * 2.0

    m.jit(lambda x: m.fori_loop(0, 3, body, (x, x))[0])(m.np.array(1.0))


CASES = [_eager, _jit_twice, _grad, _jvp, _vmap, _vmap_nested, _loop_and_cond, _grad_loop, _grad_cond, _no_arrays, _dtypes_and_trees, _print_of_a_dead_carry]


@pytest.mark.parametrize("case", CASES, ids=[c.__name__.strip("_") for c in CASES])
def test_prints_as_jax(case, capsys):
    case(JX)
    JX.sync()
    want = capsys.readouterr().out
    case(QB)
    got = capsys.readouterr().out
    assert want, "the JAX side printed nothing"
    assert got == want


def test_interpreter_prints_the_same(capsys):
    def f(x):
        qb.debug.print("v {}", x)
        return x + 1.0

    x = qb.array([1.0, 2.0])
    prog = qb.jit(f).lower(x).program
    prog.compile(interpret=True)([x])
    prog.compile()([x])
    assert capsys.readouterr().out == "v [1. 2.]\nv [1. 2.]\n"


def test_program_keeps_the_op_and_exports_a_custom_call():
    def f(x):
        qb.debug.print("v {}", x)
        qb.debug.print("v {}", x)  # not merged with the first
        return x * 2.0

    low = qb.jit(f).lower(qb.array(1.0))
    assert low.as_text(optimized=True).count('"quabla.host_callback"') == 2
    hlo = low.as_text(dialect="stablehlo")
    assert hlo.count('"stablehlo.custom_call"') == 2
    assert 'call_target_name = "quabla.host_callback"' in hlo and "has_side_effect = true" in hlo


def test_raising_callback_is_reported_and_the_call_goes_on(monkeypatch):
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: seen.append(u.exc_value))

    def f(x):
        qb.debug.callback(lambda v: 1 / 0, x)
        return x + 1.0

    assert qb.jit(f)(qb.array(1.0)).item() == 2.0
    assert len(seen) == 1 and isinstance(seen[0], ZeroDivisionError)


def test_misuse():
    with pytest.raises(qb.ArgumentTypeError, match="fmt must be a str"):
        qb.debug.print(3)
    with pytest.raises(TypeError, match="callback must be callable"):
        qb.debug.callback(5, qb.array(1.0))
    with pytest.raises(qb.ArgumentTypeError):
        qb.jit(lambda x: (qb.debug.print("{}", x), x)[1])  # fine to build
        qb.debug.print(None)


def test_print_survives_the_persistent_compile_cache(tmp_path):
    """A second process links the cached object (the callback entries are defined in the
    loader's JIT like the other runtime symbols) and still prints."""
    import os
    import subprocess

    script = tmp_path / "p.py"
    script.write_text("import quabla as qb\nf = qb.jit(lambda x: (qb.debug.print('c {}', x * 3), x + 1)[1])\nprint(f(qb.array([1.0, 2.0])))\n")
    env = dict(os.environ, QUABLA_CACHE_DIR=str(tmp_path / "cache"), QUABLA_LOG_COMPILES="1")
    env.pop("QUABLA_CACHE", None)
    runs = [subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
        assert r.stdout == "c [3. 6.]\n[2. 3.]\n"
    assert "compile cache miss" in runs[0].stderr and "compile cache hit" in runs[1].stderr


def test_xla_device_rejects_a_print_with_a_typed_error():
    if "xla" not in [d[0] for d in qb._quabla.device_table()] and not hasattr(qb, "sharding"):
        pytest.skip("no xla executor")
    f = qb.jit(lambda x: (qb.debug.print("v {}", x), x + 1)[1], device="xla")
    with pytest.raises(qb.UnsupportedOperationError, match="quabla.host_callback"):
        f(qb.array([1.0]))
