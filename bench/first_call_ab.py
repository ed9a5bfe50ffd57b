"""First calls (and optionally the steady state) of bench/cpu_table.py's workloads under
several environment configurations, one process per configuration, alternating.

    python bench/first_call_ab.py [--only softmax_grad_256x1024,gpt_3x_d64] [--rounds 3] [--steady]
        --config base= --config nolsr=QUABLA_LLVM_ARGS=-unroll-threshold=50
        [--config o1=QUABLA_LLVM_OPT=1,QUABLA_LLVM_CODEGEN=1]

A configuration is NAME=VAR=VALUE[,VAR=VALUE...]: the QUABLA_ knobs are read once per process,
so each round runs every configuration in a fresh process, one after the other, so that all
see the same machine load. Quabla side only, compile cache off (QUABLA_CACHE=0). Per workload
and configuration it prints the minimum and median over rounds of

* first: process CPU ms of a fresh jit's trace + compile + first run;
* llvm: process CPU ms of the LLVM half of those compiles (the `LLVM JIT ... cpu` lines of
  QUABLA_LOG_COMPILES, summed over the workload's compiles);
* with --steady: the minimum process CPU of one call (us; 40 calls), on QUABLA_NUM_THREADS
  as set (QUABLA_NUM_THREADS=1 makes it steadier on a loaded machine).

CPU times and not wall times: the machine is shared (docs/performance.md). Speeds are
compared, never asserted.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = "matmul_f32_64,rowsum_1024,softmax_grad_256x1024,layernorm_grad_256x1024,elementwise_1e6_f32,mlp_784_512_512_10_b256,gpt_3x_d64"
LLVM_LINE = re.compile(r"LLVM JIT \(O\d[^)]*\).*?, cpu ([0-9.]+) ms")
MARK = "@@quabla-ab@@"


def child(names, steady):
    """Runs in the measuring process: one JSON line per workload on stdout, the compile log
    (stderr) cut per workload by a marker line."""
    sys.path.insert(0, HERE)
    import cpu_table as ct  # sets a temporary compile cache directory

    os.environ["QUABLA_CACHE"] = "0"
    ct.warm_up(ct.Q)
    for n in names:
        print(MARK, file=sys.stderr, flush=True)
        make, _ = ct.WORKLOADS[n][1]()
        c = time.process_time()
        f, a = make(ct.Q)
        f(*a)
        first = time.process_time() - c
        print(MARK, file=sys.stderr, flush=True)
        cpu = ct.cpu_time(lambda: f(*a), reps=40) if steady else None
        print(json.dumps(dict(w=n, first=first, cpu=cpu)), flush=True)


def run(config, names, steady):
    env = dict(os.environ, QUABLA_LOG_COMPILES="1")
    env.update(config)
    args = [sys.executable, os.path.abspath(__file__), "--child", "--only", ",".join(names)] + (["--steady"] if steady else [])
    p = subprocess.run(args, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"a measuring process failed:\n{p.stderr[-3000:]}")
    rows = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
    # The stderr between the k-th pair of markers is workload k's first call.
    parts = p.stderr.split(MARK)
    for k, r in enumerate(rows):
        seg = parts[2 * k + 1] if 2 * k + 1 < len(parts) else ""
        r["llvm"] = sum(float(m.group(1)) for m in LLVM_LINE.finditer(seg))
    return rows


def parse_config(text):
    name, _, rest = text.partition("=")
    env = {}
    for kv in filter(None, rest.split(",")):
        k, _, v = kv.partition("=")
        env[k] = v
    return name, env


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default=DEFAULT)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steady", action="store_true")
    ap.add_argument("--config", action="append", default=[])
    ap.add_argument("--child", action="store_true")
    a = ap.parse_args()
    names = [n for n in a.only.split(",") if n]
    if a.child:
        return child(names, a.steady)
    configs = [parse_config(c) for c in a.config] or [("default", {})]
    res = {}
    for r in range(a.rounds):
        for name, env in configs:
            for row in run(env, names, a.steady):
                res.setdefault((row["w"], name), []).append(row)
        print(f"round {r + 1} of {a.rounds} done", file=sys.stderr)
    mm = lambda xs: f"{min(xs):8.1f} / {statistics.median(xs):8.1f}"
    for w in names:
        print(w)
        for name, _ in configs:
            rows = res[(w, name)]
            line = f"  {name:12s} first {mm([x['first'] * 1e3 for x in rows])} ms   llvm {mm([x['llvm'] for x in rows])} ms"
            if a.steady:
                line += f"   steady cpu min {min(x['cpu'] for x in rows) * 1e6:10.1f} us"
            print(line)


if __name__ == "__main__":
    main()
