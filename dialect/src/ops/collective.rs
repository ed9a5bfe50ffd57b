//! The collective family: reductions and exchanges across the examples of a named vmap axis
//! (JAX's `psum`, `pmax`, `pmin`, `all_gather` and `axis_index` under `vmap(...,
//! axis_name=...)`). Each op names its axis; the `quabla-vmap` expansion of the innermost
//! enclosing vmap transform with that `axis_name` resolves it into ordinary ops (a reduction
//! over the batch dim, the batched operand itself, an iota), and every other vmap passes it
//! through on its batched operand. An op left when no vmap binds its name is an error of the
//! interpreter and of every lowering (docs/spec.md, collectives): there is no device axis
//! behind a name, the values of the axis exist only inside the vmap.
use std::fmt;

use crate::error::{Result, Violation};
use crate::ops::table::{attr_err, op_family, AttrSource, AttrType};
use crate::types::{DType, TensorType};

/// The name of a vmap axis: letters, digits and `_ . - #` (at most 64; Python spells other
/// hashable names as `#<n>`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AxisName(pub String);

impl AxisName {
    /// The name when it is well formed.
    pub fn parse(s: &str) -> Option<AxisName> {
        let ok = !s.is_empty() && s.len() <= 64 && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '#'));
        ok.then(|| AxisName(s.to_string()))
    }
}

impl fmt::Display for AxisName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AttrType for AxisName {
    fn print(&self, key: &'static str, out: &mut Vec<(&'static str, String)>) {
        out.push((key, format!("\"{}\"", self.0)));
    }
    fn read(src: &dyn AttrSource, op: &str, key: &str) -> Result<Self> {
        let s = src.string(op, key)?;
        AxisName::parse(&s).ok_or_else(|| attr_err(op, key, format!("an axis name is 1 to 64 letters, digits or '_.-#', got \"{s}\"")))
    }
    fn irdl(key: &'static str, out: &mut Vec<(&'static str, &'static str)>) {
        out.push((key, "#builtin.string"));
    }
    fn py(key: &'static str, out: &mut Vec<(&'static str, &'static str)>) {
        out.push((key, "str"));
    }
}

op_family! {
    /// Collectives over a named vmap axis (docs/spec.md, collectives).
    pub enum CollectiveOp : Collective {
        Psum = "psum", operands 1, regions 0, irdl { axis_name: AxisName [attr] },
        Pmax = "pmax", operands 1, regions 0, irdl { axis_name: AxisName [attr] },
        Pmin = "pmin", operands 1, regions 0, irdl { axis_name: AxisName [attr] },
        AllGather = "all_gather", operands 1, regions 0, irdl { axis_name: AxisName [attr], axis_size: i64 [attr] },
        AxisIndex = "axis_index", operands 0, regions 0, irdl { axis_name: AxisName [attr] },
    }
}

impl CollectiveOp {
    /// The axis the op reduces or exchanges over.
    pub fn axis_name(&self) -> &AxisName {
        match self {
            CollectiveOp::Psum { axis_name } | CollectiveOp::Pmax { axis_name } | CollectiveOp::Pmin { axis_name } | CollectiveOp::AllGather { axis_name, .. } | CollectiveOp::AxisIndex { axis_name } => axis_name,
        }
    }

    /// The shape/dtype rule: `psum`/`pmax`/`pmin` keep the operand's type (`psum` of a
    /// number type, `collective_c1`); `all_gather` stacks `axis_size` of them along a new
    /// leading dim (`collective_c2`: `axis_size` >= 1); `axis_index` is an `i32` scalar.
    pub fn infer(&self, xs: &[&TensorType]) -> Result<TensorType> {
        let op = self.name();
        match self {
            CollectiveOp::Psum { .. } => {
                let x = xs[0];
                if x.dtype == DType::I1 {
                    return Violation::new(op, "collective_c1", format!("operand {x}: psum sums numbers, not booleans")).operand(0).actual(x).dtype_err();
                }
                Ok(x.clone())
            }
            CollectiveOp::Pmax { .. } | CollectiveOp::Pmin { .. } => Ok(xs[0].clone()),
            CollectiveOp::AllGather { axis_size, .. } => {
                let x = xs[0];
                if *axis_size < 1 {
                    return Violation::new(op, "collective_c2", format!("axis_size {axis_size} must be at least 1")).operand(0).actual(x).shape_err();
                }
                let mut shape = vec![*axis_size];
                shape.extend(&x.shape);
                Ok(TensorType::new(x.dtype, shape))
            }
            CollectiveOp::AxisIndex { .. } => Ok(TensorType::scalar(DType::I32)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::DialectError;

    #[test]
    fn rules() {
        let i = AxisName::parse("batch").unwrap();
        let x = TensorType::new(DType::F32, [2, 3]);
        assert_eq!(CollectiveOp::Psum { axis_name: i.clone() }.infer(&[&x]).unwrap(), x);
        assert_eq!(CollectiveOp::AllGather { axis_name: i.clone(), axis_size: 4 }.infer(&[&x]).unwrap(), TensorType::new(DType::F32, [4, 2, 3]));
        assert_eq!(CollectiveOp::AxisIndex { axis_name: i.clone() }.infer(&[]).unwrap(), TensorType::scalar(DType::I32));
        let b = TensorType::new(DType::I1, [2]);
        assert!(matches!(CollectiveOp::Psum { axis_name: i.clone() }.infer(&[&b]), Err(DialectError::DType(v)) if v.constraint == "collective_c1"));
        assert!(matches!(CollectiveOp::AllGather { axis_name: i, axis_size: 0 }.infer(&[&x]), Err(DialectError::Shape(v)) if v.constraint == "collective_c2"));
        assert!(AxisName::parse("").is_none());
        assert!(AxisName::parse("a\"b").is_none());
        assert!(AxisName::parse("#3").is_some());
    }
}
