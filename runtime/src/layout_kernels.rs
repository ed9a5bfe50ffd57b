//! The transposing copy compiled programs call (`quabla_transpose_<dtype>`, see
//! `quabla_lowering::linalg::layout`): a large transpose of 4- or 8-byte elements that swaps
//! two groups of dims runs `quabla_kernels::transpose` (tiled, AVX shuffles) on libomp's team.
//! The C interface symbols `_mlir_ciface_quabla_transpose_<dtype>` take unranked memref
//! descriptors: the operand viewed as `[batch, rows, cols]` (read in place through its strides),
//! the result `[batch, cols, rows]` (contiguous), then the threads as `i64`. The element type
//! only fixes the size: f32, i32 and u32 share one function, f64, i64 and u64 another.
use quabla_kernels::gemm::{Real, Serial, Team};
use quabla_kernels::transpose::transpose;

use crate::gemm::Omp;
use crate::linalg_kernels::{parts, Unranked};

/// Transposes each batch element of `src` into `dst` (elements of type `T`, the size that
/// matters).
unsafe fn run<T: Real>(src: *const Unranked, dst: *const Unranked, threads: i64) {
    let (sp, ssz, sst) = parts::<T>(src);
    let (dp, dsz, dst_strides) = parts::<T>(dst);
    if ssz.len() != 3 || dsz.len() != 3 {
        return;
    }
    let (batch, rows, cols) = (ssz[0].max(0) as usize, ssz[1].max(0) as usize, ssz[2].max(0) as usize);
    let team = Omp::new(threads);
    let strided = !(sst[2] == 1 && dst_strides[2] == 1);
    if !strided && batch > 1 && threads > 1 && rows * cols < 1 << 16 {
        // Small matrices: the batch split between the threads, each matrix on one
        // ([256, 256, 64] f32 transposed to [256, 64, 256] ran on one thread, 1815 us, JAX
        // 838-2242).
        let (sp, dp) = (sp as usize, dp as usize);
        let body = move |t: usize, n: usize| {
            let n = n.max(1);
            for b in batch * t / n..batch * (t + 1) / n {
                let s = (sp as *const T).offset(b as isize * sst[0] as isize);
                let d = (dp as *mut T).offset(b as isize * dst_strides[0] as isize);
                transpose(s, sst[1] as isize, [rows, cols], d, dst_strides[1] as usize, &Serial);
            }
        };
        team.run(&body);
        return;
    }
    for b in 0..batch {
        let s = sp.offset(b as isize * sst[0] as isize);
        let d = dp.offset(b as isize * dst_strides[0] as isize);
        if sst[2] == 1 && dst_strides[2] == 1 {
            let team: &dyn Team = if rows * cols >= 1 << 16 { &team } else { &Serial };
            transpose(s as *const T, sst[1] as isize, [rows, cols], d, dst_strides[1] as usize, team);
        } else {
            // Strided columns (never from the lowering's views, kept for completeness).
            for r in 0..rows {
                for c in 0..cols {
                    *d.offset(c as isize * dst_strides[1] as isize + r as isize * dst_strides[2] as isize) = *s.offset(r as isize * sst[1] as isize + c as isize * sst[2] as isize);
                }
            }
        }
    }
}

unsafe extern "C" fn transpose_4(src: *const Unranked, dst: *const Unranked, threads: i64) {
    run::<f32>(src, dst, threads)
}

unsafe extern "C" fn transpose_8(src: *const Unranked, dst: *const Unranked, threads: i64) {
    run::<f64>(src, dst, threads)
}

/// (C interface symbol, address) of each transpose kernel.
pub(crate) fn symbols() -> Vec<(&'static str, *mut ())> {
    vec![
        ("_mlir_ciface_quabla_transpose_f32", transpose_4 as *mut ()),
        ("_mlir_ciface_quabla_transpose_i32", transpose_4 as *mut ()),
        ("_mlir_ciface_quabla_transpose_f64", transpose_8 as *mut ()),
        ("_mlir_ciface_quabla_transpose_i64", transpose_8 as *mut ()),
    ]
}
