//! GFLOP/s of the packed product: `cargo run --release -p quabla-kernels --example gemm_speed
//! -- [n | MxKxN] [threads] [f32|f64] [kernel]` (kernel: avx512, avx2 or portable; default
//! the host's best; `narrow`: the narrow path, `gemm_narrow`, for N up to one vector; `short`:
//! the short path, `gemm_short`, for M up to 8; `auto`: `gemm`, the dispatcher that picks
//! the path a compiled program's call takes). `L1=bytes` / `L2=bytes` in the environment
//! replace the host's cache sizes the blocks derive from (sweeps of kc, mc and nc).
use quabla_kernels::gemm::{gemm, gemm_narrow, gemm_short, gemm_with, host_caches, Mat, Problem, Scoped, Serial, Team};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dims: Vec<usize> = args.get(1).map_or(vec![1024], |s| s.split('x').filter_map(|d| d.parse().ok()).collect());
    let n = if dims.len() == 3 { [dims[0], dims[1], dims[2]] } else { [dims[0]; 3] };
    let threads: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let f64s = args.get(3).is_some_and(|s| s == "f64");
    let kernel = args.get(4).cloned();
    let scoped = Scoped::new(threads);
    let team: &dyn Team = if threads > 1 { &scoped } else { &Serial };
    if f64s {
        run::<f64>(n, team, kernel)
    } else {
        run::<f32>(n, team, kernel)
    }
}

fn run<T: quabla_kernels::gemm::Real + From<f32>>([m, k, n]: [usize; 3], team: &dyn Team, kernel: Option<String>) {
    let narrow = kernel.as_deref() == Some("narrow");
    let short = kernel.as_deref() == Some("short");
    let auto = kernel.as_deref() == Some("auto");
    let kernel = kernel.filter(|k| k != "narrow" && k != "short" && k != "auto");
    let kern = match kernel {
        Some(name) => *T::all().iter().find(|k| k.name == name).unwrap_or_else(|| panic!("no {name} kernel on this host")),
        None => T::kernel(),
    };
    let a: Vec<T> = (0..m * k).map(|i| T::from((i % 7) as f32 * 0.1)).collect();
    let b: Vec<T> = (0..k * n).map(|i| T::from((i % 5) as f32 * 0.1)).collect();
    let mut c: Vec<T> = vec![T::default(); m * n];
    let p = Problem { m, n, k, a: Mat { ptr: a.as_ptr(), rs: k as isize, cs: 1 }, b: Mat { ptr: b.as_ptr(), rs: n as isize, cs: 1 }, c: c.as_mut_ptr(), ldc: n as isize, accumulate: false };
    let mut caches = host_caches();
    let bytes = |name: &str| std::env::var(name).ok().map(|v| v.parse::<i64>().unwrap_or_else(|_| panic!("{name}: a size in bytes")));
    caches.l1d = bytes("L1").unwrap_or(caches.l1d);
    caches.l2 = bytes("L2").unwrap_or(caches.l2);
    let mut best = f64::MAX;
    for _ in 0..(3e10 / (2.0 * (m * n * k) as f64)).clamp(30.0, 3000.0) as usize {
        let t = std::time::Instant::now();
        if narrow {
            unsafe { gemm_narrow(&p, team).expect("a product of at most one vector of columns").unwrap() };
        } else if auto {
            unsafe { gemm(&p, team).unwrap() };
        } else if short {
            assert!(unsafe { gemm_short(&p, team) }, "a product of at most 8 rows, wider than one vector");
        } else {
            unsafe { gemm_with(&p, team, kern, caches).unwrap() };
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    let name = if narrow { "narrow".to_string() } else if short { "short".to_string() } else if auto { "auto".to_string() } else { format!("{kern:?}") };
    println!("{m}x{k}x{n} {} {name}: {:.1} us, {:.1} GFLOP/s", std::any::type_name::<T>(), best * 1e6, 2.0 * (m * n * k) as f64 / best / 1e9);
}
