//! Control flow: ops with regions. `quabla.if` runs one of two bodies on its captured operands
//! (`if (pred, x...) then {^(x...) ...} else {^(x...) ...}`). Bodies are isolated from above:
//! everything a branch uses is an operand after the predicate, bound to the body's parameters.
//! At the MLIR level the op is spelled `scf.if` on an `i1` extracted from the 0-d predicate
//! (IRDL cannot type an op with heterogeneous variadic operands or results; see
//! docs/ARCHITECTURE.md), so stock `mlir-opt` verifies the branch types itself.
//! `quabla.while` carries values through a loop: operands are the initial carries, the cond
//! region maps the carries to a 0-d `tensor<i1>`, the body region maps them to the next
//! carries, and the results are the carries when cond is false. Spelled `scf.while` (the cond
//! region ends in `scf.condition` forwarding its parameters, the body in `scf.yield`).
//! `quabla.case` runs one of N bodies chosen by a 0-d integer index (`case (index, x...)
//! {^(x...) ...} ...`), StableHLO's semantics: an index outside `[0, N)` selects the last
//! body. Spelled `scf.index_switch` on the index cast to `index`, its last body being the
//! `default` region (the cases are `0..N-1`).
use crate::error::{shape_err, Expected, Result, Violation};
use crate::ir::Body;
use crate::ops::table::op_family;
use crate::types::{DType, TensorType};

op_family! {
    /// Control flow: ops with regions, spelled with upstream `scf` ops in MLIR.
    pub enum ControlOp : Control {
        If = "if", operands var, regions 2, upstream { results: Vec<TensorType> [types] },
        While = "while", operands var, regions 2, upstream {},
        // The region count is the number of branches (at least one; `case_c2`).
        Case = "case", operands var, regions 1, upstream { results: Vec<TensorType> [types] },
    }
}

impl ControlOp {
    /// The shape/dtype rule.
    pub fn infer(&self, xs: &[&TensorType]) -> Result<Vec<TensorType>> {
        match self {
            ControlOp::If { results } => infer_if(xs, results),
            ControlOp::While {} => Ok(xs.iter().map(|t| (*t).clone()).collect()),
            ControlOp::Case { results } => infer_case(xs, results),
        }
    }

    /// Checks the regions against the operand and result types.
    pub fn check_regions(&self, xs: &[&TensorType], results: &[TensorType], regions: &[Body], types: &[TensorType]) -> Result<()> {
        match self {
            ControlOp::If { .. } => check_if(xs, results, regions, types),
            ControlOp::While {} => check_while(xs, regions, types),
            ControlOp::Case { results } => check_case(xs, results, regions, types),
        }
    }
}

use super::call::join;

/// `if_c1`: the predicate is a `tensor<i1>` of rank 0. The results are carried by the op.
pub fn infer_if(xs: &[&TensorType], results: &[TensorType]) -> Result<Vec<TensorType>> {
    match xs.first() {
        Some(p) if p.dtype == DType::I1 && p.rank() == 0 => Ok(results.to_vec()),
        Some(p) => {
            let v = Violation::new("if", "if_c1", format!("the predicate must be tensor<i1>, got {p}")).types(0, Expected::Type(TensorType::scalar(DType::I1)), p);
            if p.dtype != DType::I1 {
                v.dtype_err()
            } else {
                v.shape_err()
            }
        }
        None => shape_err("if", "if_c1", "needs a predicate operand"),
    }
}

/// `if_c2`: two regions; `if_c3`: each body's parameters have the types of the operands after
/// the predicate; `if_c4`: each body yields the op's result types.
pub fn check_if(xs: &[&TensorType], results: &[TensorType], regions: &[Body], types: &[TensorType]) -> Result<()> {
    if regions.len() != 2 {
        return shape_err("if", "if_c2", format!("expects two regions (then, else), got {}", regions.len()));
    }
    let captured: Vec<&TensorType> = xs.iter().skip(1).copied().collect();
    let ty = |v: &crate::ir::Value| types.get(v.0 as usize).cloned().ok_or_else(|| crate::error::DialectError::Structure(format!("value %{} has no type", v.0)));
    for (name, body) in ["then", "else"].iter().zip(regions) {
        let params: Vec<TensorType> = body.params.iter().map(ty).collect::<Result<_>>()?;
        if params.len() != captured.len() || params.iter().zip(&captured).any(|(p, c)| p != *c) {
            return shape_err("if", "if_c3", format!("the {name} region's parameters ({}) must have the types of the captured operands ({})", join(params.iter()), join(captured.iter().copied())));
        }
        let outs: Vec<TensorType> = body.outputs.iter().map(ty).collect::<Result<_>>()?;
        if outs != results {
            return shape_err("if", "if_c4", format!("the {name} region yields ({}) but the op's results are ({})", join(outs.iter()), join(results.iter())));
        }
    }
    Ok(())
}

/// `while_c1`: two regions (cond, body); `while_c2`: both take the carries (the operand types)
/// as parameters; `while_c3`: cond yields one `tensor<i1>` of rank 0; `while_c4`: body yields
/// the carries' types. The results have the operand types.
pub fn check_while(xs: &[&TensorType], regions: &[Body], types: &[TensorType]) -> Result<()> {
    if regions.len() != 2 {
        return shape_err("while", "while_c1", format!("expects two regions (cond, body), got {}", regions.len()));
    }
    let ty = |v: &crate::ir::Value| types.get(v.0 as usize).cloned().ok_or_else(|| crate::error::DialectError::Structure(format!("value %{} has no type", v.0)));
    let carries: Vec<TensorType> = xs.iter().map(|t| (*t).clone()).collect();
    for (name, body) in ["cond", "body"].iter().zip(regions) {
        let params: Vec<TensorType> = body.params.iter().map(ty).collect::<Result<_>>()?;
        if params != carries {
            return shape_err("while", "while_c2", format!("the {name} region's parameters ({}) must have the types of the carries ({})", join(params.iter()), join(carries.iter())));
        }
    }
    let c: Vec<TensorType> = regions[0].outputs.iter().map(ty).collect::<Result<_>>()?;
    if c != [TensorType::scalar(DType::I1)] {
        return shape_err("while", "while_c3", format!("the cond region must yield one tensor<i1>, yields ({})", join(c.iter())));
    }
    let outs: Vec<TensorType> = regions[1].outputs.iter().map(ty).collect::<Result<_>>()?;
    if outs != carries {
        return shape_err("while", "while_c4", format!("the body region yields ({}) but the carries are ({})", join(outs.iter()), join(carries.iter())));
    }
    Ok(())
}

/// `case_c1`: the index is a 0-d `tensor<i32>` or `tensor<i64>`. The results are carried by
/// the op.
pub fn infer_case(xs: &[&TensorType], results: &[TensorType]) -> Result<Vec<TensorType>> {
    match xs.first() {
        Some(p) if matches!(p.dtype, DType::I32 | DType::I64) && p.rank() == 0 => Ok(results.to_vec()),
        Some(p) => {
            let v = Violation::new("case", "case_c1", format!("the index must be a 0-d tensor<i32> or tensor<i64>, got {p}")).types(0, Expected::Type(TensorType::scalar(DType::I32)), p);
            if matches!(p.dtype, DType::I32 | DType::I64) {
                v.shape_err()
            } else {
                v.dtype_err()
            }
        }
        None => shape_err("case", "case_c1", "needs an index operand"),
    }
}

/// `case_c2`: at least one region; `case_c3`: each body's parameters have the types of the
/// operands after the index; `case_c4`: each body yields the op's result types.
pub fn check_case(xs: &[&TensorType], results: &[TensorType], regions: &[Body], types: &[TensorType]) -> Result<()> {
    if regions.is_empty() {
        return shape_err("case", "case_c2", "expects at least one region (branch)");
    }
    let captured: Vec<&TensorType> = xs.iter().skip(1).copied().collect();
    let ty = |v: &crate::ir::Value| types.get(v.0 as usize).cloned().ok_or_else(|| crate::error::DialectError::Structure(format!("value %{} has no type", v.0)));
    for (k, body) in regions.iter().enumerate() {
        let params: Vec<TensorType> = body.params.iter().map(ty).collect::<Result<_>>()?;
        if params.len() != captured.len() || params.iter().zip(&captured).any(|(p, c)| p != *c) {
            return shape_err("case", "case_c3", format!("branch {k}'s parameters ({}) must have the types of the captured operands ({})", join(params.iter()), join(captured.iter().copied())));
        }
        let outs: Vec<TensorType> = body.outputs.iter().map(ty).collect::<Result<_>>()?;
        if outs != results {
            return shape_err("case", "case_c4", format!("branch {k} yields ({}) but the op's results are ({})", join(outs.iter()), join(results.iter())));
        }
    }
    Ok(())
}
