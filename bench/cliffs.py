"""Performance cliffs: ordinary jitted programs, Quabla against JAX 0.10.2 in the same process.

    python bench/cliffs.py [--only matmul,reduce,window,index,sort,random,misc,linalg] [--rounds 2]

Each row is one function written twice (``qb`` and ``jnp``), checked against each other once
(relative max error printed), then timed timeit-style (``compare_jax.timeit_call``),
``--rounds`` times alternating Quabla and JAX; the row keeps the best minimum of each. Ratios
are Quabla / JAX (below 1: Quabla faster); a row above 1.5 is flagged. ``first`` is the ratio
of the first calls (trace + compile + run; Quabla's compile cache is pointed at a fresh
directory, so they are cold). JAX runs with x64 enabled (inputs carry their dtypes). The
rows are programs that once fell off a fast path (issue 13, "no cliffs"): cumulative sums,
pooling and its gradient, top_k, vector-matrix products, any/all, argmax, random numbers,
row updates; and neighbours of the main table (bench/cpu_table.py) that did not.
"""
import argparse
import os
import sys
import tempfile
import time

os.environ.setdefault("QUABLA_CACHE_DIR", tempfile.mkdtemp(prefix="quabla-cliffs-"))

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_jax import block, timeit_call  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import quabla as qb  # noqa: E402

jax.config.update("jax_enable_x64", True)
RNG = np.random.default_rng(0)


def r(*s, dt=np.float32):
    return RNG.standard_normal(s).astype(dt)


def ri(*s, dt=np.int32):
    return RNG.integers(-5, 5, s).astype(dt)


def mm(a, b):
    return a @ b


def case(name, f_q, f_j, *args, rounds=2):
    fq, fj = qb.jit(f_q), jax.jit(f_j)
    qa = [qb.asarray(a) for a in args]
    ja = [jnp.asarray(a) for a in args]
    t0 = time.perf_counter()
    rq = fq(*qa)
    block(rq)
    tq0 = time.perf_counter() - t0
    t0 = time.perf_counter()
    rj = fj(*ja)
    block(rj)
    tj0 = time.perf_counter() - t0
    # Pytrees of outputs compare leaf by leaf, flattened into one vector.
    a = np.concatenate([np.asarray(v, dtype=np.float64).ravel() for v in jax.tree_util.tree_leaves(rq)])
    b = np.concatenate([np.asarray(v, dtype=np.float64).ravel() for v in jax.tree_util.tree_leaves(rj)])
    fin = np.isfinite(b)
    err = float(np.max(np.abs(a[fin] - b[fin])) / (np.max(np.abs(b[fin])) + 1e-30)) if b[fin].size else 0.0
    best_q = best_j = float("inf")
    for _ in range(rounds):
        best_q = min(best_q, timeit_call(lambda: block(fq(*qa)), repeats=10, max_total=2.0)[0])
        best_j = min(best_j, timeit_call(lambda: block(fj(*ja)), repeats=10, max_total=2.0)[0])
    flag = "  <== cliff" if best_q / best_j > 1.5 else ""
    print(f"{name:44s} qb {best_q * 1e6:10.1f} us  jax {best_j * 1e6:10.1f} us  ratio {best_q / best_j:5.2f}  first {tq0 / tj0:5.2f} ({tq0 * 1e3:5.1f}/{tj0 * 1e3:5.1f} ms)  err {err:.1e}{flag}", flush=True)


def matmul():
    case("A^T B 512", lambda a, b: a.T @ b, lambda a, b: a.T @ b, r(512, 512), r(512, 512))
    case("A^T B^T 512", lambda a, b: a.T @ b.T, lambda a, b: a.T @ b.T, r(512, 512), r(512, 512))
    case("int32 512^3", mm, mm, ri(512, 512), ri(512, 512))
    case("f64 1000^3", mm, mm, r(1000, 1000, dt=np.float64), r(1000, 1000, dt=np.float64))
    case("f32 333x777x555", mm, mm, r(333, 777), r(777, 555))
    case("vector-matrix 1x1024 @ 1024x1024", mm, mm, r(1, 1024), r(1024, 1024))
    # Single products of 17 to 31 columns: the short kernel on blocks of rows (tiling two_vector_gemm).
    case("f32 512x512x17", mm, mm, r(512, 512), r(512, 17))
    case("f32 256x784x24", mm, mm, r(256, 784), r(784, 24))
    case("f64 512x512x12", mm, mm, r(512, 512, dt=np.float64), r(512, 12, dt=np.float64))
    # Batched products of 17 to 31 columns call the runtime (tiling BATCHED_MIN_COLUMNS): were 539 / 786 us.
    case("batched 256 x 29^3", mm, mm, r(256, 29, 29), r(256, 29, 29))
    case("batched 256 x 31^3", mm, mm, r(256, 31, 31), r(256, 31, 31))
    case("matrix-vector 1024x1024 @ 1024x1", mm, mm, r(1024, 1024), r(1024, 1))
    case("matrix-vector 2048x2048 @ 2048", mm, mm, r(2048, 2048), r(2048))
    case("vector-matrix 2048 @ 2048x2048", mm, mm, r(2048), r(2048, 2048))
    case("f64 256x300x200", mm, mm, r(256, 300, dt=np.float64), r(300, 200, dt=np.float64))
    case("batched 64x64x64x64", mm, mm, r(64, 64, 64), r(64, 64, 64))
    def attention(np_, softmax):
        def f(q, k, v):
            return np_.einsum("bhqk,bhkd->bhqd", softmax(np_.einsum("bhqd,bhkd->bhqk", q, k) / 8.0, axis=-1), v)

        return f

    qkv = [r(8, 8, 256, 64) for _ in range(3)]
    case("attention 8x8x256x64", attention(qb, qb.nn.softmax), attention(jnp, jax.nn.softmax), *qkv)
    case("attention gradient", qb.grad(lambda *a: attention(qb, qb.nn.softmax)(*a).sum(), argnums=(0, 1, 2)), jax.grad(lambda *a: attention(jnp, jax.nn.softmax)(*a).sum(), argnums=(0, 1, 2)), *qkv)
    case("attention q k^T 8x4x64x16", lambda q, k: qb.einsum("bhqd,bhkd->bhqk", q, k), lambda q, k: jnp.einsum("bhqd,bhkd->bhqk", q, k), r(8, 4, 64, 16), r(8, 4, 64, 16))
    case("tanh(x) @ W 4x512x512", lambda x, w: qb.tanh(x) @ w, lambda x, w: jnp.tanh(x) @ w, r(4, 512), r(512, 512))
    case("short product 12x512x512", mm, mm, r(12, 512), r(512, 512))
    case("short product 4x2048x2048", mm, mm, r(4, 2048), r(2048, 2048))
    case("f32 1536^3 (two column blocks)", mm, mm, r(1536, 1536), r(1536, 1536))
    case("Gram x^T x of 5000x100", lambda x: x.T @ x, lambda x: x.T @ x, r(5000, 100))
    case("vmap(m @ v) 1000 x (64x64 @ 64)", qb.vmap(lambda m, v: m @ v), jax.vmap(lambda m, v: m @ v), r(1000, 64, 64), r(1000, 64))
    case("vmap(m @ v) 1000 x (16x16 @ 16)", qb.vmap(lambda m, v: m @ v), jax.vmap(lambda m, v: m @ v), r(1000, 16, 16), r(1000, 16))
    case("x.T @ g 1000x10 (transposed matrix-vector)", lambda x, g: x.T @ g, lambda x, g: x.T @ g, r(1000, 10), r(1000))
    case("grad of (x @ w).sum(), x 4096x1024", qb.grad(lambda w, x: (x @ w).sum()), jax.grad(lambda w, x: (x @ w).sum()), r(1024), r(4096, 1024))
    case("long K 64x10000x64", mm, mm, r(64, 10000), r(10000, 64))
    case("vector-matrix 4096 @ 4096x4096", mm, mm, r(4096), r(4096, 4096))
    case("y @ x.T 4096 by 4096x4096", lambda y, x: y @ x.T, lambda y, x: y @ x.T, r(4096), r(4096, 4096))
    case("thin K 1000x10x1000", mm, mm, r(1000, 10), r(10, 1000))
    case("thin K 1024x4x1024", mm, mm, r(1024, 4), r(4, 1024))
    case("batched 256 x 8x8x8", mm, mm, r(256, 8, 8), r(256, 8, 8))
    case("batched 32 x 4x64x4", mm, mm, r(32, 4, 64), r(32, 64, 4))
    case("dot 1e6", mm, mm, r(1000000), r(1000000))
    # Dots with no free dims (a fused sum of the product) and no contracting dims (a product of broadcasts).
    case("einsum ij,ij->i 4096x256", lambda a, b: qb.einsum("ij,ij->i", a, b), lambda a, b: jnp.einsum("ij,ij->i", a, b), r(4096, 256), r(4096, 256))
    case("vmap(dot) 1000 x 256", qb.vmap(qb.dot), jax.vmap(jnp.dot), r(1000, 256), r(1000, 256))
    case("gradient of einsum bij,bij->b 64x128x128", qb.grad(lambda a, b: qb.einsum("bij,bij->b", a, b).sum()), jax.grad(lambda a, b: jnp.einsum("bij,bij->b", a, b).sum()), r(64, 128, 128), r(64, 128, 128))
    case("outer einsum i,j->ij 2048", lambda a, b: qb.einsum("i,j->ij", a, b), lambda a, b: jnp.einsum("i,j->ij", a, b), r(2048), r(2048))
    case("batched outer tanh(a) b 128x32x64", lambda a, b: qb.einsum("bi,bj->bij", qb.tanh(a), b), lambda a, b: jnp.einsum("bi,bj->bij", jnp.tanh(a), b), r(128, 32), r(128, 64))

    def mlp(np_, p, x, y):
        return ((np_.tanh(x @ p[0] + p[1]) @ p[2] - y) ** 2).sum()

    def per_example(np_, g, vmap):
        return lambda w1, b1, w2, x, y: vmap(g(lambda p, x, y: mlp(np_, p, x, y)), (None, 0, 0))((w1, b1, w2), x, y)[0]

    # Wide logits: exp underflows to subnormals, flushed to zero as XLA does (fpmode.rs).
    sr = lambda np_, nn, g, vmap: vmap(g(lambda w, x: np_.sum(nn.log_softmax(x @ w))), in_axes=(None, 0))
    case("per-example grads of a 784-10 softmax regression, 256", sr(qb, qb.nn, qb.grad, qb.vmap), sr(jnp, jax.nn, jax.grad, jax.vmap), r(784, 10), r(256, 784))
    case("per-example grads vmap(grad) 128 of 32-64-4", per_example(qb, qb.grad, qb.vmap), per_example(jnp, jax.grad, jax.vmap), r(32, 64), r(64), r(64, 4), r(128, 32), r(128, 4))


def reduce():
    x = r(1024, 1024)
    case("sum axis0 1024^2", lambda x: x.sum(0), lambda x: x.sum(0), x)
    case("max axis1 1024^2", lambda x: x.max(1), lambda x: x.max(1), x)
    case("max 1024^2", lambda x: x.max(), lambda x: x.max(), x)
    case("sum of squares 4096^2", lambda x: (x * x).sum(), lambda x: (x * x).sum(), r(4096, 4096))
    case("max axis0 100000x64", lambda x: x.max(0), lambda x: x.max(0), r(100000, 64))
    # Stop 58: a prime number of rows (reduce.rs peeled_split) and rows of 3 (short_columns:
    # 16 rows side by side); was 9.8 / 17.3 / 11.8 / 4.0 ms.
    xp = r(1000003, 3)
    case("sum axis0 1000003x3 (prime rows of 3)", lambda x: x.sum(0), lambda x: x.sum(0), xp)
    case("max axis0 1000003x3", lambda x: x.max(0), lambda x: x.max(0), xp)
    case("softmax axis0 1000003x3", lambda x: qb.nn.softmax(x, 0), lambda x: jax.nn.softmax(x, 0), xp)
    case("NHWC max over (1, 2) 32x224x224x3", lambda x: x.max((1, 2)), lambda x: x.max((1, 2)), r(32, 224, 224, 3))
    # Full reductions read flat, float max/min keys in the split's body (reduce.rs keyed_row),
    # computed short rows kept as the partials' columns: were 370 / 324 / 252 / 375 us.
    x16 = r(100000, 16)
    case("sum of 100000x16", lambda x: x.sum(), lambda x: x.sum(), x16)
    case("max of 100000x16", lambda x: x.max(), lambda x: x.max(), x16)
    case("max of 1000003x3", lambda x: x.max(), lambda x: x.max(), xp)
    case("sum of (x * x) 100000x16", lambda x: (x * x).sum(), lambda x: (x * x).sum(), x16)
    # The kept trailing loops of a reduction over middle dims made one (runtime flat_loops): was 204 us.
    case("sum axis1 17x33x65x9", lambda x: x.sum(1), lambda x: x.sum(1), r(17, 33, 65, 9))
    case("sum axis0 100000x64", lambda x: x.sum(0), lambda x: x.sum(0), r(100000, 64))
    case("sum axis0 4096^2", lambda x: x.sum(0), lambda x: x.sum(0), r(4096, 4096))
    x3 = r(256, 256, 64)
    case("max axis (1,2) 256x256x64", lambda x: x.max((1, 2)), lambda x: x.max((1, 2)), x3)
    case("sum axis (1,2) 256x256x64", lambda x: x.sum((1, 2)), lambda x: x.sum((1, 2)), x3)
    case("max axis 2 256x256x64 (rows of 64)", lambda x: x.max(2), lambda x: x.max(2), x3)
    case("max axis (0,1) 256x256x64", lambda x: x.max((0, 1)), lambda x: x.max((0, 1)), x3)
    case("argmax axis1 1024^2", lambda x: qb.argmax(x, 1), lambda x: jnp.argmax(x, 1), x)
    case("argmax axis0 1024^2", lambda x: qb.argmax(x, 0), lambda x: jnp.argmax(x, 0), x)
    # argmax as two reductions (reduce.rs arg_by_reductions): was 23.5 ms / 3.3 ms / 1.45 ms.
    case("argmax axis0 1000003x3 (short columns)", lambda x: qb.argmax(x, 0), lambda x: jnp.argmax(x, 0), xp)
    case("argmax axis1 3x1000003 (long rows)", lambda x: qb.argmax(x, 1), lambda x: jnp.argmax(x, 1), xp.T.copy())
    case("argmax of 1e6", lambda x: qb.argmax(x), lambda x: jnp.argmax(x), r(1000000))
    case("any(x > 3) 1e6", lambda x: qb.any(x > 3.0), lambda x: jnp.any(x > 3.0), r(1000000))
    case("all(x > -9) 1e6", lambda x: qb.all(x > -9.0), lambda x: jnp.all(x > -9.0), r(1000000))
    case("cumsum axis1 1024^2", lambda x: qb.cumsum(x, 1), lambda x: jnp.cumsum(x, 1), x)
    case("cumsum axis0 1024^2", lambda x: qb.cumsum(x, 0), lambda x: jnp.cumsum(x, 0), x)
    # One slice's columns shared by the threads (reduce_window.rs lower_scan): was 1228 us.
    case("cumsum axis0 3x1000000", lambda x: qb.cumsum(x, 0), lambda x: jnp.cumsum(x, 0), r(3, 1000000))
    case("cummax axis1 1024^2", lambda x: qb.cummax(x, 1), lambda x: jax.lax.cummax(x, 1), x)
    case("cumprod axis1 1024^2", lambda x: qb.cumprod(x * 0.001 + 1, 1), lambda x: jnp.cumprod(x * 0.001 + 1, 1), x)
    case("softmax of 65536 rows of 64", lambda x: qb.nn.softmax(x, -1), lambda x: jax.nn.softmax(x, -1), r(65536, 64))
    case("max axis1 of 65536x16", lambda x: x.max(1), lambda x: x.max(1), r(65536, 16))
    x10 = r(65536, 10)
    case("max axis1 65536x10 (10 classes)", lambda x: x.max(1), lambda x: x.max(1), x10)
    case("argmax axis1 65536x10", lambda x: qb.argmax(x, 1), lambda x: jnp.argmax(x, 1), x10)
    case("sum axis1 65536x8", lambda x: x.sum(1), lambda x: x.sum(1), r(65536, 8))
    case("log_softmax 65536x10", lambda x: qb.nn.log_softmax(x, -1), lambda x: jax.nn.log_softmax(x, -1), x10)
    case("softmax 65536x10", lambda x: qb.nn.softmax(x, -1), lambda x: jax.nn.softmax(x, -1), x10)
    case("max axis1 65536x8 / 65536x12", lambda x, y: (x.max(1), y.max(1)), lambda x, y: (x.max(1), y.max(1)), r(65536, 8), r(65536, 12))
    case("sum axis1 65536x16", lambda x: x.sum(1), lambda x: x.sum(1), r(65536, 16))
    case("(x * x).max(1) 65536x10 (a producer)", lambda x: (x * x).max(1), lambda x: (x * x).max(1), x10)
    case("max axis1 f64 65536x10", lambda x: x.max(1), lambda x: x.max(1), r(65536, 10, dt=np.float64))
    case("log of keepdims sums [65536, 1]", lambda x: qb.log(x), lambda x: jnp.log(x), abs(r(65536, 1)) + 0.5)
    # Sums over a short last dim of a computed value: the sum of its columns (fold.rs summed_columns).
    case("sqrt(sum(x * x, -1)) 1e6x2", lambda x: qb.sqrt((x * x).sum(-1)), lambda x: jnp.sqrt((x * x).sum(-1)), r(1000000, 2))
    case("tanh(x).reshape(4096, 512, 2).sum(-1)", lambda x: qb.tanh(x).reshape(4096, 512, 2).sum(-1), lambda x: jnp.tanh(x).reshape(4096, 512, 2).sum(-1), r(4096, 1024))
    # After fold's broadcast_chain made the repeats one broadcast, its gradient's two sums
    # (364 us, JAX 117) are one (chains.rs reduction_chain) and its columns (summed_columns).
    case("gradient of a 2-D upsampling (repeat 2, 2) 512^2", qb.grad(lambda x: (qb.repeat(qb.repeat(x, 2, 0), 2, 1) ** 2).sum()), jax.grad(lambda x: (jnp.repeat(jnp.repeat(x, 2, 0), 2, 1) ** 2).sum()), r(512, 512))
    # Sums over a short dim of an elementwise value: sums of its slices, no [N, M, k] value.
    case("k-means squared distances 100000x8 to 16 centres", lambda x, c: qb.argmin(((x[:, None, :] - c[None]) ** 2).sum(-1), 1), lambda x, c: jnp.argmin(((x[:, None, :] - c[None]) ** 2).sum(-1), 1), r(100000, 8), r(16, 8))
    case("pairwise squared distances 1024x8", lambda p: ((p[:, None, :] - p[None, :, :]) ** 2).sum(-1), lambda p: ((p[:, None, :] - p[None, :, :]) ** 2).sum(-1), r(1024, 8))
    case("norm of rows of 3 (points)", lambda p: p / qb.linalg.norm(p, axis=-1, keepdims=True), lambda p: p / jnp.linalg.norm(p, axis=-1, keepdims=True), r(65536, 3))
    case("logsumexp axis1", lambda x: qb.logsumexp(x, 1), lambda x: jax.nn.logsumexp(x, 1), x)
    # Row-local runs on arrays past the caches, lowered in blocks of rows (row_blocks.rs).
    x64 = r(65536, 64)
    case("log_softmax 65536x64 (row blocks)", lambda x: qb.nn.log_softmax(x, -1), lambda x: jax.nn.log_softmax(x, -1), x64)
    case("softmax 4096x1024 (row blocks)", lambda x: qb.nn.softmax(x, -1), lambda x: jax.nn.softmax(x, -1), r(4096, 1024))
    ln = lambda np_: lambda x, g, b: (x - x.mean(-1, keepdims=True)) / np_.sqrt(x.var(-1, keepdims=True) + 1e-5) * g + b
    case("layernorm 16384x256 (row blocks)", ln(qb), ln(jnp), r(16384, 256), r(256), r(256))
    # Rows over the leading dims of 3-D and 4-D arrays (a row along dim 0 alone is too long).
    lng = lambda np_: lambda x, w: np_.sum((x - x.mean(-1, keepdims=True)) / np_.sqrt(x.var(-1, keepdims=True) + 1e-5) * w)
    case("layernorm gradient [64, 128, 256] (row blocks over 2 dims)", qb.grad(lng(qb)), jax.grad(lng(jnp)), r(64, 128, 256), r(64, 128, 256))
    case("softmax [4, 8, 256, 256] (row blocks over 3 dims)", lambda x: qb.nn.softmax(x, -1), lambda x: jax.nn.softmax(x, -1), r(4, 8, 256, 256))
    case("x / row norms 65536x64 (row blocks)", lambda x: x / qb.sqrt((x * x).sum(1, keepdims=True)), lambda x: x / jnp.sqrt((x * x).sum(1, keepdims=True)), x64)
    case("softmax 65536x32 (row blocks)", lambda x: qb.nn.softmax(x, -1), lambda x: jax.nn.softmax(x, -1), r(65536, 32))
    case("softmax 262144x10 (short rows: op by op)", lambda x: qb.nn.softmax(x, -1), lambda x: jax.nn.softmax(x, -1), r(262144, 10))
    mask = np.tril(np.ones((128, 128), bool))
    case("causal-masked softmax 8x4x128x128 (exp of -1e9)", lambda s: qb.nn.softmax(qb.where(mask, s, -1e9), -1), lambda s: jax.nn.softmax(jnp.where(mask, s, -1e9), -1), r(8, 4, 128, 128))
    ce = lambda nn: lambda x: -nn.log_softmax(x, -1)[:, 0].sum()
    case("cross-entropy gradient 65536x10", qb.grad(ce(qb.nn)), jax.grad(ce(jax.nn)), x10)


def window():
    x = r(8, 64, 64, 32)
    pool = lambda x: jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")  # noqa: E731
    case("max pooling 2x2/2 8x64x64x32", lambda x: qb.max_pool(x, (2, 2), strides=(2, 2)), pool, x)
    case("max pooling gradient", qb.grad(lambda x: qb.max_pool(x, (2, 2), strides=(2, 2)).sum()), jax.grad(lambda x: pool(x).sum()), x)
    case("avg pooling 3x3 SAME 8x32x32x64", lambda x: qb.avg_pool(x, (3, 3), strides=(1, 1), padding="SAME"), lambda x: jax.lax.reduce_window(x, 0.0, jax.lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME") / 9, r(8, 32, 32, 64))
    dn1 = ("NWC", "WIO", "NWC")
    case("conv1d NWC 16x1024x64, 5 taps, 64 -> 64", lambda x, k: qb.conv_general_dilated(x, k, (1,), "SAME", dimension_numbers=dn1), lambda x, k: jax.lax.conv_general_dilated(x, k, (1,), "SAME", dimension_numbers=dn1), r(16, 1024, 64), r(5, 64, 64))
    case("conv1d NCW 16x64x1024, 5 taps (lax.conv's layout)", lambda x, k: qb.conv_general_dilated(x, k, (1,), "SAME"), lambda x, k: jax.lax.conv_general_dilated(x, k, (1,), "SAME"), r(16, 64, 1024), r(64, 64, 5))
    case("conv2d NCHW 16x32x64x64 * 64x32x3x3 (channels-last inside)", lambda x, k: qb.conv_general_dilated(x, k, (1, 1), "SAME"), lambda x, k: jax.lax.conv_general_dilated(x, k, (1, 1), "SAME"), r(16, 32, 64, 64), r(64, 32, 3, 3))
    c1 = lambda cv, dn: lambda x, k: (cv(x, k, (1,), "SAME", dimension_numbers=dn) ** 2).sum()  # noqa: E731
    case("conv1d NWC kernel gradient 16x1024x64, 5 taps", qb.grad(c1(qb.conv_general_dilated, ("NWC", "WIO", "NWC")), argnums=1), jax.grad(c1(jax.lax.conv_general_dilated, ("NWC", "WIO", "NWC")), argnums=1), r(16, 1024, 64), r(5, 64, 64))
    case("conv1d NCW input gradient 16x64x1024, 5 taps", qb.grad(c1(qb.conv_general_dilated, None)), jax.grad(c1(jax.lax.conv_general_dilated, None)), r(16, 64, 1024), r(64, 64, 5))
    # A dilated window, one runtime product per tap accumulating (convolution.rs windowed;
    # 437 us with the patch copy, JAX 470-493).
    case("causal conv1d NWC 8x1024x32, 3 taps, dilation 4", lambda x, w: qb.conv_general_dilated(x, w, (1,), [(8, 0)], rhs_dilation=(4,), dimension_numbers=("NWC", "WIO", "NWC")), lambda x, w: jax.lax.conv_general_dilated(x, w, (1,), [(8, 0)], rhs_dilation=(4,), dimension_numbers=("NWC", "WIO", "NWC")), r(8, 1024, 32), r(3, 32, 32) * 0.1)
    case("conv2d NCHW 8x64x32x32 * 128x64x3x3", lambda x, k: qb.conv_general_dilated(x, k, (1, 1), "SAME"), lambda x, k: jax.lax.conv_general_dilated(x, k, (1, 1), "SAME"), r(8, 64, 32, 32), r(128, 64, 3, 3))
    case("conv2d NHWC 8x32x32x16 * 3x3x16x32", lambda x, k: qb.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")), lambda x, k: jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")), r(8, 32, 32, 16), r(3, 3, 16, 32))

    # Stop 53: qb.conv_transpose (a decoder's upsampling; lhs_dilation of the convolution).
    case("conv_transpose 2x NHWC 8x32x32x64 -> 32", lambda x, w: qb.conv_transpose(x, w, (2, 2), "SAME"), lambda x, w: jax.lax.conv_transpose(x, w, (2, 2), "SAME"), r(8, 32, 32, 64), r(3, 3, 64, 32) * 0.1)

    def conv_nhwc(np_, x, w):
        return (qb.conv_general_dilated if np_ is qb else jax.lax.conv_general_dilated)(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def resblock(np_, relu):
        return lambda w1, w2, x: (relu(conv_nhwc(np_, relu(conv_nhwc(np_, x, w1)), w2) + x) ** 2).sum()

    # Open (stop 52): 1.13-1.15. Each convolution is as fast as JAX's without its output's
    # page faults; the generated per-image products run at ~57% of a core's peak.
    res = (r(3, 3, 64, 64) * 0.05, r(3, 3, 64, 64) * 0.05, r(16, 32, 32, 64))
    case("ResNet block forward 16x32x32x64 (two 3x3 convs)", resblock(qb, qb.nn.relu), resblock(jnp, jax.nn.relu), *res)

    def wavenet(np_, tanh):
        def f(w0, w1, w2, w3, x):
            h = x
            for i, w in enumerate((w0, w1, w2, w3)):
                conv = qb.conv_general_dilated if np_ is qb else jax.lax.conv_general_dilated
                h = tanh(conv(h, w, (1,), [(2 * 2 ** i, 0)], rhs_dilation=(2 ** i,), dimension_numbers=("NWC", "WIO", "NWC"))) + h
            return (h ** 2).sum()

        return f

    # Their kernel gradients (a stride of the dilation) as one runtime product per tap
    # (convolution.rs windowed_kernel_gradient; 5.5 ms with the patch matrix, JAX 5.1).
    wn = [r(3, 32, 32) * 0.1 for _ in range(4)] + [r(8, 1024, 32)]
    case("gradient of 4 dilated causal layers 8x1024x32", qb.grad(wavenet(qb, qb.tanh), argnums=(0, 1, 2, 3)), jax.grad(wavenet(jnp, jnp.tanh), argnums=(0, 1, 2, 3)), *wn)


def index():
    x = r(1024, 1024)
    i = RNG.integers(-1024, 1024, 64).astype(np.int32)
    case("x.at[64 rows].set 1024^2", lambda x, i: x.at[i].set(0.0), lambda x, i: x.at[i].set(0.0), x, i)
    # Updates of a box (no index arrays): the box's slice combined and written back with one
    # dynamic_update_slice; a parameter's copy on the threads.
    xl = r(4096, 1024)
    case("x.at[:, 3].set(0) 4096x1024 (a column box)", lambda x: x.at[:, 3].set(0.0), lambda x: x.at[:, 3].set(0.0), xl)
    case("x.at[:, i].add(1) 4096x1024, i traced", lambda x, i: x.at[:, i].add(1.0), lambda x, i: x.at[:, i].add(1.0), xl, np.int64(9))
    case("x.at[::2].set(0) 4096x1024 (a stepped box)", lambda x: x.at[::2].set(0.0), lambda x: x.at[::2].set(0.0), xl)
    case("x.at[:, :, 0].set(0) 64x256x256", lambda x: x.at[:, :, 0].set(0.0), lambda x: x.at[:, :, 0].set(0.0), r(64, 256, 256))
    # Index arrays beside slices: positions from the indices, not a gather of an iota.
    cols = np.arange(0, 1024, 16).astype(np.int32)
    case("x.at[:, 64 cols].set(0) 4096x1024", lambda x, i: x.at[:, i].set(0.0), lambda x, i: x.at[:, i].set(0.0), xl, cols)
    case("x.at[ar, ar].set(0) (a diagonal) 4096x1024", lambda x, i: x.at[i, i].set(0.0), lambda x, i: x.at[i, i].set(0.0), xl, np.arange(1024).astype(np.int32))
    # Stop 53: lax.associative_scan (a parallel scan) of a linear recurrence.
    aff = lambda l, r_: (r_[0] * l[0], r_[0] * l[1] + r_[1])  # noqa: E731
    case("associative_scan linear recurrence 4096x256", lambda a, b: qb.associative_scan(aff, (a, b))[1], lambda a, b: jax.lax.associative_scan(aff, (a, b))[1], r(4096, 256) * 0.5 + 0.5, r(4096, 256))
    # Stop 53: searching and counting (a binary search of every value at once; row scatters).
    case("searchsorted 1e5 in 1e4", lambda a, v: qb.searchsorted(a, v), lambda a, v: jnp.searchsorted(a, v), np.sort(r(10000)), r(100000))
    case("histogram 1e6, 50 bins", lambda x: qb.histogram(x, bins=50, range=(0, 1))[0], lambda x: jnp.histogram(x, bins=50, range=(0, 1))[0], r(1000000))
    case("interp 1e5 on 1000 points", lambda x, xp, fp: qb.interp(x, xp, fp), lambda x, xp, fp: jnp.interp(x, xp, fp), r(100000), np.sort(r(1000)), r(1000))
    # Segment max / min / product as whole rows (stop 53: 7.0 ms element by element, JAX 1.0).
    seg, rows = np.random.randint(0, 1000, size=100000).astype(np.int32), r(100000, 64)
    case("x.at[seg].max(rows) 1e5x64 -> 1000 rows", lambda d, s: qb.full((1000, 64), -np.inf, d.dtype).at[s].max(d), lambda d, s: jnp.full((1000, 64), -jnp.inf, d.dtype).at[s].max(d), rows, seg)
    case("x.at[seg].multiply(rows)", lambda d, s: qb.ones((1000, 64), d.dtype).at[s].multiply(d), lambda d, s: jnp.ones((1000, 64), d.dtype).at[s].multiply(d), rows * 0.001 + 1, seg)
    case("x[:, 64 cols] 4096x1024 (gathered in place)", lambda x, i: x[:, i], lambda x, i: x[:, i], xl, cols)
    case("x[i, j] 1e5 of 4096x1024 (reads split)", lambda x, i, j: x[i, j], lambda x, i, j: x[i, j], xl, RNG.integers(0, 4096, 100000).astype(np.int32), RNG.integers(0, 1024, 100000).astype(np.int32))
    case("take_along_axis 8 of 1024 per row, 4096 rows", lambda x, i: qb.take_along_axis(x, i, 1), lambda x, i: jnp.take_along_axis(x, i, 1), xl, RNG.integers(0, 1024, (4096, 8)).astype(np.int32))
    x3 = r(256, 256, 64)
    case("transpose (2,0,1) 256x256x64", lambda x: qb.transpose(x, (2, 0, 1)), lambda x: jnp.transpose(x, (2, 0, 1)), x3)
    # Stop 58: matrices of one tile row (transpose.rs splits tiles, not tile rows): 361 us.
    case("transpose (0,2,1) 16x64x1024", lambda x: qb.transpose(x, (0, 2, 1)), lambda x: jnp.transpose(x, (0, 2, 1)), r(16, 64, 1024))
    case("transpose (0,2,1) 256x256x64", lambda x: qb.transpose(x, (0, 2, 1)), lambda x: jnp.transpose(x, (0, 2, 1)), x3)
    case("transpose (1,2,0) 256x256x64", lambda x: qb.transpose(x, (1, 2, 0)), lambda x: jnp.transpose(x, (1, 2, 0)), x3)
    case("x.T f64 65536x32", lambda x: x.T, lambda x: x.T, r(65536, 32, dt=np.float64))
    # fold.rs broadcast_chain: one broadcast of x between reshapes (was 677 us against JAX 453).
    case("nearest 2x upsampling NHWC 16x32x32x64", lambda x: qb.repeat(qb.repeat(x, 2, 1), 2, 2), lambda x: jnp.repeat(jnp.repeat(x, 2, 1), 2, 2), r(16, 32, 32, 64))
    case("flip + crop augment 64x64x64x3 (the gather of the slice)", lambda x: qb.flip(x, 2)[:, 4:60, 4:60, :], lambda x: jnp.flip(x, 2)[:, 4:60, 4:60, :], r(64, 64, 64, 3))
    case("x[::2] 4096x1024", lambda x: x[::2], lambda x: x[::2], r(4096, 1024))
    case("x[::-1, ::-1] 1024^2", lambda x: x[::-1, ::-1], lambda x: x[::-1, ::-1], x)
    case("stack 8 x 256^2", lambda *xs: qb.stack(xs), lambda *xs: jnp.stack(xs), *[r(256, 256) for _ in range(8)])
    case("scatter-add 1e5 into 1e4", lambda v, i: qb.zeros(10000, np.float32).at[i].add(v), lambda v, i: jnp.zeros(10000, np.float32).at[i].add(v), r(100000), RNG.integers(0, 10000, 100000).astype(np.int32))
    case("take 4096 rows of 1024^2", lambda x, i: x[i], lambda x, i: x[i], x, RNG.integers(0, 1024, 4096).astype(np.int32))
    case("gather x[i, j] 1e5", lambda x, i, j: x[i, j], lambda x, i, j: x[i, j], x, RNG.integers(0, 1024, 100000).astype(np.int32), RNG.integers(0, 1024, 100000).astype(np.int32))
    case("tile 256^2 by 4x4", lambda x: qb.tile(x, (4, 4)), lambda x: jnp.tile(x, (4, 4)), r(256, 256))
    case("gradient of sum(pad(x, 1)**2) 4096x1024", qb.grad(lambda x: (qb.pad(x, 1) ** 2).sum()), jax.grad(lambda x: (jnp.pad(x, 1) ** 2).sum()), r(4096, 1024))
    case("gradient of sum(flip(x, 1) * x) 4096x1024", qb.grad(lambda x: (qb.flip(x, 1) * x).sum()), jax.grad(lambda x: (jnp.flip(x, 1) * x).sum()), r(4096, 1024))
    case("gradient of sum(repeat(x, 2, 1)**2) 2048x512", qb.grad(lambda x: (qb.repeat(x, 2, axis=1) ** 2).sum()), jax.grad(lambda x: (jnp.repeat(x, 2, axis=1) ** 2).sum()), r(2048, 512))
    case("gradient of sum(a[:, None] * c[None, :]) 4096 by 1024", qb.grad(lambda a, c: (a[:, None] * c[None, :]).sum()), jax.grad(lambda a, c: (a[:, None] * c[None, :]).sum()), r(4096), r(1024))
    case("tile(x, (4, 1)).reshape(-1) 512^2 (an output with a unit dim)", lambda x: qb.tile(x, (4, 1)).reshape(-1), lambda x: jnp.tile(x, (4, 1)).reshape(-1), r(512, 512))
    case("x[:, None, :] * y 4096x1x1024", lambda x, y: x[:, None, :] * y, lambda x, y: x[:, None, :] * y, r(4096, 1024), r(4096, 1, 1024))
    case("pad 1024^2 by 8", lambda x: qb.pad(x, 8), lambda x: jnp.pad(x, 8), x)
    # Pads of short rows along the last dim (slicing.rs short_rows_pad, narrow_rows).
    case("pad a column before 100000x3 (homogeneous points)", lambda x: qb.pad(x, ((0, 0), (1, 0)), constant_values=1.0), lambda x: jnp.pad(x, ((0, 0), (1, 0)), constant_values=1.0), r(100000, 3))
    case("pad 1000003x3 by 1", lambda x: qb.pad(x, 1), lambda x: jnp.pad(x, 1), r(1000003, 3))
    case("pad 100000x8 by a column each side", lambda x: qb.pad(x, ((0, 0), (1, 1))), lambda x: jnp.pad(x, ((0, 0), (1, 1))), r(100000, 8))
    case("pad 17x33x65x9 by 1", lambda x: qb.pad(x, 1), lambda x: jnp.pad(x, 1), r(17, 33, 65, 9))
    case("pad 100000x30 by a column each side", lambda x: qb.pad(x, ((0, 0), (1, 1))), lambda x: jnp.pad(x, ((0, 0), (1, 1))), r(100000, 30))
    emb, ids = r(50000, 128), RNG.integers(0, 50000, 4096).astype(np.int32)
    # Gradients of slicing: pads of the cotangent (slicing.rs lower_pad, elementwise::padded_reads).
    case("gradient of sum(tanh(x[:, 0])) + sum(x^2) 65536x10", qb.grad(lambda x: qb.tanh(x[:, 0]).sum() + (x * x).sum()), jax.grad(lambda x: jnp.tanh(x[:, 0]).sum() + (x * x).sum()), r(65536, 10))
    case("gradient of sum(x[::2]**2) 4096x1024", qb.grad(lambda x: (x[::2] ** 2).sum()), jax.grad(lambda x: (x[::2] ** 2).sum()), r(4096, 1024))
    case("gradient of sum(x[::2, ::2]**2) 4096x1024", qb.grad(lambda x: (x[::2, ::2] ** 2).sum()), jax.grad(lambda x: (x[::2, ::2] ** 2).sum()), r(4096, 1024))
    case("gradient of sum(x[:, 1:-1]**2) 4096x1024", qb.grad(lambda x: (x[:, 1:-1] ** 2).sum()), jax.grad(lambda x: (x[:, 1:-1] ** 2).sum()), r(4096, 1024))
    cs = lambda nn: lambda x: -nn.log_softmax(x, -1)[:, 3::2].sum()  # noqa: E731
    case("cross-entropy gradient, classes 3::2", qb.grad(cs(qb.nn)), jax.grad(cs(jax.nn)), r(65536, 10))
    # Elementwise ops over pads of computed arrays: boxes between the pads' edges (fold.rs split_pads).
    case("gradient of sum(diff(x, axis=1)**2) 4096x1024", qb.grad(lambda x: (qb.diff(x, axis=1) ** 2).sum()), jax.grad(lambda x: (jnp.diff(x, axis=1) ** 2).sum()), r(4096, 1024))
    lap = lambda m: lambda x: m.sum((x[2:, 1:-1] + x[:-2, 1:-1] + x[1:-1, 2:] + x[1:-1, :-2] - 4 * x[1:-1, 1:-1]) ** 2)  # noqa: E731
    case("gradient of a 5-point stencil's sum of squares 2048^2", qb.grad(lap(qb)), jax.grad(lap(jnp)), r(2048, 2048))
    case("gradient of a 3-D 7-point stencil's sum of squares 128^3", qb.grad(lambda x: qb.sum((x[2:, 1:-1, 1:-1] + x[:-2, 1:-1, 1:-1] + x[1:-1, 2:, 1:-1] + x[1:-1, :-2, 1:-1] + x[1:-1, 1:-1, 2:] + x[1:-1, 1:-1, :-2] - 6 * x[1:-1, 1:-1, 1:-1]) ** 2)), jax.grad(lambda x: jnp.sum((x[2:, 1:-1, 1:-1] + x[:-2, 1:-1, 1:-1] + x[1:-1, 2:, 1:-1] + x[1:-1, :-2, 1:-1] + x[1:-1, 1:-1, 2:] + x[1:-1, 1:-1, :-2] - 6 * x[1:-1, 1:-1, 1:-1]) ** 2)), r(128, 128, 128))
    case("gradient of a second difference's sum of squares 4096x1024", qb.grad(lambda x: qb.sum((x[:, 2:] - 2 * x[:, 1:-1] + x[:, :-2]) ** 2)), jax.grad(lambda x: jnp.sum((x[:, 2:] - 2 * x[:, 1:-1] + x[:, :-2]) ** 2)), r(4096, 1024))
    # Interior pads in the view that splits their dim (fold.rs unfolded_interior).
    case("gradient of sum((x[:, ::2] + x[:, 1::2])**2) 4096x1024", qb.grad(lambda x: qb.sum((x[:, ::2] + x[:, 1::2]) ** 2)), jax.grad(lambda x: jnp.sum((x[:, ::2] + x[:, 1::2]) ** 2)), r(4096, 1024))
    # Concatenations of parameter slices are copy loops (slicing.rs sliced_parameter).
    case("gradient of sum(x[:, :512] * x[:, 512:]) 4096x1024", qb.grad(lambda x: qb.sum(x[:, :512] * x[:, 512:])), jax.grad(lambda x: jnp.sum(x[:, :512] * x[:, 512:])), r(4096, 1024))
    case("gradient of sum(roll(x, 3, 1) * x) 4096x1024", qb.grad(lambda x: (qb.roll(x, 3, axis=1) * x).sum()), jax.grad(lambda x: (jnp.roll(x, 3, axis=1) * x).sum()), r(4096, 1024))
    # A flat computation written to a 2-D output (flat_loops rejoin).
    case("gradient of sum(tanh(x.reshape(-1))) 4096x1024", qb.grad(lambda x: qb.tanh(x.reshape(-1)).sum()), jax.grad(lambda x: jnp.tanh(x.reshape(-1)).sum()), r(4096, 1024))
    case("embedding gradient 4096 of 50000x128", qb.grad(lambda e, i: (e[i] ** 2).sum()), jax.grad(lambda e, i: (e[i] ** 2).sum()), emb, ids)
    emb2 = [r(50000, 128) * 0.1, r(50000, 128) * 0.1, RNG.integers(0, 50000, 4096).astype(np.int32), RNG.integers(0, 50000, 4096).astype(np.int32)]
    # Both gradients scatter into one splat of zeros, now filled in each output (linalg
    # splat_scalar of a broadcast; two 25.6 MB copies before: 5.8 ms against JAX 3.6-4.0).
    case("word2vec gradient, 4096 pairs of two 50000x128 tables", qb.grad(lambda e, c, i, j: -qb.log(qb.sigmoid((e[i] * c[j]).sum(1))).mean(), argnums=(0, 1)), jax.grad(lambda e, c, i, j: -jnp.log(jax.nn.sigmoid((e[i] * c[j]).sum(1))).mean(), argnums=(0, 1)), *emb2)


def sort():
    x = r(1024, 1024)
    case("sort axis1 1024^2", lambda x: qb.sort(x, 1), lambda x: jnp.sort(x, 1), x)
    case("argsort 1e5", lambda x: qb.argsort(x), lambda x: jnp.argsort(x), r(100000))
    case("top_k(8) 1024^2", lambda x: qb.top_k(x, 8)[0], lambda x: jax.lax.top_k(x, 8)[0], x)
    case("top_k(8) gradient 64x1024", qb.grad(lambda x: qb.top_k(x, 8)[0].sum()), jax.grad(lambda x: jax.lax.top_k(x, 8)[0].sum()), r(64, 1024))


def random():
    k = r(1)
    case("random.normal 1e6 f32", lambda k: qb.random.normal(qb.random.PRNGKey(0), (1000000,), dtype=np.float32) + k, lambda k: jax.random.normal(jax.random.PRNGKey(0), (1000000,), dtype=np.float32) + k, k)
    case("random.randint 1e6 int64 in [0, 100)", lambda k: qb.random.randint(qb.random.PRNGKey(2), (1000000,), 0, 100) + k.astype(np.int64), lambda k: jax.random.randint(jax.random.PRNGKey(2), (1000000,), 0, 100) + k.astype(np.int64), k)
    case("random.randint 1e6 int32", lambda k: qb.random.randint(qb.random.PRNGKey(2), (1000000,), 0, 100, dtype=np.int32) + k.astype(np.int32), lambda k: jax.random.randint(jax.random.PRNGKey(2), (1000000,), 0, 100, dtype=np.int32) + k.astype(np.int32), k)
    case("random.uniform 1e6 f32", lambda k: qb.random.uniform(qb.random.PRNGKey(1), (1000000,), dtype=np.float32) + k, lambda k: jax.random.uniform(jax.random.PRNGKey(1), (1000000,), dtype=np.float32) + k, k)


def misc():
    case("erf 1e6", lambda x: qb.erf(x), lambda x: jax.scipy.special.erf(x), r(1000000))
    # Stop 53: elementwise ops of broadcasts on their sources (fold's elementwise_of_broadcasts;
    # 1354 us), the gradient's second product out of the row run (row_blocks::sunk; 11.7 ms).
    mesh = lambda np_: lambda a: (lambda X, Y: np_.sin(X) * np_.cos(Y))(*np_.meshgrid(a, a))  # noqa: E731
    case("meshgrid sin(X) * cos(Y) 1024^2", mesh(qb), mesh(jnp), r(1024))
    case("its gradient (sum)", qb.grad(lambda a: mesh(qb)(a).sum()), jax.grad(lambda a: mesh(jnp)(a).sum()), r(1024))
    # One pointer per buffer at the entry and between chunks (first call 413-458 ms, JAX 86).
    case("100 leaves of 64^2: p - 0.01 g (50 outputs)", lambda *xs: [p - 0.01 * g for p, g in zip(xs[:50], xs[50:])], lambda *xs: [p - 0.01 * g for p, g in zip(xs[:50], xs[50:])], *[r(64, 64) for _ in range(100)])
    case("exp of -90..-100 1e6 f32 (subnormal results, flushed)", lambda x: qb.exp(x), lambda x: jnp.exp(x), (-95.0 + 5.0 * np.tanh(r(1000000))).astype(np.float32))
    case("|x| ** 1.7 1e6", lambda x: qb.abs(x) ** 1.7, lambda x: jnp.abs(x) ** 1.7, r(1000000))
    case("x / sqrt(row sums of squares) 4096x256", lambda x: x / qb.sqrt((x * x).sum(1, keepdims=True)), lambda x: x / jnp.sqrt((x * x).sum(1, keepdims=True)), r(4096, 256))
    case("where + clip 1e6", lambda x: qb.where(x > 0, qb.clip(x, 0, 1), x * 2), lambda x: jnp.where(x > 0, jnp.clip(x, 0, 1), x * 2), r(1000000))
    # Row blocks' outputs vectorised without overlap checks (runtime buffer_root): 4.5 and 5.7 ms.
    case("sin(x) + row sums 4096x256 (row blocks)", lambda x: qb.sin(x) + x.sum(1, keepdims=True), lambda x: jnp.sin(x) + x.sum(1, keepdims=True), r(4096, 256))
    case("vmap(cond) sin / cos 4096x256", qb.vmap(lambda x: qb.cond(x.sum() > 0, qb.sin, qb.cos, x)), jax.vmap(lambda x: jax.lax.cond(x.sum() > 0, jnp.sin, jnp.cos, x)), r(4096, 256))
    case("fori_loop 1000 steps of 16", lambda x: qb.fori_loop(0, 1000, lambda i, c: c * 0.999 + 0.001, x), lambda x: jax.lax.fori_loop(0, 1000, lambda i, c: c * 0.999 + 0.001, x), r(16))
    def rnn(np_, scan):
        def f(wh, wx, xs):
            def step(h, x):
                h = np_.tanh(h @ wh + x @ wx)
                return h, h.sum()

            return scan(step, np_.zeros((16, 128), np.float32), xs)[1].sum()

        return f

    rnn_args = (r(128, 128) * 0.1, r(64, 128) * 0.1, r(100, 16, 64))
    case("scan RNN 100 steps of 16x128", rnn(qb, qb.scan), rnn(jnp, jax.lax.scan), *rnn_args)
    case("scan RNN gradient", qb.grad(rnn(qb, qb.scan)), jax.grad(rnn(jnp, jax.lax.scan)), *rnn_args)

    def mandelbrot(np_, fori):
        def f(cr, ci):
            def step(i, s):
                zr, zi, n = s
                zr, zi = zr * zr - zi * zi + cr, 2 * zr * zi + ci
                return zr, zi, n + (zr * zr + zi * zi < 4).astype(np.float32)

            return fori(0, 50, step, (cr * 0, ci * 0, cr * 0))[2]

        return f

    grid = np.linspace(-2, 1, 512, dtype=np.float32)
    # Carries updated in place on the threads (runtime read_outputs_in_place: 27.3 ms
    # against JAX 17.8 when each carry was copied out and back per iteration). JAX contracts
    # to FMAs: escape counts differ at a few points (we equal NumPy's).
    # (and in blocks of rows, each iterated in the caches: row_blocks loop_reads, 3.8 -> 1.9 ms)
    case("Mandelbrot 512^2, 50 iterations", mandelbrot(qb, qb.fori_loop), mandelbrot(jnp, jax.lax.fori_loop), *[a.astype(np.float32) for a in np.meshgrid(grid, grid + 0.5)])

    newton_a = np.abs(r(1000000)) + 1
    # Elementwise loops in blocks of rows (row_blocks loop_reads): 3.2-3.4 ms against JAX 2.5-2.9
    # when each of the 20 iterations streamed the arrays through memory.
    case("Newton square roots of 1e6, fori_loop of 20", lambda a: qb.fori_loop(0, 20, lambda i, x: (x + a / x) * 0.5, a), lambda a: jax.lax.fori_loop(0, 20, lambda i, x: (x + a / x) * 0.5, a), newton_a)
    case("while_loop of 20 steps x * 1.0001 + a, 1e6", lambda a: qb.while_loop(lambda s: s[1] < 20, lambda s: (s[0] * 1.0001 + a, s[1] + 1), (a, 0))[0], lambda a: jax.lax.while_loop(lambda s: s[1] < 20, lambda s: (s[0] * 1.0001 + a, s[1] + 1), (a, 0))[0], newton_a)

    def lstm(np_, scan, sig):
        def f(w, u, b, xs):
            def step(carry, x):
                h, c = carry
                i, g, fg, o = np_.split(x @ w + h @ u + b, 4, axis=-1)
                c = sig(fg) * c + sig(i) * np_.tanh(g)
                h = sig(o) * np_.tanh(c)
                return (h, c), h

            zero = np_.zeros((32, 256), np.float32)
            return (scan(step, (zero, zero), xs)[1] ** 2).sum()

        return f

    lstm_args = (r(64, 1024) * 0.1, r(256, 1024) * 0.1, r(1024) * 0.1, r(50, 32, 64))
    case("LSTM 50 steps 32x64->256", lstm(qb, qb.scan, qb.sigmoid), lstm(jnp, jax.lax.scan, jax.nn.sigmoid), *lstm_args)
    # fold's stacked_products: the weight gradients are one product of the stacked steps
    # after the backward loop (38.9 ms against JAX 33.8 when each step added h^T dz).
    case("LSTM gradient in the weights", qb.grad(lstm(qb, qb.scan, qb.sigmoid), argnums=(0, 1, 2)), jax.grad(lstm(jnp, jax.lax.scan, jax.nn.sigmoid), argnums=(0, 1, 2)), *lstm_args)

    def nbody(np_, fori):
        def acc(p):
            d = p[None, :, :] - p[:, None, :]
            r2 = (d * d).sum(-1) + 0.01
            return (d / (r2 ** 1.5)[:, :, None]).sum(1)

        def step(i, s):
            p, v = s
            v = v + 0.001 * acc(p)
            return (p + 0.001 * v, v)

        return lambda p, v: fori(0, 100, step, (p, v))[0]

    def logreg(np_, fori, grad):
        def loss(w, x, y):
            return np_.mean(np_.log1p(np_.exp(-y * (x @ w))))

        return lambda w, x, y: fori(0, 100, lambda i, w: w - 0.1 * grad(loss)(w, x, y), w)

    def lorenz(np_, fori_loop):
        def f(s):
            x, y, z = s[0], s[1], s[2]
            return np_.stack([10.0 * (y - x), x * (28.0 - z) - y, x * y - 8.0 / 3.0 * z])

        def step(i, s):
            k1 = f(s)
            k2 = f(s + 0.005 * k1)
            k3 = f(s + 0.005 * k2)
            k4 = f(s + 0.01 * k3)
            return s + 0.01 / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

        return lambda s: fori_loop(0, 1000, step, s)

    case("RK4 Lorenz, fori_loop of 1000 steps on a 3-vector", lorenz(qb, qb.fori_loop), lorenz(jnp, jax.lax.fori_loop), np.ones(3, np.float32))
    case("n-body, fori_loop of 100 steps, 16 bodies", nbody(qb, qb.fori_loop), nbody(jnp, jax.lax.fori_loop), r(16, 3), r(16, 3))
    case("logistic regression, fori_loop of 100 GD steps, 1000x10", logreg(qb, qb.fori_loop, qb.grad), logreg(jnp, jax.lax.fori_loop, jax.grad), r(10), r(1000, 10), np.sign(r(1000)))
    case("EMA scan 1000 x 64", lambda xs: qb.scan(lambda c, x: (0.9 * c + 0.1 * x, c), qb.zeros(64, qb.float32), xs)[1], lambda xs: jax.lax.scan(lambda c, x: (0.9 * c + 0.1 * x, c), jnp.zeros(64, jnp.float32), xs)[1], r(1000, 64))
    case("cond(sum > 0) on 1e6", lambda x: qb.cond(x.sum() > 0, lambda y: y * 2, lambda y: y - 1, x), lambda x: jax.lax.cond(x.sum() > 0, lambda y: y * 2, lambda y: y - 1, x), r(1000000))
    # A 0-d carry is carried as a scalar (a tensor carry read after its update took a buffer per step).
    case("scalar scan 10000 steps (stacks the old carry)", lambda xs: qb.scan(lambda c, x: (c * 0.9 + x, c), 0.0, xs)[1], lambda xs: jax.lax.scan(lambda c, x: (c * 0.9 + x, c), 0.0, xs)[1], r(10000, dt=np.float64))
    # A returned argument is copied by a loop on the threads (at the level of a large program).
    case("returned argument 4096x1024 f32", lambda x: x, lambda x: x, r(4096, 1024))
    case("tanh f64 1e6", lambda x: qb.tanh(x), lambda x: jnp.tanh(x), r(1000000, dt=np.float64))
    case("gradient of sum(clip(x, -0.5, 0.5)**2) 4096x1024", qb.grad(lambda x: (qb.clip(x, -0.5, 0.5) ** 2).sum()), jax.grad(lambda x: (jnp.clip(x, -0.5, 0.5) ** 2).sum()), r(4096, 1024))
    case("tril 1024^2", lambda x: qb.tril(x), lambda x: jnp.tril(x), r(1024, 1024))
    # Short last dims (points of 3, a few features): flat loops and short inner loops written out.
    case("exp(p * 2) of 100000x3", lambda p: qb.exp(p * 2), lambda p: jnp.exp(p * 2), r(100000, 3))
    case("sin(p * s) of 100000x3 by a [3] scale", lambda p, s: qb.sin(p * s), lambda p, s: jnp.sin(p * s), r(100000, 3), r(3))
    case("exp(x[:, None] * w[None]) 100000x5", lambda x, w: qb.exp(x[:, None] * w[None]), lambda x, w: jnp.exp(x[:, None] * w[None]), r(100000), r(5))
    case("RBF features exp(-(x[:, None] - c)**2) 100000x5", lambda x, c: qb.exp(-((x[:, None] - c) ** 2)), lambda x, c: jnp.exp(-((x[:, None] - c) ** 2)), r(100000), r(5))
    case("|x|[:, None] ** arange(5.) 100000", lambda x: qb.abs(x)[:, None] ** qb.arange(5.0, dtype=np.float32), lambda x: jnp.abs(x)[:, None] ** jnp.arange(5.0, dtype=np.float32), r(100000))
    case("tanh(x + b) f64 65536x5", lambda x, b: qb.tanh(x + b), lambda x, b: jnp.tanh(x + b), r(65536, 5, dt=np.float64), r(5, dt=np.float64))
    case("grad of sum(tanh(x + b)) in b, 65536x5", qb.grad(lambda b, x: qb.tanh(x + b).sum()), jax.grad(lambda b, x: jnp.tanh(x + b).sum()), r(5), r(65536, 5))
    case("logsumexp over rows of 5, 100000", lambda x: qb.log(qb.exp(x).sum(-1)), lambda x: jnp.log(jnp.exp(x).sum(-1)), r(100000, 5))
    case("fori_loop of 20 tanh steps on a 10000x3 state", lambda s: qb.fori_loop(0, 20, lambda i, c: qb.tanh(c * 1.01 + 0.1), s), lambda s: jax.lax.fori_loop(0, 20, lambda i, c: jnp.tanh(c * 1.01 + 0.1), s), r(10000, 3))
    case("concatenate along the last dim of two 17x33x65x9", lambda p, q: qb.concatenate([p, q], -1), lambda p, q: jnp.concatenate([p, q], -1), r(17, 33, 65, 9), r(17, 33, 65, 9))
    case("concatenate([p, q], 1) 100000x3 and x1", lambda p, q: qb.concatenate([p, q], 1), lambda p, q: jnp.concatenate([p, q], 1), r(100000, 3), r(100000, 1))
    case("grad of sum(concatenate([p, q], 1)**2)", qb.grad(lambda p, q: (qb.concatenate([p, q], 1) ** 2).sum()), jax.grad(lambda p, q: (jnp.concatenate([p, q], 1) ** 2).sum()), r(100000, 3), r(100000, 1))
    case("arctan2 of the columns of 100000x2", lambda p: qb.arctan2(p[:, 1], p[:, 0]), lambda p: jnp.arctan2(p[:, 1], p[:, 0]), r(100000, 2))
    case("sigmoid(x + b) f64 65536x2", lambda x, b: 1 / (1 + qb.exp(-(x + b))), lambda x, b: 1 / (1 + jnp.exp(-(x + b))), r(65536, 2, dt=np.float64), r(2, dt=np.float64))
    case("solve 256 (8 rhs)", lambda a, b: qb.linalg.solve(a + 256 * qb.eye(256, dtype=np.float32), b), lambda a, b: jnp.linalg.solve(a + 256 * jnp.eye(256, dtype=np.float32), b), r(256, 256), r(256, 8))


def linalg():
    a = r(256, 256)
    spd = a @ a.T + 256 * np.eye(256, dtype=np.float32)
    case("eigh 128 (vectors)", lambda a: qb.linalg.eigh(a)[1] ** 2, lambda a: jnp.linalg.eigh(a)[1] ** 2, spd[:128, :128])
    case("eigvalsh 128", lambda a: qb.linalg.eigvalsh(a), lambda a: jnp.linalg.eigvalsh(a), spd[:128, :128])
    case("eigh 256 f32", lambda a: qb.linalg.eigh(a)[0], lambda a: jnp.linalg.eigh(a)[0], spd)
    case("svd 128 (values)", lambda a: qb.linalg.svd(a, compute_uv=False), lambda a: jnp.linalg.svd(a, compute_uv=False), a[:128, :128])
    case("svd 256x64 (u s vt)", lambda a: [x.sum() for x in qb.linalg.svd(a, full_matrices=False)][1], lambda a: [x.sum() for x in jnp.linalg.svd(a, full_matrices=False)][1], a[:, :64])
    case("qr 256 (r)", lambda a: qb.abs(qb.linalg.qr(a)[1]), lambda a: jnp.abs(jnp.linalg.qr(a)[1]), a)
    case("qr 256 (|q|)", lambda a: qb.abs(qb.linalg.qr(a)[0]), lambda a: jnp.abs(jnp.linalg.qr(a)[0]), a)
    case("inv 256", lambda a: qb.linalg.inv(a), lambda a: jnp.linalg.inv(a), spd)
    case("cholesky 256", lambda a: qb.linalg.cholesky(a), lambda a: jnp.linalg.cholesky(a), spd)
    # The batch moved last first (linalg.det) through the transposing copy of narrow sides
    # (layout RUNTIME_TRANSPOSE_MIN_SIDE): were 337 / 249 us.
    m3 = r(100000, 3, 3)
    case("det of 100000 3x3", lambda a: qb.linalg.det(a), lambda a: jnp.linalg.det(a), m3)
    case("x.T of 100000x9", lambda a: a.T, lambda a: a.T, m3.reshape(100000, 9))
    # Small odd blocks written out whole (runtime parallel::small_blocks): 940 / 297 / 1148 us
    # when LLVM vectorised the middle loop of 3 with masked gathers.
    case("einsum bij,bjk of 100000 3x3", lambda a, b: qb.einsum("bij,bjk->bik", a, b), lambda a, b: jnp.einsum("bij,bjk->bik", a, b), m3, m3)
    case("outer products of 100000 3-vectors", lambda x, y: x[:, :, None] * y[:, None, :], lambda x, y: x[:, :, None] * y[:, None, :], m3[:, 0], m3[:, 1])
    case("exp(a) * v[:, None] of 100000 3x3", lambda a, v: qb.exp(a) * v[:, None, :], lambda a, v: jnp.exp(a) * v[:, None, :], m3, m3[:, 2])


GROUPS = {"matmul": matmul, "reduce": reduce, "window": window, "index": index, "sort": sort, "random": random, "misc": misc, "linalg": linalg}

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default=",".join(GROUPS))
    args = ap.parse_args()
    for g in args.only.split(","):
        print(f"== {g}", flush=True)
        GROUPS[g]()
