//! Reductions over a set of dims (`reduce_sum/max/min/prod`) and `argmax`/`argmin` over one
//! dim. Reduced dims are removed from the result (keepdims is a reshape in the frontend).
use crate::error::{Expected, Result, Violation};
use crate::types::{DType, TensorType};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Sum,
    Max,
    Min,
    Prod,
}

impl ReduceOp {
    pub const ALL: [ReduceOp; 4] = [ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod];
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "reduce_sum",
            ReduceOp::Max => "reduce_max",
            ReduceOp::Min => "reduce_min",
            ReduceOp::Prod => "reduce_prod",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArgOp {
    Max,
    Min,
}

impl ArgOp {
    pub fn name(self) -> &'static str {
        match self {
            ArgOp::Max => "argmax",
            ArgOp::Min => "argmin",
        }
    }
}

/// The numeric element types (everything but i1).
const NUMERIC: &[DType] = &[DType::F32, DType::F64, DType::I32, DType::I64];

/// `reduce_c1`: dims are distinct and in range; `reduce_c2`: sum/prod need a numeric dtype
/// (max/min also take i1, as `any`/`all`).
pub fn infer_reduce(op: ReduceOp, x: &TensorType, dims: &[i64]) -> Result<TensorType> {
    let mut seen = vec![false; x.rank()];
    for &d in dims {
        if d < 0 || d as usize >= x.rank() || std::mem::replace(&mut seen[d as usize], true) {
            return Violation::new(op.name(), "reduce_c1", format!("dims {dims:?} must be distinct dims of operand {x}")).operand(0).actual(x).shape_err();
        }
    }
    if matches!(op, ReduceOp::Sum | ReduceOp::Prod) && x.dtype == DType::I1 {
        return Violation::new(op.name(), "reduce_c2", format!("operand type {x} is not numeric")).types(0, Expected::DTypes(NUMERIC), x).dtype_err();
    }
    let shape = (0..x.rank()).filter(|&i| !seen[i]).map(|i| x.shape[i]).collect::<Vec<_>>();
    Ok(TensorType::new(x.dtype, shape))
}

/// `argreduce_c1`: 0 <= dim < rank; `argreduce_c2`: operand numeric; `argreduce_c3`: index
/// type i32 or i64. Ties pick the first index; NaN wins (as in NumPy).
pub fn infer_argreduce(op: ArgOp, x: &TensorType, dim: i64, index: DType) -> Result<TensorType> {
    if dim < 0 || dim as usize >= x.rank() {
        return Violation::new(op.name(), "argreduce_c1", format!("dim {dim} out of range for operand {x}")).operand(0).actual(x).shape_err();
    }
    if x.dtype == DType::I1 {
        return Violation::new(op.name(), "argreduce_c2", format!("operand type {x} is not numeric")).types(0, Expected::DTypes(NUMERIC), x).dtype_err();
    }
    if !index.is_int() {
        return Violation::new(op.name(), "argreduce_c3", format!("index type {index} must be i32 or i64")).expected(Expected::DTypes(&[DType::I32, DType::I64])).dtype_err();
    }
    let mut shape = x.shape.clone();
    shape.remove(dim as usize);
    Ok(TensorType::new(index, shape))
}
