//! Differentiation and batching rules of control flow (`quabla.if`). The rules are the work
//! of the control-flow issue: until then each is an explicit gap, reported as
//! `RuleError::Unsupported` (and listed in docs/op_status.md), never a wrong derivative.
use quabla_dialect::{Op, Value};

use super::{RuleError, Tangents, B};

/// JVP of a control-flow op.
pub fn jvp(_b: &mut B, op: &Op, _tangents: &[Option<Value>]) -> Result<Tangents, RuleError> {
    Err(RuleError::Unsupported { op: op.kind.name(), rule: "jvp" })
}

/// VJP of a control-flow op.
pub fn vjp(_b: &mut B, op: &Op, _ct: Value) -> Result<Tangents, RuleError> {
    Err(RuleError::Unsupported { op: op.kind.name(), rule: "vjp" })
}

/// Batching rule of a control-flow op.
pub fn batch(_b: &mut B, op: &Op, _xs: &[Value], _batched: &[bool], _size: i64) -> Result<Vec<(Value, bool)>, RuleError> {
    Err(RuleError::Unsupported { op: op.kind.name(), rule: "batch" })
}
