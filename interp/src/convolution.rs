//! `convolution` (StableHLO semantics), the naive loop nest: for every output element, the sum
//! over its group's input features and the kernel window of input * kernel, where the input
//! is read at padded-and-dilated position `o * stride + k * rhs_dilation`, which holds an
//! input element when `pos - lo` is a non-negative multiple of `lhs_dilation` inside the
//! input (zero otherwise). Feature groups split the input features and kernel output features
//! into `feature_group_count` consecutive blocks; batch groups split the input batch and the
//! kernel output features into `batch_group_count` blocks (output feature block g reads input
//! batch block g). Floats accumulate at their own width; integers wrap.
use quabla_dialect::{ConvAttrs, ConvolutionOp, TensorType};

use super::{for_each_index, strides, to_buffer, try_capacity, vals, InterpError, Real, Result, Vals};
use crate::buffer::Buffer;

#[allow(clippy::too_many_arguments)]
fn conv<T: Copy>(l: &[T], ls: &[i64], r: &[T], rs: &[i64], a: &ConvAttrs, ty: &TensorType, zero: T, acc: impl Fn(T, T, T) -> T) -> Result<Vec<T>> {
    let out = &ty.shape[..];
    let d = a.dims;
    let (lst, rst) = (strides(ls), strides(rs));
    let n = d.input_spatial_dimensions.len();
    let (fg, bg) = (a.feature_group_count, a.batch_group_count);
    let ci = rs[d.kernel_input_feature_dimension as usize];
    let co = rs[d.kernel_output_feature_dimension as usize];
    let og = co / (fg * bg);
    let nb_out = out[d.output_batch_dimension as usize];
    let kshape: Vec<i64> = d.kernel_spatial_dimensions.iter().map(|&k| rs[k as usize]).collect();
    let mut res = try_capacity("convolution", ty, ty.num_elements())?;
    for_each_index(out, |o| {
        let b = o[d.output_batch_dimension as usize] as i64;
        let f = o[d.output_feature_dimension as usize] as i64;
        let g = f / og;
        let (in_b, f0) = if bg > 1 { (g * nb_out + b, 0) } else { (b, g * ci) };
        let mut sum = zero;
        for c in 0..ci {
            let lbase = in_b as usize * lst[d.input_batch_dimension as usize] + (f0 + c) as usize * lst[d.input_feature_dimension as usize];
            let rbase = f as usize * rst[d.kernel_output_feature_dimension as usize] + c as usize * rst[d.kernel_input_feature_dimension as usize];
            for_each_index(&kshape, |k| {
                let mut li = lbase;
                let mut ri = rbase;
                for i in 0..n {
                    let pos = o[d.output_spatial_dimensions[i] as usize] as i64 * a.window_strides[i] + k[i] as i64 * a.rhs_dilation[i] - a.padding[2 * i];
                    let ld = a.lhs_dilation[i];
                    let extent = ls[d.input_spatial_dimensions[i] as usize];
                    if pos < 0 || pos % ld != 0 || pos / ld >= extent {
                        return;
                    }
                    li += (pos / ld) as usize * lst[d.input_spatial_dimensions[i] as usize];
                    ri += k[i] * rst[d.kernel_spatial_dimensions[i] as usize];
                }
                sum = acc(sum, l[li], r[ri]);
            });
        }
        res.push(sum);
    });
    Ok(res)
}

fn conv_real<T: Real>(l: &[T], ls: &[i64], r: &[T], rs: &[i64], a: &ConvAttrs, ty: &TensorType) -> Result<Vec<T>> {
    conv(l, ls, r, rs, a, ty, T::ZERO, |s, x, y| s + x * y)
}

/// `quabla.convolution`.
pub(super) fn convolution(l: &Buffer, r: &Buffer, a: &ConvAttrs, ty: &TensorType) -> Result<Buffer> {
    let (ls, rs) = (l.shape(), r.shape());
    let out = match (vals("convolution", l)?, vals("convolution", r)?) {
        (Vals::F32(x), Vals::F32(y)) => Vals::F32(conv_real(&x, ls, &y, rs, a, ty)?),
        (Vals::F64(x), Vals::F64(y)) => Vals::F64(conv_real(&x, ls, &y, rs, a, ty)?),
        (Vals::Int(x), Vals::Int(y)) => Vals::Int(conv(&x, ls, &y, rs, a, ty, 0i64, |s, p, q| s.wrapping_add(p.wrapping_mul(q)))?),
        _ => return Err(InterpError::Unsupported { op: "convolution", dtype: l.dtype() }),
    };
    to_buffer("convolution", ty, out)
}

/// Evaluates one op of this family (exhaustive over the family).
pub(super) fn eval(operands: &[&Buffer], ty: &TensorType, op: &ConvolutionOp) -> Result<Vec<Buffer>> {
    match op {
        ConvolutionOp::Convolution { .. } => Ok(vec![convolution(operands[0], operands[1], &ConvAttrs::of(op), ty)?]),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use quabla_dialect::{ConvAttrs, ConvDims, OpKind};

    fn op(strides: &[i64], pad: &[i64], ld: &[i64], rd: &[i64], fg: i64, bg: i64) -> OpKind {
        let dims = ConvDims::nchw(strides.len());
        OpKind::Convolution(ConvAttrs { window_strides: strides, padding: pad, lhs_dilation: ld, rhs_dilation: rd, dims: &dims, feature_group_count: fg, batch_group_count: bg }.to_op())
    }

    #[test]
    fn conv1d_by_hand() {
        // x = [1, 2, 3, 4], w = [1, 10]: valid correlation = [21, 32, 43].
        let x = f64s(&[1, 1, 4], &[1.0, 2.0, 3.0, 4.0]);
        let w = f64s(&[1, 1, 2], &[1.0, 10.0]);
        let y = run1(op(&[1], &[0, 0], &[1], &[1], 1, 1), &[&x, &w]);
        assert_eq!(y.to_f64_vec(), vec![21.0, 32.0, 43.0]);
        // stride 2, padding (1, 0): positions -1..: [0*1 + 1*10, 2 + 30] = [10, 32].
        let y = run1(op(&[2], &[1, 0], &[1], &[1], 1, 1), &[&x, &w]);
        assert_eq!(y.to_f64_vec(), vec![10.0, 32.0]);
        // rhs dilation 2: [1 + 30, 2 + 40].
        let y = run1(op(&[1], &[0, 0], &[1], &[2], 1, 1), &[&x, &w]);
        assert_eq!(y.to_f64_vec(), vec![31.0, 42.0]);
        // lhs dilation 2: dilated x = [1, 0, 2, 0, 3, 0, 4] -> [1, 20, 2, 30, 3, 40].
        let y = run1(op(&[1], &[0, 0], &[2], &[1], 1, 1), &[&x, &w]);
        assert_eq!(y.to_f64_vec(), vec![1.0, 20.0, 2.0, 30.0, 3.0, 40.0]);
    }

    #[test]
    fn groups() {
        // Two channels, two feature groups, kernel [2 out, 1 in, 1]: each channel scaled.
        let x = f64s(&[1, 2, 2], &[1.0, 2.0, 3.0, 4.0]);
        let w = f64s(&[2, 1, 1], &[10.0, 100.0]);
        let y = run1(op(&[1], &[0, 0], &[1], &[1], 2, 1), &[&x, &w]);
        assert_eq!(y.to_f64_vec(), vec![10.0, 20.0, 300.0, 400.0]);
        // Batch groups: batch 2 -> output batch 1, out feature g reads batch g.
        let x = f64s(&[2, 1, 2], &[1.0, 2.0, 3.0, 4.0]);
        let w = f64s(&[2, 1, 1], &[10.0, 100.0]);
        let y = run1(op(&[1], &[0, 0], &[1], &[1], 1, 2), &[&x, &w]);
        assert_eq!(y.shape(), &[1, 2, 2]);
        assert_eq!(y.to_f64_vec(), vec![10.0, 20.0, 300.0, 400.0]);
    }
}
