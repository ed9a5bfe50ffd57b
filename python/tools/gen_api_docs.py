"""Regenerates the reference part of docs/api.md from the package's docstrings.

    python python/tools/gen_api_docs.py > /tmp/ref.md

docs/api.md = the hand-written guide (everything above the line `<!-- reference -->`) plus
this output. `--check` exits 1 when docs/api.md is stale.
"""

import inspect
import os
import re
import sys

import quabla as qb

GROUPS = [
    ("Arrays and dtypes", ["Tensor", "array", "asarray", "zeros", "ones", "full", "arange", "linspace", "eye",
                           "zeros_like", "ones_like", "full_like", "astype", "dtype", "DType", "float32", "float64",
                           "bool_", "bool", "int32", "int64", "devices", "device_put"]),
    ("Elementwise", ["abs", "sign", "negative", "exp", "exp2", "expm1", "log", "log1p", "sin", "cos", "tan", "tanh", "sqrt",
                     "rsqrt", "relu", "sigmoid", "softplus", "erf", "floor", "ceil", "round", "add", "subtract",
                     "multiply", "divide", "true_divide", "floor_divide", "remainder", "mod", "power", "logaddexp", "maximum",
                     "minimum", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
                     "bitwise_and", "bitwise_or", "bitwise_xor", "logical_and", "logical_or", "logical_xor",
                     "logical_not", "invert", "isfinite", "where", "clip", "nextafter", "spacing"]),
    ("Reductions", ["sum", "mean", "max", "min", "prod", "argmax", "argmin", "any", "all", "norm", "var", "std",
                    "logsumexp", "softmax"]),
    ("Products", ["matmul", "dot", "einsum", "tensordot"]),
    ("Shapes and indexing", ["reshape", "ravel", "transpose", "swapaxes", "expand_dims", "squeeze", "broadcast_to",
                             "concatenate", "concat", "stack", "split", "take", "take_along_axis"]),
    ("Transforms", ["jit", "export", "grad", "value_and_grad", "jvp", "vjp", "jacobian", "hessian", "vmap", "pmap", "device_put_replicated", "device_put_sharded", "ShapeDtype",
                    "Lowered", "Compiled", "Tracer",
                    "jacfwd", "jacrev", "linearize"]),
    ("Control flow", ["cond", "switch", "while_loop", "fori_loop", "stop_gradient"]),
    ("Loops and dynamic slicing", ["scan", "associative_scan", "dynamic_slice", "dynamic_update_slice"]),
    ("Custom derivatives", ["custom_jvp", "custom_vjp"]),
    ("Convolutions, windows and cumulative reductions", ["conv_general_dilated", "conv_transpose", "conv", "convolve", "correlate",
                                                        "reduce_window", "max_pool", "avg_pool", "cumsum", "cumprod",
                                                        "cummax", "cummin", "cumlogsumexp"]),
    ("quabla.optim", ["optim.Adam", "optim.AdamW", "optim.SGD", "optim.Trainer", "optim.Trainer.step",
                      "optim.Trainer.loss", "optim.Trainer.params", "optim.Trainer.opt_state", "optim.Trainer.fit",
                      "optim.Trainer.steps"]),
    ("quabla.optim.schedules", ["optim.schedules." + n for n in qb.optim.schedules.__all__]),
    ("quabla.sharding and quabla.distributed (the xla executor)", ["sharding.Mesh", "sharding.make_mesh", "sharding.PartitionSpec",
                                                                   "sharding.NamedSharding", "sharding.device_put",
                                                                   "sharding.make_array_from_process_local_data", "sharding.devices",
                                                                   "sharding.local_devices", "sharding.device_count",
                                                                   "sharding.process_index", "sharding.process_count",
                                                                   "sharding.available", "distributed.value_and_grad",
                                                                   "distributed.initialize", "distributed.shutdown", "distributed.all_reduce"]),
    ("quabla.ops", ["ops.segment_sum", "ops.segment_prod", "ops.segment_max", "ops.segment_min"]),
    ("quabla.linalg", ["linalg." + n for n in qb.linalg.__all__ if not n.endswith("Result")]),
    ("quabla.scipy.linalg", ["scipy.linalg." + n for n in qb.scipy.linalg.__all__ if hasattr(getattr(qb.scipy.linalg, n), "__doc__")]),
    ("Errors", ["QuablaError", "UnsupportedOperationError", "TracerError", "errors.ConcretizationTypeError",
                "errors.TracerBoolConversionError", "errors.TracerIntegerConversionError", "errors.TracerArrayConversionError",
                "errors.UnexpectedTracerError", "errors.NonConcreteBooleanIndexError", "RetraceLimitError", "ShapeError",
                "DTypeError", "BatchingError", "UnboundAxisNameError",
                "ArgumentError", "tree.PyTreeError", "ArraySizeError", "OutOfMemoryError", "ArgumentTypeError", "ZeroStepError",
                "InvalidIndexError", "InvalidArgumentError", "ScalarOverflowError"]),
    ("quabla.tree", ["tree.flatten", "tree.unflatten", "tree.map", "tree.TreeDef",
                     "tree.leaves", "tree.structure", "tree.reduce", "tree.all", "tree.flatten_with_path",
                     "tree.leaves_with_path", "tree.map_with_path", "tree.keystr", "tree.SequenceKey", "tree.DictKey",
                     "tree.GetAttrKey", "tree.FlattenedIndexKey", "tree.register_pytree_node",
                     "tree.register_pytree_with_keys", "tree.register_dataclass", "tree.static", "tree.register_static",
                     "tree.transpose", "tree.broadcast", "tree.reduce_associative", "tree.flatten_one_level",
                     "tree.flatten_one_level_with_keys", "tree.is_tree_node", "tree.treedef_children", "tree.treedef_tuple"]),
    ("quabla.typing", ["Array", "typing.ArrayLike", "typing.DTypeLike"]),
    ("quabla.test_util", ["test_util.check_grads"]),
    ("Host callbacks", ["pure_callback", "experimental.io_callback"]),
    ("quabla.debug", ["debug.print", "debug.callback", "debug.breakpoint"]),
    ("Unsigned integers and bit operations", ["uint8", "uint32", "iinfo", "shift_left", "shift_right_logical",
                                               "shift_right_arithmetic", "left_shift", "right_shift",
                                               "bitwise_left_shift", "bitwise_right_shift", "bitwise_not",
                                               "bitwise_invert", "population_count", "bitwise_count"]),
    ("quabla.random", ["random." + n for n in qb.random.__all__]),
    ("NumPy breadth", ["square", "reciprocal", "cbrt", "log2", "log10", "sinh", "cosh", "arcsin", "arccos", "arctan", "arctan2",
                       "arcsinh", "arccosh", "arctanh", "asin", "acos", "atan", "atan2", "asinh", "acosh", "atanh",
                       "hypot", "isnan", "isinf", "isposinf", "isneginf", "nan_to_num", "isclose", "allclose",
                       "outer", "inner", "vdot", "kron", "diag", "diagonal", "trace", "tril", "triu", "tri",
                       "meshgrid", "atleast_1d", "atleast_2d", "vstack", "hstack", "column_stack", "pad", "roll",
                       "flip", "fliplr", "flipud", "repeat", "tile", "diff", "sort", "argsort", "top_k", "searchsorted",
                       "digitize", "bincount", "histogram", "interp", "quantile", "percentile", "median"]),
    ("More NumPy: constants, elementwise, reductions, statistics, polynomials", sorted(qb._math.__all__)),
    ("More NumPy: construction, layout and index helpers", sorted(qb._shape.__all__)),
    ("More NumPy: selections with a static size, unique, sets, lexsort", sorted(n for n in qb._select.__all__ if n != "where")),
    ("quabla.lax", ["lax." + n for n in qb.lax.__all__]),
    ("quabla.tree_util", ["tree_util." + n for n in qb.tree_util.__all__]),
    ("JAX's top level", sorted(qb._compat.__all__)),
    ("More of JAX's top level: settings, caches, closure_convert, shard_map", sorted(n for n in qb._compat_more.__all__ if n != "version") + ["shard_map", "experimental.shard_map.shard_map", "sharding.AbstractMesh"]),
    ("quabla.profiler", ["profiler." + n for n in qb.profiler.__all__]),
    ("quabla.nn", ["nn." + n for n in qb.nn.__all__]),
    ("quabla.scipy", ["scipy.special." + n for n in qb.scipy.special.__all__]
     + ["scipy.stats.norm." + n for n in ("pdf", "logpdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf")]
     + ["scipy.stats." + n for n in qb.scipy.stats.__all__ if n != "norm"]),
    ("quabla.scipy.optimize and quabla.scipy.sparse.linalg", ["scipy.optimize." + n for n in qb.scipy.optimize.__all__]
     + ["scipy.sparse.linalg." + n for n in qb.scipy.sparse.linalg.__all__]),
    ("quabla.nn.initializers", ["nn.initializers." + n for n in qb.nn.initializers.__all__ if n != "Initializer"]),
    ("quabla.image", ["image." + n for n in qb.image.__all__]),
    ("quabla.experimental.ode and quabla.flatten_util", ["experimental.ode." + n for n in qb.experimental.ode.__all__]
     + ["flatten_util." + n for n in qb.flatten_util.__all__]),
    ("quabla.lax.linalg", ["lax.linalg." + n for n in qb.lax.linalg.__all__]),
    ("quabla.scipy.signal, integrate, ndimage, interpolate", ["scipy.signal." + n for n in qb.scipy.signal.__all__]
     + ["scipy.integrate." + n for n in qb.scipy.integrate.__all__] + ["scipy.ndimage." + n for n in qb.scipy.ndimage.__all__]
     + ["scipy.interpolate." + n for n in qb.scipy.interpolate.__all__]),
    ("quabla.scipy.spatial.transform and quabla.scipy.cluster.vq", ["scipy.spatial.transform." + n for n in qb.scipy.spatial.transform.__all__]
     + ["scipy.cluster.vq." + n for n in qb.scipy.cluster.vq.__all__]),
    ("quabla.experimental.sparse", ["experimental.sparse." + n for n in qb.experimental.sparse.__all__]),
    ("quabla.experimental.checkify", ["experimental.checkify." + n for n in qb.experimental.checkify.__all__]),
    ("quabla.example_libraries.stax", ["example_libraries.stax." + n for n in qb.example_libraries.stax.__all__]),
    ("quabla.example_libraries.optimizers", ["example_libraries.optimizers." + n for n in qb.example_libraries.optimizers.__all__]),
]

# Type aliases (no docstring of their own): the text documenting them.
_SCALAR_TYPES = ("generic", "number", "inexact", "floating", "integer", "signedinteger", "unsignedinteger", "complexfloating", "character", "flexible")
ALIASES = {
    **{n: f"NumPy's abstract scalar type `numpy.{n}`, as `jax.numpy.{n}` (for `qb.issubdtype(x.dtype, qb.{n})`)." for n in _SCALAR_TYPES},
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
        # Defaults that are functions show without their address (stable output).
        return re.sub(r" at 0x[0-9a-f]+>", ">", str(inspect.signature(obj)))
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
    missing = [n for n in qb.__all__ if n not in documented and n not in ("tree", "optim", "typing", "test_util", "random", "linalg", "nn", "ops", "scipy", "sharding", "distributed", "debug", "lax", "tree_util", "image", "experimental", "flatten_util", "example_libraries", "profiler", "version")]
    missing += [n for n in sorted(qb._SHADOWING) if n not in documented]
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
