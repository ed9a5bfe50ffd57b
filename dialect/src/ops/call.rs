//! `quabla.call @f`: calls a `func.func` of the same module. The result types are carried by
//! the op; the verifier checks them against the callee's signature (`call_c1`, `call_c2`).
use crate::error::{shape_err, Expected, Result, Violation};
use crate::types::TensorType;

/// Checks operand and result types of a call against the callee signature.
pub fn check_call(callee: &str, args: &[&TensorType], results: &[TensorType], params: &[TensorType], outs: &[TensorType]) -> Result<()> {
    if args.len() != params.len() || args.iter().zip(params).any(|(a, p)| *a != p) {
        let v = Violation::new("call", "call_c1", format!("operands ({}) do not match the parameters of @{callee} ({})", join(args.iter().copied()), join(params.iter())));
        // With the right number of operands, the first mismatching one is at fault: a dtype
        // error when its element type differs from the parameter's, else a shape error.
        if args.len() == params.len() {
            if let Some(k) = args.iter().zip(params).position(|(a, p)| *a != p) {
                let v = v.types(k, Expected::Type(params[k].clone()), args[k]);
                return if args[k].dtype != params[k].dtype { v.dtype_err() } else { v.shape_err() };
            }
        }
        return v.shape_err();
    }
    if results != outs {
        return shape_err("call", "call_c2", format!("results ({}) do not match the results of @{callee} ({})", join(results.iter()), join(outs.iter())));
    }
    Ok(())
}

pub fn join<'a>(ts: impl Iterator<Item = &'a TensorType>) -> String {
    ts.map(|t| t.to_string()).collect::<Vec<_>>().join(", ")
}
