"""Compile time against program length (issue 18: linear compile time).

    python bench/compile_time.py [--full] [N ...]     (default 1000 2000 4000; --full adds 5000 20000)

Traces a chain of N elementwise ops (alternately ``x + 0.5`` and ``sin(x) * 1.0001``) on an
8-element f32 vector and compiles it with the persistent cache off, printing trace and compile
times, wall and process CPU (the machine is shared: compare CPU times). QUABLA_LOG_COMPILES=1
shows the phases (quabla passes, lowering, MLIR parse and pipeline, LLVM optimize and
codegen); QUABLA_OUTLINE_OPS=0 compiles without outlining, as before the fix.

Measured (2 cores shared by ~6 builds, process CPU s; ms/op in brackets):

    N        not outlined (before)   outlined into 256-op chunks   64-op chunks (default)
    500       2.81 (5.6)              1.76 (3.5)                    1.87 (3.7)
    1000      6.11 (6.1)              3.72 (3.7)                    3.91 (3.9)
    2000     25.31 (12.7)             8.76 (4.4)                    7.71 (3.9)
    4000     85.98 (21.5)            17.57 (4.4)                   16.54 (4.1)
    5000        -                    22.80 (4.6)
    20000       -                   101.02 (5.1)

Before, one fused chain was one block of one function: empty-tensor elimination and one-shot
bufferization (0.4 -> 1.8 s and 0.45 -> 2.2 s from 1000 to 2000 ops under mlir-opt), LLVM's
optimizer and code generator grew quadratically with it. Outlined (runtime/src/cpu.rs,
passes/src/outline.rs), every function is bounded; at 20000 ops the phases (CPU s) are quabla
passes 0.57, lowering 2.6, MLIR parse 9.3, MLIR pipeline 27.9, LLVM optimize 36.0, LLVM
codegen 24.0.

Since chunks of repeated stretches are cut alike and identical chunks are one function
(passes/src/outline.rs), this periodic chain compiles a few distinct chunks whatever its
length: 2026-12-01 (load 6-7), 1000 ops 2.98 -> 0.65 s cpu, 2000 ops 6.54 -> 0.60 s cpu
(main cd447b2 against this change, same session). QUABLA_COMPILE_THREADS=1 compiles the LLVM
module on one thread (default: one part per core, up to 4).
"""

import os
import sys
import time

os.environ.setdefault("QUABLA_CACHE", "0")

import quabla as qb  # noqa: E402


def chain(n):
    def f(x):
        for i in range(n):
            x = qb.sin(x) * 1.0001 if i % 2 else x + 0.5
        return x

    return f


def main():
    args = [a for a in sys.argv[1:] if a != "--full"]
    sizes = [int(a) for a in args] or [1000, 2000, 4000] + ([5000, 20000] if "--full" in sys.argv[1:] else [])
    for n in sizes:
        t0 = time.perf_counter()
        low = qb.jit(chain(n)).lower(qb.ShapeDtype((8,), qb.float32))
        t1, c1 = time.perf_counter(), time.process_time()
        low.compile()
        t2, c2 = time.perf_counter(), time.process_time()
        print(f"{n:6d} ops: trace {t1 - t0:6.2f} s  compile {t2 - t1:7.2f} s wall, {c2 - c1:7.2f} s cpu  ({1e3 * (c2 - c1) / n:.2f} ms/op cpu)", flush=True)


if __name__ == "__main__":
    main()
