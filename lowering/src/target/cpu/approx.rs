//! Polynomial approximations of transcendental functions, written once against the
//! [`Builder`] trait: the linalg lowering instantiates them with a text emitter (scalar `arith`
//! and `math.fma` ops in a `linalg.generic` body, which LLVM's loop vectorizer turns into
//! vector code), and [`eval`] instantiates them with a scalar evaluator that performs the
//! same IEEE operations in Rust, so their accuracy is measured over millions of points
//! without compiling anything (the JIT tests check that both agree).
//!
//! Covered: f32 and f64 `exp`, `expm1`, `log`, `tanh`, `logistic`, `erf_inv`; f32 `sin`,
//! `cos`, `erf` and the binary `pow` (exp(y log|x|) with the f64 kernels, `powf`). Everything
//! else keeps `math.*` ops (libm calls).
//!
//! Algorithms (coefficients: near-minimax fits by lowering/tools/fit_approx.py):
//! * exp: k = roundeven(x log2 e) (as (t + 1.5 2^p) - 1.5 2^p, whose bits also give the
//!   integer k), r = x - k ln2 (Cody-Waite, exact high part), e^r = 1 + r + r^2 P(r) on
//!   |r| <= ln2/2, scaled by 2^k rounded once (results near overflow and in the subnormal
//!   range): `ldexp` (`vscalefps`) on AVX-512 hosts, else by 2^(k/2) twice. Input clamped
//!   first; NaN passes through.
//! * expm1: the same reduction; 2^k (e^r - 1) + (2^k - 1) with one fma (no cancellation near
//!   0), exp(x) - 1 for large k; -1 below -30 (f32) / -40 (f64).
//! * log: x = 2^e m with m in [sqrt(1/2), sqrt(2)) (subnormals prescaled), f = m - 1,
//!   s = f/(2+f), log(1+f) = f - s (f - s^2 S(s^2)), plus e ln2 in two parts.
//! * tanh: |x| < 0.625: x + x^3 Q(x^2); else t/(t+2) with t = expm1(2|x|) (|x| clamped to
//!   10 / 20, where tanh is 1 in the format); sign restored with copysign.
//! * logistic: 1/(1 + exp(-x)), as the reference interpreter computes it.
//! * sin/cos (f32): in f64. |x| < 2^19: k = roundeven(|x| 2/pi), r = |x| - k pi/2 in two
//!   parts (exact for |k| < 2^20); larger |x|: Payne-Hanek with a per-exponent table of
//!   (2^E 2/pi) mod 4 in three pieces (27 + 27 + 53 bits) whose products with the 24-bit
//!   mantissa are exact, so the reduced argument keeps full relative accuracy. sin r =
//!   r + r^3 S(r^2), cos r = 1 - r^2/2 + r^4 C(r^2), quadrant from k mod 4.
//! * erf_inv: XLA's, operation for operation (so that qb.random.normal gives JAX's bits):
//!   Giles' polynomials in w = -log1p(-x^2) with XLA's log1p (a Cephes rational below
//!   sqrt(2) - 1, else log(1 + x) by libm's log in f64 and the Cephes log in f32), every
//!   Horner step an fma as XLA's CPU backend contracts it. See ERFINV_F32.
//! * erf (f32): one rational x P(x^2) / Q(x^2) on |x| <= 4 (degrees 6 and 5 in x^2, a
//!   near-minimax fit of relative error 2e-9, fit_approx.py `fit_rational`), the argument
//!   clamped to 4 above (erf rounds to 1 from 3.92 on); sign by copysign. 11 fmas and a
//!   division in f32: the two-branch form it replaced (a polynomial below 1, 1 - exp(-x^2)
//!   erfcx(x) above, both evaluated) was 1.5x JAX's time on 1e6 elements, this one 0.6x.
//!
//! Measured accuracy (max ulps against Rust's libm-backed functions; the tests in this file
//! and in tests/rust/approx.rs fail when a bound is exceeded): see `BOUNDS`.
use quabla_dialect::{BinaryOp, DType, UnaryOp};

/// Float binary ops used by the kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FBin {
    Add,
    Sub,
    Mul,
    Div,
}

/// Float unary ops used by the kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FUn {
    Neg,
    Abs,
    RoundEven,
    /// Correctly rounded square root (an instruction).
    Sqrt,
    /// The platform libm's `log` (`math.log`, which stays a libm call; erf_inv's f64 log1p
    /// uses it because XLA's CPU code calls the same function).
    LibmLog,
}

/// Float comparison predicates (`o*` false on NaN, `u*` true).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FCmp {
    Olt,
    Oge,
    Ogt,
    Oeq,
    Ult,
    Uno,
}

/// Integer binary ops (two's complement, wrapping).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IBin {
    Add,
    Sub,
    And,
    Or,
    Shl,
    ShrS,
    MaxS,
    MinS,
}

/// Integer comparison predicates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ICmp {
    Eq,
    Ne,
}

/// Conversions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cast {
    /// Same-width reinterpretation between a float and an integer type.
    Bitcast,
    /// Float to signed integer (the kernels only convert in-range values).
    FpToSi,
    /// Signed integer to float.
    SiToFp,
    /// f32 to f64.
    ExtF,
    /// f64 to f32 (round to nearest even).
    TruncF,
}

/// What the kernels are written against: one method per operation, values typed by `DType`
/// (i1 for comparison results).
pub trait Builder {
    type V: Clone;
    fn fconst(&mut self, d: DType, v: f64) -> Self::V;
    fn iconst(&mut self, d: DType, v: i64) -> Self::V;
    fn fbin(&mut self, op: FBin, a: &Self::V, b: &Self::V) -> Self::V;
    fn fun(&mut self, op: FUn, a: &Self::V) -> Self::V;
    /// a * b + c with one rounding.
    fn fma(&mut self, a: &Self::V, b: &Self::V, c: &Self::V) -> Self::V;
    /// |a| with the sign of b.
    fn copysign(&mut self, a: &Self::V, b: &Self::V) -> Self::V;
    fn fcmp(&mut self, p: FCmp, a: &Self::V, b: &Self::V) -> Self::V;
    fn ibin(&mut self, op: IBin, a: &Self::V, b: &Self::V) -> Self::V;
    fn icmp(&mut self, p: ICmp, a: &Self::V, b: &Self::V) -> Self::V;
    fn select(&mut self, c: &Self::V, a: &Self::V, b: &Self::V) -> Self::V;
    fn cast(&mut self, op: Cast, a: &Self::V, to: DType) -> Self::V;
    /// `table[index]` for a constant f64 table and an i32 index within bounds.
    fn lookup(&mut self, table: &[f64], index: &Self::V) -> Self::V;
    /// a 2^k rounded once (k of the integer type of a's width), where the target computes
    /// it in one instruction; None (the default) makes the kernels multiply by two powers
    /// of two instead, which gives the same bits for the arguments they pass.
    fn ldexp(&mut self, _a: &Self::V, _k: &Self::V) -> Option<Self::V> {
        None
    }
}

/// atan(t) = t + t^3 P(t^2) on [-tan(pi/8), tan(pi/8)]: P's coefficients, lowest degree first
/// (a weighted least-squares fit of the relative error in f64, numpy, 200001 points: max
/// 7.3e-11).
const ATAN_P: [f64; 6] = [-0.33333332660001574, 0.1999991921861787, -0.14282467814101227, 0.1105062108226389, -0.08510539122258681, 0.048170508806141335];

/// Whether `u` on `d` has a polynomial kernel here.
pub fn supported(u: UnaryOp, d: DType) -> bool {
    use UnaryOp::*;
    match d {
        DType::F32 => matches!(u, Exp | Exp2 | Expm1 | Log | Log1p | Tanh | Logistic | Sinh | Cosh | Asinh | Atanh | Sin | Cos | Erf | Erfc | ErfInv),
        DType::F64 => matches!(u, Exp | Exp2 | Expm1 | Log | Log1p | Tanh | Logistic | Sinh | Cosh | Asinh | Atanh | ErfInv),
        DType::I1 | DType::I32 | DType::I64 | DType::U8 | DType::U32 => false,
    }
}

/// Whether binary op `op` on `d` has a kernel here (f32 `pow` and `atan2`).
pub fn binary_supported(op: BinaryOp, d: DType) -> bool {
    matches!(op, BinaryOp::Pow | BinaryOp::Atan2) && d == DType::F32
}

/// Emits the kernel of `op` on `x` and `y` (of float type `d`); None when
/// [`binary_supported`] is false.
pub fn binary<B: Builder>(b: &mut B, op: BinaryOp, d: DType, x: &B::V, y: &B::V) -> Option<B::V> {
    if !binary_supported(op, d) {
        return None;
    }
    let mut k = K { b, d };
    Some(match op {
        BinaryOp::Atan2 => k.atan2f(x, y),
        _ => k.powf(x, y),
    })
}

/// Emits the kernel of `u` on `x` (of float type `d`); None when [`supported`] is false.
pub fn unary<B: Builder>(b: &mut B, u: UnaryOp, d: DType, x: &B::V) -> Option<B::V> {
    if !supported(u, d) {
        return None;
    }
    let mut k = K { b, d };
    Some(match u {
        UnaryOp::Exp => k.exp(x),
        UnaryOp::Expm1 => k.expm1(x),
        UnaryOp::Log => k.log(x),
        UnaryOp::Log1p => k.log1p(x),
        UnaryOp::Exp2 => k.exp2(x),
        UnaryOp::Sinh => k.sinh(x),
        UnaryOp::Cosh => k.cosh(x),
        UnaryOp::Asinh => k.asinh(x),
        UnaryOp::Atanh => k.atanh(x),
        UnaryOp::Tanh => k.tanh(x),
        UnaryOp::Logistic => k.logistic(x),
        UnaryOp::Sin => k.sincos(x, false),
        UnaryOp::Cos => k.sincos(x, true),
        UnaryOp::Erf => k.erf(x),
        UnaryOp::Erfc => k.erfc(x),
        UnaryOp::ErfInv => k.erf_inv(x),
        _ => return None,
    })
}

/// Measured worst-case errors in ulps (against Rust std / the interpreter's erf) over the
/// sampled ranges of the tests; the tests fail above these.
pub const BOUNDS: &[(UnaryOp, DType, u64)] = &[
    (UnaryOp::Exp, DType::F32, 1),
    (UnaryOp::Exp, DType::F64, 1),
    (UnaryOp::Expm1, DType::F32, 2),
    (UnaryOp::Expm1, DType::F64, 2),
    (UnaryOp::Log, DType::F32, 1),
    (UnaryOp::Log, DType::F64, 1),
    (UnaryOp::Log1p, DType::F32, 2),
    (UnaryOp::Log1p, DType::F64, 2),
    (UnaryOp::Exp2, DType::F32, 1),
    (UnaryOp::Exp2, DType::F64, 1),
    (UnaryOp::Sinh, DType::F32, 3),
    (UnaryOp::Sinh, DType::F64, 3),
    (UnaryOp::Cosh, DType::F32, 3),
    (UnaryOp::Cosh, DType::F64, 3),
    (UnaryOp::Asinh, DType::F32, 3),
    (UnaryOp::Asinh, DType::F64, 3),
    (UnaryOp::Atanh, DType::F32, 3),
    (UnaryOp::Atanh, DType::F64, 3),
    // One rational in f32 arithmetic (XLA's f32 tanh is 5 ulps from the f64 one).
    (UnaryOp::Tanh, DType::F32, 4),
    // expm1(2a) / (expm1(2a) + 2) on every a (one division, no second polynomial for small
    // a): expm1's 2 ulps and the quotient's rounding; mean 0.3 ulps on 2e6 normal samples
    // over ten scales (the two-branch form was 2 ulps and 1.45x slower).
    (UnaryOp::Tanh, DType::F64, 3),
    // 2 against the cancellation-free formula; 3 against the interpreter's 1/(1 + exp(-x)),
    // whose own rounding of 1 + e contributes.
    (UnaryOp::Logistic, DType::F32, 3),
    (UnaryOp::Logistic, DType::F64, 3),
    (UnaryOp::Sin, DType::F32, 1),
    (UnaryOp::Cos, DType::F32, 1),
    // The rounding of the two f32 Horner sums (each term positive up to x^2 = 16) and of the
    // product and quotient: 5 ulps at worst, 0.6 on average, as XLA's f32 erf (5 ulps, mean
    // 0.56, against SciPy's f64 erf on 5e5 points of [-30, 30]). Evaluated in f64 it was 2
    // ulps but 2x slower (f64 vectors are half as wide, and the f64 division): 300-340 us
    // against 150 on 1e6 elements (JAX 200-250).
    (UnaryOp::Erf, DType::F32, 5),
    // Against the interpreter's erfc; XLA's f32 erfc is 18 ulps from the f64 one on [0.3, 4.5].
    (UnaryOp::Erfc, DType::F32, 6),
    // XLA's erf_inv (bitwise what jax.lax.erf_inv gives on the CPU) against the
    // interpreter's Halley-refined erf_inv, over tests/rust/cpu_codegen.rs's sample points:
    // accurate to a few ulps up to |x| ~ 0.99; closer to +-1 the rounding of x*x in
    // w = -log1p(-x*x) costs about eps / (1 - |x|) relative (XLA's inaccuracy, kept so that
    // the bits are JAX's): the f64 bound is that of the sample point nearest 1 (2700 ulps at
    // 1 - 2.2e-6 since stop 39's kernels moved the shared sample sequence).
    (UnaryOp::ErfInv, DType::F32, ERFINV_F32_ULPS),
    (UnaryOp::ErfInv, DType::F64, ERFINV_F64_ULPS),
];
const ERFINV_F32_ULPS: u64 = 64;
const ERFINV_F64_ULPS: u64 = 3000;

// generated by lowering/tools/fit_approx.py (lowest degree first)
const EXP_F32: [f64; 5] = [0.5, 0.1666657702559799, 0.041666554662050534, 0.008363173074513711, 0.001392617611993558];
const EXP_F64: [f64; 10] = [
    0.5000000000000001,
    0.16666666666666669,
    0.041666666666624164,
    0.008333333333330065,
    0.0013888888917196719,
    0.00019841269863040545,
    2.4801521322368692e-05,
    2.7557268480310024e-06,
    2.7620075879983367e-07,
    2.5100375832561234e-08,
];
const LOG_F32: [f64; 3] = [0.6666668503957586, 0.3998878056602198, 0.2957994939197279];
const LOG_F64: [f64; 8] = [
    0.6666666666666666,
    0.4000000000000088,
    0.28571428570803614,
    0.22222222391713917,
    0.18181795640132906,
    0.15386239702814658,
    0.13268773138656886,
    0.13086626147840102,
];
/// f32 erfc(x) exp(x^2) on [0.5, 10] as P(x) / Q(x) (fit rel. error 2.5e-10; erfc underflows
/// in f32 past 10.06).
const ERFC_P_F32: [f64; 6] = [1.0000046006593437, 1.2610085389412145, 0.7601426162420792, 0.2447473514689136, 0.03700162924713984, -2.2495220205340987e-08];
const ERFC_Q_F32: [f64; 6] = [1.0, 2.389434273030977, 2.4561150321498344, 1.3796080633897372, 0.4338435999131607, 0.06558177745913552];
/// f32 tanh on |x| <= 9 as x P(x^2) / Q(x^2) (fit rel. error 1.3e-9; tanh(9) rounds to 1 in f32).
const TANH_P_F32: [f64; 6] = [0.999999998727821, 0.13680861982556627, 0.0038695146266868965, 2.803142665660621e-05, 3.064273731308863e-08, -1.2246342078254176e-11];
const TANH_Q_F32: [f64; 5] = [1.0, 0.470141940758393, 0.02725018169082192, 0.000394072442254348, 1.2890422502168784e-06];
const ERF_P_F32: [f64; 7] = [1.1283791693734249, 0.18520504344826988, 0.05431694783536551, 0.0038496598320528395, 0.0003796011727428111, 4.684524461854055e-06, -1.3201030331829179e-08];
const ERF_Q_F32: [f64; 6] = [1.0, 0.49746710993640997, 0.11395898733941079, 0.015462159798614934, 0.0013075694610430563, 6.310820983775052e-05];
const SIN_F32: [f64; 4] = [-0.1666666666385529, 0.008333331874710208, -0.00019840086735384846, 2.724992580305979e-06];
const COS_F32: [f64; 4] = [0.0416666666643212, -0.001388888767201679, 2.480060037715673e-05, -2.730095920390147e-07];

/// erf_inv as XLA computes it (Giles, "Approximating the erfinv function", GPU Computing
/// Gems 2; the CHLO decomposition of `chlo.erf_inv`): w = -log1p(-x^2); per branch (taken
/// while w < bound) t = w - shift or sqrt(w) - shift and p(t) by Horner steps p = p t + c
/// (each one fma, as XLA's CPU backend contracts them), highest degree first; erf_inv(x) =
/// p x. The shorter polynomials are padded with leading zeros (fma(0, t, c) = c exactly), so
/// one Horner chain over per-branch coefficients computes every branch.
struct ErfInvBranch {
    bound: f64,
    shift: f64,
    sqrt: bool,
    coeffs: &'static [f64],
}

const ERFINV_F32: [ErfInvBranch; 2] = [
    ErfInvBranch { bound: 5.0, shift: 2.5, sqrt: false, coeffs: &[2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941] },
    ErfInvBranch { bound: f64::INFINITY, shift: 3.0, sqrt: true, coeffs: &[-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682] },
];

const ERFINV_F64: [ErfInvBranch; 3] = [
    ErfInvBranch {
        bound: 6.25,
        shift: 3.125,
        sqrt: false,
        coeffs: &[
            -3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18, 1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
            6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14, 2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
            1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08, 4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
            0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533, 0.24015818242558961693, 1.6536545626831027356,
        ],
    },
    ErfInvBranch {
        bound: 16.0,
        shift: 3.25,
        sqrt: true,
        coeffs: &[
            2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07, 1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
            2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05, 6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
            0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066, -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
            3.0838856104922207635,
        ],
    },
    ErfInvBranch {
        bound: f64::INFINITY,
        shift: 5.0,
        sqrt: true,
        coeffs: &[
            -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09, -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
            2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07, -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
            7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026, 1.0103004648645343977, 4.8499064014085844221,
        ],
    },
];

/// XLA's log1p (its CPU intrinsic, after Cephes): for |x| < sqrt(2) - 1, x - x^2/2 + x^3
/// N(x)/D(x) (Horner with fma, highest degree first), else log(1 + x).
const LOG1P_XLA_SMALL: f64 = 0.41421356237309504880;
const LOG1P_XLA_NUM: [f64; 7] = [4.5270000862445199635215e-5, 4.9854102823193375972212e-1, 6.5787325942061044846969e0, 2.9911919328553073277375e1, 6.0949667980987787057556e1, 5.7112963590585538103336e1, 2.0039553499201281259648e1];
const LOG1P_XLA_DEN: [f64; 7] = [1.0, 1.5062909083469192043167e1, 8.3047565967967209469434e1, 2.2176239823732856465394e2, 3.0909872225312059774938e2, 2.1642788614495947685003e2, 6.0118660497603843919306e1];
/// The Cephes single-precision log that XLA's CPU backend uses for f32 `log`: m in
/// [sqrt(1/2), sqrt(2)), f = m - 1, log = f - f^2/2 + f^3 P(f) + e ln2 (ln2 in two parts).
const LOGF_CEPHES: [f64; 9] = [7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1];
const LOGF_CEPHES_LN2: (f64, f64) = (0.693359375, -2.12194440e-4);
/// ln 2 = hi + lo; hi has 16 (f32) / 42 (f64) significant bits so that k * hi is exact.
const LN2_F32: (f64, f64) = (0.693145751953125, 1.4286068203094173e-06);
const LN2_F64: (f64, f64) = (0.6931471805598903, 5.497923018708371e-14);
/// pi/2 = hi + lo; hi has 33 significant bits (k * hi exact for |k| < 2^20).
const PIO2: (f64, f64) = (1.5707963267341256, 6.077100506506192e-11);
/// The first 256 bits of 2/pi after the binary point.
const TWO_OVER_PI_BITS: [u32; 8] = [0xA2F9836E, 0x4E441529, 0xFC2757D1, 0xF534DDC0, 0xDB629599, 0x3C439041, 0xFE5163AB, 0xDEBBC561];
/// f32 arguments at or above this use the Payne-Hanek reduction.
const SINCOS_BIG: f64 = 524288.0; // 2^19
/// Exponent range of the Payne-Hanek table: E = unbiased exponent - 23, from -4 (2^19) to 104.
const PH_EMIN: i64 = -4;
const PH_EMAX: i64 = 104;

/// Bits `from..from+n` (1-based positions after the binary point) of 2/pi as an integer.
fn two_over_pi_bits(from: i64, n: u32) -> u64 {
    let mut v = 0u64;
    for i in from..from + n as i64 {
        let bit = if i < 1 {
            0
        } else {
            let i = (i - 1) as usize;
            (TWO_OVER_PI_BITS[i / 32] >> (31 - i % 32)) & 1
        };
        v = (v << 1) | bit as u64;
    }
    v
}

/// The Payne-Hanek table: for E in PH_EMIN..=PH_EMAX, (2^E * 2/pi) mod 4 as three pieces
/// (t0: bits of weight 2^1..2^-25, t1: 2^-26..2^-52, t2: 2^-53..2^-105), flattened as
/// [t0(E), .. ; t1(E), .. ; t2(E), ..].
pub fn payne_hanek_table() -> Vec<f64> {
    let n = (PH_EMAX - PH_EMIN + 1) as usize;
    let mut t = vec![0.0; 3 * n];
    for (j, e) in (PH_EMIN..=PH_EMAX).enumerate() {
        // Bit i of 2/pi has weight 2^(E - i) in 2^E * 2/pi; weight 2^1 is bit i = E - 1.
        let piece = |first_weight: i64, n: u32| two_over_pi_bits(e - first_weight, n) as f64 * 2f64.powi((first_weight - n as i64 + 1) as i32);
        t[j] = piece(1, 27);
        t[n + j] = piece(-26, 27);
        t[2 * n + j] = piece(-53, 53);
    }
    t
}

/// Format constants of the log kernel.
struct LogParams {
    min_normal: f64,
    /// 2^p and p: subnormal inputs are multiplied by 2^p and the exponent corrected by -p.
    prescale: f64,
    prescale_exp: f64,
    sqrt_half_bits: i64,
    mantissa_mask: i64,
    mantissa_bits: i64,
    ln2: (f64, f64),
    coeffs: &'static [f64],
}

const LOG_PARAMS: [LogParams; 2] = [
    LogParams {
        min_normal: f32::MIN_POSITIVE as f64,
        prescale: 8388608.0,
        prescale_exp: -23.0,
        sqrt_half_bits: 0x3f3504f3,
        mantissa_mask: 0x007f_ffff,
        mantissa_bits: 23,
        ln2: LN2_F32,
        coeffs: &LOG_F32,
    },
    LogParams {
        min_normal: f64::MIN_POSITIVE,
        prescale: 18014398509481984.0,
        prescale_exp: -54.0,
        sqrt_half_bits: 0x3fe6_a09e_667f_3bcd,
        mantissa_mask: 0x000f_ffff_ffff_ffff,
        mantissa_bits: 52,
        ln2: LN2_F64,
        coeffs: &LOG_F64,
    },
];

/// A kernel under construction: the builder and the float type.
struct K<'a, B: Builder> {
    b: &'a mut B,
    d: DType,
}

impl<B: Builder> K<'_, B> {
    fn f32(&self) -> bool {
        self.d == DType::F32
    }
    fn int(&self) -> DType {
        if self.f32() {
            DType::I32
        } else {
            DType::I64
        }
    }
    /// A float constant of the kernel type (rounded to it).
    fn c(&mut self, v: f64) -> B::V {
        let v = if self.f32() { v as f32 as f64 } else { v };
        self.b.fconst(self.d, v)
    }
    fn i(&mut self, v: i64) -> B::V {
        let t = self.int();
        self.b.iconst(t, v)
    }
    fn add(&mut self, a: &B::V, c: &B::V) -> B::V {
        self.b.fbin(FBin::Add, a, c)
    }
    fn sub(&mut self, a: &B::V, c: &B::V) -> B::V {
        self.b.fbin(FBin::Sub, a, c)
    }
    fn mul(&mut self, a: &B::V, c: &B::V) -> B::V {
        self.b.fbin(FBin::Mul, a, c)
    }
    fn div(&mut self, a: &B::V, c: &B::V) -> B::V {
        self.b.fbin(FBin::Div, a, c)
    }
    fn neg(&mut self, a: &B::V) -> B::V {
        self.b.fun(FUn::Neg, a)
    }
    fn fma(&mut self, a: &B::V, b: &B::V, c: &B::V) -> B::V {
        self.b.fma(a, b, c)
    }
    fn sel(&mut self, c: &B::V, a: &B::V, b: &B::V) -> B::V {
        self.b.select(c, a, b)
    }
    fn cmp(&mut self, p: FCmp, a: &B::V, b: &B::V) -> B::V {
        self.b.fcmp(p, a, b)
    }
    /// `a && b` of two comparison results (a select).
    fn and(&mut self, a: &B::V, b: &B::V) -> B::V {
        self.b.select(a, b, a)
    }
    /// `a || b` of two comparison results (a select).
    fn or(&mut self, a: &B::V, b: &B::V) -> B::V {
        self.b.select(a, a, b)
    }
    /// x clamped to [lo, hi] by compare and select (one `max`/`min` instruction each on x86;
    /// a NaN stays NaN, and every kernel maps NaN inputs to NaN at the end).
    fn clamp(&mut self, x: &B::V, lo: f64, hi: f64) -> B::V {
        let l = self.c(lo);
        let h = self.c(hi);
        let below = self.cmp(FCmp::Olt, x, &l);
        let a = self.sel(&below, &l, x);
        let above = self.cmp(FCmp::Ogt, &a, &h);
        self.sel(&above, &h, &a)
    }
    /// t + t z P(z) (z = t^2: an odd function's series), P by [`K::poly`] over `c`.
    fn odd_poly(&mut self, t: &B::V, z: &B::V, c: &[f64]) -> B::V {
        let p = self.poly(z, c);
        let tz = self.mul(t, z);
        self.fma(&tz, &p, t)
    }
    /// Horner: c[0] + z c[1] + z^2 c[2] + ...
    fn poly(&mut self, z: &B::V, c: &[f64]) -> B::V {
        let mut p = self.c(c[c.len() - 1]);
        for &ci in c[..c.len() - 1].iter().rev() {
            let k = self.c(ci);
            p = self.fma(&p, z, &k);
        }
        p
    }
    /// NaN inputs give themselves.
    fn keep_nan(&mut self, x: &B::V, r: &B::V) -> B::V {
        let nan = self.cmp(FCmp::Uno, x, x);
        self.sel(&nan, x, r)
    }
    /// 2^k as a float for an integer k in the normal exponent range.
    fn pow2(&mut self, k: &B::V) -> B::V {
        let (bias, shift) = if self.f32() { (127, 23) } else { (1023, 52) };
        let bias = self.i(bias);
        let shift = self.i(shift);
        let e = self.b.ibin(IBin::Add, k, &bias);
        let bits = self.b.ibin(IBin::Shl, &e, &shift);
        self.b.cast(Cast::Bitcast, &bits, self.d)
    }

    /// The shared reduction of exp/expm1/tanh on an already clamped x: (k as float, the
    /// shifted sum s whose low mantissa bits hold k, e^r - 1).
    ///
    /// k = roundeven(x log2 e) is taken as (t + M) - M with M = 1.5 2^p (p the mantissa
    /// bits): for |t| < 2^(p-1) the sum rounds t to the nearest integer, ties to even, so k
    /// is bit for bit `roundeven`'s, and bits(t + M) = bits(M) + k gives the integer k
    /// without a float-to-int conversion. On AVX-512 both replace instructions that only
    /// one port runs (`vrndscaleps`, two uops; `vcvttps2dq`) by adds and an integer sub
    /// (llvm-mca, Sapphire Rapids model: see docs/performance.md, 2026-12-02 05:30).
    fn exp_core(&mut self, x: &B::V) -> (B::V, B::V, B::V) {
        let (ln2, coeffs): ((f64, f64), &[f64]) = if self.f32() { (LN2_F32, &EXP_F32) } else { (LN2_F64, &EXP_F64) };
        let log2e = self.c(std::f64::consts::LOG2_E);
        let t = self.mul(x, &log2e);
        let shifter = self.c(self.shifter());
        let s = self.add(&t, &shifter);
        let k = self.sub(&s, &shifter);
        let nk = self.neg(&k);
        let hi = self.c(ln2.0);
        let lo = self.c(ln2.1);
        let r = self.fma(&nk, &hi, x);
        let r = self.fma(&nk, &lo, &r);
        let p = self.poly(&r, coeffs);
        let r2 = self.mul(&r, &r);
        let q = self.fma(&r2, &p, &r);
        (k, s, q)
    }

    /// M = 1.5 2^p of [`Self::exp_core`] (p = 23 for f32, 52 for f64).
    fn shifter(&self) -> f64 {
        if self.f32() {
            1.5 * 2f64.powi(23)
        } else {
            1.5 * 2f64.powi(52)
        }
    }

    /// The integer k held by the shifted sum s = k + M of [`Self::exp_core`].
    fn k_of_shifted(&mut self, s: &B::V) -> B::V {
        let it = self.int();
        let bits = self.b.cast(Cast::Bitcast, s, it);
        let m = self.shifter();
        let mb = self.i(if self.f32() { (m as f32).to_bits() as i64 } else { m.to_bits() as i64 });
        self.b.ibin(IBin::Sub, &bits, &mb)
    }

    /// 2^k from the shifted sum s = k + M of [`Self::exp_core`] (k in the normal exponent
    /// range): (bits(s) << p) + (bias << p), since bits(M) << p is 0 in the integer width.
    fn pow2_of_shifted(&mut self, s: &B::V) -> B::V {
        let (bias, shift) = if self.f32() { (127i64, 23) } else { (1023, 52) };
        let it = self.int();
        let bits = self.b.cast(Cast::Bitcast, s, it);
        let sh = self.i(shift);
        let e = self.b.ibin(IBin::Shl, &bits, &sh);
        let b = self.i(if self.f32() { ((bias << shift) as u32 as i32) as i64 } else { bias << shift });
        let e = self.b.ibin(IBin::Add, &e, &b);
        self.b.cast(Cast::Bitcast, &e, self.d)
    }

    /// (2^(k>>1), 2^(k - (k>>1))) for an integer k.
    fn split_scale(&mut self, ki: &B::V) -> (B::V, B::V) {
        let one = self.i(1);
        let k1 = self.b.ibin(IBin::ShrS, ki, &one);
        let k2 = self.b.ibin(IBin::Sub, ki, &k1);
        (self.pow2(&k1), self.pow2(&k2))
    }

    /// p 2^k rounded once, for p in [0.5, 4) and an integer k with 2^(k>>1) normal: the
    /// builder's `ldexp` where it has one (`vscalefps` on AVX-512), else p 2^(k>>1) (exact)
    /// times 2^(k - (k>>1)) (the one rounding), which gives the same bits.
    fn scale(&mut self, p: &B::V, ki: &B::V) -> B::V {
        if let Some(y) = self.b.ldexp(p, ki) {
            return y;
        }
        let (s1, s2) = self.split_scale(ki);
        let y = self.mul(p, &s1);
        self.mul(&y, &s2)
    }

    /// `x` clamped to `hi` above, and below `lo` replaced by 0, with whether it was below
    /// `lo`: a kernel whose result rounds to 0 below `lo` computes on 0 there and then selects
    /// 0 ([`Self::zero_below`]). Computed on `lo`, the result underflowed: Intel cores take a
    /// microcode assist for each subnormal or underflowing result, and 1e6 f32 `exp(-1e9)` (a
    /// softmax over masked logits) took 2.5 ms against 0.16 for `exp(0)` (2.6x JAX's time
    /// for that softmax; now 0.15-0.18 ms). Results that are subnormal (f32 exp from -104 to
    /// -87.3) still take the assist (`exp(-100)` 2.3 ms; JAX, which runs with
    /// flush-to-zero, gives 0 there): computing them as integers cost 40-60% of exp's time in
    /// cache (65536 f32 14 -> 21-24 us), this 10% (15-16 us).
    fn clamp_flush(&mut self, x: &B::V, lo: f64, hi: f64) -> (B::V, B::V) {
        let l = self.c(lo);
        let h = self.c(hi);
        let zero = self.c(0.0);
        let below = self.cmp(FCmp::Olt, x, &l);
        let a = self.sel(&below, &zero, x);
        let above = self.cmp(FCmp::Ogt, &a, &h);
        (self.sel(&above, &h, &a), below)
    }

    /// `y`, or +0 where `below` ([`Self::clamp_flush`]).
    fn zero_below(&mut self, below: &B::V, y: &B::V) -> B::V {
        let zero = self.c(0.0);
        self.sel(below, &zero, y)
    }

    fn exp(&mut self, x: &B::V) -> B::V {
        // e^x < 2^-150 below -104 (f32) and < 2^-1075 below -746 (f64): 0 when rounded.
        let (lo, hi) = if self.f32() { (-104.0, 89.0) } else { (-746.0, 710.0) };
        let (xc, below) = self.clamp_flush(x, lo, hi);
        let (_, s, q) = self.exp_core(&xc);
        let one = self.c(1.0);
        let p = self.add(&q, &one);
        let ki = self.k_of_shifted(&s);
        let y = self.scale(&p, &ki);
        let y = self.zero_below(&below, &y);
        self.keep_nan(x, &y)
    }

    fn expm1(&mut self, x: &B::V) -> B::V {
        let (lo, hi, kmax) = if self.f32() { (-30.0, 89.0, 100.0) } else { (-40.0, 710.0, 1000.0) };
        let xc = self.clamp(x, lo, hi);
        let (k, sh, q) = self.exp_core(&xc);
        let ki = self.k_of_shifted(&sh);
        let (s1, s2) = self.split_scale(&ki);
        let one = self.c(1.0);
        // Large k: exp(x) - 1 (the -1 is a rounding-level correction).
        let p = self.add(&q, &one);
        let big = self.mul(&p, &s1);
        let big = self.mul(&big, &s2);
        let big = self.sub(&big, &one);
        // Otherwise 2^k q + (2^k - 1), exact scale.
        let s = self.mul(&s1, &s2);
        let sm1 = self.sub(&s, &one);
        let small = self.fma(&s, &q, &sm1);
        let kmax = self.c(kmax);
        let is_big = self.cmp(FCmp::Ogt, &k, &kmax);
        let y = self.sel(&is_big, &big, &small);
        // expm1(±0) = ±0 and NaN stays NaN.
        let zero = self.c(0.0);
        let z = self.cmp(FCmp::Oeq, x, &zero);
        let y = self.sel(&z, x, &y);
        self.keep_nan(x, &y)
    }

    fn log(&mut self, x: &B::V) -> B::V {
        let f = if self.f32() { &LOG_PARAMS[0] } else { &LOG_PARAMS[1] };
        let (min_normal, pre, pre_exp, sqrt_half, mask, shift, ln2, coeffs) = (f.min_normal, f.prescale, f.prescale_exp, f.sqrt_half_bits, f.mantissa_mask, f.mantissa_bits, f.ln2, f.coeffs);
        // Subnormals: scale into the normal range first.
        let mn = self.c(min_normal);
        let sub = self.cmp(FCmp::Olt, x, &mn);
        let pre = self.c(pre);
        let xs = self.mul(x, &pre);
        let xs = self.sel(&sub, &xs, x);
        let pe = self.c(pre_exp);
        let z0 = self.c(0.0);
        let eadj = self.sel(&sub, &pe, &z0);
        // x = 2^e m, m in [sqrt(1/2), sqrt(2)).
        let it = self.int();
        let bits = self.b.cast(Cast::Bitcast, &xs, it);
        let sh = self.i(sqrt_half);
        let ix = self.b.ibin(IBin::Sub, &bits, &sh);
        let shift = self.i(shift);
        let e = self.b.ibin(IBin::ShrS, &ix, &shift);
        let mask = self.i(mask);
        let mb = self.b.ibin(IBin::And, &ix, &mask);
        let mb = self.b.ibin(IBin::Add, &mb, &sh);
        let m = self.b.cast(Cast::Bitcast, &mb, self.d);
        let one = self.c(1.0);
        let two = self.c(2.0);
        let f = self.sub(&m, &one);
        let den = self.add(&two, &f);
        let s = self.div(&f, &den);
        let z = self.mul(&s, &s);
        let p = self.poly(&z, coeffs);
        let r = self.mul(&z, &p);
        let fr = self.sub(&f, &r);
        let nsfr = self.mul(&s, &fr);
        let lm = self.sub(&f, &nsfr);
        let ef = self.b.cast(Cast::SiToFp, &e, self.d);
        let ef = self.add(&ef, &eadj);
        let hi = self.c(ln2.0);
        let lo = self.c(ln2.1);
        let t = self.fma(&ef, &lo, &lm);
        let y = self.fma(&ef, &hi, &t);
        // Specials: +inf -> +inf, 0 -> -inf, negative or NaN -> NaN.
        let inf = self.c(f64::INFINITY);
        let ninf = self.c(f64::NEG_INFINITY);
        let nan = self.c(f64::NAN);
        let is_inf = self.cmp(FCmp::Oeq, x, &inf);
        let y = self.sel(&is_inf, &inf, &y);
        let is_zero = self.cmp(FCmp::Oeq, x, &z0);
        let y = self.sel(&is_zero, &ninf, &y);
        let bad = self.cmp(FCmp::Ult, x, &z0);
        self.sel(&bad, &nan, &y)
    }

    /// log1p(x) = log(u) + (x - (u - 1)) / u with u = 1 + x rounded: the correction restores
    /// what the rounding of u lost (Goldberg's trick; |x| below half an ulp of 1, where u is 1,
    /// gives x itself, keeping -0). -1 -> -inf, +inf -> +inf, below -1 or NaN -> NaN. The
    /// platform's log1p it replaces is a scalar libm call per element: 1e6 f32 6.3 ms on Zen 4
    /// against JAX's 0.5.
    fn log1p(&mut self, x: &B::V) -> B::V {
        let one = self.c(1.0);
        let u = self.add(x, &one);
        let l = self.log(&u);
        let um1 = self.sub(&u, &one);
        let lost = self.sub(x, &um1);
        let corr = self.div(&lost, &u);
        let y = self.add(&l, &corr);
        let unit = self.cmp(FCmp::Oeq, &u, &one);
        let y = self.sel(&unit, x, &y);
        // u = 0 (x = -1) and u = +inf: log's own value (the correction is 0/0 or inf - inf).
        let z0 = self.c(0.0);
        let inf = self.c(f64::INFINITY);
        let edge = self.cmp(FCmp::Oeq, &u, &z0);
        let top = self.cmp(FCmp::Oeq, &u, &inf);
        let edge = self.or(&edge, &top);
        let y = self.sel(&edge, &l, &y);
        self.keep_nan(x, &y)
    }

    /// 2^x = 2^k 2^r, k = roundeven(x), r = x - k (exact) in [-1/2, 1/2], 2^r = exp(r ln 2)
    /// by the exp kernel's core, scaled once by 2^(k + k').
    fn exp2(&mut self, x: &B::V) -> B::V {
        let (lo, hi) = if self.f32() { (-160.0, 130.0) } else { (-1080.0, 1030.0) };
        let (xc, below) = self.clamp_flush(x, lo, hi);
        let m = self.c(self.shifter());
        let s = self.add(&xc, &m);
        let k = self.sub(&s, &m);
        let r = self.sub(&xc, &k);
        let ln2 = self.c(std::f64::consts::LN_2);
        let t = self.mul(&r, &ln2);
        let (_, s2, q) = self.exp_core(&t);
        let one = self.c(1.0);
        let p = self.add(&q, &one);
        let k1 = self.k_of_shifted(&s);
        let k2 = self.k_of_shifted(&s2);
        let ki = self.b.ibin(IBin::Add, &k1, &k2);
        let y = self.scale(&p, &ki);
        let y = self.zero_below(&below, &y);
        self.keep_nan(x, &y)
    }

    /// e^a / 2 for a >= 0 up to the cosh/sinh clamp: the exp kernel's 2^k scale lowered by
    /// one (no overflow before e^a / 2 does, and the halving is exact).
    fn half_exp(&mut self, a: &B::V) -> B::V {
        let hi = if self.f32() { 90.0 } else { 711.0 };
        let ac = self.clamp(a, 0.0, hi);
        let (_, s, q) = self.exp_core(&ac);
        let one = self.c(1.0);
        let p = self.add(&q, &one);
        let ki = self.k_of_shifted(&s);
        let i1 = self.i(1);
        let ki = self.b.ibin(IBin::Sub, &ki, &i1);
        self.scale(&p, &ki)
    }

    /// `y` (computed for |x|, +0 at 0) with x's sign (so -0 gives -0), NaN for NaN.
    fn odd(&mut self, x: &B::V, y: &B::V) -> B::V {
        let y = self.b.copysign(y, x);
        self.keep_nan(x, &y)
    }

    /// cosh(x) = h + 1/(4h) with h = e^|x| / 2 ([`Self::half_exp`]).
    fn cosh(&mut self, x: &B::V) -> B::V {
        let a = self.b.fun(FUn::Abs, x);
        let h = self.half_exp(&a);
        let q = self.c(0.25);
        let r = self.div(&q, &h);
        let y = self.add(&h, &r);
        self.keep_nan(x, &y)
    }

    /// sinh(x): for |x| < 1, (t + t / (t + 1)) / 2 with t = expm1(|x|) (no cancellation);
    /// above, h - 1/(4h) with h = e^|x| / 2; x's sign.
    fn sinh(&mut self, x: &B::V) -> B::V {
        let a = self.b.fun(FUn::Abs, x);
        let one = self.c(1.0);
        let small_a = self.clamp(&a, 0.0, 1.0);
        let t = self.expm1(&small_a);
        let t1 = self.add(&t, &one);
        let f = self.div(&t, &t1);
        let half = self.c(0.5);
        let ts = self.add(&t, &f);
        let small = self.mul(&ts, &half);
        let h = self.half_exp(&a);
        let q = self.c(0.25);
        let r = self.div(&q, &h);
        let large = self.sub(&h, &r);
        let is_small = self.cmp(FCmp::Olt, &a, &one);
        let y = self.sel(&is_small, &small, &large);
        self.odd(x, &y)
    }

    /// asinh(x) = log1p(a + a^2 / (1 + sqrt(1 + a^2))) for a = |x| (no cancellation), and
    /// log(a) + ln 2 from 2^12 (f32) / 2^28 (f64), where 1 / (4 a^2) is below half an ulp; x's
    /// sign.
    fn asinh(&mut self, x: &B::V) -> B::V {
        let a = self.b.fun(FUn::Abs, x);
        let one = self.c(1.0);
        let a2 = self.mul(&a, &a);
        let r = self.add(&a2, &one);
        let sq = self.b.fun(FUn::Sqrt, &r);
        let den = self.add(&sq, &one);
        let f = self.div(&a2, &den);
        let arg = self.add(&a, &f);
        let small = self.log1p(&arg);
        let la = self.log(&a);
        let ln2 = self.c(std::f64::consts::LN_2);
        let large = self.add(&la, &ln2);
        let big = self.c(if self.f32() { 4096.0 } else { 268435456.0 });
        let is_big = self.cmp(FCmp::Ogt, &a, &big);
        let y = self.sel(&is_big, &large, &small);
        self.odd(x, &y)
    }

    /// atanh(x) = log1p(2a / (1 - a)) / 2 for a = |x|: 1 -> inf, above 1 -> NaN; x's sign.
    fn atanh(&mut self, x: &B::V) -> B::V {
        let a = self.b.fun(FUn::Abs, x);
        let one = self.c(1.0);
        let two_a = self.add(&a, &a);
        let den = self.sub(&one, &a);
        let arg = self.div(&two_a, &den);
        let l = self.log1p(&arg);
        let half = self.c(0.5);
        let y = self.mul(&l, &half);
        // Above 1 the ratio is below -1 except past 1/eps, where it rounds to -2: NaN there too.
        let above = self.cmp(FCmp::Ogt, &a, &one);
        let nan = self.c(f64::NAN);
        let y = self.sel(&above, &nan, &y);
        self.odd(x, &y)
    }

    fn tanh(&mut self, x: &B::V) -> B::V {
        if self.f32() {
            // One rational on the clamped x (no branch, one division): 217 -> 130 us per 1e6 on
            // Zen 4 against the two-branch form below (JAX 180).
            let xc = self.clamp(x, -9.0, 9.0);
            let z = self.mul(&xc, &xc);
            let p = self.poly(&z, &TANH_P_F32);
            let q = self.poly(&z, &TANH_Q_F32);
            let r = self.div(&p, &q);
            let y = self.mul(&xc, &r);
            return self.keep_nan(x, &y);
        }
        // f64: t / (t + 2), t = expm1(2a) on a = |x| clamped to 20 (tanh(20) rounds to 1),
        // for every a: expm1 from exp's core is exact-scaled (k = 0 below a = 0.17 gives the
        // core's r + r^2 P(r) itself, k >= 1 has no cancellation), so no separate small-a
        // polynomial (its branch cost every element a second polynomial: 697 -> see
        // docs/performance.md per 1e6 on Zen 4, JAX 482).
        let clamp = 20.0;
        let a = self.b.fun(FUn::Abs, x);
        let cl = self.c(clamp);
        let above = self.cmp(FCmp::Ogt, &a, &cl);
        let ac = self.sel(&above, &cl, &a);
        let two = self.c(2.0);
        let a2 = self.mul(&ac, &two);
        let (_, sh, qe) = self.exp_core(&a2);
        let s = self.pow2_of_shifted(&sh);
        let one = self.c(1.0);
        let sm1 = self.sub(&s, &one);
        let em1 = self.fma(&s, &qe, &sm1);
        let den = self.add(&em1, &two);
        let y = self.div(&em1, &den);
        let y = self.b.copysign(&y, x);
        self.keep_nan(x, &y)
    }

    /// 1/(1 + exp(-x)) for x >= 0, e/(1 + e) with e = exp(x) for x < 0 (no cancellation).
    fn logistic(&mut self, x: &B::V) -> B::V {
        let a = self.b.fun(FUn::Abs, x);
        let na = self.neg(&a);
        let e = self.exp(&na);
        let one = self.c(1.0);
        let s = self.add(&one, &e);
        let zero = self.c(0.0);
        let neg = self.cmp(FCmp::Olt, x, &zero);
        let num = self.sel(&neg, &e, &one);
        let y = self.div(&num, &s);
        self.keep_nan(x, &y)
    }

    /// f32 erf: x P(x^2) / Q(x^2) on |x| <= 4 (ERF_P_F32 / ERF_Q_F32), the argument clamped
    /// there (erf rounds to 1 from 3.92 on), the sign by copysign.
    /// f32 erfc: 1 - erf(x) below 0.5 (at most 1.52, no cancellation), else exp(-x^2) P(x)/Q(x)
    /// with x^2 = hi + lo split exactly (fma) and exp(-x^2) = exp(-hi)(1 - lo). libm's scalar
    /// erfc was 3.0 ms per 1e6 on Zen 4 (JAX 0.5; `jax.scipy.stats.norm.cdf` is erfc).
    fn erfc(&mut self, x: &B::V) -> B::V {
        let one = self.c(1.0);
        let e = self.erf(x);
        let small = self.sub(&one, &e);
        let xc = self.clamp(x, 0.5, 10.5);
        let hi = self.mul(&xc, &xc);
        let nhi = self.neg(&hi);
        let lo = self.fma(&xc, &xc, &nhi);
        let ex = self.exp(&nhi);
        let keep = self.sub(&one, &lo);
        let ex = self.mul(&ex, &keep);
        let p = self.poly(&xc, &ERFC_P_F32);
        let q = self.poly(&xc, &ERFC_Q_F32);
        let r = self.div(&p, &q);
        let large = self.mul(&ex, &r);
        let half = self.c(0.5);
        let below = self.cmp(FCmp::Olt, x, &half);
        let y = self.sel(&below, &small, &large);
        self.keep_nan(x, &y)
    }

    fn erf(&mut self, x: &B::V) -> B::V {
        let a = self.b.fun(FUn::Abs, x);
        let ac = self.clamp(&a, 0.0, 4.0);
        let z = self.mul(&ac, &ac);
        let p = self.poly(&z, &ERF_P_F32);
        let q = self.poly(&z, &ERF_Q_F32);
        let pa = self.mul(&ac, &p);
        let y = self.div(&pa, &q);
        let y = self.b.copysign(&y, x);
        self.keep_nan(x, &y)
    }

    /// f32 x^y: exp(y log|x|) with the f64 kernels, rounded once to f32 (their relative
    /// error, a few 1e-16 times |y log|x|| <= 104 for every result that neither overflows nor
    /// underflows, is far under half an f32 ulp), then C99 pow's special cases: a negative
    /// base (or -0, -inf) with an odd integer y gives the negated result, a finite negative
    /// base with a non-integer y NaN, y = 0 and x = 1 give 1 (also against NaN), |x| = 1
    /// with y = +-inf 1; NaNs otherwise propagate through the log and the product.
    fn powf(&mut self, x: &B::V, y: &B::V) -> B::V {
        let mut w = K { b: &mut *self.b, d: DType::F64 };
        let xd = w.b.cast(Cast::ExtF, x, DType::F64);
        let yd = w.b.cast(Cast::ExtF, y, DType::F64);
        let ax = w.b.fun(FUn::Abs, &xd);
        let l = w.log(&ax);
        let t = w.mul(&yd, &l);
        let r = w.exp(&t);
        // y's parity (+-inf and NaN are not odd integers): an integer whose half is not one.
        let yr = w.b.fun(FUn::RoundEven, &yd);
        let is_int = w.cmp(FCmp::Oeq, &yr, &yd);
        let half = w.c(0.5);
        let yh = w.mul(&yd, &half);
        let yhr = w.b.fun(FUn::RoundEven, &yh);
        let above = w.cmp(FCmp::Ogt, &yhr, &yh);
        let under = w.cmp(FCmp::Olt, &yhr, &yh);
        let half_frac = w.or(&above, &under);
        let odd = w.and(&is_int, &half_frac);
        // The base's sign bit (-0 and -inf included) flips the result of an odd y.
        let one = w.c(1.0);
        let sign = w.b.copysign(&one, &xd);
        let zero = w.c(0.0);
        let neg = w.cmp(FCmp::Olt, &sign, &zero);
        let flip = w.and(&neg, &odd);
        let nr = w.neg(&r);
        let r = w.sel(&flip, &nr, &r);
        // A finite negative base with a non-integer exponent: NaN.
        let ninf = w.c(f64::NEG_INFINITY);
        let below = w.cmp(FCmp::Olt, &xd, &zero);
        let finite = w.cmp(FCmp::Ogt, &xd, &ninf);
        let neg_finite = w.and(&below, &finite);
        let nan = w.c(f64::NAN);
        let nan_or_r = w.sel(&neg_finite, &nan, &r);
        let r = w.sel(&is_int, &r, &nan_or_r);
        // y = 0, x = 1, or |x| = 1 with an infinite y: 1.
        let y0 = w.cmp(FCmp::Oeq, &yd, &zero);
        let x1 = w.cmp(FCmp::Oeq, &xd, &one);
        let ax1 = w.cmp(FCmp::Oeq, &ax, &one);
        let inf = w.c(f64::INFINITY);
        let ay = w.b.fun(FUn::Abs, &yd);
        let yinf = w.cmp(FCmp::Oeq, &ay, &inf);
        let unit_inf = w.and(&ax1, &yinf);
        let r = w.sel(&y0, &one, &r);
        let r = w.sel(&x1, &one, &r);
        let r = w.sel(&unit_inf, &one, &r);
        w.b.cast(Cast::TruncF, &r, DType::F32)
    }

    /// f32 atan2(y, x) computed in f64 and rounded once (a libm call per element before, not
    /// vectorized: 24 ns, twice JAX's time). The smaller of |x|, |y| over the larger, a, is
    /// in [0, 1]; above tan(pi/8) atan(a) = pi/4 + atan((a - 1) / (a + 1)), and on
    /// [-tan(pi/8), tan(pi/8)] atan(t) = t + t^3 P(t^2), P a degree-5 least-squares fit
    /// (relative error 7e-11: the f32 result is within an ulp). Then pi/2 - r when |y| >
    /// |x|, pi - r when x's sign bit is set, and y's sign: C99's cases follow (atan2(+-0,
    /// -0) = +-pi, atan2(+-inf, -inf) = +-3pi/4, ...); NaN in, NaN out.
    fn atan2f(&mut self, y: &B::V, x: &B::V) -> B::V {
        let mut w = K { b: &mut *self.b, d: DType::F64 };
        let yd = w.b.cast(Cast::ExtF, y, DType::F64);
        let xd = w.b.cast(Cast::ExtF, x, DType::F64);
        let ay = w.b.fun(FUn::Abs, &yd);
        let ax = w.b.fun(FUn::Abs, &xd);
        let swap = w.cmp(FCmp::Ogt, &ay, &ax);
        let big = w.sel(&swap, &ay, &ax);
        let small = w.sel(&swap, &ax, &ay);
        let a = w.div(&small, &big);
        // 0 / 0 (both zero) is 0; inf / inf (both infinite) is 1.
        let zero = w.c(0.0);
        let one = w.c(1.0);
        let inf = w.c(f64::INFINITY);
        let big0 = w.cmp(FCmp::Oeq, &big, &zero);
        let a = w.sel(&big0, &zero, &a);
        let small_inf = w.cmp(FCmp::Oeq, &small, &inf);
        let a = w.sel(&small_inf, &one, &a);
        let tan_pi_8 = w.c(std::f64::consts::FRAC_PI_8.tan());
        let hi = w.cmp(FCmp::Ogt, &a, &tan_pi_8);
        let am = w.sub(&a, &one);
        let ap = w.add(&a, &one);
        let q = w.div(&am, &ap);
        let t = w.sel(&hi, &q, &a);
        let z = w.mul(&t, &t);
        let at = w.odd_poly(&t, &z, &ATAN_P);
        let quarter = w.c(std::f64::consts::FRAC_PI_4);
        let shifted = w.add(&quarter, &at);
        let r = w.sel(&hi, &shifted, &at);
        let half_pi = w.c(std::f64::consts::FRAC_PI_2);
        let comp = w.sub(&half_pi, &r);
        let r = w.sel(&swap, &comp, &r);
        // x's sign bit (-0 included): the other half-plane.
        let sx = w.b.copysign(&one, &xd);
        let negx = w.cmp(FCmp::Olt, &sx, &zero);
        let pi = w.c(std::f64::consts::PI);
        let back = w.sub(&pi, &r);
        let r = w.sel(&negx, &back, &r);
        let r = w.b.copysign(&r, &yd);
        let nan = w.cmp(FCmp::Uno, &xd, &yd);
        let both = w.add(&xd, &yd);
        let r = w.sel(&nan, &both, &r);
        w.b.cast(Cast::TruncF, &r, DType::F32)
    }

    /// Horner with one fma per step over coefficients highest degree first.
    fn horner_desc(&mut self, z: &B::V, c: &[f64]) -> B::V {
        let mut p = self.c(c[0]);
        for &ci in &c[1..] {
            let k = self.c(ci);
            p = self.fma(&p, z, &k);
        }
        p
    }

    /// f32 log as Cephes/XLA's CPU backend compute it (for x >= 0; used by log1p_xla).
    fn logf_cephes(&mut self, x: &B::V) -> B::V {
        let mn = self.c(f32::MIN_POSITIVE as f64);
        let below = self.cmp(FCmp::Olt, x, &mn);
        let xc = self.sel(&below, &mn, x);
        // x = 2^e m, m in [1/2, 1).
        let bits = self.b.cast(Cast::Bitcast, &xc, DType::I32);
        let sh = self.i(23);
        let eb = self.b.ibin(IBin::ShrS, &bits, &sh);
        let bias = self.i(126);
        let e = self.b.ibin(IBin::Sub, &eb, &bias);
        let mask = self.i(0x007f_ffff);
        let mb = self.b.ibin(IBin::And, &bits, &mask);
        let half = self.i(0x3f00_0000);
        let mb = self.b.ibin(IBin::Or, &mb, &half);
        let m = self.b.cast(Cast::Bitcast, &mb, DType::F32);
        let e = self.b.cast(Cast::SiToFp, &e, DType::F32);
        // m < sqrt(1/2): e -= 1, f = 2m - 1; else f = m - 1.
        let sqrthf = self.c(std::f64::consts::FRAC_1_SQRT_2);
        let lt = self.cmp(FCmp::Olt, &m, &sqrthf);
        let zero = self.c(0.0);
        let one = self.c(1.0);
        let tmp = self.sel(&lt, &m, &zero);
        let dec = self.sel(&lt, &one, &zero);
        let f = self.sub(&m, &one);
        let e = self.sub(&e, &dec);
        let f = self.add(&f, &tmp);
        let f2 = self.mul(&f, &f);
        let f3 = self.mul(&f2, &f);
        let p = LOGF_CEPHES.map(|v| self.c(v));
        let y = self.fma(&p[0], &f, &p[1]);
        let y1 = self.fma(&p[3], &f, &p[4]);
        let y2 = self.fma(&p[6], &f, &p[7]);
        let y = self.fma(&y, &f, &p[2]);
        let y1 = self.fma(&y1, &f, &p[5]);
        let y2 = self.fma(&y2, &f, &p[8]);
        let y = self.fma(&y, &f3, &y1);
        let y = self.fma(&y, &f3, &y2);
        // y f^3 + e ln2_lo: XLA's CPU code contracts the product and the sum into one fma.
        let q2 = self.c(LOGF_CEPHES_LN2.1);
        let eq2 = self.mul(&e, &q2);
        let y = self.fma(&y, &f3, &eq2);
        let hc = self.c(0.5);
        let h = self.mul(&f2, &hc);
        let r = self.sub(&f, &h);
        let r = self.add(&r, &y);
        let q1 = self.c(LOGF_CEPHES_LN2.0);
        let eq1 = self.mul(&e, &q1);
        let r = self.add(&r, &eq1);
        // 0 -> -inf, negative -> NaN, +inf -> +inf, NaN -> NaN.
        let ninf = self.c(f64::NEG_INFINITY);
        let is_zero = self.cmp(FCmp::Oeq, x, &zero);
        let r = self.sel(&is_zero, &ninf, &r);
        let nan = self.c(f64::NAN);
        let neg = self.cmp(FCmp::Olt, x, &zero);
        let r = self.sel(&neg, &nan, &r);
        let inf = self.c(f64::INFINITY);
        let is_inf = self.cmp(FCmp::Oeq, x, &inf);
        let r = self.sel(&is_inf, &inf, &r);
        self.keep_nan(x, &r)
    }

    /// log1p as XLA's CPU backend computes it (LOG1P_XLA_*): the large branch is the libm log
    /// (f64) or the Cephes log (f32) of 1 + x.
    fn log1p_xla(&mut self, x: &B::V) -> B::V {
        let one = self.c(1.0);
        let xp1 = self.add(x, &one);
        let large = if self.f32() { self.logf_cephes(&xp1) } else { self.b.fun(FUn::LibmLog, &xp1) };
        let x2 = self.mul(x, x);
        let num = self.horner_desc(x, &LOG1P_XLA_NUM);
        let den = self.horner_desc(x, &LOG1P_XLA_DEN);
        let r = self.div(&num, &den);
        let x3 = self.mul(x, &x2);
        let r = self.mul(&x3, &r);
        let mh = self.c(-0.5);
        let r = self.fma(&mh, &x2, &r);
        let small = self.add(x, &r);
        let a = self.b.fun(FUn::Abs, x);
        let lim = self.c(LOG1P_XLA_SMALL);
        let is_small = self.cmp(FCmp::Olt, &a, &lim);
        self.sel(&is_small, &small, &large)
    }

    /// erf_inv as XLA computes it (ERFINV_F32 / ERFINV_F64): bitwise what JAX gives.
    fn erf_inv(&mut self, x: &B::V) -> B::V {
        let branches: &[ErfInvBranch] = if self.f32() { &ERFINV_F32 } else { &ERFINV_F64 };
        let nx = self.neg(x);
        let xx = self.mul(x, &nx);
        let l = self.log1p_xla(&xx);
        let w = self.neg(&l);
        let sw = self.b.fun(FUn::Sqrt, &w);
        // in[i]: w < bound of branch i (the last branch takes the rest).
        let ins: Vec<B::V> = branches[..branches.len() - 1]
            .iter()
            .map(|br| {
                let b = self.c(br.bound);
                self.cmp(FCmp::Olt, &w, &b)
            })
            .collect();
        // The value of the branch that applies: v[0] if in[0], else v[1] if in[1], ..., else v[last].
        let pick = |k: &mut Self, vals: Vec<B::V>| -> B::V {
            let mut r = vals[vals.len() - 1].clone();
            for i in (0..vals.len() - 1).rev() {
                r = k.sel(&ins[i], &vals[i], &r);
            }
            r
        };
        let ts: Vec<B::V> = branches
            .iter()
            .map(|br| {
                let s = self.c(br.shift);
                self.sub(if br.sqrt { &sw } else { &w }, &s)
            })
            .collect();
        let t = pick(self, ts);
        let n = branches.iter().map(|br| br.coeffs.len()).max().unwrap_or(0);
        // Coefficient j of branch br, counting from the highest degree of the longest.
        let coeff = |br: &ErfInvBranch, j: usize| if j + br.coeffs.len() < n { 0.0 } else { br.coeffs[j + br.coeffs.len() - n] };
        let mut p: Option<B::V> = None;
        for j in 0..n {
            let cs: Vec<B::V> = branches.iter().map(|br| self.c(coeff(br, j))).collect();
            let c = pick(self, cs);
            p = Some(match p {
                None => c,
                Some(p) => self.fma(&p, &t, &c),
            });
        }
        let r = self.mul(&p.expect("a polynomial"), x);
        let a = self.b.fun(FUn::Abs, x);
        let one = self.c(1.0);
        let at1 = self.cmp(FCmp::Oeq, &a, &one);
        let inf = self.c(f64::INFINITY);
        let xinf = self.mul(x, &inf);
        self.sel(&at1, &xinf, &r)
    }

    /// f32 sin (cos when `cos`), computed in f64.
    fn sincos(&mut self, x: &B::V, cos: bool) -> B::V {
        let a32 = self.b.fun(FUn::Abs, x);
        let mut w = K { b: &mut *self.b, d: DType::F64 };
        let a = w.b.cast(Cast::ExtF, &a32, DType::F64);
        // Small arguments: two-part Cody-Waite.
        let tpi = w.c(std::f64::consts::FRAC_2_PI);
        let t = w.mul(&a, &tpi);
        let k = w.b.fun(FUn::RoundEven, &t);
        let nk = w.neg(&k);
        let p1 = w.c(PIO2.0);
        let p2 = w.c(PIO2.1);
        let r = w.fma(&nk, &p1, &a);
        let r_small = w.fma(&nk, &p2, &r);
        let kc = w.clamp(&k, 0.0, 4194304.0);
        let q_small = w.b.cast(Cast::FpToSi, &kc, DType::I32);
        // Large arguments: a = M 2^E (M the 24-bit integer mantissa); (M * T(E)) mod 4.
        let bits = w.b.cast(Cast::Bitcast, &a32, DType::I32);
        let c23 = w.b.iconst(DType::I32, 23);
        let ex = w.b.ibin(IBin::ShrS, &bits, &c23);
        let off = w.b.iconst(DType::I32, 127 + 23 + PH_EMIN);
        let idx = w.b.ibin(IBin::Sub, &ex, &off);
        let i0 = w.b.iconst(DType::I32, 0);
        let imax = w.b.iconst(DType::I32, PH_EMAX - PH_EMIN);
        let idx = w.b.ibin(IBin::MaxS, &idx, &i0);
        let idx = w.b.ibin(IBin::MinS, &idx, &imax);
        let mmask = w.b.iconst(DType::I32, 0x007f_ffff);
        let hidden = w.b.iconst(DType::I32, 0x0080_0000);
        let mi = w.b.ibin(IBin::And, &bits, &mmask);
        let mi = w.b.ibin(IBin::Or, &mi, &hidden);
        let m = w.b.cast(Cast::SiToFp, &mi, DType::F64);
        let table = payne_hanek_table();
        let n = table.len() / 3;
        let i1 = w.b.iconst(DType::I32, n as i64);
        let i2 = w.b.iconst(DType::I32, 2 * n as i64);
        let j1 = w.b.ibin(IBin::Add, &idx, &i1);
        let j2 = w.b.ibin(IBin::Add, &idx, &i2);
        let t0 = w.b.lookup(&table, &idx);
        let t1 = w.b.lookup(&table, &j1);
        let t2 = w.b.lookup(&table, &j2);
        let u = w.mul(&m, &t0); // exact
        let quarter = w.c(0.25);
        let four = w.c(4.0);
        let uq = w.mul(&u, &quarter);
        let uk = w.b.fun(FUn::RoundEven, &uq);
        let nuk = w.neg(&uk);
        let u0 = w.fma(&nuk, &four, &u); // u mod 4, exact
        let v = w.mul(&m, &t1); // exact
        let s = w.add(&u0, &v);
        let kq = w.b.fun(FUn::RoundEven, &s);
        let f = w.sub(&u0, &kq); // exact
        let f = w.add(&f, &v); // exact (|f| <= 1, multiple of 2^-52)
        let g = w.mul(&m, &t2);
        let f = w.add(&f, &g);
        let pio2 = w.c(std::f64::consts::FRAC_PI_2);
        let r_big = w.mul(&f, &pio2);
        let q_big = w.b.cast(Cast::FpToSi, &kq, DType::I32);
        let lim = w.c(SINCOS_BIG);
        let big = w.cmp(FCmp::Oge, &a, &lim);
        let r = w.sel(&big, &r_big, &r_small);
        let q = w.b.select(&big, &q_big, &q_small);
        // Polynomials on |r| <= pi/4.
        let z = w.mul(&r, &r);
        let sn = w.odd_poly(&r, &z, &SIN_F32);
        let pc = w.poly(&z, &COS_F32);
        let z2 = w.mul(&z, &z);
        let mhalf = w.c(-0.5);
        let one = w.c(1.0);
        let c1 = w.fma(&z, &mhalf, &one);
        let cs = w.fma(&z2, &pc, &c1);
        // Quadrant: sin: s, c, -s, -c; cos: c, -s, -c, s.
        let q = if cos {
            let one = w.b.iconst(DType::I32, 1);
            w.b.ibin(IBin::Add, &q, &one)
        } else {
            q
        };
        let one_i = w.b.iconst(DType::I32, 1);
        let two_i = w.b.iconst(DType::I32, 2);
        let zero_i = w.b.iconst(DType::I32, 0);
        let odd = w.b.ibin(IBin::And, &q, &one_i);
        let odd = w.b.icmp(ICmp::Ne, &odd, &zero_i);
        let swap = w.sel(&odd, &cs, &sn);
        let hi = w.b.ibin(IBin::And, &q, &two_i);
        let ns = w.neg(&swap);
        let neg = w.b.icmp(ICmp::Ne, &hi, &zero_i);
        let y = w.sel(&neg, &ns, &swap);
        let y = w.b.cast(Cast::TruncF, &y, DType::F32);
        // sin is odd (sin(-0) = -0); inf and NaN give NaN.
        let y = if cos {
            y
        } else {
            let one = self.c(1.0);
            let sg = self.b.copysign(&one, x);
            self.mul(&y, &sg)
        };
        let inf = self.c(f64::INFINITY);
        let nan = self.c(f64::NAN);
        let finite = self.cmp(FCmp::Olt, &a32, &inf);
        self.sel(&finite, &y, &nan)
    }
}

/// A scalar evaluator of the kernels, operation by operation in IEEE arithmetic (what the
/// generated code computes for each element).
pub mod eval {
    use super::*;

    /// A typed scalar.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub enum Val {
        F32(f32),
        F64(f64),
        I1(bool),
        I32(i32),
        I64(i64),
    }

    /// The evaluator.
    pub struct Eval;

    fn f(v: &Val) -> f64 {
        match *v {
            Val::F32(x) => x as f64,
            Val::F64(x) => x,
            _ => panic!("float expected, got {v:?}"),
        }
    }
    fn i(v: &Val) -> i64 {
        match *v {
            Val::I32(x) => x as i64,
            Val::I64(x) => x,
            _ => panic!("integer expected, got {v:?}"),
        }
    }
    /// Applies a float op in the operands' precision.
    fn fl(a: &Val, g32: impl Fn(f32) -> f32, g64: impl Fn(f64) -> f64) -> Val {
        match *a {
            Val::F32(x) => Val::F32(g32(x)),
            Val::F64(x) => Val::F64(g64(x)),
            _ => panic!("float expected, got {a:?}"),
        }
    }
    fn fl2(a: &Val, b: &Val, g32: impl Fn(f32, f32) -> f32, g64: impl Fn(f64, f64) -> f64) -> Val {
        match (*a, *b) {
            (Val::F32(x), Val::F32(y)) => Val::F32(g32(x, y)),
            (Val::F64(x), Val::F64(y)) => Val::F64(g64(x, y)),
            _ => panic!("float operands of one type expected, got {a:?}, {b:?}"),
        }
    }
    fn int_like(a: &Val, v: i64) -> Val {
        match a {
            Val::I32(_) => Val::I32(v as i32),
            _ => Val::I64(v),
        }
    }

    impl Builder for Eval {
        type V = Val;
        fn fconst(&mut self, d: DType, v: f64) -> Val {
            if d == DType::F32 {
                Val::F32(v as f32)
            } else {
                Val::F64(v)
            }
        }
        fn iconst(&mut self, d: DType, v: i64) -> Val {
            if d == DType::I32 {
                Val::I32(v as i32)
            } else {
                Val::I64(v)
            }
        }
        fn fbin(&mut self, op: FBin, a: &Val, b: &Val) -> Val {
            match op {
                FBin::Add => fl2(a, b, |x, y| x + y, |x, y| x + y),
                FBin::Sub => fl2(a, b, |x, y| x - y, |x, y| x - y),
                FBin::Mul => fl2(a, b, |x, y| x * y, |x, y| x * y),
                FBin::Div => fl2(a, b, |x, y| x / y, |x, y| x / y),
            }
        }
        fn fun(&mut self, op: FUn, a: &Val) -> Val {
            match op {
                FUn::Neg => fl(a, |x| -x, |x| -x),
                FUn::Abs => fl(a, f32::abs, f64::abs),
                FUn::RoundEven => fl(a, f32::round_ties_even, f64::round_ties_even),
                FUn::Sqrt => fl(a, f32::sqrt, f64::sqrt),
                FUn::LibmLog => fl(a, f32::ln, f64::ln),
            }
        }
        fn fma(&mut self, a: &Val, b: &Val, c: &Val) -> Val {
            match (*a, *b, *c) {
                (Val::F32(x), Val::F32(y), Val::F32(z)) => Val::F32(x.mul_add(y, z)),
                (Val::F64(x), Val::F64(y), Val::F64(z)) => Val::F64(x.mul_add(y, z)),
                _ => panic!("fma operands of one float type expected"),
            }
        }
        fn copysign(&mut self, a: &Val, b: &Val) -> Val {
            fl2(a, b, f32::copysign, f64::copysign)
        }
        fn fcmp(&mut self, p: FCmp, a: &Val, b: &Val) -> Val {
            let (x, y) = (f(a), f(b));
            Val::I1(match p {
                FCmp::Olt => x < y,
                FCmp::Oge => x >= y,
                FCmp::Ogt => x > y,
                FCmp::Oeq => x == y,
                FCmp::Ult => x.is_nan() || y.is_nan() || x < y,
                FCmp::Uno => x.is_nan() || y.is_nan(),
            })
        }
        fn ibin(&mut self, op: IBin, a: &Val, b: &Val) -> Val {
            let (x, y) = (i(a), i(b));
            let w32 = matches!(a, Val::I32(_));
            let r = match op {
                IBin::Add => x.wrapping_add(y),
                IBin::Sub => x.wrapping_sub(y),
                IBin::And => x & y,
                IBin::Or => x | y,
                IBin::Shl => {
                    if w32 {
                        ((x as i32) << y) as i64
                    } else {
                        x << y
                    }
                }
                IBin::ShrS => x >> y,
                IBin::MaxS => x.max(y),
                IBin::MinS => x.min(y),
            };
            int_like(a, r)
        }
        fn icmp(&mut self, p: ICmp, a: &Val, b: &Val) -> Val {
            let (x, y) = (i(a), i(b));
            Val::I1(match p {
                ICmp::Eq => x == y,
                ICmp::Ne => x != y,
            })
        }
        fn select(&mut self, c: &Val, a: &Val, b: &Val) -> Val {
            match c {
                Val::I1(true) => *a,
                Val::I1(false) => *b,
                _ => panic!("i1 condition expected"),
            }
        }
        fn cast(&mut self, op: Cast, a: &Val, to: DType) -> Val {
            match (op, *a, to) {
                (Cast::Bitcast, Val::F32(x), DType::I32) => Val::I32(x.to_bits() as i32),
                (Cast::Bitcast, Val::F64(x), DType::I64) => Val::I64(x.to_bits() as i64),
                (Cast::Bitcast, Val::I32(x), DType::F32) => Val::F32(f32::from_bits(x as u32)),
                (Cast::Bitcast, Val::I64(x), DType::F64) => Val::F64(f64::from_bits(x as u64)),
                (Cast::FpToSi, v, DType::I32) => Val::I32(f(&v) as i32),
                (Cast::FpToSi, v, DType::I64) => Val::I64(f(&v) as i64),
                (Cast::SiToFp, v, DType::F32) => Val::F32(i(&v) as f32),
                (Cast::SiToFp, v, DType::F64) => Val::F64(i(&v) as f64),
                (Cast::ExtF, Val::F32(x), DType::F64) => Val::F64(x as f64),
                (Cast::TruncF, Val::F64(x), DType::F32) => Val::F32(x as f32),
                (op, v, to) => panic!("bad cast {op:?} of {v:?} to {to}"),
            }
        }
        fn lookup(&mut self, table: &[f64], index: &Val) -> Val {
            Val::F64(table[i(index) as usize])
        }
        /// Exact a 2^k rounded once: in f64 for f32 (a 2^k is exact there for the kernels'
        /// k), as two products (the first exact) for f64.
        fn ldexp(&mut self, a: &Val, k: &Val) -> Option<Val> {
            let k = i(k);
            let p2 = |e: i64| f64::from_bits(((e + 1023) as u64) << 52);
            Some(match *a {
                Val::F32(x) => Val::F32((x as f64 * p2(k)) as f32),
                Val::F64(x) => Val::F64(x * p2(k >> 1) * p2(k - (k >> 1))),
                _ => panic!("float expected, got {a:?}"),
            })
        }
    }

    /// The f32 kernel of `u` at `x`.
    pub fn f32(u: UnaryOp, x: f32) -> Option<f32> {
        match unary(&mut Eval, u, DType::F32, &Val::F32(x))? {
            Val::F32(y) => Some(y),
            v => panic!("f32 result expected, got {v:?}"),
        }
    }

    /// The f32 kernel of binary `op` at `(x, y)`.
    pub fn f32_binary(op: BinaryOp, x: f32, y: f32) -> Option<f32> {
        match binary(&mut Eval, op, DType::F32, &Val::F32(x), &Val::F32(y))? {
            Val::F32(r) => Some(r),
            v => panic!("f32 result expected, got {v:?}"),
        }
    }

    /// The f64 kernel of `u` at `x`.
    pub fn f64(u: UnaryOp, x: f64) -> Option<f64> {
        match unary(&mut Eval, u, DType::F64, &Val::F64(x))? {
            Val::F64(y) => Some(y),
            v => panic!("f64 result expected, got {v:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::eval;
    use super::*;

    /// Distance in units in the last place (0 for equal values and for two NaNs).
    pub fn ulps32(a: f32, b: f32) -> u64 {
        if a == b || (a.is_nan() && b.is_nan()) {
            return 0;
        }
        if a.is_nan() || b.is_nan() {
            return u64::MAX;
        }
        let key = |v: f32| {
            let i = v.to_bits() as i32;
            if i < 0 {
                i32::MIN.wrapping_sub(i) as i64
            } else {
                i as i64
            }
        };
        (key(a) - key(b)).unsigned_abs()
    }

    pub fn ulps64(a: f64, b: f64) -> u64 {
        if a == b || (a.is_nan() && b.is_nan()) {
            return 0;
        }
        if a.is_nan() || b.is_nan() {
            return u64::MAX;
        }
        let key = |v: f64| {
            let i = v.to_bits() as i64;
            if i < 0 {
                i64::MIN.wrapping_sub(i) as i128
            } else {
                i as i128
            }
        };
        (key(a) - key(b)).unsigned_abs() as u64
    }

    /// Deterministic sample points: uniform on [lo, hi], log-uniform magnitudes up to |hi|,
    /// and special values.
    pub fn points(lo: f64, hi: f64, n: usize) -> Vec<f64> {
        let mut s = 0x9E3779B97F4A7C15u64;
        let mut next = || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut v = vec![0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, lo, hi];
        for _ in 0..n / 2 {
            v.push(lo + (hi - lo) * next());
        }
        let m = lo.abs().max(hi.abs());
        for _ in 0..n / 2 {
            let mag = m * (2f64).powf(-60.0 * next());
            let x = if next() < 0.5 { -mag } else { mag };
            if x >= lo && x <= hi {
                v.push(x);
            }
        }
        v
    }

    /// logistic in f64 without cancellation.
    fn logistic64(x: f64) -> f64 {
        if x >= 0.0 {
            1.0 / (1.0 + (-x).exp())
        } else {
            let e = x.exp();
            e / (1.0 + e)
        }
    }

    /// atanh from |x| (odd), as accurate as ln_1p.
    fn atanh64(x: f64) -> f64 {
        let a = x.abs();
        (0.5 * (2.0 * a / (1.0 - a)).ln_1p()).copysign(x)
    }

    fn reference(u: UnaryOp, x: f64, f32: bool) -> f64 {
        let r = |y: f64| if f32 { y as f32 as f64 } else { y };
        if f32 {
            let x = x as f32;
            match u {
                UnaryOp::Exp => x.exp() as f64,
                UnaryOp::Expm1 => x.exp_m1() as f64,
                UnaryOp::Log => x.ln() as f64,
                UnaryOp::Log1p => x.ln_1p() as f64,
                // In f64, rounded once: std's f32 asinh overflows near f32::MAX, and its atanh
                // (both widths) cancels for x near -1 (it is not computed from |x|).
                UnaryOp::Exp2 => (x as f64).exp2() as f32 as f64,
                UnaryOp::Sinh => (x as f64).sinh() as f32 as f64,
                UnaryOp::Cosh => (x as f64).cosh() as f32 as f64,
                UnaryOp::Asinh => (x as f64).asinh() as f32 as f64,
                UnaryOp::Atanh => atanh64(x as f64) as f32 as f64,
                UnaryOp::Tanh => x.tanh() as f64,
                UnaryOp::Logistic => logistic64(x as f64) as f32 as f64,
                UnaryOp::Sin => x.sin() as f64,
                UnaryOp::Cos => x.cos() as f64,
                _ => f64::NAN,
            }
        } else {
            r(match u {
                UnaryOp::Exp => x.exp(),
                UnaryOp::Expm1 => x.exp_m1(),
                UnaryOp::Log => x.ln(),
                UnaryOp::Log1p => x.ln_1p(),
                UnaryOp::Exp2 => x.exp2(),
                UnaryOp::Sinh => x.sinh(),
                UnaryOp::Cosh => x.cosh(),
                UnaryOp::Asinh => x.asinh(),
                UnaryOp::Atanh => atanh64(x),
                UnaryOp::Tanh => x.tanh(),
                UnaryOp::Logistic => logistic64(x),
                _ => f64::NAN,
            })
        }
    }

    /// (op, lo, hi) sweeps; erf is checked against the interpreter in tests/rust/approx.rs.
    const SWEEPS: &[(UnaryOp, f64, f64)] = &[
        (UnaryOp::Exp, -800.0, 800.0),
        (UnaryOp::Exp, -1.0, 1.0),
        (UnaryOp::Expm1, -50.0, 800.0),
        (UnaryOp::Expm1, -1.0, 1.0),
        (UnaryOp::Log, 0.0, f64::MAX),
        (UnaryOp::Log, 0.0, 4.0),
        (UnaryOp::Log1p, -1.0, f64::MAX),
        (UnaryOp::Log1p, -0.9, 4.0),
        (UnaryOp::Log1p, -1e-6, 1e-6),
        (UnaryOp::Exp2, -1100.0, 1100.0),
        (UnaryOp::Exp2, -2.0, 2.0),
        (UnaryOp::Sinh, -800.0, 800.0),
        (UnaryOp::Sinh, -2.0, 2.0),
        (UnaryOp::Sinh, -1e-6, 1e-6),
        (UnaryOp::Cosh, -800.0, 800.0),
        (UnaryOp::Cosh, -2.0, 2.0),
        (UnaryOp::Asinh, -1e300, 1e300),
        (UnaryOp::Asinh, -10.0, 10.0),
        (UnaryOp::Asinh, -1e-6, 1e-6),
        (UnaryOp::Atanh, -1.0, 1.0),
        (UnaryOp::Atanh, -1e-6, 1e-6),
        (UnaryOp::Tanh, -30.0, 30.0),
        (UnaryOp::Tanh, -1.0, 1.0),
        (UnaryOp::Logistic, -800.0, 800.0),
        (UnaryOp::Logistic, -20.0, 20.0),
        (UnaryOp::Sin, -1e38, 1e38),
        (UnaryOp::Sin, -1e6, 1e6),
        (UnaryOp::Sin, -10.0, 10.0),
        (UnaryOp::Cos, -1e38, 1e38),
        (UnaryOp::Cos, -1e6, 1e6),
        (UnaryOp::Cos, -10.0, 10.0),
    ];

    fn bound(u: UnaryOp, d: DType) -> u64 {
        BOUNDS.iter().find(|b| b.0 == u && b.1 == d).map(|b| b.2).expect("a bound per kernel")
    }

    #[test]
    fn kernels_within_bounds() {
        let mut report = String::new();
        let mut failed = false;
        for &(u, lo, hi) in SWEEPS {
            for d in [DType::F32, DType::F64] {
                if !supported(u, d) {
                    continue;
                }
                let (lo, hi) = if d == DType::F32 { (lo.max(f32::MIN as f64), hi.min(f32::MAX as f64)) } else { (lo, hi) };
                let mut worst = (0u64, 0.0f64);
                for x in points(lo, hi, 60_000) {
                    let (got, want, e) = if d == DType::F32 {
                        let x = x as f32;
                        let g = eval::f32(u, x).unwrap() as f64;
                        let w = reference(u, x as f64, true);
                        (g, w, ulps32(g as f32, w as f32))
                    } else {
                        let g = eval::f64(u, x).unwrap();
                        let w = reference(u, x, false);
                        (g, w, ulps64(g, w))
                    };
                    let _ = (got, want);
                    if e > worst.0 {
                        worst = (e, x);
                    }
                }
                let b = bound(u, d);
                report += &format!("{} {d} [{lo:e}, {hi:e}]: max {} ulps at {:e} (bound {b})\n", u.name(), worst.0, worst.1);
                failed |= worst.0 > b;
            }
        }
        println!("{report}");
        assert!(!failed, "accuracy bound exceeded:\n{report}");
    }
}
