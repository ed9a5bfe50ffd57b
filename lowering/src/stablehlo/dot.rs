//! Export of `dot_general`: `stablehlo.dot_general` with the same dimension numbers. Both
//! order the result as batch dims, lhs free dims, rhs free dims; integer dots wrap.
use quabla_dialect::{DotDims, DotOp, Func, Op};

use super::{list, Emitter, Tv};
use crate::LowerError;

/// `#stablehlo.dot<...>` (empty lists are left out, as StableHLO prints them).
pub fn dot_dimension_numbers(d: &DotDims) -> String {
    let fields = [
        ("lhs_batching_dimensions", &d.lhs_batching_dimensions),
        ("rhs_batching_dimensions", &d.rhs_batching_dimensions),
        ("lhs_contracting_dimensions", &d.lhs_contracting_dimensions),
        ("rhs_contracting_dimensions", &d.rhs_contracting_dimensions),
    ];
    let parts: Vec<String> = fields.iter().filter(|(_, v)| !v.is_empty()).map(|(k, v)| format!("{k} = [{}]", list(v))).collect();
    format!("#stablehlo.dot<{}>", parts.join(", "))
}

/// `quabla.dot_general`.
pub fn lower_dot_general(e: &mut Emitter, f: &Func, o: &Op, dims: &DotDims) -> Result<Tv, LowerError> {
    let (l, r) = (e.get(f, o.operands[0]), e.get(f, o.operands[1]));
    Ok(e.op("stablehlo.dot_general", &[&l, &r], &[("dot_dimension_numbers", dot_dimension_numbers(dims))], f.ty(o.results[0])))
}

/// Exports one op of this family (exhaustive over the family).
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &DotOp) -> Result<Tv, LowerError> {
    match op {
        DotOp::DotGeneral { dims } => lower_dot_general(e, f, o, dims),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn dimension_numbers() {
        assert_eq!(dot_dimension_numbers(&DotDims::matmul()), "#stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>");
        let d = DotDims { lhs_batching_dimensions: vec![0], rhs_batching_dimensions: vec![0], lhs_contracting_dimensions: vec![2], rhs_contracting_dimensions: vec![1] };
        assert_eq!(dot_dimension_numbers(&d), "#stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>");
    }
}
