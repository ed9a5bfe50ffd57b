"""Every Rust error variant maps to a documented Python class, and real bad calls raise the
class chosen by the variant (never by the message text), with the op, the operand and the types.

The variants come from the extension (``_quabla.error_variants()``: one sample per variant of
``DialectError`` and ``LowerError``, raised through the same code as real errors), so a new
variant is checked here without editing this file."""

import builtins
import os
import re

import pytest

import quabla as qb
from quabla import _quabla, errors
from quabla._ops import _op
from quabla._trace import bind
from misuse import raises

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VARIANTS = _quabla.error_variants()
IDS = [v[0] for v in VARIANTS]


def _documented_bases():
    """{class: [base names]} from the hierarchy drawn in quabla/errors.py's docstring."""
    out = {}
    for m in re.finditer(r"(\w+)\(([\w, ]+)\)", errors.__doc__):
        out[m.group(1)] = [b.strip() for b in m.group(2).split(",")]
    return out


def _api_md_table():
    """{variant: class} from the error table of docs/api.md."""
    text = open(os.path.join(ROOT, "docs", "api.md")).read()
    section = text.split("## Errors", 1)[1].split("\n## ", 1)[0]
    out = {}
    for line in section.splitlines():
        m = re.match(r"\| `(\w+)` \| (.*) \|$", line)
        if m:
            for v in re.findall(r"`([\w:()]+)`", m.group(2)):
                assert v not in out, f"{v} appears twice in the docs/api.md error table"
                out[v] = m.group(1)
    return out


def test_variants_are_listed_once_and_cover_both_error_types():
    assert len(set(IDS)) == len(IDS)
    assert {"DialectError::Shape", "DialectError::DType", "LowerError::Unsupported"} <= set(IDS)
    assert all(i.startswith(("DialectError::", "LowerError::")) for i in IDS)


@pytest.mark.parametrize("variant,cls_name,sample", VARIANTS, ids=IDS)
def test_variant_maps_to_a_documented_class(variant, cls_name, sample):
    assert cls_name in errors.__all__, f"{variant} maps to {cls_name}, which quabla.errors does not export"
    cls = getattr(errors, cls_name)
    assert getattr(qb, cls_name) is cls
    assert issubclass(cls, errors.QuablaError)
    # The sample was raised through the extension's own conversion: it is of that class.
    assert type(sample) is cls and str(sample)
    # The class subclasses every builtin its place in the documented hierarchy names.
    bases = _documented_bases()
    assert cls_name in bases, f"{cls_name} is missing from the hierarchy in quabla/errors.py"
    for b in bases[cls_name]:
        base = getattr(builtins, b, None) or getattr(errors, b)
        assert issubclass(cls, base), f"{cls_name} does not subclass {b}"
    if cls is not errors.QuablaError:
        assert any(isinstance(getattr(builtins, b, None), type) for b in bases[cls_name]), f"{cls_name} documents no builtin"
    # The class documents the variant, and so does docs/api.md's table.
    assert f"``{variant}``" in (cls.__doc__ or ""), f"{cls_name}'s docstring does not list {variant}"
    assert _api_md_table().get(variant) == cls_name, f"docs/api.md's error table does not list {variant} under {cls_name}"


def test_api_md_table_has_no_stale_rows():
    assert set(_api_md_table()) == set(IDS)


@pytest.mark.parametrize("variant,cls_name,sample", [v for v in VARIANTS if v[0].endswith(("::Shape", "::DType"))], ids=lambda v: v if isinstance(v, str) else "")
def test_rule_violations_carry_their_fields(variant, cls_name, sample):
    assert sample.op and sample.constraint and sample.constraint in str(sample)
    assert isinstance(sample.operand, int)
    assert sample.actual and sample.actual in str(sample)
    assert sample.expected


def test_fields_default_to_none_for_errors_raised_in_python():
    with raises(qb.ShapeError, "reshape") as e:
        qb.ones((2, 3)).reshape(4)
    assert e.value.constraint is None and e.value.operand is None


def test_dtype_mix_raises_dtype_error_by_variant():
    a, b = qb.ones(2, dtype=qb.float32), qb.ones(2)
    # The dialect's binary_c1 rule itself (bind applies the op without the frontend's checks).
    with raises(qb.DTypeError, "quabla.add", "binary_c1", "tensor<2xf32>", "tensor<2xf64>") as e:
        bind(_op("add"), a, b)
    assert isinstance(e.value, TypeError)
    v = e.value
    assert (v.op, v.constraint, v.operand, v.expected, v.actual) == ("add", "binary_c1", 1, "tensor<2xf32>", "tensor<2xf64>")
    # The same rule while tracing, with the user's location.
    with raises(qb.DTypeError, "quabla.mul", "tensor<2xf64>", __file__) as e:
        qb.jit(lambda x, y: bind(_op("mul"), x, y))(a, b)
    assert e.value.operand == 1


def test_shape_mismatch_raises_shape_error_by_variant():
    # Same rule label as the dtype mix above (binary_c1), other variant: the class does not
    # depend on the label or the text.
    with raises(qb.ShapeError, "quabla.add", "binary_c1", "tensor<2xf64>", "tensor<3xf64>") as e:
        bind(_op("add"), qb.ones(2), qb.ones(3))
    assert not isinstance(e.value, TypeError)
    v = e.value
    assert (v.op, v.constraint, v.operand, v.expected, v.actual) == ("add", "binary_c1", 1, "tensor<2xf64>", "tensor<3xf64>")
    with raises(qb.ShapeError, "quabla.select", "select_c3") as e:
        bind(_op("select"), qb.ones(3) > 0.0, qb.ones(2), qb.ones(2))
    assert (e.value.operand, e.value.actual, e.value.expected) == (0, "tensor<3xi1>", "shape [2]")


def test_class_rule_raises_dtype_error_with_fields():
    with raises(qb.DTypeError, "quabla.and", "tensor<2x3xf64>") as e:
        qb.ones((2, 3)) & qb.ones((2, 3))
    v = e.value
    assert (v.op, v.constraint, v.operand, v.actual) == ("and", "binary_c2", 0, "tensor<2x3xf64>")
    assert v.expected == "one of i1, i32, i64, ui8, ui32"


def test_jax_named_tracer_errors_are_raised_where_jax_raises_them():
    # The classes carry jax.errors' names and builtin bases, so `except` clauses written for
    # JAX catch Quabla's errors; each is a TracerError (and a QuablaError).
    jax_errors = pytest.importorskip("jax.errors")
    E = qb.errors
    for name in ("ConcretizationTypeError", "TracerBoolConversionError", "TracerIntegerConversionError", "TracerArrayConversionError",
                 "UnexpectedTracerError", "NonConcreteBooleanIndexError"):
        ours, theirs = getattr(E, name), getattr(jax_errors, name)
        assert issubclass(ours, E.TracerError)
        for base in (TypeError, IndexError):
            assert issubclass(ours, base) or not issubclass(theirs, base), name
    assert issubclass(E.TracerBoolConversionError, E.ConcretizationTypeError)
    x = qb.ones(3)
    cases = [
        (lambda v: qb.where(v > 0, 1.0, 0.0) if v.sum() > 0 else v, E.TracerBoolConversionError),
        (lambda v: v[int(v[0])], E.TracerIntegerConversionError),
        (lambda v: __import__("numpy").asarray(v), E.TracerArrayConversionError),
        (lambda v: v.item(), E.TracerArrayConversionError),
        (lambda v: float(v[0]), E.ConcretizationTypeError),
        (lambda v: qb.sum(v, axis=qb.argmax(v)), E.ConcretizationTypeError),
        (lambda v: v[v > 0], E.NonConcreteBooleanIndexError),
    ]
    for f, cls in cases:
        with pytest.raises(cls):
            qb.jit(f)(x)
    leaked = []
    qb.jit(lambda v: leaked.append(v) or v)(x)
    with pytest.raises(E.UnexpectedTracerError):
        qb.jit(lambda v: v + leaked[0])(x)
