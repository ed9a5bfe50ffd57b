"""Regenerates the reference part of docs/api.md from the package's docstrings.

    python python/tools/gen_api_docs.py > /tmp/ref.md

docs/api.md = the hand-written guide (everything above the line `<!-- reference -->`) plus
this output. `--check` exits 1 when docs/api.md is stale.
"""

import inspect
import os
import sys

import quabla as qb

GROUPS = [
    ("Arrays and dtypes", ["Tensor", "array", "asarray", "zeros", "ones", "full", "arange", "linspace", "eye",
                           "zeros_like", "ones_like", "full_like", "astype", "dtype", "DType", "float32", "float64",
                           "bool_", "int32", "int64", "devices"]),
    ("Elementwise", ["abs", "sign", "negative", "exp", "exp2", "expm1", "log", "log1p", "sin", "cos", "tan", "tanh", "sqrt",
                     "rsqrt", "relu", "sigmoid", "softplus", "erf", "floor", "ceil", "round", "add", "subtract",
                     "multiply", "divide", "true_divide", "floor_divide", "remainder", "mod", "power", "logaddexp", "maximum",
                     "minimum", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
                     "bitwise_and", "bitwise_or", "bitwise_xor", "logical_and", "logical_or", "logical_xor",
                     "logical_not", "invert", "isfinite", "where", "clip"]),
    ("Reductions", ["sum", "mean", "max", "min", "prod", "argmax", "argmin", "any", "all", "norm", "var", "std",
                    "logsumexp", "softmax"]),
    ("Products", ["matmul", "dot", "einsum", "tensordot"]),
    ("Shapes and indexing", ["reshape", "ravel", "transpose", "swapaxes", "expand_dims", "squeeze", "broadcast_to",
                             "concatenate", "concat", "stack", "split", "take"]),
    ("Transforms", ["jit", "export", "grad", "value_and_grad", "jvp", "vjp", "jacobian", "hessian", "vmap", "ShapeDtype",
                    "Lowered", "Compiled", "Tracer",
                    "jacfwd", "jacrev", "linearize"]),
    ("Control flow", ["cond", "switch", "while_loop", "fori_loop", "stop_gradient"]),
    ("quabla.optim", ["optim.Adam", "optim.SGD"]),
    ("Errors", ["QuablaError", "UnsupportedOperationError", "TracerError", "RetraceLimitError", "ShapeError",
                "DTypeError", "BatchingError",
                "ArgumentError", "tree.PyTreeError", "ArraySizeError", "OutOfMemoryError", "ArgumentTypeError", "ZeroStepError"]),
    ("quabla.tree", ["tree.flatten", "tree.unflatten", "tree.map", "tree.TreeDef",
                     "tree.leaves", "tree.structure", "tree.reduce", "tree.all", "tree.flatten_with_path",
                     "tree.leaves_with_path", "tree.map_with_path", "tree.keystr", "tree.SequenceKey", "tree.DictKey",
                     "tree.GetAttrKey", "tree.FlattenedIndexKey", "tree.register_pytree_node",
                     "tree.register_pytree_with_keys", "tree.register_dataclass"]),
    ("quabla.typing", ["Array", "typing.ArrayLike", "typing.DTypeLike"]),
    ("quabla.test_util", ["test_util.check_grads"]),
]

# Type aliases (no docstring of their own): the text documenting them.
ALIASES = {
    "typing.ArrayLike": "What the ops accept as an array: `qb.Array` (a Tensor or a tracer), a NumPy array or "
    "scalar, or a Python `bool`/`int`/`float` (as `jax.typing.ArrayLike`).\n\n"
    "    >>> def f(x: qb.typing.ArrayLike) -> qb.Array: ...",
    "typing.DTypeLike": "What `qb.dtype` accepts: a `qb.DType`, a name such as `\"float32\"`, a NumPy dtype or a "
    "Python type.",
}


def _get(name):
    obj = qb
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def _sig(obj):
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return ""


def reference():
    out = ["## Reference", ""]
    documented = set()
    for title, names in GROUPS:
        out += [f"### {title}", ""]
        for n in names:
            obj = _get(n)
            documented.add(n)
            if n in ALIASES:
                out += [f"#### `qb.{n}`", "", ALIASES[n], ""]
                continue
            if isinstance(obj, qb.DType):
                out += [f"#### `qb.{n}`", "", f"The {obj.name} dtype (MLIR `{obj.mlir}`, NumPy `{obj.np}`).", ""]
                continue
            kind = "class " if inspect.isclass(obj) else ""
            sig = _sig(obj) if not inspect.isclass(obj) or n in ("ShapeDtype",) else ""
            doc = inspect.getdoc(obj) or ""
            out += [f"#### {kind}`qb.{n}{sig}`", "", doc, ""]
    missing = [n for n in qb.__all__ if n not in documented and n not in ("tree", "optim", "typing", "test_util")]
    missing += [n for n in ("abs", "all", "any", "max", "min", "round", "sum") if n not in documented]
    if missing:
        raise SystemExit(f"undocumented public names: {missing}")
    return "\n".join(out).rstrip() + "\n"


def main():
    ref = reference()
    if "--check" in sys.argv:
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        text = open(os.path.join(root, "docs", "api.md")).read()
        marker = "<!-- reference -->\n"
        if text.split(marker, 1)[-1] != ref:
            print("docs/api.md is stale: regenerate with python/tools/gen_api_docs.py", file=sys.stderr)
            sys.exit(1)
        return
    sys.stdout.write(ref)


if __name__ == "__main__":
    main()
