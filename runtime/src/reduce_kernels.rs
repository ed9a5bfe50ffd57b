//! The sums compiled programs call (`quabla_sum_<dtype>`, see quabla_lowering's
//! `reduce::runtime_sum`): the sum of an f32/f64 parameter over its trailing dims (the rows of
//! its `[m, n]` view) or its leading dims (the columns) runs `quabla_kernels::reduce::sums` on
//! libomp's team. The C interface symbols `_mlir_ciface_quabla_sum_<dtype>` take unranked
//! memref descriptors, the operand viewed as `[m, n]` (read in place: its rows contiguous,
//! else an element loop) and the result (`[m]` or `[n]`, contiguous), then `columns` and the
//! threads as `i64`.
use quabla_kernels::gemm::{Serial, Team};
use quabla_kernels::reduce::{sums, Summand};

use crate::gemm::Omp;
use crate::linalg_kernels::{parts, Unranked};

unsafe fn run<T: Summand>(x: *const Unranked, out: *const Unranked, columns: i64, threads: i64) {
    let (xp, xs, xst) = parts::<T>(x);
    let (op, os, ost) = parts::<T>(out);
    if xs.len() != 2 || os.len() != 1 {
        return;
    }
    let (m, n) = (xs[0].max(0) as usize, xs[1].max(0) as usize);
    let columns = columns != 0;
    if xst[1] != 1 || ost[0] != 1 || xst[0] < 0 {
        // Strided views (never from the lowering's reshapes of parameters, kept for
        // completeness): element by element, in row order.
        let at = |i: usize, j: usize| *xp.offset(i as isize * xst[0] as isize + j as isize * xst[1] as isize);
        for k in 0..os[0].max(0) as usize {
            let mut s = T::default();
            if columns {
                (0..m).for_each(|i| s = s + at(i, k));
            } else {
                (0..n).for_each(|j| s = s + at(k, j));
            }
            *op.offset(k as isize * ost[0] as isize) = s;
        }
        return;
    }
    let team = Omp::new(threads);
    let team: &dyn Team = if threads > 1 { &team } else { &Serial };
    sums(xp, [m, n], xst[0] as usize, columns, op, team);
}

unsafe extern "C" fn sum_f32(x: *const Unranked, out: *const Unranked, columns: i64, threads: i64) {
    run::<f32>(x, out, columns, threads)
}

unsafe extern "C" fn sum_f64(x: *const Unranked, out: *const Unranked, columns: i64, threads: i64) {
    run::<f64>(x, out, columns, threads)
}

/// (C interface symbol, address) of each sum kernel.
pub(crate) fn symbols() -> Vec<(&'static str, *mut ())> {
    vec![("_mlir_ciface_quabla_sum_f32", sum_f32 as *mut ()), ("_mlir_ciface_quabla_sum_f64", sum_f64 as *mut ())]
}
