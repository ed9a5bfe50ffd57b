"""First call of an MLP loss+grad step in a fresh process, cold and from the persistent
compile cache (issue 17), in the same run.

    python bench/compile_cache.py [--reps 3]

Each measurement is a new interpreter (so nothing is cached in memory): `cold` with
QUABLA_CACHE=0, `warm` against a cache directory a first process filled. Prints min and
median of the first-call times and their ratio. Measured (2 cores, shared): cold 760-1100 ms,
warm 70-78 ms (the rest of the warm call is tracing and Quabla's passes).
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

PROGRAM = r"""
import time, numpy as np, quabla as qb
t = time.perf_counter()
def loss(w1, w2, x, y):
    return qb.mean((qb.tanh(x @ w1) @ w2 - y) ** 2)
g = qb.jit(qb.value_and_grad(loss, argnums=(0, 1)))
rng = np.random.default_rng(0)
args = [qb.array(rng.normal(size=s).astype(np.float32)) for s in [(64, 128), (128, 10), (256, 64), (256, 10)]]
v, _ = g(*args)
float(v)
print(time.perf_counter() - t)
"""


def first_call(env):
    r = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, check=True)
    return float(r.stdout.strip())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        cold_env = dict(os.environ, QUABLA_CACHE="0")
        warm_env = dict(os.environ, QUABLA_CACHE_DIR=d)
        warm_env.pop("QUABLA_CACHE", None)
        first_call(warm_env)  # fills the cache
        cold = [first_call(cold_env) for _ in range(a.reps)]
        warm = [first_call(warm_env) for _ in range(a.reps)]
    f = lambda xs: f"min {1e3 * min(xs):7.1f} ms  median {1e3 * statistics.median(xs):7.1f} ms"
    print(f"MLP step first call, cold (QUABLA_CACHE=0): {f(cold)}")
    print(f"MLP step first call, warm (cache hit):      {f(warm)}")
    print(f"cold / warm (min): {min(cold) / min(warm):.1f}x")


if __name__ == "__main__":
    main()
