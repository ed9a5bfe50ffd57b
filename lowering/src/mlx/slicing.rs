//! Slicing ops. `slice` is Python slicing; `concatenate` `mx.concatenate`; `pad` `q.pad`
//! (interior padding interleaves, then `mx.pad` adds the edges); `dynamic_slice` and
//! `dynamic_update_slice` clamp their starts (`q.dynamic_slice`, `q.dynamic_update_slice`:
//! `mx.slice` / `mx.slice_update` with array starts, so they stay inside `mx.compile`);
//! `gather` is `mx.take` of the clamped indices.
use quabla_dialect::{Func, Op, SlicingOp};

use super::{name, names, tuple, Emitter};
use crate::LowerError;

/// Lowers one op of this family (exhaustive over the family).
pub fn lower(_e: &mut Emitter, f: &Func, o: &Op, op: &SlicingOp) -> Result<String, LowerError> {
    let a = name(o.operands[0]);
    let ty = f.ty(o.operands[0]);
    Ok(match op {
        SlicingOp::Concatenate { dim } => format!("mx.concatenate([{a}, {}], axis={dim})", name(o.operands[1])),
        SlicingOp::Slice { start_indices, limit_indices, strides } => {
            if ty.rank() == 0 {
                return Ok(a);
            }
            let parts: Vec<String> = (0..ty.rank()).map(|i| format!("{}:{}:{}", start_indices[i], limit_indices[i], strides[i])).collect();
            format!("{a}[{}]", parts.join(", "))
        }
        SlicingOp::Pad { edge_padding_low, edge_padding_high, interior_padding } => {
            format!("q.pad({a}, {}, {}, {}, {})", name(o.operands[1]), tuple(edge_padding_low), tuple(edge_padding_high), tuple(interior_padding))
        }
        SlicingOp::DynamicSlice { slice_sizes } => format!("q.dynamic_slice({a}, [{}], {})", names(&o.operands[1..]), tuple(slice_sizes)),
        SlicingOp::Gather { axis } => format!("q.gather({a}, {}, {axis})", name(o.operands[1])),
        SlicingOp::DynamicUpdateSlice {} => format!("q.dynamic_update_slice({a}, {}, [{}])", name(o.operands[1]), names(&o.operands[2..])),
    })
}
