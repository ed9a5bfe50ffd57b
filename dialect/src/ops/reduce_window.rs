//! Windowed reductions (StableHLO `reduce_window` with the add/max/min combiners) and the two
//! window ops their derivatives need: `select_and_scatter_add` (StableHLO's
//! `select_and_scatter` with an add scatter: each window's source value is added at the
//! window's selected element; the max-pool gradient) and `select_and_gather_add` (its
//! transpose: each window yields the tangent at its selected element; the max-pool JVP).
//!
//! A window over an operand of rank r: `window_dimensions`, `window_strides`,
//! `base_dilations` (the operand's elements spread apart, holes hold the init value),
//! `window_dilations` (r entries each) and `padding`, flattened `[lo_0, hi_0, ...]`
//! (2r entries, possibly negative). The selected element of a window is the first (in
//! row-major window order) operand element that is `>=` (select `ge`, max) or `<=` (`le`,
//! min) every other one; padding and dilation holes are never selected.
use crate::error::{shape_err, Expected, Result, Violation};
use crate::ops::convolution::window_out;
use crate::ops::table::{op_family, print_i64_array, AttrSource, AttrType};
use crate::ops::CmpDir;
use crate::types::{DType, TensorType};

op_family! {
    /// Windowed reductions and the select-and-scatter/gather pair.
    pub enum ReduceWindowOp : ReduceWindow {
        ReduceWindow = _, operands 1, regions 0, irdl { op: WindowReducer [name], window: Box<Window> [attr] },
        SelectAndScatterAdd = "select_and_scatter_add", operands 2, regions 0, irdl { select: CmpDir [attr], window: Box<Window> [attr] },
        SelectAndGatherAdd = "select_and_gather_add", operands 2, regions 0, irdl { select: CmpDir [attr], window: Box<Window> [attr] },
    }
}

impl ReduceWindowOp {
    /// The shape/dtype rule.
    pub fn infer(&self, xs: &[&TensorType]) -> Result<TensorType> {
        match self {
            ReduceWindowOp::ReduceWindow { op, window } => infer_reduce_window(op.name(), xs[0], window, false),
            ReduceWindowOp::SelectAndScatterAdd { select, window } => {
                const OP: &str = "select_and_scatter_add";
                let out = infer_select(OP, *select, xs[1], window)?;
                if xs[0].shape != out.shape || xs[0].dtype != xs[1].dtype {
                    return Violation::new(OP, "select_and_scatter_add_c2", format!("source {} must have the window result type {out}", xs[0])).types(0, Expected::Type(out.clone()), xs[0]).shape_err();
                }
                Ok(xs[1].clone())
            }
            ReduceWindowOp::SelectAndGatherAdd { select, window } => {
                const OP: &str = "select_and_gather_add";
                let out = infer_select(OP, *select, xs[1], window)?;
                if xs[0] != xs[1] {
                    return Violation::new(OP, "select_and_gather_add_c2", format!("tangent {} must have the operand's type {}", xs[0], xs[1])).types(0, Expected::Type(xs[1].clone()), xs[0]).shape_err();
                }
                Ok(out)
            }
        }
    }
}

/// The combiner of a `reduce_window_*` op.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WindowReducer {
    Sum,
    Max,
    Min,
    /// The product (its derivative rules cover cumulative windows, [`Window::scan_axis`]).
    Prod,
}

impl WindowReducer {
    pub const ALL: [WindowReducer; 4] = [WindowReducer::Sum, WindowReducer::Max, WindowReducer::Min, WindowReducer::Prod];
    pub fn name(self) -> &'static str {
        match self {
            WindowReducer::Sum => "reduce_window_sum",
            WindowReducer::Max => "reduce_window_max",
            WindowReducer::Min => "reduce_window_min",
            WindowReducer::Prod => "reduce_window_prod",
        }
    }
    pub fn from_name(s: &str) -> Option<Self> {
        WindowReducer::ALL.into_iter().find(|r| r.name() == s)
    }
}

/// A window over an operand (StableHLO's `reduce_window` attributes).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Window {
    pub window_dimensions: Vec<i64>,
    pub window_strides: Vec<i64>,
    pub base_dilations: Vec<i64>,
    pub window_dilations: Vec<i64>,
    /// `[lo_0, hi_0, lo_1, hi_1, ...]`.
    pub padding: Vec<i64>,
}

const KEYS: [&str; 5] = ["window_dimensions", "window_strides", "base_dilations", "window_dilations", "padding"];

impl Window {
    /// A window of `dims` with the given strides, no dilation and no padding.
    pub fn simple(dims: Vec<i64>, strides: Vec<i64>) -> Window {
        let r = dims.len();
        Window { window_dimensions: dims, window_strides: strides, base_dilations: vec![1; r], window_dilations: vec![1; r], padding: vec![0; 2 * r] }
    }

    /// This window with a leading dim of extent 1 (stride 1, no dilation or padding): the
    /// window of the same op under a leading batch dim.
    pub fn batched(&self) -> Window {
        let one = |v: &[i64]| std::iter::once(1).chain(v.iter().copied()).collect::<Vec<_>>();
        Window { window_dimensions: one(&self.window_dimensions), window_strides: one(&self.window_strides), base_dilations: one(&self.base_dilations), window_dilations: one(&self.window_dilations), padding: [0, 0].into_iter().chain(self.padding.iter().copied()).collect() }
    }

    /// The axis of a cumulative window over `shape` and whether it runs from the end: a window
    /// of the whole axis (at least 2 long) padded `(n - 1, 0)` (or `(0, n - 1)`: reverse),
    /// every other axis window 1 and unpadded, no strides and no dilations. Each output
    /// element is then the reduction of the operand's elements up to it (from it to the end):
    /// a scan (cumsum, cumprod, cummax, cummin).
    pub fn scan_axis(&self, shape: &[i64]) -> Option<(usize, bool)> {
        let r = shape.len();
        let plain = |v: &[i64]| v.len() == r && v.iter().all(|&x| x == 1);
        if !plain(&self.window_strides) || !plain(&self.base_dilations) || !plain(&self.window_dilations) || self.window_dimensions.len() != r || self.padding.len() != 2 * r {
            return None;
        }
        let mut found = None;
        for i in 0..r {
            let (k, lo, hi, n) = (self.window_dimensions[i], self.padding[2 * i], self.padding[2 * i + 1], shape[i]);
            if k == 1 && lo == 0 && hi == 0 {
                continue;
            }
            if found.is_some() || k != n || n < 2 {
                return None;
            }
            found = Some(match (lo, hi) {
                (l, 0) if l == n - 1 => (i, false),
                (0, h) if h == n - 1 => (i, true),
                _ => return None,
            });
        }
        found
    }

    /// Whether every output element is the one operand element under it: windows, strides
    /// and dilations all 1, no padding (a cumulative window along an axis of length 1).
    pub fn is_identity(&self) -> bool {
        let ones = |v: &[i64]| v.iter().all(|&x| x == 1);
        ones(&self.window_dimensions) && ones(&self.window_strides) && ones(&self.base_dilations) && ones(&self.window_dilations) && self.padding.iter().all(|&p| p == 0)
    }

    /// The result shape over an operand of `shape` (entries <= 0 where a window does not fit).
    pub fn out_shape(&self, shape: &[i64]) -> Vec<i64> {
        (0..shape.len()).map(|i| window_out(shape[i], self.base_dilations[i], self.padding[2 * i], self.padding[2 * i + 1], self.window_dimensions[i], self.window_dilations[i], self.window_strides[i])).collect()
    }

    fn field(&self, k: &str) -> &[i64] {
        match k {
            "window_dimensions" => &self.window_dimensions,
            "window_strides" => &self.window_strides,
            "base_dilations" => &self.base_dilations,
            "window_dilations" => &self.window_dilations,
            _ => &self.padding,
        }
    }
}

impl AttrType for Window {
    fn print(&self, _key: &'static str, out: &mut Vec<(&'static str, String)>) {
        for k in KEYS {
            out.push((k, print_i64_array(self.field(k))));
        }
    }
    fn read(src: &dyn AttrSource, op: &str, _key: &str) -> Result<Self> {
        Ok(Window {
            window_dimensions: src.ints(op, "window_dimensions")?,
            window_strides: src.ints(op, "window_strides")?,
            base_dilations: src.ints(op, "base_dilations")?,
            window_dilations: src.ints(op, "window_dilations")?,
            padding: src.ints(op, "padding")?,
        })
    }
    fn irdl(_key: &'static str, out: &mut Vec<(&'static str, &'static str)>) {
        for k in KEYS {
            out.push((k, "#builtin.dense_array"));
        }
    }
    fn py(_key: &'static str, out: &mut Vec<(&'static str, &'static str)>) {
        for k in KEYS {
            out.push((k, "Sequence[int]"));
        }
    }
}

impl AttrType for Box<Window> {
    fn print(&self, key: &'static str, out: &mut Vec<(&'static str, String)>) {
        (**self).print(key, out)
    }
    fn read(src: &dyn AttrSource, op: &str, key: &str) -> Result<Self> {
        Window::read(src, op, key).map(Box::new)
    }
    fn irdl(key: &'static str, out: &mut Vec<(&'static str, &'static str)>) {
        Window::irdl(key, out)
    }
    fn py(key: &'static str, out: &mut Vec<(&'static str, &'static str)>) {
        Window::py(key, out)
    }
}

/// `reduce_window_*`: c1: a numeric operand (`float` only for the select ops); c2: dims,
/// strides and dilations have rank positive entries, padding 2 * rank entries; c3: every
/// window fits (each result extent positive).
pub fn infer_reduce_window(op: &'static str, x: &TensorType, w: &Window, float_only: bool) -> Result<TensorType> {
    let c1: &'static str = match op {
        "select_and_scatter_add" => "select_and_scatter_add_c1",
        "select_and_gather_add" => "select_and_gather_add_c1",
        _ => "reduce_window_c1",
    };
    let (c2, c3): (&'static str, &'static str) = match op {
        "select_and_scatter_add" => ("select_and_scatter_add_c3", "select_and_scatter_add_c4"),
        "select_and_gather_add" => ("select_and_gather_add_c3", "select_and_gather_add_c4"),
        _ => ("reduce_window_c2", "reduce_window_c3"),
    };
    if !x.dtype.is_numeric() || (float_only && !x.dtype.is_float()) {
        let allowed: &'static [DType] = if float_only { &[DType::F32, DType::F64] } else { &[DType::F32, DType::F64, DType::I32, DType::I64] };
        return Violation::new(op, c1, format!("operand {x} must have a {} element type", if float_only { "float" } else { "numeric" })).types(0, Expected::DTypes(allowed), x).dtype_err();
    }
    let r = x.rank();
    let ok = |v: &[i64]| v.len() == r && v.iter().all(|&d| d > 0);
    if !ok(&w.window_dimensions) || !ok(&w.window_strides) || !ok(&w.base_dilations) || !ok(&w.window_dilations) || w.padding.len() != 2 * r {
        return shape_err(op, c2, format!("window_dimensions {:?}, window_strides {:?}, base_dilations {:?}, window_dilations {:?} need {r} positive entries and padding {:?} needs {} for operand {x}", w.window_dimensions, w.window_strides, w.base_dilations, w.window_dilations, w.padding, 2 * r));
    }
    let shape = w.out_shape(&x.shape);
    if let Some(i) = shape.iter().position(|&d| d <= 0) {
        return Violation::new(op, c3, format!("dim {i}: the window {:?} (dilations {:?}) does not fit operand {x} padded by {:?}", w.window_dimensions, w.window_dilations, w.padding)).operand(0).actual(x).shape_err();
    }
    Ok(TensorType::new(x.dtype, shape))
}

/// The select ops: c1: float operand; c5: select is `ge` or `le`; then reduce_window's rule.
fn infer_select(op: &'static str, select: CmpDir, x: &TensorType, w: &Window) -> Result<TensorType> {
    if !matches!(select, CmpDir::Ge | CmpDir::Le) {
        let c: &'static str = if op == "select_and_scatter_add" { "select_and_scatter_add_c5" } else { "select_and_gather_add_c5" };
        return shape_err(op, c, format!("select must be \"ge\" (max) or \"le\" (min), got \"{}\"", select.name()));
    }
    infer_reduce_window(op, x, w, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        let x = TensorType::new(DType::F64, [2, 7]);
        let w = Window { window_dimensions: vec![1, 3], window_strides: vec![1, 2], base_dilations: vec![1, 1], window_dilations: vec![1, 1], padding: vec![0, 0, 1, 0] };
        let y = ReduceWindowOp::ReduceWindow { op: WindowReducer::Max, window: Box::new(w.clone()) }.infer(&[&x]).unwrap();
        assert_eq!(y.shape, vec![2, 3]);
        let g = ReduceWindowOp::SelectAndScatterAdd { select: CmpDir::Ge, window: Box::new(w.clone()) }.infer(&[&y, &x]).unwrap();
        assert_eq!(g, x);
        let e = ReduceWindowOp::SelectAndScatterAdd { select: CmpDir::Eq, window: Box::new(w.clone()) }.infer(&[&y, &x]).unwrap_err();
        assert!(e.to_string().contains("select_and_scatter_add_c5"), "{e}");
        let e = ReduceWindowOp::SelectAndGatherAdd { select: CmpDir::Ge, window: Box::new(w.clone()) }.infer(&[&y, &x]).unwrap_err();
        assert!(e.to_string().contains("select_and_gather_add_c2"), "{e}");
        let big = Window::simple(vec![1, 9], vec![1, 1]);
        let e = ReduceWindowOp::ReduceWindow { op: WindowReducer::Sum, window: Box::new(big) }.infer(&[&x]).unwrap_err();
        assert!(e.to_string().contains("reduce_window_c3"), "{e}");
    }
}
