//! Export of `convolution`: `stablehlo.convolution` with the same attributes; the dimension
//! numbers are written in the `#stablehlo.conv<raw ...>` form (every field by name) and the
//! padding as a `tensor<Nx2xi64>`.
use quabla_dialect::{ConvAttrs, ConvDims, ConvolutionOp, Func, Op};

use super::{array, int_attr, list, Emitter, Tv};
use crate::LowerError;

/// `#stablehlo.conv<raw ...>`.
pub fn conv_dimension_numbers(d: &ConvDims) -> String {
    format!(
        "#stablehlo.conv<raw input_batch_dimension = {}, input_feature_dimension = {}, input_spatial_dimensions = [{}], kernel_input_feature_dimension = {}, kernel_output_feature_dimension = {}, kernel_spatial_dimensions = [{}], output_batch_dimension = {}, output_feature_dimension = {}, output_spatial_dimensions = [{}]>",
        d.input_batch_dimension,
        d.input_feature_dimension,
        list(&d.input_spatial_dimensions),
        d.kernel_input_feature_dimension,
        d.kernel_output_feature_dimension,
        list(&d.kernel_spatial_dimensions),
        d.output_batch_dimension,
        d.output_feature_dimension,
        list(&d.output_spatial_dimensions)
    )
}

/// `dense<[[lo, hi], ...]> : tensor<Nx2xi64>` from flattened pairs.
pub fn padding_attr(p: &[i64]) -> String {
    let pairs: Vec<String> = p.chunks(2).map(|c| format!("[{}]", list(c))).collect();
    format!("dense<[{}]> : tensor<{}x2xi64>", pairs.join(", "), p.len() / 2)
}

/// `quabla.convolution`.
pub fn lower_convolution(e: &mut Emitter, f: &Func, o: &Op, a: &ConvAttrs) -> Result<Tv, LowerError> {
    let (l, r) = (e.get(f, o.operands[0]), e.get(f, o.operands[1]));
    let attrs = [
        ("batch_group_count", int_attr(a.batch_group_count)),
        ("dimension_numbers", conv_dimension_numbers(a.dims)),
        ("feature_group_count", int_attr(a.feature_group_count)),
        ("lhs_dilation", array(a.lhs_dilation)),
        ("padding", padding_attr(a.padding)),
        ("rhs_dilation", array(a.rhs_dilation)),
        ("window_strides", array(a.window_strides)),
    ];
    Ok(e.op("stablehlo.convolution", &[&l, &r], &attrs, f.ty(o.results[0])))
}

/// Exports one op of this family (exhaustive over the family).
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &ConvolutionOp) -> Result<Tv, LowerError> {
    match op {
        ConvolutionOp::Convolution { .. } => lower_convolution(e, f, o, &ConvAttrs::of(op)),
    }
}
