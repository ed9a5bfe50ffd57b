"""Regenerates the Tensor-methods block of python/stubs/extension.pyi: the operators and
methods that quabla/_tensor.py attaches to the Rust ``Tensor`` class at import, with the
parameter names, kinds and defaults of the functions attached (so ``mypy.stubtest`` agrees),
arguments typed ``Any`` and results ``Tensor``. Run after changing quabla/_tensor.py:

    .venv/bin/python scripts/gen_stubs.py && cargo run -p quabla-opt -- --print-pyi > python/quabla/_quabla.pyi

``--check`` exits 1 when the block is stale instead of writing it.
"""

import inspect
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STUB = os.path.join(ROOT, "python", "stubs", "extension.pyi")
BEGIN = "    # <tensor-methods>"
END = "    # </tensor-methods>"

# Results that are not a Tensor.
RESULTS = {
    "__iter__": "collections.abc.Iterator[Tensor]",
    "numpy": "np.ndarray",
    "__array__": "np.ndarray",
    "__repr__": "str",
    "__str__": "str",
    "__format__": "str",
    "item": "bool | int | float",
    "__array_ufunc__": "Any",
    # Arrays are immutable: item assignment raises ArgumentTypeError (quabla/_tensor.py).
    "__setitem__": "None",
    # Comparisons give a bool Tensor, not object's bool (as NumPy's stubs do).
    "__eq__": "Tensor:  # type: ignore[override]",
    "__ne__": "Tensor:  # type: ignore[override]",
}
PROPERTIES = {"T": "Tensor", "at": "Any", "mT": "Tensor", "real": "Tensor", "imag": "Tensor", "nbytes": "int"}
RESULTS["nonzero"] = "tuple[Tensor, ...]"


def _param(p):
    ann = "" if p.name == "self" else ": Any"
    if p.kind is p.VAR_POSITIONAL:
        return f"*{p.name}{ann}"
    if p.kind is p.VAR_KEYWORD:
        return f"**{p.name}{ann}"
    return f"{p.name}{ann}" + ("" if p.default is p.empty else " = ...")


def _signature(name, fn):
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    out, kinds = [], [p.kind for p in params]
    for i, p in enumerate(params):
        text = _param(p) if i else p.name
        if p.kind is p.KEYWORD_ONLY and (i == 0 or kinds[i - 1] not in (p.KEYWORD_ONLY, p.VAR_POSITIONAL)):
            out.append("*")
        out.append(text)
        if p.kind is p.POSITIONAL_ONLY and (i + 1 == len(params) or kinds[i + 1] is not p.POSITIONAL_ONLY):
            out.append("/")
    ret, _, comment = RESULTS.get(name, "Tensor").partition(":")
    return f"    def {name}({', '.join(out)}) -> {ret}: ...{comment}"


def block():
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import quabla
    from quabla import _tensor

    lines = []
    for name, fn in {**_tensor._METHODS, **_tensor._TENSOR_ONLY, **_tensor.late_methods(quabla)}.items():
        if isinstance(fn, property):
            lines.append(f"    @property\n    def {name}(self) -> {PROPERTIES[name]}: ...")
        elif fn is None:
            lines.append(f"    {name}: ClassVar[None]  # type: ignore[assignment]")
        elif isinstance(fn, (int, float)):
            lines.append(f"    {name}: ClassVar[{type(fn).__name__}]")
        else:
            lines.append(_signature(name, fn))
    return "\n".join(lines) + "\n"


def main():
    text = open(STUB).read()
    head, rest = text.split(BEGIN + "", 1)
    first, rest = rest.split("\n", 1)
    _, tail = rest.split(END, 1)
    new = head + BEGIN + first + "\n" + block() + END + tail
    if "--check" in sys.argv:
        if new != text:
            sys.exit("python/stubs/extension.pyi: the Tensor-methods block is stale; run scripts/gen_stubs.py")
        return
    with open(STUB, "w") as f:
        f.write(new)


if __name__ == "__main__":
    main()
