//! `dot_general` with batch and contracting dims (StableHLO semantics). Result dims:
//! batch dims (lhs order), then lhs free dims, then rhs free dims.
use crate::error::{shape_err, Result};
use crate::types::TensorType;

#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct DotDims {
    pub lhs_batch: Vec<i64>,
    pub rhs_batch: Vec<i64>,
    pub lhs_contract: Vec<i64>,
    pub rhs_contract: Vec<i64>,
}

impl DotDims {
    /// Plain matrix product of rank-2 operands.
    pub fn matmul() -> DotDims {
        DotDims { lhs_batch: vec![], rhs_batch: vec![], lhs_contract: vec![1], rhs_contract: vec![0] }
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
    if d.lhs_batch.len() != d.rhs_batch.len() || d.lhs_contract.len() != d.rhs_contract.len() {
        return shape_err(OP, "dot_general_c2", format!("batch dims {:?}/{:?} or contracting dims {:?}/{:?} differ in length", d.lhs_batch, d.rhs_batch, d.lhs_contract, d.rhs_contract));
    }
    for (x, b, c, side) in [(l, &d.lhs_batch, &d.lhs_contract, "lhs"), (r, &d.rhs_batch, &d.rhs_contract, "rhs")] {
        let mut seen = vec![false; x.rank()];
        for &k in b.iter().chain(c) {
            if k < 0 || k as usize >= x.rank() || std::mem::replace(&mut seen[k as usize], true) {
                return shape_err(OP, "dot_general_c3", format!("{side} batch {b:?} and contracting {c:?} dims must be distinct dims of {x}"));
            }
        }
    }
    for (i, (&a, &b)) in d.lhs_batch.iter().zip(&d.rhs_batch).enumerate() {
        if l.shape[a as usize] != r.shape[b as usize] {
            return shape_err(OP, "dot_general_c4", format!("batch pair {i}: lhs {l} dim {a} = {} but rhs {r} dim {b} = {}", l.shape[a as usize], r.shape[b as usize]));
        }
    }
    for (&a, &b) in d.lhs_contract.iter().zip(&d.rhs_contract) {
        if l.shape[a as usize] != r.shape[b as usize] {
            return shape_err(OP, "dot_general_c5", format!("contracting dims differ: lhs {l} dim {a} = {}, rhs {r} dim {b} = {}", l.shape[a as usize], r.shape[b as usize]));
        }
    }
    let mut shape: Vec<i64> = d.lhs_batch.iter().map(|&k| l.shape[k as usize]).collect();
    shape.extend(DotDims::free(l.rank(), &d.lhs_batch, &d.lhs_contract).iter().map(|&k| l.shape[k as usize]));
    shape.extend(DotDims::free(r.rank(), &d.rhs_batch, &d.rhs_contract).iter().map(|&k| r.shape[k as usize]));
    Ok(TensorType::new(l.dtype, shape))
}
