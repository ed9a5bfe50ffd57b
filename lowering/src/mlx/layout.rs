//! Layout ops: `broadcast_in_dim` (a reshape that puts the operand's dims at `dims`, then
//! `mx.broadcast_to`), `reshape`, `transpose`, and `stop_gradient` (the operand itself).
use quabla_dialect::{Func, LayoutOp, Op};

use super::{name, tuple, Emitter};
use crate::LowerError;

/// Lowers one op of this family (exhaustive over the family).
pub fn lower(_e: &mut Emitter, f: &Func, o: &Op, op: &LayoutOp) -> Result<String, LowerError> {
    let a = name(o.operands[0]);
    let src = f.ty(o.operands[0]);
    Ok(match op {
        LayoutOp::BroadcastInDim { dims, shape } => {
            let mut mid = vec![1i64; shape.len()];
            for (i, &d) in dims.iter().enumerate() {
                mid[d as usize] = src.shape[i];
            }
            format!("mx.broadcast_to(mx.reshape({a}, {}), {})", tuple(&mid), tuple(shape))
        }
        LayoutOp::Reshape { shape } => format!("mx.reshape({a}, {})", tuple(shape)),
        LayoutOp::Transpose { perm } => format!("mx.transpose({a}, {})", tuple(perm)),
        LayoutOp::StopGradient {} => a,
    })
}
