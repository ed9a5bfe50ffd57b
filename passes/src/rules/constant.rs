//! Derivative rules of `constant` and `iota`: they have no operands and zero tangents.
use quabla_dialect::{Op, Value};

use super::{RuleError, Tangents, B};

pub fn jvp(_b: &mut B, _op: &Op, _t: &[Option<Value>]) -> Result<Tangents, RuleError> {
    Ok(vec![None])
}

pub fn vjp(_b: &mut B, _op: &Op, _ct: Value) -> Result<Tangents, RuleError> {
    Ok(vec![])
}

/// Batching: constants have no operands, so they are never batched.
pub fn batch(_b: &mut B, op: &Op, _xs: &[Value], _batched: &[bool], _size: i64) -> Result<Vec<(Value, bool)>, RuleError> {
    Err(RuleError::Internal(format!("'quabla.{}' op has no operands to batch", op.kind.name())))
}
