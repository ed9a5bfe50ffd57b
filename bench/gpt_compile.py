"""First call of a GPT-like loss+grad (issue 13): where the time goes, against JAX.

    python bench/gpt_compile.py [--blocks 3] [--reps 1] [--calls 50] [--only quabla|jax]

A decoder of ``--blocks`` pre-norm transformer blocks (d_model 64, 4 heads, sequence 32,
batch 4, vocabulary 96, causal attention, tanh-gelu MLP of width 256) with a softmax
cross-entropy loss; ``jit(value_and_grad(loss))`` over the parameter pytree, f32. The same
function body runs on ``quabla`` and ``jax.numpy`` (the namespace is an argument). Prints the
first call (trace + transforms + compile + run) of each, with the persistent compile cache
off, and the min/median of later calls; QUABLA_LOG_COMPILES=1 adds quabla's phase times (quabla passes, lowering, MLIR pipeline,
LLVM), QUABLA_OUTLINE_OPS=0 compiles without outlining (to compare).

Measured (3 blocks, 643 quabla ops after the passes; 2 shared cores, process CPU of the first
call): not outlined 27.4-30.5 s (LLVM -O2 optimize 22.4 s, 83% of it IndVarSimplify on three
functions; codegen 6.8 s); 256-op chunks 17.5-18.7 s; 64-op chunks (the default) 12.1-13.3 s
(quabla passes 0.1 s, lowering 0.02 s, MLIR 0.8 s, LLVM optimize 5.8 s, codegen 4.5-5.9 s; each
of the 11 chunks 0.2-0.6 s under opt -O2). JAX: 2.4-2.8 s. Per call (min of 300, noisy
machine): 4.7 ms (64), 5.3 ms (256), 5.3 ms (not outlined).

2026-12-01, load 6-7, same session: before (main cd447b2) 9.93 s wall / 9.20 s cpu, after
repeat-aligned chunks with one function per identical chunk (7 distinct of 12) and the LLVM
module compiled on two threads (QUABLA_COMPILE_THREADS) 3.78 s / 5.81 s; per call 4.32 ->
4.04 ms; JAX 1.61 s / 1.80 s.
"""
import argparse
import os
import time

os.environ.setdefault("QUABLA_CACHE", "0")

import numpy as np  # noqa: E402

import quabla as qb  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

jax.config.update("jax_platforms", "cpu")

D, H, T, B, V, F = 64, 4, 32, 4, 96, 256


def init(blocks, seed=0):
    rng = np.random.default_rng(seed)
    w = lambda *s: (rng.standard_normal(s) / np.sqrt(s[0])).astype(np.float32)  # noqa: E731
    p = {"emb": w(V, D), "pos": w(T, D) * 0.1, "out": w(D, V), "blocks": []}
    for _ in range(blocks):
        p["blocks"].append({"qkv": w(D, 3 * D), "proj": w(3 * D // 3, D), "up": w(D, F), "down": w(F, D), "g1": np.ones(D, np.float32), "g2": np.ones(D, np.float32)})
    return p


def model(ns, nn):
    def norm(x, g):
        mu = ns.mean(x, axis=-1, keepdims=True)
        var = ns.mean((x - mu) ** 2, axis=-1, keepdims=True)
        return (x - mu) / ns.sqrt(var + 1e-5) * g

    def block(x, p, mask):
        h = norm(x, p["g1"])
        qkv = h @ p["qkv"]  # [B, T, 3D]
        q, k, v = qkv[..., :D], qkv[..., D:2 * D], qkv[..., 2 * D:]
        split = lambda a: ns.transpose(ns.reshape(a, (B, T, H, D // H)), (0, 2, 1, 3))  # noqa: E731
        q, k, v = split(q), split(k), split(v)
        s = q @ ns.transpose(k, (0, 1, 3, 2)) / np.float32(np.sqrt(D // H))
        s = ns.where(mask, s, np.float32(-1e9))
        a = nn.softmax(s, axis=-1) @ v  # [B, H, T, D/H]
        a = ns.reshape(ns.transpose(a, (0, 2, 1, 3)), (B, T, D))
        x = x + a @ p["proj"]
        h = norm(x, p["g2"])
        return x + nn.gelu(h @ p["up"]) @ p["down"]

    def loss(p, tokens, targets):
        mask = ns.tril(ns.ones((T, T), dtype=bool))
        x = p["emb"][tokens] + p["pos"]
        for bp in p["blocks"]:
            x = block(x, bp, mask)
        logits = x @ p["out"]
        lp = nn.log_softmax(logits, axis=-1)
        onehot = nn.one_hot(targets, V, dtype=np.float32)
        return -ns.mean(ns.sum(lp * onehot, axis=-1))

    return loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--blocks", type=int, default=3)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--calls", type=int, default=50, help="later calls timed for the per-call min/median")
    ap.add_argument("--only", choices=["quabla", "jax"], help="run one of the two")
    a = ap.parse_args()
    rng = np.random.default_rng(1)
    tokens = rng.integers(0, V, (B, T)).astype(np.int32)
    targets = rng.integers(0, V, (B, T)).astype(np.int32)
    params = init(a.blocks)
    for name, ns, nn, jit, vg, put, block in [
        ("quabla", qb, qb.nn, qb.jit, qb.value_and_grad, lambda t: qb.tree.map(qb.array, t) if hasattr(qb, "tree") else t, lambda r: r),
        ("jax", jnp, jax.nn, jax.jit, jax.value_and_grad, lambda t: jax.tree.map(jnp.asarray, t), jax.block_until_ready),
    ]:
        if a.only not in (None, name):
            continue
        p = put(params)
        firsts = []
        for _ in range(a.reps):
            f = jit(vg(model(ns, nn)))
            t0, c0 = time.perf_counter(), time.process_time()
            r = block(f(p, tokens, targets))
            firsts.append((time.perf_counter() - t0, time.process_time() - c0))
        value = float(np.asarray(r[0]))
        w, c = min(firsts)
        calls = []
        for _ in range(a.calls):
            t0 = time.perf_counter()
            block(f(p, tokens, targets))
            calls.append(time.perf_counter() - t0)
        print(f"{name:7s} {a.blocks} blocks: first call {w:7.2f} s wall, {c:7.2f} s cpu; per call min {1e3 * min(calls):.3f} ms, median {1e3 * sorted(calls)[len(calls) // 2]:.3f} ms  (loss {value:.5f})", flush=True)


if __name__ == "__main__":
    main()
