//! Derivative rules of `constant` and `iota`: they have no operands and zero tangents.
use quabla_dialect::{Op, Value};

use super::{RuleError, Tangents, B};

pub fn jvp(_b: &mut B, _op: &Op, _t: &[Option<Value>]) -> Result<Tangents, RuleError> {
    Ok(vec![None])
}

pub fn vjp(_b: &mut B, _op: &Op, _ct: Value) -> Result<Tangents, RuleError> {
    Ok(vec![])
}
