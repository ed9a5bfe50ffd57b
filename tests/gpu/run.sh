#!/usr/bin/env bash
# The CUDA executor's checks on a real GPU: ONLY RUNNABLE ON A MACHINE WITH AN NVIDIA GPU AND
# ITS DRIVER (libcuda.so). Not part of CI (CI has no GPU): CI runs everything that needs no GPU
# (tests/rust/cuda_ptx.rs: every op family to PTX assembled by ptxas for sm_80/sm_90;
# tests/lit/cuda; the executor's non-GPU tests; tests/python/test_cuda.py: the
# UnsupportedOperationError without a driver). First run on a GPU 2026-12-04 (a lent H200,
# driver 580.159.04, wheel mode, 28 s): every step passed (81 differential cases, the PINN to
# w = 3.141593, the MLP step, placement, NCCL all_reduce on one GPU, 67 Python device tests);
# docs/performance.md "CUDA executor on an H200" has the matmul figures.
#
# Two modes:
#  * wheel mode (the lent H200: no Rust, LLVM or network; Python 3.12, numpy, torch, a CUDA
#    toolkit): first run `bash tests/gpu/prepare.sh` on the build machine (puts the wheel in
#    .gpu/), then on the GPU machine `bash tests/gpu/run.sh` with .gpu carried. libdevice
#    comes from /usr/local/cuda (or $QUABLA_CUDA_NVCC).
#  * build mode (a development machine with a GPU, Rust and LLVM 22; no .gpu/ wheel): builds
#    the workspace and also runs the Rust differential suite on cuda (QUABLA_TEST_DEVICE=cuda).
#
# Steps (each prints a summary line; a failed step is reported and the later steps still run,
# so one call on a lent machine shows every failure; the exit status is 1 if any failed; the
# whole output is also written to $OUT/gpu-run.log where $OUT is set):
#   0. the machine: GPU, driver, libcuda;
#   1. install the wheel (wheel mode) or build (build mode);
#   2. the registry lists cuda;
#   3. the differential check on cuda against the reference interpreter (f64 1e-12, f32
#      1e-5; typed gaps listed, not failures): tests/gpu/diff.py, and in build mode the Rust
#      differential suite too;
#   4. the README PINN trained with device="cuda" (w = 3.141593) and one MLP step (loss and
#      gradients) on cuda against the CPU; then placement (device_put, x.device), repeated
#      calls through the caching pool, and all_reduce over the GPUs through NCCL (where
#      libnccl loads) with the Python tests of the device names;
#   5. a 4096^3 f32 matmul on cuda timed (min and median of 10 after a warm-up) beside
#      cuBLAS's own figure through torch (TF32 off) where torch is installed.
# Usage: bash tests/gpu/run.sh        (from the repository root; a few minutes)
set -uo pipefail
cd "$(dirname "$0")/../.."
if [ -n "${OUT:-}" ] && [ -z "${QUABLA_GPU_LOGGED:-}" ]; then
  QUABLA_GPU_LOGGED=1 bash "$0" "$@" 2>&1 | tee "$OUT/gpu-run.log"; exit "${PIPESTATUS[0]}"
fi
step() { echo; echo "== $*"; }
export PYTHONUNBUFFERED=1
FAILED=()
# run_step NAME FUNCTION: runs the step in a subshell with -e; a failure is recorded, not fatal.
# (Not inside an `if`: bash ignores -e in a condition, subshells included.)
run_step() {
  step "$1"; ( set -e; "$2" ); local rc=$?
  if [ $rc -eq 0 ]; then echo "-- ok: $1"; else echo "-- FAILED ($rc): $1"; FAILED+=("$1"); fi
}

step "0. machine"
set -e   # the machine and the install must work; each later step is run_step's
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv,noheader || echo "nvidia-smi not found"
PY=python3
if ls .gpu/quabla-*.whl >/dev/null 2>&1; then MODE=wheel; else MODE=build; fi
echo "mode: $MODE"

if [ "$MODE" = wheel ]; then
  step "1. install the wheel"
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/quabla-site .gpu/quabla-*.whl
  export PYTHONPATH=/tmp/quabla-site
  if [ -z "${QUABLA_CUDA_NVCC:-}" ] && [ -f /usr/local/cuda/nvvm/libdevice/libdevice.10.bc ]; then export QUABLA_CUDA_NVCC=/usr/local/cuda; fi
  echo "libdevice from: ${QUABLA_CUDA_NVCC:-the nvidia-cuda-nvcc-cu12 wheel}"
else
  step "1. build"
  source scripts/env.sh
  PY="$QUABLA_VENV/bin/python"
  "$PY" -m pip install -q -r requirements-dev.txt || echo "(pip install failed: offline? using what is installed)"
  cargo build --release -p quabla-opt
  (cd python && VIRTUAL_ENV="$QUABLA_VENV" PATH="$QUABLA_VENV/bin:$PATH" maturin develop -q --release)
fi
$PY -c "import ctypes.util, sys; lib = ctypes.util.find_library('cuda'); print('libcuda:', lib); sys.exit(0 if lib else 'no libcuda: this script needs an NVIDIA GPU and its driver')"

set +e

registry() {
$PY -c "import quabla as qb; d = qb.devices(); print('devices:', d); assert 'cuda:0' in d and 'cuda' not in d, d"

}
run_step "2. the registry lists cuda:0 .. cuda:N-1" registry

differential() {
$PY tests/gpu/diff.py
if [ "$MODE" = build ]; then
  QUABLA_REQUIRE_GPU=1 cargo test --release -q -p quabla-runtime -- cuda 2>&1 | tail -3
  QUABLA_TEST_DEVICE=cuda cargo test --release -q -p quabla-tests --test integration differential -- --test-threads=1 2>&1 | tee /tmp/quabla-gpu-diff.log | grep -E "skipped on cuda|test result|FAILED|panicked" || true
  grep -q "test result: ok" /tmp/quabla-gpu-diff.log
fi

}
run_step "3. differential check on cuda vs the interpreter (f64 1e-12, f32 1e-5)" differential

pinn_mlp() {
$PY examples/pinn.py --device cuda | tee /tmp/quabla-gpu-pinn.log
grep -q "w = 3.141593" /tmp/quabla-gpu-pinn.log
$PY - <<'EOF'
# One MLP training step (loss and gradients of a 784-128-10 MLP on a batch of 64), cuda vs cpu.
import numpy as np, quabla as qb
rng = np.random.default_rng(0)
p = [qb.array(rng.standard_normal(s).astype(np.float32) * 0.05) for s in [(784, 128), (128,), (128, 10), (10,)]]
x = qb.array(rng.standard_normal((64, 784)).astype(np.float32))
onehot = qb.array(np.eye(10, dtype=np.float32)[rng.integers(0, 10, 64)])
def loss(p, x, t):
    h = qb.maximum(x @ p[0] + p[1], 0.0)
    z = h @ p[2] + p[3]
    z = z - qb.max(z, axis=1, keepdims=True)
    return -qb.mean(qb.sum(t * (z - qb.log(qb.sum(qb.exp(z), axis=1, keepdims=True))), axis=1))
outs = {d: qb.jit(qb.value_and_grad(loss), device=d)(p, x, onehot) for d in ["cpu", "cuda"]}
(lc, gc), (lg, gg) = outs["cpu"], outs["cuda"]
assert abs(lc.item() - lg.item()) <= 1e-5 * max(1.0, abs(lc.item())), (lc, lg)
for a, b in zip(gc, gg):
    np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-4, atol=1e-5)
print(f"MLP step on cuda: loss {lg.item():.6f} (cpu {lc.item():.6f}), gradients within 1e-4")
EOF

}
run_step "4. README PINN and an MLP step on cuda" pinn_mlp

placement() {
$PY - <<'EOF'
import ctypes.util, numpy as np, quabla as qb
gpus = [d for d in qb.devices() if d.startswith("cuda:")]
x = qb.device_put(qb.arange(12.0).reshape(3, 4), "cuda")
assert x.device == "cuda:0", x.device
f = qb.jit(lambda a: qb.tanh(a) * 2.0 + qb.sum(a), device="cuda")
ys = [f(x) for _ in range(50)]  # every call's outputs and temporaries come from the pool
want = np.tanh(np.arange(12.0).reshape(3, 4)) * 2.0 + 66.0
for y in ys:
    assert y.device == "cuda:0"
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-12)
assert qb.device_put(ys[0], "cuda:0") is ys[0] and qb.device_put(ys[0], "cpu").device == "cpu"
print(f"placement and residency on {gpus}: ok")
if ctypes.util.find_library("nccl"):
    parts = [qb.device_put(qb.full((1000,), float(k + 1)), g) for k, g in enumerate(gpus)]
    for r, g in zip(qb.distributed.all_reduce(parts, "sum"), gpus):
        assert r.device == g and np.all(r.numpy() == sum(range(1, len(gpus) + 1))), r
    print(f"all_reduce over {len(gpus)} GPU(s) through NCCL: ok")
else:
    print("all_reduce through NCCL: skipped (no libnccl; pip install nvidia-nccl-cu12)")
EOF
if $PY -c "import pytest" 2>/dev/null; then $PY -m pytest -q -p no:cacheprovider tests/python/test_cuda.py tests/python/test_device_put.py tests/python/test_all_reduce.py; fi

}
run_step "4b. placement, residency, the caching pool and all_reduce" placement

matmul_timing() {
$PY - <<'EOF'
import time, numpy as np, quabla as qb
n = 4096
a = qb.array(np.random.default_rng(0).standard_normal((n, n)).astype(np.float32))
b = qb.array(np.random.default_rng(1).standard_normal((n, n)).astype(np.float32))
f = qb.jit(lambda x, y: x @ y, device="cuda")
f(a, b).numpy()
ts = []
for _ in range(10):
    t = time.perf_counter(); f(a, b).numpy(); ts.append(time.perf_counter() - t)
fl = 2 * n**3
print(f"quabla cuda: min {min(ts)*1e3:.2f} ms, median {np.median(ts)*1e3:.2f} ms ({fl/min(ts)/1e12:.2f} TFLOP/s; host<->device copies of 192 MiB included)")
# Device-resident: the operands placed once, the product synchronised by reading its sum.
da, db = qb.device_put(a, "cuda"), qb.device_put(b, "cuda")
s = qb.jit(lambda t: qb.sum(t), device="cuda")
s(f(da, db)).numpy()
ts = []
for _ in range(10):
    t = time.perf_counter(); s(f(da, db)).numpy(); ts.append(time.perf_counter() - t)
print(f"quabla cuda, device-resident: min {min(ts)*1e3:.2f} ms, median {np.median(ts)*1e3:.2f} ms ({fl/min(ts)/1e12:.2f} TFLOP/s)")
try:
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    x = torch.randn(n, n, device="cuda"); y = torch.randn(n, n, device="cuda")
    x @ y; torch.cuda.synchronize(); ts = []
    for _ in range(10):
        t = time.perf_counter(); x @ y; torch.cuda.synchronize(); ts.append(time.perf_counter() - t)
    print(f"cuBLAS (torch, TF32 off, device-resident): min {min(ts)*1e3:.2f} ms ({fl/min(ts)/1e12:.2f} TFLOP/s)")
except ImportError:
    print("cuBLAS figure: torch not installed")
EOF
}
run_step "5. 4096^3 f32 matmul on cuda" matmul_timing

echo
if [ ${#FAILED[@]} -eq 0 ]; then echo "== tests/gpu/run.sh: all steps passed"; exit 0; fi
echo "== tests/gpu/run.sh: ${#FAILED[@]} step(s) failed:"; printf '   %s\n' "${FAILED[@]}"; exit 1
