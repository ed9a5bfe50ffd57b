//! The host-callback family: `host_callback` hands its operand to a function of the host
//! process (`qb.debug.print`) and returns it unchanged. It is the dialect's one op with an
//! effect: passes never remove, merge, fold or reorder it ([`OpKind::has_effect`]), and every
//! transform passes its value through (docs/spec.md, host_callback).
//!
//! One op carries one operand (an IRDL variadic group must share one type); a callback of
//! `count` arrays is `count` ops in program order with `index` 0..count, and the callback
//! runs when operand `count - 1` arrives. `batched` has one entry per vmap the op went
//! through, outermost first: 1 when the operand carries that vmap's axis (the axes are the
//! operand's leading dims, in that order), 0 when it does not.
//!
//!
//! `callback_result` is the result `index` of the last run of a *pure* callback (JAX's
//! `pure_callback`): its operands are delivered by `host_callback` ops of the same id, and the
//! host function runs when result 0 is fetched, returning every result (the fetches follow
//! the deliveries in program order, as every op of the family); the host computes batched
//! results example by example. `ty` is the result's type. Its `batched` flags are
//! as `host_callback`'s: 1 where a vmap mapped one of the callback's operands (the result then
//! carries that vmap's axis, leading, in order), 0 where none was.
//!
//! [`OpKind::has_effect`]: crate::OpKind::has_effect
use crate::error::{Result, Violation};
use crate::ops::table::op_family;
use crate::types::TensorType;

op_family! {
    /// Calls into the host with the operand's value (docs/spec.md, host_callback).
    pub enum CallbackOp : Callback {
        HostCallback = "host_callback", operands 1, regions 0, irdl { callback: i64 [attr], index: i64 [attr], count: i64 [attr], batched: Vec<i64> [attr] },
        CallbackResult = "callback_result", operands 0, regions 0, irdl { callback: i64 [attr], index: i64 [attr], batched: Vec<i64> [attr], ty: TensorType [ty] },
    }
}

/// The most vmaps a callback operand may go through (the flags travel as one `i64` mask).
pub const MAX_BATCH_LEVELS: usize = 62;

impl CallbackOp {
    /// The shape/dtype rule: the result is the operand.
    pub fn infer(&self, xs: &[&TensorType]) -> Result<TensorType> {
        let (callback, index, count, batched) = match self {
            CallbackOp::HostCallback { callback, index, count, batched } => (callback, index, count, batched),
            CallbackOp::CallbackResult { callback, index, batched, ty } => {
                let op = "callback_result";
                if *callback < 0 || *index < 0 {
                    return Violation::new(op, "callback_result_c1", format!("callback {callback}, index {index}: needs callback >= 0 and index >= 0")).actual(ty).shape_err();
                }
                let mapped = batched.iter().filter(|&&b| b == 1).count();
                if batched.len() > MAX_BATCH_LEVELS || batched.iter().any(|&b| b != 0 && b != 1) || mapped > ty.rank() {
                    return Violation::new(op, "callback_result_c2", format!("batched {batched:?}: needs at most {MAX_BATCH_LEVELS} entries, each 0 or 1, with at most rank {} ones", ty.rank())).actual(ty).shape_err();
                }
                return Ok(ty.clone());
            }
        };
        let x = xs[0];
        let op = "host_callback";
        if *callback < 0 || *count < 1 || *index < 0 || index >= count {
            return Violation::new(op, "host_callback_c1", format!("callback {callback}, index {index}, count {count}: needs callback >= 0 and 0 <= index < count")).operand(0).actual(x).shape_err();
        }
        let mapped = batched.iter().filter(|&&b| b == 1).count();
        if batched.len() > MAX_BATCH_LEVELS || batched.iter().any(|&b| b != 0 && b != 1) || mapped > x.rank() {
            return Violation::new(op, "host_callback_c2", format!("batched {batched:?}: needs at most {MAX_BATCH_LEVELS} entries, each 0 or 1, with at most rank {} ones", x.rank())).operand(0).actual(x).shape_err();
        }
        Ok(x.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::DialectError;
    use crate::types::DType;

    #[test]
    fn rules() {
        let x = TensorType::new(DType::F32, [2, 3]);
        let op = |index, count, batched: Vec<i64>| CallbackOp::HostCallback { callback: 1, index, count, batched };
        assert_eq!(op(0, 2, vec![1, 0]).infer(&[&x]).unwrap(), x);
        assert!(matches!(op(2, 2, vec![]).infer(&[&x]), Err(DialectError::Shape(v)) if v.constraint == "host_callback_c1"));
        assert!(matches!(op(0, 1, vec![2]).infer(&[&x]), Err(DialectError::Shape(v)) if v.constraint == "host_callback_c2"));
        assert!(matches!(op(0, 1, vec![1, 1, 1]).infer(&[&x]), Err(DialectError::Shape(v)) if v.constraint == "host_callback_c2"));
        let r = |index, batched: Vec<i64>| CallbackOp::CallbackResult { callback: 1, index, batched, ty: x.clone() };
        assert_eq!(r(0, vec![1]).infer(&[]).unwrap(), x);
        assert!(matches!(r(-1, vec![]).infer(&[]), Err(DialectError::Shape(v)) if v.constraint == "callback_result_c1"));
        assert!(matches!(r(0, vec![2]).infer(&[]), Err(DialectError::Shape(v)) if v.constraint == "callback_result_c2"));
        assert_eq!(r(0, vec![0, 1]).infer(&[]).unwrap(), x);
        assert!(matches!(r(0, vec![1, 1, 1]).infer(&[]), Err(DialectError::Shape(v)) if v.constraint == "callback_result_c2"));
    }
}
