//! Linear algebra ops: `cholesky`, `triangular_solve`, `lu`, `qr`, `eigh`, `svd`. Every op
//! works on the last two dims of its operands (matrices); leading dims are batch dims and
//! must agree between operands. Float element types only. `lu`, `qr`, `eigh` and `svd` have
//! several results (a decomposition); their IRDL signatures declare one typed result each
//! (`OpSig::results`), which [`LinalgOp::sigs_with_results`] fills in.
use crate::error::{Expected, Result, Violation};
use crate::ops::table::{attr_err, op_family, AttrSource, AttrType, OpSig};
use crate::types::{DType, TensorType};

op_family! {
    /// Linear algebra on the last two dims (matrices), batched over the leading dims.
    pub enum LinalgOp : Linalg {
        Cholesky = "cholesky", operands 1, regions 0, irdl { lower: bool [attr] },
        TriangularSolve = "triangular_solve", operands 2, regions 0, irdl { left_side: bool [attr], lower: bool [attr], transpose_a: bool [attr], unit_diagonal: bool [attr] },
        Lu = "lu", operands 1, regions 0, irdl {},
        Qr = "qr", operands 1, regions 0, irdl { full_matrices: bool [attr] },
        Eigh = "eigh", operands 1, regions 0, irdl { lower: bool [attr] },
        Svd = "svd", operands 1, regions 0, irdl { full_matrices: bool [attr] },
    }
}

/// A boolean attribute: MLIR `true`/`false` (a `BoolAttr`, i.e. an `i1` integer attribute),
/// a Python `bool`.
impl AttrType for bool {
    fn print(&self, key: &'static str, out: &mut Vec<(&'static str, String)>) {
        out.push((key, if *self { "true" } else { "false" }.to_string()));
    }
    fn read(src: &dyn AttrSource, op: &str, key: &str) -> Result<Self> {
        if let Ok(i) = src.int(op, key) {
            return match i {
                0 => Ok(false),
                1 => Ok(true),
                _ => Err(attr_err(op, key, format!("expected a bool, got {i}"))),
            };
        }
        match src.string(op, key)?.as_str() {
            "true" | "1 : i1" => Ok(true),
            "false" | "0 : i1" => Ok(false),
            s => Err(attr_err(op, key, format!("expected true or false, got `{s}`"))),
        }
    }
    fn irdl(key: &'static str, out: &mut Vec<(&'static str, &'static str)>) {
        out.push((key, "#builtin.integer"));
    }
    fn py(key: &'static str, out: &mut Vec<(&'static str, &'static str)>) {
        out.push((key, "bool"));
    }
}

impl LinalgOp {
    /// Number of results of an op named `name` of this family.
    pub fn result_count(name: &str) -> usize {
        match name {
            "lu" | "svd" => 3,
            "qr" | "eigh" => 2,
            _ => 1,
        }
    }

    /// The IRDL signatures with each op's result count.
    pub fn sigs_with_results() -> Vec<OpSig> {
        let mut v = Self::sigs();
        for s in &mut v {
            s.results = Some(Self::result_count(s.name));
        }
        v
    }

    /// The shape/dtype rule (one type per result).
    pub fn infer(&self, xs: &[&TensorType]) -> Result<Vec<TensorType>> {
        let op = self.name();
        let (c1, c2) = self.labels();
        let a = matrix(op, c1, c2, xs[0])?;
        let r = a.rank();
        let (m, n) = (a.shape[r - 2], a.shape[r - 1]);
        let k = m.min(n);
        let batch = &a.shape[..r - 2];
        let with = |tail: &[i64], d: DType| {
            let mut s = batch.to_vec();
            s.extend_from_slice(tail);
            TensorType::new(d, s)
        };
        match self {
            LinalgOp::Cholesky { .. } | LinalgOp::Eigh { .. } => {
                if m != n {
                    return Violation::new(op, c2, format!("operand {a} must be a (batch of) square matrices")).operand(0).actual(a).shape_err();
                }
                if let LinalgOp::Eigh { .. } = self {
                    return Ok(vec![a.clone(), with(&[n], a.dtype)]);
                }
                Ok(vec![a.clone()])
            }
            LinalgOp::TriangularSolve { left_side, .. } => {
                if m != n {
                    return Violation::new(op, "triangular_solve_c2", format!("a {a} must be a (batch of) square matrices")).operand(0).actual(a).shape_err();
                }
                let b = xs[1];
                if b.dtype != a.dtype {
                    return Violation::new(op, "triangular_solve_c1", format!("b {b} must have the element type of a {a}")).types(1, Expected::Type(b.with_dtype(a.dtype)), b).dtype_err();
                }
                let solved = if *left_side { b.shape.get(b.rank().wrapping_sub(2)) } else { b.shape.last() };
                if b.rank() != r || b.shape[..r - 2] != *batch || solved != Some(&m) {
                    let side = if *left_side { "b[..., m, n] (left_side)" } else { "b[..., n, m] (right side)" };
                    return Violation::new(op, "triangular_solve_c3", format!("b {b} must be {side} with the batch dims of a {a} (m = {m})")).operand(1).actual(b).shape_err();
                }
                Ok(vec![b.clone()])
            }
            LinalgOp::Lu {} => Ok(vec![a.clone(), with(&[k], DType::I32), with(&[m], DType::I32)]),
            LinalgOp::Qr { full_matrices } => {
                let c = if *full_matrices { m } else { k };
                Ok(vec![with(&[m, c], a.dtype), with(&[c, n], a.dtype)])
            }
            LinalgOp::Svd { full_matrices } => {
                let (cu, rv) = if *full_matrices { (m, n) } else { (k, k) };
                Ok(vec![with(&[m, cu], a.dtype), with(&[k], a.dtype), with(&[rv, n], a.dtype)])
            }
        }
    }
}

impl LinalgOp {
    /// The labels of the op's first two constraints (c1: float element type, c2: a batch of
    /// matrices, square where the op needs it).
    fn labels(&self) -> (&'static str, &'static str) {
        match self {
            LinalgOp::Cholesky { .. } => ("cholesky_c1", "cholesky_c2"),
            LinalgOp::TriangularSolve { .. } => ("triangular_solve_c1", "triangular_solve_c2"),
            LinalgOp::Lu {} => ("lu_c1", "lu_c2"),
            LinalgOp::Qr { .. } => ("qr_c1", "qr_c2"),
            LinalgOp::Eigh { .. } => ("eigh_c1", "eigh_c2"),
            LinalgOp::Svd { .. } => ("svd_c1", "svd_c2"),
        }
    }
}

/// `c1`: a float element type; `c2`: rank >= 2 (a batch of matrices).
fn matrix<'a>(op: &'static str, c1: &'static str, c2: &'static str, a: &'a TensorType) -> Result<&'a TensorType> {
    if !a.dtype.is_float() {
        return Violation::new(op, c1, format!("operand {a} must have a float element type")).types(0, Expected::DTypes(&[DType::F32, DType::F64]), a).dtype_err();
    }
    if a.rank() < 2 {
        return Violation::new(op, c2, format!("operand {a} must have rank >= 2 (a batch of matrices)")).operand(0).actual(a).shape_err();
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::DialectError;
    use crate::ops::OpKind;

    #[test]
    fn result_types() {
        let a = TensorType::new(DType::F64, [2, 5, 3]);
        let t = |k: LinalgOp| OpKind::Linalg(k).infer(&[&a]).unwrap();
        assert_eq!(t(LinalgOp::Lu {}), vec![a.clone(), TensorType::new(DType::I32, [2, 3]), TensorType::new(DType::I32, [2, 5])]);
        assert_eq!(t(LinalgOp::Qr { full_matrices: false }), vec![TensorType::new(DType::F64, [2, 5, 3]), TensorType::new(DType::F64, [2, 3, 3])]);
        assert_eq!(t(LinalgOp::Qr { full_matrices: true }), vec![TensorType::new(DType::F64, [2, 5, 5]), TensorType::new(DType::F64, [2, 5, 3])]);
        assert_eq!(t(LinalgOp::Svd { full_matrices: true })[2], TensorType::new(DType::F64, [2, 3, 3]));
        assert_eq!(t(LinalgOp::Svd { full_matrices: false })[0], TensorType::new(DType::F64, [2, 5, 3]));
    }

    #[test]
    fn violations_name_their_labels() {
        let a = TensorType::new(DType::F32, [3, 4]);
        let e = OpKind::Linalg(LinalgOp::Cholesky { lower: true }).infer(&[&a]).unwrap_err();
        assert!(matches!(&e, DialectError::Shape(v) if v.constraint == "cholesky_c2"), "{e}");
        let i = TensorType::new(DType::I32, [3, 3]);
        let e = OpKind::Linalg(LinalgOp::Eigh { lower: true }).infer(&[&i]).unwrap_err();
        assert!(matches!(&e, DialectError::DType(v) if v.constraint == "eigh_c1"), "{e}");
        let sq = TensorType::new(DType::F32, [3, 3]);
        let b = TensorType::new(DType::F32, [4, 2]);
        let ts = LinalgOp::TriangularSolve { left_side: true, lower: true, transpose_a: false, unit_diagonal: false };
        let e = OpKind::Linalg(ts.clone()).infer(&[&sq, &b]).unwrap_err();
        assert!(matches!(&e, DialectError::Shape(v) if v.constraint == "triangular_solve_c3"), "{e}");
        let b = TensorType::new(DType::F32, [3, 2]);
        assert_eq!(OpKind::Linalg(ts).infer(&[&sq, &b]).unwrap(), vec![b]);
    }
}
