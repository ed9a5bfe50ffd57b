"""Quabla: a differentiable array compiler with a JAX-shaped API over a Rust/MLIR core.

Example:
    >>> import quabla as qb
    >>> f = qb.jit(lambda x: qb.sum(qb.sin(x) ** 2))
    >>> round(f(qb.linspace(0.0, 1.0, 5)).item(), 6)
    1.463762
"""

from . import _quabla
from . import dtypes as _dtypes_mod
from .dtypes import DType, bool_, dtype, float32, float64, int32, int64
from .dtypes import iinfo, uint8, uint32

_quabla.register_dtypes(list(_dtypes_mod.BY_CODE))

from . import tree  # noqa: E402
from ._ops import (  # noqa: E402
    abs,
    add,
    all,
    any,
    arange,
    argmax,
    argmin,
    array,
    asarray,
    astype,
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    broadcast_to,
    ceil,
    clip,
    concat,
    concatenate,
    cos,
    device_put,
    devices,
    divide,
    dot,
    einsum,
    equal,
    erf,
    exp,
    exp2,
    expand_dims,
    expm1,
    eye,
    floor,
    floor_divide,
    full,
    full_like,
    greater,
    greater_equal,
    invert,
    isfinite,
    less,
    less_equal,
    linspace,
    log,
    log1p,
    logaddexp,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    logsumexp,
    matmul,
    max,
    maximum,
    mean,
    min,
    minimum,
    mod,
    multiply,
    negative,
    norm,
    not_equal,
    ones,
    ones_like,
    power,
    prod,
    ravel,
    relu,
    remainder,
    reshape,
    round,
    rsqrt,
    sigmoid,
    sign,
    sin,
    softmax,
    softplus,
    split,
    sqrt,
    squeeze,
    stack,
    std,
    subtract,
    sum,
    swapaxes,
    tan,
    tanh,
    tensordot,
    transpose,
    true_divide,
    var,
    zeros,
    zeros_like,
)
from ._quabla import Tensor  # noqa: E402
from ._tensor import install as _install  # noqa: E402
from ._trace import Tracer  # noqa: E402
from .errors import (  # noqa: E402
    BatchingError,
    DTypeError,
    QuablaError,
    RetraceLimitError,
    ShapeError,
    TracerError,
    UnboundAxisNameError,
    UnsupportedOperationError,
)
from .errors import ArgumentTypeError, ArraySizeError, InvalidArgumentError, InvalidIndexError, OutOfMemoryError, ScalarOverflowError, ZeroStepError  # noqa: E402
from .jit import Compiled, Lowered, ShapeDtype, export, jit  # noqa: E402
from ._control import cond, fori_loop, stop_gradient, switch, while_loop  # noqa: E402
from ._control import associative_scan, scan  # noqa: E402
from ._ops import dynamic_slice, dynamic_update_slice  # noqa: E402
from ._custom import custom_jvp, custom_vjp  # noqa: E402
from ._transforms import grad, hessian, jacobian, jvp, value_and_grad, vjp, vmap  # noqa: E402
from ._callback import pure_callback  # noqa: E402
from ._transforms import device_put_replicated, device_put_sharded, jacfwd, jacrev, linearize, pmap  # noqa: E402
from ._staging import ArgumentError  # noqa: E402
from . import optim  # noqa: E402
from . import linalg  # noqa: E402
from . import ops  # noqa: E402
from . import scipy  # noqa: E402
from . import typing  # noqa: E402
from .typing import Array  # noqa: E402
from . import test_util  # noqa: E402
from . import debug  # noqa: E402
from ._bits import (  # noqa: E402
    bitwise_count,
    bitwise_invert,
    bitwise_left_shift,
    bitwise_not,
    bitwise_right_shift,
    left_shift,
    population_count,
    right_shift,
    shift_left,
    shift_right_arithmetic,
    shift_right_logical,
)
from . import random  # noqa: E402
from ._search import bincount, digitize, histogram, interp, median, percentile, quantile, searchsorted  # noqa: E402
from ._conv import avg_pool, conv, conv_general_dilated, conv_transpose, convolve, correlate, cumlogsumexp, cummax, cummin, cumprod, cumsum, max_pool, reduce_window  # noqa: E402
from ._numpy import (  # noqa: E402
    acos,
    acosh,
    allclose,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    argsort,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    atleast_1d,
    atleast_2d,
    cbrt,
    column_stack,
    cosh,
    diag,
    diagonal,
    diff,
    flip,
    fliplr,
    flipud,
    hstack,
    hypot,
    inner,
    isclose,
    isinf,
    isnan,
    isneginf,
    isposinf,
    kron,
    log10,
    log2,
    meshgrid,
    nan_to_num,
    outer,
    pad,
    reciprocal,
    repeat,
    roll,
    sinh,
    sort,
    square,
    tile,
    top_k,
    trace,
    tri,
    tril,
    triu,
    vdot,
    vstack,
)
from . import nn  # noqa: E402
from . import scipy  # noqa: E402
from . import sharding  # noqa: E402
from . import distributed  # noqa: E402
from . import _xla  # noqa: E402,F401 - registers the xla executor with jit (imports no jax)

_install()
Tensor.__module__ = "quabla"
tree.LEAF_TYPES.update((Tensor, Tracer))

try:
    from importlib.metadata import version as _version

    __version__ = _version("quabla")
except Exception:  # pragma: no cover - running from a source tree without metadata
    __version__ = "0.0.0"

from ._indexing import take, take_along_axis  # noqa: E402
from ._math import *  # noqa: E402,F401,F403
from ._shape import *  # noqa: E402,F401,F403
from ._select import *  # noqa: E402,F401,F403
from . import lax  # noqa: E402
from . import tree_util  # noqa: E402
from . import image  # noqa: E402
from . import experimental  # noqa: E402
from . import flatten_util  # noqa: E402
from . import example_libraries  # noqa: E402
from ._compat import *  # noqa: E402,F401,F403
from ._compat_more import *  # noqa: E402,F401,F403
from ._shard_map import shard_map  # noqa: E402
from . import profiler  # noqa: E402
from ._nextafter import nextafter, spacing  # noqa: E402

bool = bool_  # noqa: A001 - jax.numpy's alias (an attribute, not in __all__: it shadows the builtin)
import sys as _sys  # noqa: E402
from ._tensor import install_late as _install_late  # noqa: E402

_install_late(_sys.modules[__name__])

# Names that shadow builtins (abs, all, any, max, min, round, sum) are attributes of the
# package but not in __all__, so `from quabla import *` does not shadow the builtins.
import builtins as _builtins  # noqa: E402

_SHADOWING = {n for n in dir() if not n.startswith("_") and hasattr(_builtins, n)}
__all__ = sorted(
    n
    for n in dir()
    if not n.startswith("_") and n not in _SHADOWING and n not in {"tree", "dtypes", "errors", "jit_module", "optim", "typing", "test_util", "random", "linalg", "nn", "ops", "scipy", "sharding", "distributed", "debug", "lax", "tree_util", "image", "experimental", "flatten_util", "example_libraries", "profiler", "version"}
) + ["tree", "optim", "typing", "test_util", "random", "linalg", "nn", "ops", "scipy", "sharding", "distributed", "debug", "lax", "tree_util", "image", "experimental", "flatten_util", "example_libraries", "profiler", "version"]

from . import numpy  # noqa: E402,F401 - `import quabla.numpy as jnp` (not in __all__: it would shadow NumPy)
