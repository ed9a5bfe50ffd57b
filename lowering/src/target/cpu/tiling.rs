//! The tiled, vectorized CPU matmul path (transform dialect). The linalg lowering tags each
//! suitable `linalg.matmul` / `linalg.batch_matmul` with `quabla.tile = <n> : i64` and this
//! module writes two private named sequences into the lowered module (which then carries
//! `transform.with_named_sequence`); the CPU pipeline runs them with `transform-interpreter`
//! and drops them with `symbol-dce` before the LLVM conversions:
//!
//! * `@__quabla_tile` (on tensors, before bufferization): per tag, block K, then tile to
//!   register blocks (MR x NR x 1, [`register_block`]: 8 x 32 f32 on AVX-512, 4 x 16 on AVX2), vectorize the
//!   register block, turn the reduction into `vector.contract`, and hoist the accumulator's
//!   transfers out of the K loop, so each register block keeps its MR x NR accumulator in
//!   registers for a whole K block.
//! * `@__quabla_lower_vectors` (after bufferization): contractions become outer products,
//!   then FMAs on rows of B broadcast against elements of A; transfers become plain loads.
//!
//! The lowering emits each tiled matmul over B packed into contiguous NR-column panels, with
//! loops over row blocks of A and over the panels (and over the batch for batched ones), so
//! the tagged op is one `MB x NR x K` `linalg.matmul` ([`Plan`]). The script derives from
//! notes/mlir-cpu/td_mm.mlir, split around the pipeline's own bufferization. Every tile is full:
//! ragged M is padded with zeros to a multiple of MR (A into a zero-filled copy, the result the
//! leading `m` rows), a ragged N peels the last panel (B's last columns packed into a
//! zero-padded panel, whose blocks are computed apart and their leading columns inserted into
//! C: no padded copy of B or C), blocks divide the padded extents; only bool, u8 and very
//! small products stay on the loop path. Each output block is zeroed where it is computed.
//! Products of at least [`MICRO_MIN_PANELS`] panels take the micro-panel path instead when
//! K has a block that fits L1 ([`micro_blocks`], `Plan::kc`): A packed into MR-row
//! micro-panels, K blocked by the lowering, each tagged op one `MR x NR x kc` register block
//! (crate::linalg::dot::micro_matmul); its blocks derive from the host's caches. Integer
//! products (i32/u32 in f32's panels, i64 in f64's) run the same script: the contraction
//! becomes wrapping `muli`/`addi` outer products, exact like the loop path.
use std::fmt::Write;

use quabla_dialect::DType;

pub use crate::target::{par_code, MatmulTile, Plan, PAR_MAX_RANK};

/// The plan for an `m x k` by `k x n` product of `d`, or None when the loop path should be
/// kept (bool and u8 products, small products). Ragged M and N are padded (`Plan::mp`, `Plan::np`:
/// A's rows copied into a zero-padded A, N's last panel peeled by the lowering, see
/// `linalg::dot`): the padding costs at most MR - 1 rows and NR - 1 columns of work, far less
/// than the ~50x of the loop path.
///
/// Measured (1024^3 f32, one core of this machine, FMA peak ~205-225 GFLOP/s): blocks
/// 64 x 256 x 128 on the operands in place (notes/mlir-cpu/td_mm.mlir), ~108 GFLOP/s; B
/// packed in 32-column panels with 128-row blocks of A and K blocks of 256 (a 32 KB panel
/// slice stays in L1 while 16 register blocks pass over it), ~130-140 GFLOP/s. On the
/// Zen 5 machine of 2026-12-01 23:10 ([`MB_TARGET_BYTES`], [`KB_MAX`]): short row blocks
/// over whole K (the A block stays in L1/L2, the contiguous packed panels stream) beat
/// that by 10-20% on one core.
pub fn choose(d: DType, m: i64, n: i64, k: i64) -> Option<Plan> {
    choose_for(d, m, n, k, host_caches(), host_regs())
}

/// Rows below which a product stays on the loop path ([`choose_for`]). 1x1024 @ 1024x1024
/// f32 (2026-12-04, two threads): tiled 511 us (B packed, M padded to 8), loop path with the
/// output's columns innermost (`dot::plain_matmul`) measured in docs/performance.md.
pub const MIN_ROWS: i64 = 4;

/// [`choose`] for a CPU with caches `c` (the micro-panel blocking, [`micro_blocks`]) and
/// vector registers `r` (the register block, [`register_block`]).
pub fn choose_for(d: DType, m: i64, n: i64, k: i64, c: Caches, r: Regs) -> Option<Plan> {
    if matches!(d, DType::I1 | DType::U8) {
        return None;
    }
    // Below ~32^3 multiply-adds the loop path is as fast and compiles faster. Fewer rows
    // than MIN_ROWS: a vector-matrix product reads B once whatever the path, and the loop
    // path streams its rows where the tiled one would pack all of B and pad M to MR.
    if k < 4 || m < MIN_ROWS || m * n * k < 32 * 32 * 32 {
        return None;
    }
    plan_for(d, m, n, k, c, r)
}

/// The plan of an `m x n x k` product of `d` ([`choose_for`] without its size gates: also the
/// marker plan of small runtime products, whose calls do not use it).
pub fn plan_for(d: DType, m: i64, n: i64, k: i64, c: Caches, r: Regs) -> Option<Plan> {
    let (mr, nr) = register_block(d, n, r);
    let (mp, np) = (round_up(m, mr), round_up(n, nr));
    let target = MB_TARGET_BYTES / d.size() as i64;
    // The multiple of MR up to 16 MR dividing M that is nearest the target; K blocks up to
    // KB_MAX (0: one block).
    let mb = (1..=16).map(|q| q * mr).filter(|mb| mp % mb == 0).min_by_key(|&mb| ((mb - target).abs(), -mb))?;
    let kb = if k <= KB_MAX { 0 } else { (16..=KB_MAX).rev().find(|kb| k % kb == 0).unwrap_or(0) };
    let (kc, mc) = micro_blocks(d.size() as i64, mp, np, k, [mr, nr], c);
    let alias = if kc == 0 { [false; 2] } else { [rows_alias(k * d.size() as i64, mr, c), rows_alias(mp * d.size() as i64, mr, c)] };
    Some(Plan { mp, np, mr, mb, kb, nr, kc, mc, alias })
}

/// Whether an `m x n x k` product of `d` (`b` batch elements) calls the runtime's packed
/// product (`quabla_gemm_<d>`: quabla_kernels::gemm, precompiled micro-kernels on libomp's
/// team) instead of the tiled code of [`script`]: every product, single or batched, of f32
/// or f64 on hosts with AVX2 or AVX-512
/// (`r`: its micro-kernels; elsewhere the generated code is faster), products with at least
/// 32 columns (batched: [`BATCHED_MIN_COLUMNS`]) and 16 rows and K (or any K from [`THIN_K_MIN_OUTPUT`] output elements: the generated code of a
/// thin-K product with a large output ran at a third of the runtime's speed, jitted `a @ b`
/// f32 on Zen 4, 2026-12-05, two threads: 1000x10x1000 33.6 -> 87 GFLOP/s (JAX 127-134),
/// 1024x4x1024 12.9 -> 45 (JAX 82), 113 since the runtime splits thin products by rows (JAX 83); 512x8x512 55 -> 70), unless `QUABLA_CPU_GEMM=jit` (comparisons; the choice
/// changes the lowered text, which the compile cache's key has). Narrower products waste most
/// of the packed kernels' 32-column panels; on AVX-512 single products of at most one vector
/// of columns (16 f32, 8 f64) call it whatever their size: the runtime's narrow path
/// (quabla_kernels::gemm::gemm_narrow: A in place, C under a lane mask). 256x512x10 f32:
/// 28-31 us per call against the generated code's 25-27 (JAX 72-78), first call 3.5 against
/// 19-20 ms (JAX 20); the generated narrow products cost every program that has one (the MLP
/// step's output layer and its gradient) ~15 ms of compile each.
///
/// Each generated product costs the program's compile 10-25 ms (the transform script, the
/// vector lowering and LLVM on the kernel); the runtime's call costs 1-3 us more than a
/// generated kernel on small products. Measured 2026-12-04 (jitted `a @ b` f32, min of 300-1000
/// calls, one thread unless said):
/// * single products up to 2^18 (64^3 3.4 -> 5.5 us, JAX 35-44 us; first call 1.05 -> 0.29
///   of JAX's) and between 2^18 and 2^21: 32x128x256 14.6-15.0 -> 16.8-17.2 us, 64x256x64
///   12.8-13.1 -> 14.6-14.7, 128x64x128 12.6-13.0 -> 14.9-15.4, 100^3 18.6-18.9 -> 19.3-20.0
///   us (JAX's calls of such products: 25-45 us), each first call 16-28 -> 4-5 ms (JAX ~20);
/// * batched products from 2^21 per batch element: the GPT step first call 0.64-0.66 -> 0.49
///   s, per call the same within the noise;
/// * since stop 38 every batched product, its batch elements split between the threads
///   ([`PAR_BATCH_GEMM_WORK`]; runtime/src/gemm.rs `split_batch`): 64 x (64 x 64 x 64) 207
///   -> 145 us a call (JAX 350-385), first call 1.7 -> 0.55 of JAX's; attention's q k^T 8 x 4
///   x (64 x 64 x 16) 56-60 -> 66-68 us (JAX 100-120), first call 1.6 -> 0.53; the GPT step
///   (cpu_table.py) 6.71 -> 6.70 ms, first call the same.
pub fn runtime_gemm(d: DType, [b, m, n, k]: [i64; 4], r: Regs) -> bool {
    static JIT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let jit = *JIT.get_or_init(|| std::env::var("QUABLA_CPU_GEMM").is_ok_and(|v| v == "jit"));
    let narrow = narrow_gemm(d, [b, m, n, k], r);
    let tall = m >= 16 && (k >= 16 || m.saturating_mul(n) >= THIN_K_MIN_OUTPUT) && (narrow || two_vector_gemm(d, [b, m, n, k], r) || n >= 32 || (b > 1 && n >= BATCHED_MIN_COLUMNS));
    let dot = narrow && n == 1 && k >= NARROW_LONG_K;
    // A batch of matrix-vector products of at least 16 rows: each element's product takes
    // the narrow path's row dot products (AVX-512), the batch split between the threads.
    let batched_dots = b > 1 && n == 1 && m >= 16 && k >= 16 && r.bytes >= 64;
    matches!(d, DType::F32 | DType::F64) && r.bytes >= 32 && !jit && (tall || short_gemm(d, m, n, r) || dot || batched_dots)
}

/// Multiply-adds (all batch elements) from which a batch of products that is a runtime product
/// ([`runtime_gemm`]) calls it although each product is below [`choose`]'s size
/// (`CpuTarget::batched_plan`). Matrix-vector products (rows of at least 16: the narrow
/// path's row dot products): the loop path summed each row in K order down A's columns,
/// `vmap(m @ v)` of 1000 x (64x64 @ 64) f32 2008 us against JAX's 294, of 1000 x (16x16 @
/// 16) 102 against 46-68. Products of [`BATCHED_MIN_COLUMNS`] to 31 columns: the loop path's
/// column loop was a vector and a scalar remainder per row and K step, 256 x (n x n @ n x n)
/// f32 on Zen 4, two threads, 2026-12-07, us (JAX): n = 23 224 -> 65 (122-167), 29 539 ->
/// 90 (176-217), 31 786 -> 105 (257-276); f64 29 504 -> 180 (354-384); first calls 28-50 ->
/// 9-12 ms (JAX 13-20).
pub const BATCHED_SMALL_WORK: i64 = 1 << 16;

/// The fewest columns a batched product of 16 rows and K or more calls the runtime's packed
/// product with ([`runtime_gemm`]; single products from 32: a 1000x64x20 product was faster
/// generated, 42 us against 62).
pub const BATCHED_MIN_COLUMNS: i64 = 17;

/// Output elements from which a product of any K calls the runtime ([`runtime_gemm`]).
pub const THIN_K_MIN_OUTPUT: i64 = 1 << 16;

/// The shortest K from which products of one column and fewer than 16 rows (dot products,
/// matrix-vector products of a few rows) call the runtime (its row dot products, K split
/// between the threads): a dot product of two 1e6-element vectors was a scalar loop of the
/// generated code, 3.3 ms against JAX's 0.13; 4 x 1e5 times a vector 433 us against 54-60.
/// (With more columns the narrow path's packing of B to a vector's width costs more than
/// the generated loops: 1e5 @ 1e5 x 3 330 -> 547 us.)
pub const NARROW_LONG_K: i64 = 1024;

/// Whether a product of `d` with `m` rows and `n` columns takes the runtime's short path
/// (quabla_kernels::gemm::gemm_short: at most 15 rows, wider than one vector, AVX-512): B read
/// in place once per 8 rows, no packing. Such products had the tiled path (B packed, M padded
/// to 8) from 4 rows and the loop path below: jitted `x @ w` f32 on Zen 4 (2026-12-05, min of
/// 300 calls, JAX 0.10.2 alongside) 4x512x512 62 -> 19.5 us (JAX 28-42), 12x512x512 101 -> 74
/// (66-91), 4x2048x2048 1268 -> 205 (280-392); below 4 rows the loop path: 1x2048x2048 232 ->
/// 165 (198-222).
pub fn short_gemm(d: DType, m: i64, n: i64, r: Regs) -> bool {
    matches!(d, DType::F32 | DType::F64) && r.bytes >= 64 && (1..16).contains(&m) && n > r.bytes / d.size() as i64
}

/// Whether a runtime product of `d` on `threads` threads (host registers `r`) takes the
/// runtime's split of K (quabla_kernels::gemm::gemm_split_k: unbatched, a small output, a
/// long K, not a narrow product with 16 rows a thread).
pub fn split_k_gemm(d: DType, [b, m, n, k]: [i64; 4], threads: i64, r: Regs) -> bool {
    use quabla_kernels::gemm::{SPLIT_K_MAX_OUTPUT, SPLIT_K_MIN_K};
    let rows_split = narrow_gemm(d, [b, m, n, k], r) && m >= 16 * threads;
    threads > 1 && b == 1 && m >= 1 && n >= 1 && m.saturating_mul(n) <= SPLIT_K_MAX_OUTPUT as i64 && k >= (SPLIT_K_MIN_K as i64).max(m).max(n) && !rows_split
}

/// Whether a single product of `d` takes the short kernel on blocks of 8 rows in the runtime
/// (quabla_kernels::gemm::gemm_short, and `gemm_two_vectors` beyond its 64 rows): more than
/// one vector of columns and at most two on AVX-512 registers `r`, B read in place, A's rows
/// broadcast. The generated code ran such products on its 32-column tiles, and the packed
/// path pads them to its 32-column panels: jitted `a @ b` f32 on Zen 4 (2026-12-07, two
/// threads, generated -> runtime, JAX in parentheses) 512x512x17 152 -> 81 us (113),
/// 512x512x24 154 -> 83 (120), 1024x1024x20 339 -> 220 (308); first calls 24-63 -> 4-5 ms
/// (14-20).
pub fn two_vector_gemm(d: DType, [b, _, n, _]: [i64; 4], r: Regs) -> bool {
    let lanes = r.bytes / d.size() as i64;
    r.bytes >= 64 && b == 1 && n > lanes && n < 2 * lanes
}

/// Whether a runtime product takes the runtime's narrow path (quabla_kernels::gemm::gemm_narrow):
/// unbatched, at most one vector of columns of `d` on AVX-512 registers `r`.
pub fn narrow_gemm(d: DType, [b, _, n, _]: [i64; 4], r: Regs) -> bool {
    r.bytes >= 64 && b == 1 && n >= 1 && n <= r.bytes / d.size() as i64
}

/// The register block (MR rows, NR columns) of a product of `d` with `n` columns on vector
/// registers `r`: NR two vectors (one for narrow products, N up to one vector: a
/// convolution's 16 output features, a classifier's 10 classes, which two would double in
/// work), MR the rows whose `MR x NR` accumulators leave room in the register file for a
/// row of B and a broadcast element of A: 8 rows (16 accumulators) with 32 registers
/// (AVX-512, NEON), 4 rows (8) with 16 (AVX2: 8 rows would need 16 accumulators, and the
/// spills of such a block halve its speed). Four rows, not six, so that power-of-two M needs
/// no padded copy of A (measured on Zen 3, f32 1024^3: 8 x 4 ymm 32.7 ms, 6 x 2 18.5 ms,
/// 4 x 2 18.8 ms; 256x512x784: 3.45, 1.91, 1.20 ms).
pub fn register_block(d: DType, n: i64, r: Regs) -> (i64, i64) {
    let lanes = (r.bytes / d.size() as i64).max(1);
    let nr = if n <= lanes { lanes } else { 2 * lanes };
    let mr = if r.count >= 32 { 8 } else { 4 };
    (mr, nr)
}

/// The host's vector registers: bytes per register and how many (from the CPU's features).
pub fn host_regs() -> Regs {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f") {
            return Regs { bytes: 64, count: 32 };
        }
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
            return Regs { bytes: 32, count: 16 };
        }
        Regs { bytes: 16, count: 16 }
    }
    #[cfg(target_arch = "aarch64")]
    {
        Regs { bytes: 16, count: 32 }
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        Regs { bytes: 16, count: 16 }
    }
}

/// A CPU's vector register file ([`register_block`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Regs {
    /// Bytes of one vector register.
    pub bytes: i64,
    /// Vector registers.
    pub count: i64,
}

/// AVX-512's register file (32 registers of 64 bytes).
pub const AVX512: Regs = Regs { bytes: 64, count: 32 };

/// AVX2's (16 registers of 32 bytes).
pub const AVX2: Regs = Regs { bytes: 32, count: 16 };

pub use quabla_kernels::host::{caches as host_caches, Caches};

/// Whether the `mr` rows of a register block, `stride` bytes apart in place, fall into fewer
/// than `mr` L1 sets (then the micro-panel path packs A, `Plan::alias`). Measured (this Xeon,
/// one core, CPU min, alternated, load 3-5): 1024^3 f32 (rows 4 KB apart: one set) in place
/// 16.1-17.8 ms, packed 15.0-16.7 ms; f64 (8 KB) 36.9-52.8 -> 32.6-38.3 ms; where rows
/// spread over 8 sets the packing of A costs about what it saves (256x784x512 f32 1.41-1.51
/// in place against 1.45-1.58 ms, 4096x64x4096 16.7-17.0 against 16.2-18.8 ms).
pub fn rows_alias(stride: i64, mr: i64, c: Caches) -> bool {
    let mut seen: Vec<i64> = (0..mr).map(|r| (r * stride / c.line) % c.l1_sets).collect();
    seen.sort_unstable();
    seen.dedup();
    (seen.len() as i64) < mr
}

/// Panels from which A is packed ([`micro_blocks`]): the packing copies `m x k` elements once
/// for `n / nr` panel passes over them.
pub const MICRO_MIN_PANELS: i64 = 4;

/// The most rows of a micro-panel row block: each row of its output block is one stream of
/// the copy into C (rows `n` elements apart), and the hardware prefetchers follow a few
/// dozen. Measured (Xeon of 2026-12-02, one core, CPU min): 4096x64x4096 f32 at 32 / 64 /
/// 128 / 256 rows 15.8 / 16.7 / 21.6 / 22.1 ms (in-place path 17.4 ms); at 1024^3 32 to 128
/// rows are within noise.
pub const MICRO_MAX_ROWS: i64 = 64;

/// The micro-panel path's K block and row block (`Plan::kc`, `Plan::mc`) for an `mp x k`
/// A of `size`-byte elements against `np / nr` panels of `nr` columns (register block
/// `[mr, nr]`), from the host's caches: a K block whose panel slice (`kc x nr`) and A
/// micro-panel (`kc x mr`) fit L1 (the
/// panel slice stays there while the row block's micro-panels pass over it); a row block of
/// at most [`MICRO_MAX_ROWS`] rows whose `mc x k` slice of packed A fills at most half of L2
/// (it stays there while the panels pass). The K block is K when it fits,
/// else the largest divisor of K that fits, at least 64; the row block the largest multiple
/// of `mr` dividing `mp` within both bounds. (0, 0) keeps the in-place path: narrow products
/// (fewer than [`MICRO_MIN_PANELS`] panels; packing A would cost more than it saves, e.g.
/// 256x512x10 f32 0.036 -> 0.055 ms) and K without such a divisor.
pub fn micro_blocks(size: i64, mp: i64, np: i64, k: i64, [mr, nr]: [i64; 2], c: Caches) -> (i64, i64) {
    if np < MICRO_MIN_PANELS * nr {
        return (0, 0);
    }
    let kmax = c.l1d / ((nr + mr) * size);
    let kc = if k <= kmax { k } else { (64..=kmax).rev().find(|kc| k % kc == 0).unwrap_or(0) };
    if kc == 0 {
        return (0, 0);
    }
    let rows = (c.l2 / 2 / (k * size)).min(MICRO_MAX_ROWS).max(mr);
    let mc = (1..=mp / mr).rev().map(|q| q * mr).find(|mc| mp % mc == 0 && *mc <= rows).unwrap_or(mr);
    (kc, mc)
}

/// The row block a product's steps aim for, in bytes of one column of it (32 f32 rows, 16
/// f64 rows per `mb x nr x k` step). One core, process CPU per call, min of 15-40 alternated
/// calls (load 6-10), 128-row blocks with K blocks of 256 before: 1024^3 f64 25.9-27.9 ->
/// 20.2-22.2 ms (16 rows, one K block), f32 10.8-11.6 -> 10.2-10.5 ms (32 rows);
/// 4096x64x4096 18.0 -> 14.8 ms; 256x784x512 1.12 -> 1.05 ms; 256x512x784 1.16 -> 1.08 ms.
pub const MB_TARGET_BYTES: i64 = 128;

/// The largest K block (a K up to this is one block: the accumulators stay in registers
/// over all of K).
pub const KB_MAX: i64 = 1024;

/// Multiply-adds from which a tiled product runs its blocks on several threads (256^3, about
/// 0.1 ms on one core): below, the OpenMP fork and join is not reliably repaid. It costs a
/// few microseconds when the workers are awake, tens when they sleep, and milliseconds when
/// the machine is oversubscribed (a worker without a core stalls the whole loop): measured on
/// the shared 2-core machine at load 14, `x @ y` at 128^3 took 105-236 us on two threads
/// against 175 us on one, elementwise chains of 65536 elements 450 us against 81-124 us.
pub const PAR_MATMUL_WORK: i64 = 1 << 24;

/// Work from which a `linalg.generic` (elementwise or reduction) is split across threads:
/// iterations times the work units of one (crate::linalg::elementwise::op_cost, at least
/// [`PAR_LOOP_MIN_COST`]). A unit is 10-12 ps of one core's time (a compute-bound body at
/// 0.74 ns for 76 units, a memory-bound one at 0.49 ns for 40), so the threshold is about
/// 50 us of work. Every loop of 2^17 iterations qualifies; a loop whose body is dear
/// qualifies earlier: `tanh(2x + 1) * exp(-x)` (76 units) from 55k iterations. Tuned on a
/// quiet machine (as users run): at 2^23 instead of 2^25 the Adam update of an MLP (loops of
/// 10-16M units, 0.2 ms each) went 591 -> 417 us (JAX 408-457 us), the softmax and layernorm
/// gradients of 256x1024 275 -> 158 us and 348 -> 210 us (bench/cpu_table.py, load 1.1-1.5).
/// At 2^22 (with [`PAR_LOOP_MIN_ITERS`] 2^15) instead of 2^23 (2^16) the GPT step's attention,
/// softmax, layernorm and gelu loops (32k-131k iterations, 20-60 us each) split too: per call
/// 7.84-7.89 -> 6.20 ms, first call 0.55-0.57 -> 0.65 s (more OpenMP-outlined functions to
/// compile); 2^21 and 2^20 gained no more per call (6.1-6.5 ms) and cost more compile
/// (0.88 s at 2^20); the other rows of the table unchanged (stop 35, docs/performance.md).
/// While a call runs its workers spin between loops, so a split costs a few microseconds.
/// On an oversubscribed machine the same loops lose (at load 8 the Adam update took 2.8 ms on
/// two threads against 0.6 ms on one: a worker without a core stalls each loop);
/// `QUABLA_NUM_THREADS=1` is the remedy there.
pub const PAR_LOOP_WORK: i64 = 1 << 22;

/// The least work units an iteration counts for (so that every loop of 2^17 iterations is
/// split: [`PAR_LOOP_WORK`] / 32).
pub const PAR_LOOP_MIN_COST: i64 = 32;

/// Iterations below which a generic stays on one thread whatever its body costs (about 25 us
/// of the dearest elementwise bodies: the fork and join is not reliably repaid below).
pub const PAR_LOOP_MIN_ITERS: i64 = 1 << 15;

/// Whether a tiled `m x n x k` product (padded extents) runs on `threads` threads: large
/// enough ([`PAR_MATMUL_WORK`]) and at least `threads` blocks of `plan`.
pub fn parallel_matmul(m: i64, n: i64, k: i64, threads: i64) -> bool {
    threads > 1 && m.saturating_mul(n).saturating_mul(k) >= PAR_MATMUL_WORK
}

/// Multiply-adds from which a single runtime product with K at most [`PAR_RUNTIME_GEMM_K`]
/// runs on several threads (below [`PAR_MATMUL_WORK`], from which every product does). The
/// runtime kernel splits such products with one barrier pair per K block at most, a few
/// microseconds against 25-65 us of work on one core. Measured (2026-12-04, jitted `a @ b`
/// f32, min of 300 calls, one thread / two): 256x64x256 45.2 / 26.1 us, 512x64x128 47.3 /
/// 32.2, 1024x64x64 43.2 / 27.0, 64x64x1024 47.9 / 26.4, 128x256x128 45.8 / 36.8,
/// 256x128x192 65.0 / 44.8, 200x100x300 67.8 / 40.5 (bench/fixed_costs.py products); the
/// GPT step 8.21-8.30 -> 7.83-7.96 ms (bench/cpu_table.py --only gpt, A/B against the
/// previous build, two alternations). Long K loses (the narrow products
/// split their rows behind a barrier pair per K block): 64x1024x64 47.1 / 81.2 us,
/// 128x1024x32 43.1 / 69.1, 32x2048x64 55.4 / 134.7; and so do products under 2^22
/// (64x512x64, 2M: 24.0 / 37.6-40.9 us).
pub const PAR_RUNTIME_GEMM_WORK: i64 = 1 << 22;

/// Multiply-adds (all batch elements) from which a runtime product of at least as many batch
/// elements as threads runs on the threads, its batch elements split between them (each
/// product on one thread, no barriers: runtime/src/gemm.rs `split_batch`).
pub const PAR_BATCH_GEMM_WORK: i64 = 1 << 20;

/// Multiply-adds from which a short product ([`short_gemm`]) splits its columns between the
/// threads (no barriers, each thread one pass over its columns of B). Measured (jitted `x @ w`
/// f32, Zen 4, 2026-12-05, one thread / two): 8x512x512 38.4 / 20.1 us, 12x512x512 73.9 / 38.3,
/// 8x1024x256 38.5 / 20.4; 4x512x512 (2^20) stays on one (19.4 us, JAX 28-46).
pub const PAR_SHORT_GEMM_WORK: i64 = 1 << 21;

/// Multiply-adds from which a product split along K ([`split_k_gemm`]) runs on the threads
/// (each thread its part of K, no barriers, then one pass adding the small partial outputs).
pub const PAR_SPLIT_K_WORK: i64 = 1 << 21;

/// Elements of A and B from which a product split along K runs on the threads whatever its
/// multiply-adds: a dot of vectors or a matrix-vector product streams its operands once
/// (Xeon, 2026-12-06, jitted `x @ y` f32, min of 3 x timeit, one thread / two: 1e6 283 /
/// 145 us, JAX 260-272; 262144 30 / 10; 131072 7.5 / 6.4; 65536 4.6 / 4.9 stays on one).
pub const PAR_SPLIT_K_READ: i64 = 1 << 18;

/// The work units an element of a `linalg.copy` counts for in [`parallel_loop`]'s policy:
/// copies from 2^16 elements are split between the threads (a memory-bound element costs
/// more than a generic's body says: a 256 KB f32 copy ~16 us on one thread, ~6 on two, Xeon
/// 2026-12-06; a stack of 8 256^2 f32 150 -> 84 us). Fills count `MEMORY_COST` (from 2^17).
pub const COPY_ELEMENT_COST: i64 = 64;

/// The longest K of a product that runs on several threads from [`PAR_RUNTIME_GEMM_WORK`].
pub const PAR_RUNTIME_GEMM_K: i64 = 256;

/// Whether a runtime product of `b` batch elements of `m x n x k` of `d` runs on `threads`
/// threads (host registers `r`): every product of [`PAR_MATMUL_WORK`] multiply-adds or more
/// (all batch elements), batches of at least `threads` products from [`PAR_BATCH_GEMM_WORK`],
/// short products from [`PAR_SHORT_GEMM_WORK`], products split along K from
/// [`PAR_SPLIT_K_WORK`] (or [`PAR_SPLIT_K_READ`] elements read),
/// and single products from [`PAR_RUNTIME_GEMM_WORK`] with K up to
/// [`PAR_RUNTIME_GEMM_K`], or any K on the narrow path ([`narrow_gemm`]), whose threads split
/// the rows without barriers: 1024x512x10 f32 121-126 -> 65.8 us (the generated code: 106),
/// or any K when the threads split the columns (at least four panels each, no barriers):
/// f64 256x300x200 602 -> 385 us on Zen 4 (JAX 445).
pub fn parallel_runtime_gemm(d: DType, [b, m, n, k]: [i64; 4], threads: i64, r: Regs) -> bool {
    // The runtime splits the columns without barriers when each thread gets at least four of
    // its panels (two vectors wide): any K then.
    let lanes = (r.bytes / d.size() as i64).max(1);
    let by_columns = (n + 2 * lanes - 1) / (2 * lanes) >= 4 * threads;
    let short_k = k <= PAR_RUNTIME_GEMM_K || by_columns || narrow_gemm(d, [b, m, n, k], r) || two_vector_gemm(d, [b, m, n, k], r);
    let batch_split = threads > 1 && b >= threads && m.saturating_mul(n).saturating_mul(k).saturating_mul(b) >= PAR_BATCH_GEMM_WORK;
    let work = m.saturating_mul(n).saturating_mul(k);
    let short = threads > 1 && b == 1 && short_gemm(d, m, n, r) && work >= PAR_SHORT_GEMM_WORK;
    let read = m.saturating_add(n).saturating_mul(k);
    let split_k = split_k_gemm(d, [b, m, n, k], threads, r) && (work >= PAR_SPLIT_K_WORK || read >= PAR_SPLIT_K_READ);
    batch_split || short || split_k || parallel_matmul(m, n, k.saturating_mul(b), threads) || (threads > 1 && b == 1 && short_k && work >= PAR_RUNTIME_GEMM_WORK)
}

/// The loop along which a generic over `extents` is split into `threads` tiles (the
/// script's `tile_using_forall ... num_threads`): the outermost parallel loop whose extent
/// divides evenly or is large against `threads` (else the outermost with at least `threads`
/// iterations); None for small loop nests ([`PAR_LOOP_WORK`]), more than [`PAR_MAX_RANK`]
/// loops and nests without such a loop (full reductions stay on one thread). `cost`: the
/// work units of one iteration.
pub fn parallel_loop(parallel: &[bool], extents: &[i64], threads: i64, cost: i64) -> Option<usize> {
    let iters = extents.iter().try_fold(1i64, |a, &x| a.checked_mul(x))?;
    let work = iters.saturating_mul(cost.max(PAR_LOOP_MIN_COST));
    if threads <= 1 || iters < PAR_LOOP_MIN_ITERS || work < PAR_LOOP_WORK || parallel.len() != extents.len() || extents.len() > PAR_MAX_RANK {
        return None;
    }
    let ok = |i: usize| parallel[i] && extents[i] >= threads;
    let even = (0..extents.len()).find(|&i| ok(i) && (extents[i] % threads == 0 || extents[i] >= 8 * threads));
    even.or_else(|| (0..extents.len()).find(|&i| ok(i)))
}

/// The smallest multiple of `q` that is at least `x`.
fn round_up(x: i64, q: i64) -> i64 {
    (x + q - 1) / q * q
}

fn handles(n: usize) -> String {
    vec!["!transform.any_op"; n].join(", ")
}

/// Tiles `h` with `sizes` (0 = untiled) and returns the tiled op's handle name.
fn tile(out: &mut String, h: &str, name: &str, sizes: &[i64]) -> String {
    let loops = sizes.iter().filter(|&&s| s != 0).count();
    let sz: Vec<String> = sizes.iter().map(|s| s.to_string()).collect();
    let _ = writeln!(
        out,
        "    %{name}, %{name}_loops:{loops} = transform.structured.tile_using_for {h} tile_sizes [{}] : (!transform.any_op) -> ({})",
        sz.join(", "),
        handles(loops + 1)
    );
    format!("%{name}")
}

/// The named sequence `@__quabla_loops` (after bufferization): each generic the executor
/// tagged `quabla.vec` (its iterations independent in memory: quabla_runtime's
/// `parallel_accesses`) becomes loops marked `llvm.loop_annotation`, which the executor
/// turns into loops with parallel accesses on the LLVM dialect (elementwise generics of
/// several loops reach it already flattened into one: quabla_runtime's `flat_loops`).
///
/// Those it also tagged `quabla.unroll = rank` (a short inner loop under a dear body) have
/// their inner loop marked for full unrolling instead ([`UNROLL_MARK`]): written out, the
/// loop around it is the one LLVM vectorises (interleaved accesses of the short rows).
pub fn loops_script() -> &'static str {
    static S: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    S.get_or_init(|| {
        let unrolls: String = UNROLL_RANKS
            .map(|r| unroll_sequence("quabla.unroll", r, r - 1, VEC_MARK))
            .chain(BLOCK_RANKS.map(|r| unroll_sequence("quabla.unroll_block", r, 1, VEC_MARK)))
            .chain(BLOCK_RANKS.map(|r| unroll_sequence("quabla.unroll_scalar", r, 1, SCALAR_MARK)))
            .collect();
        format!(
            r#"  transform.named_sequence private @__quabla_loops(%module: !transform.any_op {{transform.readonly}}) {{
{unrolls}    %vec = transform.structured.match ops{{["linalg.generic", "linalg.copy"]}} attributes {{quabla.vec}} in %module : (!transform.any_op) -> !transform.any_op
    %vec_loops = transform.structured.convert_to_loops %vec : (!transform.any_op) -> !transform.any_op
    %mark = transform.param.constant {VEC_MARK} -> !transform.any_param
    transform.annotate %vec_loops "llvm.loop_annotation" = %mark : !transform.any_op, !transform.any_param
    transform.yield
  }}
"#
        )
    })
}

/// The part of [`loops_script`] for the generics tagged `attr = rank` (`quabla.unroll`,
/// `quabla.unroll_block`, `quabla.unroll_scalar`): their `rank` loops, those from `from`
/// on marked [`UNROLL_MARK`], the others `outer` (an annotation).
fn unroll_sequence(attr: &str, rank: usize, from: usize, outer: &str) -> String {
    let any = "!transform.any_op";
    let handles: Vec<String> = (0..rank).map(|i| format!("%l{i}")).collect();
    let annotations: String = handles
        .iter()
        .enumerate()
        .map(|(i, h)| format!("      transform.annotate {h} \"llvm.loop_annotation\" = {} : {any}, !transform.any_param\n", if i >= from { "%inner" } else { "%outer" }))
        .collect();
    let name = attr.trim_start_matches("quabla.");
    format!(
        r#"    %{name}{rank} = transform.structured.match ops{{["linalg.generic"]}} attributes {{{attr} = {rank} : i64}} in %module : ({any}) -> {any}
    transform.foreach %{name}{rank} : {any} {{
    ^bb0(%g: {any}):
      %l = transform.structured.convert_to_loops %g : ({any}) -> {any}
      {} = transform.split_handle %l : ({any}) -> ({})
      %outer = transform.param.constant {outer} -> !transform.any_param
      %inner = transform.param.constant {UNROLL_MARK} -> !transform.any_param
{annotations}    }}
"#,
        handles.join(", "),
        vec![any; rank].join(", ")
    )
}

/// The annotation of the loops the `quabla.vec` generics become (quabla_runtime's
/// `parallel_accesses` makes them loops with parallel accesses).
pub const VEC_MARK: &str = "#llvm.loop_annotation<mustProgress = true>";

/// The annotation of the loop over the blocks of a `quabla.unroll_scalar` generic: not
/// vectorised (its accesses would be gathers and scatters), the block's ops left to the SLP
/// vectoriser. The executor leaves it as it is (not a loop with parallel accesses).
pub const SCALAR_MARK: &str = "#llvm.loop_annotation<mustProgress = true, vectorize = <disable = true>>";

/// The largest block (elements: the product of every loop's extent but the outer one) a
/// `quabla.unroll_block` generic has written out (quabla_runtime's `small_blocks`): `exp`
/// of 7 x 3 f64 blocks written out was slower (3696 -> 5292 us for 100000).
pub const BLOCK_MAX: i64 = 16;

/// The largest block over a middle extent of 2 a `quabla.unroll_block` generic has written
/// out: `exp(a) * v[:, None, :]` of 100000 x 2 x 5 f32 881 -> 674 us, of 2 x 6 f64 1500 ->
/// 2163 (a pair of long rows is vectorised well enough as it is).
pub const PAIR_BLOCK_MAX: i64 = 10;

/// The least body cost ([`crate::linalg::elementwise::op_cost`]) of a `quabla.unroll_block`
/// generic: a transcendental (`math.*`). A contraction of 7 products (`einsum("bij,bjk->bik")`
/// of 2 x 7 blocks, cost 14) vectorised across the blocks was 9 times slower.
pub const BLOCK_DEAR_COST: i64 = 16;

/// The largest block a `quabla.unroll_scalar` generic has written out: `x * y[:, None, None,
/// :]` of 100000 x 3 x 3 x 3 f32 2153 -> 513 us (JAX 484), `einsum("bij,bjk->bik")` of
/// 7 x 3 f64 blocks 3159 -> 964 (JAX 1879).
pub const SCALAR_BLOCK_MAX: i64 = 32;

/// The mark of the inner loops [`loops_script`] has fully unrolled (quabla_runtime's
/// `parallel_accesses` keeps the request on the loop's parallel-accesses annotation).
pub const UNROLL_MARK: &str = "#llvm.loop_annotation<mustProgress = true, unroll = <full = true>>";

/// The ranks of the generics [`loops_script`] unrolls the inner loop of (`quabla.unroll`).
/// Rank 4 since 2026-12-07: `flip(x, 2)[:, 4:60, 4:60, :]` of 64 x 64 x 64 x 3 f32 (rows of 3
/// read backwards) 68 -> 37 us, JAX 44-49.
pub const UNROLL_RANKS: std::ops::RangeInclusive<usize> = 2..=4;

/// The ranks of the generics [`loops_script`] writes out every loop but the outer one of
/// (`quabla.unroll_block`, `quabla.unroll_scalar`).
pub const BLOCK_RANKS: std::ops::RangeInclusive<usize> = 3..=4;

/// The longest inner loop the executor has written out (`quabla.unroll`, quabla_runtime's
/// `written_out`), and so the longest rows the lowering lays out for it (short-row
/// concatenations, reductions' inputs kept apart). From 8 elements the inner loop is a vector
/// step of its own (AVX2 width), and written out it was slower: tanh of `x + b` over 65536 x 8
/// f64 235 -> 558 us, f32 80 -> 128 (2026-12-05, Zen 4).
pub const UNROLL_INNER: i64 = 7;

/// The longest inner loop written out whatever its body costs: LLVM left a loop of 2 or 3
/// iterations scalar (its rows shorter than a vector) and did not vectorise the loop around
/// it; written out, that loop is vectorised with interleaved accesses. Jitted, two threads,
/// Zen 4 (2026-12-07), loop -> written out: `x * b + 1` of 2^20 x 2 f32 183 -> 98 us, x 3 f32
/// 312 -> 156, x 2 f64 393 -> 254, x 3 f64 754 -> 507, x 2 i32 177 -> 98; the gradient of
/// `sum((x[:, ::2] + x[:, 1::2])**2)` of 4096 x 1024 (an interleaving store) 654 -> 349 (JAX
/// 441-496). From 4 the inner loop is a vector step and written out was slower (x 4 f32 233
/// -> 326, x 5 381 -> 661, x 7 732 -> 1386).
pub const UNROLL_ALWAYS: i64 = 3;

/// The least body cost (`op_cost` / `ElementwiseOp::scalar_cost` units) for which a short inner loop is
/// written out: bodies of a few adds and multiplies are memory-bound either way (`x * b + 1`
/// of 65536 x 6 27 us as a loop, 37 written out), tanh (about 30) and exp (about 25) are not:
/// `exp(x * b)` of 65536 x 5 f32 138 -> 72 us, `tanh(x + b)` of 65536 x 3 83 -> 39, a sigmoid
/// of 65536 x 2 f64 195 -> 75.
pub const UNROLL_MIN_COST: i64 = 8;

/// `text`, a lowered module, with [`loops_script`] among its named sequences.
pub fn with_loops_script(text: String) -> String {
    const PLAIN: &str = "module {\n";
    const NAMED: &str = "module attributes {transform.with_named_sequence} {\n";
    let body = match (text.strip_prefix(PLAIN), text.strip_prefix(NAMED)) {
        (Some(b), _) | (None, Some(b)) => b,
        (None, None) => return text,
    };
    let Some(body) = body.trim_end().strip_suffix('}') else { return text };
    format!("{NAMED}{body}{}}}\n", loops_script())
}

/// The two named sequences for the tagged matmuls and, with `threads` > 1, the parallel
/// loops (module-level text, to be placed inside a module with
/// `transform.with_named_sequence`). A generic (or a copy or fill) tagged `quabla.par = par_code(dim)` is tiled
/// into an `scf.forall` of `threads` tiles along `dim` (the pipeline makes it an OpenMP loop
/// after bufferization); codes no generic carries match nothing. Without tagged matmuls
/// there is no `@__quabla_lower_vectors` (the pipeline runs it only for them) and the tile
/// sequence holds the loop splits alone: one per dim (a split per rank and dim, 21 of them,
/// cost 0.4 ms of each compile of a parallel program to parse and interpret).
pub fn script(tiles: &[MatmulTile], threads: i64) -> String {
    let mut s = String::new();
    s.push_str("  transform.named_sequence private @__quabla_tile(%module: !transform.any_op {transform.readonly}) {\n");
    for dim in (0..PAR_MAX_RANK).filter(|_| threads > 1) {
        let code = par_code(dim);
        let _ = writeln!(
            s,
            "    %par{code} = transform.structured.match ops{{[\"linalg.generic\", \"linalg.copy\", \"linalg.fill\"]}} attributes {{quabla.par = {code} : i64}} in %module : (!transform.any_op) -> !transform.any_op"
        );
        let zeros = "0, ".repeat(dim);
        let _ = writeln!(
            s,
            "    %par{code}_t, %par{code}_l = transform.structured.tile_using_forall %par{code} num_threads [{zeros}{threads}] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)"
        );
    }
    for t in tiles {
        let _ = writeln!(
            s,
            "    %mm{0} = transform.structured.match ops{{[\"linalg.matmul\"]}} attributes {{quabla.tile = {0} : i64}} in %module : (!transform.any_op) -> !transform.any_op",
            t.tag
        );
        let b = if t.kb == 0 { format!("%mm{}", t.tag) } else { tile(&mut s, &format!("%mm{}", t.tag), &format!("blk{}", t.tag), &[0, 0, t.kb]) };
        let r = tile(&mut s, &b, &format!("reg{}", t.tag), &[t.mr, t.nr, 1]);
        let _ = writeln!(s, "    transform.structured.vectorize {r} : !transform.any_op");
    }
    if tiles.is_empty() {
        // Only loops tiled for threads: no vector op to rewrite, no accumulator to hoist; the
        // pipeline's canonicalizations clean up after bufferization as for untiled code. (Each
        // `apply_patterns.canonicalization` collects and freezes the canonicalization patterns
        // of every loaded dialect: ~0.6 ms of a compile apiece, and walks every function.)
        // The tile sequence below has none either: the two it had (before and after the
        // hoisting) changed no object of 10 programs checked byte for byte (1024^3, 1000^3,
        // 64^3, 256x784x512, 256x512x10, 4096x64x4096, f64 512^3, batched, a.T @ b, GPT 3
        // blocks); the pipeline's own canonicalize passes run after the script.
        s.push_str("    transform.yield\n  }\n");
        return s;
    }
    s.push_str(
        r#"    %f = transform.structured.match ops{["func.func"]} in %module : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.reduction_to_contract
    } : !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.tensor.fold_tensor_subset_ops_into_vector_transfers
    } : !transform.any_op
    transform.apply_cse to %f : !transform.any_op
    %loops = transform.structured.match ops{["scf.for"]} in %module : (!transform.any_op) -> !transform.any_op
    transform.loop.hoist_loop_invariant_subsets %loops : !transform.any_op
    transform.yield
  }
  transform.named_sequence private @__quabla_lower_vectors(%module: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} in %module : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = "innerparallel"
      transform.apply_patterns.vector.split_transfer_full_partial split_transfer_strategy = "vector-transfer"
      transform.apply_patterns.vector.transfer_to_scf max_transfer_rank = 1 full_unroll = true
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.lower_shape_cast
      transform.apply_patterns.vector.lower_transpose lowering_strategy = "shuffle_1d"
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.lower_broadcast
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
"#,
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tile_choice() {
        // Caches without room for the micro-panel path: the in-place plans.
        let choose = |d, m, n, k| choose_for(d, m, n, k, Caches { l1d: 0, l2: 0, l1_sets: 64, line: 64 }, AVX512);
        let plan = |mp, np, mb, kb, nr| Some(Plan { mp, np, mr: 8, mb, kb, nr, kc: 0, mc: 0, alias: [false; 2] });
        // Row blocks nearest 32 f32 / 16 f64 rows; K blocks only above 1024.
        assert_eq!(choose(DType::F32, 1024, 1024, 1024), plan(1024, 1024, 32, 0, 32));
        assert_eq!(choose(DType::F64, 1024, 1024, 1024), plan(1024, 1024, 16, 0, 16));
        assert_eq!(choose(DType::F32, 96, 96, 100), plan(96, 96, 32, 0, 32));
        assert_eq!(choose(DType::F32, 64, 64, 64), plan(64, 64, 32, 0, 32));
        assert_eq!(choose(DType::F32, 1000, 1024, 1024), plan(1000, 1024, 40, 0, 32));
        assert_eq!(choose(DType::F32, 200, 96, 4000), plan(200, 96, 40, 1000, 32));
        assert_eq!(choose(DType::F32, 64, 64, 2048), plan(64, 64, 32, 1024, 32));
        // Ragged M and N are padded to multiples of 8 and NR.
        assert_eq!(choose(DType::F32, 1001, 1024, 1024), plan(1008, 1024, 24, 0, 32));
        assert_eq!(choose(DType::F32, 1024, 1000, 1024), plan(1024, 1024, 32, 0, 32));
        assert_eq!(choose(DType::F64, 512, 784, 256), plan(512, 784, 16, 0, 16));
        assert_eq!(choose(DType::F32, 256, 784, 512), plan(256, 800, 32, 0, 32));
        // Narrow products: one-vector panels (16 f32, 8 f64 columns).
        assert_eq!(choose(DType::F32, 64, 10, 512), plan(64, 16, 32, 0, 16));
        assert_eq!(choose(DType::F32, 32768, 16, 144), plan(32768, 16, 32, 0, 16));
        assert_eq!(choose(DType::F64, 256, 8, 256), plan(256, 8, 16, 0, 8));
        assert_eq!(choose(DType::F32, 64, 17, 512), plan(64, 32, 32, 0, 32));
        assert_eq!(choose(DType::F32, 8, 16, 16), None);
        // Integers: i32/u32 in f32's panels, i64 in f64's; bool and u8 products stay on loops.
        assert_eq!(choose(DType::I32, 1024, 1024, 1024), plan(1024, 1024, 32, 0, 32));
        assert_eq!(choose(DType::I64, 1024, 1024, 1024), plan(1024, 1024, 16, 0, 16));
        assert_eq!(choose(DType::U8, 1024, 1024, 1024), None);
    }

    #[test]
    fn avx2_register_block() {
        // 16 registers: 4 x 2 vectors (8 accumulators), one vector for narrow products.
        assert_eq!(register_block(DType::F32, 1024, AVX2), (4, 16));
        assert_eq!(register_block(DType::F64, 1024, AVX2), (4, 8));
        assert_eq!(register_block(DType::F32, 8, AVX2), (4, 8));
        assert_eq!(register_block(DType::F32, 10, AVX2), (4, 16));
        assert_eq!(register_block(DType::F64, 4, AVX2), (4, 4));
        assert_eq!(register_block(DType::F32, 1024, AVX512), (8, 32));
        let c = Caches { l1d: 32 << 10, l2: 512 << 10, l1_sets: 64, line: 64 };
        // Power-of-two M needs no padding; ragged M is padded to a multiple of 4, row blocks
        // multiples of 4 dividing it.
        let p = choose_for(DType::F32, 1024, 1024, 1024, c, AVX2).unwrap();
        assert_eq!((p.mp, p.np, p.mr, p.nr, p.mb % 4, p.mp % p.mb), (1024, 1024, 4, 16, 0, 0));
        let p = choose_for(DType::F32, 1022, 10, 512, c, AVX2).unwrap();
        assert_eq!((p.mp, p.np, p.mr, p.nr), (1024, 16, 4, 16));
        // Micro-panel blocks: a K block whose 16-column panel slice and 4-row micro-panel fit L1.
        assert_eq!(micro_blocks(4, 1024, 1024, 1024, [4, 16], c), (256, 64));
        let s = script(&[MatmulTile { tag: 0, kb: 0, mr: p.mr, nr: p.nr }], 1);
        assert!(s.contains("tile_sizes [4, 16, 1]"), "{s}");
    }

    #[test]
    fn micro_panel_choice() {
        // This Xeon (48 KB L1d, 2 MB L2): K blocks of 256 f32 (a 32 KB panel slice and an 8 KB
        // A micro-panel in L1), row blocks of 64 rows (1024 x 64 of packed A: 256 KB of L2).
        let xeon = Caches { l1d: 48 << 10, l2: 2 << 20, l1_sets: 64, line: 64 };
        let zen4 = Caches { l1d: 32 << 10, l2: 1 << 20, l1_sets: 64, line: 64 };
        assert_eq!(micro_blocks(4, 1024, 1024, 1024, [8, 32], xeon), (256, 64));
        assert_eq!(micro_blocks(8, 1024, 1024, 1024, [8, 16], xeon), (256, 64));
        assert_eq!(micro_blocks(4, 1024, 1024, 1024, [8, 32], zen4), (128, 64));
        // K that fits is one block; K without a divisor in [64, bound] keeps the in-place path.
        assert_eq!(micro_blocks(4, 4096, 4096, 64, [8, 32], xeon), (64, 64));
        assert_eq!(micro_blocks(4, 256, 512, 784, [8, 32], xeon), (196, 64));
        assert_eq!(micro_blocks(4, 256, 512, 1031, [8, 32], xeon), (0, 0));
        // A large K shrinks the row block to keep its slice of packed A in half of L2; rows
        // stay a multiple of 8 dividing M.
        assert_eq!(micro_blocks(4, 1024, 1024, 8192, [8, 32], xeon), (256, 32));
        assert_eq!(micro_blocks(4, 1000, 1000, 1000, [8, 32], xeon), (250, 40));
        // Narrow products keep A in place.
        assert_eq!(micro_blocks(4, 256, 16, 512, [8, 16], xeon), (0, 0));
        assert_eq!(micro_blocks(4, 256, 96, 512, [8, 32], xeon), (0, 0));
        assert_eq!(micro_blocks(4, 256, 128, 512, [8, 32], xeon), (256, 64));
        let p = choose_for(DType::F32, 1024, 1024, 1024, xeon, AVX512).unwrap();
        assert_eq!((p.kc, p.mc, p.nr, p.micro(false), p.micro(true)), (256, 64, 32, true, true));
        // A packed only where its rows in place share L1 sets: 4 KB rows (one set), 2 KB
        // (two); not 3136-byte rows (784 f32) or 256-byte ones (64 f32).
        assert!(rows_alias(4096, 8, xeon) && rows_alias(8192, 8, xeon) && rows_alias(2048, 8, xeon));
        assert!(!rows_alias(3136, 8, xeon) && !rows_alias(256, 8, xeon) && !rows_alias(4000, 8, xeon));
        // 256 x 784 A in place (3136-byte rows) or as [784, 256] (1 KB rows: four sets).
        let p = choose_for(DType::F32, 256, 512, 784, xeon, AVX512).unwrap();
        assert!(p.kc > 0 && !p.micro(false) && p.micro(true));
        let p = choose_for(DType::F32, 784, 512, 256, xeon, AVX512).unwrap();
        assert!(p.micro(false) && !p.micro(true));
    }

    #[test]
    fn parallel_choice() {
        // Elementwise over 2^20: the only loop (any body).
        assert_eq!(parallel_loop(&[true], &[1 << 20], 2, 1), Some(0));
        // The outermost parallel loop that splits evenly: 3 rows split unevenly, so columns.
        assert_eq!(parallel_loop(&[true, true], &[3, 400_000], 2, 4), Some(1));
        // Row sums: rows split; the reduction loop never.
        assert_eq!(parallel_loop(&[true, false], &[1024, 1024], 2, 3), Some(0));
        assert_eq!(parallel_loop(&[false, true], &[1024, 1024], 2, 3), Some(1));
        // A full reduction, small loops and one thread stay serial.
        assert_eq!(parallel_loop(&[false], &[1 << 20], 2, 100), None);
        assert_eq!(parallel_loop(&[true], &[100_000], 2, 4), None);
        assert_eq!(parallel_loop(&[true], &[1 << 20], 1, 4), None);
        // Every loop of 2^17 iterations splits; dear bodies earlier, not below 2^15 iterations.
        assert_eq!(parallel_loop(&[true], &[1 << 17], 2, 1), Some(0));
        assert_eq!(parallel_loop(&[true], &[60_000], 2, 76), Some(0));
        assert_eq!(parallel_loop(&[true], &[50_000], 2, 76), None);
        assert_eq!(parallel_loop(&[true, true], &[784, 512], 2, 40), Some(0));
        assert_eq!(parallel_loop(&[true, true], &[512, 10], 2, 40), None);
        // The GPT step's attention (8 x 4 x 64 x 64) and its activations with a dear body.
        assert_eq!(parallel_loop(&[true; 4], &[8, 4, 64, 64], 2, 40), Some(0));
        assert_eq!(parallel_loop(&[true, true, true], &[8, 64, 64], 2, 200), Some(0));
        assert_eq!(parallel_loop(&[true], &[35_000], 2, 400), Some(0));
        assert_eq!(parallel_loop(&[true], &[30_000], 2, 1000), None);
        assert!(parallel_matmul(1024, 1024, 1024, 2) && parallel_matmul(256, 256, 256, 2) && !parallel_matmul(128, 128, 128, 2) && !parallel_matmul(1024, 1024, 1024, 1));
    }

    #[test]
    fn which_runtime_products_run_on_two_threads() {
        const F: DType = DType::F32;
        const Z: Regs = Regs { bytes: 64, count: 32 };
        assert!(parallel_runtime_gemm(F, [1, 1024, 1024, 1024], 2, Z) && parallel_runtime_gemm(F, [16, 256, 256, 256], 2, Z));
        assert!(parallel_runtime_gemm(F, [1, 256, 256, 64], 2, Z) && parallel_runtime_gemm(F, [1, 128, 128, 256], 2, Z));
        assert!(!parallel_runtime_gemm(F, [1, 64, 64, 512], 2, Z) && !parallel_runtime_gemm(F, [1, 32, 32, 1024], 2, Z));
        // Small outputs with a long K split K from 2^21 (no barriers).
        assert!(parallel_runtime_gemm(F, [1, 64, 64, 1024], 2, Z) && parallel_runtime_gemm(F, [1, 128, 32, 1024], 2, Z) && parallel_runtime_gemm(F, [1, 1, 2048, 2048], 2, Z));
        let sk = |bmnk| split_k_gemm(F, bmnk, 2, Z);
        assert!(sk([1, 100, 100, 5000]) && sk([1, 16, 10, 5000]) && !sk([2, 100, 100, 5000]) && !sk([1, 300, 300, 5000]) && !sk([1, 2000, 10, 1500]) && !sk([1, 4096, 1, 4096]));
        assert!(!split_k_gemm(F, [1, 100, 100, 5000], 1, Z));
        // Batches of at least as many products as threads from 2^20 multiply-adds in all.
        assert!(parallel_runtime_gemm(F, [2, 256, 256, 64], 2, Z) && parallel_runtime_gemm(F, [64, 64, 64, 64], 2, Z) && parallel_runtime_gemm(F, [32, 64, 64, 16], 2, Z));
        assert!(!parallel_runtime_gemm(F, [2, 64, 64, 64], 2, Z) && !parallel_runtime_gemm(F, [64, 64, 64, 64], 1, Z));
        assert!(!parallel_runtime_gemm(F, [1, 1024, 1024, 1024], 1, Z));
        // Narrow products (the runtime's narrow path) from 2^22 whatever K.
        assert!(parallel_runtime_gemm(F, [1, 1024, 10, 512], 2, Z) && !parallel_runtime_gemm(F, [1, 256, 10, 512], 2, Z));
        // Short products (under 16 rows) from 2^21.
        assert!(parallel_runtime_gemm(F, [1, 8, 512, 512], 2, Z) && !parallel_runtime_gemm(F, [1, 4, 512, 512], 2, Z));
        // Long K when the columns split (8 panels of 16 f64 or more for two threads).
        assert!(parallel_runtime_gemm(DType::F64, [1, 256, 200, 300], 2, Z) && parallel_runtime_gemm(F, [1, 64, 256, 1024], 2, Z));
        assert!(!parallel_runtime_gemm(DType::F64, [1, 256, 100, 300], 2, Z) && !parallel_runtime_gemm(F, [1, 128, 32, 1000], 2, Z));
    }

    #[test]
    fn which_products_call_the_runtime() {
        if std::env::var_os("QUABLA_CPU_GEMM").is_some() {
            return;
        }
        let (z, y) = (Regs { bytes: 64, count: 32 }, Regs { bytes: 32, count: 16 });
        let f = DType::F32;
        // Single and batched products of any size.
        assert!(runtime_gemm(f, [1, 256, 512, 784], z) && runtime_gemm(f, [1, 64, 64, 64], z) && runtime_gemm(f, [1, 128, 96, 70], z));
        assert!(runtime_gemm(f, [1, 128, 128, 128], z) && runtime_gemm(f, [4, 64, 64, 64], z) && runtime_gemm(f, [32, 64, 64, 16], z) && runtime_gemm(f, [4, 128, 128, 128], z));
        // Narrow single products: the narrow path on AVX-512 (one vector of columns), else
        // generated (the packed kernels' panels are 32 columns); batched ones generated.
        assert!(runtime_gemm(f, [1, 4096, 10, 512], z) && runtime_gemm(f, [1, 256, 16, 512], z) && runtime_gemm(DType::F64, [1, 256, 8, 512], z));
        assert!(!runtime_gemm(f, [1, 4096, 10, 512], y) && !runtime_gemm(f, [1, 256, 17, 512], y) && !runtime_gemm(DType::F64, [1, 256, 9, 512], y));
        // Up to two vectors of columns: the short kernel on blocks of rows (AVX-512).
        assert!(runtime_gemm(f, [1, 256, 17, 512], z) && runtime_gemm(f, [1, 512, 31, 512], z) && runtime_gemm(DType::F64, [1, 256, 9, 512], z));
        assert!(!runtime_gemm(f, [8, 256, 16, 512], z) && runtime_gemm(f, [1, 4096, 32, 512], y));
        // Without 256-bit vectors, other dtypes, thin M, thin K with a small output: generated.
        assert!(!runtime_gemm(f, [1, 256, 512, 784], Regs { bytes: 16, count: 16 }) && !runtime_gemm(DType::I32, [1, 256, 512, 784], z));
        assert!(!runtime_gemm(f, [1, 8, 512, 784], y) && !runtime_gemm(f, [1, 256, 200, 8], z));
        // Thin K with an output of 2^16 elements or more: the runtime (rank-K updates).
        assert!(runtime_gemm(f, [1, 1000, 1000, 10], z) && runtime_gemm(f, [1, 256, 512, 8], z));
        // Dot products and matrix-vector products of a few rows from K = NARROW_LONG_K (row
        // dot products); a few columns or a short K: generated.
        assert!(runtime_gemm(f, [1, 1, 1, 4096], z) && runtime_gemm(f, [1, 4, 1, 100_000], z) && runtime_gemm(DType::F64, [1, 1, 1, 1 << 20], z));
        assert!(!runtime_gemm(f, [1, 1, 3, 100_000], z) && !runtime_gemm(f, [1, 1, 1, 1000], z) && !runtime_gemm(f, [1, 1, 1, 4096], y));
        // Fewer than 16 rows on AVX-512: the short path (more than one vector of columns).
        assert!(runtime_gemm(f, [1, 8, 512, 784], z) && runtime_gemm(f, [1, 1, 17, 784], z) && runtime_gemm(DType::F64, [3, 15, 9, 4], z));
        assert!(!runtime_gemm(f, [1, 8, 16, 784], z) && !runtime_gemm(DType::I32, [1, 8, 512, 784], z));
    }

    #[test]
    fn script_per_tag() {
        let s = script(&[MatmulTile { tag: 0, kb: 256, mr: 8, nr: 32 }, MatmulTile { tag: 1, kb: 0, mr: 6, nr: 16 }], 1);
        assert!(!s.contains("quabla.par"), "{s}");
        let p = script(&[], 2);
        // One split per dim, whatever the generic's rank: its later loops stay whole.
        assert!(p.contains("attributes {quabla.par = 2 : i64}") && p.contains("tile_using_forall %par2 num_threads [0, 2] "), "{p}");
        assert!(p.contains("tile_using_forall %par1 num_threads [2] ") && p.contains("num_threads [0, 0, 0, 0, 0, 2] ") && !p.contains("quabla.par = 7 "), "{p}");
        // Loops tiled for threads only: no vector patterns, no canonicalization, no vector
        // sequence in the script.
        assert!(!p.contains("apply_patterns") && !p.contains("apply_cse") && !p.contains("@__quabla_lower_vectors"), "{p}");
        assert!(s.contains("transform.apply_patterns.canonicalization") && s.contains("lower_contraction"), "{s}");
        assert!(s.contains("attributes {quabla.tile = 0 : i64}") && s.contains("tile_sizes [0, 0, 256]") && s.contains("tile_sizes [8, 32, 1]"), "{s}");
        assert!(s.contains("attributes {quabla.tile = 1 : i64}") && s.contains("tile_sizes [6, 16, 1]") && !s.contains("%blk1"), "{s}");
    }
}
