//! Lowering of slicing ops: `slice` (strided `tensor.extract_slice`), `pad` (fill, then a
//! strided `tensor.insert_slice`), `concatenate` (insert_slices into an empty tensor),
//! `dynamic_slice` (clamped dynamic offsets) and `gather` (a generic that extracts with a
//! clamped index).
use quabla_dialect::{Func, Op, OpKind, TensorType};

use super::{generic, identity, map, Emitter, GenericIn};
use crate::LowerError;

fn list(v: &[i64]) -> String {
    v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ")
}

pub fn lower(e: &mut Emitter, f: &Func, o: &Op) -> Result<(), LowerError> {
    let out = f.ty(o.results[0]).clone();
    let x = e.name(o.operands[0]);
    let xt = f.ty(o.operands[0]).clone();
    let r = match &o.kind {
        OpKind::Slice { start, strides, .. } => {
            let n = e.fresh();
            e.line(format!("{n} = tensor.extract_slice {x}[{}] [{}] [{}] : {xt} to {out}", list(start), list(&out.shape), list(strides)));
            n
        }
        OpKind::Pad { low, interior, .. } => {
            let pv = e.name(o.operands[1]);
            let pt = f.ty(o.operands[1]).clone();
            let s = e.fresh();
            e.line(format!("{s} = tensor.extract {pv}[] : {pt}"));
            let filled = e.filled(&out, &s);
            let st: Vec<i64> = interior.iter().map(|i| i + 1).collect();
            let n = e.fresh();
            e.line(format!("{n} = tensor.insert_slice {x} into {filled}[{}] [{}] [{}] : {xt} into {out}", list(low), list(&xt.shape), list(&st)));
            n
        }
        OpKind::Concatenate { dim } => {
            let mut acc = e.empty(&out);
            let mut off = 0i64;
            for v in &o.operands {
                let t = f.ty(*v).clone();
                let mut offs = vec![0i64; out.rank()];
                offs[*dim as usize] = off;
                let n = e.fresh();
                e.line(format!("{n} = tensor.insert_slice {} into {acc}[{}] [{}] [{}] : {t} into {out}", e.name(*v), list(&offs), list(&t.shape), list(&vec![1; out.rank()])));
                acc = n;
                off += t.shape[*dim as usize];
            }
            acc
        }
        OpKind::DynamicSlice { sizes } => {
            let mut offs = Vec::new();
            let zero = e.fresh();
            e.line(format!("{zero} = arith.constant 0 : index"));
            for (k, v) in o.operands[1..].iter().enumerate() {
                let t = f.ty(*v).clone();
                let s = e.fresh();
                e.line(format!("{s} = tensor.extract {}[] : {t}", e.name(*v)));
                let i = e.fresh();
                e.line(format!("{i} = arith.index_cast {s} : {} to index", t.dtype));
                let hi = e.fresh();
                e.line(format!("{hi} = arith.constant {} : index", xt.shape[k] - sizes[k]));
                let a = e.fresh();
                e.line(format!("{a} = arith.maxsi {i}, {zero} : index"));
                let b = e.fresh();
                e.line(format!("{b} = arith.minsi {a}, {hi} : index"));
                offs.push(b);
            }
            let n = e.fresh();
            e.line(format!("{n} = tensor.extract_slice {x}[{}] [{}] [{}] : {xt} to {out}", offs.join(", "), list(sizes), list(&vec![1; sizes.len()])));
            n
        }
        OpKind::Gather { axis } => {
            let idx = e.name(o.operands[1]);
            let it = f.ty(o.operands[1]).clone();
            let (a, q, r) = (*axis as usize, it.rank(), out.rank());
            let exprs: Vec<String> = (a..a + q).map(|i| format!("d{i}")).collect();
            let init = e.empty(&out);
            let iters = vec!["parallel"; r];
            let ins = [GenericIn { name: idx, ty: it.clone(), map: map(r, &exprs) }];
            let extent = xt.shape[a] - 1;
            let xt2 = xt.clone();
            generic(e, r, &iters, &ins, &[(init, out.clone(), identity(r))], move |e, args| {
                let i = e.fresh();
                e.line(format!("{i} = arith.index_cast {} : {} to index", args[0], it.dtype));
                let z = e.fresh();
                e.line(format!("{z} = arith.constant 0 : index"));
                let hi = e.fresh();
                e.line(format!("{hi} = arith.constant {extent} : index"));
                let c0 = e.fresh();
                e.line(format!("{c0} = arith.maxsi {i}, {z} : index"));
                let c = e.fresh();
                e.line(format!("{c} = arith.minsi {c0}, {hi} : index"));
                let mut coords = Vec::new();
                for k in 0..xt2.rank() {
                    if k == a {
                        coords.push(c.clone());
                    } else {
                        let loop_dim = if k < a { k } else { k - 1 + q };
                        let n = e.fresh();
                        e.line(format!("{n} = linalg.index {loop_dim} : index"));
                        coords.push(n);
                    }
                }
                let v = e.fresh();
                e.line(format!("{v} = tensor.extract {x}[{}] : {xt2}", coords.join(", ")));
                vec![v]
            })
            .remove(0)
        }
        other => return Err(LowerError::Internal(format!("slicing lowering got {}", other.name()))),
    };
    e.alias(o.results[0], r);
    let _ = TensorType::scalar;
    Ok(())
}
