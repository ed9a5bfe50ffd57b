//! Special functions of the elementwise family that Rust's std lacks or writes inaccurately:
//! `erfc`, `asinh`, `acosh`, `atanh` (the C library's, the functions the CPU lowering calls), `lgamma`, `digamma` and
//! `erf_inv`. The last three are computed in f64 by the algorithms that
//! lowering/src/linalg/special.rs writes as MLIR (f32 operands are widened and the result
//! rounded), so the interpreter and the JIT agree to a few ulps:
//! * lgamma: reflection `ln(pi / |sin(pi x)|) - lgamma(1 - x)` below 1/2; above it, shift by 8
//!   (`lgamma(w) = lgamma(w + 8) - ln(w (w+1) ... (w+7))`) below 8.5 and Stirling's series
//!   with eight Bernoulli terms; +inf at the poles (non-positive integers) and at ±inf.
//! * digamma: reflection `psi(1 - x) - pi / tan(pi x)` below 1/2 (NaN at the poles), the same
//!   shift by 8 and the asymptotic series `ln z - 1/(2z) - sum B_2k / (2k z^2k)`.
//! * erf_inv: Winitzki's closed-form guess refined by three Halley steps on `erf(x) = t`
//!   (written `(1 - t) - erfc(x) = 0` for t > 1/2, where `1 - t` is exact); ±inf at ±1 and NaN
//!   outside [-1, 1].

unsafe extern "C" {
    #[link_name = "erfc"]
    fn libm_erfc(x: f64) -> f64;
    #[link_name = "erfcf"]
    fn libm_erfcf(x: f32) -> f32;
    #[link_name = "erf"]
    fn libm_erf(x: f64) -> f64;
    #[link_name = "asinh"]
    fn libm_asinh(x: f64) -> f64;
    #[link_name = "acosh"]
    fn libm_acosh(x: f64) -> f64;
    #[link_name = "atanh"]
    fn libm_atanh(x: f64) -> f64;
    #[link_name = "asinhf"]
    fn libm_asinhf(x: f32) -> f32;
    #[link_name = "acoshf"]
    fn libm_acoshf(x: f32) -> f32;
    #[link_name = "atanhf"]
    fn libm_atanhf(x: f32) -> f32;
}

/// The inverse hyperbolic functions of the C library (the ones the JIT calls; Rust's std
/// writes them as log formulas that are several ulps off): (asinh, acosh, atanh) in f64.
pub(crate) fn inverse_hyperbolic_f64(op: u8, x: f64) -> f64 {
    // SAFETY: pure C library functions of their argument.
    unsafe {
        match op {
            0 => libm_asinh(x),
            1 => libm_acosh(x),
            _ => libm_atanh(x),
        }
    }
}

/// As [`inverse_hyperbolic_f64`], in f32.
pub(crate) fn inverse_hyperbolic_f32(op: u8, x: f32) -> f32 {
    // SAFETY: as above.
    unsafe {
        match op {
            0 => libm_asinhf(x),
            1 => libm_acoshf(x),
            _ => libm_atanhf(x),
        }
    }
}

/// erfc in f64 (C library).
pub(crate) fn erfc_f64(x: f64) -> f64 {
    // SAFETY: erfc is a pure function of its argument in the C library std links.
    unsafe { libm_erfc(x) }
}

/// erfc in f32 (C library).
pub(crate) fn erfc_f32(x: f32) -> f32 {
    // SAFETY: as erfc_f64.
    unsafe { libm_erfcf(x) }
}

fn erf_libm(x: f64) -> f64 {
    // SAFETY: as erfc_f64.
    unsafe { libm_erf(x) }
}

const PI: f64 = std::f64::consts::PI;

/// 0.5 ln(2 pi).
pub const HALF_LN_2PI: f64 = 0.918_938_533_204_672_7;

/// Stirling's correction series coefficients B_2k / (2k (2k-1)), k = 1..8 (in powers of 1/z^2).
pub const STIRLING: [f64; 8] = [1.0 / 12.0, -1.0 / 360.0, 1.0 / 1260.0, -1.0 / 1680.0, 1.0 / 1188.0, -691.0 / 360360.0, 1.0 / 156.0, -3617.0 / 122400.0];

/// Digamma's asymptotic coefficients B_2k / (2k), k = 1..7.
pub const DIGAMMA: [f64; 7] = [1.0 / 12.0, -1.0 / 120.0, 1.0 / 252.0, -1.0 / 240.0, 1.0 / 132.0, -691.0 / 32760.0, 1.0 / 12.0];

/// Horner evaluation of sum c[k] u^k.
fn horner(c: &[f64], u: f64) -> f64 {
    c.iter().rev().fold(0.0, |acc, &ck| acc * u + ck)
}

/// x - roundeven(x): the distance to the nearest integer, exact in floating point.
fn frac_near(x: f64) -> f64 {
    x - x.round_ties_even()
}

/// lgamma for w >= 1/2.
fn lgamma_pos(w: f64) -> f64 {
    let small = w < 8.5;
    let ws = if small { w } else { 8.5 };
    let mut p = ws;
    for k in 1..8 {
        p *= ws + k as f64;
    }
    let z = if small { w + 8.0 } else { w };
    let corr = if small { p.ln() } else { 0.0 };
    let u = 1.0 / (z * z);
    let s = horner(&STIRLING, u) / z;
    (z - 0.5) * z.ln() - z + HALF_LN_2PI + s - corr
}

/// ln |Gamma(x)| in f64.
pub(crate) fn lgamma_f64(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x.is_infinite() || (x <= 0.0 && x.floor() == x) {
        return f64::INFINITY;
    }
    if x < 0.5 {
        let s = (PI * frac_near(x)).sin().abs();
        (PI / s).ln() - lgamma_pos(1.0 - x)
    } else {
        lgamma_pos(x)
    }
}

/// digamma for w >= 1/2.
fn digamma_pos(w: f64) -> f64 {
    let small = w < 8.5;
    let ws = if small { w } else { 8.5 };
    let mut acc = 0.0;
    for k in 0..8 {
        acc += 1.0 / (ws + k as f64);
    }
    let z = if small { w + 8.0 } else { w };
    let corr = if small { acc } else { 0.0 };
    let u = 1.0 / (z * z);
    let t = u * horner(&DIGAMMA, u);
    z.ln() - 0.5 / z - t - corr
}

/// digamma (psi) in f64.
pub(crate) fn digamma_f64(x: f64) -> f64 {
    if x.is_nan() || x == f64::NEG_INFINITY {
        return f64::NAN;
    }
    if x == f64::INFINITY {
        return x;
    }
    if x <= 0.0 && x.floor() == x {
        return f64::NAN;
    }
    if x < 0.5 {
        digamma_pos(1.0 - x) - PI / (PI * frac_near(x)).tan()
    } else {
        digamma_pos(x)
    }
}

/// Winitzki's constant a of the closed-form erf_inv guess.
pub const WINITZKI_A: f64 = 0.147;

/// The inverse error function in f64.
pub(crate) fn erf_inv_f64(y: f64) -> f64 {
    let t = y.abs();
    if y.is_nan() || t > 1.0 {
        return f64::NAN;
    }
    if t == 1.0 {
        return f64::INFINITY.copysign(y);
    }
    // Winitzki: x0 = sqrt(sqrt(b^2 - l/a) - b), l = ln(1 - t^2), b = 2/(pi a) + l/2.
    let l = ((1.0 - t) * (1.0 + t)).ln();
    let b = 2.0 / (PI * WINITZKI_A) + 0.5 * l;
    let mut x = ((b * b - l / WINITZKI_A).sqrt() - b).sqrt();
    let tail = t > 0.5;
    for _ in 0..3 {
        let f = if tail { (1.0 - t) - erfc_f64(x) } else { erf_libm(x) - t };
        let d = std::f64::consts::FRAC_2_SQRT_PI * (-(x * x)).exp();
        let u = f / d;
        x -= u / (1.0 + x * u);
    }
    x.copysign(y)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    #[test]
    fn reference_values() {
        // mpmath at 30 digits.
        for (x, want) in [(0.5, 0.5723649429247001), (1.0, 0.0), (3.0, 0.6931471805599453), (10.5, 13.940625219403763), (100.0, 359.1342053695754), (-0.5, 1.2655121234846454), (-2.5, -0.05624371649767405), (1e-8, 18.420680738180209)] {
            let g = lgamma_f64(x);
            assert!((g - want).abs() <= 4e-15 * want.abs().max(1.0), "lgamma({x}) = {g}, want {want}");
        }
        for (x, want) in [(1.0, -0.5772156649015329), (0.5, -1.9635100260214235), (2.5, 0.7031566406452432), (10.0, 2.251752589066721), (-0.5, 0.03648997397857652), (-2.7, -1.1153471291406896), (1e3, 6.907255195648812)] {
            let g = digamma_f64(x);
            assert!(close(g, want, 1e-14), "digamma({x}) = {g}, want {want}");
        }
        for (y, want) in [(0.5, 0.4769362762044699), (0.1, 0.08885599049425769), (0.9, 1.1630871536766743), (0.999, 2.3267537655135246), (0.999999999999, 5.042031898572696), (-0.3, -0.2724627147267543)] {
            let g = erf_inv_f64(y);
            assert!(close(g, want, 2e-15), "erf_inv({y}) = {g}, want {want}");
        }
        assert_eq!(lgamma_f64(0.0), f64::INFINITY);
        assert_eq!(lgamma_f64(-3.0), f64::INFINITY);
        assert!(digamma_f64(-2.0).is_nan());
        assert_eq!(erf_inv_f64(-1.0), f64::NEG_INFINITY);
        assert!(erf_inv_f64(1.5).is_nan());
        assert_eq!(erf_inv_f64(0.0), 0.0);
    }
}
