//! Windowed reductions and the select ops, naive loops. The window of output element `o`
//! covers padded-and-dilated positions `o * stride + k * window_dilation`; a position holds
//! operand element `(pos - lo) / base_dilation` when that divides exactly and is in range,
//! else the reduction's init value (sum 0, max -inf / MIN, min +inf / MAX). Elements fold in
//! row-major window order. The select ops pick, per window, the first operand element that
//! the later ones do not beat (`ge`: a candidate replaces the current choice unless
//! `current >= candidate`; `le` likewise), holes and padding excluded; scatter adds the
//! window's source value there, gather reads the tangent there (0 for a window of padding
//! only).
use quabla_dialect::{CmpDir, DType, ReduceWindowOp, TensorType, Window, WindowReducer};

use super::{for_each_index, max_real, min_real, strides, to_buffer, try_collect, try_vec, vals, InterpError, Real, Result, Vals};
use crate::buffer::BufferError;
use crate::buffer::Buffer;

/// Calls `f(o_flat, x_flat)` for every output element and each operand element of its window,
/// in row-major order of outputs then window positions (holes and padding skipped).
fn each_window(shape: &[i64], w: &Window, out: &[i64], mut f: impl FnMut(usize, usize)) {
    let st = strides(shape);
    let r = shape.len();
    let mut o_flat = 0;
    for_each_index(out, |o| {
        for_each_index(&w.window_dimensions, |k| {
            let mut xi = 0;
            for i in 0..r {
                let pos = o[i] as i64 * w.window_strides[i] + k[i] as i64 * w.window_dilations[i] - w.padding[2 * i];
                let bd = w.base_dilations[i];
                if pos < 0 || pos % bd != 0 || pos / bd >= shape[i] {
                    return;
                }
                xi += (pos / bd) as usize * st[i];
            }
            f(o_flat, xi);
        });
        o_flat += 1;
    });
}

fn fold<T: Copy>(xs: &[T], shape: &[i64], w: &Window, ty: &TensorType, init: T, comb: impl Fn(T, T) -> T) -> Result<Vec<T>> {
    let mut res = try_vec("reduce_window", ty, ty.num_elements(), init)?;
    each_window(shape, w, &ty.shape, |o, x| res[o] = comb(res[o], xs[x]));
    Ok(res)
}

fn reduce_real<T: Real>(op: WindowReducer, xs: &[T], shape: &[i64], w: &Window, out: &TensorType) -> Result<Vec<T>> {
    match op {
        WindowReducer::Sum => fold(xs, shape, w, out, T::ZERO, |a, b| a + b),
        WindowReducer::Max => fold(xs, shape, w, out, -T::INFINITY, max_real),
        WindowReducer::Min => fold(xs, shape, w, out, T::INFINITY, min_real),
        WindowReducer::Prod => fold(xs, shape, w, out, T::ONE, |a, b| a * b),
    }
}

/// `quabla.reduce_window_*`.
pub(super) fn reduce_window(op: WindowReducer, x: &Buffer, w: &Window, ty: &TensorType) -> Result<Buffer> {
    let (shape, out) = (x.shape(), ty);
    let v = match vals(op.name(), x)? {
        Vals::F32(v) => Vals::F32(reduce_real(op, &v, shape, w, out)?),
        Vals::F64(v) => Vals::F64(reduce_real(op, &v, shape, w, out)?),
        Vals::Int(v) => {
            let (lo, hi) = if x.dtype() == DType::I32 { (i32::MIN as i64, i32::MAX as i64) } else { (i64::MIN, i64::MAX) };
            Vals::Int(match op {
                WindowReducer::Sum => fold(&v, shape, w, out, 0, i64::wrapping_add),
                WindowReducer::Max => fold(&v, shape, w, out, lo, i64::max),
                WindowReducer::Min => fold(&v, shape, w, out, hi, i64::min),
                WindowReducer::Prod => fold(&v, shape, w, out, 1, i64::wrapping_mul),
            }?)
        }
        Vals::I1(_) => return Err(InterpError::Unsupported { op: op.name(), dtype: DType::I1 }),
    };
    to_buffer(op.name(), ty, v)
}

/// The selected operand element of each window (`None`: the window holds no element).
fn selected<T: Real>(op: &'static str, ty: &TensorType, xs: &[T], shape: &[i64], w: &Window, out: &[i64], select: CmpDir) -> Result<Vec<Option<usize>>> {
    let n = quabla_dialect::size::checked_product(out).map_err(|e| InterpError::Buffer { op, source: BufferError::TooLarge { ty: ty.clone(), message: e.to_string() } })?;
    let mut sel: Vec<Option<usize>> = try_vec(op, ty, n, None)?;
    each_window(shape, w, out, |o, x| {
        let keep = match sel[o] {
            None => false,
            Some(c) => {
                if select == CmpDir::Ge {
                    xs[c] >= xs[x]
                } else {
                    xs[c] <= xs[x]
                }
            }
        };
        if !keep {
            sel[o] = Some(x);
        }
    });
    Ok(sel)
}

fn scatter<T: Real>(ty: &TensorType, src: &[T], xs: &[T], shape: &[i64], w: &Window, out: &[i64], select: CmpDir) -> Result<Vec<T>> {
    const OP: &str = "select_and_scatter_add";
    let mut res = try_vec(OP, ty, xs.len(), T::ZERO)?;
    for (o, s) in selected(OP, ty, xs, shape, w, out, select)?.into_iter().enumerate() {
        if let Some(i) = s {
            res[i] = res[i] + src[o];
        }
    }
    Ok(res)
}

fn gather<T: Real>(ty: &TensorType, t: &[T], xs: &[T], shape: &[i64], w: &Window, out: &[i64], select: CmpDir) -> Result<Vec<T>> {
    const OP: &str = "select_and_gather_add";
    let sel = selected(OP, ty, xs, shape, w, out, select)?;
    try_collect(OP, ty, sel.len(), sel.into_iter().map(|s| s.map_or(T::ZERO, |i| t[i])))
}

/// Evaluates one op of this family (exhaustive over the family).
pub(super) fn eval(operands: &[&Buffer], ty: &TensorType, op: &ReduceWindowOp) -> Result<Vec<Buffer>> {
    let b = match op {
        ReduceWindowOp::ReduceWindow { op, window } => reduce_window(*op, operands[0], window, ty)?,
        ReduceWindowOp::SelectAndScatterAdd { select, window } => {
            let x = operands[1];
            let out = operands[0].shape().to_vec();
            let v = match (vals("select_and_scatter_add", operands[0])?, vals("select_and_scatter_add", x)?) {
                (Vals::F32(s), Vals::F32(v)) => Vals::F32(scatter(ty, &s, &v, x.shape(), window, &out, *select)?),
                (Vals::F64(s), Vals::F64(v)) => Vals::F64(scatter(ty, &s, &v, x.shape(), window, &out, *select)?),
                _ => return Err(InterpError::Unsupported { op: "select_and_scatter_add", dtype: x.dtype() }),
            };
            to_buffer("select_and_scatter_add", ty, v)?
        }
        ReduceWindowOp::SelectAndGatherAdd { select, window } => {
            let x = operands[1];
            let v = match (vals("select_and_gather_add", operands[0])?, vals("select_and_gather_add", x)?) {
                (Vals::F32(t), Vals::F32(v)) => Vals::F32(gather(ty, &t, &v, x.shape(), window, &ty.shape, *select)?),
                (Vals::F64(t), Vals::F64(v)) => Vals::F64(gather(ty, &t, &v, x.shape(), window, &ty.shape, *select)?),
                _ => return Err(InterpError::Unsupported { op: "select_and_gather_add", dtype: x.dtype() }),
            };
            to_buffer("select_and_gather_add", ty, v)?
        }
    };
    Ok(vec![b])
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use quabla_dialect::{CmpDir, OpKind, ReduceWindowOp, Window, WindowReducer};

    #[test]
    fn pools_and_their_gradient() {
        let x = f64s(&[1, 5], &[1.0, 5.0, 2.0, 4.0, 3.0]);
        let w = Window { padding: vec![0, 0, 1, 0], ..Window::simple(vec![1, 2], vec![1, 2]) };
        // Windows over [pad, 1], [5, 2], [4, 3].
        let y = run1(OpKind::ReduceWindow(ReduceWindowOp::ReduceWindow { op: WindowReducer::Max, window: Box::new(w.clone()) }), &[&x]);
        assert_eq!(y.to_f64_vec(), vec![1.0, 5.0, 4.0]);
        let s = run1(OpKind::ReduceWindow(ReduceWindowOp::ReduceWindow { op: WindowReducer::Sum, window: Box::new(w.clone()) }), &[&x]);
        assert_eq!(s.to_f64_vec(), vec![1.0, 7.0, 7.0]);
        let ct = f64s(&[1, 3], &[10.0, 20.0, 30.0]);
        let g = run1(OpKind::ReduceWindow(ReduceWindowOp::SelectAndScatterAdd { select: CmpDir::Ge, window: Box::new(w.clone()) }), &[&ct, &x]);
        assert_eq!(g.to_f64_vec(), vec![10.0, 20.0, 0.0, 30.0, 0.0]);
        let t = f64s(&[1, 5], &[0.1, 0.2, 0.3, 0.4, 0.5]);
        let h = run1(OpKind::ReduceWindow(ReduceWindowOp::SelectAndGatherAdd { select: CmpDir::Le, window: Box::new(w) }), &[&t, &x]);
        assert_eq!(h.to_f64_vec(), vec![0.1, 0.3, 0.5]);
        // Ties: the first element wins.
        let x = f64s(&[2], &[3.0, 3.0]);
        let g = run1(OpKind::ReduceWindow(ReduceWindowOp::SelectAndScatterAdd { select: CmpDir::Ge, window: Box::new(Window::simple(vec![2], vec![1])) }), &[&f64s(&[1], &[1.0]), &x]);
        assert_eq!(g.to_f64_vec(), vec![1.0, 0.0]);
    }
}
