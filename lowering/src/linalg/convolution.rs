//! Lowering of `convolution` by im2col and the tiled matmul path. With lhs dilation (and
//! stride 1 along the dilated dims) the op first splits by output phase ([`by_phase`]: one
//! stride-1 convolution of the undilated input per phase, with the kernel taps that meet
//! input elements); a depthwise convolution (one input and one output feature per group) is
//! one accumulating generic ([`depthwise`]), and so is a single-channel one (one group; 1-D
//! only when its output row fits L1). Otherwise, steps (G = feature_group_count *
//! batch_group_count, at most one of them > 1):
//! 1. the input is padded and dilated in its own layout (`pad_dilate`: a fill of the padded
//!    shape and one strided `tensor.insert_slice` of the part of the input that lands in it;
//!    negative padding crops first);
//! 2. one `linalg.generic` copies the patches (N' the output batch, O the output spatial
//!    extents, Cg the kernel's input features, K the kernel extents), reading the padded input
//!    through an affine map (`o * stride + k * rhs_dilation`, the group folded into the batch
//!    or feature index), in one of two formulations ([`Form`], chosen by the input's layout so
//!    that the copy's inner loop reads the input's innermost dim):
//!    * `PatchRows`: patches `[G, N', O..., Cg, K...]` (or `[G, N', O..., K..., Cg]` when the
//!      features are the input's innermost dim, NHWC) are the product's rows;
//!    * `PatchCols`: patches `[G, Cg, K..., N', O...]` are its columns (NCHW: the inner loop
//!      runs over output positions, unit-stride reads and writes);
//! 3. one generic arranges the kernel as `[G, <patch order>, Og]` or `[G, Og, Cg, K...]`;
//! 4. `[G, N'*O, Cg*K] x [G, Cg*K, Og]` or `[G, Og, Cg*K] x [G, Cg*K, N'*O]` through
//!    `dot::matmul_of` (the tiled path, batched over G); without groups and with at least
//!    128 output positions per image, `PatchCols` runs steps 1, 2 and 4 per image instead
//!    ([`per_image_loop`]: `[Og, Cg*K] x [Cg*K, O]` into `[N', Og, O...]`, the image padded,
//!    its patches copied and multiplied while they are in cache, written directly in the
//!    product's packed panel order when the panels divide the last output extent; an
//!    `scf.forall` over the images on several threads), so does `PatchRows` with the
//!    features innermost (NHWC) for a large patch matrix (`[O, K*Cg] x [K*Cg, Og]` per image,
//!    the kernel packed once), and `PatchRows` of a large patch matrix in `(Cg, K...)` order (kernel
//!    gradients) runs as a loop over the input features accumulating `[N'*O, K] x [K, Og]`
//!    ([`feature_loop_fits`]; on several threads one such loop per part of N' in an
//!    `scf.forall`, [`feature_parts`]);
//! 5. the product, expanded to `[G, N', O..., Og]` or `[G, Og, N', O...]`, is transposed into
//!    the output layout with the feature dim split as (G, Og) and collapsed (no copy when it
//!    is already in the output's order).
use quabla_dialect::size::saturating_product;
use quabla_dialect::{ConvAttrs, ConvolutionOp, DType, Func, Op, TensorType};

use super::{dot::end_forall, dot::matmul_into, dot::matmul_of, generic, identity, layout::reshape, layout::transpose, layout::transposed, list, map, zero_lit, Emitter, Iter, Operand};
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

/// A loop (or tensor) dim of the lowering: the group, the output batch, output spatial dim
/// `i`, the kernel's input feature, kernel spatial dim `i`, the output feature within a group.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Role {
    G,
    B,
    O(usize),
    C,
    K(usize),
    F,
}

/// Which operand of the product the patches are (module doc): `[G, N'*O, Cg*K] x [G, Cg*K, Og]`
/// (`PatchRows`, patch index order `c, k...` or, with `feature_last`, `k..., c`) or
/// `[G, Og, Cg*K] x [G, Cg*K, N'*O]` (`PatchCols`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Form {
    PatchRows { feature_last: bool },
    PatchCols,
}

/// The formulation whose patch copy reads the input along its innermost dim: `PatchCols`
/// when that dim is spatial and the output is at least as wide as the kernel along it (the
/// copy's inner loop runs over output positions: unit-stride reads and writes for stride 1,
/// e.g. NCHW layers and their input gradients), else `PatchRows` (the inner loop runs over
/// the kernel's extent, or over the input features when they are innermost, e.g. NHWC layers
/// and kernel gradients, whose "kernel" is the large output cotangent).
fn form(lt: &TensorType, a: &ConvAttrs, os: &[i64], ks: &[i64]) -> Form {
    let d = a.dims;
    let last = lt.rank() as i64 - 1;
    let n = d.input_spatial_dimensions.len();
    match d.input_spatial_dimensions.iter().position(|&s| s == last) {
        Some(i) if i == n - 1 && os[i] >= ks[i] => Form::PatchCols,
        _ => Form::PatchRows { feature_last: d.input_feature_dimension == last },
    }
}

/// `quabla.convolution`: by phase when the input is dilated ([`by_phase`]), else [`conv`].
pub fn lower_convolution(e: &mut Emitter, f: &Func, o: &Op, a: &ConvAttrs) -> Result<String, LowerError> {
    let (x, w) = (e.name(o.operands[0]), e.name(o.operands[1]));
    let (lt, rt, out) = (f.ty(o.operands[0]).clone(), f.ty(o.operands[1]).clone(), f.ty(o.results[0]).clone());
    if let Some(r) = by_phase(e, (&x, &lt), (&w, &rt), &out, a)? {
        return Ok(r);
    }
    let out_buf = e.out_buffer(o.results[0]);
    let dest = out_buf.clone().map(|name| (name, out.clone()));
    if let Some(r) = windowed(e, (&x, &lt), (&w, &rt), &out, a, dest.clone()) {
        return Ok(r);
    }
    if let Some(r) = windowed_kernel_gradient(e, (&x, &lt), (&w, &rt), &out, a, dest) {
        return Ok(r);
    }
    if let Some(r) = channels_last(e, (&x, &lt), (&w, &rt), &out, a, out_buf) {
        return r;
    }
    conv(e, (&x, &lt), (&w, &rt), &out, a)
}

/// A 2-D or 3-D convolution laid out NCHW (NCDHW: `lax.conv`'s default) in and out, without
/// lhs dilation or groups, with 32 or more input features and a large patch matrix (2^20
/// elements or more), is computed channels-last: the input transposed to NHWC (the
/// runtime's transposing copy), the NHWC convolution (its per-image patches `[H * W, K * C]`
/// read the features contiguously), the result transposed back. Measured (f32, 3 x 3 SAME):
/// 16 x 32 x 64 x 64 -> 64 21.5 -> 11.7-12.5 ms (JAX 17.5-19.4), 8 x 64 x 32 x 32 -> 128 9.2
/// -> 4.6 (JAX 8.5-8.9); with 16 features both ways (32 x 16 x 32^2) equal within the noise,
/// and a 7 x 7 stem on 3 features 96 -> 84-91 ms (JAX 116-120): left as they are.
fn channels_last(e: &mut Emitter, (x, lt): (&str, &TensorType), (w, rt): (&str, &TensorType), out: &TensorType, a: &ConvAttrs, dest: Option<String>) -> Option<Result<String, LowerError>> {
    let d = a.dims;
    let r = lt.rank();
    let spatial: Vec<i64> = (2..r as i64).collect();
    let nchw = |b: i64, f: i64, s: &[i64]| b == 0 && f == 1 && s == spatial.as_slice();
    if !(4..=5).contains(&r) || out.rank() != r || !nchw(d.input_batch_dimension, d.input_feature_dimension, &d.input_spatial_dimensions) || !nchw(d.output_batch_dimension, d.output_feature_dimension, &d.output_spatial_dimensions) {
        return None;
    }
    if !host_plain(e, a) {
        return None;
    }
    let c = lt.shape[1];
    let taps = saturating_product(d.kernel_spatial_dimensions.iter().map(|&k| rt.shape[k as usize]));
    let patches = saturating_product(out.shape.iter().enumerate().filter(|&(i, _)| i != 1).map(|(_, &n)| n)).saturating_mul(taps).saturating_mul(c);
    if c < 32 || patches < 1 << 20 || [lt, rt, out].iter().any(|t| t.shape.contains(&0)) {
        return None;
    }
    // [N, C, S...] -> [N, S..., C] and back.
    let to_last: Vec<i64> = std::iter::once(0).chain(2..r as i64).chain([1]).collect();
    let to_first: Vec<i64> = std::iter::once(0).chain([r as i64 - 1]).chain(1..r as i64 - 1).collect();
    let permuted = |t: &TensorType| TensorType::new(t.dtype, to_last.iter().map(|&p| t.shape[p as usize]).collect::<Vec<_>>());
    let (xt, ot) = (permuted(lt), permuted(out));
    let xl = transposed(e, x, lt, &to_last, None);
    let last: Vec<i64> = (1..r as i64 - 1).collect();
    let dims = quabla_dialect::ConvDims { input_batch_dimension: 0, input_feature_dimension: r as i64 - 1, input_spatial_dimensions: last.clone(), output_batch_dimension: 0, output_feature_dimension: r as i64 - 1, output_spatial_dimensions: last, ..d.clone() };
    let attrs = ConvAttrs { dims: &dims, ..*a };
    Some(conv(e, (&xl, &xt), (w, rt), &ot, &attrs).map(|y| transposed(e, &y, &ot, &to_first, dest)))
}

/// Whether the convolution `a` has no lhs dilation or groups and `e` lowers for a host target
/// with runtime products (the layouts [`windowed`] and [`channels_last`] compute).
fn host_plain(e: &Emitter, a: &ConvAttrs) -> bool {
    a.lhs_dilation.iter().all(|&l| l == 1) && a.feature_group_count == 1 && a.batch_group_count == 1 && !e.cg.target.parallel_outer() && e.cg.tile_matmuls
}

/// A 1-D convolution laid out `[N, W, C]` in and `[N, W', O]` out (NWC), stride 1, no
/// dilation or groups, whose product the runtime computes: with the features innermost, the
/// patch of output position `j` is the `K * C` elements from input position `j` on, so the
/// patches of an image are rows of the input read `C` apart. The runtime's product reads
/// them there ([`windows`]: A a `[N, rows, K * C]` view with strides `[W * C, C, 1]`, rows
/// overlapping) against the kernel as `[K * C, O]`, batched over the images, into the
/// output: no patch matrix is copied (im2col wrote `K` times the input, 21 MB for 16 x 1024 x
/// 64 and 5 taps, then read it back; 2.69 ms against JAX's 2.29). With edge padding the
/// outputs whose windows lie inside the input are that product on the input itself; the
/// `lo` first and `hi` last ones are two small products on padded copies of the input's
/// `K - 1` first and last positions (padding the whole batch cost a write and a read of it).
/// Other paddings (cropping) pad the input first. None for other convolutions.
fn windowed(e: &mut Emitter, (x, lt): (&str, &TensorType), (w, rt): (&str, &TensorType), out: &TensorType, a: &ConvAttrs, dest: Option<(String, TensorType)>) -> Option<String> {
    let d = a.dims;
    let dt = out.dtype;
    let layout = |b: i64, s: &[i64], f: i64, sd: i64, fd: i64| b == 0 && s == [sd] && f == fd;
    let is = |sd: i64, fd: i64| layout(d.input_batch_dimension, &d.input_spatial_dimensions, d.input_feature_dimension, sd, fd) && layout(d.output_batch_dimension, &d.output_spatial_dimensions, d.output_feature_dimension, sd, fd);
    // NCW (`lax.conv`'s default) is transposed to NWC and back: two transposing copies of
    // the input and the output against K patch copies (16 x 64 x 1024, 5 taps, 64 features:
    // 5.06 ms, JAX 2.99).
    let ncw = is(2, 1);
    if !(is(1, 2) || ncw) || lt.rank() != 3 || out.rank() != 3 {
        return None;
    }
    // Stride 1; a dilated window (a WaveNet's causal stack) is a sum of products, one per
    // tap, each of the input's rows read from that tap's offset (`dilated` below).
    if a.window_strides != [1] || a.rhs_dilation.len() != 1 || a.rhs_dilation[0] < 1 || !host_plain(e, a) {
        return None;
    }
    let dil = a.rhs_dilation[0];
    let swap = |t: &TensorType| TensorType::new(t.dtype, [t.shape[0], t.shape[2], t.shape[1]]);
    let (lt, out) = if ncw { (swap(lt), swap(out)) } else { (lt.clone(), out.clone()) };
    let (nb, wo, og) = (out.shape[0], out.shape[1], out.shape[2]);
    let (wi, c, k) = (lt.shape[1], lt.shape[2], rt.shape[d.kernel_spatial_dimensions[0] as usize]);
    let kk = c.checked_mul(k)?;
    if [nb, wo, og, c, k].iter().any(|&v| v <= 0) || !matches!(dt, DType::F32 | DType::F64) || !e.cg.target.runtime_gemm(dt, [nb, wo, og, kk]) {
        return None;
    }
    let xs;
    let x = if ncw {
        xs = transposed(e, x, &swap(&lt), &[0, 2, 1], None);
        xs.as_str()
    } else {
        x
    };
    let dest = if ncw { None } else { dest };
    let (lt, out) = (&lt, &out);
    let (lo, hi) = (a.padding[0], a.padding[1]);
    // B: the kernel as [K * C, O] (spatial, input feature, output feature order).
    let perm = [d.kernel_spatial_dimensions[0], d.kernel_input_feature_dimension, d.kernel_output_feature_dimension];
    let wt = transpose(e, w, rt, &perm);
    let bt = TensorType::new(dt, [kk, og]);
    let b2 = reshape(e, &wt, &TensorType::new(dt, [k, c, og]), &bt);
    let bu = super::kernel_operand(e, &b2, &bt);
    let cm = super::memref(out);
    let cbuf = super::layout::result_buffer(e, dest, out);
    let lay = super::dot::Layout { batched: true, b_nk: false, a_km: false };
    let z = e.scalar(dt, zero_lit(dt));
    // Output rows [r0, r1) from the windows of `p` (type `pt`): one product of the windows
    // against the kernel, or with a dilated window one per tap, accumulating, its rows `dil`
    // taps apart read against the tap's `[C, O]` rows of the kernel (8 x 1024 x 32, 3 taps,
    // dilation 4: 437 -> 326 us, JAX 470; the patch copy wrote the input K times and the
    // product read it back).
    let taps: Vec<String> = if dil > 1 {
        (0..k)
            .map(|t| {
                let tt = TensorType::new(dt, [c, og]);
                let bt_t = e.op(format!("tensor.extract_slice {b2}[{}, 0] [{c}, {og}] [1, 1] : {bt} to {tt}", t * c));
                super::kernel_operand(e, &bt_t, &tt)
            })
            .collect()
    } else {
        Vec::new()
    };
    let product = |e: &mut Emitter, p: &str, pt: &TensorType, r0: i64, r1: i64| {
        let rows = r1 - r0;
        let (cv, ct) = if rows == wo {
            (cbuf.clone(), cm.clone())
        } else {
            let sub = format!("memref<{nb}x{rows}x{og}x{dt}, strided<[{}, {og}, 1], offset: {}>>", wo * og, r0 * og);
            (e.op(format!("memref.subview {cbuf}[0, {r0}, 0] [{nb}, {rows}, {og}] [1, 1, 1] : {cm} to {sub}")), sub)
        };
        let cu = e.op(format!("memref.cast {cv} : {ct} to memref<*x{dt}>"));
        if dil == 1 {
            let au = windows(e, p, pt, rows, kk);
            super::dot::gemm_into(e, dt, [&au, &bu, &cu], [nb, rows, og, kk], lay, false);
        } else {
            let m = dense_buffer(e, p, pt);
            for (t, bu_t) in taps.iter().enumerate() {
                let au = window_view(e, &m, pt, rows, c, t as i64 * dil * c);
                super::dot::gemm_into(e, dt, [&au, bu_t, &cu], [nb, rows, og, c], lay, t > 0);
            }
        }
    };
    let inner = wo - lo.max(0) - hi.max(0);
    if dil == 1 && lo >= 0 && hi >= 0 && k >= 2 && wi >= k - 1 && inner > 0 {
        product(e, x, lt, lo, wo - hi);
        // The edges: the K - 1 first (last) positions of the input, padded.
        for (r0, r1, start, plo, phi) in [(0, lo, 0, lo, 0), (wo - hi, wo, wi - (k - 1), 0, hi)] {
            if r1 == r0 {
                continue;
            }
            let st = TensorType::new(dt, [nb, k - 1, c]);
            let part = e.op(format!("tensor.extract_slice {x}[0, {start}, 0] [{nb}, {}, {c}] [1, 1, 1] : {lt} to {st}", k - 1));
            let (p, pt) = pad_dilate(e, &part, &st, &[0, plo, 0], &[0, phi, 0], &[1, 1, 1], &z);
            product(e, &p, &pt, r0, r1);
        }
    } else {
        let (p, pt) = pad_dilate(e, x, lt, &[0, lo, 0], &[0, hi, 0], &[1, 1, 1], &z);
        if pt.shape[1] != wo + (k - 1) * dil {
            return None;
        }
        product(e, &p, &pt, 0, wo);
    }
    let r = e.op(format!("bufferization.to_tensor {cbuf} restrict writable : {cm} to {out}"));
    // The output's transpose as a generic (fused with its consumer, it beat the runtime's
    // transposing copy: an NCW input gradient 4.9 ms against 6.3); the input's is the
    // runtime's copy (16 x 64 x 1024, 5 taps, 64 features, 2026-12-07 on Zen 4: forward 5.0
    // -> 4.0 ms, JAX 4.3-4.8; both gradients 19.3 -> 14.3, JAX 13.5-14.0; the input
    // gradient 8.3 -> 8.0-8.4, JAX 7.8-8.7).
    Some(if ncw { transpose(e, &r, out, &[0, 2, 1]) } else { r })
}

/// The kernel gradient of a [`windowed`] NWC convolution, as JAX's transpose rule writes it:
/// the input `[N, W, C]` with C as batch and N as feature, the output cotangent `[N, W', O]`
/// as kernel (N its input feature), the result `[K, C, O]`. `dw[k, c, o] = sum_n sum_j
/// x[n, j + k, c] dy[n, j, o]`: per image, the windows of the padded input (`[W', K * C]`,
/// rows `C` apart) transposed times `dy[n]`, accumulated over the images into `dw` as
/// `[K * C, O]` by the runtime's product (an `scf.for` over the images after the first): no
/// patch matrix (16 x 1024 x 64, 5 taps: 8.05 ms against JAX's 6.74). None otherwise.
fn windowed_kernel_gradient(e: &mut Emitter, (x, lt): (&str, &TensorType), (dy, yt): (&str, &TensorType), out: &TensorType, a: &ConvAttrs, dest: Option<(String, TensorType)>) -> Option<String> {
    let d = a.dims;
    let dt = out.dtype;
    let ok = d.input_batch_dimension == 2 && d.input_feature_dimension == 0 && d.input_spatial_dimensions == [1] && d.kernel_input_feature_dimension == 0 && d.kernel_output_feature_dimension == 2 && d.kernel_spatial_dimensions == [1] && d.output_spatial_dimensions == [0] && d.output_batch_dimension == 1 && d.output_feature_dimension == 2;
    // A stride (the kernel gradient of a dilated window: taps `s` positions apart) gives one
    // product per tap, each tap's windows `[W', C]` from its offset into its `[C, O]` rows of
    // the result.
    if !ok || lt.rank() != 3 || yt.rank() != 3 || out.rank() != 3 || a.rhs_dilation != [1] || a.window_strides.len() != 1 || a.window_strides[0] < 1 || !host_plain(e, a) {
        return None;
    }
    let stride = a.window_strides[0];
    let (nb, c, wo, og, k) = (lt.shape[0], lt.shape[2], yt.shape[1], yt.shape[2], out.shape[0]);
    let kk = k.checked_mul(c)?;
    if [nb, c, wo, og, k].iter().any(|&v| v <= 0) || yt.shape[0] != nb || out.shape[1] != c || out.shape[2] != og || !matches!(dt, DType::F32 | DType::F64) || !e.cg.target.runtime_gemm(dt, [1, kk, og, wo]) {
        return None;
    }
    let z = e.scalar(dt, zero_lit(dt));
    let (p, pt) = pad_dilate(e, x, lt, &[0, a.padding[0], 0], &[0, a.padding[1], 0], &[1, 1, 1], &z);
    if pt.shape[1] != wo + (k - 1) * stride {
        return None;
    }
    let m = dense_buffer(e, &p, &pt);
    // dy, read per image.
    let (ybuf, ym) = super::kernel_buffer(e, dy, yt);
    let ct = TensorType::new(dt, [kk, og]);
    let cm = super::memref(&ct);
    let cbuf = super::layout::result_buffer(e, dest, &ct);
    let lay = super::dot::Layout { batched: false, b_nk: false, a_km: true };
    let bm = format!("memref<{wo}x{og}x{dt}, strided<[?, ?], offset: ?>>");
    // The taps' windows, each (offset in the image, width) with its rows of the result: all
    // K * C elements of a position's window at stride 1, else C per tap.
    let taps: Vec<(i64, i64, String)> = if stride == 1 {
        vec![(0, kk, e.op(format!("memref.cast {cbuf} : {cm} to memref<*x{dt}>")))]
    } else {
        (0..k)
            .map(|t| {
                let rm = format!("memref<{c}x{og}x{dt}, strided<[{og}, 1], offset: {}>>", t * c * og);
                let rows = e.op(format!("memref.subview {cbuf}[{}, 0] [{c}, {og}] [1, 1] : {cm} to {rm}", t * c));
                (t * stride * c, c, e.op(format!("memref.cast {rows} : {rm} to memref<*x{dt}>")))
            })
            .collect()
    };
    let image = |e: &mut Emitter, n: &str, accumulate: bool| {
        let step = e.op(format!("arith.muli {n}, {m}#5 : index"));
        let off = e.op(format!("arith.addi {m}#1, {step} : index"));
        let yn = e.op(format!("memref.subview {ybuf}[{n}, 0, 0] [1, {wo}, {og}] [1, 1, 1] : {ym} to {bm}"));
        let bu = e.op(format!("memref.cast {yn} : {bm} to memref<*x{dt}>"));
        for (shift, width, cu) in &taps {
            let at = if *shift == 0 {
                off.clone()
            } else {
                let s = e.index(*shift);
                e.op(format!("arith.addi {off}, {s} : index"))
            };
            let am = format!("memref<{wo}x{width}x{dt}, strided<[?, 1], offset: ?>>");
            let view = e.op(format!("memref.reinterpret_cast {m}#0 to offset: [{at}], sizes: [{wo}, {width}], strides: [{m}#6, 1] : memref<{dt}> to {am}"));
            let au = e.op(format!("memref.cast {view} : {am} to memref<*x{dt}>"));
            super::dot::gemm_into(e, dt, [&au, &bu, cu], [1, *width, og, wo], lay, accumulate);
        }
    };
    let first = e.index(0);
    image(e, &first, false);
    if nb > 1 {
        let (one, end) = (e.index(1), e.index(nb));
        let n = e.fresh();
        e.raw_line(format!("scf.for {n} = {one} to {end} step {one} {{"));
        e.depth += 1;
        image(e, &n, true);
        e.depth -= 1;
        e.raw_line("}");
    }
    let r = e.op(format!("bufferization.to_tensor {cbuf} restrict writable : {cm} to {ct}"));
    Some(reshape(e, &r, &ct, out))
}

/// The windows of `rows` consecutive positions, `kk` elements each, of `p` (type `pt`, `[N,
/// W, C]`) as an unranked `[N, rows, kk]` view with strides `[W * C, C, 1]`: rows overlap.
fn windows(e: &mut Emitter, p: &str, pt: &TensorType, rows: i64, kk: i64) -> String {
    let m = dense_buffer(e, p, pt);
    window_view(e, &m, pt, rows, kk, 0)
}

/// The `[N, rows, len]` view of windows `len` long from the buffer with metadata `m`
/// ([`dense_buffer`] of a tensor of type `pt`), `shift` elements after its start, rows a
/// position apart ([`windows`]), as an unranked memref.
fn window_view(e: &mut Emitter, m: &str, pt: &TensorType, rows: i64, len: i64, shift: i64) -> String {
    let (dt, nb) = (pt.dtype, pt.shape[0]);
    let am = format!("memref<{nb}x{rows}x{len}x{dt}, strided<[?, ?, 1], offset: ?>>");
    let off = if shift == 0 {
        format!("{m}#1")
    } else {
        let s = e.index(shift);
        e.op(format!("arith.addi {m}#1, {s} : index"))
    };
    let view = e.op(format!("memref.reinterpret_cast {m}#0 to offset: [{off}], sizes: [{nb}, {rows}, {len}], strides: [{m}#5, {m}#6, 1] : memref<{dt}> to {am}"));
    e.op(format!("memref.cast {view} : {am} to memref<*x{dt}>"))
}

/// The metadata (`memref.extract_strided_metadata`'s 8 results: base, offset, sizes, strides)
/// of a buffer holding the rank-3 tensor `p` (type `pt`) with its last two dims dense (strides
/// `[?, n2, 1]`), as views that read past a row need: `p`'s own buffer when it is so (checked
/// when the program runs), else a dense copy of it (a slice of a wider array).
fn dense_buffer(e: &mut Emitter, p: &str, pt: &TensorType) -> String {
    let dt = pt.dtype;
    let (buf, pm) = super::kernel_buffer(e, p, pt);
    let meta = |e: &mut Emitter, b: &str| -> String {
        let m = e.fresh();
        e.line(format!("{m}:8 = memref.extract_strided_metadata {b} : {pm} -> memref<{dt}>, index, index, index, index, index, index, index"));
        m
    };
    let m0 = meta(e, &buf);
    let (n2, one) = (e.index(pt.shape[2]), e.index(1));
    let rows_ok = e.op(format!("arith.cmpi eq, {m0}#6, {n2} : index"));
    let cols_ok = e.op(format!("arith.cmpi eq, {m0}#7, {one} : index"));
    let ok = e.op(format!("arith.andi {rows_ok}, {cols_ok} : i1"));
    let src = e.fresh();
    let dense = super::memref(pt);
    e.raw_line(format!("{src} = scf.if {ok} -> ({pm}) {{"));
    e.depth += 1;
    e.line(format!("scf.yield {buf} : {pm}"));
    e.depth -= 1;
    e.raw_line("} else {");
    e.depth += 1;
    let copy = e.op(format!("memref.alloc() {{alignment = 64 : i64}} : {dense}"));
    e.line(format!("memref.copy {buf}, {copy} : {pm} to {dense}"));
    let cast = e.op(format!("memref.cast {copy} : {dense} to {pm}"));
    e.line(format!("scf.yield {cast} : {pm}"));
    e.depth -= 1;
    e.raw_line("}");
    meta(e, &src)
}

/// One phase of one spatial dim of [`by_phase`]: the kernel taps `k0, k0 + step, ...` (`cnt`
/// of them) that meet input elements (not the zeros between them), as a stride-1 convolution
/// of the undilated input with rhs dilation `rd`, padding `lo`/`hi` and `q` outputs.
#[derive(Clone, Copy, Debug)]
struct Phase {
    r: i64,
    k0: i64,
    cnt: i64,
    step: i64,
    rd: i64,
    lo: i64,
    hi: i64,
    q: i64,
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The phases of spatial dim `i` (input extent `nx`, kernel extent `k`, output extent `o`):
/// output positions `y = q * l + r` (l the lhs dilation) read the dilated input at
/// `y + k * rd - lo`, an input element only for taps with `(r + k * rd - lo) % l == 0`: an
/// arithmetic progression of taps reading the undilated input at `q + base + j * rd'`. A
/// phase without taps (or outputs) is None: its outputs are zeros.
fn phases(l: i64, rd: i64, lo: i64, nx: i64, k: i64, o: i64) -> Vec<Option<Phase>> {
    let step = l / gcd(rd, l);
    (0..l)
        .map(|r| {
            let k0 = (0..k.min(step)).find(|&k| (r + k * rd - lo).rem_euclid(l) == 0)?;
            let q = if o > r { (o - r + l - 1) / l } else { 0 };
            if q == 0 {
                return None;
            }
            let cnt = (k - 1 - k0) / step + 1;
            let rd2 = rd * step / l;
            let base = (r + k0 * rd - lo).div_euclid(l);
            Some(Phase { r, k0, cnt, step, rd: rd2, lo: -base, hi: (q - 1) + base + (cnt - 1) * rd2 - (nx - 1), q })
        })
        .collect()
}

/// A convolution with lhs dilation `l > 1` (an input gradient of a strided convolution) and
/// stride 1 along those dims, as one stride-1 convolution of the undilated input per output
/// phase (the `l` residues of each such dim; at most 16 phases in all), each with the kernel
/// taps that meet input elements ([`phases`]: a strided slice of the kernel), its result
/// inserted at stride `l` into the output: the zeros of the dilated input are neither copied
/// into patches nor multiplied (about `1 / l` per dim of the work). None otherwise.
fn by_phase(e: &mut Emitter, (x, lt): (&str, &TensorType), (w, rt): (&str, &TensorType), out: &TensorType, a: &ConvAttrs) -> Result<Option<String>, LowerError> {
    let d = a.dims;
    let n = d.input_spatial_dimensions.len();
    let dilated: Vec<usize> = (0..n).filter(|&i| a.lhs_dilation[i] > 1).collect();
    let count = dilated.iter().try_fold(1i64, |c, &i| c.checked_mul(a.lhs_dilation[i])).unwrap_or(i64::MAX);
    let empty = [lt, rt, out].iter().any(|t| t.shape.contains(&0));
    if dilated.is_empty() || count > 16 || empty || dilated.iter().any(|&i| a.window_strides[i] != 1) {
        return Ok(None);
    }
    let dt = out.dtype;
    let per_dim: Vec<Vec<Option<Phase>>> = (0..n)
        .map(|i| {
            let (nx, k, o) = (lt.shape[d.input_spatial_dimensions[i] as usize], rt.shape[d.kernel_spatial_dimensions[i] as usize], out.shape[d.output_spatial_dimensions[i] as usize]);
            if a.lhs_dilation[i] == 1 {
                let p = Phase { r: 0, k0: 0, cnt: k, step: 1, rd: a.rhs_dilation[i], lo: a.padding[2 * i], hi: a.padding[2 * i + 1], q: o };
                vec![Some(p)]
            } else {
                phases(a.lhs_dilation[i], a.rhs_dilation[i], a.padding[2 * i], nx, k, o)
            }
        })
        .collect();
    let full = per_dim.iter().all(|ps| ps.iter().all(Option::is_some));
    let mut acc = if full {
        e.empty(out)
    } else {
        let z = e.scalar(dt, zero_lit(dt));
        e.filled(out, &z)
    };
    let r = out.rank();
    let ones = vec![1i64; n];
    let mut idx = vec![0usize; n];
    loop {
        let ps: Option<Vec<Phase>> = (0..n).map(|i| per_dim[i][idx[i]]).collect();
        if let Some(ps) = ps {
            // The kernel's taps of this phase: a strided slice along its spatial dims.
            let (mut ko, mut ks, mut kst) = (vec![0i64; r], rt.shape.clone(), vec![1i64; r]);
            for (i, p) in ps.iter().enumerate() {
                let kd = d.kernel_spatial_dimensions[i] as usize;
                (ko[kd], ks[kd], kst[kd]) = (p.k0, p.cnt, p.step);
            }
            let kt = TensorType::new(dt, ks.clone());
            let kw = if kt == *rt { w.to_string() } else { e.op(format!("tensor.extract_slice {w}[{}] [{}] [{}] : {rt} to {kt}", list(&ko), list(&ks), list(&kst))) };
            let pad: Vec<i64> = ps.iter().flat_map(|p| [p.lo, p.hi]).collect();
            let rdil: Vec<i64> = ps.iter().map(|p| p.rd).collect();
            let t = ConvAttrs { window_strides: a.window_strides, padding: &pad, lhs_dilation: &ones, rhs_dilation: &rdil, dims: a.dims, feature_group_count: a.feature_group_count, batch_group_count: a.batch_group_count };
            let (mut oo, mut os, mut ost) = (vec![0i64; r], out.shape.clone(), vec![1i64; r]);
            for (i, p) in ps.iter().enumerate() {
                let od = d.output_spatial_dimensions[i] as usize;
                (oo[od], os[od], ost[od]) = (p.r, p.q, a.lhs_dilation[i]);
            }
            let pt = TensorType::new(dt, os.clone());
            let c = conv(e, (x, lt), (&kw, &kt), &pt, &t)?;
            acc = e.op(format!("tensor.insert_slice {c} into {acc}[{}] [{}] [{}] : {pt} into {out}", list(&oo), list(&os), list(&ost)));
        }
        // The next phase combination (the last dim fastest).
        let mut i = n;
        loop {
            if i == 0 {
                return Ok(Some(acc));
            }
            i -= 1;
            idx[i] += 1;
            if idx[i] < per_dim[i].len() {
                break;
            }
            idx[i] = 0;
        }
    }
}

/// A convolution of `x` (type `lt`) and `w` (type `rt`) into `out` (module doc, steps 1-5).
fn conv(e: &mut Emitter, (x, lt): (&str, &TensorType), (w, rt): (&str, &TensorType), out: &TensorType, a: &ConvAttrs) -> Result<String, LowerError> {
    let (x, w) = (x.to_string(), w.to_string());
    let (lt, rt, out) = (lt.clone(), rt.clone(), out.clone());
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
    let extent = |r: Role| match r {
        Role::G => g,
        Role::B => nb,
        Role::O(i) => os[i],
        Role::C => cg,
        Role::K(i) => ks[i],
        Role::F => og,
    };
    // 1. Padding and lhs dilation on the spatial dims of the input.
    let (mut lo, mut hi, mut dil) = (vec![0i64; n + 2], vec![0i64; n + 2], vec![1i64; n + 2]);
    for (i, &sd) in d.input_spatial_dimensions.iter().enumerate() {
        lo[sd as usize] = a.padding[2 * i];
        hi[sd as usize] = a.padding[2 * i + 1];
        dil[sd as usize] = a.lhs_dilation[i];
    }
    // One input and one output feature (a single-channel filter): the depthwise generic with
    // G = 1, each output row summed over every tap while it is in L1. As patches it was a
    // `1 x K` by `K x O` matrix-vector product whose patch matrix is K times the image:
    // 518^2 by 7^2 17 ms (JAX 11), a 1-D kernel gradient (101 outputs, 99900 taps) 12-22 ms.
    // A 1-D one whose output row does not fit L1 keeps the patch path (1e5 by 101 taps 0.4 ms).
    if g == 1 && cg == 1 && og == 1 && (n >= 2 || os[0].saturating_mul(dt.size() as i64) <= 16 << 10) {
        let z = e.scalar(dt, zero_lit(dt));
        let (p, pt) = pad_dilate(e, &x, &lt, &lo, &hi, &dil, &z);
        return Ok(depthwise(e, a, (&p, &pt), (&w, &rt), &out, n, true));
    }
    let fm = form(&lt, a, &os, &ks);
    let m = nb.saturating_mul(saturating_product(os.iter().copied()));
    let kk = cg.saturating_mul(saturating_product(ks.iter().copied()));
    let per_image = per_image_loop(e, dt, fm, g, nb, og, m / nb.max(1), kk);
    // The per-image loop pads each image itself (in cache, not the whole batch through memory).
    let z = e.scalar(dt, zero_lit(dt));
    let by_feature = per_image.is_none() && feature_loop_fits(e, dt, fm, g, cg, m, og, kk);
    // The per-image and per-feature loops pad each slice themselves (in cache, not the whole
    // batch through memory).
    let (p, pt) = if per_image.is_some() || by_feature { (x.clone(), lt.clone()) } else { pad_dilate(e, &x, &lt, &lo, &hi, &dil, &z) };
    if fg > 1 && bg == 1 && cg == 1 && og == 1 {
        return Ok(depthwise(e, a, (&p, &pt), (&w, &rt), &out, n, false));
    }
    let spatial = |r: fn(usize) -> Role| (0..n).map(r).collect::<Vec<_>>();
    let ck: Vec<Role> = match fm {
        Form::PatchRows { feature_last: true } => spatial(Role::K).into_iter().chain([Role::C]).collect(),
        _ => [Role::C].into_iter().chain(spatial(Role::K)).collect(),
    };
    let bo: Vec<Role> = [Role::B].into_iter().chain(spatial(Role::O)).collect();
    // 2. Patches: [G, N', O..., <ck>] or [G, <ck>, N', O...], read from the padded input
    //    through an affine map (`o * stride + k * rhs_dilation`, the group folded into the
    //    batch or feature index).
    let prole: Vec<Role> = match fm {
        Form::PatchRows { .. } => [Role::G].into_iter().chain(bo.iter().copied()).chain(ck.iter().copied()).collect(),
        Form::PatchCols => [Role::G].into_iter().chain(ck.iter().copied()).chain(bo.iter().copied()).collect(),
    };
    let at = |roles: &[Role], r: Role| format!("d{}", roles.iter().position(|&x| x == r).unwrap_or(0));
    let rank = prole.len();
    let mut in_exprs = vec![String::new(); n + 2];
    in_exprs[d.input_batch_dimension as usize] = if bg > 1 { format!("{} * {nb} + {}", at(&prole, Role::G), at(&prole, Role::B)) } else { at(&prole, Role::B) };
    in_exprs[d.input_feature_dimension as usize] = if fg > 1 { format!("{} * {cg} + {}", at(&prole, Role::G), at(&prole, Role::C)) } else { at(&prole, Role::C) };
    for i in 0..n {
        in_exprs[d.input_spatial_dimensions[i] as usize] = format!("{} * {} + {} * {}", at(&prole, Role::O(i)), a.window_strides[i], at(&prole, Role::K(i)), a.rhs_dilation[i]);
    }
    let patches_t = TensorType::new(dt, prole.iter().map(|&r| extent(r)).collect::<Vec<_>>());
    let patches = if per_image.is_some() || by_feature {
        String::new()
    } else {
        let pinit = e.empty(&patches_t);
        generic(e, &vec![Iter::Parallel; rank], &[Operand::new(p.clone(), &pt, map(rank, &in_exprs))], &[Operand::new(pinit, &patches_t, identity(rank))], |_, a| vec![a[0].clone()]).remove(0)
    };
    // 3. Kernel: [G, <ck>, Og] (PatchRows) or [G, Og, <ck>] (PatchCols).
    let krole: Vec<Role> = match fm {
        Form::PatchRows { .. } => [Role::G].into_iter().chain(ck.iter().copied()).chain([Role::F]).collect(),
        Form::PatchCols => [Role::G, Role::F].into_iter().chain(ck.iter().copied()).collect(),
    };
    let krank = krole.len();
    let mut k_exprs = vec![String::new(); n + 2];
    k_exprs[d.kernel_output_feature_dimension as usize] = if g > 1 { format!("{} * {og} + {}", at(&krole, Role::G), at(&krole, Role::F)) } else { at(&krole, Role::F) };
    k_exprs[d.kernel_input_feature_dimension as usize] = at(&krole, Role::C);
    for i in 0..n {
        k_exprs[d.kernel_spatial_dimensions[i] as usize] = at(&krole, Role::K(i));
    }
    let kt = TensorType::new(dt, krole.iter().map(|&r| extent(r)).collect::<Vec<_>>());
    let kinit = e.empty(&kt);
    let kern = generic(e, &vec![Iter::Parallel; krank], &[Operand::new(w, &rt, map(krank, &k_exprs))], &[Operand::new(kinit, &kt, identity(krank))], |_, a| vec![a[0].clone()]).remove(0);
    // 4. The product.
    let batched = g > 1;
    let per_feature = if per_image.is_none() { feature_loop(e, dt, a, fm, (&p, &pt), [&lo, &hi, &dil], (&kern, &kt), [g, nb, og, cg, m, kk], (&os, &ks)) } else { None };
    let mat = |r: i64, c: i64| if batched { TensorType::new(dt, [g, r, c]) } else { TensorType::new(dt, [r, c]) };
    let (c3, c3t, crole) = match fm {
        Form::PatchCols if per_image.is_some() => {
            let par = per_image.unwrap_or(false);
            let a2 = reshape(e, &kern, &kt, &TensorType::new(dt, [og, kk]));
            let (c, ct) = image_loop(e, dt, a, fm, (&p, &pt), [&lo, &hi, &dil], (&a2, None), [nb, og, m / nb, kk], (&os, &ks), par);
            (c, ct, [Role::B, Role::F].into_iter().chain(spatial(Role::O)).collect::<Vec<_>>())
        }
        Form::PatchRows { feature_last: true } if per_image.is_some() => {
            let par = per_image.unwrap_or(false);
            let b2 = reshape(e, &kern, &kt, &TensorType::new(dt, [kk, og]));
            let bp = pack_kernel(e, dt, &b2, [m / nb, og, kk]);
            let (c, ct) = image_loop(e, dt, a, fm, (&p, &pt), [&lo, &hi, &dil], (&b2, Some(&bp)), [nb, og, m / nb, kk], (&os, &ks), par);
            (c, ct, bo.iter().copied().chain([Role::F]).collect::<Vec<_>>())
        }
        Form::PatchRows { feature_last: false } if per_feature.is_some() => {
            let c = per_feature.unwrap_or_default();
            (c, mat(m, og), [Role::G].into_iter().chain(bo.iter().copied()).chain([Role::F]).collect::<Vec<_>>())
        }
        Form::PatchRows { .. } => {
            let a3 = reshape(e, &patches, &patches_t, &mat(m, kk));
            let b3 = reshape(e, &kern, &kt, &mat(kk, og));
            let c3 = matmul_of(e, dt, &a3, &b3, [g, m, og, kk], batched);
            (c3, mat(m, og), [Role::G].into_iter().chain(bo.iter().copied()).chain([Role::F]).collect::<Vec<_>>())
        }
        Form::PatchCols => {
            let a3 = reshape(e, &kern, &kt, &mat(og, kk));
            let b3 = reshape(e, &patches, &patches_t, &mat(kk, m));
            let c3 = matmul_of(e, dt, &a3, &b3, [g, og, m, kk], batched);
            (c3, mat(og, m), [Role::G, Role::F].into_iter().chain(bo.iter().copied()).collect::<Vec<_>>())
        }
    };
    // 5. The product, expanded to its roles, transposed into the output layout with the
    //    feature dim split as (G, Og) and collapsed (the group dim dropped first when G = 1,
    //    so that a product already in the output's order is not copied).
    let crole: Vec<Role> = crole.into_iter().filter(|&r| r != Role::G || g > 1).collect();
    let ex_t = TensorType::new(dt, crole.iter().map(|&r| extent(r)).collect::<Vec<_>>());
    let ex = reshape(e, &c3, &c3t, &ex_t);
    let pos = |r: Role| crole.iter().position(|&x| x == r).unwrap_or(0) as i64;
    let mut perm: Vec<i64> = Vec::with_capacity(crole.len());
    for j in 0..(n + 2) as i64 {
        if j == d.output_batch_dimension {
            perm.push(pos(Role::B));
        } else if j == d.output_feature_dimension {
            if g > 1 {
                perm.push(pos(Role::G));
            }
            perm.push(pos(Role::F));
        } else {
            let i = d.output_spatial_dimensions.iter().position(|&s| s == j).unwrap_or(0);
            perm.push(pos(Role::O(i)));
        }
    }
    let tr = transpose(e, &ex, &ex_t, &perm);
    let tr_t = TensorType::new(dt, perm.iter().map(|&p| ex_t.shape[p as usize]).collect::<Vec<_>>());
    Ok(reshape(e, &tr, &tr_t, &out))
}

/// With `PatchCols`, or `PatchRows` with the features innermost (NHWC), and no groups,
/// whether the product runs per image of the batch (its patches, `Cg*K x O` or `O x K*Cg`,
/// then stay in cache between their copy and product instead of one patch matrix for the
/// whole batch going through memory twice): when there is more than one image and each
/// image's product is on the tiled path with at least 128 output positions. `Some(par)`: the loop over the images is an `scf.forall` (`par`) when the
/// whole product is worth threads and no image's product or patch copy is threaded itself.
#[allow(clippy::too_many_arguments)]
fn per_image_loop(e: &Emitter, dt: DType, fm: Form, g: i64, nb: i64, og: i64, s: i64, kk: i64) -> Option<bool> {
    if g != 1 || nb < 2 || s < 128 || !e.cg.tile_matmuls {
        return None;
    }
    let target = e.cg.target;
    let (pm, pn) = match fm {
        Form::PatchCols => {
            target.matmul_plan(dt, og, s, kk)?;
            (og, s)
        }
        // Rows (NHWC): `[O, K...*Cg] x [K...*Cg, Og]` per image, the kernel packed once, when
        // the whole patch matrix would not stay in cache and the rows are not padded.
        Form::PatchRows { feature_last: true } => {
            let p = target.matmul_plan(dt, s, og, kk)?;
            if p.mp != s || nb.saturating_mul(s).saturating_mul(kk) < 1 << 20 || super::dot::prepacked_nr(e, dt, [s, p.np, kk]) != Some(p.nr) {
                return None;
            }
            (s, og)
        }
        Form::PatchRows { feature_last: false } => return None,
    };
    let threads = e.threads();
    // Parallel images unless the product is parallel by itself (the patch copy inside the
    // image loop is never split: the CPU executor does not tag generics inside an scf.forall).
    // The rows' product with the kernel packed once (`dot::matmul_prepacked`) never is: a
    // 1-D NWC layer 16x1024x64, 5 taps, 64 features, ran on one thread, 11.7 ms (JAX 3.7).
    let inner = fm == Form::PatchCols && target.parallel_matmul(pm, pn, kk, threads);
    Some(threads > 1 && nb >= threads && !inner && target.parallel_matmul(og, s.saturating_mul(nb), kk, threads))
}

/// The per-image `PatchCols` product (see [`per_image_loop`]): for each image `b` of the
/// input `x`, the image padded and dilated (`lo`, `hi`, `dil` of the whole input; the batch
/// dim has none), its patches and the product `a2 [Og, Cg*K] x [Cg*K, O]` into `[N', Og, O]`
/// (loop over the images an `scf.forall` with `par`). When the tiled product's panels (nr
/// columns) divide the last output extent, the patch copy writes them in the packed panel
/// order the product reads (`[O..., O_last / nr, Cg, K..., nr]` = `[O / nr, Cg*K, nr]`,
/// `dot::matmul_prepacked`): no second pass over the patches to pack them. Otherwise the
/// patches are `[Cg, K..., O...]` and the product packs them. Returns the result and its type.
#[allow(clippy::too_many_arguments)]
fn image_loop(e: &mut Emitter, dt: DType, a: &ConvAttrs, fm: Form, (x, xt): (&str, &TensorType), [lo, hi, dil]: [&[i64]; 3], (a2, bp): (&str, Option<&str>), [nb, og, s, kk]: [i64; 4], (os, ks): (&[i64], &[i64]), par: bool) -> (String, TensorType) {
    let d = a.dims;
    let n = os.len();
    let bdim = d.input_batch_dimension as usize;
    let rows = fm != Form::PatchCols;
    let (r0, r1) = if rows { (s, og) } else { (og, s) };
    let rt = TensorType::new(dt, [nb, r0, r1]);
    let init = e.empty(&rt);
    let (bi, acc, res) = (e.fresh(), e.fresh(), e.fresh());
    if par {
        e.raw_line(format!("{res} = scf.forall ({bi}) in ({nb}) shared_outs({acc} = {init}) -> ({rt}) {{"));
    } else {
        let (c0, c1, cb) = (e.index(0), e.index(1), e.index(nb));
        e.raw_line(format!("{res} = scf.for {bi} = {c0} to {cb} step {c1} iter_args({acc} = {init}) -> ({rt}) {{"));
    }
    e.depth += 1;
    // The image: the input's slice at `bi`, its batch dim dropped, then padded and dilated.
    let r = xt.rank();
    let drop = |v: &[i64]| (0..r).filter(|&i| i != bdim).map(|i| v[i]).collect::<Vec<_>>();
    let it = TensorType::new(dt, drop(&xt.shape));
    let offs: Vec<String> = (0..r).map(|i| if i == bdim { bi.clone() } else { "0".into() }).collect();
    let sizes: Vec<i64> = (0..r).map(|i| if i == bdim { 1 } else { xt.shape[i] }).collect();
    let img = e.op(format!("tensor.extract_slice {x}[{}] [{}] [{}] : {xt} to {it}", offs.join(", "), list(&sizes), list(&vec![1; r])));
    let z = e.scalar(dt, zero_lit(dt));
    let (img, it) = pad_dilate(e, &img, &it, &drop(lo), &drop(hi), &drop(dil), &z);
    let at = |i: usize| if i > bdim { i - 1 } else { i };
    let cg = kk / saturating_product(ks.iter().copied()).max(1);
    let mut exprs = vec![String::new(); r - 1];
    let nr = super::dot::prepacked_nr(e, dt, [og, s, kk]).filter(|&nr| os[n - 1] % nr == 0);
    let c = if rows {
        // Patches [O..., K..., Cg]: loops d0.. = o, dn.. = k, d(2n) = c; times the kernel
        // `a2` ([K*Cg, Og]) as packed once outside the loop (`bp`: [Og' / nr, K*Cg, nr], Og'
        // the padded output features).
        let rank = 2 * n + 1;
        exprs[at(d.input_feature_dimension as usize)] = format!("d{}", 2 * n);
        for i in 0..n {
            exprs[at(d.input_spatial_dimensions[i] as usize)] = format!("d{i} * {} + d{} * {}", a.window_strides[i], n + i, a.rhs_dilation[i]);
        }
        let ptt = TensorType::new(dt, os.iter().chain(ks.iter()).copied().chain([cg]).collect::<Vec<_>>());
        let pinit = e.empty(&ptt);
        let patches = generic(e, &vec![Iter::Parallel; rank], &[Operand::new(img.clone(), &it, map(rank, &exprs))], &[Operand::new(pinit, &ptt, identity(rank))], |_, a| vec![a[0].clone()]).remove(0);
        let a2d = reshape(e, &patches, &ptt, &TensorType::new(dt, [s, kk]));
        let np = e.cg.target.matmul_plan(dt, s, og, kk).map_or(og, |p| p.np);
        let c = match bp.and_then(|bp| super::dot::matmul_prepacked(e, dt, &a2d, bp, None, [s, np, kk])) {
            Some(c) if np == og => c,
            Some(c) => e.op(format!("tensor.extract_slice {c}[0, 0] [{s}, {og}] [1, 1] : {} to {}", TensorType::new(dt, [s, np]), TensorType::new(dt, [s, og]))),
            None => matmul_of(e, dt, &a2d, a2, [1, s, og, kk], false),
        };
        Some(c)
    } else if let Some(nr) = nr {
        // Packed patches [O_0, .., O_{n-2}, O_last / nr, Cg, K..., nr]: loops d0..d(n-2) = o
        // (outer dims), d(n-1) = the panel along the last, dn = c, d(n+1).. = k, d(2n+1) = the
        // column within the panel.
        let rank = 2 * n + 2;
        exprs[at(d.input_feature_dimension as usize)] = format!("d{n}");
        for i in 0..n {
            let o = if i + 1 == n { format!("(d{} * {nr} + d{})", n - 1, 2 * n + 1) } else { format!("d{i}") };
            exprs[at(d.input_spatial_dimensions[i] as usize)] = format!("{o} * {} + d{} * {}", a.window_strides[i], n + 1 + i, a.rhs_dilation[i]);
        }
        let shape: Vec<i64> = os[..n - 1].iter().copied().chain([os[n - 1] / nr, cg]).chain(ks.iter().copied()).chain([nr]).collect();
        let ptt = TensorType::new(dt, shape);
        let pinit = e.empty(&ptt);
        let packed = generic(e, &vec![Iter::Parallel; rank], &[Operand::new(img.clone(), &it, map(rank, &exprs))], &[Operand::new(pinit, &ptt, identity(rank))], |_, a| vec![a[0].clone()]).remove(0);
        let groups = [(0..n).collect::<Vec<_>>(), (n..=2 * n).collect(), vec![2 * n + 1]];
        let bpt = TensorType::new(dt, [s / nr, kk, nr]);
        let reassoc: Vec<String> = groups.iter().map(|g| format!("[{}]", g.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", "))).collect();
        let bp = e.op(format!("tensor.collapse_shape {packed} [{}] : {ptt} into {bpt}", reassoc.join(", ")));
        super::dot::matmul_prepacked(e, dt, a2, &bp, None, [og, s, kk])
    } else {
        None
    };
    let c = match c {
        Some(c) => c,
        None => {
            // Patches [Cg, K..., O...]: loops d0 = c, d1.. = k, d(n+1).. = o.
            let rank = 2 * n + 1;
            exprs[at(d.input_feature_dimension as usize)] = "d0".into();
            for i in 0..n {
                exprs[at(d.input_spatial_dimensions[i] as usize)] = format!("d{} * {} + d{} * {}", n + 1 + i, a.window_strides[i], 1 + i, a.rhs_dilation[i]);
            }
            let ptt = TensorType::new(dt, [cg].into_iter().chain(ks.iter().copied()).chain(os.iter().copied()).collect::<Vec<_>>());
            let pinit = e.empty(&ptt);
            let patches = generic(e, &vec![Iter::Parallel; rank], &[Operand::new(img, &it, map(rank, &exprs))], &[Operand::new(pinit, &ptt, identity(rank))], |_, a| vec![a[0].clone()]).remove(0);
            let b2 = reshape(e, &patches, &ptt, &TensorType::new(dt, [kk, s]));
            matmul_of(e, dt, a2, &b2, [1, og, s, kk], false)
        }
    };
    let into = format!("{c} into {acc}[{bi}, 0, 0] [1, {r0}, {r1}] [1, 1, 1] : {} into {rt}", TensorType::new(dt, [r0, r1]));
    if par {
        end_forall(e, &into);
    } else {
        let ins = e.op(format!("tensor.insert_slice {into}"));
        e.line(format!("scf.yield {ins} : {rt}"));
        e.depth -= 1;
        e.line("}");
    }
    (res, rt)
}

/// A depthwise convolution (one input and one output feature per group: a product per
/// feature would be a `1 x K` by `K x O` matrix-vector product, its patches `K` times the
/// input): one generic over the padded input `p` accumulating `out[b, g, o...] += p[b, g,
/// o * stride + k * rhs_dilation] * w[g, 0, k...]` with the loops ordered `b, g, k..., o...`
/// (the kernel taps outside, the output positions innermost: unit-stride loads and stores
/// for stride 1 in NCHW), or with `rows_outside` `b, g, o0, k..., o1...` (each output row
/// summed over every tap while it is in L1, and a parallel loop over the rows for threads when
/// there is one image and one feature).
fn depthwise(e: &mut Emitter, a: &ConvAttrs, (p, pt): (&str, &TensorType), (w, rt): (&str, &TensorType), out: &TensorType, n: usize, rows_outside: bool) -> String {
    let d = a.dims;
    let dt = out.dtype;
    let rank = 2 + 2 * n;
    // The loop (dim) of tap `i` and of output position `i`.
    let rows_outside = rows_outside && n >= 2;
    let kd = |i: usize| if rows_outside { 3 + i } else { 2 + i };
    let od = |i: usize, n: usize| if rows_outside && i == 0 { 2 } else { 2 + n + i };
    let (mut xe, mut we, mut oe) = (vec![String::new(); n + 2], vec![String::new(); n + 2], vec![String::new(); n + 2]);
    (xe[d.input_batch_dimension as usize], xe[d.input_feature_dimension as usize]) = ("d0".into(), "d1".into());
    (we[d.kernel_output_feature_dimension as usize], we[d.kernel_input_feature_dimension as usize]) = ("d1".into(), "0".into());
    (oe[d.output_batch_dimension as usize], oe[d.output_feature_dimension as usize]) = ("d0".into(), "d1".into());
    for i in 0..n {
        xe[d.input_spatial_dimensions[i] as usize] = format!("d{} * {} + d{} * {}", od(i, n), a.window_strides[i], kd(i), a.rhs_dilation[i]);
        we[d.kernel_spatial_dimensions[i] as usize] = format!("d{}", kd(i));
        oe[d.output_spatial_dimensions[i] as usize] = format!("d{}", od(i, n));
    }
    let iters: Vec<Iter> = (0..rank).map(|l| if (0..n).any(|i| kd(i) == l) { Iter::Reduction } else { Iter::Parallel }).collect();
    let z = e.scalar(dt, zero_lit(dt));
    let init = e.filled(out, &z);
    let (mul, add) = if dt.is_float() { ("arith.mulf", "arith.addf") } else { ("arith.muli", "arith.addi") };
    let ins = [Operand::new(p.to_string(), pt, map(rank, &xe)), Operand::new(w.to_string(), rt, map(rank, &we))];
    generic(e, &iters, &ins, &[Operand::new(init, out, map(rank, &oe))], |e, v| {
        let t = e.op(format!("{mul} {}, {} : {dt}", v[0], v[1]));
        vec![e.op(format!("{add} {}, {t} : {dt}", v[2]))]
    })
    .remove(0)
}

/// The kernel `b2` (`[kk, og]`) of a per-image `PatchRows` product `[s, kk] x [kk, og]`,
/// padded to the plan's `np` columns and packed once into its `[np / nr, kk, nr]` panels (the
/// layout `dot::matmul_prepacked` reads).
fn pack_kernel(e: &mut Emitter, dt: DType, b2: &str, [s, og, kk]: [i64; 3]) -> String {
    let Some(p) = e.cg.target.matmul_plan(dt, s, og, kk) else { return b2.to_string() };
    let (np, nr) = (p.np, p.nr);
    let bt = TensorType::new(dt, [kk, np]);
    let bpad = if np == og {
        b2.to_string()
    } else {
        let z = e.scalar(dt, zero_lit(dt));
        let big = e.filled(&bt, &z);
        e.op(format!("tensor.insert_slice {b2} into {big}[0, 0] [{kk}, {og}] [1, 1] : {} into {bt}", TensorType::new(dt, [kk, og])))
    };
    let b3t = TensorType::new(dt, [kk, np / nr, nr]);
    let b3 = e.op(format!("tensor.expand_shape {bpad} [[0], [1, 2]] output_shape [{kk}, {}, {nr}] : {bt} into {b3t}", np / nr));
    let bpt = TensorType::new(dt, [np / nr, kk, nr]);
    let init = e.empty(&bpt);
    e.op(format!("linalg.transpose ins({b3} : {b3t}) outs({init} : {bpt}) permutation = [1, 0, 2]"))
}

/// With `PatchRows` in `(Cg, K...)` order and no groups, whether the product runs as a loop
/// over the kernel's input features accumulating `[N'*O, K] x [K, Og]` products (the
/// features' patches then stay in cache instead of one `[N'*O, Cg*K]` matrix going through
/// memory): for kernel gradients, whose input features are the batch and whose window is the
/// cotangent, when the whole patch matrix is large (at least 2^20 elements), there are
/// several features and each product is on the tiled path unpadded.
#[allow(clippy::too_many_arguments)]
fn feature_loop_fits(e: &Emitter, dt: DType, fm: Form, g: i64, cg: i64, m: i64, og: i64, kk: i64) -> bool {
    if fm != (Form::PatchRows { feature_last: false }) || g != 1 || cg < 2 || !e.cg.tile_matmuls || m.saturating_mul(kk) < 1 << 20 {
        return false;
    }
    matches!(e.cg.target.matmul_plan(dt, m, og, kk / cg), Some(p) if (p.mp, p.np) == (m, og))
}

/// The threads [`feature_loop`] splits the output batch `nb` over: `threads` when the whole
/// product is worth threads, each feature's product is not threaded itself, `nb` divides
/// evenly and each part's product stays on the tiled path unpadded; else 1. Each part owns
/// its rows of the result and sums the features in the same order: results do not depend
/// on the split.
fn feature_parts(e: &Emitter, dt: DType, [nb, og, cg, m, kk]: [i64; 5]) -> i64 {
    let t = e.threads();
    let kc = kk / cg;
    let target = e.cg.target;
    if t < 2 || nb % t != 0 || target.parallel_matmul(m, og, kc, t) || !target.parallel_matmul(m, og, kk, t) {
        return 1;
    }
    match target.matmul_plan(dt, m / t, og, kc) {
        Some(p) if (p.mp, p.np) == (m / t, og) => t,
        _ => 1,
    }
}

/// The loop of [`feature_loop_fits`]: for each input feature `c`, the patches `[N', O...,
/// K...]` of the input's slice at `c` (padded in the loop) and `acc += patches x kern[c]` (the
/// kernel slice used as the product's one packed panel when `Og` is the panel width; the kernel
/// arranged `[1, Cg, K..., Og]`), from a zero `[N'*O, Og]`; with [`feature_parts`] > 1, one
/// such loop per part of the output batch `N'` in an `scf.forall` (each on its rows of the
/// result). Returns the product.
#[allow(clippy::too_many_arguments)]
fn feature_loop(e: &mut Emitter, dt: DType, a: &ConvAttrs, fm: Form, (p, pt): (&str, &TensorType), pads: [&[i64]; 3], (kern, kt): (&str, &TensorType), [g, nb, og, cg, m, kk]: [i64; 6], (os, ks): (&[i64], &[i64])) -> Option<String> {
    if !feature_loop_fits(e, dt, fm, g, cg, m, og, kk) {
        return None;
    }
    let kc = kk / cg;
    let ct = TensorType::new(dt, [m, og]);
    let k3t = TensorType::new(dt, [cg, kc, og]);
    let k3 = reshape(e, kern, kt, &k3t);
    let parts = feature_parts(e, dt, [nb, og, cg, m, kk]);
    if parts == 1 {
        return feature_products(e, dt, a, (p, pt), pads, (&k3, &k3t), None, [nb, og, cg, m, kk], (os, ks));
    }
    let (nbt, mt) = (nb / parts, m / parts);
    let init = e.empty(&ct);
    let (ti, acc, res) = (e.fresh(), e.fresh(), e.fresh());
    e.raw_line(format!("{res} = scf.forall ({ti}) in ({parts}) shared_outs({acc} = {init}) -> ({ct}) {{"));
    e.depth += 1;
    let cn = e.index(nbt);
    let b0 = e.op(format!("arith.muli {ti}, {cn} : index"));
    let c = feature_products(e, dt, a, (p, pt), pads, (&k3, &k3t), Some(&b0), [nbt, og, cg, mt, kk], (os, ks))?;
    let cm = e.index(mt);
    let r0 = e.op(format!("arith.muli {ti}, {cm} : index"));
    end_forall(e, &format!("{c} into {acc}[{r0}, 0] [{mt}, {og}] [1, 1] : {} into {ct}", TensorType::new(dt, [mt, og])));
    Some(res)
}

/// [`feature_loop`]'s loop over the input features for the `nb` images of the output batch
/// from `b0` (all of them when None): `[m, og]` (m = nb * O).
#[allow(clippy::too_many_arguments)]
fn feature_products(e: &mut Emitter, dt: DType, a: &ConvAttrs, (p, pt): (&str, &TensorType), [lo, hi, dil]: [&[i64]; 3], (k3, k3t): (&str, &TensorType), b0: Option<&str>, [nb, og, cg, m, kk]: [i64; 5], (os, ks): (&[i64], &[i64])) -> Option<String> {
    let d = a.dims;
    let n = os.len();
    let kc = kk / cg;
    let (fdim, bdim) = (d.input_feature_dimension as usize, d.input_batch_dimension as usize);
    let ct = TensorType::new(dt, [m, og]);
    let z = e.scalar(dt, zero_lit(dt));
    let init = e.filled(&ct, &z);
    let (ci, acc, res) = (e.fresh(), e.fresh(), e.fresh());
    let (c0, c1, cc) = (e.index(0), e.index(1), e.index(cg));
    e.raw_line(format!("{res} = scf.for {ci} = {c0} to {cc} step {c1} iter_args({acc} = {init}) -> ({ct}) {{"));
    e.depth += 1;
    let r = pt.rank();
    let xt = TensorType::new(dt, (0..r).filter(|&i| i != fdim).map(|i| if i == bdim { nb } else { pt.shape[i] }).collect::<Vec<_>>());
    let offs: Vec<String> = (0..r).map(|i| if i == fdim { ci.clone() } else if i == bdim { b0.unwrap_or("0").to_string() } else { "0".into() }).collect();
    let sizes: Vec<i64> = (0..r).map(|i| if i == fdim { 1 } else if i == bdim { nb } else { pt.shape[i] }).collect();
    let x = e.op(format!("tensor.extract_slice {p}[{}] [{}] [{}] : {pt} to {xt}", offs.join(", "), list(&sizes), list(&vec![1; r])));
    let drop = |v: &[i64]| (0..r).filter(|&i| i != fdim).map(|i| v[i]).collect::<Vec<_>>();
    let z = e.scalar(dt, zero_lit(dt));
    let (x, xt) = pad_dilate(e, &x, &xt, &drop(lo), &drop(hi), &drop(dil), &z);
    // Patches [N', O..., K...]: loops d0 = b, d1.. = o, d(n+1).. = k.
    let rank = 2 * n + 1;
    let at = |i: usize| if i > fdim { i - 1 } else { i };
    let mut exprs = vec![String::new(); r - 1];
    exprs[at(bdim)] = "d0".into();
    for i in 0..n {
        exprs[at(d.input_spatial_dimensions[i] as usize)] = format!("d{} * {} + d{} * {}", 1 + i, a.window_strides[i], n + 1 + i, a.rhs_dilation[i]);
    }
    let ptt = TensorType::new(dt, [nb].into_iter().chain(os.iter().copied()).chain(ks.iter().copied()).collect::<Vec<_>>());
    let pinit = e.empty(&ptt);
    let patches = generic(e, &vec![Iter::Parallel; rank], &[Operand::new(x, &xt, map(rank, &exprs))], &[Operand::new(pinit, &ptt, identity(rank))], |_, a| vec![a[0].clone()]).remove(0);
    let a2 = reshape(e, &patches, &ptt, &TensorType::new(dt, [m, kc]));
    let w2t = TensorType::new(dt, [kc, og]);
    let w2 = e.op(format!("tensor.extract_slice {k3}[{ci}, 0, 0] [1, {kc}, {og}] [1, 1, 1] : {k3t} to {w2t}"));
    // A one-panel kernel slice (`og` = the panel width) is already in packed order.
    let c = if super::dot::prepacked_nr(e, dt, [m, og, kc]) == Some(og) {
        let bpt = TensorType::new(dt, [1, kc, og]);
        let bp = e.op(format!("tensor.expand_shape {w2} [[0, 1], [2]] output_shape [1, {kc}, {og}] : {w2t} into {bpt}"));
        super::dot::matmul_prepacked(e, dt, &a2, &bp, Some(&acc), [m, og, kc])?
    } else {
        matmul_into(e, dt, &a2, &w2, &acc, [m, og, kc])?
    };
    e.line(format!("scf.yield {c} : {ct}"));
    e.depth -= 1;
    e.line("}");
    Some(res)
}

/// Lowers one op of this family, returning its result's name (exhaustive over the family).
pub fn lower(e: &mut Emitter, f: &Func, o: &Op, op: &ConvolutionOp) -> Result<String, LowerError> {
    match op {
        ConvolutionOp::Convolution { .. } => lower_convolution(e, f, o, &ConvAttrs::of(op)),
    }
}
