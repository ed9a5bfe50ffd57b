//! Lowering of layout ops: `broadcast_in_dim` (a generic reading the operand through a
//! projected map; broadcast extent-1 dims read index 0), `reshape` (one
//! `tensor.collapse_shape` or `tensor.expand_shape` when the shapes nest, else a collapse to
//! 1-D and an expand) and `transpose` (a generic with a permuted input map, so it fuses with
//! elementwise neighbours). Forms that move no data only rename.
use quabla_dialect::{Func, LayoutOp, Op, OpKind, TensorType};

use super::{generic, identity, list, map, memref, Emitter, Iter, Operand};
use crate::LowerError;

/// Groups of consecutive dims of `big` whose extents multiply to each extent of `small`
/// (the reassociation of a collapse from `big` to `small`), or `None` if the shapes do not
/// nest that way. Trailing extent-1 dims join the last group.
pub fn reassociation(big: &[i64], small: &[i64]) -> Option<Vec<Vec<usize>>> {
    if small.is_empty() {
        return big.iter().all(|&d| d == 1).then(Vec::new);
    }
    let mut groups: Vec<Vec<usize>> = Vec::with_capacity(small.len());
    let mut i = 0;
    for &target in small {
        let mut g = vec![];
        let mut p = 1i64;
        while i < big.len() && (g.is_empty() || p < target) {
            p *= big[i];
            g.push(i);
            i += 1;
        }
        if g.is_empty() || p != target {
            return None;
        }
        groups.push(g);
    }
    while i < big.len() {
        if big[i] != 1 {
            return None;
        }
        groups.last_mut()?.push(i);
        i += 1;
    }
    Some(groups)
}

pub(super) fn assoc_text(groups: &[Vec<usize>]) -> String {
    let g: Vec<String> = groups.iter().map(|g| format!("[{}]", g.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", "))).collect();
    format!("[{}]", g.join(", "))
}

/// Emits a row-major reshape of `x` (type `from`) to the shape of `to`.
pub fn reshape(e: &mut Emitter, x: &str, from: &TensorType, to: &TensorType) -> String {
    if from.shape == to.shape {
        return x.to_string();
    }
    let collapse = |e: &mut Emitter, x: &str, from: &TensorType, to: &TensorType, g: &[Vec<usize>]| e.op(format!("tensor.collapse_shape {x} {} : {from} into {to}", assoc_text(g)));
    let expand = |e: &mut Emitter, x: &str, from: &TensorType, to: &TensorType, g: &[Vec<usize>]| {
        e.op(format!("tensor.expand_shape {x} {} output_shape [{}] : {from} into {to}", assoc_text(g), list(&to.shape)))
    };
    if from.rank() > to.rank() {
        if let Some(g) = reassociation(&from.shape, &to.shape) {
            return collapse(e, x, from, to, &g);
        }
    } else if let Some(g) = reassociation(&to.shape, &from.shape) {
        return expand(e, x, from, to, &g);
    }
    // Through 1-D; both ranks are >= 1 here (a 0-d shape nests in every 1-element shape).
    let flat = TensorType::new(from.dtype, [from.num_elements() as i64]);
    let all = |r: usize| vec![(0..r).collect::<Vec<_>>()];
    let mid = if from.rank() == 1 { x.to_string() } else { collapse(e, x, from, &flat, &all(from.rank())) };
    if to.rank() == 1 {
        mid
    } else {
        expand(e, &mid, &flat, to, &all(to.rank()))
    }
}

/// Emits a transpose of `x` (result dim i = operand dim perm[i]).
pub fn transpose(e: &mut Emitter, x: &str, from: &TensorType, perm: &[i64]) -> String {
    if perm.iter().enumerate().all(|(i, &p)| p == i as i64) {
        return x.to_string();
    }
    let r = perm.len();
    let to = TensorType::new(from.dtype, perm.iter().map(|&p| from.shape[p as usize]).collect::<Vec<_>>());
    // Operand dim perm[i] is indexed by loop dim i.
    let mut exprs = vec![String::new(); r];
    for (i, &p) in perm.iter().enumerate() {
        exprs[p as usize] = format!("d{i}");
    }
    let init = e.empty(&to);
    let ins = [Operand::new(x, from, map(r, &exprs))];
    generic(e, &vec![Iter::Parallel; r], &ins, &[Operand::new(init, &to, identity(r))], |_, a| vec![a[0].clone()]).remove(0)
}

/// Emits `broadcast_in_dim` of `x` (type `from`) to `to`: operand dim i is result dim dims[i].
pub fn broadcast(e: &mut Emitter, x: &str, from: &TensorType, to: &TensorType, dims: &[i64]) -> String {
    if from == to {
        return x.to_string();
    }
    let r = to.rank();
    let exprs: Vec<String> = dims.iter().enumerate().map(|(i, &d)| if from.shape[i] == 1 && to.shape[d as usize] != 1 { "0".to_string() } else { format!("d{d}") }).collect();
    let init = e.empty(to);
    let ins = [Operand::new(x, from, map(r, &exprs))];
    generic(e, &vec![Iter::Parallel; r], &ins, &[Operand::new(init, to, identity(r))], |_, a| vec![a[0].clone()]).remove(0)
}

/// `quabla.broadcast_in_dim`.
pub fn lower_broadcast_in_dim(e: &mut Emitter, f: &Func, o: &Op, dims: &[i64]) -> Result<String, LowerError> {
    let x = e.name(o.operands[0]);
    Ok(broadcast(e, &x, f.ty(o.operands[0]), f.ty(o.results[0]), dims))
}

/// `quabla.reshape`.
pub fn lower_reshape(e: &mut Emitter, f: &Func, o: &Op) -> Result<String, LowerError> {
    let x = e.name(o.operands[0]);
    Ok(reshape(e, &x, f.ty(o.operands[0]), f.ty(o.results[0])))
}

/// `quabla.transpose`: where the target says so ([`runtime_transpose`]) one call of the
/// runtime's transposing copy, else a generic over the result.
pub fn lower_transpose(e: &mut Emitter, f: &Func, o: &Op, perm: &[i64]) -> Result<String, LowerError> {
    let x = e.name(o.operands[0]);
    let dest = e.out_buffer(o.results[0]);
    Ok(transposed(e, &x, f.ty(o.operands[0]), perm, dest))
}

/// `x` (`from`) transposed by `perm`: the runtime's transposing copy where [`runtime_transpose`]
/// says so (at the function's top level only: a call inside a loop would start threads per
/// step; into `dest` when given: the function's output buffer), else a generic. Also for
/// lowerings that transpose operands or results of their own (a convolution computed
/// channels-last).
pub fn transposed(e: &mut Emitter, x: &str, from: &TensorType, perm: &[i64], dest: Option<String>) -> String {
    match (e.depth, runtime_transpose(e.cg.target, from, perm)) {
        (0, Some(bmn)) => {
            let to = TensorType::new(from.dtype, perm.iter().map(|&p| from.shape[p as usize]).collect::<Vec<_>>());
            call_transpose(e, (x, from), &to, bmn, dest)
        }
        _ => transpose(e, x, from, perm),
    }
}

/// Elements from which a transpose calls the runtime's transposing copy (see
/// [`runtime_transpose`]); smaller ones stay in cache whatever the loop order.
pub const RUNTIME_TRANSPOSE_ELEMENTS: i64 = 1 << 14;

/// The fewest rows and columns a transpose takes the runtime's transposing copy for (its 8 x 8
/// blocks; narrower, the generic's strided loop is faster). The generic writes each output
/// row by reading the whole operand: Zen 4, two threads, 2026-12-07, f32, us (JAX): `x.T` of
/// [100000, 9] 249 -> 126 (184-213), of [9, 100000] 318 -> 63 (186-205), of [100000, 8] 157
/// -> 52 (128-148); of [100000, 3] the copy took 117 (the generic 30).
pub const RUNTIME_TRANSPOSE_MIN_SIDE: i64 = 8;

/// Elements from which the runtime's transposing copy splits its tiles between the threads.
pub const PAR_TRANSPOSE_ELEMENTS: i64 = 1 << 18;

/// `perm` as a batched 2-D transpose: the leading `p` dims kept, then the dims `s..r` before
/// the dims `p..s` (`[b.., rows.., cols..] -> [b.., cols.., rows..]`); `(p, s)`, else None.
pub fn swapped_groups(perm: &[i64]) -> Option<(usize, usize)> {
    let r = perm.len();
    let p = perm.iter().enumerate().take_while(|&(i, &q)| q == i as i64).count();
    let s = *perm.get(p)? as usize;
    if s <= p || s >= r {
        return None;
    }
    let want: Vec<i64> = (s..r).chain(p..s).map(|v| v as i64).collect();
    (perm[p..] == want[..]).then_some((p, s))
}

/// `[batch, rows, cols]` of a transpose of `from` by `perm` that `target` runs as the
/// runtime's transposing copy (`quabla_transpose_<dtype>`, runtime/src/layout_kernels.rs:
/// square tiles with AVX shuffles, threads over the tiles): 4- and 8-byte elements, a batched
/// 2-D transpose ([`swapped_groups`]) of at least [`RUNTIME_TRANSPOSE_MIN_SIDE`] rows and columns and
/// [`RUNTIME_TRANSPOSE_ELEMENTS`] elements. The generic it replaces reads the operand down
/// its columns: 1024^2 f32 1607 -> 243 us on Zen 4 (JAX 187-199), the result written
/// into the output buffer when it is one.
pub fn runtime_transpose(target: &dyn crate::target::Target, from: &TensorType, perm: &[i64]) -> Option<[i64; 3]> {
    let (p, s) = swapped_groups(perm)?;
    let prod = |d: &[i64]| quabla_dialect::size::saturating_product(d.iter().copied());
    let bmn = [prod(&from.shape[..p]), prod(&from.shape[p..s]), prod(&from.shape[s..])];
    let ok = matches!(from.dtype.size(), 4 | 8) && bmn[1].min(bmn[2]) >= RUNTIME_TRANSPOSE_MIN_SIDE && from.num_elements() as i64 >= RUNTIME_TRANSPOSE_ELEMENTS;
    (ok && target.runtime_kernels()).then_some(bmn)
}

/// The runtime call of [`runtime_transpose`]: `x` (`from`) viewed as `[b, m, n]` and read in
/// place, the result `[b, n, m]` written into `dest` (the function's output buffer, viewed so)
/// when given, else a fresh buffer; returns the result as `to`.
fn call_transpose(e: &mut Emitter, (x, from): (&str, &TensorType), to: &TensorType, [b, m, n]: [i64; 3], dest: Option<String>) -> String {
    let d = from.dtype;
    let st = TensorType::new(d, [b, m, n]);
    let ct = TensorType::new(d, [b, n, m]);
    let x3 = reshape(e, x, from, &st);
    let xu = super::kernel_operand(e, &x3, &st);
    let cm = memref(&ct);
    let c = result_buffer(e, dest.map(|out| (out, to.clone())), &ct);
    let unranked = format!("memref<*x{d}>");
    let cu = e.op(format!("memref.cast {c} : {cm} to {unranked}"));
    let threads = if from.num_elements() as i64 >= PAR_TRANSPOSE_ELEMENTS { e.threads() } else { 1 };
    let t = e.op(format!("arith.constant {threads} : i64"));
    e.line(format!("func.call @quabla_transpose_{d}({xu}, {cu}, {t}) : ({unranked}, {unranked}, i64) -> ()"));
    let res = e.op(format!("bufferization.to_tensor {c} restrict writable : {cm} to {ct}"));
    reshape(e, &res, &ct, to)
}

/// The buffer a runtime kernel writes its result of type `ct` into: `dest` (the function's
/// output buffer and its type) viewed as `ct` (collapsed from more dims, expanded from fewer)
/// when the shapes nest, else a fresh 64-byte aligned allocation. Shared by the runtime
/// products (crate::linalg::dot) and the transposing copy.
pub fn result_buffer(e: &mut Emitter, dest: Option<(String, TensorType)>, ct: &TensorType) -> String {
    let cm = memref(ct);
    let view = dest.and_then(|(out, ot)| {
        if ot.shape == ct.shape {
            return Some(out);
        }
        if ot.rank() >= ct.rank() {
            if let Some(g) = reassociation(&ot.shape, &ct.shape) {
                return Some(e.op(format!("memref.collapse_shape {out} {} : {} into {cm}", assoc_text(&g), memref(&ot))));
            }
        } else if let Some(g) = reassociation(&ct.shape, &ot.shape) {
            return Some(e.op(format!("memref.expand_shape {out} {} output_shape [{}] : {} into {cm}", assoc_text(&g), list(&ct.shape), memref(&ot))));
        }
        // Shapes that do not nest (`[64, 256, 256]` written as `[1, 64, 65536]`): through the
        // flat buffer (the output is contiguous). A fresh buffer cost a copy of the result
        // into the output (the transpose (2, 0, 1) of 256x256x64 f32 2309 -> 1.5 ms).
        (ot.num_elements() == ct.num_elements()).then(|| flat_view(&out, &ot, ct, |_, rhs| e.op(rhs)))
    });
    view.unwrap_or_else(|| e.op(format!("memref.alloc() {{alignment = 64 : i64}} : {cm}")))
}

/// The contiguous memref `src` of type `from` viewed as `to` (as many elements) through the
/// flat buffer: its collapse to one dim (unless it has one), then the expand to `to` (unless
/// `to` has one), each op's right-hand side given to `emit` with its step (`"flat"`, `"as"`),
/// which returns the new value's name. Returns the view's name.
pub fn flat_view(src: &str, from: &TensorType, to: &TensorType, mut emit: impl FnMut(&str, String) -> String) -> String {
    let flat = TensorType::new(to.dtype, [quabla_dialect::size::saturating_product(to.shape.iter().copied())]);
    let all = |r: usize| format!("[[{}]]", (0..r).map(|i| i.to_string()).collect::<Vec<_>>().join(", "));
    let f = if from.rank() == 1 { src.to_string() } else { emit("flat", format!("memref.collapse_shape {src} {} : {} into {}", all(from.rank()), memref(from), memref(&flat))) };
    if to.rank() == 1 {
        f
    } else {
        emit("as", format!("memref.expand_shape {f} {} output_shape [{}] : {} into {}", all(to.rank()), list(&to.shape), memref(&flat), memref(to)))
    }
}

/// The declarations of the transposing copies the module's transposes call (C interface).
pub fn declarations(m: &quabla_dialect::Module, target: &dyn crate::target::Target) -> String {
    let decl = |d: quabla_dialect::DType| (format!("quabla_transpose_{d}"), vec![format!("memref<*x{d}>"), format!("memref<*x{d}>"), "i64".to_string()]);
    super::linalg::declare(m, |f, o| {
        let d = f.ty(*o.operands.first()?).dtype;
        match &o.kind {
            OpKind::Layout(LayoutOp::Transpose { perm }) if runtime_transpose(target, f.ty(o.operands[0]), perm).is_some() => Some(decl(d)),
            // A float convolution laid out channels-first may be computed channels-last, its
            // input and result transposed (crate::linalg::convolution `channels_last`); an
            // unused declaration is dropped with the module's dead symbols.
            OpKind::Convolution(op) if target.runtime_kernels() && matches!(d, quabla_dialect::DType::F32 | quabla_dialect::DType::F64) => {
                let dims = quabla_dialect::ConvAttrs::of(op).dims;
                (dims.input_batch_dimension == 0 && dims.input_feature_dimension == 1).then(|| decl(d))
            }
            _ => None,
        }
    })
}

/// Lowers one op of this family, returning its result's name (exhaustive over the family).
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &LayoutOp) -> Result<String, LowerError> {
    match op {
        LayoutOp::BroadcastInDim { dims, .. } => lower_broadcast_in_dim(e, f, o, dims),
        LayoutOp::Reshape { .. } => lower_reshape(e, f, o),
        LayoutOp::Transpose { perm } => lower_transpose(e, f, o, perm),
        // The operand itself (only derivatives see the op).
        LayoutOp::StopGradient {} => Ok(e.name(o.operands[0])),
    }
}

#[cfg(test)]
mod tests {
    use super::reassociation;

    #[test]
    fn batched_2d_transposes() {
        use super::swapped_groups;
        assert_eq!(swapped_groups(&[1, 0]), Some((0, 1)));
        assert_eq!(swapped_groups(&[0, 2, 1]), Some((1, 2)));
        // NHWC -> NCHW and back: two groups swapped after the batch.
        assert_eq!(swapped_groups(&[0, 3, 1, 2]), Some((1, 3)));
        assert_eq!(swapped_groups(&[0, 2, 3, 1]), Some((1, 2)));
        assert_eq!(swapped_groups(&[2, 0, 1]), Some((0, 2)));
        // Identity, three groups, a reversal of three dims: not one swap.
        assert_eq!(swapped_groups(&[0, 1]), None);
        assert_eq!(swapped_groups(&[2, 1, 0]), None);
        assert_eq!(swapped_groups(&[0, 2, 1, 3]), None);
    }

    #[test]
    fn nesting_shapes() {
        assert_eq!(reassociation(&[2, 3, 4], &[6, 4]), Some(vec![vec![0, 1], vec![2]]));
        assert_eq!(reassociation(&[1, 6, 1], &[6]), Some(vec![vec![0, 1, 2]]));
        assert_eq!(reassociation(&[1, 1], &[]), Some(vec![]));
        assert_eq!(reassociation(&[2, 1, 3], &[2, 3]), Some(vec![vec![0], vec![1, 2]]));
        assert_eq!(reassociation(&[2, 3], &[3, 2]), None);
        assert_eq!(reassociation(&[4, 3], &[2, 6]), None);
        assert_eq!(reassociation(&[1, 2], &[1, 2]), Some(vec![vec![0], vec![1]]));
        assert_eq!(reassociation(&[1, 3], &[3, 1]), None);
    }
}
