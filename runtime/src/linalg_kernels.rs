//! The linear-algebra kernels the CPU lowering calls (`quabla_linalg_<op>_<dtype>`, see
//! `quabla_lowering::linalg::linalg`), registered with each JIT'ed module as their C
//! interface symbols `_mlir_ciface_quabla_linalg_*`. Each takes unranked memref descriptors
//! (operands, then results, then the op's flags as `i64`) and runs the interpreter's kernels
//! (`quabla_interp::linalg`), reading operands and writing results through the descriptors'
//! sizes and strides. Shapes were checked by the op's shape rule before lowering.
use std::borrow::Cow;

use quabla_dialect::{DType, LinalgOp, TensorType};
use quabla_interp::linalg::{result_sizes, Element, Out, OutOfMemory};

/// An unranked memref as the C interface passes it: rank and a pointer to the ranked
/// descriptor `{allocated, aligned, offset, sizes[rank], strides[rank]}`.
#[repr(C)]
pub(crate) struct Unranked {
    rank: i64,
    desc: *const i64,
}

/// (aligned data pointer + offset, sizes, strides) of a descriptor, the sizes and strides
/// read in place (no allocation: the products' per-call path, crate::gemm).
pub(crate) unsafe fn parts<'a, T>(u: *const Unranked) -> (*mut T, &'a [i64], &'a [i64]) {
    let u = &*u;
    let r = u.rank.max(0) as usize;
    let d = u.desc;
    let (sizes, strides) = (std::slice::from_raw_parts(d.add(3), r), std::slice::from_raw_parts(d.add(3 + r), r));
    ((*d.add(1) as *mut T).offset(*d.add(2) as isize), sizes, strides)
}

/// [`parts`] with owned sizes and strides.
pub(crate) unsafe fn view<T>(u: *const Unranked) -> (*mut T, Vec<i64>, Vec<i64>) {
    let (p, sizes, strides) = parts::<T>(u);
    (p, sizes.to_vec(), strides.to_vec())
}

/// Element offsets (in elements) of a row-major walk over `sizes` with `strides`.
fn offsets(sizes: &[i64], strides: &[i64]) -> Vec<isize> {
    let mut out = vec![0isize];
    for (&n, &s) in sizes.iter().zip(strides) {
        out = out.iter().flat_map(|&o| (0..n).map(move |i| o + (i * s) as isize)).collect();
    }
    out
}

/// True when `strides` are the row-major strides of `sizes` (extent-1 dims are free).
pub(crate) fn contiguous(sizes: &[i64], strides: &[i64]) -> bool {
    let mut want = 1;
    for (&n, &s) in sizes.iter().zip(strides).rev() {
        if n != 1 && s != want {
            return false;
        }
        want *= n;
    }
    true
}

/// An operand as a row-major slice: borrowed when the buffer is contiguous (the lowering
/// hands the kernels private contiguous copies), else gathered through the strides.
pub(crate) unsafe fn read<'a, T: Copy>(u: *const Unranked) -> (Cow<'a, [T]>, Vec<i64>) {
    let (p, sizes, strides) = view::<T>(u);
    // The sizes of a memref of a program type (checked when the program was built).
    let n = quabla_dialect::size::saturating_product(sizes.iter().copied());
    if contiguous(&sizes, &strides) {
        return (Cow::Borrowed(std::slice::from_raw_parts(p, n as usize)), sizes);
    }
    let v = offsets(&sizes, &strides).into_iter().map(|o| *p.offset(o)).collect();
    (Cow::Owned(v), sizes)
}

/// Writes row-major `v` into a result.
pub(crate) unsafe fn write<T: Copy>(u: *const Unranked, v: &[T]) {
    let (p, sizes, strides) = view::<T>(u);
    if contiguous(&sizes, &strides) {
        std::slice::from_raw_parts_mut(p, v.len()).copy_from_slice(v);
        return;
    }
    for (o, x) in offsets(&sizes, &strides).into_iter().zip(v) {
        *p.offset(o) = *x;
    }
}

unsafe extern "C" {
    /// Abandons the compiled call in progress as a failed allocation of `bytes`
    /// (csrc/alloc_guard.c); aborts outside a guarded call.
    fn quabla_rt_fail(bytes: u64) -> !;
}

/// Runs `op` on the operand descriptors `ins` (element type `T`, dtype `d`) into `outs`. A
/// failed batch-sized allocation abandons the compiled call through the allocation guard, as a
/// failed malloc of the compiled code would: the executor reports `OutOfMemory`.
unsafe fn call<T: Element>(op: &LinalgOp, d: DType, ins: &[*const Unranked], outs: &[*const Unranked]) {
    call_with::<T>(op, d, ins, outs, true)
}

/// [`call`], `vectors` as `quabla_interp::linalg::run_into` takes it.
unsafe fn call_with<T: Element>(op: &LinalgOp, d: DType, ins: &[*const Unranked], outs: &[*const Unranked], vectors: bool) {
    // Everything with a destructor lives in `compute`'s frame, gone before the longjmp.
    let failed = compute::<T>(op, d, ins, outs, vectors).err();
    if let Some(e) = failed {
        quabla_rt_fail(e.bytes as u64);
    }
}

unsafe fn compute<T: Element>(op: &LinalgOp, d: DType, ins: &[*const Unranked], outs: &[*const Unranked], vectors: bool) -> Result<(), OutOfMemory> {
    let (a, ash) = read::<T>(ins[0]);
    let at = TensorType::new(d, ash);
    let b = ins.get(1).map(|u| read::<T>(*u));
    let bt = b.as_ref().map(|(_, s)| TensorType::new(d, s.clone()));
    let b_vals = b.as_ref().map(|(v, _)| &v[..]);
    // The results are the lowering's fresh (contiguous) buffers: the kernels write into them
    // directly; anything else goes through `run`'s vectors and a strided write.
    let (fs, is) = result_sizes(op, &at, bt.as_ref());
    if outs.len() == fs.len() + is.len() {
        let fv: Vec<_> = outs[..fs.len()].iter().map(|u| view::<T>(*u)).collect();
        let iv: Vec<_> = outs[fs.len()..].iter().map(|u| view::<i32>(*u)).collect();
        let fits = |sizes: &[i64], strides: &[i64], n: usize| contiguous(sizes, strides) && quabla_dialect::size::saturating_product(sizes.iter().copied()) as usize == n;
        if fv.iter().zip(&fs).all(|((_, s, t), &n)| fits(s, t, n)) && iv.iter().zip(&is).all(|((_, s, t), &n)| fits(s, t, n)) {
            let mut floats: Vec<&mut [T]> = fv.iter().zip(&fs).map(|((p, _, _), &n)| slice_mut(*p, n)).collect();
            let mut ints: Vec<&mut [i32]> = iv.iter().zip(&is).map(|((p, _, _), &n)| slice_mut(*p, n)).collect();
            T::run_into(op, &a, &at, b_vals, bt.as_ref(), &mut floats, &mut ints, vectors);
            return Ok(());
        }
    }
    let res = T::run(op, &a, &at, b_vals, bt.as_ref())?;
    for (r, u) in res.iter().zip(outs) {
        match r {
            Out::F(v) => write(*u, v),
            Out::I(v) => write(*u, v),
        }
    }
    Ok(())
}

/// The `n` elements at `p` (a result buffer), or an empty slice without reading `p`.
unsafe fn slice_mut<'a, T>(p: *mut T, n: usize) -> &'a mut [T] {
    if n == 0 {
        return &mut [];
    }
    std::slice::from_raw_parts_mut(p, n)
}

macro_rules! kernels {
    ($t:ty, $d:expr, $chol:ident, $trsm:ident, $lu:ident, $qr:ident, $eigh:ident, $svd:ident) => {
        unsafe extern "C" fn $chol(a: *const Unranked, l: *const Unranked, lower: i64) {
            call::<$t>(&LinalgOp::Cholesky { lower: lower != 0 }, $d, &[a], &[l])
        }
        #[allow(clippy::too_many_arguments)]
        unsafe extern "C" fn $trsm(a: *const Unranked, b: *const Unranked, x: *const Unranked, left_side: i64, lower: i64, transpose_a: i64, unit_diagonal: i64) {
            let op = LinalgOp::TriangularSolve { left_side: left_side != 0, lower: lower != 0, transpose_a: transpose_a != 0, unit_diagonal: unit_diagonal != 0 };
            call::<$t>(&op, $d, &[a, b], &[x])
        }
        unsafe extern "C" fn $lu(a: *const Unranked, lu: *const Unranked, piv: *const Unranked, perm: *const Unranked) {
            call::<$t>(&LinalgOp::Lu {}, $d, &[a], &[lu, piv, perm])
        }
        unsafe extern "C" fn $qr(a: *const Unranked, q: *const Unranked, r: *const Unranked, full: i64, vectors: i64) {
            call_with::<$t>(&LinalgOp::Qr { full_matrices: full != 0 }, $d, &[a], &[q, r], vectors != 0)
        }
        unsafe extern "C" fn $eigh(a: *const Unranked, v: *const Unranked, w: *const Unranked, lower: i64, vectors: i64) {
            call_with::<$t>(&LinalgOp::Eigh { lower: lower != 0 }, $d, &[a], &[v, w], vectors != 0)
        }
        #[allow(clippy::too_many_arguments)]
        unsafe extern "C" fn $svd(a: *const Unranked, u: *const Unranked, s: *const Unranked, vt: *const Unranked, full: i64, vectors: i64) {
            call_with::<$t>(&LinalgOp::Svd { full_matrices: full != 0 }, $d, &[a], &[u, s, vt], vectors != 0)
        }
    };
}

kernels!(f32, DType::F32, chol_f32, trsm_f32, lu_f32, qr_f32, eigh_f32, svd_f32);
kernels!(f64, DType::F64, chol_f64, trsm_f64, lu_f64, qr_f64, eigh_f64, svd_f64);

/// Every kernel, these, the sort kernels (crate::sort_kernels), the products
/// (crate::gemm) and the transposes (crate::layout_kernels): (C interface symbol,
/// address).
pub(crate) fn symbols() -> Vec<(&'static str, *mut ())> {
    let mut v = vec![
        ("_mlir_ciface_quabla_linalg_cholesky_f32", chol_f32 as *mut ()),
        ("_mlir_ciface_quabla_linalg_triangular_solve_f32", trsm_f32 as *mut ()),
        ("_mlir_ciface_quabla_linalg_lu_f32", lu_f32 as *mut ()),
        ("_mlir_ciface_quabla_linalg_qr_f32", qr_f32 as *mut ()),
        ("_mlir_ciface_quabla_linalg_eigh_f32", eigh_f32 as *mut ()),
        ("_mlir_ciface_quabla_linalg_svd_f32", svd_f32 as *mut ()),
        ("_mlir_ciface_quabla_linalg_cholesky_f64", chol_f64 as *mut ()),
        ("_mlir_ciface_quabla_linalg_triangular_solve_f64", trsm_f64 as *mut ()),
        ("_mlir_ciface_quabla_linalg_lu_f64", lu_f64 as *mut ()),
        ("_mlir_ciface_quabla_linalg_qr_f64", qr_f64 as *mut ()),
        ("_mlir_ciface_quabla_linalg_eigh_f64", eigh_f64 as *mut ()),
        ("_mlir_ciface_quabla_linalg_svd_f64", svd_f64 as *mut ()),
    ];
    v.extend(crate::sort_kernels::symbols());
    v.extend(crate::gemm::symbols());
    v.extend(crate::layout_kernels::symbols());
    v.extend(crate::reduce_kernels::symbols());
    v
}

/// Registers the kernels with a freshly created engine (before its first lookup).
///
/// # Safety
/// `engine` must be a live execution engine.
pub unsafe fn register(engine: mlir_sys::MlirExecutionEngine) {
    for (name, ptr) in symbols() {
        mlir_sys::mlirExecutionEngineRegisterSymbol(engine, melior::StringRef::new(name).to_raw(), ptr as *mut std::ffi::c_void);
    }
}
