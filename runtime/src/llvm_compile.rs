//! The CPU executor's LLVM half without MLIR's ExecutionEngine (csrc/llvm_compile.c): an
//! LLVM-dialect module is translated to LLVM IR, given the packed-arguments wrapper of its
//! entry (`_mlir_<f>`, as the ExecutionEngine's), optimised by LLVM's new pass manager and
//! compiled to a position-independent object by a pooled host target machine. The object is
//! linked like a cached one (csrc/objload.c).
use std::ffi::{c_char, c_void, CStr, CString};

unsafe extern "C" {
    fn quabla_llvm_compile(op: *mut c_void, passes: *const c_char, level: i32, wrap: *const c_char, parts: i32, objs: *mut *mut c_char, lens: *mut usize, nobj: *mut i32, err: *mut *mut c_char, ms: *mut f64) -> i32;
    fn quabla_llvm_free(p: *mut c_void);
    fn quabla_llvm_set_args(args: *const c_char);
    fn quabla_llvm_warm(passes: *const c_char, level: i32);
}

/// Once per process, on a second thread while the first compile runs: the target machine
/// of code generation level 1 built and LLVM's optimiser and code generator run once on a
/// small loop (csrc/llvm_compile.c `quabla_llvm_warm`), so that the first program compiled at
/// that level (most programs: `codegen1`) does not pay LLVM's one-time costs alone (measured:
/// the first level-2 program of a process, a 1024 x 1024 row sum, compiled in 12.7 ms of LLVM
/// against 9.5-10.0 ms for the next ones). The compile that starts it joins it before it
/// returns (the returned guard), so no thread is inside LLVM when the process may exit; the
/// two share only the target machine pool, taken and returned under its lock.
pub(crate) fn warm() -> Warm {
    static ONCE: std::sync::Once = std::sync::Once::new();
    let mut handle = None;
    ONCE.call_once(|| {
        set_args();
        let passes = CString::new(LEVEL2_PASSES).expect("no NUL in the pipeline");
        // SAFETY: a NUL-terminated pipeline; the callee builds and disposes its own context and
        // module and returns the machine it used to the pool.
        handle = std::thread::Builder::new().name("quabla-llvm-warm".into()).spawn(move || unsafe { quabla_llvm_warm(passes.as_ptr(), 1) }).ok();
    });
    Warm(handle)
}

/// Joins the warm-up thread (if this compile started it) when dropped.
pub(crate) struct Warm(Option<std::thread::JoinHandle<()>>);

impl Drop for Warm {
    fn drop(&mut self) {
        if let Some(h) = self.0.take() {
            let _ = h.join();
        }
    }
}

/// How LLVM compiles a program: the optimisation level of the pass pipeline and the code
/// generation level (0..3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Levels {
    pub opt: usize,
    pub codegen: usize,
}

/// The pass pipeline of level 2 (the default): LLVM's function simplification and both
/// vectorizers without `default<O2>`'s inliner, IPO, loop-idiom / unswitching / deletion,
/// jump threading, second simplification round and partial loop unrolling. The code the lowering
/// hands LLVM is already inlined, fused and (for matmuls) vectorised and unrolled to
/// registers; what LLVM must still do is promote, clean up, rotate and hoist loops and
/// vectorise (and interleave) the scalar loops of reductions and elementwise code.
/// loop-rotate is the pass these need: without it the softmax and layernorm grads ran 3x
/// slower. LoopUnroll was a third of the pipeline's time on the GPT loss+grad (0.40 of 1.22 s,
/// `opt -time-passes`) for no measurable gain in the steady state of any row.
/// `always-inline` first puts the C-interface wrapper into the packed one (csrc/llvm_compile.c
/// `inline_into_wrapper`). Measured
/// against `default<O2>` (docs/performance.md, 2026-12-03): optimisation 2-5x faster
/// (matmul 32^3 28-30 -> 7-11 ms), first calls of the table 1.2-2x shorter, the steady
/// state equal on every row of bench/cpu_table.py.
///
/// `loop-unroll-full` then `sroa` (without them: only partial and runtime unrolling is left
/// out): loops of a few iterations with a constant trip count (a 3-vector's elementwise ops
/// in a `fori_loop` body) are written out, so SROA takes their small stack buffers into
/// registers. Left as loops, the vectorizer made each a masked 4-lane step over a stack
/// buffer just written by scalar stores (a failed store-to-load forwarding per op): an RK4
/// step of the Lorenz system on a 3-vector, 1000 steps, 66-77 -> 29 us (JAX 29); the GPT
/// loss+grad's first call unchanged (0.55-0.59 s wall either way).
pub(crate) const LEVEL2_PASSES: &str = "always-inline,function(sroa,early-cse<memssa>,instcombine<no-verify-fixpoint>,simplifycfg,loop(loop-rotate),loop-mssa(licm),loop(loop-unroll-full),sroa,gvn,loop-vectorize,instcombine<no-verify-fixpoint>,slp-vectorizer,simplifycfg)";

/// The estimated element operations of one call of a program: all of them, and those of its
/// contractions (`dot_general`: K multiply-adds per result element).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Work {
    pub total: i64,
    pub dot: i64,
}

impl Work {
    /// The work of two parts of a program together (saturating).
    pub(crate) fn plus(self, o: Work) -> Work {
        Work { total: self.total.saturating_add(o.total), dot: self.dot.saturating_add(o.dot) }
    }
}

/// Programs of at most this many element operations per call generate code at level 1 when
/// level 2 is asked for, and so do programs whose work is mostly contractions. llc -O1 keeps
/// the greedy register allocator and the schedulers; on small programs, whose first call is
/// mostly LLVM, it is a third faster (matmul 32^3: codegen 14-15 -> 9-12 ms after
/// [`LEVEL2_PASSES`]) for the same code within the noise, and the matmul kernels arrive
/// vectorised and blocked for registers by the lowering (1024^3 f32 14.3-14.7 ms at -O1
/// against 16.3-19.5 at -O2, same processes). On the loops LLVM vectorises itself -O2's machine
/// passes still paid a few percent (elementwise tanh(2x+1) exp(-x) on 1e6 f32: 1526-1562 us
/// at -O2 against 1581-1671 us at -O1, one thread, min of a 2.5 s loop; docs/performance.md,
/// 2026-12-03).
pub(crate) const CODEGEN1_WORK: i64 = 1 << 20;

/// Whether level 2 generates the code of a program of `work` at llc -O1 ([`CODEGEN1_WORK`]).
pub(crate) fn codegen1(work: Work) -> bool {
    work.total <= CODEGEN1_WORK || work.dot >= work.total / 2
}

impl Levels {
    /// The levels of `level` for a program of `work` per call (see `cpu::program_work`),
    /// with the overrides of `QUABLA_LLVM_OPT` and `QUABLA_LLVM_CODEGEN` (experiments). At
    /// level 2 code generation runs at level 1 where [`codegen1`] says so.
    pub(crate) fn of(level: usize, work: Work) -> Levels {
        let var = |k: &str| std::env::var(k).ok().and_then(|v| v.trim().parse::<usize>().ok()).map(|v| v.min(3));
        let codegen = if level == 2 && codegen1(work) { 1 } else { level };
        Levels { opt: var("QUABLA_LLVM_OPT").unwrap_or(level), codegen: var("QUABLA_LLVM_CODEGEN").unwrap_or(codegen) }
    }

    /// The new-pass-manager pipeline: `QUABLA_LLVM_PASSES`, [`LEVEL2_PASSES`] at level 2, or
    /// `default<On>`.
    pub(crate) fn pipeline(&self) -> std::borrow::Cow<'static, str> {
        match (passes_override(), self.opt) {
            (Some(p), _) => p.into(),
            (None, 2) => LEVEL2_PASSES.into(),
            (None, n) => format!("default<O{}>", n.min(3)).into(),
        }
    }
}

/// `QUABLA_LLVM_PASSES`: a new-pass-manager pipeline replacing the level's (experiments; part
/// of the compile cache's key when set).
pub(crate) fn passes_override() -> Option<&'static str> {
    static P: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    P.get_or_init(|| std::env::var("QUABLA_LLVM_PASSES").ok().filter(|v| !v.is_empty())).as_deref()
}

/// LLVM's options for every compile: loops are unrolled up to a cost of 50 instructions
/// instead of O2's 300. Measured on the GPT loss+grad (bench/cpu_table.py --only gpt): LLVM
/// 6.9 -> 3.8 s of CPU (opt 2.9 -> 1.8 s, llc 4.0 -> 2.0 s, object 537 -> 363 KB), the
/// steady state unchanged within the noise on every row (docs/performance.md, 2026-12-01).
///
/// On x86-64 also `-disable-lsr`: Loop Strength Reduction and its IV Users analysis were
/// 24-33% of llc's time on these modules (`llc -time-passes`: a GPT chunk 0.23 -> 0.14 s, the
/// layernorm grad 0.14 -> 0.09 s), while x86's addressing modes leave it little to gain: the
/// loops it emits for the matmul kernels, row sums, softmax / layernorm grads, elementwise
/// and the MLP differ by 0-5 instructions in 15-300 (emeraldrapids and znver5 alike), and the
/// steady state (min CPU of one call, one thread, alternating processes) was unchanged within
/// the noise (docs/performance.md, 2026-12-02). Other targets keep LSR (fewer addressing
/// modes, where it matters more).
///
/// And `-avoid-speculation=false` (Machine LICM): a loop split across threads sits, in the
/// OpenMP-outlined body, inside the per-thread chunk loop behind its trip-count test, so
/// hoisting its constants out of both loops is speculative; by default Machine LICM then
/// leaves them in the inner loop, where register pressure makes the allocator rematerialise
/// every splat constant each iteration (AVX2, large code model: `movabs` + `vbroadcastss` per
/// constant). tanh(2x+1) exp(-x) on two threads: 127 -> 95 instructions per 8 elements (one
/// thread's loop: 82, its constants spilled once and folded as stack operands); softmax grad
/// 341-361 -> 237-257 us (docs/performance.md, 2026-12-03).
const DEFAULT_ARGS: &str = if cfg!(target_arch = "x86_64") { "-unroll-threshold=50 -disable-lsr -avoid-speculation=false" } else { "-unroll-threshold=50 -avoid-speculation=false" };

/// The LLVM options in force: `QUABLA_LLVM_ARGS` (e.g. `-disable-lsr`; empty: none) or
/// [`DEFAULT_ARGS`]. Part of the compile cache's key.
pub(crate) fn llvm_args() -> &'static str {
    static A: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    A.get_or_init(|| std::env::var("QUABLA_LLVM_ARGS").unwrap_or_else(|_| DEFAULT_ARGS.to_string()))
}

/// Parses [`llvm_args`] once per process, before the first compile (LLVM's options are
/// process-wide).
fn set_args() {
    static DONE: std::sync::Once = std::sync::Once::new();
    DONE.call_once(|| {
        if let Some(a) = Some(llvm_args()).filter(|a| !a.trim().is_empty()).and_then(|a| CString::new(a).ok()) {
            // SAFETY: a NUL-terminated string, copied by the callee.
            unsafe { quabla_llvm_set_args(a.as_ptr()) };
        }
    });
}

/// Wall times of one compile, in ms.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Phases {
    pub translate: f64,
    pub optimize: f64,
    pub codegen: f64,
}

/// Compiles the module operation `module` (LLVM dialect) at `levels` to object code, in up to
/// `parts` parts compiled on as many threads (csrc/llvm_compile.c, "Split code generation":
/// the functions of a program dealt out by size; 1: one object); `wrap` names the function
/// (defined in the module) that gets the packed wrapper `_mlir_<wrap>`, which is in the first
/// object. The module is only read; it may be compiled on any thread while no other thread
/// uses it.
pub(crate) fn compile_object(module: mlir_sys::MlirOperation, levels: Levels, wrap: Option<&str>, parts: usize) -> Result<(Vec<Vec<u8>>, Phases), String> {
    set_args();
    let passes = CString::new(levels.pipeline().as_ref()).map_err(|e| e.to_string())?;
    let wrap = wrap.map(CString::new).transpose().map_err(|e| e.to_string())?;
    let parts = parts.clamp(1, 8);
    let (mut objs, mut lens, mut nobj, mut err) = (vec![std::ptr::null_mut::<c_char>(); parts], vec![0usize; parts], 0i32, std::ptr::null_mut());
    let mut ms = [0f64; 3];
    // SAFETY: the caller keeps the module operation alive for the call; `objs` and `lens` have
    // room for `parts`; out-parameters; the C side copies nothing it keeps.
    let rc = unsafe { quabla_llvm_compile(module.ptr, passes.as_ptr(), levels.codegen.min(3) as i32, wrap.as_ref().map_or(std::ptr::null(), |w| w.as_ptr()), parts as i32, objs.as_mut_ptr(), lens.as_mut_ptr(), &mut nobj, &mut err, ms.as_mut_ptr()) };
    if rc != 0 {
        let msg = if err.is_null() { "LLVM compilation failed".to_string() } else { unsafe { CStr::from_ptr(err) }.to_string_lossy().into_owned() };
        // SAFETY: malloc'd by the C side.
        unsafe { quabla_llvm_free(err as *mut c_void) };
        return Err(msg);
    }
    let out = (0..nobj.clamp(0, parts as i32) as usize)
        .map(|k| {
            // SAFETY: `objs[k]` holds `lens[k]` bytes, malloc'd by the C side and freed after the copy.
            let bytes = unsafe { std::slice::from_raw_parts(objs[k] as *const u8, lens[k]) }.to_vec();
            unsafe { quabla_llvm_free(objs[k] as *mut c_void) };
            bytes
        })
        .collect();
    Ok((out, Phases { translate: ms[0], optimize: ms[1], codegen: ms[2] }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Level 2 runs LEVEL2_PASSES; its code generation level follows the program's work;
    /// the other levels are LLVM's own pipelines at their own code generation level.
    /// (QUABLA_LLVM_* overrides are not set in the test environment.)
    #[test]
    fn levels_by_work() {
        if passes_override().is_some() || std::env::var_os("QUABLA_LLVM_CODEGEN").is_some() || std::env::var_os("QUABLA_LLVM_OPT").is_some() {
            return;
        }
        let small = Work { total: 32 * 32 * 32, dot: 32 * 32 * 32 };
        let elementwise = Work { total: 6_000_000, dot: 0 };
        let matmul = Work { total: 1 << 30, dot: (1 << 30) - (1 << 20) };
        let mixed = Work { total: 1 << 24, dot: 1 << 22 };
        assert_eq!(Levels::of(2, small), Levels { opt: 2, codegen: 1 });
        assert_eq!(Levels::of(2, elementwise), Levels { opt: 2, codegen: 2 });
        assert_eq!(Levels::of(2, matmul), Levels { opt: 2, codegen: 1 });
        assert_eq!(Levels::of(2, mixed), Levels { opt: 2, codegen: 2 });
        assert_eq!(Levels::of(2, small).pipeline(), LEVEL2_PASSES);
        for l in [0, 1, 3] {
            assert_eq!(Levels::of(l, elementwise), Levels { opt: l, codegen: l });
            assert_eq!(Levels::of(l, small).pipeline(), format!("default<O{l}>"));
        }
    }
}
