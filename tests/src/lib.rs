//! Helpers shared by the cross-crate tests: deterministic random buffers, tolerant
//! comparisons, and one-op module construction.
pub mod pinn;

use quabla_dialect::{DType, Func, Module, OpKind, TensorType};
use quabla_runtime::Buffer;

/// A small deterministic generator (PCG-like), so failures reproduce.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_f64(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Values in [lo, hi) for floats; integers in [lo, hi); bools 50/50.
    pub fn buffer(&mut self, ty: &TensorType, lo: f64, hi: f64) -> Buffer {
        let vals: Vec<f64> = (0..ty.num_elements())
            .map(|_| {
                let u = self.next_f64();
                match ty.dtype {
                    DType::I1 => (u < 0.5) as i64 as f64,
                    DType::I32 | DType::I64 => (lo + u * (hi - lo)).floor(),
                    _ => lo + u * (hi - lo),
                }
            })
            .collect();
        Buffer::from_f64s(ty.clone(), &vals).unwrap()
    }
}

/// A module whose public @main applies `kind` to parameters of the given types.
pub fn one_op_module(kind: OpKind, params: &[TensorType]) -> Module {
    let mut f = Func::new("main", params);
    let ps = f.params.clone();
    let outs = f.push(kind, &ps, None).expect("the test builds valid ops");
    f.outputs = outs;
    Module { funcs: vec![f] }
}

/// Distance in units in the last place between two floats of `dtype` (NaN == NaN, inf == inf).
pub fn ulps(dtype: DType, a: f64, b: f64) -> u64 {
    if a.is_nan() && b.is_nan() || a == b {
        return 0;
    }
    if a.is_nan() || b.is_nan() {
        return u64::MAX;
    }
    match dtype {
        DType::F32 => {
            let (x, y) = (a as f32, b as f32);
            let key = |v: f32| {
                let i = v.to_bits() as i32;
                if i < 0 { i32::MIN.wrapping_sub(i) as i64 } else { i as i64 }
            };
            (key(x) - key(y)).unsigned_abs()
        }
        _ => {
            let key = |v: f64| {
                let i = v.to_bits() as i64;
                if i < 0 { i64::MIN.wrapping_sub(i) as i128 } else { i as i128 }
            };
            (key(a) - key(b)).unsigned_abs().min(u64::MAX as u128) as u64
        }
    }
}

/// How two results must agree.
#[derive(Clone, Copy, Debug)]
pub enum Tol {
    /// Bit-for-bit (integers, bools, exactly rounded float ops).
    Exact,
    /// Within this many ulps (transcendental functions: libm vs Rust).
    Ulps(u64),
    /// |a - b| <= rel * scale, with scale a per-test magnitude (reductions, dots).
    Rel(f64),
}

/// Compares two buffers; returns a description of the first mismatch.
pub fn compare(a: &Buffer, b: &Buffer, tol: Tol, scale: f64) -> Result<(), String> {
    if a.ty() != b.ty() {
        return Err(format!("types differ: {} vs {}", a.ty(), b.ty()));
    }
    for i in 0..a.len() {
        let (x, y) = (a.get_f64(i), b.get_f64(i));
        let ok = if !a.dtype().is_float() {
            a.get_i64(i) == b.get_i64(i)
        } else {
            match tol {
                Tol::Exact => ulps(a.dtype(), x, y) == 0 || (x == 0.0 && y == 0.0),
                Tol::Ulps(n) => ulps(a.dtype(), x, y) <= n || (x - y).abs() <= 1e-30,
                Tol::Rel(r) => (x.is_nan() && y.is_nan()) || x == y || (x - y).abs() <= r * scale.max(x.abs()).max(1e-300),
            }
        };
        if !ok {
            return Err(format!("element {i}: {x:e} vs {y:e} ({} ulps)", ulps(a.dtype(), x, y)));
        }
    }
    Ok(())
}
