//! Export of slicing ops: `concatenate`, `slice`, `pad`, `dynamic_slice` and
//! `dynamic_update_slice` map to the StableHLO ops of the same name with the same attributes
//! (StableHLO clamps dynamic starts to [0, extent - size] as quabla does); `gather {axis}` (take along axis) is a
//! `stablehlo.gather` whose index vector is implicit (`index_vector_dim` = rank of the
//! indices) and addresses `axis` alone, with slices of extent 1 on `axis` (collapsed) and the
//! full extent elsewhere. StableHLO clamps each start so the slice fits, i.e. to
//! [0, n - 1] on `axis`: quabla's clamping.
use quabla_dialect::{Func, Op, SlicingOp};

use super::{array, int_attr, list, Emitter, Tv};
use crate::LowerError;

/// `quabla.concatenate`.
pub fn lower_concatenate(e: &mut Emitter, f: &Func, o: &Op, dim: i64) -> Result<Tv, LowerError> {
    let xs: Vec<Tv> = o.operands.iter().map(|v| e.get(f, *v)).collect();
    let refs: Vec<&Tv> = xs.iter().collect();
    Ok(e.op("stablehlo.concatenate", &refs, &[("dimension", int_attr(dim))], f.ty(o.results[0])))
}

/// `quabla.slice`.
pub fn lower_slice(e: &mut Emitter, f: &Func, o: &Op, start: &[i64], limit: &[i64], strides: &[i64]) -> Result<Tv, LowerError> {
    let x = e.get(f, o.operands[0]);
    let attrs = [("start_indices", array(start)), ("limit_indices", array(limit)), ("strides", array(strides))];
    Ok(e.op("stablehlo.slice", &[&x], &attrs, f.ty(o.results[0])))
}

/// `quabla.pad`.
pub fn lower_pad(e: &mut Emitter, f: &Func, o: &Op, low: &[i64], high: &[i64], interior: &[i64]) -> Result<Tv, LowerError> {
    let (x, p) = (e.get(f, o.operands[0]), e.get(f, o.operands[1]));
    let attrs = [("edge_padding_low", array(low)), ("edge_padding_high", array(high)), ("interior_padding", array(interior))];
    Ok(e.op("stablehlo.pad", &[&x, &p], &attrs, f.ty(o.results[0])))
}

/// `quabla.dynamic_slice`.
pub fn lower_dynamic_slice(e: &mut Emitter, f: &Func, o: &Op, sizes: &[i64]) -> Result<Tv, LowerError> {
    let xs: Vec<Tv> = o.operands.iter().map(|v| e.get(f, *v)).collect();
    let refs: Vec<&Tv> = xs.iter().collect();
    Ok(e.op("stablehlo.dynamic_slice", &refs, &[("slice_sizes", array(sizes))], f.ty(o.results[0])))
}

/// `quabla.dynamic_update_slice`.
pub fn lower_dynamic_update_slice(e: &mut Emitter, f: &Func, o: &Op) -> Result<Tv, LowerError> {
    let xs: Vec<Tv> = o.operands.iter().map(|v| e.get(f, *v)).collect();
    let refs: Vec<&Tv> = xs.iter().collect();
    Ok(e.op("stablehlo.dynamic_update_slice", &refs, &[], f.ty(o.results[0])))
}

/// The gather dimension numbers and slice sizes of take-along-`axis` on an operand of
/// `shape` with indices of rank `k`.
pub fn gather_attrs(shape: &[i64], k: usize, axis: i64) -> [(&'static str, String); 3] {
    let (r, a) = (shape.len() as i64, axis);
    let k = k as i64;
    // Result = operand dims before axis, then the index dims, then operand dims after axis.
    let offset: Vec<i64> = (0..a).chain(a + k..r - 1 + k).collect();
    let mut sizes = shape.to_vec();
    sizes[a as usize] = 1;
    let dn = format!("#stablehlo.gather<offset_dims = [{}], collapsed_slice_dims = [{a}], start_index_map = [{a}], index_vector_dim = {k}>", list(&offset));
    [("dimension_numbers", dn), ("slice_sizes", array(&sizes)), ("indices_are_sorted", "false".into())]
}

/// `quabla.gather`.
pub fn lower_gather(e: &mut Emitter, f: &Func, o: &Op, axis: i64) -> Result<Tv, LowerError> {
    let (x, i) = (e.get(f, o.operands[0]), e.get(f, o.operands[1]));
    let attrs = gather_attrs(&x.ty.shape, i.ty.rank(), axis);
    Ok(e.op("stablehlo.gather", &[&x, &i], &attrs, f.ty(o.results[0])))
}

/// Exports one op of this family (exhaustive over the family).
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &SlicingOp) -> Result<Tv, LowerError> {
    match op {
        SlicingOp::Concatenate { dim } => lower_concatenate(e, f, o, *dim),
        SlicingOp::Slice { start_indices: start, limit_indices: limit, strides } => lower_slice(e, f, o, start, limit, strides),
        SlicingOp::Pad { edge_padding_low: low, edge_padding_high: high, interior_padding: interior} => lower_pad(e, f, o, low, high, interior),
        SlicingOp::DynamicSlice { slice_sizes: sizes} => lower_dynamic_slice(e, f, o, sizes),
        SlicingOp::Gather { axis } => lower_gather(e, f, o, *axis),
        SlicingOp::DynamicUpdateSlice {} => lower_dynamic_update_slice(e, f, o),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn gather_dimension_numbers() {
        let a = gather_attrs(&[4, 5, 6], 2, 1);
        assert_eq!(a[0].1, "#stablehlo.gather<offset_dims = [0, 3], collapsed_slice_dims = [1], start_index_map = [1], index_vector_dim = 2>");
        assert_eq!(a[1].1, "array<i64: 4, 1, 6>");
        let a = gather_attrs(&[7], 0, 0);
        assert_eq!(a[0].1, "#stablehlo.gather<offset_dims = [], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 0>");
    }
}
