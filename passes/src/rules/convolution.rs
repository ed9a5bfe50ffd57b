//! Derivative and batching rules of `convolution`, derived as JAX derives them
//! (`jax/_src/lax/convolution.py`). JVP: bilinear, conv(tl, r) + conv(l, tr). VJP: the input
//! cotangent is a convolution of the output cotangent with the spatially reversed kernel
//! (strides and lhs dilation swapped, padding from `vjp_lhs_padding`, the kernel's feature
//! dims swapped; groups moved into the kernel's input features); the kernel cotangent is a
//! convolution of the input with the output cotangent as kernel (batch and feature dims of
//! both swapped, rhs dilation and strides swapped, padding from `vjp_rhs_padding`, feature
//! groups become batch groups and vice versa). Batching folds the vmapped dim into the batch
//! dim (lhs), the output features (rhs) or the groups (both). The reversal is a `gather`
//! along each kernel spatial dim with constant reversed indices.
use quabla_dialect::{ConstantOp, ConvAttrs, ConvDims, DType, Op, OpKind, SlicingOp, TensorType, Value};

use super::{RuleError, Tangents, B};

fn attrs_of(op: &Op) -> Result<ConvAttrs<'_>, RuleError> {
    match &op.kind {
        OpKind::Convolution(c) => Ok(ConvAttrs::of(c)),
        other => Err(RuleError::Internal(format!("convolution rule got {}", other.name()))),
    }
}

fn conv(b: &mut B, l: Value, r: Value, a: &ConvAttrs) -> Value {
    b.op(OpKind::Convolution(a.to_op()), &[l, r])
}

fn dilate(n: i64, d: i64) -> i64 {
    quabla_dialect::ops::convolution::dilate(n, d)
}

/// JAX's `_reshape_axis_out_of`: dim `src` of extent n becomes (size1, n / size1).
fn axis_out_of(b: &mut B, src: usize, size1: i64, x: Value) -> Value {
    let t = b.ty(x);
    let mut shape = t.shape.clone();
    let n = shape[src];
    shape.splice(src..=src, [size1, n / size1]);
    b.reshape(x, shape)
}

/// JAX's `_reshape_axis_into`: dim `src` merges into dim `dst` (numbered without `src`) as its
/// major part.
fn axis_into(b: &mut B, src: usize, dst: usize, x: Value) -> Value {
    let t = b.ty(x);
    let mut perm: Vec<i64> = (0..t.rank() as i64).filter(|&i| i != src as i64).collect();
    perm.insert(dst, src as i64);
    let mut shape: Vec<i64> = t.shape.iter().enumerate().filter(|(i, _)| *i != src).map(|(_, &d)| d).collect();
    shape[dst] *= t.shape[src];
    let y = b.transpose(x, perm);
    b.reshape(y, shape)
}

/// Reverses `x` along each of `dims` (a gather with indices n-1, ..., 0).
fn rev(b: &mut B, x: Value, dims: &[i64]) -> Value {
    let mut y = x;
    for &d in dims {
        let n = b.ty(y).shape[d as usize];
        if n == 1 {
            continue;
        }
        let it = TensorType::new(DType::I64, [n]);
        let iota = b.op(OpKind::Constant(ConstantOp::Iota { dim: 0, ty: it.clone() }), &[]);
        let top = b.splat(&it, (n - 1) as f64);
        let idx = b.sub(top, iota);
        y = b.op(OpKind::Slicing(SlicingOp::Gather { axis: d }), &[y, idx]);
    }
    y
}

fn swap(spec: &[i64]) -> Vec<i64> {
    let mut s = spec.to_vec();
    s.swap(0, 1);
    s
}

fn take(t: &TensorType, dims: &[i64]) -> Vec<i64> {
    dims.iter().map(|&d| t.shape[d as usize]).collect()
}

/// JAX's `_conv_general_vjp_lhs_padding`, flattened.
pub fn vjp_lhs_padding(in_shape: &[i64], window: &[i64], strides: &[i64], out_shape: &[i64], padding: &[i64], lhs_dil: &[i64], rhs_dil: &[i64]) -> Vec<i64> {
    let mut p = Vec::with_capacity(2 * in_shape.len());
    for i in 0..in_shape.len() {
        let ld = dilate(in_shape[i], lhs_dil[i]);
        let rd = dilate(window[i], rhs_dil[i]);
        let od = dilate(out_shape[i], strides[i]);
        let before = rd - padding[2 * i] - 1;
        let after = ld + rd - 1 - od - before;
        p.extend([before, after]);
    }
    p
}

/// JAX's `_conv_general_vjp_rhs_padding`, flattened.
fn vjp_rhs_padding(in_shape: &[i64], window: &[i64], strides: &[i64], out_shape: &[i64], padding: &[i64], lhs_dil: &[i64], rhs_dil: &[i64]) -> Vec<i64> {
    let mut p = Vec::with_capacity(2 * in_shape.len());
    for i in 0..in_shape.len() {
        let ld = dilate(in_shape[i], lhs_dil[i]);
        let rd = dilate(window[i], rhs_dil[i]);
        let od = dilate(out_shape[i], strides[i]);
        let lo = padding[2 * i];
        p.extend([lo, (od - ld) + (rd - lo - 1)]);
    }
    p
}

/// The input cotangent (JAX's `_conv_general_dilated_transpose_lhs`).
fn transpose_lhs(b: &mut B, g: Value, rhs: Value, lhs_t: &TensorType, a: &ConvAttrs) -> Value {
    let d = a.dims;
    let (lhs_spec, rhs_spec, out_spec) = (d.lhs_spec(), d.rhs_spec(), d.out_spec());
    let mut fgc = a.feature_group_count;
    let bgc = a.batch_group_count;
    let mut rhs = rhs;
    if fgc > 1 || bgc > 1 {
        let groups = fgc.max(bgc);
        rhs = axis_out_of(b, rhs_spec[0] as usize, groups, rhs);
        rhs = axis_into(b, rhs_spec[0] as usize, rhs_spec[1] as usize, rhs);
        fgc = groups;
    }
    let (rt, gt) = (b.ty(rhs), b.ty(g));
    let padding = vjp_lhs_padding(&take(lhs_t, &d.input_spatial_dimensions), &take(&rt, &d.kernel_spatial_dimensions), a.window_strides, &take(&gt, &d.output_spatial_dimensions), a.padding, a.lhs_dilation, a.rhs_dilation);
    let revd = rev(b, rhs, &d.kernel_spatial_dimensions);
    let dims = ConvDims::from_specs(&out_spec, &swap(&rhs_spec), &lhs_spec);
    let t = ConvAttrs { window_strides: a.lhs_dilation, padding: &padding, lhs_dilation: a.window_strides, rhs_dilation: a.rhs_dilation, dims: &dims, feature_group_count: fgc, batch_group_count: 1 };
    let mut out = conv(b, g, revd, &t);
    if bgc > 1 {
        out = axis_out_of(b, lhs_spec[1] as usize, bgc, out);
        out = axis_into(b, lhs_spec[1] as usize, lhs_spec[0] as usize, out);
    }
    out
}

/// The kernel cotangent (JAX's `_conv_general_dilated_transpose_rhs`).
fn transpose_rhs(b: &mut B, g: Value, lhs: Value, rhs_t: &TensorType, a: &ConvAttrs) -> Value {
    let d = a.dims;
    let (mut fgc, mut bgc) = (a.feature_group_count, a.batch_group_count);
    if bgc > 1 {
        fgc = bgc;
        bgc = 1;
    } else if fgc > 1 {
        bgc = fgc;
        fgc = 1;
    }
    let dims = ConvDims::from_specs(&swap(&d.lhs_spec()), &swap(&d.out_spec()), &swap(&d.rhs_spec()));
    let (lt, gt) = (b.ty(lhs), b.ty(g));
    let padding = vjp_rhs_padding(&take(&lt, &d.input_spatial_dimensions), &take(rhs_t, &d.kernel_spatial_dimensions), a.window_strides, &take(&gt, &d.output_spatial_dimensions), a.padding, a.lhs_dilation, a.rhs_dilation);
    let t = ConvAttrs { window_strides: a.rhs_dilation, padding: &padding, lhs_dilation: a.lhs_dilation, rhs_dilation: a.window_strides, dims: &dims, feature_group_count: fgc, batch_group_count: bgc };
    conv(b, lhs, g, &t)
}

pub fn jvp(b: &mut B, op: &Op, t: &[Option<Value>]) -> Result<Tangents, RuleError> {
    let (l, r) = (op.operands[0], op.operands[1]);
    let x = t[0].map(|tl| b.op(op.kind.clone(), &[tl, r]));
    let y = t[1].map(|tr| b.op(op.kind.clone(), &[l, tr]));
    Ok(vec![b.add_opt(x, y)])
}

pub fn vjp(b: &mut B, op: &Op, ct: Value) -> Result<Tangents, RuleError> {
    let a = attrs_of(op)?;
    let (l, r) = (op.operands[0], op.operands[1]);
    let (lt, rt) = (b.ty(l), b.ty(r));
    let cl = transpose_lhs(b, ct, r, &lt, &a);
    let cr = transpose_rhs(b, ct, l, &rt, &a);
    Ok(vec![Some(cl), Some(cr)])
}

/// Batching (JAX's `_conv_general_dilated_batch_rule` with the batch dim first).
pub fn batch(b: &mut B, op: &Op, xs: &[Value], batched: &[bool], _size: i64) -> Result<Vec<(Value, bool)>, RuleError> {
    let a = attrs_of(op)?;
    let d = a.dims;
    let (lhs_spec, rhs_spec, out_spec) = (d.lhs_spec().iter().map(|&x| x as usize).collect::<Vec<_>>(), d.rhs_spec().iter().map(|&x| x as usize).collect::<Vec<_>>(), d.out_spec().iter().map(|&x| x as usize).collect::<Vec<_>>());
    let (lhs, rhs) = (xs[0], xs[1]);
    let (fgc, bgc) = (a.feature_group_count, a.batch_group_count);
    let with = |fg: i64, bg: i64| ConvAttrs { feature_group_count: fg, batch_group_count: bg, ..a };
    let (out, bdim) = match (batched[0], batched[1]) {
        (true, true) => {
            let n = b.ty(lhs).shape[0];
            let (new_lhs, t) = if bgc > 1 { (axis_into(b, 0, lhs_spec[0], lhs), with(fgc, bgc * n)) } else { (axis_into(b, 0, lhs_spec[1], lhs), with(fgc * n, bgc)) };
            let new_rhs = axis_into(b, 0, rhs_spec[0], rhs);
            let out = conv(b, new_lhs, new_rhs, &t);
            (axis_out_of(b, out_spec[1], n, out), out_spec[1])
        }
        (true, false) => {
            let n = b.ty(lhs).shape[0];
            let new_lhs = if bgc == 1 {
                axis_into(b, 0, lhs_spec[0], lhs)
            } else {
                let x = axis_out_of(b, lhs_spec[0] + 1, bgc, lhs);
                let x = axis_into(b, 0, lhs_spec[0] + 1, x);
                axis_into(b, lhs_spec[0], lhs_spec[0], x)
            };
            let out = conv(b, new_lhs, rhs, &a);
            (axis_out_of(b, out_spec[0], n, out), out_spec[0])
        }
        (false, true) => {
            let n = b.ty(rhs).shape[0];
            if fgc == 1 && bgc == 1 {
                let new_rhs = axis_into(b, 0, rhs_spec[0], rhs);
                let out = conv(b, lhs, new_rhs, &a);
                (axis_out_of(b, out_spec[1], n, out), out_spec[1])
            } else {
                let groups = fgc.max(bgc);
                let x = axis_out_of(b, rhs_spec[0] + 1, groups, rhs);
                let x = axis_into(b, 0, rhs_spec[0] + 1, x);
                let new_rhs = axis_into(b, rhs_spec[0], rhs_spec[0], x);
                let out = conv(b, lhs, new_rhs, &a);
                let out = axis_out_of(b, out_spec[1], groups, out);
                let out = axis_out_of(b, out_spec[1] + 1, n, out);
                (axis_into(b, out_spec[1], out_spec[1] + 1, out), out_spec[1])
            }
        }
        (false, false) => return Ok(vec![(conv(b, lhs, rhs, &a), false)]),
    };
    Ok(vec![(super::move_axis(b, out, bdim, 0), true)])
}

