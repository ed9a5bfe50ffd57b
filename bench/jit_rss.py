"""RSS of jitted functions (issue 18: bounded resources), two measurements in one run.

    python bench/jit_rss.py [--calls 1000000] [--functions 2000] [--signatures 1000]

* ``calls``: one jitted function called ``--calls`` times on the fast path; prints RSS every
  tenth of the run. Flat means the per-call path allocates nothing that outlives a call.
* ``functions``: ``--functions`` distinct jitted functions, each traced, compiled and
  called once, then dropped (the last reference goes, ``gc.collect()``), with RSS after every
  tenth of them; a dropped function must free its traces and executables (JIT code
  included), so RSS ends within 50 MB of its value after the first few functions
  (allocator and MLIR context warm-up). glibc keeps freed heap in its arenas unless
  ``malloc_trim`` runs; the script prints RSS before and after a trim so both are visible.
* ``signatures``: one jitted function (``max_traces=8``) called with ``--signatures``
  distinct shapes: its LRU trace cache evicts all but 8, and each eviction frees the program
  (``_quabla.live_programs()`` stays bounded) and trims the heap, so RSS ends within 50 MB of
  its value after the warm-up.

The persistent compile cache is off (``QUABLA_CACHE=0``) so that every function really
compiles. Measured numbers are in docs/debugging.md ("Resource use").
"""

import argparse
import ctypes
import gc
import os
import sys
import time

os.environ.setdefault("QUABLA_CACHE", "0")

import numpy as np  # noqa: E402

import quabla as qb  # noqa: E402


def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def trim():
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def calls(n):
    f = qb.jit(lambda x, y: qb.sum(qb.sin(x) * y))
    x, y = qb.array(np.linspace(0.0, 1.0, 16)), qb.array(np.linspace(1.0, 2.0, 16))
    f(x, y)
    gc.collect()
    r0, t = rss_mib(), time.time()
    marks = []
    step = max(n // 10, 1)
    for i in range(1, n + 1):
        f(x, y)
        if i % step == 0:
            marks.append(rss_mib())
    print(f"{n} calls of one jitted function: RSS {r0:.1f} MiB at the start, then " + ", ".join(f"{m:.1f}" for m in marks)
          + f" MiB (max growth {max(marks) - r0:+.1f} MiB) in {time.time() - t:.1f} s")
    return max(marks) - r0


def functions(n):
    x = qb.array(np.linspace(0.0, 1.0, 8))

    def make(k):
        # A distinct program per k (the constant is part of it), with temporaries.
        return qb.jit(lambda a: qb.sum(qb.tanh(a * float(k) + 1.0) * qb.cos(a)))

    warm = max(n // 100, 5)
    for k in range(warm):
        make(k)(x)
    gc.collect()
    trim()
    r0, t = rss_mib(), time.time()
    marks = []
    step = max(n // 10, 1)
    for k in range(warm, warm + n):
        f = make(k)
        want = np.sum(np.tanh(np.asarray(x) * k + 1.0) * np.cos(np.asarray(x)))
        got = float(f(x))
        assert abs(got - want) <= 1e-12 * max(1.0, abs(want)), (k, got, want)
        del f
        if (k - warm + 1) % step == 0:
            gc.collect()
            marks.append(rss_mib())
    gc.collect()
    before_trim = rss_mib()
    trim()
    after = rss_mib()
    print(f"{n} jitted functions compiled, called and dropped: RSS {r0:.1f} MiB after {warm} warm-up functions, then "
          + ", ".join(f"{m:.0f}" for m in marks)
          + f" MiB; at the end {before_trim:.1f} MiB, {after:.1f} MiB after malloc_trim (growth {after - r0:+.1f} MiB) in {time.time() - t:.1f} s")
    # The control: the same functions kept alive hold their code, so the measurement above
    # would see a leak.
    m = max(n // 10, 10)
    k0 = rss_mib()
    kept = [make(warm + n + k) for k in range(m)]
    for f in kept:
        f(x)
    gc.collect()
    print(f"control: {m} such functions kept alive grow RSS by {rss_mib() - k0:+.1f} MiB ({(rss_mib() - k0) / m * 1024:.0f} KiB each)")
    return after - r0


def signatures(n):
    q = qb._quabla
    f = qb.jit(lambda x: qb.sin(x) * 2.0 + 1.0, max_traces=8)
    warm = 16
    for k in range(1, warm + 1):
        f(qb.ones(k))
    gc.collect()
    r0, p0, t = rss_mib(), q.live_programs(), time.time()
    for k in range(warm + 1, warm + n + 1):
        f(qb.ones(k))
        if (k - warm) % max(1, n // 10) == 0:
            print(f"signatures: {k - warm} -> RSS {rss_mib():.1f} MiB, {q.live_programs()} programs loaded, {f._cache_size} cached")
    gc.collect()
    after = rss_mib()
    print(f"signatures: {n} shapes through max_traces=8: RSS {r0:.1f} -> {after:.1f} MiB ({after - r0:+.1f} MiB), "
          f"programs loaded {p0} -> {q.live_programs()} in {time.time() - t:.1f} s")
    return after - r0 if q.live_programs() <= p0 else float("inf")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--calls", type=int, default=1_000_000)
    p.add_argument("--functions", type=int, default=2000)
    p.add_argument("--signatures", type=int, default=1000)
    a = p.parse_args()
    ok = True
    if a.calls:
        ok &= calls(a.calls) < 5.0
    if a.functions:
        ok &= functions(a.functions) < 50.0
    if a.signatures:
        ok &= signatures(a.signatures) < 50.0
    print("bounded" if ok else "NOT bounded")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
