//! The floating-point mode compiled CPU code runs in: denormal (subnormal) operands read as
//! zero and denormal results flushed to zero, as XLA runs its CPU programs (JAX's `exp(-100.0)`
//! of f32 is 0 on the CPU, `1e-40 * 1.5` is 0). Besides matching JAX's results, the mode keeps
//! ordinary programs off the microcode assist an Intel core takes for each operation that
//! reads or makes a subnormal (15-100x an operation's cost): the per-example weight gradients
//! of a 784-10 softmax regression, whose logits spread over hundreds, multiplied subnormal
//! probabilities into a 256 x 784 x 10 result in 1.73 ms against JAX's 0.41.
//!
//! [`Flushed::enter`] sets the mode on the calling thread around a call of compiled code and
//! restores the caller's on drop (Python and NumPy keep IEEE gradual underflow). libomp
//! hands the forking thread's mode to its workers at each parallel region (its default
//! `KMP_INHERIT_FP_CONTROL`), so the compiled loops and the runtime's kernels on the team run
//! in it too. A host callback runs its Python function in the caller's mode
//! ([`Flushed::leave`]). An executable compiled with `CompileOptions::flush_denormals` off
//! (default off under `QUABLA_FLUSH_DENORMALS=0`) keeps gradual underflow, the reference
//! interpreter's arithmetic (the math kernels' subnormal cases are tested so).

/// The mode bits this module sets: MXCSR's FTZ (bit 15) and DAZ (bit 6) on x86-64, FPCR's FZ
/// (bit 24) on AArch64 (which flushes both operands and results).
#[cfg(target_arch = "x86_64")]
const FLUSH: u64 = (1 << 15) | (1 << 6);
#[cfg(target_arch = "aarch64")]
const FLUSH: u64 = 1 << 24;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const FLUSH: u64 = 0;

#[inline(always)]
fn get() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        let mut csr: u32 = 0;
        // SAFETY: stores the 32-bit MXCSR into a local.
        unsafe { std::arch::asm!("stmxcsr [{}]", in(reg) &mut csr, options(nostack, preserves_flags)) };
        u64::from(csr)
    }
    #[cfg(target_arch = "aarch64")]
    {
        let fpcr: u64;
        // SAFETY: reads the FPCR system register.
        unsafe { std::arch::asm!("mrs {}, fpcr", out(reg) fpcr, options(nomem, nostack, preserves_flags)) };
        fpcr
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        0
    }
}

#[inline(always)]
fn set(mode: u64) {
    #[cfg(target_arch = "x86_64")]
    {
        let csr = mode as u32;
        // SAFETY: loads a value read from MXCSR with only the FTZ and DAZ bits changed.
        unsafe { std::arch::asm!("ldmxcsr [{}]", in(reg) &csr, options(nostack, preserves_flags)) };
    }
    #[cfg(target_arch = "aarch64")]
    {
        // SAFETY: writes a value read from FPCR with only the FZ bit changed.
        unsafe { std::arch::asm!("msr fpcr, {}", in(reg) mode, options(nomem, nostack, preserves_flags)) };
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let _ = mode;
    }
}

/// Whether compiled code flushes denormals by default (`QUABLA_FLUSH_DENORMALS`, default on).
pub(crate) fn enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("QUABLA_FLUSH_DENORMALS").map_or(true, |v| v.trim() != "0"))
}

/// The calling thread's mode before a change, restored on drop.
#[must_use]
pub struct Flushed(Option<u64>);

impl Flushed {
    /// Flushes denormals on this thread until the guard drops (a no-op when they already are).
    #[inline(always)]
    pub fn enter() -> Flushed {
        Flushed::to(true)
    }

    /// Gradual underflow on this thread until the guard drops (a host callback's Python code
    /// inside a compiled call).
    #[inline(always)]
    pub fn leave() -> Flushed {
        Flushed::to(false)
    }

    #[inline(always)]
    fn to(flush: bool) -> Flushed {
        if FLUSH == 0 {
            return Flushed(None);
        }
        let old = get();
        let new = if flush { old | FLUSH } else { old & !FLUSH };
        if new == old {
            return Flushed(None);
        }
        set(new);
        Flushed(Some(old))
    }
}

impl Drop for Flushed {
    #[inline(always)]
    fn drop(&mut self) {
        if let Some(old) = self.0 {
            set(old);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `x * y` computed at run time (not folded by the compiler).
    fn product(x: f32, y: f32) -> f32 {
        std::hint::black_box(x) * std::hint::black_box(y)
    }

    #[test]
    fn flushes_inside_and_restores_after() {
        if FLUSH == 0 {
            return;
        }
        let tiny = 1e-40_f32; // subnormal
        assert!(product(tiny, 1.5) > 0.0);
        {
            let _g = Flushed::enter();
            assert_eq!(product(tiny, 1.5), 0.0, "a subnormal operand reads as zero");
            assert_eq!(product(1e-30, 1e-10), 0.0, "a subnormal result is flushed");
            {
                let _ieee = Flushed::leave();
                assert!(product(tiny, 1.5) > 0.0, "a callback's code underflows gradually");
            }
            assert_eq!(product(tiny, 1.5), 0.0, "the mode comes back after the callback");
        }
        assert!(product(tiny, 1.5) > 0.0, "the caller's mode is restored");
    }
}
