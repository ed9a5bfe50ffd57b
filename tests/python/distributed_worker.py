"""The processes that tests/python/test_distributed.py starts: XLA's device count is fixed
when it first starts in a process, so every multi-device case runs here, with
``XLA_FLAGS=--xla_force_host_platform_device_count=N`` set by the test. Prints one line
``RESULT <json>`` that the test checks.

usage: distributed_worker.py single            (8 devices: data parallel, SPMD, HLO, misuse)
       distributed_worker.py proc PID PORT     (one of 2 processes x 4 devices)
"""
import json
import sys

import numpy as np

import quabla as qb
from quabla.sharding import Mesh, NamedSharding, PartitionSpec as P, make_mesh

SIZES = [(16, 32), (32,), (32, 4), (4,)]


def mlp_loss(p, x, y):
    w1, b1, w2, b2 = p
    return qb.mean((qb.tanh(x @ w1 + b1) @ w2 + b2 - y) ** 2)


def data(dtype, batch=64, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, 16)).astype(dtype)
    y = rng.standard_normal((batch, 4)).astype(dtype)
    params = [(rng.standard_normal(s) * 0.3).astype(dtype) for s in SIZES]
    return params, x, y


def rel_diff(out, ref):
    """max |a - b| / max(|b|, 1) over the leaves (the tolerance rule of tests/stablehlo)."""
    a, b = qb.tree.leaves(out), qb.tree.leaves(ref)
    assert len(a) == len(b), (len(a), len(b))
    return max(float(np.max(np.abs(np.asarray(u, np.float64) - np.asarray(v, np.float64)) / np.maximum(np.abs(np.asarray(v, np.float64)), 1.0))) for u, v in zip(a, b))


def single_device_reference(params, x, y):
    return qb.jit(qb.value_and_grad(mlp_loss))([qb.array(p) for p in params], qb.array(x), qb.array(y))


def data_parallel():
    out = {}
    for dt in (np.float32, np.float64):
        params, x, y = data(dt)
        ref = single_device_reference(params, x, y)
        for n in (1, 2, 4, 8):
            vg = qb.distributed.value_and_grad(mlp_loss, devices=n, shard_argnums=(1, 2))
            got = vg([qb.array(p) for p in params], x, y)
            assert all(isinstance(t, qb.Tensor) for t in qb.tree.leaves(got))
            out[f"{np.dtype(dt).name}/{n}"] = rel_diff(got, ref)
    # reduction="sum" of per-shard sums is the sum over the whole batch
    params, x, y = data(np.float64)
    sum_loss = lambda p, x, y: qb.sum((qb.tanh(x @ p[0] + p[1]) @ p[2] + p[3] - y) ** 2)  # noqa: E731
    ref = qb.jit(qb.value_and_grad(sum_loss))(params, x, y)
    got = qb.distributed.value_and_grad(sum_loss, devices=qb.sharding.devices()[:4], shard_argnums=(1, 2), reduction="sum")(params, x, y)
    out["sum/4"] = rel_diff(got, ref)
    return out


def hlo_counts():
    params, x, y = data(np.float32)
    vg = qb.distributed.value_and_grad(mlp_loss, devices=8, shard_argnums=(1, 2))
    low = vg.lower(params, x, y)
    hlo = low.compile().as_text()
    text = low.as_text(dialect="stablehlo")
    return {
        "all_reduce": hlo.count("all-reduce("),
        "all_gather": hlo.count("all-gather("),
        "sdy_mesh": 'sdy.mesh @mesh = <["batch"=8]>' in text,
        "sdy_batch": text.count('#sdy.sharding<@mesh, [{"batch"}, {}, {}]>') + text.count('#sdy.sharding<@mesh, [{"batch"}, {}]>'),
    }


def spmd_2d():
    """A batch-sharded input and a model-sharded weight on a 2x4 mesh, against the unsharded run."""
    mesh = make_mesh((2, 4), ("data", "model"))
    rng = np.random.default_rng(1)
    x = rng.standard_normal((16, 32)).astype(np.float32)
    w = rng.standard_normal((32, 64)).astype(np.float32)
    w2 = rng.standard_normal((64, 8)).astype(np.float32)

    def f(x, w, w2):
        h = qb.tanh(x @ w)
        return h @ w2, qb.sum(h)

    ref = qb.jit(f)(x, w, w2)
    shard = (NamedSharding(mesh, P("data")), NamedSharding(mesh, P(None, "model")), NamedSharding(mesh, P("model", None)))
    g = qb.jit(f, in_shardings=shard)
    res = {"diff": rel_diff(g(x, w, w2), ref)}
    hlo = g.lower(x, w, w2).compile().as_text()
    res["all_reduce"] = hlo.count("all-reduce(")
    # resident: a few steps of gradient descent on the sharded weight, never leaving the devices
    ws = NamedSharding(mesh, P(None, "model"))

    def step(w, x):
        return w - 0.01 * qb.grad(lambda w: qb.sum(qb.tanh(x @ w) ** 2))(w)

    rstep = qb.jit(step, in_shardings=(ws, shard[0]), out_shardings=ws, resident=True)
    wr, xr = qb.sharding.device_put(w, ws), qb.sharding.device_put(x, shard[0])
    res["put_same"] = qb.sharding.device_put(wr, ws) is wr
    wc, cstep = qb.array(w), qb.jit(step)
    for _ in range(3):
        wr, wc = rstep(wr, xr), cstep(wc, qb.array(x))
    # fed back in, resident arrays go to the program as they are: no layout step, no host copy
    from quabla import _xla

    puts, put = [], _xla.put
    _xla.put = lambda *a: puts.append(a) or put(*a)
    try:
        for _ in range(2):
            wr, wc = rstep(wr, xr), cstep(wc, qb.array(x))
    finally:
        _xla.put = put
    res["puts_in_loop"] = len(puts)
    res["resident_type"] = type(wr).__module__.split(".")[0]
    res["resident_spec"] = str(wr.sharding.spec)
    res["resident_diff"] = rel_diff(np.asarray(wr), wc)
    # the data-parallel function traced inside a jit with the same shardings
    params, xb, yb = data(np.float32)
    vg = qb.distributed.value_and_grad(mlp_loss, devices=8, shard_argnums=(1, 2))

    def train(p, x, y):
        v, g = vg(p, x, y)
        return v, [a - 0.1 * b for a, b in zip(p, g)]

    dp = qb.jit(train, in_shardings=(vg.replicated, vg.batch, vg.batch), out_shardings=vg.replicated)
    res["traced_diff"] = rel_diff(dp(params, xb, yb), qb.jit(train)(params, xb, yb))
    return res


def jit_forms():
    """Argument and result forms of the sharded jit against the CPU JIT: keyword arguments,
    static arguments (in_shardings with and without their entry), dict prefixes, a loop, dtypes."""
    mesh = make_mesh((8,), ("b",))
    s, r = NamedSharding(mesh, P("b")), NamedSharding(mesh)
    x = np.linspace(-1.0, 1.0, 16)
    cases = {
        "kwargs": (lambda x, y: x * y, dict(in_shardings=s), (x,), {"y": np.ones(16)}, {}),
        "static_with_entry": (lambda x, n: x * n, dict(in_shardings=(s, None)), (x, 3), {}, dict(static_argnums=1)),
        "static_without_entry": (lambda x, n: x * n, dict(in_shardings=(s,)), (x, 4), {}, dict(static_argnums=1)),
        "dict_prefix": (
            lambda d: {"a": d["a"] + 1.0, "b": qb.sum(d["b"])},
            dict(in_shardings=({"a": s, "b": r},), out_shardings={"a": s, "b": r}),
            ({"a": x, "b": x},), {}, {},
        ),
        "fori_loop": (lambda x: qb.fori_loop(0, 3, lambda i, c: qb.sin(c) * 2.0, x), dict(in_shardings=s), (x,), {}, {}),
        "grad_python_scalar": (qb.grad(lambda w, x: qb.sum(qb.sin(x * w))), dict(in_shardings=(r, s)), (2.0, x), {}, {}),
        "dtypes": (
            lambda x: (x > 0.5, qb.astype(x * 10, qb.int32), qb.astype(qb.abs(x) * 10, qb.uint8), qb.astype(x, qb.float32)),
            dict(in_shardings=s), (x,), {}, {},
        ),
        "one_device": (lambda x: qb.exp(x), dict(device="xla"), (x,), {}, {}),
    }
    out = {}
    for name, (f, sharded, args, kwargs, extra) in cases.items():
        got = qb.jit(f, **sharded, **extra)(*args, **kwargs)
        ref = qb.jit(f, **extra)(*args, **kwargs)
        same_dtypes = [str(a.dtype) for a in qb.tree.leaves(got)] == [str(b.dtype) for b in qb.tree.leaves(ref)]
        out[name] = {"diff": rel_diff(got, ref), "dtypes": same_dtypes, "tree": qb.tree.structure(got) == qb.tree.structure(ref)}
    return out


def misuse():
    devs = qb.sharding.devices()
    mesh = make_mesh((8,), ("batch",))
    params, x, y = data(np.float32, batch=60)
    cases = {
        "mesh_rank": lambda: Mesh(np.array(devs[:4], dtype=object).reshape(2, 2), ("a",)),
        "mesh_names": lambda: Mesh(devs[:2], ("a", "a")),
        "mesh_repeat": lambda: Mesh([devs[0], devs[0]], ("a",)),
        "mesh_not_device": lambda: Mesh(["cpu:0"], ("a",)),
        "make_mesh_size": lambda: make_mesh((3,), ("a",)),
        "make_mesh_names": lambda: make_mesh((2, 4), ("a",)),
        "spec_unknown_axis": lambda: NamedSharding(mesh, P("model")),
        "spec_axis_twice": lambda: NamedSharding(mesh, P("batch", "batch")),
        "spec_entry": lambda: P(3),
        "dp_indivisible": lambda: qb.distributed.value_and_grad(mlp_loss, devices=8, shard_argnums=(1, 2))(params, x, y),
        "dp_too_many_devices": lambda: qb.distributed.value_and_grad(mlp_loss, devices=16, shard_argnums=1),
        "dp_reduction": lambda: qb.distributed.value_and_grad(mlp_loss, devices=8, shard_argnums=1, reduction="max"),
        "dp_scalar_batch": lambda: qb.distributed.value_and_grad(lambda w, x: w * x, devices=2, shard_argnums=1)(1.0, qb.array(2.0)),
        "jit_indivisible": lambda: qb.jit(lambda x: x * 2, in_shardings=NamedSharding(mesh, P("batch")))(x),
        "jit_spec_rank": lambda: qb.jit(lambda x: x * 2, in_shardings=NamedSharding(mesh, P(None, None, "batch")))(x),
        "jit_out_indivisible": lambda: qb.jit(lambda x: x[:6], out_shardings=NamedSharding(mesh, P("batch")))(np.ones((8,))),
        "jit_cpu_shardings": lambda: qb.jit(lambda x: x, device="cpu", in_shardings=NamedSharding(mesh)),
        "jit_two_meshes": lambda: qb.jit(lambda x, y: x, in_shardings=(NamedSharding(mesh), NamedSharding(make_mesh((2, 4), ("a", "b")))))(x, x),
        "jit_in_count": lambda: qb.jit(lambda x, y: x, in_shardings=(NamedSharding(mesh),))(x, x),
        "jit_not_sharding": lambda: qb.jit(lambda x: x, in_shardings=P("batch")),
        "initialize_pid": lambda: qb.distributed.initialize("127.0.0.1:1", num_processes=2, process_id=3),
        "initialize_late": lambda: qb.distributed.initialize("127.0.0.1:1", num_processes=2, process_id=0, initialization_timeout=5),
        "devices_backend": lambda: qb.sharding.devices(backend="metal"),
    }
    out = {}
    for name, fn in cases.items():
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - the test checks the class
            out[name] = {"cls": type(e).__name__, "quabla": isinstance(e, qb.QuablaError), "msg": str(e)}
        else:
            out[name] = {"cls": None, "quabla": False, "msg": ""}
    return out


def single():
    return {
        "devices": qb.sharding.device_count(),
        "in_devices": "xla" in qb.devices(),
        "dp": data_parallel(),
        "hlo": hlo_counts(),
        "spmd": spmd_2d(),
        "forms": jit_forms(),
        "misuse": misuse(),
    }


def proc(pid, port):
    qb.distributed.initialize(f"127.0.0.1:{port}", num_processes=2, process_id=pid, initialization_timeout=60)
    params, x, y = data(np.float64)
    ref = single_device_reference(params, x, y)
    vg = qb.distributed.value_and_grad(mlp_loss, devices=qb.sharding.device_count(), shard_argnums=(1, 2))
    got = vg(params, x, y)
    res = {
        "pid": pid,
        "processes": qb.sharding.process_count(),
        "devices": qb.sharding.device_count(),
        "local": len(qb.sharding.local_devices()),
        "diff": rel_diff(got, ref),
        "loss": float(np.asarray(got[0])),
    }
    # each process loads only its half of the batch
    lo, hi = pid * 32, pid * 32 + 32
    xl = qb.sharding.make_array_from_process_local_data(vg.batch, x[lo:hi])
    yl = qb.sharding.make_array_from_process_local_data(vg.batch, y[lo:hi], (64, 4))
    res["local_data_diff"] = rel_diff(vg(params, xl, yl), ref)
    # a batch-sharded result gathered from both processes
    mesh = make_mesh((qb.sharding.device_count(),), ("batch",))
    h = qb.jit(lambda x: qb.tanh(x) * 2.0, in_shardings=NamedSharding(mesh, P("batch")), out_shardings=NamedSharding(mesh, P("batch")))(x)
    res["gather_diff"] = rel_diff(h, np.tanh(x) * 2.0)
    qb.distributed.shutdown()
    return res


if __name__ == "__main__":
    mode = sys.argv[1]
    result = single() if mode == "single" else proc(int(sys.argv[2]), int(sys.argv[3]))
    print("RESULT " + json.dumps(result), flush=True)
