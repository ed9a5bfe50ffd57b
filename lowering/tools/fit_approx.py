"""Coefficients of the polynomial approximations in lowering/src/target/cpu/approx.rs.

Each target is a smooth function g on an interval; the polynomial is a near-minimax
(Chebyshev) fit computed at 60 digits by mpmath, then printed rounded to f64 (f32 kernels
round them again when they are emitted). Run with any Python that has mpmath:

    python lowering/tools/fit_approx.py

and paste the output over the `// generated` tables of approx.rs. The measured ulp errors of
the complete approximations (not of these fits alone) are in approx.rs and its tests.
"""
import mpmath as mp

mp.mp.dps = 60


def fit(name, g, a, b, n):
    """Degree n-1 polynomial for g on [a, b]: coefficients lowest first, and max abs error."""
    poly, err = mp.chebyfit(g, [a, b], n, error=True)
    c = list(reversed(poly))
    # Relative error of the fit over a dense grid (g does not vanish on these intervals).
    worst = max(abs((mp.polyval(poly, x) - g(x)) / g(x)) for x in mp.linspace(a, b, 2001))
    print(f"// {name}: degree {n - 1} on [{mp.nstr(a, 8)}, {mp.nstr(b, 8)}], fit rel. error {mp.nstr(worst, 3)}")
    print(f"const {name}: [f64; {n}] = [" + ", ".join(repr(float(x)) for x in c) + "];")
    return c


def split(v, bits):
    """v's leading `bits` significant bits as an f64, and the f64 nearest to the rest."""
    e = mp.floor(mp.log(abs(v), 2))
    scale = mp.mpf(2) ** (bits - 1 - e)
    hi = mp.floor(v * scale) / scale
    return float(hi), float(v - hi)


ln2 = mp.log(2)
half_ln2 = ln2 / 2
eps = mp.mpf(10) ** -30

# exp: e^r = 1 + r + r^2 P(r), |r| <= ln2/2.
p_exp = lambda r: (mp.exp(r) - 1 - r) / r**2 if abs(r) > eps else mp.mpf(1) / 2 + r / 6
fit("EXP_F32", p_exp, -half_ln2, half_ln2, 5)
fit("EXP_F64", p_exp, -half_ln2, half_ln2, 10)

# log: log((1+s)/(1-s)) = 2s + s z S(z), z = s^2, s = f/(2+f), f in [sqrt(1/2)-1, sqrt(2)-1].
smax = (mp.sqrt(2) - 1) / (mp.sqrt(2) + 1)
s_log = lambda z: (2 * mp.atanh(mp.sqrt(z)) - 2 * mp.sqrt(z)) / (mp.sqrt(z) * z) if z > eps else mp.mpf(2) / 3 + 2 * z / 5
fit("LOG_F32", s_log, 0, smax**2, 3)
fit("LOG_F64", s_log, 0, smax**2, 8)

# tanh for |x| < T: tanh(a) = a + a^3 Q(a^2).
q_tanh = lambda z: (mp.tanh(mp.sqrt(z)) - mp.sqrt(z)) / (mp.sqrt(z) * z) if z > eps else -mp.mpf(1) / 3 + 2 * z / 15
fit("TANH_F32", q_tanh, 0, mp.mpf("0.625") ** 2, 6)
fit("TANH_F64", q_tanh, 0, mp.mpf("0.625") ** 2, 13)

# erf for |x| < 1: erf(x) = x E(x^2).
e_erf = lambda z: mp.erf(mp.sqrt(z)) / mp.sqrt(z) if z > eps else 2 / mp.sqrt(mp.pi) * (1 - z / 3)
fit("ERF_SMALL_F32", e_erf, 0, 1, 7)
# erf for 1 <= x < 4: erf(x) = 1 - exp(-x^2) C(1/x), C = erfcx.
c_erf = lambda t: mp.erfc(1 / t) * mp.exp(1 / t**2)
fit("ERFC_F32", c_erf, mp.mpf(1) / 4, 1, 10)

# sin/cos on |r| <= pi/4 (evaluated in f64 for f32 inputs):
# sin r = r + r^3 S(r^2), cos r = 1 - r^2/2 + r^4 C(r^2).
q = (mp.pi / 4) ** 2
s_sin = lambda z: (mp.sin(mp.sqrt(z)) - mp.sqrt(z)) / (mp.sqrt(z) * z) if z > eps else -mp.mpf(1) / 6 + z / 120
c_cos = lambda z: (mp.cos(mp.sqrt(z)) - 1 + z / 2) / z**2 if z > eps else mp.mpf(1) / 24 - z / 720
fit("SIN_F32", s_sin, 0, q, 4)
fit("COS_F32", c_cos, 0, q, 4)

# Cody-Waite constants.
print("// ln2 split: hi has 16 (f32) / 42 (f64) significant bits, so k*hi is exact.")
print("LN2_F32 =", split(ln2, 16))
print("LN2_F64 =", split(ln2, 42))
print("// pi/2 split for the f64 reduction of f32 arguments: hi has 33 bits (k*hi exact for |k| < 2^20).")
print("PIO2 =", split(mp.pi / 2, 33))
