//! Scatter ops: `scatter` (set), `scatter_add`, `scatter_mul`, `scatter_min`, `scatter_max`,
//! with StableHLO's scatter dimension numbers (`update_window_dims`, `inserted_window_dims`,
//! `scatter_dims_to_operand_dims`, `index_vector_dim`; no batching dims). The result has the
//! operand's type; each update window is combined into the result at its start index, in
//! update order (so with `scatter` the last duplicate wins). An update window whose start puts
//! any of its elements outside the operand is skipped (dropped), as XLA does; frontends clamp
//! indices first when they want clamping. Also owns [`ScatterDims`], the index arithmetic
//! shared by every layer.
use crate::error::{shape_err, Expected, Result, Violation};
use crate::ops::table::op_family;
use crate::types::{DType, TensorType};

op_family! {
    /// Scatter ops; attributes under StableHLO's names.
    pub enum ScatterOp : Scatter {
        Scatter = _, operands 3, regions 0, irdl { op: Combiner [name], update_window_dims: Vec<i64> [attr], inserted_window_dims: Vec<i64> [attr], scatter_dims_to_operand_dims: Vec<i64> [attr], index_vector_dim: i64 [attr] },
    }
}

/// How an update element is combined with the element it lands on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Combiner {
    /// Replace (`scatter`).
    Set,
    Add,
    Mul,
    Min,
    Max,
}

impl Combiner {
    pub const ALL: [Combiner; 5] = [Combiner::Set, Combiner::Add, Combiner::Mul, Combiner::Min, Combiner::Max];
    /// The op name (`scatter`, `scatter_add`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Combiner::Set => "scatter",
            Combiner::Add => "scatter_add",
            Combiner::Mul => "scatter_mul",
            Combiner::Min => "scatter_min",
            Combiner::Max => "scatter_max",
        }
    }
    pub fn from_name(s: &str) -> Option<Self> {
        Combiner::ALL.into_iter().find(|r| r.name() == s)
    }
}

/// The dimension numbers of a scatter, with the operand/indices/updates ranks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScatterDims<'a> {
    pub update_window_dims: &'a [i64],
    pub inserted_window_dims: &'a [i64],
    pub scatter_dims_to_operand_dims: &'a [i64],
    pub index_vector_dim: i64,
}

impl ScatterDims<'_> {
    /// The dims of the updates that are not window dims (they walk the indices' batch dims).
    pub fn update_scatter_dims(&self, updates_rank: usize) -> Vec<usize> {
        (0..updates_rank).filter(|d| !self.update_window_dims.contains(&(*d as i64))).collect()
    }

    /// The operand dims covered by update window dims, in order.
    pub fn window_operand_dims(&self, operand_rank: usize) -> Vec<usize> {
        (0..operand_rank).filter(|d| !self.inserted_window_dims.contains(&(*d as i64))).collect()
    }

    /// For an update element at multi-index `u`, the position in the indices of component `k`
    /// of its start index: the scatter dims of `u`, with `k` inserted at `index_vector_dim`
    /// (when that dim exists in the indices).
    pub fn index_position(&self, u: &[usize], scatter_dims: &[usize], indices_rank: usize, k: usize) -> Vec<usize> {
        let mut p: Vec<usize> = scatter_dims.iter().map(|&d| u[d]).collect();
        let ivd = self.index_vector_dim as usize;
        if ivd < indices_rank {
            p.insert(ivd, k);
        }
        p
    }

    /// The operand element an update element lands on: `start` (one entry per operand dim, 0
    /// for dims not in `scatter_dims_to_operand_dims`) plus the window offset of `u`. `None`
    /// when the window at `start` does not fit in the operand (the update is dropped).
    pub fn target(&self, u: &[usize], start: &[i64], operand: &[i64], updates: &[i64]) -> Option<Vec<usize>> {
        let wdims = self.window_operand_dims(operand.len());
        let mut full = start.to_vec();
        for (j, &od) in wdims.iter().enumerate() {
            let ud = self.update_window_dims[j] as usize;
            let size = updates[ud];
            if start[od] < 0 || start[od] + size > operand[od] {
                return None;
            }
            full[od] += u[ud] as i64;
        }
        for &od in self.inserted_window_dims {
            let od = od as usize;
            if start[od] < 0 || start[od] >= operand[od] {
                return None;
            }
        }
        Some(full.into_iter().map(|v| v as usize).collect())
    }

    /// When these dims are the transpose of `gather {axis}` (take along `axis`: full windows on
    /// every other dim, one implicit index per update), returns `axis`.
    pub fn take_axis(&self, operand: &TensorType, indices: &TensorType, updates: &TensorType) -> Option<usize> {
        let (r, q) = (operand.rank(), indices.rank());
        if self.index_vector_dim as usize != q || self.scatter_dims_to_operand_dims.len() != 1 || self.inserted_window_dims != self.scatter_dims_to_operand_dims {
            return None;
        }
        let a = self.scatter_dims_to_operand_dims[0] as usize;
        let want: Vec<i64> = (0..a as i64).chain((a + q) as i64..(r - 1 + q) as i64).collect();
        let mut shape = operand.shape[..a].to_vec();
        shape.extend(&indices.shape);
        shape.extend(&operand.shape[a + 1..]);
        (self.update_window_dims == want && updates.shape == shape).then_some(a)
    }
}

impl ScatterOp {
    /// The dimension numbers.
    pub fn dims(&self) -> ScatterDims<'_> {
        match self {
            ScatterOp::Scatter { update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims, index_vector_dim, .. } => {
                ScatterDims { update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims, index_vector_dim: *index_vector_dim }
            }
        }
    }

    /// The combiner.
    pub fn combiner(&self) -> Combiner {
        match self {
            ScatterOp::Scatter { op, .. } => *op,
        }
    }

    /// The shape/dtype rule (operand count already checked).
    pub fn infer(&self, xs: &[&TensorType]) -> Result<TensorType> {
        infer_scatter(self.combiner(), xs[0], xs[1], xs[2], &self.dims())
    }

    /// The scatter along `axis` that is the transpose of `gather {axis}` (take along axis) on
    /// an operand of rank `operand_rank` with indices of rank `indices_rank`.
    pub fn along_axis(op: Combiner, operand_rank: usize, indices_rank: usize, axis: usize) -> ScatterOp {
        let (r, q, a) = (operand_rank as i64, indices_rank as i64, axis as i64);
        ScatterOp::Scatter { op, update_window_dims: (0..a).chain(a + q..r - 1 + q).collect(), inserted_window_dims: vec![a], scatter_dims_to_operand_dims: vec![a], index_vector_dim: q }
    }
}

fn sorted_unique_in(v: &[i64], n: usize) -> bool {
    v.windows(2).all(|w| w[0] < w[1]) && v.iter().all(|&d| d >= 0 && (d as usize) < n)
}

/// `scatter*`: c1: updates have the operand's dtype; c2: indices are i32 or i64; c3:
/// 0 <= index_vector_dim <= rank(indices); c4: update_window_dims sorted, unique, < rank(updates);
/// c5: inserted_window_dims sorted, unique, < rank(operand); c6: rank(operand) =
/// |update_window_dims| + |inserted_window_dims|; c7: scatter_dims_to_operand_dims unique,
/// < rank(operand), one per index component; c8: the updates' scatter dims equal the indices'
/// dims other than index_vector_dim; c9: window extents fit the operand; c10: `scatter_add`,
/// `_mul`, `_min`, `_max` need a numeric dtype. The result has the operand's type.
pub fn infer_scatter(op: Combiner, x: &TensorType, idx: &TensorType, upd: &TensorType, d: &ScatterDims) -> Result<TensorType> {
    let name = op.name();
    if upd.dtype != x.dtype {
        return Violation::new(name, "scatter_c1", format!("updates type {upd} must have the operand's element type {}", x.dtype)).types(2, Expected::DTypes(dtype_list(x.dtype)), upd).dtype_err();
    }
    if !matches!(idx.dtype, DType::I32 | DType::I64) {
        return Violation::new(name, "scatter_c2", format!("indices type {idx} must have element type i32 or i64")).types(1, Expected::DTypes(&[DType::I32, DType::I64]), idx).dtype_err();
    }
    if op != Combiner::Set && !x.dtype.is_numeric() {
        return Violation::new(name, "scatter_c10", format!("operand type {x} must be numeric (float or integer) for {name}")).operand(0).actual(x).dtype_err();
    }
    let (r, q, ur) = (x.rank(), idx.rank(), upd.rank());
    if d.index_vector_dim < 0 || d.index_vector_dim as usize > q {
        return Violation::new(name, "scatter_c3", format!("index_vector_dim {} must be in [0, {q}] for indices {idx}", d.index_vector_dim)).operand(1).actual(idx).shape_err();
    }
    if !sorted_unique_in(d.update_window_dims, ur) {
        return Violation::new(name, "scatter_c4", format!("update_window_dims {:?} must be sorted, unique and < {ur} for updates {upd}", d.update_window_dims)).operand(2).actual(upd).shape_err();
    }
    if !sorted_unique_in(d.inserted_window_dims, r) {
        return Violation::new(name, "scatter_c5", format!("inserted_window_dims {:?} must be sorted, unique and < {r} for operand {x}", d.inserted_window_dims)).operand(0).actual(x).shape_err();
    }
    if r != d.update_window_dims.len() + d.inserted_window_dims.len() {
        return shape_err(name, "scatter_c6", format!("rank of operand {x} must equal |update_window_dims| {:?} + |inserted_window_dims| {:?}", d.update_window_dims, d.inserted_window_dims));
    }
    let ivd = d.index_vector_dim as usize;
    let ncomp = if ivd < q { idx.shape[ivd] as usize } else { 1 };
    let s2o = d.scatter_dims_to_operand_dims;
    let mut seen = s2o.to_vec();
    seen.sort_unstable();
    seen.dedup();
    if s2o.len() != ncomp || seen.len() != s2o.len() || s2o.iter().any(|&v| v < 0 || v as usize >= r) {
        return Violation::new(name, "scatter_c7", format!("scatter_dims_to_operand_dims {s2o:?} must be {ncomp} unique operand dims < {r} (indices {idx}, index_vector_dim {ivd})")).operand(1).actual(idx).shape_err();
    }
    let sdims = d.update_scatter_dims(ur);
    let ibatch: Vec<i64> = (0..q).filter(|&k| k != ivd).map(|k| idx.shape[k]).collect();
    let ubatch: Vec<i64> = sdims.iter().map(|&k| upd.shape[k]).collect();
    if ibatch != ubatch {
        return Violation::new(name, "scatter_c8", format!("the scatter dims of updates {upd} (extents {ubatch:?}) must equal the dims of indices {idx} other than index_vector_dim (extents {ibatch:?})")).operand(2).actual(upd).shape_err();
    }
    for (j, od) in d.window_operand_dims(r).into_iter().enumerate() {
        let ud = d.update_window_dims[j] as usize;
        if upd.shape[ud] > x.shape[od] {
            return Violation::new(name, "scatter_c9", format!("update window dim {ud} of updates {upd} is larger than operand dim {od} of {x}")).operand(2).actual(upd).shape_err();
        }
    }
    Ok(x.clone())
}

fn dtype_list(d: DType) -> &'static [DType] {
    match d {
        DType::F32 => &[DType::F32],
        DType::F64 => &[DType::F64],
        DType::I32 => &[DType::I32],
        DType::I64 => &[DType::I64],
        DType::I1 => &[DType::I1],
        DType::U8 => &[DType::U8],
        DType::U32 => &[DType::U32],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::DialectError;

    #[test]
    fn scatter_rule() {
        let x = TensorType::new(DType::F32, [5, 3]);
        let i = TensorType::new(DType::I64, [4]);
        let u = TensorType::new(DType::F32, [4, 3]);
        let op = ScatterOp::along_axis(Combiner::Add, 2, 1, 0);
        assert_eq!(op.infer(&[&x, &i, &u]).unwrap(), x);
        assert_eq!(op.dims().take_axis(&x, &i, &u), Some(0));
        let bad = TensorType::new(DType::F32, [3, 3]);
        assert!(matches!(op.infer(&[&x, &i, &bad]), Err(DialectError::Shape(v)) if v.constraint == "scatter_c8"));
        assert!(matches!(op.infer(&[&x, &i, &TensorType::new(DType::F64, [4, 3])]), Err(DialectError::DType(v)) if v.constraint == "scatter_c1"));
        assert!(matches!(op.infer(&[&x, &TensorType::new(DType::F32, [4]), &u]), Err(DialectError::DType(v)) if v.constraint == "scatter_c2"));
        let b = TensorType::new(DType::I1, [5, 3]);
        assert!(matches!(op.infer(&[&b, &i, &b.with_dtype(DType::I1)]), Err(DialectError::DType(v)) if v.constraint == "scatter_c10" || v.constraint == "scatter_c1"));
        // A 2-component index vector addressing both dims, windows of 1 x 2.
        let idx2 = TensorType::new(DType::I32, [6, 2]);
        let upd2 = TensorType::new(DType::F32, [6, 2]);
        let g = ScatterOp::Scatter { op: Combiner::Set, update_window_dims: vec![1], inserted_window_dims: vec![0], scatter_dims_to_operand_dims: vec![0, 1], index_vector_dim: 1 };
        assert_eq!(g.infer(&[&x, &idx2, &upd2]).unwrap(), x);
        assert_eq!(g.dims().take_axis(&x, &idx2, &upd2), None);
        let big = TensorType::new(DType::F32, [6, 4]);
        assert!(matches!(g.infer(&[&x, &idx2, &big]), Err(DialectError::Shape(v)) if v.constraint == "scatter_c9"));
    }

    #[test]
    fn windows_out_of_bounds_are_dropped() {
        let g = ScatterOp::Scatter { op: Combiner::Set, update_window_dims: vec![1], inserted_window_dims: vec![0], scatter_dims_to_operand_dims: vec![0, 1], index_vector_dim: 1 };
        let d = g.dims();
        assert_eq!(d.target(&[0, 1], &[4, 1], &[5, 3], &[6, 2]), Some(vec![4, 2]));
        assert_eq!(d.target(&[0, 1], &[4, 2], &[5, 3], &[6, 2]), None);
        assert_eq!(d.target(&[0, 0], &[5, 0], &[5, 3], &[6, 2]), None);
        assert_eq!(d.target(&[0, 0], &[-1, 0], &[5, 3], &[6, 2]), None);
    }
}
