//! Export of linear-algebra ops. `cholesky` is `stablehlo.cholesky` (same `lower`) followed
//! by a select that zeros the other triangle (StableHLO leaves it implementation-defined,
//! quabla defines it as zero); `triangular_solve` is `stablehlo.triangular_solve` with the same
//! flags (`transpose_a` = `TRANSPOSE` or `NO_TRANSPOSE`). StableHLO has no op for `lu`, `qr`,
//! `eigh` and `svd` (XLA spells them as target-specific custom calls), so their export is a
//! typed `LowerError::Unsupported`.
use quabla_dialect::{DType, Func, LinalgOp, Op, TensorType};

use super::{Emitter, Tv};
use crate::LowerError;

fn b(v: bool) -> String {
    v.to_string()
}

/// `quabla.cholesky`.
pub fn lower_cholesky(e: &mut Emitter, f: &Func, o: &Op, lower: bool) -> Result<Tv, LowerError> {
    let x = e.get(f, o.operands[0]);
    let t = f.ty(o.results[0]).clone();
    let c = e.op("stablehlo.cholesky", &[&x], &[("lower", b(lower))], &t);
    let r = t.rank() as i64;
    let it = TensorType::new(DType::I32, t.shape.clone());
    let rows = e.op("stablehlo.iota", &[], &[("iota_dimension", format!("{} : i64", r - 2))], &it);
    let cols = e.op("stablehlo.iota", &[], &[("iota_dimension", format!("{} : i64", r - 1))], &it);
    let dir = if lower { "GE" } else { "LE" };
    let keep = e.op("stablehlo.compare", &[&rows, &cols], &[("comparison_direction", format!("#stablehlo<comparison_direction {dir}>"))], &t.with_dtype(DType::I1));
    let z = e.splat_num(&t, 0.0);
    Ok(e.op("stablehlo.select", &[&keep, &c, &z], &[], &t))
}

/// `quabla.triangular_solve`.
pub fn lower_triangular_solve(e: &mut Emitter, f: &Func, o: &Op, [left_side, lower, transpose_a, unit_diagonal]: [bool; 4]) -> Result<Tv, LowerError> {
    let (a, x) = (e.get(f, o.operands[0]), e.get(f, o.operands[1]));
    let tr = if transpose_a { "TRANSPOSE" } else { "NO_TRANSPOSE" };
    let attrs = [("left_side", b(left_side)), ("lower", b(lower)), ("unit_diagonal", b(unit_diagonal)), ("transpose_a", format!("#stablehlo<transpose {tr}>"))];
    Ok(e.op("stablehlo.triangular_solve", &[&a, &x], &attrs, f.ty(o.results[0])))
}

/// Exports one op of this family (exhaustive over the family).
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &LinalgOp) -> Result<Vec<Tv>, LowerError> {
    match op {
        LinalgOp::Cholesky { lower } => Ok(vec![lower_cholesky(e, f, o, *lower)?]),
        LinalgOp::TriangularSolve { left_side, lower, transpose_a, unit_diagonal } => Ok(vec![lower_triangular_solve(e, f, o, [*left_side, *lower, *transpose_a, *unit_diagonal])?]),
        LinalgOp::Lu {} | LinalgOp::Qr { .. } | LinalgOp::Eigh { .. } | LinalgOp::Svd { .. } => Err(LowerError::Unsupported { op: op.name(), rule: "stablehlo" }),
    }
}
