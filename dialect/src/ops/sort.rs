//! The sort family: `sort` (the operand sorted along `dimension`) and `argsort` (the
//! permutation that sorts it, as `index` integers). Both are stable; `direction` is `lt`
//! (ascending) or `gt` (descending), the comparison of StableHLO's sort comparator. Floats sort
//! in NumPy's total order: NaN after every number ascending, before them descending (so
//! descending is ascending with the order of unequal keys reversed and ties still in their
//! original order, as `jnp.sort(descending=True)`); -0.0 and 0.0 tie.
use crate::error::{Expected, Result, Violation};
use crate::ops::elementwise::CmpDir;
use crate::ops::table::op_family;
use crate::types::{DType, TensorType};

op_family! {
    /// Sorting along one dimension (docs/spec.md, sort).
    pub enum SortOp : Sort {
        Sort = "sort", operands 1, regions 0, irdl { dimension: i64 [attr], direction: CmpDir [attr] },
        Argsort = "argsort", operands 1, regions 0, irdl { dimension: i64 [attr], direction: CmpDir [attr], index: DType [dtype] },
    }
}

impl SortOp {
    /// The shape/dtype rule.
    pub fn infer(&self, xs: &[&TensorType]) -> Result<TensorType> {
        match self {
            SortOp::Sort { dimension, direction } => check("sort", xs[0], *dimension, *direction).map(|_| xs[0].clone()),
            SortOp::Argsort { dimension, direction, index } => {
                check("argsort", xs[0], *dimension, *direction)?;
                if !index.is_int() {
                    return Violation::new("argsort", "sort_c3", format!("index type {index} must be i32 or i64")).expected(Expected::DTypes(&[DType::I32, DType::I64])).dtype_err();
                }
                Ok(xs[0].with_dtype(*index))
            }
        }
    }
}

/// `sort_c1`: 0 <= dimension < rank; `sort_c2`: direction is lt or gt.
fn check(op: &'static str, x: &TensorType, dim: i64, dir: CmpDir) -> Result<()> {
    if dim < 0 || dim as usize >= x.rank() {
        return Violation::new(op, "sort_c1", format!("dimension {dim} out of range for operand {x}")).operand(0).actual(x).shape_err();
    }
    if !matches!(dir, CmpDir::Lt | CmpDir::Gt) {
        return Violation::new(op, "sort_c2", format!("direction {} must be lt (ascending) or gt (descending)", dir.name())).operand(0).actual(x).shape_err();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::DialectError;

    #[test]
    fn rules() {
        let x = TensorType::new(DType::F64, &[2, 3]);
        assert_eq!(SortOp::Sort { dimension: 1, direction: CmpDir::Lt }.infer(&[&x]).unwrap(), x);
        assert_eq!(SortOp::Argsort { dimension: 0, direction: CmpDir::Gt, index: DType::I64 }.infer(&[&x]).unwrap(), x.with_dtype(DType::I64));
        assert!(matches!(SortOp::Sort { dimension: 2, direction: CmpDir::Lt }.infer(&[&x]), Err(DialectError::Shape(v)) if v.constraint == "sort_c1"));
        assert!(matches!(SortOp::Sort { dimension: 0, direction: CmpDir::Eq }.infer(&[&x]), Err(DialectError::Shape(v)) if v.constraint == "sort_c2"));
        assert!(matches!(SortOp::Argsort { dimension: 0, direction: CmpDir::Lt, index: DType::F32 }.infer(&[&x]), Err(DialectError::DType(v)) if v.constraint == "sort_c3"));
    }
}
