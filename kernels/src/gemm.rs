//! `C = A B` (or `C += A B`) for `f32` and `f64` matrices of any strides, blocked as in
//! Goto and van de Geijn's GEMM: for each block of `nc` columns and each block of `kc` rows
//! of B, the block of B is packed into contiguous `kc x NR` panels, then the rows of A are
//! taken in blocks of `mc` rows, each packed into `kc x MR` micro-panels (or read in place
//! when few panels read it, [`IN_PLACE_PANELS`]), and the micro-kernel multiplies one
//! micro-panel by one panel into an `MR x NR` tile of C held in registers over the whole K
//! block. The panel (`kc x NR`) stays in L1 while the row block's micro-panels pass over it;
//! the packed row block (`mc x kc`) stays in L2 while the panels pass.
//!
//! Ragged edges are zero-padded in the packed copies (the last micro-panel's rows, the last
//! panel's columns); their tiles are computed in a scratch tile and the valid part copied
//! into C. Each element of C is one chain of fused multiply-adds over K in order (a K block
//! continues from the sums the previous one left in C), the sum a sequential loop with FMA
//! computes: the same on any number of threads and any blocking.
//!
//! Threads ([`Team`]): each thread takes an even share of the panels (columns of C), packs
//! those panels of every B block and all of A's row blocks itself, and computes its columns:
//! no thread reads what another wrote, so there is no barrier. Measured against splitting
//! the rows (B blocks packed by the team, a barrier after packing and after computing;
//! two threads of the Xeon of 2026-12-04, GFLOP/s, two alternations): 1024^3 f32 363-369 ->
//! 375-379, 256x784x512 307-311 -> 354-359, 256x512x784 290-298 -> 335-337, 4096x64x4096
//! 327-337 -> 350-360, 1024^3 f64 164-166 -> 178-180. Narrow products split the rows.
use std::cell::RefCell;

/// A matrix view: element `(i, j)` at `ptr + i * rs + j * cs` (in elements).
#[derive(Clone, Copy, Debug)]
pub struct Mat<T> {
    pub ptr: *const T,
    pub rs: isize,
    pub cs: isize,
}

/// One product: C (`m x n`, rows `ldc` apart, columns contiguous) = A (`m x k`) B (`k x n`),
/// or C += A B with `accumulate`.
#[derive(Clone, Copy, Debug)]
pub struct Problem<T> {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub a: Mat<T>,
    pub b: Mat<T>,
    pub c: *mut T,
    pub ldc: isize,
    pub accumulate: bool,
}

// SAFETY: the views are plain addresses the caller keeps valid for the call; threads write
// disjoint tiles of C.
unsafe impl<T> Send for Problem<T> {}
unsafe impl<T> Sync for Problem<T> {}

/// The threads a product runs on: `run` calls `body(thread, threads)` once on each of them
/// and returns when all have returned; `barrier` (called by every thread of a `run`, the same
/// number of times) returns when all threads have reached it.
pub trait Team: Sync {
    /// The most threads a `run` uses.
    fn threads(&self) -> usize;
    fn run(&self, body: &(dyn Fn(usize, usize) + Sync));
    fn barrier(&self);
}

/// The calling thread alone.
pub struct Serial;

impl Team for Serial {
    fn threads(&self) -> usize {
        1
    }
    fn run(&self, body: &(dyn Fn(usize, usize) + Sync)) {
        body(0, 1)
    }
    fn barrier(&self) {}
}

/// `n` scoped `std` threads per `run` with a `std::sync::Barrier` (tests and benchmarks; the
/// CPU runtime's team is OpenMP's).
pub struct Scoped {
    n: usize,
    barrier: std::sync::Barrier,
}

impl Scoped {
    pub fn new(n: usize) -> Scoped {
        Scoped { n: n.max(1), barrier: std::sync::Barrier::new(n.max(1)) }
    }
}

impl Team for Scoped {
    fn threads(&self) -> usize {
        self.n
    }
    fn run(&self, body: &(dyn Fn(usize, usize) + Sync)) {
        std::thread::scope(|s| {
            for t in 1..self.n {
                s.spawn(move || body(t, self.n));
            }
            body(0, self.n);
        });
    }
    fn barrier(&self) {
        self.barrier.wait();
    }
}

/// An element type with micro-kernels.
pub trait Real: Copy + Default + Send + Sync + std::ops::AddAssign + 'static {
    /// The best micro-kernel for the host.
    fn kernel() -> Kernel<Self>;
    /// The portable micro-kernel (any host).
    fn portable() -> Kernel<Self>;
    /// Every micro-kernel the host can run (tests).
    fn all() -> Vec<Kernel<Self>>;
    /// The narrow kernel and its lanes (the most columns it takes), where the host has one
    /// (AVX-512: 16 f32 / 8 f64 columns).
    fn narrow() -> Option<(NarrowFn<Self>, usize)>;
    /// The row-dot kernel ([`RowDotFn`]), where the host has one (AVX-512).
    fn row_dots() -> Option<RowDotFn<Self>>;
    /// The short kernel ([`ShortFn`]) and its lanes, where the host has one (AVX-512).
    fn short() -> Option<(ShortFn<Self>, usize)>;

    /// Transposing copy: element `p` of row `r` (`src + r * rs + p`, `r < rows`, `p < len`)
    /// to `dst[p * ds + r]`. With `stream`, the full blocks are written with non-temporal
    /// stores (then `dst` and `ds` must keep every block 32-byte aligned) and fenced.
    ///
    /// # Safety
    /// The rows are readable and `dst` writable for these extents.
    unsafe fn transpose(src: *const Self, rs: isize, rows: usize, len: usize, dst: *mut Self, ds: usize, stream: bool) {
        let _ = stream;
        transpose_scalar(src, rs, rows, len, dst, ds, 0)
    }
}

/// [`Real::transpose`] one element at a time, from element `from` of each row.
unsafe fn transpose_scalar<T: Copy>(src: *const T, rs: isize, rows: usize, len: usize, dst: *mut T, ds: usize, from: usize) {
    for r in 0..rows {
        let s = src.offset(r as isize * rs);
        for p in from..len {
            *dst.add(p * ds + r) = *s.add(p);
        }
    }
}

/// `C[0..MR, 0..NR] (+)= A_panel B_panel` over `kc` steps: `a` packed `kc x mr` (MR
/// elements per step), `b` packed `kc x nr`, C's rows `ldc` apart; with `load` each element's
/// sum continues from C's value (one FMA per step, in order), else starts from zero.
/// `a_strides`: A's elements `[along K, between rows]` apart; the packed kernel ([`Kernel::f`])
/// ignores them (its micro-panels are `[MR, 1]`), the strided one ([`Kernel::fs`]) reads A in
/// place through them.
pub type MicroFn<T> = unsafe fn(kc: usize, a: *const T, a_strides: [isize; 2], b: *const T, c: *mut T, ldc: usize, load: bool);

/// The narrow kernel: `C[0..rows, 0..cols] (+)= A B` for products of at most one vector of
/// columns (`cols` <= the vector's lanes): `a` A's first row in place (`a_strides`: `[along
/// K, between rows]`), `b` the `k x lanes` panel of B (zero past `cols`, 64-byte aligned), C's
/// rows `ldc` apart written under a lane mask; with `load` each element's sum continues from
/// C's value. Each element is one chain of fused multiply-adds over K in order, as in the
/// packed kernels.
/// A kernel of products with one column and A's rows contiguous along K: `rows` dot
/// products of A's rows (`a_row` apart) with the contiguous `b`, into `c` (`ldc` apart;
/// added to its values with `load`).
/// The short kernel: `rows` (at most [`SHORT_ROWS`]) rows of C (`ldc` apart) = (or += with
/// `load`) A (rows `strides[1]` apart, K steps `strides[0]`) times the first `cols` columns of B
/// read in place (rows `ldb` apart, columns contiguous); `cols` at most the kernel's vectors
/// for `rows` times the lanes ([`short_columns`]). Returns false for more rows.
pub type ShortFn<T> = unsafe fn(k: usize, a: *const T, a_strides: [isize; 2], b: *const T, ldb: isize, c: *mut T, ldc: usize, rows: usize, cols: usize, load: bool) -> bool;
pub type RowDotFn<T> = unsafe fn(k: usize, a: *const T, a_row: isize, b: *const T, c: *mut T, ldc: usize, rows: usize, load: bool);

pub type NarrowFn<T> = unsafe fn(k: usize, a: *const T, a_strides: [isize; 2], b: *const T, c: *mut T, ldc: usize, cols: usize, rows: usize, load: bool);

/// A micro-kernel and its register tile.
#[derive(Clone, Copy)]
pub struct Kernel<T: 'static> {
    pub mr: usize,
    pub nr: usize,
    /// On a packed micro-panel.
    pub f: MicroFn<T>,
    /// On A in place (its strides given).
    pub fs: MicroFn<T>,
    pub name: &'static str,
    /// Narrower kernels of the same `mr` (widths ascending, each below `nr`) for the last
    /// panel of a ragged N ([`Kernel::fit`]): its columns are packed and computed at the
    /// narrowest width that holds them, not padded with zeros to `nr`.
    pub edges: &'static [Edge<T>],
}

/// A narrower micro-kernel of a [`Kernel`]: `nr` columns, the same rows.
#[derive(Clone, Copy)]
pub struct Edge<T> {
    pub nr: usize,
    pub f: MicroFn<T>,
    pub fs: MicroFn<T>,
}

impl<T> Kernel<T> {
    /// The narrowest of the kernel and its edges that holds `cols` columns (the kernel
    /// itself for `cols` past every edge): (width, packed kernel, in-place kernel).
    pub fn fit(&self, cols: usize) -> (usize, MicroFn<T>, MicroFn<T>) {
        match self.edges.iter().find(|e| e.nr >= cols) {
            Some(e) => (e.nr, e.f, e.fs),
            None => (self.nr, self.f, self.fs),
        }
    }
}

impl<T> std::fmt::Debug for Kernel<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}x{}", self.name, self.mr, self.nr)
    }
}

/// Which instruction set the host's micro-kernels use: "avx512", "avx2" or "portable".
pub fn isa() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f") {
            return "avx512";
        }
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
            return "avx2";
        }
    }
    "portable"
}

macro_rules! portable {
    ($name:ident, $t:ty, $mr:expr, $nr:expr) => {
        unsafe fn $name<const STRIDED: bool>(kc: usize, a: *const $t, a_strides: [isize; 2], b: *const $t, c: *mut $t, ldc: usize, load: bool) {
            let [step, row] = if STRIDED { a_strides } else { [$mr as isize, 1] };
            let mut acc = [[0 as $t; $nr]; $mr];
            if load {
                for i in 0..$mr {
                    for j in 0..$nr {
                        acc[i][j] = *c.add(i * ldc + j);
                    }
                }
            }
            for p in 0..kc {
                for i in 0..$mr {
                    let x = *a.offset(p as isize * step + i as isize * row);
                    for j in 0..$nr {
                        acc[i][j] = x.mul_add(*b.add(p * $nr + j), acc[i][j]);
                    }
                }
            }
            for i in 0..$mr {
                for j in 0..$nr {
                    *c.add(i * ldc + j) = acc[i][j];
                }
            }
        }
    };
}

portable!(portable_f32, f32, 4, 8);
portable!(portable_f64, f64, 4, 4);

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    // One micro-kernel: MR rows of broadcast A elements against NV vectors of B per step, the
    // MR x NV accumulators in registers.
    macro_rules! micro {
        ($name:ident, $feat:literal, $t:ty, $v:ty, $lanes:expr, $mr:expr, $nv:expr, $zero:ident, $set1:ident, $load:ident, $loadu:ident, $storeu:ident, $fmadd:ident) => {
            #[target_feature(enable = $feat)]
            pub(super) unsafe fn $name<const STRIDED: bool>(kc: usize, a: *const $t, a_strides: [isize; 2], b: *const $t, c: *mut $t, ldc: usize, load: bool) {
                const NR: usize = $lanes * $nv;
                // Packed: the constants fold into the addressing of the broadcasts.
                let [step, row] = if STRIDED { a_strides } else { [$mr as isize, 1] };
                // With `load` the sums continue from C's values (one FMA chain per element over
                // all of K, as a sequential sum would run).
                let mut acc: [[$v; $nv]; $mr] = [[$zero(); $nv]; $mr];
                if load {
                    for i in 0..$mr {
                        for v in 0..$nv {
                            acc[i][v] = $loadu(c.add(i * ldc + v * $lanes));
                        }
                    }
                }
                let (mut a, mut b) = (a, b);
                // One step of K: a row of the panel against a column of the micro-panel.
                macro_rules! step {
                    ($o:expr) => {
                        let mut bv: [$v; $nv] = [$zero(); $nv];
                        for v in 0..$nv {
                            bv[v] = $load(b.add($o * NR + v * $lanes));
                        }
                        for i in 0..$mr {
                            let x = $set1(*a.offset($o * step + i as isize * row));
                            for v in 0..$nv {
                                acc[i][v] = $fmadd(x, bv[v], acc[i][v]);
                            }
                        }
                    };
                }
                for _ in 0..kc / 4 {
                    step!(0);
                    step!(1);
                    step!(2);
                    step!(3);
                    a = a.offset(4 * step);
                    b = b.add(4 * NR);
                }
                for _ in 0..kc % 4 {
                    step!(0);
                    a = a.offset(step);
                    b = b.add(NR);
                }
                for i in 0..$mr {
                    for v in 0..$nv {
                        $storeu(c.add(i * ldc + v * $lanes), acc[i][v]);
                    }
                }
            }
        };
    }

    /// The blocks of a transposing copy: `$b x $b` blocks at (row `r0`, column `p`) of `src`
    /// by `$block`, column blocks outer and row strips inner (each column block's `$b` rows of
    /// `dst` are written along their length before the next block's while the tile's rows of
    /// `src` stay in L1; with the row strips outer each strip wrote a piece of every row of
    /// `dst`, rows that a power-of-two stride puts into one cache set, far more than its
    /// ways); the ragged rest one element at a time; a fence after non-temporal stores.
    macro_rules! blocked_transpose {
        ($b:expr, $src:ident, $rs:ident, $rows:ident, $len:ident, $dst:ident, $ds:ident, $stream:ident, |$s:ident, $d:ident, $p:ident| $block:block) => {{
            let (rfull, pfull) = ($rows / $b * $b, $len / $b * $b);
            let mut $p = 0;
            while $p < pfull {
                let mut r0 = 0;
                while r0 < rfull {
                    let $s = $src.offset(r0 as isize * $rs);
                    let $d = $dst.add(r0);
                    $block
                    r0 += $b;
                }
                $p += $b;
            }
            super::transpose_scalar($src, $rs, rfull, $len, $dst, $ds, pfull);
            super::transpose_scalar($src.offset(rfull as isize * $rs), $rs, $rows - rfull, $len, $dst.add(rfull), $ds, 0);
            if $stream {
                _mm_sfence();
            }
        }};
    }

    /// 8 x 8 f32 blocks of [`super::Real::transpose`] with AVX shuffles ([`blocked_transpose`]).
    #[target_feature(enable = "avx")]
    pub(super) unsafe fn transpose_f32(src: *const f32, rs: isize, rows: usize, len: usize, dst: *mut f32, ds: usize, stream: bool) {
        blocked_transpose!(8, src, rs, rows, len, dst, ds, stream, |s, d, p| {
            let ld = |r: usize| _mm256_loadu_ps(s.offset(r as isize * rs).add(p));
            let (a0, a1, a2, a3, a4, a5, a6, a7) = (ld(0), ld(1), ld(2), ld(3), ld(4), ld(5), ld(6), ld(7));
            let (t0, t1, t2, t3) = (_mm256_unpacklo_ps(a0, a1), _mm256_unpackhi_ps(a0, a1), _mm256_unpacklo_ps(a2, a3), _mm256_unpackhi_ps(a2, a3));
            let (t4, t5, t6, t7) = (_mm256_unpacklo_ps(a4, a5), _mm256_unpackhi_ps(a4, a5), _mm256_unpacklo_ps(a6, a7), _mm256_unpackhi_ps(a6, a7));
            let (u0, u1, u2, u3) = (_mm256_shuffle_ps::<0x44>(t0, t2), _mm256_shuffle_ps::<0xEE>(t0, t2), _mm256_shuffle_ps::<0x44>(t1, t3), _mm256_shuffle_ps::<0xEE>(t1, t3));
            let (u4, u5, u6, u7) = (_mm256_shuffle_ps::<0x44>(t4, t6), _mm256_shuffle_ps::<0xEE>(t4, t6), _mm256_shuffle_ps::<0x44>(t5, t7), _mm256_shuffle_ps::<0xEE>(t5, t7));
            let st = |j: usize, v: __m256| if stream { _mm256_stream_ps(d.add((p + j) * ds), v) } else { _mm256_storeu_ps(d.add((p + j) * ds), v) };
            st(0, _mm256_permute2f128_ps::<0x20>(u0, u4));
            st(1, _mm256_permute2f128_ps::<0x20>(u1, u5));
            st(2, _mm256_permute2f128_ps::<0x20>(u2, u6));
            st(3, _mm256_permute2f128_ps::<0x20>(u3, u7));
            st(4, _mm256_permute2f128_ps::<0x31>(u0, u4));
            st(5, _mm256_permute2f128_ps::<0x31>(u1, u5));
            st(6, _mm256_permute2f128_ps::<0x31>(u2, u6));
            st(7, _mm256_permute2f128_ps::<0x31>(u3, u7));
        })
    }

    /// 4 x 4 f64 blocks of [`super::Real::transpose`] with AVX shuffles ([`blocked_transpose`]).
    #[target_feature(enable = "avx")]
    pub(super) unsafe fn transpose_f64(src: *const f64, rs: isize, rows: usize, len: usize, dst: *mut f64, ds: usize, stream: bool) {
        blocked_transpose!(4, src, rs, rows, len, dst, ds, stream, |s, d, p| {
            let ld = |r: usize| _mm256_loadu_pd(s.offset(r as isize * rs).add(p));
            let (a0, a1, a2, a3) = (ld(0), ld(1), ld(2), ld(3));
            let (t0, t1, t2, t3) = (_mm256_unpacklo_pd(a0, a1), _mm256_unpackhi_pd(a0, a1), _mm256_unpacklo_pd(a2, a3), _mm256_unpackhi_pd(a2, a3));
            let st = |j: usize, v: __m256d| if stream { _mm256_stream_pd(d.add((p + j) * ds), v) } else { _mm256_storeu_pd(d.add((p + j) * ds), v) };
            st(0, _mm256_permute2f128_pd::<0x20>(t0, t2));
            st(1, _mm256_permute2f128_pd::<0x20>(t1, t3));
            st(2, _mm256_permute2f128_pd::<0x31>(t0, t2));
            st(3, _mm256_permute2f128_pd::<0x31>(t1, t3));
        })
    }

    // The narrow kernel: R rows (a const, so the accumulators stay in registers) of one
    // vector of columns each, A's elements broadcast from its rows in place.
    macro_rules! narrow {
        ($name:ident, $rows:ident, $t:ty, $v:ty, $lanes:expr, $mask:ty, $zero:ident, $set1:ident, $load:ident, $maskz_loadu:ident, $mask_storeu:ident, $fmadd:ident) => {
            #[target_feature(enable = "avx512f")]
            unsafe fn $rows<const R: usize>(k: usize, a: *const $t, [step, row]: [isize; 2], b: *const $t, c: *mut $t, ldc: usize, mask: $mask, load: bool) {
                let mut acc: [$v; R] = [$zero(); R];
                if load {
                    for i in 0..R {
                        acc[i] = $maskz_loadu(mask, c.add(i * ldc));
                    }
                }
                // Each row's address kept in a register (R at most 8), advanced by one step
                // of K a trip; one step a trip (unrolled, the optimiser keeps an address per
                // row and step, more than the registers, and reloads them from the stack).
                let mut rp: [*const $t; R] = [a; R];
                for i in 0..R {
                    rp[i] = a.wrapping_offset(i as isize * row);
                }
                let mut b = b;
                for _ in 0..k {
                    let bv = $load(b);
                    for i in 0..R {
                        acc[i] = $fmadd($set1(*rp[i]), bv, acc[i]);
                        rp[i] = rp[i].wrapping_offset(step);
                    }
                    b = b.add($lanes);
                }
                for i in 0..R {
                    $mask_storeu(c.add(i * ldc), mask, acc[i]);
                }
            }

            /// `rows` rows in blocks of 8, then 4, 2 and 1 (8 chains of FMAs cover the FMA units'
            /// latency; 16 rows need more address registers than there are).
            pub(super) unsafe fn $name(k: usize, a: *const $t, strides: [isize; 2], b: *const $t, c: *mut $t, ldc: usize, cols: usize, rows: usize, load: bool) {
                let mask = (((1u64 << cols.min($lanes)) - 1) as $mask);
                let mut r = 0;
                while r < rows {
                    let (ap, cp) = (a.offset(r as isize * strides[1]), c.add(r * ldc));
                    r += match rows - r {
                        8.. => { $rows::<8>(k, ap, strides, b, cp, ldc, mask, load); 8 }
                        4..=7 => { $rows::<4>(k, ap, strides, b, cp, ldc, mask, load); 4 }
                        2..=3 => { $rows::<2>(k, ap, strides, b, cp, ldc, mask, load); 2 }
                        _ => { $rows::<1>(k, ap, strides, b, cp, ldc, mask, load); 1 }
                    };
                }
            }
        };
    }

    // The row-dot kernel: each row's products with b summed in 4 vector accumulators (4
    // independent FMA chains; the last partial vector under a lane mask), then across the
    // lanes. The sum is reassociated: within the usual float bounds of a length-K dot.
    macro_rules! row_dots {
        ($name:ident, $t:ty, $v:ty, $lanes:expr, $mask:ty, $zero:ident, $loadu:ident, $maskz_loadu:ident, $fmadd:ident, $add:ident, $reduce:ident) => {
            #[target_feature(enable = "avx512f")]
            pub(super) unsafe fn $name(k: usize, a: *const $t, a_row: isize, b: *const $t, c: *mut $t, ldc: usize, rows: usize, load: bool) {
                const L: usize = $lanes;
                for r in 0..rows {
                    let a = a.offset(r as isize * a_row);
                    let mut acc: [$v; 4] = [$zero(); 4];
                    let mut p = 0;
                    while p + 4 * L <= k {
                        for j in 0..4 {
                            acc[j] = $fmadd($loadu(a.add(p + j * L)), $loadu(b.add(p + j * L)), acc[j]);
                        }
                        p += 4 * L;
                    }
                    while p + L <= k {
                        acc[0] = $fmadd($loadu(a.add(p)), $loadu(b.add(p)), acc[0]);
                        p += L;
                    }
                    if p < k {
                        let m = ((1u64 << (k - p)) - 1) as $mask;
                        acc[1] = $fmadd($maskz_loadu(m, a.add(p)), $maskz_loadu(m, b.add(p)), acc[1]);
                    }
                    let sum = $reduce($add($add(acc[0], acc[1]), $add(acc[2], acc[3])));
                    let cp = c.add(r * ldc);
                    *cp = if load { *cp + sum } else { sum };
                }
            }
        };
    }

    row_dots!(row_dots_f32, f32, __m512, 16, __mmask16, _mm512_setzero_ps, _mm512_loadu_ps, _mm512_maskz_loadu_ps, _mm512_fmadd_ps, _mm512_add_ps, _mm512_reduce_add_ps);
    row_dots!(row_dots_f64, f64, __m512d, 8, __mmask8, _mm512_setzero_pd, _mm512_loadu_pd, _mm512_maskz_loadu_pd, _mm512_fmadd_pd, _mm512_add_pd, _mm512_reduce_add_pd);

    // The short kernel: R rows (at most 8) of C by V vectors of columns, B read in place row by
    // row (`ldb` apart), A's elements broadcast from its rows in place; every vector loaded and
    // stored under its lane mask (a zero mask touches no memory), so one kernel takes a ragged
    // last block.
    macro_rules! short {
        ($name:ident, $rows:ident, $t:ty, $v:ty, $lanes:expr, $mask:ty, $zero:ident, $set1:ident, $maskz_loadu:ident, $mask_storeu:ident, $fmadd:ident) => {
            #[target_feature(enable = "avx512f")]
            #[allow(clippy::too_many_arguments)]
            unsafe fn $rows<const R: usize, const V: usize>(k: usize, a: *const $t, [step, row]: [isize; 2], b: *const $t, ldb: isize, c: *mut $t, ldc: usize, cols: usize, load: bool) {
                let mut masks: [$mask; V] = [0; V];
                for v in 0..V {
                    let have = cols.saturating_sub(v * $lanes).min($lanes);
                    masks[v] = ((1u64 << have) - 1) as $mask;
                }
                let mut acc: [[$v; V]; R] = [[$zero(); V]; R];
                if load {
                    for i in 0..R {
                        for v in 0..V {
                            acc[i][v] = $maskz_loadu(masks[v], c.add(i * ldc + v * $lanes));
                        }
                    }
                }
                let mut rp: [*const $t; R] = [a; R];
                for i in 0..R {
                    rp[i] = a.wrapping_offset(i as isize * row);
                }
                let mut b = b;
                for _ in 0..k {
                    let mut bv: [$v; V] = [$zero(); V];
                    for v in 0..V {
                        bv[v] = $maskz_loadu(masks[v], b.add(v * $lanes));
                    }
                    for i in 0..R {
                        let x = $set1(*rp[i]);
                        for v in 0..V {
                            acc[i][v] = $fmadd(x, bv[v], acc[i][v]);
                        }
                        rp[i] = rp[i].wrapping_offset(step);
                    }
                    b = b.wrapping_offset(ldb);
                }
                for i in 0..R {
                    for v in 0..V {
                        $mask_storeu(c.add(i * ldc + v * $lanes), masks[v], acc[i][v]);
                    }
                }
            }

            /// Rows `0..rows` (at most [`super::SHORT_ROWS`]) of C, columns `0..cols` (at most
            /// [`short_width`] for `rows`), in one pass over B's rows. Returns false for more rows.
            #[allow(clippy::too_many_arguments)]
            pub(super) unsafe fn $name(k: usize, a: *const $t, strides: [isize; 2], b: *const $t, ldb: isize, c: *mut $t, ldc: usize, rows: usize, cols: usize, load: bool) -> bool {
                match rows {
                    1 => $rows::<1, 8>(k, a, strides, b, ldb, c, ldc, cols, load),
                    2 => $rows::<2, 4>(k, a, strides, b, ldb, c, ldc, cols, load),
                    3 => $rows::<3, 4>(k, a, strides, b, ldb, c, ldc, cols, load),
                    4 => $rows::<4, 4>(k, a, strides, b, ldb, c, ldc, cols, load),
                    5 => $rows::<5, 2>(k, a, strides, b, ldb, c, ldc, cols, load),
                    6 => $rows::<6, 2>(k, a, strides, b, ldb, c, ldc, cols, load),
                    7 => $rows::<7, 2>(k, a, strides, b, ldb, c, ldc, cols, load),
                    8 => $rows::<8, 2>(k, a, strides, b, ldb, c, ldc, cols, load),
                    _ => return false,
                }
                true
            }
        };
    }

    /// The vectors of columns the short kernel takes per pass for `rows` rows (8 FMA chains or
    /// more, at most 16 accumulators).
    pub(super) fn short_vectors(rows: usize) -> usize {
        match rows {
            1 => 8,
            2..=4 => 4,
            _ => 2,
        }
    }

    short!(short_f32, short_rows_f32, f32, __m512, 16, __mmask16, _mm512_setzero_ps, _mm512_set1_ps, _mm512_maskz_loadu_ps, _mm512_mask_storeu_ps, _mm512_fmadd_ps);
    short!(short_f64, short_rows_f64, f64, __m512d, 8, __mmask8, _mm512_setzero_pd, _mm512_set1_pd, _mm512_maskz_loadu_pd, _mm512_mask_storeu_pd, _mm512_fmadd_pd);

    narrow!(narrow_f32, narrow_rows_f32, f32, __m512, 16, __mmask16, _mm512_setzero_ps, _mm512_set1_ps, _mm512_load_ps, _mm512_maskz_loadu_ps, _mm512_mask_storeu_ps, _mm512_fmadd_ps);
    narrow!(narrow_f64, narrow_rows_f64, f64, __m512d, 8, __mmask8, _mm512_setzero_pd, _mm512_set1_pd, _mm512_load_pd, _mm512_maskz_loadu_pd, _mm512_mask_storeu_pd, _mm512_fmadd_pd);

    micro!(avx512_f32, "avx512f", f32, __m512, 16, 8, 2, _mm512_setzero_ps, _mm512_set1_ps, _mm512_load_ps, _mm512_loadu_ps, _mm512_storeu_ps, _mm512_fmadd_ps);
    micro!(avx512_f64, "avx512f", f64, __m512d, 8, 8, 2, _mm512_setzero_pd, _mm512_set1_pd, _mm512_load_pd, _mm512_loadu_pd, _mm512_storeu_pd, _mm512_fmadd_pd);
    // The wide tiles (three vectors of columns, 24 accumulators) and the one-vector edges.
    micro!(avx512w_f32, "avx512f", f32, __m512, 16, 8, 3, _mm512_setzero_ps, _mm512_set1_ps, _mm512_load_ps, _mm512_loadu_ps, _mm512_storeu_ps, _mm512_fmadd_ps);
    micro!(avx512w_f64, "avx512f", f64, __m512d, 8, 8, 3, _mm512_setzero_pd, _mm512_set1_pd, _mm512_load_pd, _mm512_loadu_pd, _mm512_storeu_pd, _mm512_fmadd_pd);
    micro!(avx512_1_f32, "avx512f", f32, __m512, 16, 8, 1, _mm512_setzero_ps, _mm512_set1_ps, _mm512_load_ps, _mm512_loadu_ps, _mm512_storeu_ps, _mm512_fmadd_ps);
    micro!(avx512_1_f64, "avx512f", f64, __m512d, 8, 8, 1, _mm512_setzero_pd, _mm512_set1_pd, _mm512_load_pd, _mm512_loadu_pd, _mm512_storeu_pd, _mm512_fmadd_pd);
    micro!(avx2_f32, "avx2,fma", f32, __m256, 8, 6, 2, _mm256_setzero_ps, _mm256_set1_ps, _mm256_load_ps, _mm256_loadu_ps, _mm256_storeu_ps, _mm256_fmadd_ps);
    micro!(avx2_f64, "avx2,fma", f64, __m256d, 4, 6, 2, _mm256_setzero_pd, _mm256_set1_pd, _mm256_load_pd, _mm256_loadu_pd, _mm256_storeu_pd, _mm256_fmadd_pd);
}

/// Whether the host's CPU is Intel's (CPUID vendor "GenuineIntel").
pub fn intel() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static INTEL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *INTEL.get_or_init(|| {
            // CPUID leaf 0 (the vendor) exists on every x86-64 CPU.
            let r = std::arch::x86_64::__cpuid(0);
            [r.ebx, r.edx, r.ecx].iter().flat_map(|w| w.to_le_bytes()).eq(*b"GenuineIntel")
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

// The element types' kernels, one row each: (type, AVX-512 kernels (8 rows; one, two and
// three vectors of `lanes` columns), AVX2 kernel and tile, portable kernel and tile, AVX
// transpose, narrow kernel and lanes, row-dot kernel, short kernel).
//
// On AVX-512 Intel hosts take the three-vector tile ("avx512w"), others the two-vector one
// ("avx512"). On L1-resident panels (rustc -O, target-cpu=native, kc 256 and 512, best of 7,
// Intel Xeon model 106 (Ice Lake server) of 2026-12-08, a core's FMA peak 183.5 GFLOP/s),
// f32 8x32 125-157 GFLOP/s, 8x48 152-181 (6x64 141-181, 12x32 115-167, 14x32 103-138,
// 9x48 146-151); f64 8x16 61-76, 8x24 69-89. The AMD EPYC Zen 4 of stops 55-61 (one 512-bit
// FMA a cycle, as two halves) reached 94-96% of its two-core peak with 8x32 and was not
// measured with 8x48.
macro_rules! real {
    ($t:ty, $m:ident, ($k512:ident, $k512w:ident, $k512e:ident, $lanes:expr), ($k2:ident, $m2:expr, $n2:expr), ($kp:ident, $mp:expr, $np:expr), $tr:ident, $narrow:ident, $dot:ident, $short:ident) => {
        #[cfg(target_arch = "x86_64")]
        mod $m {
            use super::{x86, Edge, Kernel};
            const EDGE_1: Edge<$t> = Edge { nr: $lanes, f: x86::$k512e::<false>, fs: x86::$k512e::<true> };
            const EDGE_2: Edge<$t> = Edge { nr: 2 * $lanes, f: x86::$k512::<false>, fs: x86::$k512::<true> };
            pub(super) const AVX512: Kernel<$t> = Kernel { mr: 8, nr: 2 * $lanes, f: x86::$k512::<false>, fs: x86::$k512::<true>, name: "avx512", edges: &[EDGE_1] };
            pub(super) const AVX512W: Kernel<$t> = Kernel { mr: 8, nr: 3 * $lanes, f: x86::$k512w::<false>, fs: x86::$k512w::<true>, name: "avx512w", edges: &[EDGE_1, EDGE_2] };
            pub(super) const AVX2: Kernel<$t> = Kernel { mr: $m2, nr: $n2, f: x86::$k2::<false>, fs: x86::$k2::<true>, name: "avx2", edges: &[] };
        }
        impl Real for $t {
            fn narrow() -> Option<(NarrowFn<$t>, usize)> {
                #[cfg(target_arch = "x86_64")]
                if isa() == "avx512" {
                    return Some((x86::$narrow as NarrowFn<$t>, $lanes));
                }
                None
            }
            fn short() -> Option<(ShortFn<$t>, usize)> {
                #[cfg(target_arch = "x86_64")]
                if isa() == "avx512" {
                    return Some((x86::$short as ShortFn<$t>, $lanes));
                }
                None
            }
            fn row_dots() -> Option<RowDotFn<$t>> {
                #[cfg(target_arch = "x86_64")]
                if isa() == "avx512" {
                    return Some(x86::$dot as RowDotFn<$t>);
                }
                None
            }
            fn kernel() -> Kernel<$t> {
                #[cfg(target_arch = "x86_64")]
                match isa() {
                    "avx512" if intel() => return $m::AVX512W,
                    "avx512" => return $m::AVX512,
                    "avx2" => return $m::AVX2,
                    _ => {}
                }
                Self::portable()
            }
            fn portable() -> Kernel<$t> {
                Kernel { mr: $mp, nr: $np, f: $kp::<false>, fs: $kp::<true>, name: "portable", edges: &[] }
            }
            fn all() -> Vec<Kernel<$t>> {
                #[allow(unused_mut)]
                let mut v = vec![Self::portable()];
                #[cfg(target_arch = "x86_64")]
                {
                    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
                        v.push($m::AVX2);
                    }
                    if std::is_x86_feature_detected!("avx512f") {
                        v.extend([$m::AVX512, $m::AVX512W]);
                    }
                }
                v
            }
            unsafe fn transpose(src: *const $t, rs: isize, rows: usize, len: usize, dst: *mut $t, ds: usize, stream: bool) {
                #[cfg(target_arch = "x86_64")]
                if isa() != "portable" {
                    return x86::$tr(src, rs, rows, len, dst, ds, stream);
                }
                transpose_scalar(src, rs, rows, len, dst, ds, 0)
            }
        }
    };
}

real!(f32, kernels_f32, (avx512_f32, avx512w_f32, avx512_1_f32, 16), (avx2_f32, 6, 16), (portable_f32, 4, 8), transpose_f32, narrow_f32, row_dots_f32, short_f32);
real!(f64, kernels_f64, (avx512_f64, avx512w_f64, avx512_1_f64, 8), (avx2_f64, 6, 8), (portable_f64, 4, 4), transpose_f64, narrow_f64, row_dots_f64, short_f64);

pub use crate::host::{caches as host_caches, Caches};

/// The blocks of a product: `kc` rows of B per block (a `kc x mr` micro-panel of A fills at most
/// L1, and `kc` at most [`KC_MAX`]), `mc` rows of A per row block (a multiple of `mr` whose packed
/// `mc x kc` block fills at most a quarter of L2), `nc` columns per B block (a multiple of
/// `nr`; each thread's share of the packed `kc x nc` block at most twice L2; N split into
/// equal blocks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blocks {
    pub kc: usize,
    pub mc: usize,
    pub nc: usize,
}

/// Panels from which a thread packs A's row blocks: a row block read by fewer panels is read in
/// place, its packing not repaid. Measured (one core, `gemm_speed`, 2026-12-04): 512x256x64
/// (two panels) 93.6 us packed, of which 18% packing A; 32^3 in a jitted call 1.9 us.
pub const IN_PLACE_PANELS: usize = 2;

/// Rows of A per row block at most (its tiles' rows are the streams the hardware prefetchers
/// follow into C). Measured (1024^3 f32, one core of the Xeon of 2026-12-04, best of 30):
/// 48 / 64 / 96 / 128 / 256 rows 193 / 190 / 183 / 180 / 182 GFLOP/s.
pub const MC_MAX: usize = 64;

/// K blocks up to this deep compute C's tiles along its rows rather than down each panel on
/// one thread ([`gemm_with`]): with so few multiply-adds per tile, writing C is the cost, and
/// rows written in order are what the prefetchers follow. f32 on Zen 4 (2026-12-05,
/// `gemm_speed ... auto`, three alternations), down the panels / along the rows, one thread:
/// 1024x4x1024 276-277 / 175-180 us, 1024x16x1024 400-405 / 375, 512x8x512 60 / 56. Teams
/// split the rows for such products (when each thread gets two micro-panels or more), each
/// thread packing the whole of B's (small) block into a copy of its own: each writes whole
/// rows of C in order (stop 40's row order with the columns split, each thread half of every
/// row, was slower than the panel order: 1000x10x1000 182-186 -> 248-253 us). Two threads,
/// panel order with the columns split / rows split (2026-12-05, Zen 4, three alternations):
/// 1024x4x1024 205-216 / 116-120 us, 2048x8x2048 639-691 / 453-462, 1024x16x1024 291-297 /
/// 215-218, 1000x10x1000 185-192 / 153-174, 4096x2x4096 3548-3884 / 1458-2008. Their tiles
/// also skip the prefetch of the next tile's rows of C when C is only written (a read the
/// stores' own line fills make anyway): 5-10% of these times.
pub const ROW_ORDER_MAX_K: usize = 16;

/// The largest K block. Deep blocks repay the C tile's loads and stores over more
/// multiply-adds; the `kc x nr` panel of B then streams from L2 (the micro-kernel reads it once
/// per tile, 128 bytes per 16 FMAs at 8x32 f32, well inside L2's bandwidth). Measured
/// (`gemm_speed`, best of 30, AMD EPYC Zen 4 with 32 KB L1 and 1 MB L2, 2026-12-05), 1024^3
/// f32 on one / two threads: kc 176 (the L1 bound used before) 101.5 / 199.8 GFLOP/s, 256
/// 104.2 / 208.5, 384 105.2 / 209.9, 512 107.9 / 213.3, 1024 108.5 / 213.1; f64 (8x16) kc 168
/// 47.6 / 94.7, 256 50.4 / 100.9, 512 (its A micro-panel all of L1; 2026-12-05, three
/// alternations) 52.6 / 103.5-104.9 against 256's 50.4 / 101.9-103.0. On the Xeon of stop 37
/// kc 176-512 were within noise.
pub const KC_MAX: usize = 512;

/// The blocks for an `m x n x k` product of `size`-byte elements with register tile
/// `mr x nr` on caches `c`, for a team of `threads`. K and N blocks are balanced (split into
/// equal blocks, K's each a multiple of 8 up to the L1 bound, N's of `nr`).
pub fn blocks(size: usize, [m, n, k]: [usize; 3], [mr, nr]: [usize; 2], c: Caches, threads: usize) -> Blocks {
    let (l1d, l2) = (c.l1d.max(0) as usize, c.l2.max(0) as usize);
    let kmax = (l1d / (mr * size)).clamp(16, KC_MAX) / 8 * 8;
    let parts = k.div_ceil(kmax).max(1);
    let kc = k.div_ceil(parts).div_ceil(8) * 8;
    let kc = kc.min(k.max(1));
    let rows = (l2 / 4 / (kc * size)).clamp(mr, MC_MAX.max(mr));
    let mc = (rows / mr * mr).min(m.div_ceil(mr) * mr).max(mr);
    // Balanced column blocks too: a last block narrower than the others would leave a thread
    // without panels when the threads split each block's columns (1536^3 f32 on two threads:
    // blocks of 1024 and 512 columns, 160 GFLOP/s; two of 768, 217).
    // Each thread's share of a B block at most twice L2, not the whole block: the panels
    // stream from L3 into the tiles of a row block (the packed A block is what stays in L2),
    // and every further block repacks all of A on every thread that splits the columns.
    // Measured (two threads, Zen 4, 2026-12-07, `gemm_ab`-style alternation, 15 rounds), the
    // whole block / its share at most twice L2: 1024^3 f64 20.56 / 20.20 ms (min; p25 20.69 /
    // 20.40), 1500^3 f64 65.3 / 63.0, 1536^3 f32 34.2 / 33.5; 768^3 f64, 1024^3 f32, 2048^3
    // within noise; one thread unchanged.
    let cols = (threads.max(1) * 2 * l2 / (kc * size)).max(nr) / nr * nr;
    let nc = n.div_ceil(n.div_ceil(cols).max(1)).div_ceil(nr) * nr;
    Blocks { kc, mc, nc: nc.max(nr) }
}

/// A 64-byte aligned scratch buffer, grown on demand and kept for the thread's next product.
struct Scratch {
    ptr: *mut u8,
    bytes: usize,
}

impl Scratch {
    const fn new() -> Scratch {
        Scratch { ptr: std::ptr::null_mut(), bytes: 0 }
    }

    /// At least `bytes` bytes, or None when the allocation fails.
    fn get(&mut self, bytes: usize) -> Option<*mut u8> {
        if bytes > self.bytes || self.ptr.is_null() {
            self.release();
            let layout = std::alloc::Layout::from_size_align(bytes.max(64), 64).ok()?;
            // SAFETY: a non-zero size.
            let p = unsafe { std::alloc::alloc(layout) };
            if p.is_null() {
                return None;
            }
            (self.ptr, self.bytes) = (p, bytes.max(64));
        }
        Some(self.ptr)
    }

    fn release(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: allocated by `get` with this layout.
            unsafe { std::alloc::dealloc(self.ptr, std::alloc::Layout::from_size_align_unchecked(self.bytes, 64)) };
            (self.ptr, self.bytes) = (std::ptr::null_mut(), 0);
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        self.release();
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = const { RefCell::new(Scratch::new()) };
}

/// A failed scratch allocation of this many bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutOfMemory(pub usize);

/// A raw pointer shared with the team (also the transposing copy's, crate::transpose).
#[derive(Clone, Copy)]
pub(crate) struct Shared<T>(pub(crate) *mut T);
// SAFETY: threads write disjoint parts of the buffers behind it (read by others only after a
// barrier).
unsafe impl<T> Send for Shared<T> {}
unsafe impl<T> Sync for Shared<T> {}

/// `p` on `team` with the host's micro-kernel.
///
/// # Safety
/// The views of `p` are valid for its sizes and strides, C does not overlap A or B, and every
/// thread of `team` runs the body it is given.
pub unsafe fn gemm<T: Real>(p: &Problem<T>, team: &dyn Team) -> Result<(), OutOfMemory> {
    if p.m == 1 && p.n > 1 && p.b.rs == 1 && p.b.cs != 1 {
        // One row against a B whose columns are contiguous (`y @ x.T`): the transposed
        // product, C^T = B^T A^T, is a matrix-vector product whose rows are B's columns (row
        // dot products on the narrow path; split K, it packed all of B: 4096^2 f32 4.6 ->
        // 1.1 ms on two threads).
        let t = Problem { m: p.n, n: 1, a: Mat { ptr: p.b.ptr, rs: p.b.cs, cs: p.b.rs }, b: Mat { ptr: p.a.ptr, rs: p.a.cs, cs: p.a.rs }, ldc: 1, ..*p };
        return gemm(&t, team);
    }
    if let Some(r) = gemm_split_k(p, team) {
        return r;
    }
    if let Some(r) = gemm_narrow(p, team) {
        return r;
    }
    if gemm_short(p, team) {
        return Ok(());
    }
    gemm_with(p, team, T::kernel(), host_caches())
}

/// `parts` products on `team`, each on one thread through [`gemm`] (so each takes the narrow,
/// short or packed path), `problem(q)` the q-th; each thread runs a contiguous share of them
/// (a team larger or smaller than announced still runs them all). The first failed
/// allocation is returned. Shared by [`gemm_split_k`] and the runtime's split of a batch.
///
/// # Safety
/// Each part as [`gemm`]; the parts' outputs do not overlap.
pub unsafe fn gemm_parts<T: Real>(team: &dyn Team, parts: usize, problem: impl Fn(usize) -> Problem<T> + Sync) -> Result<(), OutOfMemory> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let failed = AtomicUsize::new(0);
    let body = |t: usize, threads: usize| {
        let (q0, q1) = share(parts, t, threads);
        for q in q0..q1 {
            if let Err(OutOfMemory(bytes)) = gemm(&problem(q), &Serial) {
                let _ = failed.compare_exchange(0, bytes.max(1), Ordering::Relaxed, Ordering::Relaxed);
                return;
            }
        }
    };
    team.run(&body);
    match failed.into_inner() {
        0 => Ok(()),
        bytes => Err(OutOfMemory(bytes)),
    }
}

/// Outputs of at most this many elements are split along K ([`gemm_split_k`]).
pub const SPLIT_K_MAX_OUTPUT: usize = 1 << 16;

/// The shortest K split between threads ([`gemm_split_k`]).
pub const SPLIT_K_MIN_K: usize = 1024;

/// Products with a small output (at most [`SPLIT_K_MAX_OUTPUT`] elements) and a long K (at
/// least [`SPLIT_K_MIN_K`], and at least M and N: a Gram matrix `x^T x` of a tall `x`, a
/// covariance, a vector-matrix product) on several threads, but for narrow products with
/// enough rows for every thread (16 each: a matrix-vector product reads whole rows on the
/// narrow path, half rows here): each thread computes the whole output over its share of
/// K on its own (thread 0 into C, the others into partial outputs), then the partials are
/// added to C in thread order. Splitting the output instead left each thread few tiles
/// behind barriers per K block, or all of A to pack: f32 100x5000x100 on two threads of Zen
/// 4 108 GFLOP/s (JAX 154), 32x20000x32 71 (JAX 93). None for other products and on one
/// thread. The sums then depend on the thread count through the order of K's parts only.
///
/// # Safety
/// As [`gemm`].
pub unsafe fn gemm_split_k<T: Real>(p: &Problem<T>, team: &dyn Team) -> Option<Result<(), OutOfMemory>> {
    let (m, n, k) = (p.m, p.n, p.k);
    let parts = team.threads();
    if parts < 2 || m == 0 || n == 0 || m.saturating_mul(n) > SPLIT_K_MAX_OUTPUT || k < SPLIT_K_MIN_K.max(m).max(n) {
        return None;
    }
    if T::narrow().is_some_and(|(_, lanes)| n <= lanes && m >= 16 * parts) {
        return None;
    }
    let len = (parts - 1) * m * n;
    let mut partial: Vec<T> = Vec::new();
    if partial.try_reserve_exact(len).is_err() {
        return Some(Err(OutOfMemory(len * std::mem::size_of::<T>())));
    }
    partial.resize(len, T::default());
    let out = Shared(partial.as_mut_ptr());
    let part = |q: usize| {
        let out = out;
        let (k0, k1) = share(k, q, parts);
        let (c, ldc) = if q == 0 { (p.c, p.ldc) } else { (out.0.add((q - 1) * m * n), n as isize) };
        let a = Mat { ptr: p.a.ptr.offset(k0 as isize * p.a.cs), ..p.a };
        let b = Mat { ptr: p.b.ptr.offset(k0 as isize * p.b.rs), ..p.b };
        Problem { k: k1 - k0, a, b, c, ldc, accumulate: q == 0 && p.accumulate, ..*p }
    };
    if let Err(e) = gemm_parts(team, parts, part) {
        return Some(Err(e));
    }
    for q in 1..parts {
        let part = &partial[(q - 1) * m * n..q * m * n];
        for i in 0..m {
            let row = p.c.offset(i as isize * p.ldc);
            for (j, v) in part[i * n..(i + 1) * n].iter().enumerate() {
                *row.add(j) += *v;
            }
        }
    }
    Some(Ok(()))
}

/// The most rows the short kernel takes in one pass ([`ShortFn`]).
pub const SHORT_ROWS: usize = 8;

/// The most rows of a short product ([`gemm_short`]: passes of [`SHORT_ROWS`]) whatever the
/// size of B.
pub const SHORT_MAX_ROWS: usize = 15;

/// The most rows of a short product whose B is not streamed ([`SHORT_STREAM_L2S`]): B read
/// in place once per 8 rows from L2 or L3 costs less than packing it, at least to 64 rows.
/// One thread of Zen 4 (2026-12-05, `gemm_speed MxKxN 1 f32 short` / the packed path's
/// kernel), f32: 16x128x128 4.7 / 6.4 us (an RNN step's product), 32x128x128 9.4 / 11.3,
/// 64x128x128 18.7 / 20.9, 128x128x128 37.5 / 40.3, 64x256x256 74.5 / 81.3, 64x512x512 299
/// / 325, 32x1024x1024 632 / 770, 64x1024x1024 1280 / 1415 (two threads 671 / 768), 16x32x32
/// 0.3 / 0.5; f64 32x128x128 18.3 / 22.3, 64x256x256 148 / 165, 16x1024x1024 653 / 1009.
/// Streamed, B re-read per 16 rows from memory loses: 32x2048x2048 5979 / 4167, 16x2048x2048
/// 3080 / 2921.
pub const SHORT_CACHED_MAX_ROWS: usize = 64;

/// A short product whose B exceeds this many L2s streams B in K blocks of 8 rows (1 or 2
/// rows of A) or 16 ([`gemm_short`]). One thread of Zen 4 (1 MB L2, 32 MB L3), 2026-12-05,
/// `gemm_speed MxKxN 1 f32 short`, whole K / blocks of 8 / 16: 1x4096x4096 5968 / 3151 /
/// 3271 us, 2x4096x4096 8857 / 3287 / 3876, 4x2048x2048 732 / 549 / 447, 12x2048x2048 2238
/// / 2731 / 1985; B of 4 or 8 MB lost (4x1024x1024 88 / 126 / 103, 8x1024x2048 342 / 496 /
/// 386), and so did B in L2 (4x512x512 18.5 / 24.3 / 22.3).
pub const SHORT_STREAM_L2S: usize = 8;

/// The columns the short kernel takes per pass for `rows` rows of `lanes`-lane vectors.
pub fn short_columns(rows: usize, lanes: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    return x86::short_vectors(rows) * lanes;
    #[cfg(not(target_arch = "x86_64"))]
    return 2 * lanes;
}

/// Products of at most [`SHORT_MAX_ROWS`] rows ([`SHORT_CACHED_MAX_ROWS`] when B is not
/// streamed) wider than one vector, B's columns contiguous
/// ([`Real::short`], AVX-512): no packing; the columns in blocks of [`short_columns`], split
/// across the team, each block one pass over its strip of B's rows per [`SHORT_ROWS`] rows,
/// A's rows (in L1) broadcast. The packed path packs all of B for so few rows (a copy as
/// large as the product's reads) and pads M to 8. One thread, `gemm_speed MxKxN 1 f32 short`
/// on Zen 4 (2026-12-05) against the packed path: 4x512x512 18.3 / 70.5 us, 8x512x512 37.1 /
/// 69.1, 1x512x512 12.5 / 69.7, 4x2048x2048 660 / 1734. A B larger than the caches is read
/// in K blocks ([`SHORT_STREAM_L2S`]). False (nothing done) for other products.
///
/// # Safety
/// As [`gemm`].
pub unsafe fn gemm_short<T: Real>(p: &Problem<T>, team: &dyn Team) -> bool {
    let Some((f, lanes)) = T::short() else { return false };
    let (m, n, k) = (p.m, p.n, p.k);
    if m == 0 || n <= lanes || k == 0 || p.b.cs != 1 {
        return false;
    }
    // A B far larger than the caches is streamed from memory: a few of its rows at a time
    // across all the columns (each row a sequential stream the prefetchers follow), C's
    // blocks reloaded per K block; the sums run in the same order.
    let streamed = k.saturating_mul(n).saturating_mul(std::mem::size_of::<T>()) > SHORT_STREAM_L2S * host_caches().l2.max(1 << 18) as usize;
    if m > SHORT_CACHED_MAX_ROWS {
        return !streamed && n <= short_columns(SHORT_ROWS, lanes) && gemm_two_vectors(p, team, f);
    }
    if m > SHORT_MAX_ROWS && streamed {
        return false;
    }
    let width = short_columns(m.min(SHORT_ROWS), lanes);
    let blocks = n.div_ceil(width);
    let kb = if !streamed { k } else if m <= 2 { 8 } else { 16 };
    let body = move |t: usize, threads: usize| {
        let (q0, q1) = share(blocks, t, threads.max(1));
        let mut k0 = 0;
        while k0 < k {
            let kn = kb.min(k - k0);
            for q in q0..q1 {
                let col = q * width;
                let mut r = 0;
                while r < m {
                    let rows = (m - r).min(SHORT_ROWS);
                    f(kn, p.a.ptr.offset(r as isize * p.a.rs + k0 as isize * p.a.cs), [p.a.cs, p.a.rs], p.b.ptr.offset(k0 as isize * p.b.rs).add(col), p.b.rs, p.c.offset(r as isize * p.ldc).add(col), p.ldc as usize, rows, width.min(n - col), k0 > 0 || p.accumulate);
                    r += rows;
                }
            }
            k0 += kn;
        }
    };
    team.run(&body);
    true
}

/// Products of more rows than [`SHORT_CACHED_MAX_ROWS`] and at most the short kernel's
/// columns for [`SHORT_ROWS`] rows (two vectors: 17 to 32 f32, 9 to 16 f64), B not streamed:
/// the short kernel on blocks of [`SHORT_ROWS`] rows split across the team, B read in place
/// (from L1 or L2) by every block. The packed path pads such a product to two 32-column
/// panels' worth of work on the generated code's or the runtime's tiles, and packs A and B.
/// Always true (done).
///
/// # Safety
/// As [`gemm`]; `f` is the host's short kernel and `n` at most its columns for 8 rows.
unsafe fn gemm_two_vectors<T: Real>(p: &Problem<T>, team: &dyn Team, f: ShortFn<T>) -> bool {
    let (m, n, k) = (p.m, p.n, p.k);
    let blocks = m.div_ceil(SHORT_ROWS);
    let body = move |t: usize, threads: usize| {
        let (q0, q1) = share(blocks, t, threads.max(1));
        for q in q0..q1 {
            let r = q * SHORT_ROWS;
            let rows = (m - r).min(SHORT_ROWS);
            f(k, p.a.ptr.offset(r as isize * p.a.rs), [p.a.cs, p.a.rs], p.b.ptr, p.b.rs, p.c.offset(r as isize * p.ldc), p.ldc as usize, rows, n, p.accumulate);
        }
    };
    team.run(&body);
    true
}

/// Products of at most one vector of columns ([`Real::narrow`]: 16 f32 / 8 f64 on AVX-512)
/// and at least one row and step of K: B packed once into a `k x lanes` panel (zero past N)
/// by the calling thread, then the rows of C in blocks of 16 split across the team (the
/// kernel takes them 8 at a time), A's rows read in place and C's rows written under a lane
/// mask. The packed path
/// pads such a product to its 32 / 16-column panels and goes through a scratch tile for
/// every ragged tile. One thread, `gemm_speed MxKxN 1 f32 narrow` against the packed path
/// (2026-12-04): 256x512x10 30.7 / 45.3 us (the generated code 25-27), 512x256x10 28.2 /
/// 43.5, 1024x512x10 121 / 189, 256x512x16 33 / 45. None where the host has no narrow kernel
/// or the product is wider.
///
/// # Safety
/// As [`gemm`].
pub unsafe fn gemm_narrow<T: Real>(p: &Problem<T>, team: &dyn Team) -> Option<Result<(), OutOfMemory>> {
    let (f, lanes) = T::narrow()?;
    let (m, n, k) = (p.m, p.n, p.k);
    if n == 0 || n > lanes || m == 0 || k == 0 {
        return None;
    }
    let Some(bytes) = k.checked_mul(lanes * std::mem::size_of::<T>()).filter(|b| *b <= isize::MAX as usize / 2).map(round64) else {
        return Some(Err(OutOfMemory(usize::MAX)));
    };
    // One column with A's rows contiguous: dot products of the rows (b contiguous, copied
    // when strided), 4 vector accumulators each, instead of a masked lane per element.
    let dot = T::row_dots().filter(|_| n == 1 && p.a.cs == 1);
    Some(SCRATCH.with(|s| -> Result<(), OutOfMemory> {
        let mut s = s.borrow_mut();
        let panel = Shared(s.get(bytes).ok_or(OutOfMemory(bytes))? as *mut T);
        if let Some(dot) = dot {
            let b = if p.b.rs == 1 {
                p.b.ptr
            } else {
                pack_b(p.b, 0, k, 0, 1, 1, panel.0);
                panel.0 as *const T
            };
            let b = Shared(b as *mut T);
            let blocks = m.div_ceil(16);
            let body = move |t: usize, threads: usize| {
                let b = b;
                let (q0, q1) = share(blocks, t, threads.max(1));
                let (r0, r1) = (q0 * 16, (q1 * 16).min(m));
                if r0 < r1 {
                    dot(k, p.a.ptr.offset(r0 as isize * p.a.rs), p.a.rs, b.0, p.c.offset(r0 as isize * p.ldc), p.ldc as usize, r1 - r0, p.accumulate);
                }
            };
            team.run(&body);
            return Ok(());
        }
        pack_b(p.b, 0, k, 0, n, lanes, panel.0);
        let blocks = m.div_ceil(16);
        let body = move |t: usize, threads: usize| {
            let panel = panel;
            let (q0, q1) = share(blocks, t, threads.max(1));
            let (r0, r1) = (q0 * 16, (q1 * 16).min(m));
            if r0 < r1 {
                f(k, p.a.ptr.offset(r0 as isize * p.a.rs), [p.a.cs, p.a.rs], panel.0, p.c.offset(r0 as isize * p.ldc), p.ldc as usize, n, r1 - r0, p.accumulate);
            }
        };
        team.run(&body);
        Ok(())
    }))
}

/// [`gemm`] with micro-kernel `kern` and caches `caches`.
///
/// # Safety
/// As [`gemm`].
pub unsafe fn gemm_with<T: Real>(p: &Problem<T>, team: &dyn Team, kern: Kernel<T>, caches: Caches) -> Result<(), OutOfMemory> {
    let (m, n, k) = (p.m, p.n, p.k);
    if m == 0 || n == 0 {
        return Ok(());
    }
    if k == 0 {
        if !p.accumulate {
            for i in 0..m {
                std::ptr::write_bytes(p.c.offset(i as isize * p.ldc), 0, n);
            }
        }
        return Ok(());
    }
    let (mr, nr) = (kern.mr, kern.nr);
    let size = std::mem::size_of::<T>();
    let slots = team.threads().max(1);
    let bl = blocks(size, [m, n, k], [mr, nr], caches, slots);
    let mpanels = m.div_ceil(mr);
    // A thin K on several threads splits the rows, each thread with its own copy of B's
    // (small) block: see [`ROW_ORDER_MAX_K`].
    let thin = slots > 1 && k <= ROW_ORDER_MAX_K && mpanels >= 2 * slots;
    // The shared B block (with room for each thread's share rounded up; thin: one block per
    // thread), then per thread its packed row block and a scratch tile.
    let b_bytes = round64(if thin { slots * bl.nc.div_ceil(nr) } else { bl.nc / nr + slots - 1 } * nr * bl.kc * size);
    let a_bytes = round64(bl.mc * bl.kc * size) + round64(mr * nr * size);
    let bytes = b_bytes + slots * a_bytes;
    SCRATCH.with(|s| -> Result<(), OutOfMemory> {
        let mut s = s.borrow_mut();
        let base = Shared(s.get(bytes).ok_or(OutOfMemory(bytes))?);
        let body = move |t: usize, threads: usize| {
            let base = base;
            // A team larger than the scratch was sized for (never with `Team::threads` honest)
            // works on its first `slots` threads, without barriers.
            let whole = threads <= slots;
            let threads = threads.clamp(1, slots);
            if t >= threads {
                return;
            }
            let bbuf = base.0 as *mut T;
            let abuf = base.0.add(b_bytes + t * a_bytes) as *mut T;
            let tile = base.0.add(b_bytes + t * a_bytes + round64(bl.mc * bl.kc * size)) as *mut T;
            // Threads split the panels (columns): each packs and reads only its own panels of
            // B, so no thread waits for another; each packs all of A's row blocks. Narrow
            // products (fewer than 4 panels a thread, more micro-panels than panels) split
            // the rows instead: the team packs each B block together, then each thread
            // computes its rows against all of it, behind barriers.
            let by_rows = whole && n.div_ceil(nr) < 4 * threads && mpanels > n.div_ceil(nr);
            // A thin K splits the rows too, each thread packing all of B's panels into its own
            // copy: no barriers, and each thread writes whole rows of C in order.
            let thin = thin && whole && threads == slots && !by_rows;
            let rows_split = by_rows || thin;
            // With columns split, thread t packs its share of each block's panels into its
            // own slots, from slot `t * own`: no thread ever writes a slot another may still
            // read, and none waits for another.
            let own = (bl.nc / nr).div_ceil(threads);
            let (q0, q1) = if rows_split { share(mpanels, t, threads) } else { (0, mpanels) };
            let bbuf = if thin { bbuf.add(t * bl.nc.div_ceil(nr) * nr * bl.kc) } else { bbuf };
            let (row0, row1) = (q0 * mr, (q1 * mr).min(m));
            let mut jc = 0;
            while jc < n {
                let nb = bl.nc.min(n - jc);
                let panels = nb.div_ceil(nr);
                let mut pc = 0;
                while pc < k {
                    let kb = bl.kc.min(k - pc);
                    // Panel j lives at slot `j - first` of the buffer (`kc x nr` apart whatever
                    // this block's K).
                    let (lo, hi) = if thin { (0, panels) } else { share(panels, t, threads) };
                    let first = if rows_split { 0 } else { lo - t * own };
                    for j in lo..hi {
                        let w = nr.min(n - jc - j * nr);
                        pack_b(p.b, pc, kb, jc + j * nr, w, kern.fit(w).0, bbuf.add((j - first) * bl.kc * nr));
                    }
                    if threads > 1 && by_rows {
                        team.barrier();
                    }
                    let load = pc > 0 || p.accumulate;
                    let (j0, j1) = if rows_split { (0, panels) } else { (lo, hi) };
                    // A row block read by at most IN_PLACE_PANELS panels is not packed: its
                    // full micro-panels are read in place (the strided micro-kernel), only a
                    // ragged last one is packed (zero rows past M).
                    let in_place = j1 - j0 <= IN_PLACE_PANELS;
                    let mut ic = row0;
                    while ic < row1 {
                        let mb = bl.mc.min(row1 - ic);
                        if !in_place {
                            pack_a(p.a, ic, mb, pc, kb, mr, abuf);
                        } else if mb % mr != 0 {
                            let last = mb / mr * mr;
                            pack_a(p.a, ic + last, mb - last, pc, kb, mr, abuf.add(last * kb));
                        }
                        // Tile (row `i` of the block, panel `j`), then a prefetch of the
                        // rows of C at `next` (the next tile's) while it computes; not for a
                        // thin K block that only writes C (ROW_ORDER_MAX_K).
                        let tile_at = |i: usize, j: usize| p.c.offset((ic + i) as isize * p.ldc + (jc + j * nr) as isize);
                        let tile = |i: usize, j: usize, next: *mut T| {
                            let col = jc + j * nr;
                            let nw = nr.min(n - col);
                            // A ragged last panel on the narrowest kernel that holds it.
                            let (width, f, fs) = kern.fit(nw);
                            let bp = bbuf.add((j - first) * bl.kc * nr);
                            let mh = mr.min(mb - i);
                            let (micro, ap) = if in_place && mh == mr { (fs, p.a.ptr.offset((ic + i) as isize * p.a.rs + pc as isize * p.a.cs)) } else { (f, abuf.add(i * kb) as *const T) };
                            let a_strides = [p.a.cs, p.a.rs];
                            let cp = tile_at(i, j);
                            if load || kb > ROW_ORDER_MAX_K {
                                prefetch_rows(next, mr.min(m - ic - i), p.ldc, nr * size);
                            }
                            if mh == mr && nw == width {
                                micro(kb, ap, a_strides, bp, cp, p.ldc as usize, load);
                            } else {
                                // A ragged tile: through the scratch tile (C's part first
                                // when the sums continue from it).
                                if load {
                                    for r in 0..mh {
                                        for c in 0..nw {
                                            *tile.add(r * width + c) = *cp.offset(r as isize * p.ldc + c as isize);
                                        }
                                    }
                                }
                                micro(kb, ap, a_strides, bp, tile, width, load);
                                for r in 0..mh {
                                    for c in 0..nw {
                                        *cp.offset(r as isize * p.ldc + c as isize) = *tile.add(r * width + c);
                                    }
                                }
                            }
                        };
                        let tiles = mb.div_ceil(mr);
                        if kb > ROW_ORDER_MAX_K || (threads > 1 && !thin) {
                            // Down each panel (its `kc x nr` slice of B reused from cache).
                            for j in j0..j1 {
                                for q in 0..tiles {
                                    let next = if q + 1 < tiles { tile_at((q + 1) * mr, j) } else if j + 1 < j1 { tile_at(0, j + 1) } else { tile_at(q * mr, j) };
                                    tile(q * mr, j, next);
                                }
                            }
                        } else {
                            // A thin K (one thread, or this thread's rows): along each row of
                            // tiles, C written row by row (its lines in order for the
                            // prefetchers; B's panels are small).
                            for q in 0..tiles {
                                for j in j0..j1 {
                                    let next = if j + 1 < j1 { tile_at(q * mr, j + 1) } else if q + 1 < tiles { tile_at((q + 1) * mr, j0) } else { tile_at(q * mr, j) };
                                    tile(q * mr, j, next);
                                }
                            }
                        }
                        ic += mb;
                    }
                    if threads > 1 && by_rows {
                        team.barrier();
                    }
                    pc += kb;
                }
                jc += nb;
            }
        };
        team.run(&body);
        Ok(())
    })
}

/// Prefetches `rows` rows of `bytes` bytes, `ld` elements apart, from `p` into L1 (x86; a
/// no-op elsewhere).
#[inline(always)]
fn prefetch_rows<T>(p: *const T, rows: usize, ld: isize, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    for r in 0..rows {
        let row = p.wrapping_offset(r as isize * ld) as *const i8;
        for l in (0..bytes).step_by(64) {
            // SAFETY: a prefetch never faults.
            unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(row.wrapping_add(l)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, rows, ld, bytes);
}

fn round64(bytes: usize) -> usize {
    bytes.div_ceil(64) * 64
}

/// Thread `t` of `threads`' share `[lo, hi)` of `n` items (contiguous, sizes differing by at
/// most one).
fn share(n: usize, t: usize, threads: usize) -> (usize, usize) {
    let threads = threads.max(1);
    (n * t / threads, n * (t + 1) / threads)
}

/// Packs `B[pc..pc+kb, col..col+w]` into a `kb x nr` panel at `dst` (columns `w..nr` zero).
unsafe fn pack_b<T: Real>(b: Mat<T>, pc: usize, kb: usize, col: usize, w: usize, nr: usize, dst: *mut T) {
    pack_panel(b.ptr.offset(pc as isize * b.rs + col as isize * b.cs), [b.rs, b.cs], kb, w, nr, dst)
}

/// Packs `A[ic..ic+mb, pc..pc+kb]` into `kb x mr` micro-panels at `dst` (rows past `mb`
/// zero), micro-panel `q` at `dst + q * kb * mr`.
unsafe fn pack_a<T: Real>(a: Mat<T>, ic: usize, mb: usize, pc: usize, kb: usize, mr: usize, dst: *mut T) {
    let mut q = 0;
    while q * mr < mb {
        let base = a.ptr.offset((ic + q * mr) as isize * a.rs + pc as isize * a.cs);
        pack_panel(base, [a.cs, a.rs], kb, mr.min(mb - q * mr), mr, dst.add(q * kb * mr));
        q += 1;
    }
}

/// Packs a `kb x lanes` slice (element `(p, l)` at `base + p * step + l * across`, `[step,
/// across]`) into a contiguous `kb x width` panel at `dst`, lanes `lanes..width` zero: a
/// B panel (lanes its columns) or an A micro-panel (lanes its rows).
unsafe fn pack_panel<T: Real>(base: *const T, [step, across]: [isize; 2], kb: usize, lanes: usize, width: usize, dst: *mut T) {
    if across == 1 {
        for p in 0..kb {
            std::ptr::copy_nonoverlapping(base.offset(p as isize * step), dst.add(p * width), lanes);
        }
    } else if step == 1 {
        // Each lane is a contiguous run over K: a transposing copy.
        T::transpose(base, across, lanes, kb, dst, width, false);
    } else {
        for p in 0..kb {
            for l in 0..lanes {
                *dst.add(p * width + l) = *base.offset(p as isize * step + l as isize * across);
            }
        }
    }
    if lanes < width {
        for p in 0..kb {
            for l in lanes..width {
                *dst.add(p * width + l) = T::default();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Row-major reference product in f64.
    fn reference(m: usize, n: usize, k: usize, a: &[f64], b: &[f64]) -> Vec<f64> {
        let mut c = vec![0.0; m * n];
        for i in 0..m {
            for p in 0..k {
                for j in 0..n {
                    c[i * n + j] += a[i * k + p] * b[p * n + j];
                }
            }
        }
        c
    }

    fn data(len: usize, seed: u64) -> Vec<f64> {
        let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (0..len)
            .map(|_| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((s >> 33) as f64 / (1u64 << 31) as f64) - 0.5
            })
            .collect()
    }

    /// The operands of an `m x n x k` product as `T` (data of seeds `seed`, `seed + 1`) and
    /// their largest magnitude.
    fn operands<T: From<f32>>([m, n, k]: [usize; 3], seed: u64) -> (Vec<T>, Vec<T>, f64) {
        let (a64, b64) = (data(m * k, seed), data(k * n, seed + 1));
        let scale = a64.iter().chain(&b64).fold(0f64, |x, y| x.max(y.abs()));
        (a64.iter().map(|&x| T::from(x as f32)).collect(), b64.iter().map(|&x| T::from(x as f32)).collect(), scale)
    }

    /// Views of [`operands`]: A row-major, or with `ta` column-major; B row-major.
    fn views<T>(a: &[T], b: &[T], [m, n, k]: [usize; 3], ta: bool) -> (Mat<T>, Mat<T>) {
        let a = if ta { Mat { ptr: a.as_ptr(), rs: 1, cs: m as isize } } else { Mat { ptr: a.as_ptr(), rs: k as isize, cs: 1 } };
        (a, Mat { ptr: b.as_ptr(), rs: n as isize, cs: 1 })
    }

    fn check<T: Real + Into<f64> + From<f32>>(kern: Kernel<T>, team: &dyn Team, [m, n, k]: [usize; 3], ta: bool, tb: bool, caches: Caches, tol: f64) {
        let (a64, b64) = (data(m * k, 1), data(k * n, 2));
        let conv = |v: &[f64]| -> Vec<T> { v.iter().map(|&x| T::from(x as f32)).collect() };
        // A stored [m, k] or [k, m]; B [k, n] or [n, k].
        let a_store: Vec<T> = if ta { conv(&(0..m * k).map(|i| a64[(i % m) * k + i / m]).collect::<Vec<_>>()) } else { conv(&a64) };
        let b_store: Vec<T> = if tb { conv(&(0..n * k).map(|i| b64[(i % k) * n + i / k]).collect::<Vec<_>>()) } else { conv(&b64) };
        let a = if ta { Mat { ptr: a_store.as_ptr(), rs: 1, cs: m as isize } } else { Mat { ptr: a_store.as_ptr(), rs: k as isize, cs: 1 } };
        let b = if tb { Mat { ptr: b_store.as_ptr(), rs: 1, cs: k as isize } } else { Mat { ptr: b_store.as_ptr(), rs: n as isize, cs: 1 } };
        let a_r: Vec<f64> = a64.iter().map(|&x| x as f32 as f64).collect();
        let b_r: Vec<f64> = b64.iter().map(|&x| x as f32 as f64).collect();
        let want = reference(m, n, k, &a_r, &b_r);
        let mut c: Vec<T> = vec![T::from(7.0); m * n];
        let p = Problem { m, n, k, a, b, c: c.as_mut_ptr(), ldc: n as isize, accumulate: false };
        unsafe { gemm_with(&p, team, kern, caches).unwrap() };
        for (i, (&g, &w)) in c.iter().zip(&want).enumerate() {
            let g: f64 = g.into();
            assert!((g - w).abs() <= tol * (1.0 + w.abs()) * (k as f64).sqrt(), "{kern:?} {m}x{n}x{k} ta={ta} tb={tb} at {i}: {g} vs {w}");
        }
        // Accumulate: C += A B doubles the product.
        let p = Problem { accumulate: true, ..p };
        unsafe { gemm_with(&p, team, kern, caches).unwrap() };
        for (i, (&g, &w)) in c.iter().zip(&want).enumerate() {
            let g: f64 = g.into();
            assert!((g - 2.0 * w).abs() <= 2.0 * tol * (1.0 + w.abs()) * (k as f64).sqrt(), "accumulate {kern:?} {m}x{n}x{k} at {i}: {g} vs {}", 2.0 * w);
        }
    }

    fn shapes() -> Vec<[usize; 3]> {
        // N of 80 and 112 end in a panel exactly an edge kernel's width (48 + 32, 2 x 48 + 16);
        // 40 in one past every edge of the two-vector kernel.
        vec![[1, 1, 1], [7, 5, 3], [8, 32, 16], [33, 70, 129], [64, 64, 300], [100, 17, 9], [5, 200, 64], [130, 96, 700], [17, 80, 40], [9, 112, 33], [16, 40, 20]]
    }

    #[test]
    fn every_kernel_every_layout() {
        // Small caches force several K, row and column blocks on small shapes.
        let small = Caches { l1d: 4 << 10, l2: 4 << 10, l1_sets: 64, line: 64 };
        let teams: [&dyn Team; 2] = [&Serial, &Scoped::new(3)];
        for kern in f32::all() {
            for s in shapes() {
                for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
                    for team in teams {
                        check::<f32>(kern, team, s, ta, tb, small, 1e-5);
                        check::<f32>(kern, team, s, ta, tb, host_caches(), 1e-5);
                    }
                }
            }
        }
        for kern in f64::all() {
            for s in shapes() {
                for (ta, tb) in [(false, false), (true, true)] {
                    for team in teams {
                        check::<f64>(kern, team, s, ta, tb, small, 1e-12);
                    }
                }
            }
        }
    }

    /// The narrow path (one vector of columns, A in place, C under a lane mask) on every
    /// width up to the lanes, ragged row counts, both layouts of each operand, accumulate,
    /// one and three threads: the packed path's results to the bit (the same FMA chains),
    /// except one column of a row-major A (row dot products, reassociated: within tolerance).
    /// `path` on `a x b` (`m x n x k`) into a C wider than the product (`n + 3` columns: those
    /// past N must stay as they were), set and accumulated, on each of `teams`, with the packed
    /// path on one thread alongside: (got, want, accumulate) per run.
    fn against_packed<T: Real + From<f32>>([m, n, k]: [usize; 3], a: Mat<T>, b: Mat<T>, teams: &[&dyn Team], path: impl Fn(&Problem<T>, &dyn Team)) -> Vec<(Vec<T>, Vec<T>, bool)> {
        let ldc = n + 3;
        let mut want0: Vec<T> = vec![T::from(7.0); m * ldc];
        let pw = Problem { m, n, k, a, b, c: want0.as_mut_ptr(), ldc: ldc as isize, accumulate: false };
        unsafe { gemm_with(&pw, &Serial, T::kernel(), host_caches()).unwrap() };
        let mut out = Vec::new();
        for team in teams {
            for accumulate in [false, true] {
                let mut got: Vec<T> = vec![T::from(7.0); m * ldc];
                let mut want = want0.clone();
                if accumulate {
                    got.copy_from_slice(&want);
                    let pw = Problem { c: want.as_mut_ptr(), accumulate: true, ..pw };
                    unsafe { gemm_with(&pw, &Serial, T::kernel(), host_caches()).unwrap() };
                }
                path(&Problem { m, n, k, a, b, c: got.as_mut_ptr(), ldc: ldc as isize, accumulate }, *team);
                out.push((got, want, accumulate));
            }
        }
        out
    }

    #[test]
    fn narrow_products_equal_the_packed_path() {
        fn one<T: Real + Into<f64> + From<f32> + PartialEq + std::fmt::Debug>(lanes: usize) {
            if T::narrow().is_none() {
                return;
            }
            let teams: [&dyn Team; 2] = [&Serial, &Scoped::new(3)];
            for n in 1..=lanes {
                for (m, k) in [(1, 1), (15, 3), (16, 64), (17, 5), (33, 300), (100, 17), (256, 512)] {
                    for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
                        let (a64, b64) = (data(m * k, 3), data(k * n, 4));
                        let a_s: Vec<T> = a64.iter().map(|&x| T::from(x as f32)).collect();
                        let b_s: Vec<T> = b64.iter().map(|&x| T::from(x as f32)).collect();
                        let a = if ta { Mat { ptr: a_s.as_ptr(), rs: 1, cs: m as isize } } else { Mat { ptr: a_s.as_ptr(), rs: k as isize, cs: 1 } };
                        let b = if tb { Mat { ptr: b_s.as_ptr(), rs: 1, cs: k as isize } } else { Mat { ptr: b_s.as_ptr(), rs: n as isize, cs: 1 } };
                        let ldc = n + 3;
                        for (got, want, accumulate) in against_packed([m, n, k], a, b, &teams, |p, team| unsafe { gemm_narrow(p, team).expect("narrow").unwrap() }) {
                            if n == 1 && !ta && T::row_dots().is_some() {
                                // Row dot products: reassociated sums, within K ulps-ish of
                                // the sequential ones; the columns past N untouched.
                                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                                    let (g, w): (f64, f64) = ((*g).into(), (*w).into());
                                    let tol = if i % ldc == 0 { 1e-5 * k as f64 } else { 0.0 };
                                    assert!((g - w).abs() <= tol, "{m}x1x{k} ta={ta} tb={tb} accumulate={accumulate} at {i}: {g} vs {w}");
                                }
                            } else {
                                assert_eq!(got, want, "{m}x{n}x{k} ta={ta} tb={tb} accumulate={accumulate}");
                            }
                        }
                    }
                }
            }
            // Wider than the lanes, or empty: not the narrow path's.
            let z = [T::default(); 1];
            let v = Mat { ptr: z.as_ptr(), rs: 0, cs: 0 };
            let mut c = [T::default(); 1];
            for (m, n, k) in [(4, lanes + 1, 4), (0, 4, 4), (4, 4, 0)] {
                let p = Problem { m, n, k, a: v, b: v, c: c.as_mut_ptr(), ldc: 0, accumulate: false };
                assert!(unsafe { gemm_narrow(&p, &Serial) }.is_none(), "{m}x{n}x{k}");
            }
        }
        one::<f32>(16);
        one::<f64>(8);
    }

    #[test]
    fn short_products_equal_the_packed_path() {
        // Every row count of the short path, ragged columns (masked last vectors), A in place
        // row-major or transposed, C wider than the product, one thread and a team, set and
        // accumulate: the same FMA chains in the same K order as the packed path, so equal.
        // Beyond its cached rows, products of more than one vector of columns and up to two
        // (`gemm_two_vectors`: the short kernel on blocks of 8 rows, a ragged last block).
        fn one<T: Real + From<f32> + PartialEq + std::fmt::Debug>(lanes: usize) {
            if T::short().is_none() {
                return;
            }
            let teams: [&dyn Team; 2] = [&Serial, &Scoped::new(3)];
            let short = (1..=SHORT_MAX_ROWS).chain([16, 33, SHORT_CACHED_MAX_ROWS]).flat_map(|m| [(lanes + 1, 1), (3 * lanes + 5, 7), (8 * lanes, 33), (300, 64), (129, 500)].map(|(n, k)| [m, n, k]));
            let two = [SHORT_CACHED_MAX_ROWS + 1, 100, 257].into_iter().flat_map(|m| [lanes + 1, lanes + 7, 2 * lanes - 1, 2 * lanes].into_iter().flat_map(move |n| [1, 17, 300].map(|k| [m, n, k])));
            for [m, n, k] in short.chain(two) {
                for ta in [false, true] {
                    let (a_s, b_s, _) = operands::<T>([m, n, k], 3);
                    let (a, b) = views(&a_s, &b_s, [m, n, k], ta);
                    for (got, want, accumulate) in against_packed([m, n, k], a, b, &teams, |p, team| assert!(unsafe { gemm_short(p, team) }, "{m}x{n}x{k} takes the short path")) {
                        assert_eq!(got, want, "{m}x{n}x{k} ta={ta} accumulate={accumulate}");
                    }
                }
            }
            // Too many rows (and more than two vectors), one vector of columns, B's columns
            // strided: not the short path's.
            let z = [T::default(); 1];
            let v = Mat { ptr: z.as_ptr(), rs: 0, cs: 1 };
            let mut c = [T::default(); 1];
            for (m, n, b) in [(SHORT_CACHED_MAX_ROWS + 1, 64, v), (100, 2 * lanes + 1, v), (4, lanes, v), (4, 64, Mat { cs: 2, ..v })] {
                let p = Problem { m, n, k: 4, a: v, b, c: c.as_mut_ptr(), ldc: 0, accumulate: false };
                assert!(!unsafe { gemm_short(&p, &Serial) }, "{m}x{n}");
            }
        }
        one::<f32>(16);
        one::<f64>(8);
    }

    #[test]
    fn one_row_against_contiguous_columns_is_the_transposed_product() {
        // y @ x.T: C^T = B^T A^T through the dispatcher (row dot products of B's columns):
        // within reassociation of the packed path, C's columns past N untouched.
        let teams: [&dyn Team; 2] = [&Serial, &Scoped::new(3)];
        for (n, k) in [(300usize, 700usize), (2, 5000), (1000, 33)] {
            let (a_s, b_s, _) = operands::<f32>([1, n, k], 9);
            let a = Mat { ptr: a_s.as_ptr(), rs: k as isize, cs: 1 };
            let b = Mat { ptr: b_s.as_ptr(), rs: 1, cs: k as isize };
            let tol = 4.0 * k as f64 * f32::EPSILON as f64;
            for (got, want, accumulate) in against_packed([1, n, k], a, b, &teams, |p, team| unsafe { gemm(p, team).unwrap() }) {
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    let ok = if i >= n { g == w } else { ((g - w) as f64).abs() <= tol };
                    assert!(ok, "1x{n}x{k} accumulate={accumulate} element {i}: {g} vs {w}");
                }
            }
        }
    }

    #[test]
    fn streamed_short_products_equal_the_packed_path() {
        // B larger than SHORT_STREAM_L2S L2s: read in K blocks of 8 or 16 rows across all the
        // columns, each C block continuing its sums from C: the packed path's bits.
        let l2 = host_caches().l2.max(1 << 18) as usize;
        let teams: [&dyn Team; 2] = [&Serial, &Scoped::new(3)];
        for (m, n) in [(2usize, 2100usize), (5, 1100)] {
            let k = (SHORT_STREAM_L2S * l2 / (4 * n) + 9).max(1000);
            let (a_s, b_s, _) = operands::<f32>([m, n, k], 7);
            let (a, b) = views(&a_s, &b_s, [m, n, k], false);
            for (got, want, accumulate) in against_packed([m, n, k], a, b, &teams, |p, team| assert!(unsafe { gemm_short(p, team) })) {
                assert!(got == want, "{m}x{n}x{k} accumulate={accumulate}");
            }
        }
        // Past SHORT_MAX_ROWS rows a streamed B is the packed path's (nothing read here).
        let z = [0f32; 1];
        let v = Mat { ptr: z.as_ptr(), rs: 0, cs: 1 };
        let mut c = [0f32; 1];
        let k = SHORT_STREAM_L2S * l2 / (4 * 64) + 1;
        let p = Problem { m: SHORT_MAX_ROWS + 1, n: 64, k, a: v, b: v, c: c.as_mut_ptr(), ldc: 0, accumulate: false };
        assert!(!unsafe { gemm_short(&p, &Serial) });
    }

    #[test]
    fn thin_products_split_by_rows_equal_the_packed_path() {
        // K up to ROW_ORDER_MAX_K on two and three threads: the rows split, each thread with
        // its own copy of B (several column blocks with small caches), C along its rows. Each
        // element is the one FMA chain over K it is on one thread: the same bits, ragged rows
        // and columns, both layouts of A, set and accumulated.
        let small = Caches { l1d: 4 << 10, l2: 4 << 10, l1_sets: 64, line: 64 };
        let teams: [&dyn Team; 2] = [&Scoped::new(2), &Scoped::new(3)];
        for [m, n, k] in [[100, 70, 1], [257, 131, 4], [64, 1000, 16], [48, 33, 10]] {
            for ta in [false, true] {
                let (a_s, b_s, _) = operands::<f32>([m, n, k], 11);
                let (a, b) = views(&a_s, &b_s, [m, n, k], ta);
                for caches in [small, host_caches()] {
                    for (got, want, accumulate) in against_packed([m, n, k], a, b, &teams, |p, team| unsafe { gemm_with(p, team, f32::kernel(), caches).unwrap() }) {
                        assert!(got == want, "{m}x{n}x{k} ta={ta} accumulate={accumulate}");
                    }
                }
                let (a_s, b_s, _) = operands::<f64>([m, n, k], 12);
                let (a, b) = views(&a_s, &b_s, [m, n, k], ta);
                for (got, want, accumulate) in against_packed([m, n, k], a, b, &teams, |p, team| unsafe { gemm_with(p, team, f64::kernel(), host_caches()).unwrap() }) {
                    assert!(got == want, "f64 {m}x{n}x{k} ta={ta} accumulate={accumulate}");
                }
            }
        }
    }

    #[test]
    fn split_k_products_equal_the_packed_path_within_reassociation() {
        // Small outputs with a long K on two and three threads (and a team running more
        // threads than it announces): the whole output per part of K, summed in part order;
        // within the reassociation of K's parts (k * eps * max|a| * max|b|) of the packed
        // path on one thread, whose result one thread gives to the bit (no split). Ragged
        // shapes, A transposed, each part on the narrow, short or packed path, C wider than
        // the product (its columns past N untouched), set and accumulate.
        fn one<T: Real + From<f32> + Into<f64>>(eps: f64) {
            let teams: [&dyn Team; 3] = [&Scoped::new(2), &Scoped::new(3), &Larger(Scoped::new(3))];
            for [m, n, k] in [[100, 100, 5000], [1, 300, 2048], [16, 16, 3000], [3, 2000, 4096], [20, 9, 1500], [200, 300, 1024]] {
                for ta in [false, true] {
                    let (a_s, b_s, scale) = operands::<T>([m, n, k], 5);
                    let (a, b) = views(&a_s, &b_s, [m, n, k], ta);
                    let tol = 2.0 * k as f64 * eps * scale * scale;
                    for (got, want, accumulate) in against_packed([m, n, k], a, b, &teams, |p, team| assert!(unsafe { gemm_split_k(p, team) }.is_some_and(|r| r.is_ok()), "{m}x{n}x{k} splits K")) {
                        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                            let (g, w): (f64, f64) = ((*g).into(), (*w).into());
                            let past = i % (n + 3) >= n;
                            assert!(if past { g == w } else { (g - w).abs() <= tol * (1.0 + accumulate as u8 as f64) }, "{m}x{n}x{k} ta={ta} accumulate={accumulate} element {i}: {g} vs {w}");
                        }
                    }
                    let mut c = vec![T::from(1.0); m * n];
                    let p = Problem { m, n, k, a, b, c: c.as_mut_ptr(), ldc: n as isize, accumulate: false };
                    assert!(unsafe { gemm_split_k(&p, &Serial) }.is_none(), "one thread does not split");
                }
            }
            // Outputs too large, K too short (or shorter than M or N), narrow products with 16
            // rows a thread: not split.
            let z = [T::default(); 1];
            let v = Mat { ptr: z.as_ptr(), rs: 0, cs: 0 };
            let mut c = [T::default(); 1];
            for [m, n, k] in [[300, 300, 5000], [100, 100, 1000], [2000, 10, 1500], [37, 5, 1500]] {
                let p = Problem { m, n, k, a: v, b: v, c: c.as_mut_ptr(), ldc: 0, accumulate: false };
                assert!(unsafe { gemm_split_k(&p, &Scoped::new(2)) }.is_none(), "{m}x{n}x{k}");
            }
        }
        one::<f32>(f32::EPSILON as f64);
        one::<f64>(f64::EPSILON);
    }

    /// A team that runs more threads than `threads()` says.
    struct Larger(Scoped);

    impl Team for Larger {
        fn threads(&self) -> usize {
            2
        }
        fn run(&self, body: &(dyn Fn(usize, usize) + Sync)) {
            self.0.run(body)
        }
        fn barrier(&self) {
            self.0.barrier()
        }
    }

    #[test]
    fn a_larger_team_than_announced_still_computes_the_product() {
        // Narrow (rows split behind barriers when the team is as announced) and wide shapes.
        let small = Caches { l1d: 4 << 10, l2: 4 << 10, l1_sets: 64, line: 64 };
        for s in [[200, 20, 64], [64, 300, 70]] {
            check::<f32>(f32::kernel(), &Larger(Scoped::new(4)), s, false, false, small, 1e-5);
        }
    }

    #[test]
    fn zero_k_and_empty() {
        let mut c = vec![3.0f32; 6];
        let a = Mat { ptr: [0f32; 0].as_ptr(), rs: 0, cs: 1 };
        let p = Problem { m: 2, n: 3, k: 0, a, b: a, c: c.as_mut_ptr(), ldc: 3, accumulate: false };
        unsafe { gemm(&p, &Serial).unwrap() };
        assert_eq!(c, vec![0.0; 6]);
        c.fill(3.0);
        unsafe { gemm(&Problem { accumulate: true, ..p }, &Serial).unwrap() };
        assert_eq!(c, vec![3.0; 6]);
    }

    #[test]
    fn block_choice() {
        let xeon = Caches { l1d: 48 << 10, l2: 2 << 20, l1_sets: 64, line: 64 };
        assert_eq!(blocks(4, [1024, 1024, 1024], [8, 32], xeon, 1), Blocks { kc: 512, mc: 64, nc: 1024 });
        assert_eq!(blocks(8, [1024, 1024, 1024], [8, 16], xeon, 1), Blocks { kc: 512, mc: 64, nc: 1024 });
        let zen4 = Caches { l1d: 32 << 10, l2: 1 << 20, l1_sets: 64, line: 64 };
        assert_eq!(blocks(4, [1024, 1024, 1024], [8, 32], zen4, 1), Blocks { kc: 512, mc: 64, nc: 1024 });
        assert_eq!(blocks(8, [1024, 1024, 1024], [8, 16], zen4, 1).kc, 512);
        // Balanced column blocks: 1536 = 2 x 768, not 1024 + 512.
        assert_eq!(blocks(4, [1536, 1536, 1536], [8, 32], zen4, 1).nc, 768);
        assert_eq!(blocks(4, [1500, 1500, 1500], [8, 32], zen4, 1).nc, 768);
        // Two threads: each one's share of the block at most twice L2.
        assert_eq!(blocks(8, [1024, 1024, 1024], [8, 16], zen4, 1).nc, 512);
        assert_eq!(blocks(8, [1024, 1024, 1024], [8, 16], zen4, 2).nc, 1024);
        assert_eq!(blocks(4, [3000, 3000, 3000], [8, 32], zen4, 2).nc, 1504);
        // Balanced K blocks: 784 = 2 x 392; small shapes keep one block.
        assert_eq!(blocks(4, [256, 512, 784], [8, 32], xeon, 1).kc, 392);
        assert_eq!(blocks(4, [10, 10, 10], [8, 32], xeon, 1), Blocks { kc: 10, mc: 16, nc: 32 });
    }
}
