"""The wheel: scripts/wheel.sh --dev builds it (the dev profile, reusing target/debug; the
release wheel is `scripts/wheel.sh`, same steps), auditwheel gives it a manylinux tag with
libzstd vendored and nothing from the LLVM prefix, and installed in a fresh
virtualenv it passes tests/wheel/smoke.py with /usr/lib/llvm-22 hidden under an empty tmpfs
(`unshare -m`, which needs root or user namespaces; the test skips, saying why, where neither
works)."""

import glob
import os
import re
import shutil
import subprocess
import sys
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LLVM = "/usr/lib/llvm-22"


def _hide_llvm_prefix():
    """The command prefix that runs a command with LLVM hidden, or None with the reason."""
    if not shutil.which("unshare"):
        return None, "unshare(1) is not installed"
    if not os.path.isdir(LLVM):
        return [], None
    for cmd in (["unshare", "-m"], ["unshare", "-r", "-m"]):
        r = subprocess.run(cmd + ["sh", "-c", f"mount -t tmpfs tmpfs {LLVM} && test -z \"$(ls -A {LLVM})\""], capture_output=True, text=True)
        if r.returncode == 0:
            return cmd, None
    return None, f"cannot mount over {LLVM} in a new mount namespace: {r.stderr.strip()}"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    r = subprocess.run([os.path.join(ROOT, "scripts", "wheel.sh"), "--dev", str(out)], capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stdout + r.stderr
    wheels = [p for p in out.glob("quabla-*.whl")]
    assert len(wheels) == 1, list(out.iterdir())
    return wheels[0], r.stdout


def test_wheel_contents_and_tag(wheel):
    path, log = wheel
    assert "manylinux_" in path.name and path.name.endswith("_x86_64.whl"), path.name
    names = zipfile.ZipFile(path).namelist()
    assert "quabla/py.typed" in names and "quabla/_quabla.pyi" in names and "quabla/_quabla.abi3.so" in names
    libs = [os.path.basename(n) for n in names if n.startswith("quabla.libs/") and not n.endswith("/")]
    # At most the compression libraries are vendored (libzstd; libz is in the manylinux set):
    # MLIR and LLVM are linked into the extension.
    assert all(n.startswith(("libz-", "libzstd-")) for n in libs), libs
    assert not any("LLVM" in n or "MLIR" in n or n.startswith("quabla/bin/") for n in names), names
    # The OpenMP runtime compiled code dlopens for threads, with its licence.
    assert "quabla/libomp.so.5" in names and "quabla/libomp.LICENSE" in names, names
    record = zipfile.ZipFile(path).read(next(n for n in names if n.endswith(".dist-info/RECORD"))).decode()
    assert re.search(r"^quabla/libomp\.so\.5,sha256=[-_A-Za-z0-9]{43},\d+$", record, re.M), record
    assert any(n.endswith("entry_points.txt") for n in names)
    ep = next(n for n in names if n.endswith("entry_points.txt"))
    assert re.search(r"^quabla-opt\s*=\s*_quabla_opt:main$", zipfile.ZipFile(path).read(ep).decode(), re.M)
    assert "_quabla_opt.py" in names
    tag = path.name.split("-")[-1][: -len(".whl")]
    assert f'is consistent with the following platform tag: "{tag}"' in " ".join(log.split()), log


def test_installed_wheel_without_llvm(wheel, tmp_path):
    hide, why = _hide_llvm_prefix()
    if hide is None:
        pytest.skip(why)
    path, _ = wheel
    env_dir = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True, timeout=300)
    py = str(env_dir / "bin" / "python")
    r = subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", str(path)], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    # A clean environment: no PYTHONPATH, no development venv, no LLVM on PATH; run from a
    # directory outside the checkout so only the installed package can be imported.
    env = {"PATH": f"{env_dir / 'bin'}:/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path), "QUABLA_SMOKE_REPO": ROOT, "QUABLA_SMOKE_HIDDEN": "1" if hide else "0"}
    smoke = os.path.join(ROOT, "tests", "wheel", "smoke.py")
    # Every LLVM prefix is hidden, not only LLVM 22's: Debian's libomp.so.5 lives in
    # /usr/lib/llvm-19, and a machine without LLVM has none, so the threads smoke.py checks
    # must run on the copy the wheel ships.
    mounts = "".join(f"mount -t tmpfs tmpfs {d} && " for d in sorted(glob.glob("/usr/lib/llvm-*")) if os.path.isdir(d) and not os.path.islink(d))
    script = f"{mounts}exec {py} {smoke}" if hide else f"exec {py} {smoke}"
    r = subprocess.run(hide + ["sh", "-c", script], capture_output=True, text=True, timeout=900, cwd=tmp_path, env=env)
    assert r.returncode == 0 and "wheel smoke: all checks passed" in r.stdout, r.stdout + r.stderr
