//! The dialect's error type: shape/dtype rule violations carry the op, the numbered
//! constraint of docs/spec.md and the offending types.
use thiserror::Error;

#[derive(Debug, Clone, Error, PartialEq)]
pub enum DialectError {
    /// A shape or dtype rule of docs/spec.md was violated.
    #[error("'quabla.{op}' op ({constraint}): {message}")]
    Shape { op: &'static str, constraint: &'static str, message: String },
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

pub type Result<T> = std::result::Result<T, DialectError>;

/// Returns a shape error for `op` under constraint label `c`.
pub fn shape_err<T>(op: &'static str, constraint: &'static str, message: impl Into<String>) -> Result<T> {
    Err(DialectError::Shape { op, constraint, message: message.into() })
}
