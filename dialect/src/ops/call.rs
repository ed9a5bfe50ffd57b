//! `quabla.call @f`: calls a `func.func` of the same module. The result types are carried by
//! the op; the verifier checks them against the callee's signature (`call_c1`, `call_c2`).
use crate::error::{shape_err, Expected, Result, Violation};
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::DialectError;
    use crate::types::DType;

    #[test]
    fn the_first_mismatching_operand_is_named() {
        let (a, b) = (TensorType::new(DType::F32, [2]), TensorType::new(DType::F64, [2]));
        let e = check_call("f", &[&a, &a], &[], &[a.clone(), b.clone()], &[]).unwrap_err();
        assert_eq!(e.to_string(), "'quabla.call' op (call_c1): operands (tensor<2xf32>, tensor<2xf32>) do not match the parameters of @f (tensor<2xf32>, tensor<2xf64>)");
        assert!(matches!(&e, DialectError::DType(v) if v.operand == Some(1) && v.expected == Some(Expected::Type(b.clone())) && v.actual == Some(a.clone())));
        let c = TensorType::new(DType::F32, [3]);
        assert!(matches!(check_call("f", &[&c], &[], std::slice::from_ref(&a), &[]), Err(DialectError::Shape(v)) if v.operand == Some(0)));
        assert!(matches!(check_call("f", &[&a], &[], &[a.clone(), a.clone()], &[]), Err(DialectError::Shape(v)) if v.operand.is_none()));
        assert!(matches!(check_call("f", &[], std::slice::from_ref(&a), &[], &[c]), Err(DialectError::Shape(v)) if v.constraint == "call_c2"));
    }
}
