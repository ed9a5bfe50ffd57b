//! `quabla.call @f`: calls a `func.func` of the same module. The result types are carried by
//! the op; the verifier checks them against the callee's signature (`call_c1`, `call_c2`).
//! `quabla.custom_jvp_call` and `quabla.custom_vjp_call` are calls that carry their
//! derivative rules (JAX's `custom_jvp` / `custom_vjp`) as isolated region bodies; their
//! value is the primal body's (every lowering runs region 0), the autodiff pass applies the
//! rules (`passes/src/rules/call.rs`) and expands them away afterwards:
//! * `custom_jvp_call (x...) {primal: ^(x...) -> r...} {jvp: ^(x..., t...) -> (r..., dr...)}`,
//!   one tangent parameter per operand and one tangent output per result, same types;
//! * `custom_vjp_call (x...) {primal: ^(x...) -> r...} {fwd: ^(x...) -> (r..., res...)}
//!   {bwd: ^(res..., ct...) -> dx...}`, one cotangent parameter per result and one output per
//!   operand, same types.
//!
//! In MLIR a custom call is a `func.call` of its outlined primal body naming the outlined
//! rules in discardable attributes (`Func::write_mlir`, `mlir::resolve_custom`).
use crate::error::DialectError;
use crate::ir::Body;
use crate::error::{shape_err, Expected, Result, Violation};
use crate::ops::table::op_family;
use crate::types::TensorType;

op_family! {
    /// Calls: spelled `func.call` in MLIR (IRDL cannot type heterogeneous variadic operands).
    pub enum CallOp : Call {
        Call = "call", operands var, regions 0, upstream { callee: String [symbol], results: Vec<TensorType> [types] },
        CustomJvp = "custom_jvp_call", operands var, regions 2, upstream { results: Vec<TensorType> [types] },
        CustomVjp = "custom_vjp_call", operands var, regions 3, upstream { results: Vec<TensorType> [types] },
    }
}

impl CallOp {
    /// The result types are carried by the op (checked against the callee by the verifier).
    pub fn infer(&self, _xs: &[&TensorType]) -> Result<Vec<TensorType>> {
        match self {
            CallOp::Call { results, .. } | CallOp::CustomJvp { results } | CallOp::CustomVjp { results } => Ok(results.clone()),
        }
    }

    /// Checks the rule bodies of the custom-derivative calls (`quabla.call` has none).
    pub fn check_regions(&self, xs: &[&TensorType], results: &[TensorType], regions: &[Body], types: &[TensorType]) -> Result<()> {
        let ty = |v: &crate::ir::Value| types.get(v.0 as usize).cloned().ok_or_else(|| DialectError::Structure(format!("value %{} has no type", v.0)));
        let tys = |vs: &[crate::ir::Value]| vs.iter().map(ty).collect::<Result<Vec<TensorType>>>();
        let ops: Vec<TensorType> = xs.iter().map(|t| (*t).clone()).collect();
        let twice = |v: &[TensorType]| v.iter().chain(v).cloned().collect::<Vec<_>>();
        match self {
            CallOp::Call { .. } if regions.is_empty() => Ok(()),
            CallOp::Call { .. } => shape_err("call", "regions_c1", format!("expects no regions, got {}", regions.len())),
            CallOp::CustomJvp { .. } => {
                let [primal, jvp] = regions else {
                    return shape_err("custom_jvp_call", "custom_jvp_call_c1", format!("expects two regions (primal, jvp), got {}", regions.len()));
                };
                check_primal("custom_jvp_call", &ops, results, primal, types)?;
                let (p, o) = (tys(&jvp.params)?, tys(&jvp.outputs)?);
                if p != twice(&ops) || o != twice(results) {
                    return shape_err("custom_jvp_call", "custom_jvp_call_c3", format!("the jvp region maps ({}) to ({}), expected ({}) to ({})", join(p.iter()), join(o.iter()), join(twice(&ops).iter()), join(twice(results).iter())));
                }
                Ok(())
            }
            CallOp::CustomVjp { .. } => {
                let [primal, fwd, bwd] = regions else {
                    return shape_err("custom_vjp_call", "custom_vjp_call_c1", format!("expects three regions (primal, fwd, bwd), got {}", regions.len()));
                };
                check_primal("custom_vjp_call", &ops, results, primal, types)?;
                let (fp, fo) = (tys(&fwd.params)?, tys(&fwd.outputs)?);
                if fp != ops || fo.len() < results.len() || fo[..results.len()] != *results {
                    return shape_err("custom_vjp_call", "custom_vjp_call_c3", format!("the fwd region maps ({}) to ({}), expected ({}) to ({}) followed by residuals", join(fp.iter()), join(fo.iter()), join(ops.iter()), join(results.iter())));
                }
                let want: Vec<TensorType> = fo[results.len()..].iter().chain(results).cloned().collect();
                let (bp, bo) = (tys(&bwd.params)?, tys(&bwd.outputs)?);
                if bp != want || bo != ops {
                    return shape_err("custom_vjp_call", "custom_vjp_call_c4", format!("the bwd region maps ({}) to ({}), expected (residuals, result cotangents) ({}) to ({})", join(bp.iter()), join(bo.iter()), join(want.iter()), join(ops.iter())));
                }
                Ok(())
            }
        }
    }
}

/// `<op>_c2`: the primal region maps the operand types to the result types.
fn check_primal(op: &'static str, ops: &[TensorType], results: &[TensorType], primal: &Body, types: &[TensorType]) -> Result<()> {
    let ty = |v: &crate::ir::Value| types.get(v.0 as usize).cloned().ok_or_else(|| DialectError::Structure(format!("value %{} has no type", v.0)));
    let p: Vec<TensorType> = primal.params.iter().map(ty).collect::<Result<_>>()?;
    let o: Vec<TensorType> = primal.outputs.iter().map(ty).collect::<Result<_>>()?;
    if p != ops || o != results {
        let c = if op == "custom_jvp_call" { "custom_jvp_call_c2" } else { "custom_vjp_call_c2" };
        return shape_err(op, c, format!("the primal region maps ({}) to ({}), expected ({}) to ({})", join(p.iter()), join(o.iter()), join(ops.iter()), join(results.iter())));
    }
    Ok(())
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
