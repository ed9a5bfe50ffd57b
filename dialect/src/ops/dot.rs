//! `dot_general` with batch and contracting dims (StableHLO semantics). Result dims:
//! batch dims (lhs order), then lhs free dims, then rhs free dims.
use crate::error::{shape_err, Expected, Result, Violation};
use crate::ops::table::op_family;
use crate::types::DType;
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
        let v = Violation::new(OP, "dot_general_c1", format!("operand types {l} and {r} must share a numeric element type"));
        // A non-numeric lhs is at fault; else the rhs, whose element type should be the lhs's.
        let v = if !l.dtype.is_numeric() {
            v.types(0, Expected::DTypes(&[DType::F32, DType::F64, DType::I32, DType::I64]), l)
        } else {
            v.types(1, Expected::Type(r.with_dtype(l.dtype)), r)
        };
        return v.dtype_err();
    }
    if d.lhs_batching_dimensions.len() != d.rhs_batching_dimensions.len() || d.lhs_contracting_dimensions.len() != d.rhs_contracting_dimensions.len() {
        return shape_err(OP, "dot_general_c2", format!("batch dims {:?}/{:?} or contracting dims {:?}/{:?} differ in length", d.lhs_batching_dimensions, d.rhs_batching_dimensions, d.lhs_contracting_dimensions, d.rhs_contracting_dimensions));
    }
    for (operand, (x, b, c, side)) in [(l, &d.lhs_batching_dimensions, &d.lhs_contracting_dimensions, "lhs"), (r, &d.rhs_batching_dimensions, &d.rhs_contracting_dimensions, "rhs")].into_iter().enumerate() {
        let mut seen = vec![false; x.rank()];
        for &k in b.iter().chain(c) {
            if k < 0 || k as usize >= x.rank() || std::mem::replace(&mut seen[k as usize], true) {
                return Violation::new(OP, "dot_general_c3", format!("{side} batch {b:?} and contracting {c:?} dims must be distinct dims of {x}")).operand(operand).actual(x).shape_err();
            }
        }
    }
    for (i, (&a, &b)) in d.lhs_batching_dimensions.iter().zip(&d.rhs_batching_dimensions).enumerate() {
        if l.shape[a as usize] != r.shape[b as usize] {
            return Violation::new(OP, "dot_general_c4", format!("batch pair {i}: lhs {l} dim {a} = {} but rhs {r} dim {b} = {}", l.shape[a as usize], r.shape[b as usize])).operand(1).actual(r).shape_err();
        }
    }
    for (&a, &b) in d.lhs_contracting_dimensions.iter().zip(&d.rhs_contracting_dimensions) {
        if l.shape[a as usize] != r.shape[b as usize] {
            return Violation::new(OP, "dot_general_c5", format!("contracting dims differ: lhs {l} dim {a} = {}, rhs {r} dim {b} = {}", l.shape[a as usize], r.shape[b as usize])).operand(1).actual(r).shape_err();
        }
    }
    let mut shape: Vec<i64> = d.lhs_batching_dimensions.iter().map(|&k| l.shape[k as usize]).collect();
    shape.extend(DotDims::free(l.rank(), &d.lhs_batching_dimensions, &d.lhs_contracting_dimensions).iter().map(|&k| l.shape[k as usize]));
    shape.extend(DotDims::free(r.rank(), &d.rhs_batching_dimensions, &d.rhs_contracting_dimensions).iter().map(|&k| r.shape[k as usize]));
    Ok(TensorType::new(l.dtype, shape))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::DialectError;

    #[test]
    fn contracting_mismatch_names_the_rhs() {
        let (l, r) = (TensorType::new(DType::F32, [2, 3]), TensorType::new(DType::F32, [4, 5]));
        let e = infer_dot_general(&l, &r, &DotDims::matmul()).unwrap_err();
        assert_eq!(e.to_string(), "'quabla.dot_general' op (dot_general_c5): contracting dims differ: lhs tensor<2x3xf32> dim 1 = 3, rhs tensor<4x5xf32> dim 0 = 4");
        assert!(matches!(&e, DialectError::Shape(v) if v.operand == Some(1) && v.actual == Some(r.clone())));
        let r64 = TensorType::new(DType::F64, [3, 5]);
        assert!(matches!(infer_dot_general(&l, &r64, &DotDims::matmul()), Err(DialectError::DType(v)) if v.expected == Some(Expected::Type(TensorType::new(DType::F32, [3, 5])))));
    }
}
