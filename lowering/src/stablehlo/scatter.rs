//! Export of scatter ops: `stablehlo.scatter` with the same dimension numbers and a region
//! combining (old, update) by returning the update (`scatter`), add, multiply, minimum or
//! maximum (or/and for i1). StableHLO leaves out-of-bounds windows implementation-defined;
//! XLA and IREE skip them, which is quabla's semantics. `indices_are_sorted` and
//! `unique_indices` are false (updates apply in order).
use quabla_dialect::{Combiner, DType, Func, Op, ScatterOp, TensorType};

use super::elementwise::bin;
use super::{list, Emitter, Tv};
use crate::LowerError;

/// The StableHLO combiner op of `c` on dtype `d` (`None`: the update replaces).
fn combiner(c: Combiner, d: DType) -> Option<&'static str> {
    Some(match (c, d == DType::I1) {
        (Combiner::Set, _) => return None,
        (Combiner::Add, false) => "stablehlo.add",
        (Combiner::Mul, false) => "stablehlo.multiply",
        (Combiner::Min, false) => "stablehlo.minimum",
        (Combiner::Max, false) => "stablehlo.maximum",
        (Combiner::Add | Combiner::Max, true) => "stablehlo.or",
        (Combiner::Mul | Combiner::Min, true) => "stablehlo.and",
    })
}

/// The `#stablehlo.scatter<...>` dimension numbers.
pub fn scatter_dims_attr(op: &ScatterOp) -> String {
    let d = op.dims();
    format!(
        "#stablehlo.scatter<update_window_dims = [{}], inserted_window_dims = [{}], scatter_dims_to_operand_dims = [{}], index_vector_dim = {}>",
        list(d.update_window_dims),
        list(d.inserted_window_dims),
        list(d.scatter_dims_to_operand_dims),
        d.index_vector_dim
    )
}

/// `quabla.scatter*`.
pub fn lower_scatter(e: &mut Emitter, f: &Func, o: &Op, op: &ScatterOp) -> Result<Tv, LowerError> {
    let (x, i, u) = (e.get(f, o.operands[0]), e.get(f, o.operands[1]), e.get(f, o.operands[2]));
    let s = TensorType::scalar(x.ty.dtype);
    let attrs = [("indices_are_sorted", "false".to_string()), ("scatter_dimension_numbers", scatter_dims_attr(op)), ("unique_indices", "false".to_string())];
    let c = combiner(op.combiner(), x.ty.dtype);
    let out = f.ty(o.results[0]).clone();
    let r = e.region_op("stablehlo.scatter", &[&x, &i, &u], &attrs, &[s.clone(), s], &[out], |e, a| match c {
        None => vec![a[1].clone()],
        Some(name) => vec![bin(e, name, &a[0], &a[1])],
    });
    Ok(r.into_iter().next().expect("one result"))
}

/// Exports one op of this family (exhaustive over the family).
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &ScatterOp) -> Result<Tv, LowerError> {
    match op {
        ScatterOp::Scatter { .. } => lower_scatter(e, f, o, op),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn dimension_numbers() {
        let op = ScatterOp::along_axis(Combiner::Add, 3, 2, 1);
        assert_eq!(scatter_dims_attr(&op), "#stablehlo.scatter<update_window_dims = [0, 3], inserted_window_dims = [1], scatter_dims_to_operand_dims = [1], index_vector_dim = 2>");
    }
}
