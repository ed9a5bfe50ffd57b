//! The dialect's error type. A violated shape or dtype rule of docs/spec.md is a [`Violation`]
//! (the op, the numbered constraint, the operand at fault, what the rule expected and the type it
//! got, the source location) wrapped in the variant that says which kind of rule it broke:
//! [`DialectError::Shape`] or [`DialectError::DType`]. Consumers (the Python exception classes,
//! MLIR diagnostics) choose by variant, never by the message text. The rendered message is the
//! one-line text `'quabla.<op>' op (<constraint>): <message>`.
use std::fmt;
use std::sync::Arc;

use thiserror::Error;

use crate::types::{DType, TensorType};

/// Errors of the dialect: rule violations, malformed attributes, unknown ops, malformed IR.
#[derive(Debug, Clone, Error, PartialEq)]
pub enum DialectError {
    /// A shape rule of docs/spec.md was violated (extents, ranks, dims, axes, arity).
    #[error("{0}")]
    Shape(Box<Violation>),
    /// A dtype rule of docs/spec.md was violated (an element type the op does not accept, or
    /// two operands whose element types differ).
    #[error("{0}")]
    DType(Box<Violation>),
    /// A tensor too big to exist: its byte size overflows (`size_overflow`) or exceeds the
    /// configured limit (`size_limit`, see [`crate::types::max_bytes`]). The violation's
    /// `actual` is the offending type.
    #[error("{0}")]
    Size(Box<Violation>),
    /// An attribute is missing or malformed.
    #[error("'quabla.{op}' op: attribute `{attr}`: {message}")]
    Attribute { op: String, attr: String, message: String },
    /// An op name that is not part of the dialect.
    #[error("unknown operation '{0}'")]
    UnknownOp(String),
    /// IR outside what the quabla level admits (types, ops of other dialects, structure).
    #[error("{0}")]
    Structure(String),
}

/// One violated constraint of docs/spec.md, with what is known about its cause. `Default`
/// serves struct-update syntax (`Violation { op, constraint, message, ..Default::default() }`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Violation {
    /// The op's name without the dialect prefix (`dot_general`).
    pub op: &'static str,
    /// The constraint label of docs/spec.md (`dot_general_c5`), or `arity`.
    pub constraint: &'static str,
    /// The operand at fault, when one operand is.
    pub operand: Option<usize>,
    /// What the rule expected of that operand (or of the op's attribute).
    pub expected: Option<Expected>,
    /// The type the operand had.
    pub actual: Option<TensorType>,
    /// The human-readable explanation (names the offending types).
    pub message: String,
    /// Source location of the op (MLIR `loc(...)` text), when known.
    pub loc: Option<Arc<str>>,
}

/// What a rule expected.
#[derive(Debug, Clone, PartialEq)]
pub enum Expected {
    /// Exactly this type (e.g. the type of the other operand).
    Type(TensorType),
    /// One of these element types.
    DTypes(&'static [DType]),
    /// This shape.
    Shape(Vec<i64>),
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Expected::Type(t) => write!(f, "{t}"),
            Expected::DTypes(ds) => {
                let names: Vec<&str> = ds.iter().map(|d| d.mlir()).collect();
                write!(f, "one of {}", names.join(", "))
            }
            Expected::Shape(s) => write!(f, "shape {s:?}"),
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "'quabla.{}' op ({}): {}", self.op, self.constraint, self.message)?;
        if let Some(l) = &self.loc {
            write!(f, " (at {l})")?;
        }
        Ok(())
    }
}

impl Violation {
    /// A violation of `constraint` by `op`, explained by `message`; no operand, types or location yet.
    pub fn new(op: &'static str, constraint: &'static str, message: impl Into<String>) -> Violation {
        Violation { op, constraint, operand: None, expected: None, actual: None, message: message.into(), loc: None }
    }

    /// Names operand `index` as the one at fault.
    pub fn operand(mut self, index: usize) -> Violation {
        self.operand = Some(index);
        self
    }

    /// Records what the rule expected.
    pub fn expected(mut self, e: Expected) -> Violation {
        self.expected = Some(e);
        self
    }

    /// Records the offending type.
    pub fn actual(mut self, t: &TensorType) -> Violation {
        self.actual = Some(t.clone());
        self
    }

    /// Operand `index` of type `actual` should have been `expected`.
    pub fn types(self, index: usize, expected: Expected, actual: &TensorType) -> Violation {
        self.operand(index).expected(expected).actual(actual)
    }

    /// As a shape-rule error.
    pub fn shape(self) -> DialectError {
        DialectError::Shape(Box::new(self))
    }

    /// As a dtype-rule error.
    pub fn dtype(self) -> DialectError {
        DialectError::DType(Box::new(self))
    }

    /// As a size error.
    pub fn size(self) -> DialectError {
        DialectError::Size(Box::new(self))
    }

    /// `Err` of the shape-rule error.
    pub fn shape_err<T>(self) -> Result<T> {
        Err(self.shape())
    }

    /// `Err` of the dtype-rule error.
    pub fn dtype_err<T>(self) -> Result<T> {
        Err(self.dtype())
    }
}

impl DialectError {
    /// A shape-rule error of `op` under constraint label `constraint`.
    pub fn shape(op: &'static str, constraint: &'static str, message: impl Into<String>) -> DialectError {
        Violation::new(op, constraint, message).shape()
    }

    /// A dtype-rule error of `op` under constraint label `constraint`.
    pub fn dtype(op: &'static str, constraint: &'static str, message: impl Into<String>) -> DialectError {
        Violation::new(op, constraint, message).dtype()
    }

    /// The violated rule, for [`DialectError::Shape`], [`DialectError::DType`] and
    /// [`DialectError::Size`].
    pub fn violation(&self) -> Option<&Violation> {
        match self {
            DialectError::Shape(v) | DialectError::DType(v) | DialectError::Size(v) => Some(v),
            DialectError::Attribute { .. } | DialectError::UnknownOp(_) | DialectError::Structure(_) => None,
        }
    }

    /// The constraint label of a rule violation.
    pub fn constraint(&self) -> Option<&'static str> {
        self.violation().map(|v| v.constraint)
    }

    /// The source location the error carries (rule violations only).
    pub fn loc(&self) -> Option<&str> {
        self.violation().and_then(|v| v.loc.as_deref())
    }

    /// The error with source location `loc` attached to a rule violation that has none yet.
    /// Other variants are returned unchanged.
    pub fn at(mut self, loc: Option<Arc<str>>) -> DialectError {
        if let DialectError::Shape(v) | DialectError::DType(v) | DialectError::Size(v) = &mut self {
            if v.loc.is_none() {
                v.loc = loc;
            }
        }
        self
    }

    /// The variant's name (`Shape`, `DType`, ...), for tables of the error classes.
    pub fn variant(&self) -> &'static str {
        match self {
            DialectError::Shape(_) => "Shape",
            DialectError::DType(_) => "DType",
            DialectError::Size(_) => "Size",
            DialectError::Attribute { .. } => "Attribute",
            DialectError::UnknownOp(_) => "UnknownOp",
            DialectError::Structure(_) => "Structure",
        }
    }

    /// One value of every variant (a test checks that none is missing), so that mappings of
    /// the variants (the Python exception classes) can be listed and checked exhaustively.
    pub fn samples() -> Vec<DialectError> {
        let f32x2 = TensorType::new(DType::F32, [2]);
        vec![
            Violation::new("add", "binary_c1", "operand types differ: lhs tensor<2xf32>, rhs tensor<3xf32> (broadcast explicitly with broadcast_in_dim)")
                .types(1, Expected::Type(f32x2.clone()), &TensorType::new(DType::F32, [3]))
                .shape(),
            Violation::new("and", "binary_c2", "operand type tensor<2xf32> is not a bool or integer type (i1, i32, i64)")
                .types(0, Expected::DTypes(&[DType::I1, DType::I32, DType::I64]), &f32x2)
                .dtype(),
            Violation::new("broadcast_in_dim", "size_overflow", "tensor<4611686018427387904x4xf32> (shape [4611686018427387904, 4]) is too big: its element count times the item size 4 overflows")
                .actual(&TensorType::new(DType::F32, [1 << 62, 4]))
                .size(),
            DialectError::Attribute { op: "transpose".into(), attr: "permutation".into(), message: "expected an array of i64".into() },
            DialectError::UnknownOp("quabla.frobnicate".into()),
            DialectError::Structure("value %3 is defined twice".into()),
        ]
    }
}

pub type Result<T> = std::result::Result<T, DialectError>;

/// Returns a shape error for `op` under constraint label `constraint`.
pub fn shape_err<T>(op: &'static str, constraint: &'static str, message: impl Into<String>) -> Result<T> {
    Err(DialectError::shape(op, constraint, message))
}

/// Returns a dtype error for `op` under constraint label `constraint`.
pub fn dtype_err<T>(op: &'static str, constraint: &'static str, message: impl Into<String>) -> Result<T> {
    Err(DialectError::dtype(op, constraint, message))
}
