//! `convolution` with StableHLO's semantics (`lax.conv_general_dilated`): any number of
//! spatial dims, window strides, explicit (possibly negative) padding, lhs (input) and rhs
//! (kernel) dilation, `feature_group_count`, `batch_group_count` and dimension numbers that
//! name where the batch, feature and spatial dims of the input, kernel and output are.
//! `padding` is flattened: `[lo_0, hi_0, lo_1, hi_1, ...]`, one pair per spatial dim.
use crate::error::{shape_err, Expected, Result, Violation};
use crate::ops::table::{op_family, print_i64_array, AttrSource, AttrType};
use crate::types::{DType, TensorType};

op_family! {
    /// `convolution` (StableHLO's attributes and dimension numbers).
    pub enum ConvolutionOp : Convolution {
        Convolution = "convolution", operands 2, regions 0, irdl { window: Box<ConvWindow> [attr], dims: Box<ConvDims> [attr], feature_group_count: i64 [attr], batch_group_count: i64 [attr] },
    }
}

impl ConvolutionOp {
    /// The shape/dtype rule.
    pub fn infer(&self, xs: &[&TensorType]) -> Result<TensorType> {
        match self {
            ConvolutionOp::Convolution { .. } => infer_convolution(xs[0], xs[1], &ConvAttrs::of(self)),
        }
    }
}

/// The window attributes of a convolution (one boxed field, so ops stay small).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct ConvWindow {
    pub window_strides: Vec<i64>,
    /// `[lo_0, hi_0, lo_1, hi_1, ...]`.
    pub padding: Vec<i64>,
    pub lhs_dilation: Vec<i64>,
    pub rhs_dilation: Vec<i64>,
}

impl AttrType for Box<ConvWindow> {
    fn print(&self, _key: &'static str, out: &mut Vec<(&'static str, String)>) {
        out.push(("window_strides", print_i64_array(&self.window_strides)));
        out.push(("padding", print_i64_array(&self.padding)));
        out.push(("lhs_dilation", print_i64_array(&self.lhs_dilation)));
        out.push(("rhs_dilation", print_i64_array(&self.rhs_dilation)));
    }
    fn read(src: &dyn AttrSource, op: &str, _key: &str) -> Result<Self> {
        Ok(Box::new(ConvWindow { window_strides: src.ints(op, "window_strides")?, padding: src.ints(op, "padding")?, lhs_dilation: src.ints(op, "lhs_dilation")?, rhs_dilation: src.ints(op, "rhs_dilation")? }))
    }
    fn irdl(_key: &'static str, out: &mut Vec<(&'static str, &'static str)>) {
        for k in ["window_strides", "padding", "lhs_dilation", "rhs_dilation"] {
            out.push((k, "#builtin.dense_array"));
        }
    }
    fn py(_key: &'static str, out: &mut Vec<(&'static str, &'static str)>) {
        for k in ["window_strides", "padding", "lhs_dilation", "rhs_dilation"] {
            out.push((k, "Sequence[int]"));
        }
    }
}

/// The dimension numbers of a convolution (StableHLO's `#stablehlo.conv` fields).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct ConvDims {
    pub input_batch_dimension: i64,
    pub input_feature_dimension: i64,
    pub input_spatial_dimensions: Vec<i64>,
    pub kernel_input_feature_dimension: i64,
    pub kernel_output_feature_dimension: i64,
    pub kernel_spatial_dimensions: Vec<i64>,
    pub output_batch_dimension: i64,
    pub output_feature_dimension: i64,
    pub output_spatial_dimensions: Vec<i64>,
}

const SCALAR_KEYS: [&str; 6] = ["input_batch_dimension", "input_feature_dimension", "kernel_input_feature_dimension", "kernel_output_feature_dimension", "output_batch_dimension", "output_feature_dimension"];
const LIST_KEYS: [&str; 3] = ["input_spatial_dimensions", "kernel_spatial_dimensions", "output_spatial_dimensions"];

impl ConvDims {
    /// NCH.../OIH.../NCH... (JAX's default layout) for `n` spatial dims.
    pub fn nchw(n: usize) -> ConvDims {
        let sp: Vec<i64> = (2..2 + n as i64).collect();
        ConvDims { input_batch_dimension: 0, input_feature_dimension: 1, input_spatial_dimensions: sp.clone(), kernel_input_feature_dimension: 1, kernel_output_feature_dimension: 0, kernel_spatial_dimensions: sp.clone(), output_batch_dimension: 0, output_feature_dimension: 1, output_spatial_dimensions: sp }
    }

    /// (batch, feature, spatial...) of the input, in JAX's `lhs_spec` order.
    pub fn lhs_spec(&self) -> Vec<i64> {
        [self.input_batch_dimension, self.input_feature_dimension].into_iter().chain(self.input_spatial_dimensions.iter().copied()).collect()
    }

    /// (output feature, input feature, spatial...) of the kernel, in JAX's `rhs_spec` order.
    pub fn rhs_spec(&self) -> Vec<i64> {
        [self.kernel_output_feature_dimension, self.kernel_input_feature_dimension].into_iter().chain(self.kernel_spatial_dimensions.iter().copied()).collect()
    }

    /// (batch, feature, spatial...) of the output, in JAX's `out_spec` order.
    pub fn out_spec(&self) -> Vec<i64> {
        [self.output_batch_dimension, self.output_feature_dimension].into_iter().chain(self.output_spatial_dimensions.iter().copied()).collect()
    }

    /// Dimension numbers from JAX-order specs (lhs: batch, feature, spatial; rhs: out
    /// feature, in feature, spatial; out: batch, feature, spatial).
    pub fn from_specs(lhs: &[i64], rhs: &[i64], out: &[i64]) -> ConvDims {
        ConvDims {
            input_batch_dimension: lhs[0],
            input_feature_dimension: lhs[1],
            input_spatial_dimensions: lhs[2..].to_vec(),
            kernel_output_feature_dimension: rhs[0],
            kernel_input_feature_dimension: rhs[1],
            kernel_spatial_dimensions: rhs[2..].to_vec(),
            output_batch_dimension: out[0],
            output_feature_dimension: out[1],
            output_spatial_dimensions: out[2..].to_vec(),
        }
    }

    fn scalar(&self, k: &str) -> i64 {
        match k {
            "input_batch_dimension" => self.input_batch_dimension,
            "input_feature_dimension" => self.input_feature_dimension,
            "kernel_input_feature_dimension" => self.kernel_input_feature_dimension,
            "kernel_output_feature_dimension" => self.kernel_output_feature_dimension,
            "output_batch_dimension" => self.output_batch_dimension,
            _ => self.output_feature_dimension,
        }
    }
}

impl AttrType for ConvDims {
    fn print(&self, _key: &'static str, out: &mut Vec<(&'static str, String)>) {
        for k in SCALAR_KEYS {
            out.push((k, format!("{} : i64", self.scalar(k))));
        }
        out.push(("input_spatial_dimensions", print_i64_array(&self.input_spatial_dimensions)));
        out.push(("kernel_spatial_dimensions", print_i64_array(&self.kernel_spatial_dimensions)));
        out.push(("output_spatial_dimensions", print_i64_array(&self.output_spatial_dimensions)));
    }
    fn read(src: &dyn AttrSource, op: &str, _key: &str) -> Result<Self> {
        Ok(ConvDims {
            input_batch_dimension: src.int(op, "input_batch_dimension")?,
            input_feature_dimension: src.int(op, "input_feature_dimension")?,
            input_spatial_dimensions: src.ints(op, "input_spatial_dimensions")?,
            kernel_input_feature_dimension: src.int(op, "kernel_input_feature_dimension")?,
            kernel_output_feature_dimension: src.int(op, "kernel_output_feature_dimension")?,
            kernel_spatial_dimensions: src.ints(op, "kernel_spatial_dimensions")?,
            output_batch_dimension: src.int(op, "output_batch_dimension")?,
            output_feature_dimension: src.int(op, "output_feature_dimension")?,
            output_spatial_dimensions: src.ints(op, "output_spatial_dimensions")?,
        })
    }
    fn irdl(_key: &'static str, out: &mut Vec<(&'static str, &'static str)>) {
        for k in SCALAR_KEYS {
            out.push((k, "#builtin.integer"));
        }
        for k in LIST_KEYS {
            out.push((k, "#builtin.dense_array"));
        }
    }
    fn py(_key: &'static str, out: &mut Vec<(&'static str, &'static str)>) {
        for k in SCALAR_KEYS {
            out.push((k, "int"));
        }
        for k in LIST_KEYS {
            out.push((k, "Sequence[int]"));
        }
    }
}

impl AttrType for Box<ConvDims> {
    fn print(&self, key: &'static str, out: &mut Vec<(&'static str, String)>) {
        (**self).print(key, out)
    }
    fn read(src: &dyn AttrSource, op: &str, key: &str) -> Result<Self> {
        ConvDims::read(src, op, key).map(Box::new)
    }
    fn irdl(key: &'static str, out: &mut Vec<(&'static str, &'static str)>) {
        ConvDims::irdl(key, out)
    }
    fn py(key: &'static str, out: &mut Vec<(&'static str, &'static str)>) {
        ConvDims::py(key, out)
    }
}

/// The attributes of one convolution, borrowed (what the shape rule and the layers read).
#[derive(Clone, Copy, Debug)]
pub struct ConvAttrs<'a> {
    pub window_strides: &'a [i64],
    pub padding: &'a [i64],
    pub lhs_dilation: &'a [i64],
    pub rhs_dilation: &'a [i64],
    pub dims: &'a ConvDims,
    pub feature_group_count: i64,
    pub batch_group_count: i64,
}

impl ConvAttrs<'_> {
    /// The attributes of `op` (always a convolution: the family has one op).
    pub fn of(op: &ConvolutionOp) -> ConvAttrs<'_> {
        match op {
            ConvolutionOp::Convolution { window, dims, feature_group_count, batch_group_count } => ConvAttrs {
                window_strides: &window.window_strides,
                padding: &window.padding,
                lhs_dilation: &window.lhs_dilation,
                rhs_dilation: &window.rhs_dilation,
                dims,
                feature_group_count: *feature_group_count,
                batch_group_count: *batch_group_count,
            },
        }
    }

    /// The op with these attributes.
    pub fn to_op(&self) -> ConvolutionOp {
        ConvolutionOp::Convolution {
            window: Box::new(ConvWindow { window_strides: self.window_strides.to_vec(), padding: self.padding.to_vec(), lhs_dilation: self.lhs_dilation.to_vec(), rhs_dilation: self.rhs_dilation.to_vec() }),
            dims: Box::new(self.dims.clone()),
            feature_group_count: self.feature_group_count,
            batch_group_count: self.batch_group_count,
        }
    }
}

/// `(n - 1) * d + 1` (0 for an empty dim): the extent of `n` elements `d` apart.
pub fn dilate(n: i64, d: i64) -> i64 {
    if n == 0 {
        0
    } else {
        (n - 1) * d + 1
    }
}

/// Output extent of one windowed dim: input `n` dilated by `ld`, padded by `lo`/`hi`, a window
/// of `k` dilated by `rd`, stride `s` (may be <= 0 when the window does not fit).
pub fn window_out(n: i64, ld: i64, lo: i64, hi: i64, k: i64, rd: i64, s: i64) -> i64 {
    let p = dilate(n, ld) + lo + hi;
    let w = dilate(k, rd);
    if p < w {
        0
    } else {
        (p - w) / s + 1
    }
}

/// c1: same numeric element type; c2: equal ranks, rank = spatial dims + 2 for all three
/// dimension-number lists; c3: each list of dims is a permutation of 0..rank; c4: strides,
/// dilations have one positive entry per spatial dim and padding two entries per spatial dim;
/// c5: group counts positive, at most one of them > 1; c6: input features = kernel input
/// features * feature_group_count, and divisible by it; c7: kernel output features divisible
/// by both group counts; c8: input batch divisible by batch_group_count; c9: each output
/// spatial extent positive.
pub fn infer_convolution(l: &TensorType, r: &TensorType, a: &ConvAttrs) -> Result<TensorType> {
    const OP: &str = "convolution";
    if l.dtype != r.dtype || !l.dtype.is_numeric() {
        let v = Violation::new(OP, "convolution_c1", format!("operand types {l} and {r} must share a numeric element type"));
        let v = if !l.dtype.is_numeric() { v.types(0, Expected::DTypes(&[DType::F32, DType::F64, DType::I32, DType::I64]), l) } else { v.types(1, Expected::Type(r.with_dtype(l.dtype)), r) };
        return v.dtype_err();
    }
    let d = a.dims;
    let n = d.input_spatial_dimensions.len();
    let rank = n + 2;
    if l.rank() != rank || r.rank() != rank || d.kernel_spatial_dimensions.len() != n || d.output_spatial_dimensions.len() != n {
        return Violation::new(OP, "convolution_c2", format!("input {l} and kernel {r} must have rank {rank} (spatial dims: input {:?}, kernel {:?}, output {:?})", d.input_spatial_dimensions, d.kernel_spatial_dimensions, d.output_spatial_dimensions)).operand(if l.rank() != rank { 0 } else { 1 }).shape_err();
    }
    for (what, spec) in [("input", d.lhs_spec()), ("kernel", d.rhs_spec()), ("output", d.out_spec())] {
        let mut seen = vec![false; rank];
        for &k in &spec {
            if k < 0 || k as usize >= rank || std::mem::replace(&mut seen[k as usize], true) {
                return shape_err(OP, "convolution_c3", format!("{what} dimension numbers {spec:?} must be a permutation of 0..{rank}"));
            }
        }
    }
    let ok = |v: &[i64]| v.len() == n && v.iter().all(|&x| x > 0);
    if !ok(a.window_strides) || !ok(a.lhs_dilation) || !ok(a.rhs_dilation) || a.padding.len() != 2 * n {
        return shape_err(OP, "convolution_c4", format!("window_strides {:?}, lhs_dilation {:?}, rhs_dilation {:?} need {n} positive entries and padding {:?} needs {} entries", a.window_strides, a.lhs_dilation, a.rhs_dilation, a.padding, 2 * n));
    }
    let (fg, bg) = (a.feature_group_count, a.batch_group_count);
    if fg < 1 || bg < 1 || (fg > 1 && bg > 1) {
        return shape_err(OP, "convolution_c5", format!("feature_group_count {fg} and batch_group_count {bg} must be positive and not both > 1"));
    }
    let c = l.shape[d.input_feature_dimension as usize];
    let ci = r.shape[d.kernel_input_feature_dimension as usize];
    let co = r.shape[d.kernel_output_feature_dimension as usize];
    let nb = l.shape[d.input_batch_dimension as usize];
    if c % fg != 0 || c / fg != ci {
        return Violation::new(OP, "convolution_c6", format!("input features {c} must equal kernel input features {ci} times feature_group_count {fg}")).operand(1).actual(r).shape_err();
    }
    if co % fg != 0 || co % bg != 0 {
        return Violation::new(OP, "convolution_c7", format!("kernel output features {co} must be divisible by feature_group_count {fg} and batch_group_count {bg}")).operand(1).actual(r).shape_err();
    }
    if nb % bg != 0 {
        return Violation::new(OP, "convolution_c8", format!("input batch {nb} must be divisible by batch_group_count {bg}")).operand(0).actual(l).shape_err();
    }
    let mut shape = vec![0i64; rank];
    shape[d.output_batch_dimension as usize] = nb / bg;
    shape[d.output_feature_dimension as usize] = co;
    for i in 0..n {
        let x = l.shape[d.input_spatial_dimensions[i] as usize];
        let k = r.shape[d.kernel_spatial_dimensions[i] as usize];
        let o = window_out(x, a.lhs_dilation[i], a.padding[2 * i], a.padding[2 * i + 1], k, a.rhs_dilation[i], a.window_strides[i]);
        if o <= 0 {
            return Violation::new(OP, "convolution_c9", format!("spatial dim {i}: input extent {x} (dilation {}, padding ({}, {})) is smaller than the kernel extent {k} (dilation {})", a.lhs_dilation[i], a.padding[2 * i], a.padding[2 * i + 1], a.rhs_dilation[i])).operand(0).actual(l).shape_err();
        }
        shape[d.output_spatial_dimensions[i] as usize] = o;
    }
    Ok(TensorType::new(l.dtype, shape))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conv(strides: &[i64], pad: &[i64], ld: &[i64], rd: &[i64], fg: i64, bg: i64) -> ConvolutionOp {
        let dims = ConvDims::nchw(strides.len());
        ConvAttrs { window_strides: strides, padding: pad, lhs_dilation: ld, rhs_dilation: rd, dims: &dims, feature_group_count: fg, batch_group_count: bg }.to_op()
    }

    #[test]
    fn shapes() {
        let x = TensorType::new(DType::F32, [2, 4, 9, 8]);
        let w = TensorType::new(DType::F32, [6, 2, 3, 2]);
        // (9 + 1 + 1 - 3) / 2 + 1 = 5; dilated kernel 3, (8 - 3) / 1 + 1 = 6.
        let y = conv(&[2, 1], &[1, 1, 0, 0], &[1, 1], &[1, 2], 2, 1).infer(&[&x, &w]).unwrap();
        assert_eq!(y.shape, vec![2, 6, 5, 6]);
        let e = conv(&[1, 1], &[0, 0, 0, 0], &[1, 1], &[1, 1], 1, 1).infer(&[&x, &w]).unwrap_err();
        assert!(e.to_string().contains("convolution_c6"), "{e}");
        let e = conv(&[1, 1], &[0, 0, 0, 0], &[1, 1], &[1, 1], 2, 2).infer(&[&x, &w]).unwrap_err();
        assert!(e.to_string().contains("convolution_c5"), "{e}");
        let e = conv(&[1, 1], &[-8, 0, 0, 0], &[1, 1], &[1, 1], 2, 1).infer(&[&x, &w]).unwrap_err();
        assert!(e.to_string().contains("convolution_c9"), "{e}");
        let e = conv(&[1], &[0, 0], &[1], &[1], 1, 1).infer(&[&x, &w]).unwrap_err();
        assert!(e.to_string().contains("convolution_c2"), "{e}");
    }
}
