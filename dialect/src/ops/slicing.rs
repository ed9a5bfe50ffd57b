//! Slicing ops: `slice`, `pad`, `concatenate`, `dynamic_slice`, `gather` (take along one axis),
//! `dynamic_update_slice` (an operand with a window overwritten by an update).
//! Out-of-range dynamic starts and gather indices are clamped, as in StableHLO.
use crate::error::{shape_err, Expected, Result, Violation};
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
        DynamicUpdateSlice = "dynamic_update_slice", operands var2, regions 0, irdl {},
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
            SlicingOp::DynamicUpdateSlice {} => match xs {
                [x, u, starts @ ..] => infer_dynamic_update_slice(x, u, starts),
                _ => shape_err("dynamic_update_slice", "dynamic_update_slice_c1", format!("needs an operand and an update, got {} operands", xs.len())),
            },
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
        return Violation::new(OP, "slice_c1", format!("start {start:?}, limit {limit:?} and strides {strides:?} must each have {r} entries for operand {x}")).operand(0).actual(x).shape_err();
    }
    let mut shape = Vec::with_capacity(r);
    for i in 0..r {
        if strides[i] <= 0 {
            return shape_err(OP, "slice_c3", format!("strides {strides:?} must be positive"));
        }
        if start[i] < 0 || start[i] >= limit[i] || limit[i] > x.shape[i] {
            return Violation::new(OP, "slice_c2", format!("dim {i}: need 0 <= start ({}) < limit ({}) <= extent ({}) of operand {x}", start[i], limit[i], x.shape[i])).operand(0).actual(x).shape_err();
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
        let v = Violation::new(OP, "pad_c1", format!("padding value {value} must be a 0-d tensor of {}", x.dtype)).types(1, Expected::Type(TensorType::scalar(x.dtype)), value);
        return if value.dtype != x.dtype { v.dtype_err() } else { v.shape_err() };
    }
    let r = x.rank();
    if low.len() != r || high.len() != r || interior.len() != r {
        return Violation::new(OP, "pad_c2", format!("low {low:?}, high {high:?}, interior {interior:?} must each have {r} entries for operand {x}")).operand(0).actual(x).shape_err();
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
        return Violation::new(OP, "concatenate_c3", format!("dim {dim} out of range for operand {first}")).operand(0).actual(first).shape_err();
    }
    let mut shape = first.shape.clone();
    for (k, x) in xs.iter().enumerate().skip(1) {
        if x.dtype != first.dtype || x.rank() != first.rank() {
            let v = Violation::new(OP, "concatenate_c2", format!("operand {k} type {x} differs in dtype or rank from operand 0 type {first}")).types(k, Expected::Type((*first).clone()), x);
            return if x.dtype != first.dtype { v.dtype_err() } else { v.shape_err() };
        }
        for i in 0..x.rank() {
            if i != dim as usize && x.shape[i] != first.shape[i] {
                return Violation::new(OP, "concatenate_c4", format!("operand {k} type {x} differs from operand 0 type {first} in dim {i}")).types(k, Expected::Type((*first).clone()), x).shape_err();
            }
        }
        shape[dim as usize] += x.shape[dim as usize];
    }
    Ok(TensorType::new(first.dtype, shape))
}

/// The start indices of `dynamic_slice` / `dynamic_update_slice` (operands `first..`): one 0-d
/// integer start per dim of the operand `x`, all of one type (constraint `label`).
fn check_starts(op: &'static str, label: &'static str, x: &TensorType, starts: &[&TensorType], first: usize) -> Result<()> {
    if starts.len() == x.rank() && starts.iter().all(|s| s.rank() == 0 && matches!(s.dtype, DType::I32 | DType::I64) && *s == starts[0]) {
        return Ok(());
    }
    let v = Violation::new(op, label, format!("needs {} start indices, all of type tensor<i32> or all of type tensor<i64>, for operand {x}, got {}", x.rank(), starts.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ")));
    // The right number of 0-d starts: the fault is an element type (not an integer, or not that of the first start).
    if starts.len() == x.rank() && starts.iter().all(|s| s.rank() == 0) {
        let want: &'static [DType] = match starts[0].dtype {
            DType::I32 => &[DType::I32],
            DType::I64 => &[DType::I64],
            DType::F32 | DType::F64 | DType::I1 | DType::U8 | DType::U32 => &[DType::I32, DType::I64],
        };
        if let Some(k) = starts.iter().position(|s| !want.contains(&s.dtype)) {
            return v.types(k + first, Expected::DTypes(want), starts[k]).dtype_err();
        }
    }
    let v = match starts.iter().position(|s| s.rank() != 0) {
        Some(k) => v.types(k + first, Expected::Shape(vec![]), starts[k]),
        None => v.operand(0).actual(x),
    };
    v.shape_err()
}

/// `dynamic_slice`: c1: one 0-d integer start index per dim, all of one type; c2: sizes has rank entries with
/// 1 <= size <= extent. Starts are clamped to [0, extent - size].
pub fn infer_dynamic_slice(x: &TensorType, starts: &[&TensorType], sizes: &[i64]) -> Result<TensorType> {
    const OP: &str = "dynamic_slice";
    check_starts(OP, "dynamic_slice_c1", x, starts, 1)?;
    if sizes.len() != x.rank() || sizes.iter().zip(&x.shape).any(|(&s, &e)| s < 1 || s > e) {
        return Violation::new(OP, "dynamic_slice_c2", format!("sizes {sizes:?} must have one entry per dim with 1 <= size <= extent of operand {x}")).operand(0).actual(x).shape_err();
    }
    Ok(TensorType::new(x.dtype, sizes))
}

/// `dynamic_update_slice`: c1: the update has the operand's dtype and rank; c2: each update
/// extent is <= the operand's; c3: one 0-d integer start per dim, all of one type. The result
/// has the operand's type; starts are clamped to `[0, extent - update extent]`.
pub fn infer_dynamic_update_slice(x: &TensorType, u: &TensorType, starts: &[&TensorType]) -> Result<TensorType> {
    const OP: &str = "dynamic_update_slice";
    if u.dtype != x.dtype || u.rank() != x.rank() {
        let v = Violation::new(OP, "dynamic_update_slice_c1", format!("the update {u} must have the dtype and rank of the operand {x}")).types(1, Expected::Type(x.clone()), u);
        return if u.dtype != x.dtype { v.dtype_err() } else { v.shape_err() };
    }
    if u.shape.iter().zip(&x.shape).any(|(a, b)| a > b) {
        return Violation::new(OP, "dynamic_update_slice_c2", format!("the update {u} does not fit in the operand {x}")).types(1, Expected::Type(x.clone()), u).shape_err();
    }
    check_starts(OP, "dynamic_update_slice_c3", x, starts, 2)?;
    Ok(x.clone())
}

/// `gather` (take along `axis`): c1: 0 <= axis < rank(operand); c2: indices are i32 or i64.
/// Result shape = operand.shape[..axis] ++ indices.shape ++ operand.shape[axis+1..].
pub fn infer_gather(x: &TensorType, idx: &TensorType, axis: i64) -> Result<TensorType> {
    if !axis_ok(axis, x.rank()) {
        return Violation::new("gather", "gather_c1", format!("axis {axis} out of range for operand {x}")).operand(0).actual(x).shape_err();
    }
    if !matches!(idx.dtype, DType::I32 | DType::I64) {
        return Violation::new("gather", "gather_c2", format!("indices type {idx} must have element type i32 or i64")).types(1, Expected::DTypes(&[DType::I32, DType::I64]), idx).dtype_err();
    }
    let a = axis as usize;
    let mut shape = x.shape[..a].to_vec();
    shape.extend(&idx.shape);
    shape.extend(&x.shape[a + 1..]);
    Ok(TensorType::new(x.dtype, shape))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::DialectError;

    #[test]
    fn dtype_and_shape_faults_are_told_apart() {
        let x = TensorType::new(DType::F32, [4, 3]);
        let (i32s, i64s) = (TensorType::scalar(DType::I32), TensorType::scalar(DType::I64));
        assert!(matches!(infer_pad(&x, &TensorType::scalar(DType::F64), &[0, 0], &[0, 0], &[0, 0]), Err(DialectError::DType(v)) if v.operand == Some(1)));
        assert!(matches!(infer_pad(&x, &TensorType::new(DType::F32, [1]), &[0, 0], &[0, 0], &[0, 0]), Err(DialectError::Shape(v)) if v.constraint == "pad_c1"));
        let e = infer_dynamic_slice(&x, &[&i32s, &i64s], &[1, 1]).unwrap_err();
        assert!(matches!(&e, DialectError::DType(v) if v.operand == Some(2) && v.expected == Some(Expected::DTypes(&[DType::I32]))), "{e:?}");
        assert!(matches!(infer_dynamic_slice(&x, &[&i32s], &[1, 1]), Err(DialectError::Shape(v)) if v.constraint == "dynamic_slice_c1"));
        assert!(matches!(infer_gather(&x, &TensorType::new(DType::F32, [2]), 0), Err(DialectError::DType(v)) if v.constraint == "gather_c2"));
        let y = TensorType::new(DType::F64, [4, 3]);
        assert!(matches!(infer_concatenate(&[&x, &y], 0), Err(DialectError::DType(v)) if v.operand == Some(1)));
        let z = TensorType::new(DType::F32, [4, 2]);
        assert!(matches!(infer_concatenate(&[&x, &z], 0), Err(DialectError::Shape(v)) if v.constraint == "concatenate_c4" && v.actual == Some(z.clone())));
    }

    #[test]
    fn dynamic_update_slice_rule() {
        let x = TensorType::new(DType::F32, [4, 3]);
        let (i32s, i64s) = (TensorType::scalar(DType::I32), TensorType::scalar(DType::I64));
        let u = TensorType::new(DType::F32, [1, 3]);
        assert_eq!(infer_dynamic_update_slice(&x, &u, &[&i64s, &i64s]).unwrap(), x);
        let e = infer_dynamic_update_slice(&x, &TensorType::new(DType::F64, [1, 3]), &[&i64s, &i64s]).unwrap_err();
        assert!(matches!(&e, DialectError::DType(v) if v.constraint == "dynamic_update_slice_c1" && v.operand == Some(1)), "{e:?}");
        assert!(matches!(infer_dynamic_update_slice(&x, &TensorType::new(DType::F32, [3]), &[&i64s, &i64s]), Err(DialectError::Shape(v)) if v.constraint == "dynamic_update_slice_c1"));
        assert!(matches!(infer_dynamic_update_slice(&x, &TensorType::new(DType::F32, [5, 1]), &[&i64s, &i64s]), Err(DialectError::Shape(v)) if v.constraint == "dynamic_update_slice_c2"));
        assert!(matches!(infer_dynamic_update_slice(&x, &u, &[&i64s]), Err(DialectError::Shape(v)) if v.constraint == "dynamic_update_slice_c3"));
        let e = infer_dynamic_update_slice(&x, &u, &[&i32s, &i64s]).unwrap_err();
        assert!(matches!(&e, DialectError::DType(v) if v.operand == Some(3)), "{e:?}");
    }
}
