//! Row and column sums of a matrix on one thread (quabla_kernels::reduce), min of 200 runs.
//!     cargo run --release -p quabla-kernels --example sum_speed -- [m] [n]
use quabla_kernels::gemm::Serial;
use quabla_kernels::reduce::sums;

fn main() {
    let a: Vec<usize> = std::env::args().skip(1).filter_map(|s| s.parse().ok()).collect();
    let (m, n) = (a.first().copied().unwrap_or(1024), a.get(1).copied().unwrap_or(1024));
    let x: Vec<f32> = (0..m * n).map(|k| (k % 97) as f32 * 0.01).collect();
    for columns in [false, true] {
        let mut out = vec![0f32; if columns { n } else { m }];
        let mut best = f64::MAX;
        for _ in 0..200 {
            let t = std::time::Instant::now();
            // SAFETY: x holds m rows of n, out the outputs.
            unsafe { sums(x.as_ptr(), [m, n], n, columns, out.as_mut_ptr(), &Serial) };
            best = best.min(t.elapsed().as_secs_f64());
        }
        println!("{m}x{n} {}: {:.1} us ({:.1} GB/s)", if columns { "columns" } else { "rows" }, best * 1e6, (m * n * 4) as f64 / best / 1e9);
    }
}
