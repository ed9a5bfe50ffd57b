"""A seed-fixed fuzzer for `quabla-opt`: mutated and generated programs through several
pipelines, with crash, hang and wrong-result oracles.

    python tests/fuzz/opt_fuzz.py [--inputs N] [--seed S] [--jobs J] [--keep DIR]

Corpus: every chunk of every tests/lit/**/*.mlir file (split at `// -----`), mutated by a
seeded RNG (extents replaced by 0, 1, rank-8 shapes or 2**40..2**62; dtypes swapped; lines
deleted, duplicated or truncated; op names and SSA names swapped; attribute integers replaced
by extremes), and generated single-op programs over 0-d, rank-8, zero-extent and huge shapes.
Each input runs through: verification only, the default transform pipeline, `--emit=linalg`,
`--emit=stablehlo`, and for inputs that verify, `--interpret` and `--run` on the same
`--random-args`.

A finding is: a signal or an exit code other than 0/1; a panic, LLVM/MLIR assertion or
"internal error" on stderr; a run past the timeout (except both executions of a program with
an `scf.while` that does not terminate); or `--run` and `--interpret` printing
different numbers (beyond float reassociation tolerance). `QUABLA_MAX_BYTES` is lowered for
the runs so that generated huge shapes are refused instead of allocated. Exits 1 and lists
the reproducers (written under --keep) when anything is found. tests/fuzz/test_fuzz.py runs a
fast slice in CI; `--inputs 20000` is the documented long run (docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIT = ROOT / "tests" / "lit"

PIPELINES = [
    [],
    ["--pass-pipeline=builtin.module(quabla-autodiff,quabla-inline,quabla-canonicalize,quabla-cse,quabla-symbol-dce)"],
    ["--emit=linalg"],
    ["--emit=stablehlo"],
]
RUNS = [["--interpret", "--random-args=7"], ["--run", "--random-args=7", "--opt-level=0"]]
BAD_STDERR = re.compile(r"panicked|internal error|LLVM ERROR|Assertion .* failed|Segmentation|core dumped|stack backtrace|UNREACHABLE")
DTYPES = ["f32", "f64", "i1", "i32", "i64"]
EXTENTS = ["0", "1", "2", "7", "1x1x1x1x1x1x1x2", "1099511627776", "4611686018427387904", "2147483648x2147483648"]
INTS = ["0", "-1", "1", "2", "63", "64", "-9223372036854775808", "9223372036854775807", "4294967296"]


def opt_binary() -> Path:
    for p in (ROOT / "target" / "debug" / "quabla-opt", ROOT / "target" / "release" / "quabla-opt"):
        if p.exists():
            return p
    found = shutil.which("quabla-opt")
    if not found:
        sys.exit("quabla-opt not built (cargo build -p quabla-opt)")
    return Path(found)


def corpus() -> list[str]:
    chunks = []
    for f in sorted(LIT.rglob("*.mlir")):
        if "Output" in f.parts:
            continue
        text = f.read_text()
        for chunk in text.split("// -----"):
            body = "\n".join(l for l in chunk.splitlines() if not l.lstrip().startswith("//"))
            if "func.func" in body:
                chunks.append(body)
    return chunks


UNARY = ["neg", "abs", "exp", "log", "sin", "tanh", "sqrt", "floor", "logistic", "not", "sign"]
BINARY = ["add", "sub", "mul", "div", "rem", "max", "min", "pow", "and", "atan2"]


def generated(rng: random.Random) -> str:
    """A one-op program over an extreme shape."""
    shape = rng.choice(["", "0", "3x0", "1x1x1x1x1x1x1x2", "2x3", "1099511627776", "2147483648x2147483648", "5"])
    dt = rng.choice(DTYPES)
    ty = f"tensor<{shape + 'x' if shape else ''}{dt}>"
    kind = rng.randrange(5)
    if kind == 0:
        op = rng.choice(UNARY)
        return f'func.func @main(%a: {ty}) -> {ty} {{\n  %0 = "quabla.{op}"(%a) : ({ty}) -> {ty}\n  return %0 : {ty}\n}}\n'
    if kind == 1:
        op = rng.choice(BINARY)
        return f'func.func @main(%a: {ty}, %b: {ty}) -> {ty} {{\n  %0 = "quabla.{op}"(%a, %b) : ({ty}, {ty}) -> {ty}\n  return %0 : {ty}\n}}\n'
    dims = [d for d in shape.split("x") if d]
    if kind == 2 and dims:
        r = f"tensor<{dt}>"
        ds = ", ".join(str(i) for i in range(len(dims)))
        return f'func.func @main(%a: {ty}) -> {r} {{\n  %0 = "quabla.reduce_sum"(%a) {{dimensions = array<i64: {ds}>}} : ({ty}) -> {r}\n  return %0 : {r}\n}}\n'
    if kind == 3:
        out = f"tensor<{rng.choice(EXTENTS)}x{'x'.join(dims) + 'x' if dims else ''}{dt}>"
        ds = ", ".join(str(i + 1) for i in range(len(dims)))
        return f'func.func @main(%a: {ty}) -> {out} {{\n  %0 = "quabla.broadcast_in_dim"(%a) {{dims = array<i64: {ds}>}} : ({ty}) -> {out}\n  return %0 : {out}\n}}\n'
    val = rng.choice(["1.5", "0", "-1", "true", "2147483648"])
    return f'func.func @main() -> {ty} {{\n  %0 = "quabla.constant"() {{value = dense<{val}> : {ty}}} : () -> {ty}\n  return %0 : {ty}\n}}\n'


def mutate(text: str, rng: random.Random) -> str:
    for _ in range(rng.randint(1, 3)):
        m = rng.randrange(9)
        lines = text.splitlines()
        if m == 0:  # an extent
            spots = list(re.finditer(r"tensor<(\d+)", text))
            if spots:
                s = rng.choice(spots)
                text = text[: s.start(1)] + rng.choice(EXTENTS) + text[s.end(1) :]
        elif m == 1:  # a dtype
            spots = list(re.finditer(r"\b(f32|f64|i1|i32|i64)\b", text))
            if spots:
                s = rng.choice(spots)
                text = text[: s.start()] + rng.choice(DTYPES) + text[s.end() :]
        elif m == 2 and len(lines) > 2:  # delete a line
            del lines[rng.randrange(len(lines))]
            text = "\n".join(lines)
        elif m == 3 and lines:  # duplicate a line
            i = rng.randrange(len(lines))
            lines.insert(i, lines[i])
            text = "\n".join(lines)
        elif m == 4 and text:  # truncate
            text = text[: rng.randrange(len(text))]
        elif m == 5:  # an op name
            names = re.findall(r'"quabla\.(\w+)"', text)
            spots = list(re.finditer(r'"quabla\.(\w+)"', text))
            if spots:
                s = rng.choice(spots)
                text = text[: s.start(1)] + rng.choice(names + UNARY + BINARY) + text[s.end(1) :]
        elif m == 6:  # an SSA name
            names = re.findall(r"%\w+", text)
            spots = list(re.finditer(r"%\w+", text))
            if spots:
                s = rng.choice(spots)
                text = text[: s.start()] + rng.choice(names) + text[s.end() :]
        elif m == 7:  # an attribute integer
            spots = list(re.finditer(r"(?<=[:, ])(-?\d+)(?=[,>\]])", text))
            if spots:
                s = rng.choice(spots)
                text = text[: s.start()] + rng.choice(INTS) + text[s.end() :]
        else:  # a byte
            if text:
                i = rng.randrange(len(text))
                text = text[:i] + rng.choice("{}()<>[]%:,=\"x0@-") + text[i:]
    return text


def run_one(opt: Path, text: str, timeout: float) -> tuple[list[str], int]:
    """The findings of one input over every pipeline (empty when clean) and the number of
    compared runs (0 or 1)."""
    env = dict(os.environ, QUABLA_MAX_BYTES=str(1 << 28))
    findings = []
    verified = False
    for args in PIPELINES:
        r = _exec(opt, args, text, env, timeout)
        if isinstance(r, str):
            findings.append(f"{' '.join(args) or 'verify'}: {r}")
            continue
        if not args and r.returncode == 0:
            verified = True
    if verified and "@main" in text:
        outs = []
        hangs = []
        for args in RUNS:
            r = _exec(opt, args, text, env, timeout)
            if isinstance(r, str):
                (hangs if r.startswith("hang") else findings).append(f"{' '.join(args)}: {r}")
                outs.append(None)
            else:
                outs.append(r.stdout if r.returncode == 0 else None)
        # A program with a while loop that runs past the timeout in both engines does not
        # terminate (a mutated loop counter: `i * 1` for `i + 1`); the compiler's own runs
        # above finished. Anything else that hangs is a finding.
        if hangs and not (len(hangs) == len(RUNS) and "scf.while" in text):
            findings.extend(hangs)
        if outs[0] is not None and outs[1] is not None and not _same_numbers(outs[0], outs[1]):
            findings.append(f"--run and --interpret differ:\n{outs[1][:400]}\n---\n{outs[0][:400]}")
        compared = int(outs[0] is not None and outs[1] is not None)
        return findings, compared
    return findings, 0


def _exec(opt, args, text, env, timeout):
    try:
        r = subprocess.run([str(opt), "-", *args], input=text, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return f"hang (over {timeout:.0f} s)"
    if r.returncode not in (0, 1):
        return f"exit code {r.returncode}: {r.stderr[-300:]}"
    if BAD_STDERR.search(r.stderr):
        return f"bad stderr: {r.stderr[-300:]}"
    return r


NUM = re.compile(r"0x[0-9A-F]{8}(?:[0-9A-F]{8})?|-?(?:\d+\.?\d*(?:e[-+]?\d+)?|inf|nan)", re.I)


def _num(tok: str) -> float:
    """A printed element: decimal, or MLIR's hex bit pattern (NaNs and infinities)."""
    if tok[:2].lower() == "0x":
        bits = int(tok, 16)
        fmt = "<f" if len(tok) == 10 else "<d"
        return struct.unpack(fmt, bits.to_bytes(4 if fmt == "<f" else 8, "little"))[0]
    return float(tok)


def _same_numbers(a: str, b: str) -> bool:
    xs, ys = NUM.findall(a), NUM.findall(b)
    if len(xs) != len(ys):
        return False
    for x, y in zip(xs, ys):
        fx, fy = _num(x), _num(y)
        if fx != fx and fy != fy:
            continue
        if fx == fy:
            continue
        if abs(fx - fy) > 1e-4 * max(1.0, abs(fx), abs(fy)):
            return False
    return True


def inputs(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    base = corpus()
    out = []
    for i in range(n):
        if i % 4 == 3:
            out.append(generated(rng))
        else:
            out.append(mutate(rng.choice(base), rng))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--inputs", type=int, default=250)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--keep", default=None, help="directory for reproducers")
    a = ap.parse_args(argv)
    opt = opt_binary()
    progs = inputs(a.inputs, a.seed)
    bad, compared = [], 0
    with cf.ThreadPoolExecutor(a.jobs) as pool:
        for i, (f, c) in enumerate(pool.map(lambda t: run_one(opt, t, a.timeout), progs)):
            compared += c
            if f:
                bad.append((i, progs[i], f))
    runs = len(progs) * len(PIPELINES) + 2 * compared
    print(f"opt_fuzz: {len(progs)} inputs (seed {a.seed}), {runs}+ quabla-opt runs, {compared} JIT/interpreter comparisons, {len(bad)} with findings")
    if bad:
        keep = Path(a.keep or tempfile.mkdtemp(prefix="quabla-fuzz-"))
        keep.mkdir(parents=True, exist_ok=True)
        for i, text, f in bad:
            (keep / f"input{i}.mlir").write_text(text)
            print(f"--- input{i}.mlir ({keep}):\n  " + "\n  ".join(f))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
