"""The xla executor over several devices and processes (docs/distributed.md): data-parallel
value_and_grad over 1, 2, 4, 8 XLA CPU devices against the single-device Quabla JIT, an SPMD
jit on a 2-D mesh against the unsharded run, the all-reduce in XLA's optimized HLO, a run of
2 processes on localhost, and typed errors for misuse.

XLA fixes its device count when it starts in a process, so the cases run in subprocesses
(tests/python/distributed_worker.py) with XLA_FLAGS set; each prints a JSON result checked here.
"""
import doctest
import json
import os
import socket
import subprocess
import sys

import pytest

import quabla as qb

pytestmark = pytest.mark.skipif(not qb.sharding.available(), reason="the xla executor needs jax and jaxlib")

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "distributed_worker.py")
RTOL = {"float32": 1e-5, "float64": 1e-12}


DOCTESTS = [t for m in (qb.sharding, qb.distributed) for t in doctest.DocTestFinder().find(m) if t.examples] if qb.sharding.available() else []


@pytest.mark.parametrize("test", DOCTESTS, ids=[t.name for t in DOCTESTS])
def test_docstring_example(test):
    """In this process (one XLA CPU device unless XLA_FLAGS says otherwise)."""
    test.globs = {"qb": qb, "NamedSharding": qb.sharding.NamedSharding, "P": qb.sharding.PartitionSpec}
    out = []
    r = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    r.run(test, out=out.append)
    assert r.failures == 0, "".join(out)


def _env(devices):
    env = dict(os.environ)
    env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
    env.setdefault("PYTHONPATH", "")
    return env


def _result(stdout, stderr, rc):
    lines = [l for l in stdout.splitlines() if l.startswith("RESULT ")]
    assert rc == 0 and lines, f"worker failed (rc={rc}):\n{stdout[-3000:]}\n{stderr[-5000:]}"
    return json.loads(lines[-1][len("RESULT "):])


@pytest.fixture(scope="module")
def single():
    r = subprocess.run([sys.executable, WORKER, "single"], env=_env(8), capture_output=True, text=True, timeout=600)
    return _result(r.stdout, r.stderr, r.returncode)


def test_eight_devices(single):
    assert single["devices"] == 8 and single["in_devices"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [1, 2, 4, 8])
def test_data_parallel_equals_single_device_jit(single, dtype, n):
    assert single["dp"][f"{dtype}/{n}"] <= RTOL[dtype]


def test_data_parallel_sum_reduction(single):
    assert single["dp"]["sum/4"] <= 1e-12


def test_hlo_has_the_gradient_all_reduce(single):
    h = single["hlo"]
    assert h["all_reduce"] >= 1 and h["all_gather"] == 0
    assert h["sdy_mesh"] and h["sdy_batch"] == 2  # x and y carry the batch sharding


def test_spmd_2d_mesh_equals_unsharded(single):
    s = single["spmd"]
    assert s["diff"] <= 1e-5
    assert s["all_reduce"] >= 1  # the contraction over the model-sharded dimension


def test_resident_state_stays_on_the_devices(single):
    s = single["spmd"]
    assert s["puts_in_loop"] == 0
    assert s["put_same"] and s["resident_type"] == "jaxlib" and s["resident_spec"] in ("P(None, 'model')", "PartitionSpec(None, 'model')")
    assert s["resident_diff"] <= 1e-5


def test_data_parallel_traced_inside_a_sharded_jit(single):
    assert single["spmd"]["traced_diff"] <= 1e-5


@pytest.mark.parametrize("case", ["kwargs", "static_with_entry", "static_without_entry", "dict_prefix", "fori_loop", "grad_python_scalar", "dtypes", "one_device"])
def test_sharded_jit_forms_equal_the_cpu_jit(single, case):
    got = single["forms"][case]
    assert got["diff"] <= 1e-12 and got["dtypes"] and got["tree"], got


MISUSE = {
    "mesh_rank": "ShapeError",
    "mesh_names": "InvalidArgumentError",
    "mesh_repeat": "InvalidArgumentError",
    "mesh_not_device": "InvalidArgumentError",
    "make_mesh_size": "ShapeError",
    "make_mesh_names": "ShapeError",
    "spec_unknown_axis": "InvalidArgumentError",
    "spec_axis_twice": "InvalidArgumentError",
    "spec_entry": "ArgumentTypeError",
    "dp_indivisible": "ShapeError",
    "dp_too_many_devices": "ShapeError",
    "dp_reduction": "InvalidArgumentError",
    "dp_scalar_batch": "ShapeError",
    "jit_indivisible": "ShapeError",
    "jit_spec_rank": "ShapeError",
    "jit_out_indivisible": "ShapeError",
    "jit_cpu_shardings": "UnsupportedOperationError",
    "jit_two_meshes": "InvalidArgumentError",
    "jit_in_count": "InvalidArgumentError",
    "jit_not_sharding": "ArgumentTypeError",
    "initialize_pid": "InvalidArgumentError",
    "initialize_late": "InvalidArgumentError",  # XLA has started in this process
    "devices_backend": "InvalidArgumentError",
}


@pytest.mark.parametrize("case", sorted(MISUSE))
def test_misuse_raises_typed_errors(single, case):
    got = single["misuse"][case]
    assert got["cls"] == MISUSE[case] and got["quabla"], got


def test_misuse_messages_name_the_problem(single):
    m = single["misuse"]
    assert "'model'" in m["spec_unknown_axis"]["msg"] and "batch" in m["spec_unknown_axis"]["msg"]
    assert "(60, 16)" in m["dp_indivisible"]["msg"] and "8 devices" in m["dp_indivisible"]["msg"]
    assert "(2, 2)" in m["mesh_rank"]["msg"]
    assert "60" in m["jit_indivisible"]["msg"] and "'batch'" in m["jit_indivisible"]["msg"]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_processes_equal_one():
    port = _free_port()
    procs = [
        subprocess.Popen([sys.executable, WORKER, "proc", str(pid), str(port)], env=_env(4), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for pid in (0, 1)
    ]
    results = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=300)
            results.append(_result(out, err, p.returncode))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    for pid, r in enumerate(results):
        assert r["pid"] == pid and r["processes"] == 2 and r["devices"] == 8 and r["local"] == 4
        assert r["diff"] <= 1e-12 and r["gather_diff"] <= 1e-12 and r["local_data_diff"] <= 1e-12
    assert results[0]["loss"] == results[1]["loss"]


def test_dp_digits_example_smoke():
    """examples/dp_digits.py --smoke: its first 8-device step equals the CPU JIT's (it asserts
    that itself) and the loss falls over the 2 epochs."""
    r = subprocess.run(
        [sys.executable, os.path.join(HERE, "..", "..", "examples", "dp_digits.py"), "--smoke"],
        env=_env(8), capture_output=True, text=True, timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr[-5000:]
    losses = [float(l.split("loss")[1]) for l in r.stdout.splitlines() if l.startswith("epoch")]
    assert "8 XLA devices" in r.stdout and len(losses) == 2 and losses[1] < losses[0], r.stdout


HOSTILE = [None, True, -1, 2**70, 1.5, float("nan"), "", "a", (), (-1,), [1, [2, 3]], {"a": 1}, {1, 2}, slice(None), object(), float, "float16"]


def test_hostile_arguments_raise_quabla_errors():
    """In this process (one XLA device): odd arguments to the public functions of qb.sharding
    and qb.distributed raise QuablaErrors, nothing else."""
    S, D = qb.sharding, qb.distributed
    mesh = S.make_mesh((1,), "b")
    batch = S.NamedSharding(mesh, S.PartitionSpec("b"))
    calls = {
        "Mesh": lambda a: S.Mesh(a, a),
        "Mesh_names": lambda a: S.Mesh(S.devices()[:1], a),
        "make_mesh": lambda a: S.make_mesh(a, "b"),
        "make_mesh_names": lambda a: S.make_mesh((1,), a),
        "NamedSharding": lambda a: S.NamedSharding(a),
        "NamedSharding_spec": lambda a: S.NamedSharding(mesh, a),
        "PartitionSpec": lambda a: S.PartitionSpec(a, "b"),
        "device_put": lambda a: S.device_put(a, batch),
        "device_put_sharding": lambda a: S.device_put(qb.ones((2,)), a),
        "local_data": lambda a: S.make_array_from_process_local_data(batch, a),
        "local_data_shape": lambda a: S.make_array_from_process_local_data(batch, qb.ones((2,)), a),
        "devices": lambda a: S.devices(a),
        "device_count": lambda a: S.device_count(a),
        "value_and_grad_devices": lambda a: D.value_and_grad(qb.sum, devices=a, shard_argnums=0),
        "value_and_grad_shard": lambda a: D.value_and_grad(qb.sum, devices=1, shard_argnums=a),
        "value_and_grad_reduction": lambda a: D.value_and_grad(qb.sum, devices=1, shard_argnums=0, reduction=a),
        "value_and_grad_call": lambda a: D.value_and_grad(lambda w, x: qb.sum(w * x), devices=1, shard_argnums=1)(qb.ones(()), a),
        "jit_in_shardings": lambda a: qb.jit(lambda x: x, in_shardings=a),
        "initialize": lambda a: D.initialize(a, a, a, initialization_timeout=1),
    }
    for name, call in calls.items():
        for a in HOSTILE:
            try:
                call(a)
            except qb.QuablaError:
                pass
            except BaseException as e:  # noqa: BLE001 - the point: nothing else may escape
                raise AssertionError(f"{name}({a!r}) raised {type(e).__name__}: {e}") from None
