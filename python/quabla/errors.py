"""Quabla's exception hierarchy.

Every exception subclasses :class:`QuablaError` and the builtin exception that code catching
``ValueError``/``TypeError`` expects::

    QuablaError(Exception)
    ├── UnsupportedOperationError(QuablaError, ValueError, NotImplementedError)  .op, .device
    ├── TracerError(QuablaError, TypeError)
    │   ├── ConcretizationTypeError(TracerError)  a concrete value needed, a traced one given
    │   │   └── TracerBoolConversionError          bool() / `if` on a traced value
    │   ├── TracerIntegerConversionError           int() / an index from a traced value
    │   ├── TracerArrayConversionError             np.asarray of a traced value
    │   ├── UnexpectedTracerError                  a tracer used outside its trace
    │   └── NonConcreteBooleanIndexError(TracerError, IndexError)  a traced boolean mask
    ├── RetraceLimitError(QuablaError, ValueError)                               .keys
    ├── ArraySizeError(QuablaError, ValueError, MemoryError)  a tensor too big to exist
    ├── OutOfMemoryError(QuablaError, MemoryError)  a failed host allocation
    ├── ArgumentTypeError(QuablaError, TypeError)   an argument of the wrong Python type
    ├── ZeroStepError(QuablaError, ZeroDivisionError, ValueError)  a range with step 0
    ├── ScalarOverflowError(QuablaError, OverflowError)  a Python int outside a dtype's range
    ├── InvalidIndexError(QuablaError, IndexError)  an index out of bounds or of a bad form
    ├── InvalidArgumentError(QuablaError, ValueError)  an argument value a function rejects
    ├── UnboundAxisNameError(QuablaError, NameError)  a collective naming no enclosing vmap axis
    ├── ShapeError(QuablaError, ValueError)     shapes that do not fit an op
    │   └── BatchingError(ShapeError)           vmap axes/sizes/structures that do not fit
    └── DTypeError(QuablaError, TypeError)      dtypes an op does not accept or cannot mix

Messages name the op and the offending shapes/dtypes; errors raised while tracing also carry
the user's source location.

Errors of the Rust core are raised as the class of their Rust variant (never chosen by the
message text); each class's docstring lists the variants it stands for, and
``quabla._quabla.error_variants()`` lists every variant with its class. A violated shape or
dtype rule of docs/spec.md also sets ``op``, ``constraint`` (the spec's label, e.g.
``dot_general_c5``), ``operand`` (the index of the operand at fault), ``expected`` and ``actual``
(types as MLIR text) on the exception; they are None where unknown.
"""

__all__ = [
    "QuablaError",
    "UnsupportedOperationError",
    "TracerError",
    "ConcretizationTypeError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "TracerArrayConversionError",
    "UnexpectedTracerError",
    "NonConcreteBooleanIndexError",
    "RetraceLimitError",
    "ShapeError",
    "DTypeError",
    "ArraySizeError",
    "OutOfMemoryError",
    "ArgumentTypeError",
    "ZeroStepError",
    "ScalarOverflowError",
    "InvalidIndexError",
    "InvalidArgumentError",
    "BatchingError",
    "UnboundAxisNameError",
]


class QuablaError(Exception):
    """Base class of every error Quabla raises.

    Raised as such for IR that Quabla itself built wrongly (an internal error, please report
    it): ``DialectError::UnknownOp``, ``DialectError::Structure``, ``LowerError::UnknownCallee``,
    ``LowerError::NoEntryPoint``, ``LowerError::Invalid(DialectError::UnknownOp)``,
    ``LowerError::Invalid(DialectError::Structure)``, ``LowerError::Toolkit`` (the CUDA
    target without the nvidia-cuda-nvcc-cu12 wheel), ``LowerError::Pipeline`` (an upstream
    pass pipeline of a target failed).

    Attributes (rule violations of the Rust core; None otherwise):
        op: the op's name (``dot_general``).
        constraint: the violated constraint's label in docs/spec.md (``dot_general_c5``).
        operand: the index of the operand at fault.
        expected: what the rule expected of it (a type, or ``one of f32, f64``).
        actual: the operand's type (``tensor<2x3xf32>``).
    """

    op = None
    constraint = None
    operand = None
    expected = None
    actual = None


class UnsupportedOperationError(QuablaError, ValueError, NotImplementedError):
    """An operation that the selected device (or Quabla) does not support.

    Raised for the Rust variants ``LowerError::Unsupported`` (a lowering without a rule for
    the op), ``LowerError::UnexpandedTransform`` (a transform not yet differentiated) and
    ``LowerError::HostCode`` (the GPU lowering would leave the op on the host).

    Attributes:
        op: the operation's name.
        device: the device name, or None.
    """

    def __init__(self, message, op=None, device=None):
        super().__init__(message)
        self.op = op
        self.device = device


class TracerError(QuablaError, TypeError):
    """A traced value was used where a concrete value is needed (Python control flow,
    ``float()``, ``.numpy()``, indexing with a tracer), or a tracer escaped its trace."""


# The subclasses below carry jax.errors' names, so programs that catch those (``except
# jax.errors.ConcretizationTypeError``) work with ``qb.errors`` unchanged.


class ConcretizationTypeError(TracerError):
    """A concrete value (a Python number, a static shape or axis) was needed where a traced
    value was given (JAX's ``ConcretizationTypeError``)."""


class TracerBoolConversionError(ConcretizationTypeError):
    """``bool()`` of a traced value: a Python ``if``/``while``/``and`` on it inside a traced
    function (use ``qb.lax.cond`` / ``qb.where``)."""


class TracerIntegerConversionError(TracerError):
    """``int()`` or ``__index__`` of a traced value (a Python index or size from it)."""


class TracerArrayConversionError(TracerError):
    """A traced value converted to a NumPy array (``np.asarray``, ``.numpy()``, ``.item()``)."""


class UnexpectedTracerError(TracerError):
    """A tracer used after its trace finished, or in an unrelated trace (a leaked tracer)."""


class NonConcreteBooleanIndexError(TracerError, IndexError):
    """Indexing with a traced boolean mask (the result's shape would depend on its values;
    use ``qb.where`` or ``size=`` of ``qb.nonzero``)."""


class RetraceLimitError(QuablaError, ValueError):
    """A jitted function was called with more distinct signatures than ``max_traces``.

    No longer raised: trace caches are LRU-bounded (past ``max_traces`` the least recently
    used signature is evicted). The class stays so that code catching it keeps working.

    Attributes:
        keys: the cache keys traced so far, plus the rejected one (last).
    """

    def __init__(self, message, keys=()):
        super().__init__(message)
        self.keys = list(keys)


class ShapeError(QuablaError, ValueError):
    """Shapes that do not fit an op (broadcasting, matmul, reshape, axes, ...).

    Raised for the Rust variants ``DialectError::Shape`` (a shape rule of docs/spec.md),
    ``DialectError::Attribute`` (a malformed attribute: dims, permutation, sizes),
    ``LowerError::Invalid(DialectError::Shape)`` and
    ``LowerError::Invalid(DialectError::Attribute)``.
    """


class DTypeError(QuablaError, TypeError):
    """A dtype an op does not accept, or a dtype mix that needs an explicit ``astype``.

    Raised for the Rust variants ``DialectError::DType`` (a dtype rule of docs/spec.md) and
    ``LowerError::Invalid(DialectError::DType)``.
    """


class UnboundAxisNameError(QuablaError, NameError):
    """A collective (``qb.lax.psum``, ``axis_index``, ...) names an axis that no enclosing
    ``vmap``/``pmap`` binds (JAX raises ``NameError`` here too). Rust variant:
    ``LowerError::UnboundAxis``."""


class BatchingError(ShapeError):
    """A ``vmap`` whose ``in_axes``/``out_axes`` do not fit the arguments or results:
    inconsistent mapped sizes, an axis out of range, a structure mismatch, no mapped
    argument, or ``out_axes=None`` for a result that depends on a mapped argument. The
    message names the argument (or result), its shape and the axis."""


class ArraySizeError(QuablaError, ValueError, MemoryError):
    """A tensor too big to exist: its byte size overflows (constraint ``size_overflow``,
    NumPy's "array is too big" ValueError) or exceeds the limit ``QUABLA_MAX_BYTES`` (a byte
    count read once per process, default 2**40; constraint ``size_limit``). Raised before any
    memory is allocated, by constructors (``zeros``, ``full``, ``broadcast_to``, ...),
    ``ShapeDtype``, the tracer's shape rules and the importer. It is also a MemoryError, so
    code catching NumPy's allocation failures catches it.

    Raised for the Rust variants ``DialectError::Size``, ``LowerError::Invalid(DialectError::Size)``
    and ``BufferError::TooLarge``. ``actual`` is the offending type (``tensor<...>``).
    """


class OutOfMemoryError(QuablaError, MemoryError):
    """The host allocator could not provide a tensor's bytes (the size was valid and under
    ``QUABLA_MAX_BYTES``), or compiled code could not allocate a temporary. Raised for the
    Rust variants ``BufferError::OutOfMemory`` and ``RuntimeError::OutOfMemory``; the process
    keeps running."""


class ArgumentTypeError(QuablaError, TypeError):
    """An argument of a Python type the function does not accept (``qb.eye(2.5)``, a float
    extent, an object that is not array-like), ``len()`` of a 0-d tensor, or a tensor used as
    an index that is not a one-element integer or bool tensor; NumPy raises TypeError."""


class InvalidIndexError(QuablaError, IndexError):
    """An index NumPy rejects with IndexError: out of bounds for a concrete extent, too many
    indices, several ellipses, or an index object of an unsupported type."""


class InvalidArgumentError(QuablaError, ValueError):
    """An argument value a function rejects where NumPy raises ValueError (an empty sequence
    to concatenate, an einsum spec that names the wrong number of operands, a mode or option
    name it does not know)."""


class ScalarOverflowError(QuablaError, OverflowError):
    """A Python int outside the range of the dtype it becomes (``int32_array + 2**32``,
    ``qb.array(2**70)``, ``qb.full((2,), 2**40, dtype=qb.int32)``, ``qb.uint8(-1)``), or too
    large for a float (``x + 2**2000``): NumPy 2 and JAX raise OverflowError instead of
    wrapping, and so does Quabla."""


class ZeroStepError(QuablaError, ZeroDivisionError, ValueError):
    """``qb.arange`` with ``step == 0``: NumPy raises ZeroDivisionError; it is also a
    ValueError (an invalid argument)."""
