"""The type stubs: ``mypy.stubtest`` checks python/quabla/_quabla.pyi against the built
extension (every class, function, method and signature, with quabla imported so the Tensor
methods of quabla/_tensor.py are attached); mypy checks examples/ and an annotated usage file
(tests/wheel/typed_usage.py, also run) against the package's types (``py.typed``), and must
reject each marked line of tests/wheel/typed_misuse.py; the generated parts are current."""

import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))
# The cache under target/ (ignored by git) makes later runs incremental.
CACHE = os.path.join(ROOT, "target", "mypy_cache")
MYPY = [sys.executable, "-m", "mypy", f"--cache-dir={CACHE}", "--follow-imports=silent", "--ignore-missing-imports", "--python-version=3.11"]

pytest.importorskip("mypy", reason="mypy is not installed (requirements-dev.txt)")


def _run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=kw.pop("cwd", ROOT), **kw)


def test_package_is_typed():
    assert os.path.isfile(os.path.join(ROOT, "python", "quabla", "py.typed"))


def test_stubtest_extension():
    r = _run([sys.executable, "-m", "mypy.stubtest", "--concise", f"--mypy-config-file={os.devnull}", "quabla._quabla"])
    assert r.returncode == 0, r.stdout + r.stderr


def test_tensor_methods_block_is_current():
    r = _run([sys.executable, os.path.join(ROOT, "scripts", "gen_stubs.py"), "--check"])
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_examples_and_typed_usage():
    files = sorted(os.path.join(ROOT, "examples", f) for f in os.listdir(os.path.join(ROOT, "examples")) if f.endswith(".py"))
    r = _run(MYPY + files + [os.path.join(HERE, "typed_usage.py")])
    assert r.returncode == 0, r.stdout + r.stderr
    r = _run([sys.executable, os.path.join(HERE, "typed_usage.py")])
    assert r.returncode == 0 and "typed usage: ok" in r.stdout, r.stdout + r.stderr


def test_mypy_rejects_misuse():
    path = os.path.join(HERE, "typed_misuse.py")
    expected = {i + 1 for i, line in enumerate(open(path)) if line.rstrip().endswith("# E")}
    r = _run(MYPY + [path])
    got = {int(m.group(1)) for m in re.finditer(r"typed_misuse\.py:(\d+): error", r.stdout)}
    assert r.returncode == 1 and got == expected, r.stdout + r.stderr
