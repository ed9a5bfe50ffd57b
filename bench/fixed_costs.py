"""A compile's fixed costs and the mid-size products' threads (docs/performance.md, stop 34).

    python bench/fixed_costs.py first [--kind rowsum|ew|trivial|softmax|layernorm] [--count 20]
    python bench/fixed_costs.py cached [--kind ...]      # the same programs from a warm cache
    python bench/fixed_costs.py products                 # a @ b, one thread against the default
    python bench/fixed_costs.py hot                      # first calls right after a hot loop

`first`: the first calls of `--count` jitted programs of distinct shapes in one process, a
fresh compile cache (each a real compile): the row sum of (1024 + i) x 1024 f32, the
elementwise tanh(2x + 1) exp(-x) over (1000 + i) * 1000 f32, x + 1 over 4 + i elements, or
the value and gradient of sum(softmax(x) * w) or of a layer norm's sum(norm(x) * w) over
(256 + i) x 1024 f32 (several thread-split loops: split code generation, stop 35);
min and median in ms. With QUABLA_LOG_COMPILES=1 each compile prints its phases (parse,
upstream pipeline, LLVM translate / optimise / codegen / link). `cached` compiles the same
programs into a cache directory first, then times them in a second process (cache hits).

`hot`: the softmax gradient, the layernorm gradient and tanh(2x + 1) exp(-x) of (256 + i) x
1024 f32 in turn, each called 1000 times before the next is compiled (its first call then
starts while the OpenMP workers of those calls would spin: stop 35's quabla_omp_quiesce),
three rounds; the first call of each, in ms.

`products`: the per-call minimum (300 calls) of jitted `a @ b` f32 for products around the
runtime product's thread thresholds (tiling::PAR_RUNTIME_GEMM_WORK, PAR_RUNTIME_GEMM_K), in a
process with QUABLA_NUM_THREADS=1 and one with the default, alternating twice.

Speeds are compared, never asserted; the machine is shared (take the minimum of runs).
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

SHAPES = [(256, 64, 256), (512, 64, 128), (1024, 64, 64), (64, 64, 1024), (128, 256, 128), (256, 128, 192), (200, 100, 300), (64, 1024, 64), (128, 1024, 32), (32, 2048, 64), (64, 512, 64), (128, 128, 128)]


def programs(kind, count, start=0):
    import numpy as np
    import quabla as qb

    for i in range(start, start + count):
        if kind == "rowsum":
            yield qb.jit(lambda x: qb.sum(x, axis=1)), np.ones((1024 + i, 1024), np.float32)
        elif kind == "ew":
            yield qb.jit(lambda x: qb.tanh(2 * x + 1) * qb.exp(-x)), np.ones((1000 + i) * 1000, np.float32)
        elif kind == "softmax":
            f = qb.value_and_grad(lambda x, w: qb.sum(qb.nn.softmax(x, axis=-1) * w))
            yield (lambda f: qb.jit(lambda xw: f(xw[0], xw[1])))(f), np.linspace(-2, 2, 2 * (256 + i) * 1024, dtype=np.float32).reshape(2, 256 + i, 1024)
        elif kind == "layernorm":

            def ln(x, w):
                mu = qb.mean(x, axis=-1, keepdims=True)
                var = qb.mean((x - mu) ** 2, axis=-1, keepdims=True)
                return qb.sum((x - mu) / qb.sqrt(var + 1e-5) * w)

            f = qb.value_and_grad(ln)
            yield (lambda f: qb.jit(lambda xw: f(xw[0], xw[1])))(f), np.linspace(-2, 2, 2 * (256 + i) * 1024, dtype=np.float32).reshape(2, 256 + i, 1024)
        else:
            yield qb.jit(lambda x: x + 1), np.ones(4 + i, np.float32)


def hot_first_calls(rounds=3):
    out = {"softmax": [], "layernorm": [], "ew": []}
    for r in range(rounds):
        for kind in out:
            (f, x), = programs(kind, 1, start=r)
            t = time.perf_counter()
            f(x)
            out[kind].append((time.perf_counter() - t) * 1e3)
            for _ in range(1000):
                f(x)
    print(" | ".join(f"{k}: {' '.join(f'{v:.1f}' for v in vs)} ms" for k, vs in out.items()))


def first_calls(kind, count):
    ts = []
    for f, x in programs(kind, count):
        t = time.perf_counter()
        f(x)
        ts.append(time.perf_counter() - t)
    ts.sort()
    print(f"{kind}: first call min {ts[0] * 1e3:.2f} ms, median {ts[len(ts) // 2] * 1e3:.2f} ms over {count} programs")


def products():
    import numpy as np
    import quabla as qb

    rng = np.random.default_rng(0)
    out = []
    for m, k, n in SHAPES:
        a = qb.array(rng.standard_normal((m, k)).astype(np.float32))
        b = qb.array(rng.standard_normal((k, n)).astype(np.float32))
        f = qb.jit(lambda a, b: a @ b)
        f(a, b)
        ts = []
        for _ in range(300):
            t = time.perf_counter()
            f(a, b)
            ts.append(time.perf_counter() - t)
        out.append(f"{m}x{k}x{n} {min(ts) * 1e6:.1f}")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["first", "cached", "products", "hot", "_products", "_first"])
    ap.add_argument("--kind", default="rowsum", choices=["rowsum", "ew", "trivial", "softmax", "layernorm"])
    ap.add_argument("--count", type=int, default=20)
    args = ap.parse_args()
    if args.mode == "hot":
        os.environ["QUABLA_CACHE"] = "0"
        hot_first_calls()
        return
    if args.mode == "_products":
        print(" | ".join(products()))
        return
    if args.mode == "_first":
        first_calls(args.kind, args.count)
        return
    if args.mode == "products":
        print("a @ b f32, min per call in us (m x k x n); QUABLA_NUM_THREADS=1 against the default")
        for _ in range(2):
            for threads in ("1", ""):
                env = dict(os.environ, QUABLA_CACHE="0")
                env.pop("QUABLA_NUM_THREADS", None)
                if threads:
                    env["QUABLA_NUM_THREADS"] = threads
                r = subprocess.run([sys.executable, __file__, "_products"], env=env, capture_output=True, text=True, check=True)
                print(f"{'one thread' if threads else 'default':>10}: {r.stdout.strip()}", flush=True)
        return
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, QUABLA_CACHE_DIR=cache)
        env.pop("QUABLA_CACHE", None)
        cmd = [sys.executable, __file__, "_first", "--kind", args.kind, "--count", str(args.count)]
        if args.mode == "cached":
            subprocess.run(cmd, env=env, capture_output=True, check=True)
        subprocess.run(cmd, env=env, check=True)


if __name__ == "__main__":
    main()
