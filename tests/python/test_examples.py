"""Every example's ``--smoke`` mode, run as a user would (a subprocess from the repository
root): it exits 0, its loss falls (the last printed loss is below the first), and the
example-specific output is there: the PINN's plot file is a PNG (by its magic bytes), the MLP
and CNN print a test accuracy above chance, the GPT prints a sample of the requested prompt.
The default PINN run (no flags) keeps printing ``w = 3.141593`` (tests/python/test_pinn.py)."""

import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOSS = re.compile(r"(?<!chance )\b(?:loss|nll)\s*=?\s*(-?[0-9.]+(?:e[-+]?[0-9]+)?)")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run(name, *args):
    r = subprocess.run([sys.executable, os.path.join("examples", name), *args], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{name} {args} failed:\n{r.stdout}\n{r.stderr}"
    return r.stdout


def losses(out):
    return [float(m.group(1)) for m in LOSS.finditer(out)]


def assert_falls(out):
    ls = losses(out)
    assert len(ls) >= 2, f"expected at least two losses in:\n{out}"
    assert ls[-1] < ls[0], f"loss did not fall ({ls[0]} -> {ls[-1]}):\n{out}"


@pytest.mark.parametrize("name", ["rk4.py", "rnn.py", "gp.py"])
def test_smoke_loss_falls(name):
    assert_falls(run(name, "--smoke"))


def test_pinn_smoke_and_plot(tmp_path):
    png = tmp_path / "pinn.png"
    out = run("pinn.py", "--smoke", "--plot", str(png))
    assert_falls(out)
    assert re.search(r"^w = [0-9.]+, loss = ", out, re.M), out
    data = png.read_bytes()
    assert data[:8] == PNG_MAGIC and len(data) > 1000


@pytest.mark.parametrize("name", ["mlp_digits.py", "cnn_digits.py"])
def test_digits_smoke(name):
    pytest.importorskip("sklearn")
    out = run(name, "--smoke")
    assert_falls(out)
    acc = float(re.search(r"test accuracy ([0-9.]+)", out).group(1))
    assert acc > 0.2, out  # 10 classes: chance is 0.1; the full runs reach > 0.95


def test_gpt_smoke():
    out = run("gpt.py", "--smoke")
    assert_falls(out)
    chance = float(re.search(r"chance loss ([0-9.]+)", out).group(1))
    assert losses(out)[-1] < chance - 0.5, out
    assert re.search(r"--- sample \('Shall I'\):\nShall I", out), out


def test_gpt_text_is_in_the_repository_with_its_source():
    path = os.path.join(ROOT, "examples", "data", "sonnets.txt")
    with open(path, encoding="utf-8") as f:
        head = f.readline()
    assert head.startswith("Source: ") and "public domain" in head
    assert os.path.getsize(path) < 300_000
