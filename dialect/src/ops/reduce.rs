//! Reductions over a set of dims (`reduce_sum/max/min/prod`) and `argmax`/`argmin` over one
//! dim. Reduced dims are removed from the result (keepdims is a reshape in the frontend).
use crate::error::{Expected, Result, Violation};
use crate::ops::table::op_family;
use crate::types::{DType, TensorType};

op_family! {
    /// Reductions: `reduce_{sum,max,min,prod}` over dims and `argmax`/`argmin` over one dim.
    pub enum ReduceOp : Reduce {
        Reduce = _, operands 1, regions 0, irdl { op: Reducer [name], dims: Vec<i64> [attr] },
        ArgReduce = _, operands 1, regions 0, irdl { op: ArgOp [name], dim: i64 [attr], index: DType [dtype] },
    }
}

impl ReduceOp {
    /// The shape/dtype rule.
    pub fn infer(&self, xs: &[&TensorType]) -> Result<TensorType> {
        match self {
            ReduceOp::Reduce { op, dims } => infer_reduce(*op, xs[0], dims),
            ReduceOp::ArgReduce { op, dim, index } => infer_argreduce(*op, xs[0], *dim, *index),
        }
    }
}

/// The combiner of a `reduce_*` op.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reducer {
    Sum,
    Max,
    Min,
    Prod,
}

impl Reducer {
    pub const ALL: [Reducer; 4] = [Reducer::Sum, Reducer::Max, Reducer::Min, Reducer::Prod];
    pub fn name(self) -> &'static str {
        match self {
            Reducer::Sum => "reduce_sum",
            Reducer::Max => "reduce_max",
            Reducer::Min => "reduce_min",
            Reducer::Prod => "reduce_prod",
        }
    }
    pub fn from_name(s: &str) -> Option<Self> {
        Reducer::ALL.into_iter().find(|r| r.name() == s)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArgOp {
    Max,
    Min,
}

impl ArgOp {
    pub const ALL: [ArgOp; 2] = [ArgOp::Max, ArgOp::Min];
    pub fn from_name(s: &str) -> Option<Self> {
        ArgOp::ALL.into_iter().find(|r| r.name() == s)
    }
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
pub fn infer_reduce(op: Reducer, x: &TensorType, dims: &[i64]) -> Result<TensorType> {
    let mut seen = vec![false; x.rank()];
    for &d in dims {
        if d < 0 || d as usize >= x.rank() || std::mem::replace(&mut seen[d as usize], true) {
            return Violation::new(op.name(), "reduce_c1", format!("dims {dims:?} must be distinct dims of operand {x}")).operand(0).actual(x).shape_err();
        }
    }
    if matches!(op, Reducer::Sum | Reducer::Prod) && x.dtype == DType::I1 {
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
    if !matches!(index, DType::I32 | DType::I64) {
        return Violation::new(op.name(), "argreduce_c3", format!("index type {index} must be i32 or i64")).expected(Expected::DTypes(&[DType::I32, DType::I64])).dtype_err();
    }
    let mut shape = x.shape.clone();
    shape.remove(dim as usize);
    Ok(TensorType::new(index, shape))
}
