//! The transposing copy compiled programs call for large transposes of 4- and 8-byte
//! elements (`quabla_transpose_<dtype>`, runtime/src/layout_kernels.rs): a `[rows, cols]`
//! matrix into its `[cols, rows]` transpose, in square tiles that stay in L1 (each a
//! [`Real::transpose`]: 8 x 8 f32 / 4 x 4 f64 blocks of AVX shuffles where the host has AVX),
//! the tile rows split between the team's threads. A transposing loop over the result reads
//! the operand a column at a time (one cache line per element at a power-of-two row length):
//! 1024^2 f32 took 1.6 ms on Zen 4 where JAX takes 0.2.
use crate::gemm::{Real, Shared, Team};

/// Rows and columns of a tile (64 x 64 f32: 16 KB read, 16 KB written).
pub const TILE: usize = 64;

/// Results of at least this many bytes (past the last-level caches of the machines we
/// measure, 32 MB) are written with non-temporal stores: 4096^2 f32 (64 MB) 6286-7429 ->
/// 4359 us on two threads of Zen 4 (JAX 34116); at 16 MB (65536 x 32 f64, [65536, 64] f32)
/// they did not pay, the result still fitting in L3.
pub const STREAM_BYTES: usize = 32 << 20;

/// `dst[c * ds + r] = src[r * rs + c]` for `r < rows`, `c < cols` on `team`.
///
/// # Safety
/// `src` is readable at those elements, `dst` writable at those and does not overlap `src`,
/// and every thread of `team` runs the body it is given.
pub unsafe fn transpose<T: Real>(src: *const T, rs: isize, [rows, cols]: [usize; 2], dst: *mut T, ds: usize, team: &dyn Team) {
    if rows == 0 || cols == 0 {
        return;
    }
    // A result larger than STREAM_BYTES is written with non-temporal stores where its blocks
    // are 32-byte aligned.
    let size = std::mem::size_of::<T>();
    let stream = rows.saturating_mul(cols).saturating_mul(size) >= STREAM_BYTES && (dst as usize) % 32 == 0 && (ds * size) % 32 == 0;
    let (src, dst) = (Shared(src as *mut T), Shared(dst));
    // The tiles in row-major order, a contiguous range of them per thread: split by tile rows
    // alone, a matrix of at most TILE rows ([64, 1024] per batch element of [16, 64, 1024],
    // 2026-12-07 on Zen 4: 361 -> 170 us, JAX 281) ran on one thread.
    let (tr, tc) = (rows.div_ceil(TILE), cols.div_ceil(TILE));
    let tiles = tr * tc;
    let body = move |t: usize, threads: usize| {
        let (src, dst) = (src, dst);
        let threads = threads.max(1);
        for q in tiles * t / threads..tiles * (t + 1) / threads {
            let (r0, c0) = (q / tc * TILE, q % tc * TILE);
            let (h, w) = (TILE.min(rows - r0), TILE.min(cols - c0));
            T::transpose(src.0.offset(r0 as isize * rs).add(c0), rs, h, w, dst.0.add(c0 * ds + r0), ds, stream);
        }
    };
    team.run(&body);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::{Scoped, Serial};

    #[test]
    fn large_results_stream_and_equal_the_source() {
        // STREAM_BYTES and more: the non-temporal stores (aligned result), then a misaligned
        // result (ordinary stores); two threads.
        let (rows, cols) = (2048usize, STREAM_BYTES / 4 / 2048 + 3);
        let src: Vec<f32> = (0..rows * cols).map(|i| (i % 100_003) as f32).collect();
        for offset in [0usize, 1] {
            let mut buf = vec![0f32; cols * rows + 16];
            let start = buf.as_ptr().align_offset(32) + offset;
            let dst = unsafe { buf.as_mut_ptr().add(start) };
            unsafe { transpose(src.as_ptr(), cols as isize, [rows, cols], dst, rows, &Scoped::new(2)) };
            for c in (0..cols).step_by(7) {
                for r in 0..rows {
                    assert_eq!(buf[start + c * rows + r], src[r * cols + c], "offset {offset} at ({c}, {r})");
                }
            }
        }
    }

    #[test]
    fn transposes_every_shape_on_one_and_three_threads() {
        for (rows, cols) in [(1, 1), (3, 70), (64, 64), (65, 129), (200, 9), (130, 1000)] {
            // A row stride past the columns (a view of a wider matrix), a result stride past the rows.
            let (rs, ds) = (cols + 3, rows + 2);
            let src: Vec<f32> = (0..rows * rs).map(|i| i as f32).collect();
            let src64: Vec<f64> = src.iter().map(|&x| x as f64).collect();
            for team in [&Serial as &dyn Team, &Scoped::new(3)] {
                let mut dst = vec![-1.0f32; cols * ds];
                let mut dst64 = vec![-1.0f64; cols * ds];
                unsafe {
                    transpose(src.as_ptr(), rs as isize, [rows, cols], dst.as_mut_ptr(), ds, team);
                    transpose(src64.as_ptr(), rs as isize, [rows, cols], dst64.as_mut_ptr(), ds, team);
                }
                for c in 0..cols {
                    for r in 0..ds {
                        let want = if r < rows { src[r * rs + c] } else { -1.0 };
                        assert_eq!(dst[c * ds + r], want, "{rows}x{cols} at ({c}, {r})");
                        assert_eq!(dst64[c * ds + r], want as f64, "f64 {rows}x{cols} at ({c}, {r})");
                    }
                }
            }
        }
    }
}
