"""quabla._compat_more (clear_caches, the configuration context managers, float0,
closure_convert, version, print_environment_info, make_array_from_callback, live_arrays) and
quabla.profiler, against JAX 0.10.2 (x64) where JAX's behaviour is observable."""

import doctest
import functools
import gc
import json
import os
import sys

import numpy as np
import pytest

import quabla as qb
from breadth_util import assert_close
from quabla import _compat_more as cm
from quabla import errors
from quabla import profiler

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402

JIT = sys.modules["quabla.jit"]


@pytest.mark.parametrize("mod", [cm, profiler], ids=["compat_more", "profiler"])
def test_doctests(mod):
    tests = [t for t in doctest.DocTestFinder().find(mod) if t.examples]
    assert len(tests) >= 8
    if mod is cm:  # the settings' examples (objects, found through __test__)
        assert any("log_compiles" in t.name for t in tests)
    for t in tests:
        t.globs = {"qb": _QB, "np": np}
        out = []
        r = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        r.run(t, out=out.append)
        assert r.failures == 0, "".join(out)


class _QBNamespace:
    """``qb`` with this module's names, as the lead's re-export will give them."""

    def __getattr__(self, name):
        if name in cm.__all__:
            return getattr(cm, name)
        if name == "profiler":
            return profiler
        return getattr(qb, name)


_QB = _QBNamespace()


def test_names_are_new_and_match_jax():
    for name in cm.__all__:
        assert hasattr(jax, name), name
        assert not hasattr(qb._compat, name), name
    for name in ("TraceAnnotation", "StepTraceAnnotation", "annotate_function", "trace", "start_trace", "stop_trace",
                 "device_memory_profile", "save_device_memory_profile", "start_server", "stop_server"):
        assert hasattr(jax.profiler, name) and hasattr(profiler, name), name


def test_clear_caches():
    f = qb.jit(lambda x: x * 3.0)
    g = qb.grad(lambda x: (qb.sin(x) ** 2).sum())
    x = qb.array([0.1, 0.2])
    f(x)
    want = g(x)
    assert f._cache_size == 1 and g._jitted()._cache_size == 1
    assert cm.clear_caches() is None
    assert f._cache_size == 0 and g._jitted()._cache_size == 0
    assert_close(f(x), np.array([0.3, 0.6]), 1e-15)
    assert_close(g(x), want, 1e-15)
    assert f._cache_size == 1


def test_setting_values_and_restore():
    assert cm.log_compiles.value is False and JIT._LOG is False
    with cm.log_compiles():
        assert JIT._LOG is True and cm.log_compiles.value is True
        with cm.log_compiles(False):
            assert JIT._LOG is False
        assert JIT._LOG is True
    assert JIT._LOG is False
    with cm.explain_cache_misses(True):
        assert JIT._EXPLAIN is True
    assert JIT._EXPLAIN is False
    # restored after an exception too
    with pytest.raises(ZeroDivisionError):
        with cm.log_compiles():
            1 / 0
    assert JIT._LOG is False

    @cm.default_matmul_precision("highest")
    def inside():
        return cm.default_matmul_precision.value

    assert inside() == "highest" and cm.default_matmul_precision.value is None
    with cm.transfer_guard("disallow"):
        assert cm.transfer_guard_host_to_device.value == "disallow"
        assert cm.transfer_guard_device_to_host.value == "disallow"
        assert cm.transfer_guard_device_to_device.value == "disallow"
        assert (qb.ones(2) + np.ones(2)).tolist() == [2.0, 2.0]
    assert cm.transfer_guard_host_to_device.value is None


def test_log_compiles_prints(capsys):
    f = qb.jit(lambda x: x - 1)
    with cm.log_compiles():
        f(qb.ones(3))
    err = capsys.readouterr().err
    assert "compiled jit(<lambda>)" in err and "float64[3]" in err
    f(qb.ones(4))
    assert capsys.readouterr().err == ""


def test_setting_errors_as_jax():
    # JAX: ValueError for values outside the enum, TypeError without a value.
    for bad in ("fastest", 3):
        with pytest.raises(errors.InvalidArgumentError):
            cm.default_matmul_precision(bad)
        with pytest.raises(ValueError):
            jax.default_matmul_precision(bad)
    with pytest.raises(errors.InvalidArgumentError):
        cm.numpy_rank_promotion(None)
    with pytest.raises(errors.InvalidArgumentError):
        cm.transfer_guard_host_to_device("never")
    with pytest.raises(errors.ArgumentTypeError):
        cm.default_matmul_precision()
    with pytest.raises(TypeError):
        jax.default_matmul_precision()
    for s in (cm.log_compiles, cm.no_tracing, cm.enable_checks):
        with pytest.raises(errors.ArgumentTypeError):
            s("yes")
        with pytest.raises(errors.ArgumentTypeError):
            s(lambda: 0)
    with pytest.raises(errors.ArgumentTypeError):
        cm.log_compiles(True)(None)
    with pytest.raises(errors.InvalidArgumentError):
        with cm.transfer_guard("bad"):
            pass


def test_unenforceable_settings_raise():
    for ctx in (lambda: cm.numpy_dtype_promotion("strict"), lambda: cm.numpy_rank_promotion("raise"),
                lambda: cm.numpy_rank_promotion("warn"), lambda: cm.debug_nans(), lambda: cm.debug_infs(True)):
        with pytest.raises(errors.UnsupportedOperationError):
            ctx()
    with cm.numpy_dtype_promotion("standard"), cm.numpy_rank_promotion("allow"), cm.debug_nans(False), cm.debug_infs(False):
        got = qb.ones((2, 3), qb.float32) + qb.ones(3, qb.float32) * 2.0
    assert got.dtype == qb.float32
    assert_close(got, jnp.ones((2, 3), jnp.float32) + jnp.ones(3, jnp.float32) * 2.0, 0, 0)


def test_no_tracing():
    f = qb.jit(lambda x: qb.sin(x) * 2.0)
    x = qb.array([0.5, 1.0])
    want = f(x)
    with cm.no_tracing():
        assert_close(f(x), want, 0, 0)  # served from the cache
        with pytest.raises(RuntimeError, match="no_tracing"):
            f(qb.ones(3))
        with pytest.raises(errors.QuablaError):
            qb.grad(lambda y: qb.cos(y))(0.25)
        with pytest.raises(RuntimeError):
            qb.eval_shape(qb.sin, x)
        assert_close(qb.cos(x), np.cos([0.5, 1.0]), 1e-15)  # eager ops do not trace
    assert JIT._trace is cm._ORIGINAL_TRACE and qb._compat._trace is cm._ORIGINAL_TRACE
    assert_close(f(qb.ones(3)), 2 * np.sin(np.ones(3)), 1e-15)
    # JAX's behaviour on the same calls
    jf = jax.jit(lambda x: jnp.sin(x) * 2.0)
    jf(jnp.array([0.5, 1.0]))
    with jax.no_tracing():
        jf(jnp.array([0.5, 1.0]))
        with pytest.raises(RuntimeError):
            jf(jnp.array([0.5, 1.0, 2.0]))


def test_check_tracer_leaks():
    leak = []

    def g(y):
        leak.append(y)
        return y * 2.0

    x = qb.ones(3)
    with cm.checking_leaks():
        for run in (lambda: qb.jit(g)(x), lambda: qb.vmap(g)(x)):
            with pytest.raises(errors.UnexpectedTracerError, match="still referenced"):
                run()
            leak.clear()
        # no false positives across transforms, loops and custom derivatives
        assert_close(qb.jit(lambda y: qb.lax.fori_loop(0, 3, lambda i, c: c * 2.0, y))(x), 8 * np.ones(3), 0, 0)
        assert_close(qb.hessian(lambda y: qb.sin(y).sum())(x), np.diag(-np.sin(np.ones(3))), 1e-14)
        k = qb.custom_jvp(lambda z: qb.sin(z))
        k.defjvp(lambda p, t: (qb.sin(p[0]), qb.cos(p[0]) * t[0]))
        assert_close(qb.jit(qb.grad(lambda y: k(y).sum()))(x), np.cos(np.ones(3)), 1e-15)
        assert_close(qb.vmap(lambda y: qb.lax.cond(y > 0, lambda: y, lambda: -y))(x - 2.0), np.ones(3), 0, 0)
    assert JIT._trace is cm._ORIGINAL_TRACE
    with jax.checking_leaks():
        with pytest.raises(Exception, match="Leaked"):
            jax.jit(g)(jnp.ones(3))
    leak.clear()
    assert cm.check_tracer_leaks.value is False


def test_float0():
    assert cm.float0 == jax.float0 and cm.float0.itemsize == 0
    assert np.zeros((2,), cm.float0).dtype == jax.dtypes.float0
    with pytest.raises(errors.DTypeError):
        qb.zeros(2, cm.float0)


def _closure_loss(closure_convert, jnp_, custom_vjp, vjp):
    @functools.partial(custom_vjp, nondiff_argnums=(0,))
    def apply(fn, x, *args):
        return fn(x, *args)

    def fwd(fn, x, *args):
        return fn(x, *args), (x, args)

    def bwd(fn, res, g):
        x, args = res
        return vjp(fn, x, *args)[1](g)

    apply.defvjp(fwd, bwd)

    def loss(w, x):
        obj = lambda z: jnp_.sin(w * z) * (w * w)  # noqa: E731
        conv, consts = closure_convert(obj, x)
        return apply(conv, x, *consts).sum()

    return loss


def test_closure_convert_with_custom_vjp():
    lq = _closure_loss(cm.closure_convert, qb.numpy, qb.custom_vjp, qb.vjp)
    lj = _closure_loss(jax.closure_convert, jnp, jax.custom_vjp, jax.vjp)
    w, x = 0.7, np.linspace(0.0, 1.0, 4)
    want = jax.grad(lj, argnums=(0, 1))(w, x)
    for got in (qb.grad(lq, argnums=(0, 1))(qb.array(w), qb.array(x)), qb.jit(qb.grad(lq, argnums=(0, 1)))(qb.array(w), qb.array(x))):
        assert_close(got[0], want[0], 1e-13)
        assert_close(got[1], want[1], 1e-13)
    ws = np.array([0.3, 0.7, 1.1])
    assert_close(qb.vmap(qb.grad(lq), in_axes=(0, None))(qb.array(ws), qb.array(x)), jax.vmap(jax.grad(lj), in_axes=(0, None))(ws, x), 1e-13)
    # f32 stays f32
    g32 = qb.grad(lq)(qb.array(0.7, qb.float32), qb.array(x.astype(np.float32)))
    assert g32.dtype == qb.float32


def test_closure_convert_consts_and_errors():
    conv, consts = cm.closure_convert(lambda x: x * 2.0, qb.ones(2))
    _, jconsts = jax.closure_convert(lambda x: x * 2.0, jnp.ones(2))
    assert consts == [] and jconsts == []
    assert conv(qb.array([1.0, 2.0])).tolist() == [2.0, 4.0]
    with pytest.raises(errors.ArgumentTypeError):
        conv((qb.ones(2),))
    with pytest.raises(errors.ShapeError):
        conv(qb.ones(3))
    with pytest.raises(errors.ArgumentTypeError):
        cm.closure_convert(3, qb.ones(2))
    with pytest.raises(errors.ArgumentTypeError):
        cm.closure_convert(lambda x: x, "a")

    seen = {}

    def traced(w, n):
        conv, consts = cm.closure_convert(lambda z: z * w + z[n], qb.ones(2))
        seen["n"] = len(consts)
        seen["conv"] = conv
        return conv(qb.ones(2) * 3.0, *consts)

    got = qb.jit(traced)(qb.array(0.5), qb.array(1))
    assert_close(got, np.array([4.5, 4.5]), 0, 0)
    assert seen["n"] == 1  # the float closed-over value is hoisted, the int one stays (as JAX)
    with pytest.raises(errors.UnexpectedTracerError):
        seen["conv"](qb.ones(2), qb.array(1.0))


def test_version_and_environment(capsys):
    assert cm.version.__version__ == qb.__version__
    assert cm.version.__version_info__ == tuple(int(p) for p in qb.__version__.split(".")[:3])
    import quabla.version  # noqa: F401 - importable as jax.version is

    assert sys.modules["quabla.version"] is cm.version
    assert cm.print_environment_info() is None
    out = capsys.readouterr().out
    assert out.startswith("quabla: ") and "numpy:" in out and "python:" in out
    text = cm.print_environment_info(return_string=True)
    assert text == out.rstrip("\n")
    assert set(jax.print_environment_info(True).splitlines()[2].split()[:1]) == {"numpy:"}
    with pytest.raises(errors.ArgumentTypeError):
        cm.print_environment_info("yes")


def test_make_array_from_callback():
    data = np.arange(6.0).reshape(2, 3)
    seen = []
    got = cm.make_array_from_callback((2, 3), None, lambda idx: seen.append(idx) or data[idx])
    want = jax.make_array_from_callback((2, 3), jax.sharding.SingleDeviceSharding(jax.devices()[0]), lambda idx: seen.append(idx) or data[idx])
    assert seen[0] == seen[1] == (slice(None),) * 2
    assert_close(got, want, 0, 0)
    assert got.dtype == qb.float64
    assert cm.make_array_from_callback((), "cpu", lambda idx: np.float32(2.5)).dtype == qb.float32
    assert cm.make_array_from_callback((2,), None, lambda idx: qb.ones(2, qb.int32), dtype=qb.int32).dtype == qb.int32
    with pytest.raises(errors.ShapeError):
        cm.make_array_from_callback((2,), None, lambda idx: np.ones(3))
    with pytest.raises(errors.DTypeError):
        cm.make_array_from_callback((2,), None, lambda idx: np.ones(2), dtype=qb.int32)
    with pytest.raises(errors.ArgumentTypeError):
        cm.make_array_from_callback((2,), None, lambda idx: [1.0, 2.0])
    with pytest.raises(errors.ArgumentTypeError):
        cm.make_array_from_callback("ab", None, lambda idx: np.ones(2))
    with pytest.raises(errors.ArgumentTypeError):
        cm.make_array_from_callback((2,), 3.5, lambda idx: np.ones(2))
    with pytest.raises(errors.ArgumentTypeError):
        cm.make_array_from_callback((2,), None, None)
    with pytest.raises(errors.UnsupportedOperationError):
        cm.make_array_from_callback((2,), "tpu", lambda idx: np.ones(2))
    mesh = qb.sharding.make_mesh((1,), ("b",))
    s = qb.sharding.NamedSharding(mesh, qb.sharding.PartitionSpec("b"))
    arr = cm.make_array_from_callback((4, 2), s, lambda idx: np.arange(8.0).reshape(4, 2)[idx])
    assert np.asarray(arr).tolist() == np.arange(8.0).reshape(4, 2).tolist()


def test_live_arrays():
    a = qb.array([1.0, 2.0, 3.0])
    assert any(x is a for x in cm.live_arrays())
    gc.collect()
    n0 = len(cm.live_arrays())
    made = [qb.ones(2) for _ in range(3)]
    assert len(cm.live_arrays("cpu")) == n0 + 3
    del made
    assert len(cm.live_arrays()) == n0
    with pytest.raises(errors.ArgumentTypeError):
        cm.live_arrays(3)
    with pytest.raises(errors.UnsupportedOperationError):
        cm.live_arrays("tpu")


def test_profiler_trace(tmp_path):
    f = qb.jit(lambda x: qb.exp(x) + 1.0)
    g = profiler.annotate_function(lambda x: x * 2.0, name="double", kind="demo")
    with profiler.TraceAnnotation("outside"):  # no trace: nothing recorded, nothing raised
        pass
    with profiler.trace(str(tmp_path)):
        for i in range(2):
            with profiler.StepTraceAnnotation("train", step_num=i):
                f(qb.ones(3))
                g(qb.ones(3))
        assert "__call__" in JIT.Jitted.__dict__
    assert "__call__" not in JIT.Jitted.__dict__ and JIT.Jitted._compile is profiler._S.saved["compile"]
    doc = json.load(open(tmp_path / "quabla.trace.json"))
    ev = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    names = [e["name"] for e in ev]
    assert names.count("train") == 2 and names.count("jit(<lambda>)") == 2 and names.count("compile jit(<lambda>)") == 1
    assert names.count("double") == 2 and "outside" not in names
    step = [e for e in ev if e["name"] == "train"]
    assert [e["args"]["step_num"] for e in step] == [0, 1] and all(e["cat"] == "step" for e in step)
    assert [e for e in ev if e["name"] == "double"][0]["args"] == {"kind": "demo"}
    comp = [e for e in ev if e["cat"] == "compile"][0]
    call = [e for e in ev if e["cat"] == "jit"][0]
    assert call["ts"] <= comp["ts"] and comp["ts"] + comp["dur"] <= call["ts"] + call["dur"] + 1e-3
    assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in ev)


def test_profiler_errors(tmp_path):
    with pytest.raises(profiler.ProfilerError):
        profiler.stop_trace()
    profiler.start_trace(tmp_path)
    try:
        with pytest.raises(RuntimeError):
            profiler.start_trace(tmp_path)
    finally:
        profiler.stop_trace()
    assert os.path.exists(tmp_path / "quabla.trace.json")
    with pytest.raises(errors.UnsupportedOperationError):
        profiler.start_trace(tmp_path, create_perfetto_link=True)
    for bad in (None, 3, ""):
        with pytest.raises(errors.ArgumentTypeError):
            profiler.start_trace(bad)
    with pytest.raises(errors.ArgumentTypeError):
        profiler.TraceAnnotation(None)
    with pytest.raises(errors.ArgumentTypeError):
        profiler.annotate_function(None)
    for fn in (profiler.device_memory_profile, lambda: profiler.save_device_memory_profile("x.prof"), lambda: profiler.start_server(1)):
        with pytest.raises(errors.UnsupportedOperationError):
            fn()
    assert not profiler._S.active
