//! `quabla.call @f`: calls a `func.func` of the same module. The result types are carried by
//! the op; the verifier checks them against the callee's signature (`call_c1`, `call_c2`).
use crate::error::{shape_err, Result};
use crate::ops::table::op_family;
use crate::types::TensorType;

op_family! {
    /// Calls: spelled `func.call` in MLIR (IRDL cannot type heterogeneous variadic operands).
    pub enum CallOp : Call {
        Call = "call", operands var, regions 0, upstream { callee: String [symbol], results: Vec<TensorType> [types] },
    }
}

impl CallOp {
    /// The result types are carried by the op (checked against the callee by the verifier).
    pub fn infer(&self, _xs: &[&TensorType]) -> Result<Vec<TensorType>> {
        match self {
            CallOp::Call { results, .. } => Ok(results.clone()),
        }
    }
}

/// Checks operand and result types of a call against the callee signature.
pub fn check_call(callee: &str, args: &[&TensorType], results: &[TensorType], params: &[TensorType], outs: &[TensorType]) -> Result<()> {
    if args.len() != params.len() || args.iter().zip(params).any(|(a, p)| *a != p) {
        return shape_err("call", "call_c1", format!("operands ({}) do not match the parameters of @{callee} ({})", join(args.iter().copied()), join(params.iter())));
    }
    if results != outs {
        return shape_err("call", "call_c2", format!("results ({}) do not match the results of @{callee} ({})", join(results.iter()), join(outs.iter())));
    }
    Ok(())
}

pub fn join<'a>(ts: impl Iterator<Item = &'a TensorType>) -> String {
    ts.map(|t| t.to_string()).collect::<Vec<_>>().join(", ")
}
