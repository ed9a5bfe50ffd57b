//! Scalar formulas of the elementwise special functions `lgamma`, `digamma` and `erf_inv`
//! (no `math` op exists for them). Each is computed in f64 (an f32 operand is widened and the
//! result rounded) by the same algorithm as the interpreter (interp/src/special.rs, where the
//! method is described): reflection below 1/2, a shift by 8 below 8.5 and an asymptotic
//! series for lgamma/digamma; Winitzki's guess and three Halley steps on erf/erfc for erf_inv.
use quabla_dialect::DType;

use super::{float_lit, Emitter};

/// Stirling's correction coefficients B_2k / (2k (2k-1)), k = 1..8.
const STIRLING: [f64; 8] = [1.0 / 12.0, -1.0 / 360.0, 1.0 / 1260.0, -1.0 / 1680.0, 1.0 / 1188.0, -691.0 / 360360.0, 1.0 / 156.0, -3617.0 / 122400.0];
/// Digamma's asymptotic coefficients B_2k / (2k), k = 1..7.
const DIGAMMA: [f64; 7] = [1.0 / 12.0, -1.0 / 120.0, 1.0 / 252.0, -1.0 / 240.0, 1.0 / 132.0, -691.0 / 32760.0, 1.0 / 12.0];
const HALF_LN_2PI: f64 = 0.918_938_533_204_672_7;
const WINITZKI_A: f64 = 0.147;
const PI: f64 = std::f64::consts::PI;

/// f64 scalar builder over an Emitter.
struct F<'a> {
    e: &'a mut Emitter,
}

impl F<'_> {
    fn c(&mut self, v: f64) -> String {
        self.e.scalar(DType::F64, &float_lit(DType::F64, v))
    }
    fn bin(&mut self, op: &str, a: &str, b: &str) -> String {
        self.e.op(format!("arith.{op} {a}, {b} : f64"))
    }
    fn add(&mut self, a: &str, b: &str) -> String {
        self.bin("addf", a, b)
    }
    fn sub(&mut self, a: &str, b: &str) -> String {
        self.bin("subf", a, b)
    }
    fn mul(&mut self, a: &str, b: &str) -> String {
        self.bin("mulf", a, b)
    }
    fn div(&mut self, a: &str, b: &str) -> String {
        self.bin("divf", a, b)
    }
    fn math(&mut self, name: &str, a: &str) -> String {
        self.e.op(format!("math.{name} {a} : f64"))
    }
    fn cmp(&mut self, p: &str, a: &str, b: &str) -> String {
        self.e.op(format!("arith.cmpf {p}, {a}, {b} : f64"))
    }
    fn sel(&mut self, c: &str, a: &str, b: &str) -> String {
        self.e.op(format!("arith.select {c}, {a}, {b} : f64"))
    }
    /// sum c[k] u^k by Horner's rule (highest first), as the interpreter's `horner`.
    fn horner(&mut self, c: &[f64], u: &str) -> String {
        let mut acc = self.c(0.0);
        for &ck in c.iter().rev() {
            let m = self.mul(&acc, u);
            let k = self.c(ck);
            acc = self.add(&m, &k);
        }
        acc
    }
    /// x - roundeven(x).
    fn frac_near(&mut self, x: &str) -> String {
        let r = self.math("roundeven", x);
        self.sub(x, &r)
    }
    /// (small, ws, z) of the shift by 8: small = w < 8.5, ws = small ? w : 8.5, z = small ? w+8 : w.
    fn shift(&mut self, w: &str) -> (String, String, String) {
        let lim = self.c(8.5);
        let small = self.cmp("olt", w, &lim);
        let ws = self.sel(&small, w, &lim);
        let eight = self.c(8.0);
        let w8 = self.add(w, &eight);
        let z = self.sel(&small, &w8, w);
        (small, ws, z)
    }
    fn lgamma_pos(&mut self, w: &str) -> String {
        let (small, ws, z) = self.shift(w);
        let mut p = ws.clone();
        for k in 1..8 {
            let kk = self.c(k as f64);
            let t = self.add(&ws, &kk);
            p = self.mul(&p, &t);
        }
        let lp = self.math("log", &p);
        let zero = self.c(0.0);
        let corr = self.sel(&small, &lp, &zero);
        let zz = self.mul(&z, &z);
        let one = self.c(1.0);
        let u = self.div(&one, &zz);
        let h = self.horner(&STIRLING, &u);
        let s = self.div(&h, &z);
        let half = self.c(0.5);
        let zh = self.sub(&z, &half);
        let lz = self.math("log", &z);
        let a = self.mul(&zh, &lz);
        let b = self.sub(&a, &z);
        let hl = self.c(HALF_LN_2PI);
        let c = self.add(&b, &hl);
        let d = self.add(&c, &s);
        self.sub(&d, &corr)
    }
    fn digamma_pos(&mut self, w: &str) -> String {
        let (small, ws, z) = self.shift(w);
        let mut acc = self.c(0.0);
        let one = self.c(1.0);
        for k in 0..8 {
            let kk = self.c(k as f64);
            let t = self.add(&ws, &kk);
            let r = self.div(&one, &t);
            acc = self.add(&acc, &r);
        }
        let zero = self.c(0.0);
        let corr = self.sel(&small, &acc, &zero);
        let zz = self.mul(&z, &z);
        let u = self.div(&one, &zz);
        let h = self.horner(&DIGAMMA, &u);
        let t = self.mul(&u, &h);
        let lz = self.math("log", &z);
        let half = self.c(0.5);
        let hz = self.div(&half, &z);
        let a = self.sub(&lz, &hz);
        let b = self.sub(&a, &t);
        self.sub(&b, &corr)
    }
    /// Non-positive integer test: x <= 0 and floor(x) == x.
    fn pole(&mut self, x: &str) -> String {
        let zero = self.c(0.0);
        let le = self.cmp("ole", x, &zero);
        let fl = self.math("floor", x);
        let int = self.cmp("oeq", &fl, x);
        self.e.op(format!("arith.andi {le}, {int} : i1"))
    }
    /// (x < 1/2, 1 - x when x < 1/2 else x): the reflected argument, always >= 1/2.
    fn reflect(&mut self, x: &str) -> (String, String) {
        let half = self.c(0.5);
        let lt = self.cmp("olt", x, &half);
        let one = self.c(1.0);
        let om = self.sub(&one, x);
        let w = self.sel(&lt, &om, x);
        (lt, w)
    }
    fn lgamma(&mut self, x: &str) -> String {
        let (lt, w) = self.reflect(x);
        let g = self.lgamma_pos(&w);
        let pi = self.c(PI);
        let fr = self.frac_near(x);
        let px = self.mul(&pi, &fr);
        let s = self.math("sin", &px);
        let sa = self.math("absf", &s);
        let q = self.div(&pi, &sa);
        let lq = self.math("log", &q);
        let refl = self.sub(&lq, &g);
        let r = self.sel(&lt, &refl, &g);
        let inf = self.c(f64::INFINITY);
        let ax = self.math("absf", x);
        let isinf = self.cmp("oeq", &ax, &inf);
        let pole = self.pole(x);
        let bad = self.e.op(format!("arith.ori {isinf}, {pole} : i1"));
        self.sel(&bad, &inf, &r)
    }
    fn digamma(&mut self, x: &str) -> String {
        let (lt, w) = self.reflect(x);
        let g = self.digamma_pos(&w);
        let pi = self.c(PI);
        let fr = self.frac_near(x);
        let px = self.mul(&pi, &fr);
        let t = self.math("tan", &px);
        let q = self.div(&pi, &t);
        let refl = self.sub(&g, &q);
        let r = self.sel(&lt, &refl, &g);
        let nan = self.c(f64::NAN);
        let pole = self.pole(x);
        let ninf = self.c(f64::NEG_INFINITY);
        let isninf = self.cmp("oeq", x, &ninf);
        let bad = self.e.op(format!("arith.ori {pole}, {isninf} : i1"));
        let r = self.sel(&bad, &nan, &r);
        let inf = self.c(f64::INFINITY);
        let ispinf = self.cmp("oeq", x, &inf);
        self.sel(&ispinf, &inf, &r)
    }
    fn erf_inv(&mut self, y: &str) -> String {
        let t = self.math("absf", y);
        let one = self.c(1.0);
        let omt = self.sub(&one, &t);
        let opt = self.add(&one, &t);
        let pr = self.mul(&omt, &opt);
        let l = self.math("log", &pr);
        let half = self.c(0.5);
        let c0 = self.c(2.0 / (PI * WINITZKI_A));
        let hl = self.mul(&half, &l);
        let b = self.add(&c0, &hl);
        let bb = self.mul(&b, &b);
        let a = self.c(WINITZKI_A);
        let la = self.div(&l, &a);
        let disc = self.sub(&bb, &la);
        let sq = self.math("sqrt", &disc);
        let inner = self.sub(&sq, &b);
        let mut x = self.math("sqrt", &inner);
        let tail = self.cmp("ogt", &t, &half);
        let k = self.c(std::f64::consts::FRAC_2_SQRT_PI);
        for _ in 0..3 {
            let ec = self.math("erfc", &x);
            let ft = self.sub(&omt, &ec);
            let ef = self.math("erf", &x);
            let fc = self.sub(&ef, &t);
            let f = self.sel(&tail, &ft, &fc);
            let xx = self.mul(&x, &x);
            let nxx = self.e.op(format!("arith.negf {xx} : f64"));
            let ex = self.math("exp", &nxx);
            let d = self.mul(&k, &ex);
            let u = self.div(&f, &d);
            let xu = self.mul(&x, &u);
            let den = self.add(&one, &xu);
            let step = self.div(&u, &den);
            x = self.sub(&x, &step);
        }
        let inf = self.c(f64::INFINITY);
        let at1 = self.cmp("oeq", &t, &one);
        let x = self.sel(&at1, &inf, &x);
        let nan = self.c(f64::NAN);
        let out = self.cmp("ugt", &t, &one);
        let x = self.sel(&out, &nan, &x);
        self.e.op(format!("math.copysign {x}, {y} : f64"))
    }
}

/// Which special function.
#[derive(Clone, Copy)]
pub enum Special {
    Lgamma,
    Digamma,
    ErfInv,
}

/// The scalar formula of `f` on `a` of float dtype `d`.
pub fn special(e: &mut Emitter, f: Special, d: DType, a: &str) -> String {
    let x = if d == DType::F64 { a.to_string() } else { e.op(format!("arith.extf {a} : {d} to f64")) };
    let mut b = F { e };
    let r = match f {
        Special::Lgamma => b.lgamma(&x),
        Special::Digamma => b.digamma(&x),
        Special::ErfInv => b.erf_inv(&x),
    };
    if d == DType::F64 {
        r
    } else {
        e.op(format!("arith.truncf {r} : f64 to {d}"))
    }
}
