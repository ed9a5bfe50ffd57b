//! Lowering of reductions: a `linalg.generic` with reduction iterators into an init filled
//! with the identity (sum 0, prod 1, max -inf/MIN/false, min +inf/MAX/true); float max/min
//! propagate NaN. `argmax`/`argmin` carry (value, index) outputs: the first strict
//! improvement wins, and a NaN replaces a non-NaN (so the first NaN wins).
use quabla_dialect::{ArgOp, DType, Func, Op, OpKind, ReduceOp, TensorType};

use super::{elementwise::binary, generic, identity, int_max, int_min, map, Emitter, GenericIn};
use crate::LowerError;

fn identity_value(op: ReduceOp, d: DType) -> String {
    match (op, d) {
        (ReduceOp::Sum, d) if d.is_float() => "0.0".into(),
        (ReduceOp::Sum, _) => "0".into(),
        (ReduceOp::Prod, d) if d.is_float() => "1.0".into(),
        (ReduceOp::Prod, _) => "1".into(),
        (ReduceOp::Max, DType::F32) => "0xFF800000".into(),
        (ReduceOp::Max, DType::F64) => "0xFFF0000000000000".into(),
        (ReduceOp::Max, DType::I1) => "0".into(),
        (ReduceOp::Max, d) => int_min(d).into(),
        (ReduceOp::Min, DType::F32) => "0x7F800000".into(),
        (ReduceOp::Min, DType::F64) => "0x7FF0000000000000".into(),
        (ReduceOp::Min, DType::I1) => "1".into(),
        (ReduceOp::Min, d) => int_max(d).into(),
    }
}

fn combine(op: ReduceOp) -> quabla_dialect::BinaryOp {
    match op {
        ReduceOp::Sum => quabla_dialect::BinaryOp::Add,
        ReduceOp::Prod => quabla_dialect::BinaryOp::Mul,
        ReduceOp::Max => quabla_dialect::BinaryOp::Max,
        ReduceOp::Min => quabla_dialect::BinaryOp::Min,
    }
}

/// Maps and iterator kinds for reducing `dims` of a rank-`r` operand.
fn reduction_shape(r: usize, dims: &[i64]) -> (String, Vec<&'static str>) {
    let kept: Vec<String> = (0..r).filter(|i| !dims.contains(&(*i as i64))).map(|i| format!("d{i}")).collect();
    let iters = (0..r).map(|i| if dims.contains(&(i as i64)) { "reduction" } else { "parallel" }).collect();
    (map(r, &kept), iters)
}

pub fn lower(e: &mut Emitter, f: &Func, o: &Op) -> Result<(), LowerError> {
    let x = e.name(o.operands[0]);
    let xt = f.ty(o.operands[0]).clone();
    let out = f.ty(o.results[0]).clone();
    let r = xt.rank();
    let d = xt.dtype;
    let res = match &o.kind {
        OpKind::Reduce { op, dims } => {
            let op = *op;
            let idv = identity_value(op, d);
            let c = e.scalar(d, &idv);
            let init = e.filled(&out, &c);
            let (omap, iters) = reduction_shape(r, dims);
            let ins = [GenericIn { name: x, ty: xt.clone(), map: identity(r) }];
            generic(e, r, &iters, &ins, &[(init, out.clone(), omap)], |e, a| vec![binary(e, combine(op), d, &a[1], &a[0])]).remove(0)
        }
        OpKind::ArgReduce { op, dim, index } => {
            let vt = TensorType::new(d, out.shape.clone());
            let rop = if *op == ArgOp::Max { ReduceOp::Max } else { ReduceOp::Min };
            let c = e.scalar(d, &identity_value(rop, d));
            let vinit = e.filled(&vt, &c);
            let z = e.scalar(*index, "0");
            let iinit = e.filled(&out, &z);
            let (omap, iters) = reduction_shape(r, &[*dim]);
            let ins = [GenericIn { name: x, ty: xt.clone(), map: identity(r) }];
            let (op, dim, index) = (*op, *dim, *index);
            let outs = [(vinit, vt.clone(), omap.clone()), (iinit, out.clone(), omap)];
            generic(e, r, &iters, &ins, &outs, |e, a| {
                let (v, ov, oi) = (&a[0], &a[1], &a[2]);
                let better = e.fresh();
                if d.is_float() {
                    let pred = if op == ArgOp::Max { "ogt" } else { "olt" };
                    let strict = e.fresh();
                    e.line(format!("{strict} = arith.cmpf {pred}, {v}, {ov} : {d}"));
                    let vnan = e.fresh();
                    e.line(format!("{vnan} = arith.cmpf uno, {v}, {v} : {d}"));
                    let onum = e.fresh();
                    e.line(format!("{onum} = arith.cmpf ord, {ov}, {ov} : {d}"));
                    let nanwin = e.fresh();
                    e.line(format!("{nanwin} = arith.andi {vnan}, {onum} : i1"));
                    e.line(format!("{better} = arith.ori {strict}, {nanwin} : i1"));
                } else {
                    let pred = if op == ArgOp::Max { "sgt" } else { "slt" };
                    e.line(format!("{better} = arith.cmpi {pred}, {v}, {ov} : {d}"));
                }
                let k = e.fresh();
                e.line(format!("{k} = linalg.index {dim} : index"));
                let ki = e.fresh();
                e.line(format!("{ki} = arith.index_cast {k} : index to {index}"));
                let nv = e.fresh();
                e.line(format!("{nv} = arith.select {better}, {v}, {ov} : {d}"));
                let ni = e.fresh();
                e.line(format!("{ni} = arith.select {better}, {ki}, {oi} : {index}"));
                vec![nv, ni]
            })
            .remove(1)
        }
        other => return Err(LowerError::Internal(format!("reduce lowering got {}", other.name()))),
    };
    e.alias(o.results[0], res);
    Ok(())
}
