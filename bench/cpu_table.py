"""Issue 13's CPU table: Quabla against JAX 0.10.2 in the same process, alternating.

    python bench/cpu_table.py [--only matmul,mlp,gpt,ew,reduce] [--rounds 2] [--json out.json]

Each workload is built twice (qb and jnp spell the same program), checked against each other
once, then timed timeit-style (``compare_jax.timeit_call``: a repeat runs enough calls for
>= 25 ms; min and median over repeats), `--rounds` times alternating Quabla and JAX so both
see the same machine load; the table keeps the best min and the median of the medians.
First calls: a fresh jit of each side (trace + compile + run), once, with a cold compile
cache: the process points ``QUABLA_CACHE_DIR`` at a fresh temporary directory (removed at
exit; ``--cache-dir DIR`` to reuse one, e.g. to measure warm first calls), and before the
table each side compiles and runs one tiny program, so that one-time process costs (MLIR
context and dialects, LLVM's target; XLA's client) are printed on their own line and not
charged to the first row. CPU: the minimum process
CPU time of one call (all threads), the work a call costs whatever the machine's load. Ratios are Quabla / JAX
(below 1: Quabla faster). JAX runs as users run it (XLA's thread pool on all cores); Quabla
with its default threads (``QUABLA_NUM_THREADS``, default the cores this process may use).

Workloads:

* matmul: f32 1024^3, 1000^3, 256x784x512, 256x512x784, 256x512x10, 4096x64x4096, batched
  16x256^3, f64 1024^3, small 32^3 and 64^3 (GFLOP/s at the minimum);
* mlp: loss+grads of a 784-512-512-10 tanh MLP, softmax cross-entropy, batch 256, f32;
* gpt: loss+grads of 3 pre-LayerNorm transformer blocks (d 64, 4 heads, causal, gelu MLP
  4d) on a batch of 8 sequences of 64 positions, f32;
* ew: tanh(2x + 1) * exp(-x) on 1e6 f32;
* reduce: row sums of 1024x1024 f32, grad of sum(softmax(x) * w) on 256x1024 f32, grad of a
  layernorm loss on 256x1024 f32, grad of sum(gelu(x) * w) on 256x1024 f32 (tanh gelu, JAX's
  default);
* adam: one Adam update of the MLP's parameters (qb.optim.Adam.update against a jitted
  JAX update of the same formula).

Environment: OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE are unset for this process only (see
bench/compare_jax.py).
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

for _k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
    os.environ.pop(_k, None)

# A cold compile cache for honest first calls (see the docstring), set before quabla loads.
if "--cache-dir" in sys.argv[1:-1]:
    os.environ["QUABLA_CACHE_DIR"] = sys.argv[sys.argv.index("--cache-dir") + 1]
else:
    import atexit
    import shutil
    import tempfile

    _cold = tempfile.mkdtemp(prefix="quabla-cpu-table-cache-")
    os.environ["QUABLA_CACHE_DIR"] = _cold
    atexit.register(shutil.rmtree, _cold, ignore_errors=True)
os.environ.pop("QUABLA_CACHE", None)

import numpy as np  # noqa: E402

import jax  # noqa: E402

jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402

import quabla as qb  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_jax import timeit_call  # noqa: E402

RNG = np.random.default_rng(0)


def f32(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


class Side:
    """The array namespace of one framework: qb or jnp, with the few names that differ."""

    def __init__(self, name):
        self.name = name
        self.np = qb if name == "quabla" else jnp
        self.jit = qb.jit if name == "quabla" else jax.jit
        self.value_and_grad = qb.value_and_grad if name == "quabla" else jax.value_and_grad
        self.nn = qb.nn if name == "quabla" else jax.nn
        self.array = qb.array if name == "quabla" else jnp.asarray

    def block(self, out):
        if self.name == "jax":
            return jax.block_until_ready(out)
        return out


Q, J = Side("quabla"), Side("jax")


def matmul(m, k, n, dtype=np.float32, batch=None):
    shape_a = (batch, m, k) if batch else (m, k)
    shape_b = (batch, k, n) if batch else (k, n)
    a, b = RNG.standard_normal(shape_a).astype(dtype), RNG.standard_normal(shape_b).astype(dtype)

    def make(s):
        f = s.jit(lambda x, y: x @ y)
        x, y = s.array(a), s.array(b)
        return f, (x, y)

    return make, 2 * m * n * k * (batch or 1)


def mlp():
    sizes = [784, 512, 512, 10]
    ws = [f32(i, o, scale=1 / np.sqrt(i)) for i, o in zip(sizes[:-1], sizes[1:])]
    bs = [np.zeros(o, np.float32) for o in sizes[1:]]
    x = f32(256, 784)
    labels = np.eye(10, dtype=np.float32)[RNG.integers(0, 10, 256)]

    def make(s):
        np_ = s.np

        def loss(params, x, y):
            h = x
            for i, (w, b) in enumerate(params):
                h = h @ w + b
                if i < len(params) - 1:
                    h = np_.tanh(h)
            return -np_.mean(np_.sum(s.nn.log_softmax(h, axis=-1) * y, axis=-1))

        params = [(s.array(w), s.array(b)) for w, b in zip(ws, bs)]
        return s.jit(s.value_and_grad(loss)), (params, s.array(x), s.array(labels))

    return make, None


def gpt(blocks=3, d=64, heads=4, batch=8, seq=64):
    hd = d // heads
    weights = []
    for _ in range(blocks):
        weights.append(dict(
            g1=np.ones(d, np.float32), b1=np.zeros(d, np.float32),
            wqkv=f32(d, 3 * d, scale=d ** -0.5), wo=f32(d, d, scale=d ** -0.5),
            g2=np.ones(d, np.float32), b2=np.zeros(d, np.float32),
            w1=f32(d, 4 * d, scale=d ** -0.5), w2=f32(4 * d, d, scale=(4 * d) ** -0.5)))
    x = f32(batch, seq, d)
    mask = np.tril(np.ones((seq, seq), bool))

    def make(s):
        np_ = s.np

        def ln(h, g, b):
            mu = np_.mean(h, axis=-1, keepdims=True)
            var = np_.mean((h - mu) ** 2, axis=-1, keepdims=True)
            return (h - mu) / np_.sqrt(var + 1e-5) * g + b

        def block(h, p):
            a = ln(h, p["g1"], p["b1"])
            qkv = a @ p["wqkv"]
            q, k, v = qkv[..., :d], qkv[..., d:2 * d], qkv[..., 2 * d:]
            split = lambda t: np_.swapaxes(np_.reshape(t, (batch, seq, heads, hd)), 1, 2)
            q, k, v = split(q), split(k), split(v)
            att = q @ np_.swapaxes(k, -1, -2) * (hd ** -0.5)
            att = np_.where(s.array(mask), att, -1e9)
            att = s.nn.softmax(att, axis=-1)
            o = np_.reshape(np_.swapaxes(att @ v, 1, 2), (batch, seq, d))
            h = h + o @ p["wo"]
            m = ln(h, p["g2"], p["b2"])
            return h + s.nn.gelu(m @ p["w1"]) @ p["w2"]

        def loss(params, x):
            h = x
            for p in params:
                h = block(h, p)
            return np_.mean(h * h)

        params = [{k: s.array(v) for k, v in w.items()} for w in weights]
        return s.jit(s.value_and_grad(loss)), (params, s.array(x))

    return make, None


def elementwise():
    x = f32(1_000_000)

    def make(s):
        np_ = s.np
        return s.jit(lambda x: np_.tanh(2 * x + 1) * np_.exp(-x)), (s.array(x),)

    return make, None


def rowsum():
    x = f32(1024, 1024)

    def make(s):
        return s.jit(lambda x: s.np.sum(x, axis=1)), (s.array(x),)

    return make, None


def softmax_grad():
    x, w = f32(256, 1024), f32(256, 1024)

    def make(s):
        np_ = s.np
        return s.jit(s.value_and_grad(lambda x, w: np_.sum(s.nn.softmax(x, axis=-1) * w))), (s.array(x), s.array(w))

    return make, None


def gelu_grad():
    x, w = f32(256, 1024), f32(256, 1024)

    def make(s):
        np_ = s.np
        return s.jit(s.value_and_grad(lambda x, w: np_.sum(s.nn.gelu(x) * w))), (s.array(x), s.array(w))

    return make, None


def layernorm_grad():
    x, w = f32(256, 1024), f32(256, 1024)

    def make(s):
        np_ = s.np

        def f(x, w):
            mu = np_.mean(x, axis=-1, keepdims=True)
            var = np_.mean((x - mu) ** 2, axis=-1, keepdims=True)
            return np_.sum((x - mu) / np_.sqrt(var + 1e-5) * w)

        return s.jit(s.value_and_grad(f)), (s.array(x), s.array(w))

    return make, None


def adam():
    sizes = [784, 512, 512, 10]
    shapes = [(i, o) for i, o in zip(sizes[:-1], sizes[1:])] + [(o,) for o in sizes[1:]]
    ps = [f32(*sh) for sh in shapes]
    gs = [f32(*sh) for sh in shapes]

    def make(s):
        if s.name == "quabla":
            opt = qb.optim.Adam(learning_rate=1e-3)
            params, grads = [qb.array(p) for p in ps], [qb.array(g) for g in gs]
            state = opt.init(params)
            state = {"step": 3, "m": grads, "v": [g * g for g in grads]}
            return (lambda p, g, st: opt.update(p, g, st)), (params, grads, state)

        def update(p, g, st):
            t = st["step"] + 1
            m = [0.9 * m + 0.1 * g for m, g in zip(st["m"], g)]
            v = [0.999 * v + 0.001 * g * g for v, g in zip(st["v"], g)]
            c1, c2 = 1 - 0.9 ** t, 1 - 0.999 ** t
            new = [p - 1e-3 * (m / c1) / (jnp.sqrt(v / c2) + 1e-8) for p, m, v in zip(p, m, v)]
            return new, {"step": t, "m": m, "v": v}

        params, grads = [jnp.asarray(p) for p in ps], [jnp.asarray(g) for g in gs]
        state = {"step": jnp.asarray(3.0, jnp.float32), "m": grads, "v": [g * g for g in grads]}
        return jax.jit(update), (params, grads, state)

    return make, None


WORKLOADS = {
    "matmul_f32_1024": ("matmul", lambda: matmul(1024, 1024, 1024)),
    "matmul_f32_1000": ("matmul", lambda: matmul(1000, 1000, 1000)),
    "matmul_f32_256x784x512": ("matmul", lambda: matmul(256, 784, 512)),
    "matmul_f32_256x512x784": ("matmul", lambda: matmul(256, 512, 784)),
    "matmul_f32_256x512x10": ("matmul", lambda: matmul(256, 512, 10)),
    "matmul_f32_4096x64x4096": ("matmul", lambda: matmul(4096, 64, 4096)),
    "matmul_f32_b16x256": ("matmul", lambda: matmul(256, 256, 256, batch=16)),
    "matmul_f64_1024": ("matmul", lambda: matmul(1024, 1024, 1024, np.float64)),
    "matmul_f32_64": ("matmul", lambda: matmul(64, 64, 64)),
    "matmul_f32_32": ("matmul", lambda: matmul(32, 32, 32)),
    "mlp_784_512_512_10_b256": ("mlp", mlp),
    "gpt_3x_d64": ("gpt", gpt),
    "elementwise_1e6_f32": ("ew", elementwise),
    "rowsum_1024": ("reduce", rowsum),
    "softmax_grad_256x1024": ("reduce", softmax_grad),
    "layernorm_grad_256x1024": ("reduce", layernorm_grad),
    "gelu_grad_256x1024": ("reduce", gelu_grad),
    "adam_update_mlp": ("adam", adam),
}


def leaves(out):
    return [np.asarray(x.numpy() if hasattr(x, "numpy") else x) for x in jax.tree_util.tree_leaves(out, is_leaf=lambda t: hasattr(t, "numpy"))]


def run(name, build, rounds):
    make, flops = build()
    t0 = time.perf_counter()
    fq, aq = make(Q)
    oq = fq(*aq)
    first_q = time.perf_counter() - t0
    t0 = time.perf_counter()
    fj, aj = make(J)
    oj = J.block(fj(*aj))
    first_j = time.perf_counter() - t0
    lq, lj = leaves(oq), leaves(oj)
    assert len(lq) == len(lj), name
    for a, b in zip(lq, lj):
        np.testing.assert_allclose(a, b, rtol=2e-3, atol=2e-3 * max(1.0, float(np.abs(b).max())), err_msg=name)
    q, j = [], []
    for _ in range(rounds):
        q.append(timeit_call(lambda: fq(*aq), max_total=3.0))
        j.append(timeit_call(lambda: J.block(fj(*aj)), max_total=3.0))
    cq, cj = cpu_time(lambda: fq(*aq)), cpu_time(lambda: J.block(fj(*aj)))
    r = dict(workload=name, quabla_min_s=min(x[0] for x in q), quabla_median_s=statistics.median(x[1] for x in q),
             jax_min_s=min(x[0] for x in j), jax_median_s=statistics.median(x[1] for x in j),
             quabla_first_s=first_q, jax_first_s=first_j)
    r["quabla_cpu_s"], r["jax_cpu_s"] = cq, cj
    r["ratio_min"] = r["quabla_min_s"] / r["jax_min_s"]
    r["ratio_median"] = r["quabla_median_s"] / r["jax_median_s"]
    r["ratio_first"] = first_q / first_j
    if flops:
        r["quabla_gflops"] = flops / r["quabla_min_s"] / 1e9
        r["jax_gflops"] = flops / r["jax_min_s"] / 1e9
    return r


def warm_up(s):
    """Seconds to jit and run a tiny program: what the first compile of a process pays once."""
    t0 = time.perf_counter()
    s.block(s.jit(lambda x: x * 2.0 + 1.0)(s.array(np.ones(3, np.float32))))
    return time.perf_counter() - t0


def cpu_time(call, reps=10):
    """Minimum process CPU time of one call (all threads; user + system): the work a call
    costs, which on an oversubscribed machine says more than its wall time."""
    best = math.inf
    for _ in range(reps):
        c = time.process_time()
        call()
        best = min(best, time.process_time() - c)
    return best


def fmt(s):
    return f"{s * 1e3:9.3f} ms" if s >= 1e-3 else f"{s * 1e6:9.1f} us"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--json")
    ap.add_argument("--cache-dir", help="compile cache directory (default: a fresh temporary one: cold first calls)")
    args = ap.parse_args()
    groups = set(filter(None, args.only.split(",")))
    rows = []
    print(f"threads: QUABLA_NUM_THREADS={os.environ.get('QUABLA_NUM_THREADS', '(default)')}, cores {os.cpu_count()}, load {os.getloadavg()[0]:.1f}; "
          f"compile cache {os.environ['QUABLA_CACHE_DIR']}")
    print(f"one-time process costs (first tiny program): quabla {warm_up(Q):.2f} s, jax {warm_up(J):.2f} s")
    print(f"{'workload':28} {'quabla min':>12} {'jax min':>12} {'ratio':>6} {'q median':>12} {'j median':>12} {'ratio':>6} {'q first':>9} {'j first':>9} {'ratio':>6} {'q cpu':>12} {'j cpu':>12}")
    for name, (group, build) in WORKLOADS.items():
        if groups and group not in groups:
            continue
        r = run(name, build, args.rounds)
        rows.append(r)
        gf = f"  ({r['quabla_gflops']:.0f} / {r['jax_gflops']:.0f} GFLOP/s)" if "quabla_gflops" in r else ""
        print(f"{name:28} {fmt(r['quabla_min_s'])} {fmt(r['jax_min_s'])} {r['ratio_min']:6.2f} {fmt(r['quabla_median_s'])} {fmt(r['jax_median_s'])} {r['ratio_median']:6.2f} "
              f"{r['quabla_first_s']:8.2f}s {r['jax_first_s']:8.2f}s {r['ratio_first']:6.2f} {fmt(r['quabla_cpu_s'])} {fmt(r['jax_cpu_s'])}{gf}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
