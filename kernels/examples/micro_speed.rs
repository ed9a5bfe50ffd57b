//! The f32 micro-kernel alone on L1-resident panels: `cargo run --release -p quabla-kernels --example micro_speed`.
use quabla_kernels::gemm::Real;
fn main() {
    let k = <f32 as Real>::kernel();
    let kc = 256;
    #[repr(align(64))]
    #[derive(Clone, Copy)]
    struct Line([f32; 16]);
    let a = vec![Line([0.5; 16]); kc * k.mr / 16 + 4];
    let b = vec![Line([0.25; 16]); kc * k.nr / 16 + 4];
    let (a, b) = (a.as_ptr() as *const f32, b.as_ptr() as *const f32);
    let mut c = vec![0f32; k.mr * 1024];
    let reps = 200_000;
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = std::time::Instant::now();
        for _ in 0..reps {
            unsafe { (k.f)(kc, a, b, c.as_mut_ptr(), 1024, true) };
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    let flops = 2.0 * (kc * k.mr * k.nr) as f64 * reps as f64;
    println!("{k:?}: {:.1} GFLOP/s", flops / best / 1e9);
}
