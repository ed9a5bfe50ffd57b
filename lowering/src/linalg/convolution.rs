//! Lowering of `convolution` by im2col and the tiled matmul path. Steps (G = feature_group_count
//! * batch_group_count, at most one of them > 1):
//! 1. the input is padded and dilated in its own layout (`pad_dilate`: a fill of the padded
//!    shape and one strided `tensor.insert_slice` of the part of the input that lands in it;
//!    negative padding crops first);
//! 2. one `linalg.generic` copies the patches, `[G, N', O..., Cg, K...]` (N' the output batch,
//!    O the output spatial extents, Cg the kernel's input features, K the kernel extents),
//!    reading the padded input through an affine map (`o * stride + k * rhs_dilation`, the
//!    group folded into the batch or feature index);
//! 3. one generic arranges the kernel as `[G, Cg, K..., Og]`;
//! 4. `[G, N'*O, Cg*K] x [G, Cg*K, Og]` through `dot::matmul_of` (a `linalg.matmul` on the
//!    tiled path when G = 1);
//! 5. the product, expanded to `[G, N', O..., Og]`, is transposed into the output layout with
//!    the feature dim split as (G, Og) and collapsed.
use quabla_dialect::{ConvAttrs, ConvolutionOp, DType, Func, Op, TensorType};

use super::{dot::matmul_of, generic, identity, layout::reshape, layout::transpose, list, map, zero_lit, Emitter, Iter, Operand};
use crate::LowerError;

/// Pads `x` (type `xt`) by `lo`/`hi` per dim and spreads its elements `dil` apart, filling the
/// rest with scalar `fill`. Returns the new tensor and its type.
pub fn pad_dilate(e: &mut Emitter, x: &str, xt: &TensorType, lo: &[i64], hi: &[i64], dil: &[i64], fill: &str) -> (String, TensorType) {
    let r = xt.rank();
    if (0..r).all(|i| lo[i] == 0 && hi[i] == 0 && dil[i] == 1) {
        return (x.to_string(), xt.clone());
    }
    let mut pshape = Vec::with_capacity(r);
    let (mut first, mut count, mut offs) = (vec![0i64; r], vec![0i64; r], vec![0i64; r]);
    let mut empty = false;
    for i in 0..r {
        let n = xt.shape[i];
        let p = (n - 1) * dil[i] + 1 + lo[i] + hi[i];
        pshape.push(p);
        // Elements i with 0 <= lo + i * dil < p.
        let i_min = if lo[i] >= 0 { 0 } else { (-lo[i] + dil[i] - 1) / dil[i] };
        let top = p - 1 - lo[i];
        let i_max = if top < 0 { -1 } else { (top / dil[i]).min(n - 1) };
        if i_max < i_min {
            empty = true;
        }
        first[i] = i_min;
        count[i] = i_max - i_min + 1;
        offs[i] = lo[i] + i_min * dil[i];
    }
    let pt = TensorType::new(xt.dtype, pshape);
    let big = e.filled(&pt, fill);
    if empty {
        return (big, pt);
    }
    let st = TensorType::new(xt.dtype, count.clone());
    let src = if st.shape == xt.shape {
        x.to_string()
    } else {
        e.op(format!("tensor.extract_slice {x}[{}] [{}] [{}] : {xt} to {st}", list(&first), list(&count), list(&vec![1; r])))
    };
    let ins = e.op(format!("tensor.insert_slice {src} into {big}[{}] [{}] [{}] : {st} into {pt}", list(&offs), list(&count), list(dil)));
    (ins, pt)
}

/// `quabla.convolution`.
pub fn lower_convolution(e: &mut Emitter, f: &Func, o: &Op, a: &ConvAttrs) -> Result<String, LowerError> {
    let (x, w) = (e.name(o.operands[0]), e.name(o.operands[1]));
    let (lt, rt, out) = (f.ty(o.operands[0]).clone(), f.ty(o.operands[1]).clone(), f.ty(o.results[0]).clone());
    let dt: DType = out.dtype;
    let d = a.dims;
    let n = d.input_spatial_dimensions.len();
    let (fg, bg) = (a.feature_group_count, a.batch_group_count);
    let g = fg * bg;
    let nb = out.shape[d.output_batch_dimension as usize];
    let cg = rt.shape[d.kernel_input_feature_dimension as usize];
    let og = rt.shape[d.kernel_output_feature_dimension as usize] / g;
    let os: Vec<i64> = d.output_spatial_dimensions.iter().map(|&k| out.shape[k as usize]).collect();
    let ks: Vec<i64> = d.kernel_spatial_dimensions.iter().map(|&k| rt.shape[k as usize]).collect();
    // 1. Padding and lhs dilation on the spatial dims of the input.
    let (mut lo, mut hi, mut dil) = (vec![0i64; n + 2], vec![0i64; n + 2], vec![1i64; n + 2]);
    for (i, &sd) in d.input_spatial_dimensions.iter().enumerate() {
        lo[sd as usize] = a.padding[2 * i];
        hi[sd as usize] = a.padding[2 * i + 1];
        dil[sd as usize] = a.lhs_dilation[i];
    }
    let z = e.scalar(dt, zero_lit(dt));
    let (p, pt) = pad_dilate(e, &x, &lt, &lo, &hi, &dil, &z);
    // 2. Patches [G, N', O..., Cg, K...]: loops d0 = g, d1 = b, d2.. = o, d(n+2) = c, d(n+3).. = k.
    let rank = 2 * n + 3;
    let mut in_exprs = vec![String::new(); n + 2];
    in_exprs[d.input_batch_dimension as usize] = if bg > 1 { format!("d0 * {nb} + d1") } else { "d1".into() };
    in_exprs[d.input_feature_dimension as usize] = if fg > 1 { format!("d0 * {cg} + d{}", n + 2) } else { format!("d{}", n + 2) };
    for i in 0..n {
        in_exprs[d.input_spatial_dimensions[i] as usize] = format!("d{} * {} + d{} * {}", 2 + i, a.window_strides[i], n + 3 + i, a.rhs_dilation[i]);
    }
    let patches_shape: Vec<i64> = [g, nb].into_iter().chain(os.iter().copied()).chain([cg]).chain(ks.iter().copied()).collect();
    let patches_t = TensorType::new(dt, patches_shape);
    let pinit = e.empty(&patches_t);
    let patches = generic(e, &vec![Iter::Parallel; rank], &[Operand::new(p, &pt, map(rank, &in_exprs))], &[Operand::new(pinit, &patches_t, identity(rank))], |_, a| vec![a[0].clone()]).remove(0);
    // 3. Kernel [G, Cg, K..., Og]: loops d0 = g, d1 = c, d2.. = k, d(n+2) = o.
    let krank = n + 3;
    let mut k_exprs = vec![String::new(); n + 2];
    k_exprs[d.kernel_output_feature_dimension as usize] = if g > 1 { format!("d0 * {og} + d{}", n + 2) } else { format!("d{}", n + 2) };
    k_exprs[d.kernel_input_feature_dimension as usize] = "d1".into();
    for i in 0..n {
        k_exprs[d.kernel_spatial_dimensions[i] as usize] = format!("d{}", 2 + i);
    }
    let kshape: Vec<i64> = [g, cg].into_iter().chain(ks.iter().copied()).chain([og]).collect();
    let kt = TensorType::new(dt, kshape);
    let kinit = e.empty(&kt);
    let kern = generic(e, &vec![Iter::Parallel; krank], &[Operand::new(w, &rt, map(krank, &k_exprs))], &[Operand::new(kinit, &kt, identity(krank))], |_, a| vec![a[0].clone()]).remove(0);
    // 4. The product.
    let m = nb * os.iter().product::<i64>();
    let kk = cg * ks.iter().product::<i64>();
    let batched = g > 1;
    let (a3t, b3t, c3t) = if batched {
        (TensorType::new(dt, [g, m, kk]), TensorType::new(dt, [g, kk, og]), TensorType::new(dt, [g, m, og]))
    } else {
        (TensorType::new(dt, [m, kk]), TensorType::new(dt, [kk, og]), TensorType::new(dt, [m, og]))
    };
    let a3 = reshape(e, &patches, &patches_t, &a3t);
    let b3 = reshape(e, &kern, &kt, &b3t);
    let c3 = matmul_of(e, dt, &a3, &b3, [g, m, og, kk], batched);
    // 5. [G, N', O..., Og] -> output layout with the feature dim as (G, Og).
    let ex_t = TensorType::new(dt, [g, nb].into_iter().chain(os.iter().copied()).chain([og]).collect::<Vec<_>>());
    let ex = reshape(e, &c3, &c3t, &ex_t);
    let mut perm: Vec<i64> = Vec::with_capacity(n + 3);
    for j in 0..(n + 2) as i64 {
        if j == d.output_batch_dimension {
            perm.push(1);
        } else if j == d.output_feature_dimension {
            perm.push(0);
            perm.push(n as i64 + 2);
        } else {
            let i = d.output_spatial_dimensions.iter().position(|&s| s == j).unwrap_or(0);
            perm.push(2 + i as i64);
        }
    }
    let tr = transpose(e, &ex, &ex_t, &perm);
    let tr_t = TensorType::new(dt, perm.iter().map(|&p| ex_t.shape[p as usize]).collect::<Vec<_>>());
    Ok(reshape(e, &tr, &tr_t, &out))
}

/// Lowers one op of this family, returning its result's name (exhaustive over the family).
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &ConvolutionOp) -> Result<String, LowerError> {
    match op {
        ConvolutionOp::Convolution { .. } => lower_convolution(e, f, o, &ConvAttrs::of(op)),
    }
}
