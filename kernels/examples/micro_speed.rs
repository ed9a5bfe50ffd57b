//! The micro-kernels alone on L1-resident panels (GFLOP/s): `cargo run --release -p
//! quabla-kernels --example micro_speed`.
use quabla_kernels::gemm::{Kernel, Real};

#[repr(align(64))]
#[derive(Clone, Copy)]
struct Line(#[allow(dead_code)] [u8; 64]);

fn run<T: Real>(k: Kernel<T>) {
    let kc = 256;
    let size = std::mem::size_of::<T>();
    let a = vec![Line([0; 64]); kc * k.mr * size / 64 + 4];
    let b = vec![Line([0; 64]); kc * k.nr * size / 64 + 4];
    let mut c = vec![Line([0; 64]); k.mr * 1024 * size / 64];
    let (a, b, c) = (a.as_ptr() as *const T, b.as_ptr() as *const T, c.as_mut_ptr() as *mut T);
    let reps = 100_000;
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = std::time::Instant::now();
        for _ in 0..reps {
            unsafe { (k.f)(kc, a, [0, 0], b, c, 1024, true) };
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    let flops = 2.0 * (kc * k.mr * k.nr) as f64 * reps as f64;
    println!("{} {k:?}: {:.1} GFLOP/s", std::any::type_name::<T>(), flops / best / 1e9);
}

fn main() {
    run(<f32 as Real>::kernel());
    run(<f64 as Real>::kernel());
}
