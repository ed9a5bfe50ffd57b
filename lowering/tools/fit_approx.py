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


def fit_rational(pname, qname, g, a, b, n_p, n_q, nodes=400, rounds=60):
    """P (n_p coefficients) and Q (n_q, Q[0] = 1) with P/Q near-minimax in relative error for g
    on [a, b]: linearised least squares on Chebyshev nodes, each round weighted by the
    previous Q (Sanathanan-Koerner) and by Lawson's update toward equal-ripple errors."""
    zs = [a + (b - a) * (1 - mp.cos(mp.pi * (k + mp.mpf(1) / 2) / nodes)) / 2 for k in range(nodes)]
    gs = [g(z) for z in zs]
    ev = lambda c, z: mp.polyval(list(reversed(c)), z)
    w, q = [mp.mpf(1)] * nodes, [mp.mpf(1)] + [mp.mpf(0)] * (n_q - 1)
    for _ in range(rounds):
        rows, rhs = [], []
        for z, gz, wi in zip(zs, gs, w):
            s = wi / (gz * ev(q, z))
            rows.append([s * z**j for j in range(n_p)] + [-s * gz * z**j for j in range(1, n_q)])
            rhs.append(s * gz)
        sol = mp.qr_solve(mp.matrix(rows), mp.matrix(rhs))[0]
        p = [sol[j] for j in range(n_p)]
        q = [mp.mpf(1)] + [sol[n_p + j - 1] for j in range(1, n_q)]
        err = [(ev(p, z) / ev(q, z) - gz) / gz for z, gz in zip(zs, gs)]
        top = max(abs(e) for e in err)
        w = [wi * mp.sqrt(abs(e) / top) + eps for wi, e in zip(w, err)]
        total = sum(w)
        w = [wi * nodes / total for wi in w]
    worst = max(abs((ev(p, x) / ev(q, x) - g(x)) / g(x)) for x in mp.linspace(a, b, 4001))
    print(f"// {pname} / {qname}: degrees {n_p - 1} / {n_q - 1} on [{mp.nstr(a, 8)}, {mp.nstr(b, 8)}], fit rel. error {mp.nstr(worst, 3)}")
    for name, c in ((pname, p), (qname, q)):
        print(f"const {name}: [f64; {len(c)}] = [" + ", ".join(repr(float(x)) for x in c) + "];")
    return p, q


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

# f32 tanh for |x| <= 9: tanh(x) = x P(z) / Q(z), z = x^2 (one rational, no branch).
t_tanh = lambda z: mp.tanh(mp.sqrt(z)) / mp.sqrt(z) if z > eps else 1 - z / 3
fit_rational("TANH_P_F32", "TANH_Q_F32", t_tanh, 0, 81, 6, 5)

# f32 erfc for x in [0.5, 10]: erfc(x) = exp(-x^2) P(x) / Q(x).
g_erfc = lambda x: mp.erfc(x) * mp.exp(x * x)
fit_rational("ERFC_P_F32", "ERFC_Q_F32", g_erfc, mp.mpf("0.5"), 10, 6, 6)

# erf for |x| <= 4: erf(x) = x P(z) / Q(z), z = x^2 (one rational, no branch).
e_erf = lambda z: mp.erf(mp.sqrt(z)) / mp.sqrt(z) if z > eps else 2 / mp.sqrt(mp.pi) * (1 - z / 3)
fit_rational("ERF_P_F32", "ERF_Q_F32", e_erf, 0, 16, 7, 6)

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
