"""RSS of the eager op cache under many operand shapes (issue 18: bounded caches).

    QUABLA_EAGER_CACHE_SIZE=256 python bench/eager_cache_rss.py [N]

Runs ``qb.sin`` on N (default 1000) distinct shapes, each a new eager program, and prints the
resident set size before and after; with the cache bounded, RSS stays bounded instead of
growing by ~0.5-1 MB per shape. Measured (2 cores, shared machine): 1000 shapes, 951 MiB
unbounded (before the bound), 320 MiB at 256 entries, 179 MiB at 64.
"""

import gc
import os
import sys
import time

import quabla as qb


def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    r0, t = rss_mib(), time.time()
    for k in range(1, n + 1):
        qb.sin(qb.ones(k))
    gc.collect()
    cap = qb._quabla.eager_cache_capacity()
    print(f"{n} shapes of qb.sin (cache bound {cap}): RSS {r0:.0f} -> {rss_mib():.0f} MiB in {time.time() - t:.1f} s")


if __name__ == "__main__":
    main()
