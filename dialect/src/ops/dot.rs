//! `dot_general` with batch and contracting dims (StableHLO semantics). Result dims:
//! batch dims (lhs order), then lhs free dims, then rhs free dims.
use crate::error::{shape_err, Result};
use crate::ops::table::op_family;
use crate::types::TensorType;

op_family! {
    /// `dot_general` (StableHLO's dimension numbers).
    pub enum DotOp : Dot {
        DotGeneral = "dot_general", operands 2, regions 0, irdl { dims: DotDims [attr] },
    }
}

impl DotOp {
    /// The shape/dtype rule.
    pub fn infer(&self, xs: &[&TensorType]) -> Result<TensorType> {
        match self {
            DotOp::DotGeneral { dims } => infer_dot_general(xs[0], xs[1], dims),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct DotDims {
    pub lhs_batching_dimensions: Vec<i64>,
    pub rhs_batching_dimensions: Vec<i64>,
    pub lhs_contracting_dimensions: Vec<i64>,
    pub rhs_contracting_dimensions: Vec<i64>,
}

impl DotDims {
    /// Plain matrix product of rank-2 operands.
    pub fn matmul() -> DotDims {
        DotDims { lhs_batching_dimensions: vec![], rhs_batching_dimensions: vec![], lhs_contracting_dimensions: vec![1], rhs_contracting_dimensions: vec![0] }
    }
    /// Dims of `x` (rank `r`) that are neither batch nor contracting.
    pub fn free(r: usize, batch: &[i64], contract: &[i64]) -> Vec<i64> {
        (0..r as i64).filter(|d| !batch.contains(d) && !contract.contains(d)).collect()
    }
}

/// c1: same dtype, numeric; c2: batch lists have equal length, contracting lists too;
/// c3: all dims are distinct and in range per operand; c4: batch extents agree;
/// c5: contracting extents agree.
pub fn infer_dot_general(l: &TensorType, r: &TensorType, d: &DotDims) -> Result<TensorType> {
    const OP: &str = "dot_general";
    if l.dtype != r.dtype || !l.dtype.is_numeric() {
        return shape_err(OP, "dot_general_c1", format!("operand types {l} and {r} must share a numeric element type"));
    }
    if d.lhs_batching_dimensions.len() != d.rhs_batching_dimensions.len() || d.lhs_contracting_dimensions.len() != d.rhs_contracting_dimensions.len() {
        return shape_err(OP, "dot_general_c2", format!("batch dims {:?}/{:?} or contracting dims {:?}/{:?} differ in length", d.lhs_batching_dimensions, d.rhs_batching_dimensions, d.lhs_contracting_dimensions, d.rhs_contracting_dimensions));
    }
    for (x, b, c, side) in [(l, &d.lhs_batching_dimensions, &d.lhs_contracting_dimensions, "lhs"), (r, &d.rhs_batching_dimensions, &d.rhs_contracting_dimensions, "rhs")] {
        let mut seen = vec![false; x.rank()];
        for &k in b.iter().chain(c) {
            if k < 0 || k as usize >= x.rank() || std::mem::replace(&mut seen[k as usize], true) {
                return shape_err(OP, "dot_general_c3", format!("{side} batch {b:?} and contracting {c:?} dims must be distinct dims of {x}"));
            }
        }
    }
    for (i, (&a, &b)) in d.lhs_batching_dimensions.iter().zip(&d.rhs_batching_dimensions).enumerate() {
        if l.shape[a as usize] != r.shape[b as usize] {
            return shape_err(OP, "dot_general_c4", format!("batch pair {i}: lhs {l} dim {a} = {} but rhs {r} dim {b} = {}", l.shape[a as usize], r.shape[b as usize]));
        }
    }
    for (&a, &b) in d.lhs_contracting_dimensions.iter().zip(&d.rhs_contracting_dimensions) {
        if l.shape[a as usize] != r.shape[b as usize] {
            return shape_err(OP, "dot_general_c5", format!("contracting dims differ: lhs {l} dim {a} = {}, rhs {r} dim {b} = {}", l.shape[a as usize], r.shape[b as usize]));
        }
    }
    let mut shape: Vec<i64> = d.lhs_batching_dimensions.iter().map(|&k| l.shape[k as usize]).collect();
    shape.extend(DotDims::free(l.rank(), &d.lhs_batching_dimensions, &d.lhs_contracting_dimensions).iter().map(|&k| l.shape[k as usize]));
    shape.extend(DotDims::free(r.rank(), &d.rhs_batching_dimensions, &d.rhs_contracting_dimensions).iter().map(|&k| r.shape[k as usize]));
    Ok(TensorType::new(l.dtype, shape))
}
