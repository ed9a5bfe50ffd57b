//! The sort kernels the CPU lowering calls (`quabla_sort_<dtype>`,
//! `quabla_argsort_<dtype>_<index dtype>`, see `quabla_lowering::linalg::sort`), registered
//! with each JIT'ed module beside the linear-algebra kernels (crate::linalg_kernels, whose
//! memref access they share). Each takes the operand and result descriptors, the sorted
//! dimension, 1 for descending, how many leading places of each lane to write (the rest
//! of the result is never read: the lowering passes fewer only when slices of those places
//! are the result's only users, as in `top_k`) and the threads the lanes are split between
//! (libomp's team, as the products').
//!
//! Every lane along the dimension is sorted in O(n log n): each element becomes the pair
//! (order key, index in the lane), where the key is an unsigned integer in the op's order
//! (floats: sign-magnitude bits flipped to two's-complement order, -0.0 as 0.0, every NaN
//! the largest key; signed integers: the sign bit flipped; descending: the complemented key),
//! and the pairs are sorted by an unstable sort. The index breaks ties, so the result is the
//! stable sort of docs/spec.md (NumPy's total order: NaN last ascending, first descending).
//! The interpreter's sort (interp/src/sort.rs, a comparison sort) is the independent oracle.
use quabla_kernels::gemm::Team;

use crate::gemm::Omp;
use crate::linalg_kernels::{contiguous, read, view, write, Unranked};

/// An element's order key: `a.key() < b.key()` iff a sorts before b ascending.
trait Key: Copy {
    fn key(self) -> u64;
}

impl Key for f32 {
    fn key(self) -> u64 {
        if self.is_nan() {
            return u64::MAX;
        }
        let b = if self == 0.0 { 0 } else { self.to_bits() };
        // Negatives: all bits flipped; the others: the sign bit set (branch-free: the sign
        // of random data is not predictable).
        let neg = ((b as i32) >> 31) as u32;
        u64::from(b ^ (neg | 1 << 31))
    }
}

impl Key for f64 {
    fn key(self) -> u64 {
        if self.is_nan() {
            return u64::MAX;
        }
        let b = if self == 0.0 { 0 } else { self.to_bits() };
        let neg = ((b as i64) >> 63) as u64;
        b ^ (neg | 1 << 63)
    }
}

impl Key for i32 {
    fn key(self) -> u64 {
        (self as i64 as u64) ^ (1 << 63)
    }
}

impl Key for i64 {
    fn key(self) -> u64 {
        (self as u64) ^ (1 << 63)
    }
}

/// u8 and i1 (a byte 0/1 in memory).
impl Key for u8 {
    fn key(self) -> u64 {
        u64::from(self)
    }
}

impl Key for u32 {
    fn key(self) -> u64 {
        u64::from(self)
    }
}

/// An argsort index type.
trait Index: Copy {
    fn from_index(k: usize) -> Self;
}

macro_rules! index_types {
    ($($t:ty),*) => {$(
        impl Index for $t {
            fn from_index(k: usize) -> Self {
                k as $t
            }
        }
    )*};
}
index_types!(i32, i64, u8, u32);

/// Up to this many leading places are kept in a sorted buffer while the lane streams by;
/// more are selected (`select_nth_unstable`) from all of the lane's pairs.
const FEW_PLACES: usize = 32;

/// Calls `f(destination, source, source index along dim)` (flat row-major positions) for
/// the first `places` elements of the stable sort of every lane of `x` (shape `shape`) along
/// `dim` (all of them when `places` is at least the lane's length), the lanes split between
/// the threads of `team` (each calls `f` for its own lanes: `f` must write disjoint places).
/// Fewer places are selected first (`select_nth_unstable`, linear), then only they are
/// sorted.
fn sorted_lanes<T: Key + Sync>(x: &[T], shape: &[i64], dim: usize, desc: bool, places: usize, team: &dyn Team, f: &(dyn Fn(usize, usize, usize) + Sync)) {
    let n = shape[dim] as usize;
    let places = places.min(n);
    // Sub-products of the extents of a program type (checked when the program was built).
    let outer = quabla_dialect::size::saturating_product(shape[..dim].iter().copied()) as usize;
    let inner = quabla_dialect::size::saturating_product(shape[dim + 1..].iter().copied()) as usize;
    let lanes = outer * inner;
    if places == 0 || lanes == 0 {
        return;
    }
    let flip = if desc { u64::MAX } else { 0 };
    let body = |t: usize, threads: usize| {
        let threads = threads.max(1);
        let mut pairs: Vec<(u64, usize)> = Vec::with_capacity(n);
        for lane in lanes * t / threads..lanes * (t + 1) / threads {
            let base = lane / inner * n * inner + lane % inner;
            pairs.clear();
            if places <= FEW_PLACES && places < n {
                // A sorted buffer of the best pairs so far: most elements fail the one
                // comparison with its last.
                // Full, an element enters only with a key below the last's (an equal key
                // comes later in the lane, so after it).
                let mut worst = u64::MAX;
                for k in 0..n {
                    let key = x[base + k * inner].key() ^ flip;
                    if pairs.len() == places {
                        if key >= worst {
                            continue;
                        }
                        pairs.pop();
                    }
                    let p = (key, k);
                    let at = pairs.partition_point(|q| *q < p);
                    pairs.insert(at, p);
                    if pairs.len() == places {
                        worst = pairs[places - 1].0;
                    }
                }
            } else {
                pairs.extend((0..n).map(|k| (x[base + k * inner].key() ^ flip, k)));
                if places < n {
                    pairs.select_nth_unstable(places - 1);
                    pairs.truncate(places);
                }
                pairs.sort_unstable();
            }
            for (pos, &(_, k)) in pairs.iter().enumerate() {
                f(base + pos * inner, base + k * inner, k);
            }
        }
    };
    if team.threads() > 1 && lanes > 1 {
        team.run(&body);
    } else {
        body(0, 1);
    }
}

/// A raw pointer the team's threads write disjoint elements through.
#[derive(Clone, Copy)]
struct Out<T>(*mut T);
// SAFETY: each thread writes the places of its own lanes only.
unsafe impl<T> Send for Out<T> {}
unsafe impl<T> Sync for Out<T> {}

unsafe fn sort_call<T: Key + Sync>(x: *const Unranked, out: *const Unranked, dim: i64, desc: i64, places: i64, threads: i64) {
    let (v, shape) = read::<T>(x);
    if v.is_empty() {
        return;
    }
    let places = places.max(0) as usize;
    let (p, sizes, strides) = view::<T>(out);
    let team = Omp::new(threads);
    if places < shape[dim as usize] as usize && contiguous(&sizes, &strides) {
        // Only the places read are written.
        let o = Out(p);
        sorted_lanes(&v, &shape, dim as usize, desc != 0, places, &team, &|to, from, _| *{ o }.0.add(to) = v[from]);
        return;
    }
    let mut res = vec![v[0]; v.len()];
    let o = Out(res.as_mut_ptr());
    sorted_lanes(&v, &shape, dim as usize, desc != 0, places, &team, &|to, from, _| *{ o }.0.add(to) = v[from]);
    write(out, &res);
}

unsafe fn argsort_call<T: Key + Sync, I: Index>(x: *const Unranked, out: *const Unranked, dim: i64, desc: i64, places: i64, threads: i64) {
    let (v, shape) = read::<T>(x);
    let places = places.max(0) as usize;
    let (p, sizes, strides) = view::<I>(out);
    let team = Omp::new(threads);
    if !v.is_empty() && places < shape[dim as usize] as usize && contiguous(&sizes, &strides) {
        let o = Out(p);
        sorted_lanes(&v, &shape, dim as usize, desc != 0, places, &team, &|to, _, k| *{ o }.0.add(to) = I::from_index(k));
        return;
    }
    let mut res = vec![I::from_index(0); v.len()];
    let o = Out(res.as_mut_ptr());
    sorted_lanes(&v, &shape, dim as usize, desc != 0, places, &team, &|to, _, k| *{ o }.0.add(to) = I::from_index(k));
    write(out, &res);
}

/// The kernels (one C function each) and their C interface symbols.
macro_rules! kernels {
    ($($name:literal => $f:ident = $call:ident::<$($g:ty),+>;)*) => {
        $(
            unsafe extern "C" fn $f(x: *const Unranked, out: *const Unranked, dim: i64, desc: i64, places: i64, threads: i64) {
                $call::<$($g),+>(x, out, dim, desc, places, threads)
            }
        )*
        /// Every kernel: (C interface symbol, address).
        pub(crate) fn symbols() -> Vec<(&'static str, *mut ())> {
            vec![$((concat!("_mlir_ciface_", $name), $f as *mut ())),*]
        }
    };
}

kernels! {
    "quabla_sort_f32" => sort_f32 = sort_call::<f32>;
    "quabla_sort_f64" => sort_f64 = sort_call::<f64>;
    "quabla_sort_i1" => sort_i1 = sort_call::<u8>;
    "quabla_sort_i32" => sort_i32 = sort_call::<i32>;
    "quabla_sort_i64" => sort_i64 = sort_call::<i64>;
    "quabla_sort_ui8" => sort_u8 = sort_call::<u8>;
    "quabla_sort_ui32" => sort_u32 = sort_call::<u32>;
    "quabla_argsort_f32_i32" => argsort_f32_i32 = argsort_call::<f32, i32>;
    "quabla_argsort_f32_i64" => argsort_f32_i64 = argsort_call::<f32, i64>;
    "quabla_argsort_f32_ui8" => argsort_f32_u8 = argsort_call::<f32, u8>;
    "quabla_argsort_f32_ui32" => argsort_f32_u32 = argsort_call::<f32, u32>;
    "quabla_argsort_f64_i32" => argsort_f64_i32 = argsort_call::<f64, i32>;
    "quabla_argsort_f64_i64" => argsort_f64_i64 = argsort_call::<f64, i64>;
    "quabla_argsort_f64_ui8" => argsort_f64_u8 = argsort_call::<f64, u8>;
    "quabla_argsort_f64_ui32" => argsort_f64_u32 = argsort_call::<f64, u32>;
    "quabla_argsort_i1_i32" => argsort_i1_i32 = argsort_call::<u8, i32>;
    "quabla_argsort_i1_i64" => argsort_i1_i64 = argsort_call::<u8, i64>;
    "quabla_argsort_i1_ui8" => argsort_i1_u8 = argsort_call::<u8, u8>;
    "quabla_argsort_i1_ui32" => argsort_i1_u32 = argsort_call::<u8, u32>;
    "quabla_argsort_i32_i32" => argsort_i32_i32 = argsort_call::<i32, i32>;
    "quabla_argsort_i32_i64" => argsort_i32_i64 = argsort_call::<i32, i64>;
    "quabla_argsort_i32_ui8" => argsort_i32_u8 = argsort_call::<i32, u8>;
    "quabla_argsort_i32_ui32" => argsort_i32_u32 = argsort_call::<i32, u32>;
    "quabla_argsort_i64_i32" => argsort_i64_i32 = argsort_call::<i64, i32>;
    "quabla_argsort_i64_i64" => argsort_i64_i64 = argsort_call::<i64, i64>;
    "quabla_argsort_i64_ui8" => argsort_i64_u8 = argsort_call::<i64, u8>;
    "quabla_argsort_i64_ui32" => argsort_i64_u32 = argsort_call::<i64, u32>;
    "quabla_argsort_ui8_i32" => argsort_u8_i32 = argsort_call::<u8, i32>;
    "quabla_argsort_ui8_i64" => argsort_u8_i64 = argsort_call::<u8, i64>;
    "quabla_argsort_ui8_ui8" => argsort_u8_u8 = argsort_call::<u8, u8>;
    "quabla_argsort_ui8_ui32" => argsort_u8_u32 = argsort_call::<u8, u32>;
    "quabla_argsort_ui32_i32" => argsort_u32_i32 = argsort_call::<u32, i32>;
    "quabla_argsort_ui32_i64" => argsort_u32_i64 = argsort_call::<u32, i64>;
    "quabla_argsort_ui32_ui8" => argsort_u32_u8 = argsort_call::<u32, u8>;
    "quabla_argsort_ui32_ui32" => argsort_u32_u32 = argsort_call::<u32, u32>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_follow_numpys_total_order() {
        let xs = [f64::NEG_INFINITY, -1e300, -1.0, -f64::MIN_POSITIVE, -5e-324, 0.0, 5e-324, 1.0, f64::INFINITY, f64::NAN];
        for w in xs.windows(2) {
            assert!(w[0].key() < w[1].key(), "{} before {}", w[0], w[1]);
            assert!((w[0] as f32).key() <= (w[1] as f32).key(), "{} before {} (f32)", w[0], w[1]);
        }
        assert_eq!((-0.0f64).key(), 0.0f64.key());
        assert_eq!((-f64::NAN).key(), f64::NAN.key());
        assert!(i32::MIN.key() < (-1i32).key() && (-1i32).key() < 0i32.key() && 0i32.key() < i32::MAX.key());
        assert!(i64::MIN.key() < (-1i64).key() && (-1i64).key() < 0i64.key());
    }

    /// The argsort places of `sorted_lanes` on `team` (usize::MAX where none is written).
    fn perm(x: &[f64], shape: &[i64], dim: usize, desc: bool, places: usize, team: &dyn Team) -> Vec<usize> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let out: Vec<AtomicUsize> = x.iter().map(|_| AtomicUsize::new(usize::MAX)).collect();
        sorted_lanes(x, shape, dim, desc, places, team, &|to, _, k| out[to].store(k, Ordering::Relaxed));
        out.into_iter().map(|a| a.into_inner()).collect()
    }

    fn teams() -> [Box<dyn Team>; 2] {
        [Box::new(quabla_kernels::gemm::Serial), Box::new(quabla_kernels::gemm::Scoped::new(3))]
    }

    #[test]
    fn lanes_are_stable_in_both_directions() {
        // Shape (2, 3) sorted along dim 0 and dim 1; ties keep their order; one thread or the
        // lanes split between three.
        let x = [3.0, f64::NAN, 1.0, 1.0, 2.0, 1.0];
        for team in teams() {
            assert_eq!(perm(&x, &[2, 3], 1, false, usize::MAX, &*team), [2, 0, 1, 0, 2, 1]);
            assert_eq!(perm(&x, &[2, 3], 1, true, usize::MAX, &*team), [1, 0, 2, 1, 0, 2]);
            assert_eq!(perm(&x, &[2, 3], 0, false, usize::MAX, &*team), [1, 1, 0, 0, 0, 1]);
        }
    }

    #[test]
    fn leading_places_are_those_of_the_whole_sort() {
        // Lanes of 200 with many ties: the first k places selected equal the full sort's, on
        // one thread and on three.
        let x: Vec<f64> = (0..600).map(|i| ((i * 37) % 23) as f64 - if i % 7 == 0 { f64::NAN } else { 0.0 }).collect();
        for team in teams() {
            for desc in [false, true] {
                for dim in [0, 1] {
                    let shape = if dim == 0 { [200, 3] } else { [3, 200] };
                    let full = perm(&x, &shape, dim, desc, usize::MAX, &quabla_kernels::gemm::Serial);
                    for k in [0, 1, 5, 199, 200] {
                        let part = perm(&x, &shape, dim, desc, k, &*team);
                        for (to, (&p, &f)) in part.iter().zip(&full).enumerate() {
                            let place = if dim == 0 { to / 3 } else { to % 200 };
                            assert_eq!(p, if place < k { f } else { usize::MAX }, "dim {dim} desc {desc} k {k} at {to}");
                        }
                    }
                }
            }
        }
    }
}
