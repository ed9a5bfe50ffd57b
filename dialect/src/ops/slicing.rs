//! Slicing ops: `slice`, `pad`, `concatenate`, `dynamic_slice`, `gather` (take along one axis).
//! Out-of-range dynamic starts and gather indices are clamped, as in StableHLO.
use crate::error::{shape_err, Result};
use crate::ops::table::op_family;
use crate::types::{DType, TensorType};

op_family! {
    /// Slicing ops; attributes under StableHLO's names.
    pub enum SlicingOp : Slicing {
        Concatenate = "concatenate", operands 2, regions 0, irdl { dim: i64 [attr] },
        Slice = "slice", operands 1, regions 0, irdl { start_indices: Vec<i64> [attr], limit_indices: Vec<i64> [attr], strides: Vec<i64> [attr] },
        Pad = "pad", operands 2, regions 0, irdl { edge_padding_low: Vec<i64> [attr], edge_padding_high: Vec<i64> [attr], interior_padding: Vec<i64> [attr] },
        DynamicSlice = "dynamic_slice", operands var, regions 0, irdl { slice_sizes: Vec<i64> [attr] },
        Gather = "gather", operands 2, regions 0, irdl { axis: i64 [attr] },
    }
}

impl SlicingOp {
    /// The shape/dtype rule (operand count already checked).
    pub fn infer(&self, xs: &[&TensorType]) -> Result<TensorType> {
        match self {
            SlicingOp::Concatenate { dim } => infer_concatenate(xs, *dim),
            SlicingOp::Slice { start_indices, limit_indices, strides } => infer_slice(xs[0], start_indices, limit_indices, strides),
            SlicingOp::Pad { edge_padding_low, edge_padding_high, interior_padding } => infer_pad(xs[0], xs[1], edge_padding_low, edge_padding_high, interior_padding),
            SlicingOp::DynamicSlice { slice_sizes } => {
                let Some((x, starts)) = xs.split_first() else { return shape_err("dynamic_slice", "dynamic_slice_c1", "needs an operand") };
                infer_dynamic_slice(x, starts, slice_sizes)
            }
            SlicingOp::Gather { axis } => infer_gather(xs[0], xs[1], *axis),
        }
    }
}

fn axis_ok(axis: i64, rank: usize) -> bool {
    axis >= 0 && (axis as usize) < rank
}

/// `slice`: c1: start/limit/strides have rank(operand) entries; c2: 0 <= start <= limit <= extent
/// and start < limit; c3: strides > 0. Result extent = ceil((limit - start) / stride).
pub fn infer_slice(x: &TensorType, start: &[i64], limit: &[i64], strides: &[i64]) -> Result<TensorType> {
    const OP: &str = "slice";
    let r = x.rank();
    if start.len() != r || limit.len() != r || strides.len() != r {
        return shape_err(OP, "slice_c1", format!("start {start:?}, limit {limit:?} and strides {strides:?} must each have {r} entries for operand {x}"));
    }
    let mut shape = Vec::with_capacity(r);
    for i in 0..r {
        if strides[i] <= 0 {
            return shape_err(OP, "slice_c3", format!("strides {strides:?} must be positive"));
        }
        if start[i] < 0 || start[i] >= limit[i] || limit[i] > x.shape[i] {
            return shape_err(OP, "slice_c2", format!("dim {i}: need 0 <= start ({}) < limit ({}) <= extent ({}) of operand {x}", start[i], limit[i], x.shape[i]));
        }
        shape.push((limit[i] - start[i] + strides[i] - 1) / strides[i]);
    }
    Ok(TensorType::new(x.dtype, shape))
}

/// `pad`: c1: the padding value is a 0-d tensor of the operand's dtype; c2: low/high/interior
/// have rank entries; c3: all are >= 0. Result extent = low + high + n + (n-1)*interior.
pub fn infer_pad(x: &TensorType, value: &TensorType, low: &[i64], high: &[i64], interior: &[i64]) -> Result<TensorType> {
    const OP: &str = "pad";
    if value.rank() != 0 || value.dtype != x.dtype {
        return shape_err(OP, "pad_c1", format!("padding value {value} must be a 0-d tensor of {}", x.dtype));
    }
    let r = x.rank();
    if low.len() != r || high.len() != r || interior.len() != r {
        return shape_err(OP, "pad_c2", format!("low {low:?}, high {high:?}, interior {interior:?} must each have {r} entries for operand {x}"));
    }
    if low.iter().chain(high).chain(interior).any(|&p| p < 0) {
        return shape_err(OP, "pad_c3", format!("low {low:?}, high {high:?}, interior {interior:?} must be non-negative"));
    }
    let shape = (0..r).map(|i| low[i] + high[i] + x.shape[i] + (x.shape[i] - 1) * interior[i]).collect::<Vec<_>>();
    Ok(TensorType::new(x.dtype, shape))
}

/// `concatenate` (binary; n-ary concatenation is a chain): c1: two operands; c2: same dtype and rank; c3: 0 <= dim < rank;
/// c4: extents agree outside `dim`.
pub fn infer_concatenate(xs: &[&TensorType], dim: i64) -> Result<TensorType> {
    const OP: &str = "concatenate";
    let Some(first) = xs.first() else { return shape_err(OP, "concatenate_c1", "needs at least one operand") };
    if !axis_ok(dim, first.rank()) {
        return shape_err(OP, "concatenate_c3", format!("dim {dim} out of range for operand {first}"));
    }
    let mut shape = first.shape.clone();
    for (k, x) in xs.iter().enumerate().skip(1) {
        if x.dtype != first.dtype || x.rank() != first.rank() {
            return shape_err(OP, "concatenate_c2", format!("operand {k} type {x} differs in dtype or rank from operand 0 type {first}"));
        }
        for i in 0..x.rank() {
            if i != dim as usize && x.shape[i] != first.shape[i] {
                return shape_err(OP, "concatenate_c4", format!("operand {k} type {x} differs from operand 0 type {first} in dim {i}"));
            }
        }
        shape[dim as usize] += x.shape[dim as usize];
    }
    Ok(TensorType::new(first.dtype, shape))
}

/// `dynamic_slice`: c1: one 0-d integer start index per dim, all of one type; c2: sizes has rank entries with
/// 1 <= size <= extent. Starts are clamped to [0, extent - size].
pub fn infer_dynamic_slice(x: &TensorType, starts: &[&TensorType], sizes: &[i64]) -> Result<TensorType> {
    const OP: &str = "dynamic_slice";
    if starts.len() != x.rank() || starts.iter().any(|s| s.rank() != 0 || !s.dtype.is_int() || *s != starts[0]) {
        return shape_err(OP, "dynamic_slice_c1", format!("needs {} start indices, all of type tensor<i32> or all of type tensor<i64>, for operand {x}, got {}", x.rank(), starts.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ")));
    }
    if sizes.len() != x.rank() || sizes.iter().zip(&x.shape).any(|(&s, &e)| s < 1 || s > e) {
        return shape_err(OP, "dynamic_slice_c2", format!("sizes {sizes:?} must have one entry per dim with 1 <= size <= extent of operand {x}"));
    }
    Ok(TensorType::new(x.dtype, sizes))
}

/// `gather` (take along `axis`): c1: 0 <= axis < rank(operand); c2: indices are i32 or i64.
/// Result shape = operand.shape[..axis] ++ indices.shape ++ operand.shape[axis+1..].
pub fn infer_gather(x: &TensorType, idx: &TensorType, axis: i64) -> Result<TensorType> {
    if !axis_ok(axis, x.rank()) {
        return shape_err("gather", "gather_c1", format!("axis {axis} out of range for operand {x}"));
    }
    if !matches!(idx.dtype, DType::I32 | DType::I64) {
        return shape_err("gather", "gather_c2", format!("indices type {idx} must have element type i32 or i64"));
    }
    let a = axis as usize;
    let mut shape = x.shape[..a].to_vec();
    shape.extend(&idx.shape);
    shape.extend(&x.shape[a + 1..]);
    Ok(TensorType::new(x.dtype, shape))
}
