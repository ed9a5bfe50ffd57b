//! Layout ops: `broadcast_in_dim`, `reshape`, `transpose`. They move elements without
//! arithmetic; the element type is preserved.
use crate::error::{shape_err, Result, Violation};
use crate::ops::table::op_family;
use crate::types::TensorType;

op_family! {
    /// Layout ops: they move elements without arithmetic.
    pub enum LayoutOp : Layout {
        BroadcastInDim = "broadcast_in_dim", operands 1, regions 0, irdl { dims: Vec<i64> [attr], shape: Vec<i64> [shape] },
        Reshape = "reshape", operands 1, regions 0, irdl { shape: Vec<i64> [shape] },
        Transpose = "transpose", operands 1, regions 0, irdl { perm: Vec<i64> [attr] },
        StopGradient = "stop_gradient", operands 1, regions 0, irdl {},
    }
}

impl LayoutOp {
    /// The shape/dtype rule.
    pub fn infer(&self, xs: &[&TensorType]) -> Result<TensorType> {
        match self {
            LayoutOp::BroadcastInDim { dims, shape } => infer_broadcast_in_dim(xs[0], dims, shape),
            LayoutOp::Reshape { shape } => infer_reshape(xs[0], shape),
            LayoutOp::Transpose { perm } => infer_transpose(xs[0], perm),
            // `stop_gradient`: the operand itself; its derivatives are zero.
            LayoutOp::StopGradient {} => Ok(xs[0].clone()),
        }
    }
}

/// Returns true when `perm` is a permutation of 0..n.
pub fn is_permutation(perm: &[i64], n: usize) -> bool {
    if perm.len() != n {
        return false;
    }
    let mut seen = vec![false; n];
    perm.iter().all(|&p| p >= 0 && (p as usize) < n && !std::mem::replace(&mut seen[p as usize], true))
}

/// `broadcast_in_dim`: operand dim i maps to result dim `dims[i]`.
/// c1: len(dims) == rank(operand); c2: dims are in range and strictly increasing;
/// c3: operand extent is 1 or equals the result extent; c4: result extents positive.
pub fn infer_broadcast_in_dim(x: &TensorType, dims: &[i64], shape: &[i64]) -> Result<TensorType> {
    const OP: &str = "broadcast_in_dim";
    if dims.len() != x.rank() {
        return Violation::new(OP, "broadcast_in_dim_c1", format!("dims {dims:?} has {} entries, operand {x} has rank {}", dims.len(), x.rank())).operand(0).actual(x).shape_err();
    }
    if shape.iter().any(|&d| d <= 0) {
        return shape_err(OP, "broadcast_in_dim_c4", format!("result shape {shape:?} has a non-positive extent"));
    }
    for (i, &d) in dims.iter().enumerate() {
        if d < 0 || d as usize >= shape.len() || (i > 0 && d <= dims[i - 1]) {
            return shape_err(OP, "broadcast_in_dim_c2", format!("dims {dims:?} must be strictly increasing and within result rank {}", shape.len()));
        }
        let (a, b) = (x.shape[i], shape[d as usize]);
        if a != 1 && a != b {
            return Violation::new(OP, "broadcast_in_dim_c3", format!("operand {x} dim {i} (extent {a}) cannot broadcast to result dim {d} (extent {b}) of shape {shape:?}"))
                .operand(0)
                .actual(x)
                .shape_err();
        }
    }
    Ok(TensorType::new(x.dtype, shape))
}

/// `reshape_c1`: element counts agree; `reshape_c2`: extents positive.
pub fn infer_reshape(x: &TensorType, shape: &[i64]) -> Result<TensorType> {
    if shape.iter().any(|&d| d <= 0) {
        return shape_err("reshape", "reshape_c2", format!("result shape {shape:?} has a non-positive extent"));
    }
    let n = TensorType::new(x.dtype, shape).check_size("reshape")? / x.dtype.size();
    if n != x.num_elements() {
        return Violation::new("reshape", "reshape_c1", format!("cannot reshape {x} ({} elements) to shape {shape:?} ({n} elements)", x.num_elements())).operand(0).actual(x).shape_err();
    }
    Ok(TensorType::new(x.dtype, shape))
}

/// `transpose_c1`: perm is a permutation of 0..rank. Result dim i = operand dim perm[i].
pub fn infer_transpose(x: &TensorType, perm: &[i64]) -> Result<TensorType> {
    if !is_permutation(perm, x.rank()) {
        return Violation::new("transpose", "transpose_c1", format!("perm {perm:?} is not a permutation of the {} dims of {x}", x.rank())).operand(0).actual(x).shape_err();
    }
    Ok(TensorType::new(x.dtype, perm.iter().map(|&p| x.shape[p as usize]).collect::<Vec<_>>()))
}
