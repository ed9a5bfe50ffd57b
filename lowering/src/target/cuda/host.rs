//! The host side of a CUDA program: a small program over slots that an executor interprets
//! per call ([`HostPlan`]). A slot holds a device buffer or a host scalar; steps launch
//! kernels, call cuBLAS, allocate, read and write single elements of device buffers, compute
//! host scalars ([`HostOp`], evaluated by [`eval`]: the integer and float `arith` ops MLIR
//! leaves on the host), loop (`scf.for`, `scf.while`: a while loop's condition is read from
//! device memory each iteration), branch (`scf.if` / `scf.index_switch` when a branch holds
//! a loop or a callback) and hand buffers to host callbacks.
//!
//! Semantics an executor follows: steps run in order on one stream; an `Alloc` gives its slot
//! a fresh buffer each time it runs (a loop's iterations never share a buffer that one of
//! them still reads); a `Load` waits for the stream; region results are bound in parallel
//! (every yielded operand is read before any result slot is written).
use quabla_dialect::TensorType;

/// A value of the host program.
pub type Slot = usize;

/// The type of a host scalar.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarTy {
    /// A signless integer of this many bits (1..=64).
    Int(u32),
    /// `index` (64 bits).
    Index,
    F32,
    F64,
}

impl ScalarTy {
    /// Bytes as a buffer stores it or a kernel takes it by value (i1: one byte).
    pub fn bytes(self) -> usize {
        match self {
            ScalarTy::Int(w) => (w as usize).div_ceil(8),
            ScalarTy::Index | ScalarTy::F64 => 8,
            ScalarTy::F32 => 4,
        }
    }

    fn bits(self) -> u32 {
        match self {
            ScalarTy::Int(w) => w,
            ScalarTy::Index | ScalarTy::F64 => 64,
            ScalarTy::F32 => 32,
        }
    }
}

impl std::fmt::Display for ScalarTy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScalarTy::Int(w) => write!(f, "i{w}"),
            ScalarTy::Index => write!(f, "index"),
            ScalarTy::F32 => write!(f, "f32"),
            ScalarTy::F64 => write!(f, "f64"),
        }
    }
}

/// A host scalar: integers zero-extended from their width, floats as their IEEE bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scalar {
    pub ty: ScalarTy,
    pub bits: u64,
}

fn mask(w: u32) -> u64 {
    if w >= 64 { u64::MAX } else { (1u64 << w) - 1 }
}

impl Scalar {
    /// An integer (or index) of type `ty` from a value, wrapped to the width.
    pub fn int(ty: ScalarTy, v: i64) -> Scalar {
        Scalar { ty, bits: v as u64 & mask(ty.bits()) }
    }

    pub fn f64(ty: ScalarTy, v: f64) -> Scalar {
        match ty {
            ScalarTy::F32 => Scalar { ty, bits: (v as f32).to_bits() as u64 },
            _ => Scalar { ty: ScalarTy::F64, bits: v.to_bits() },
        }
    }

    /// From little-endian bytes as a buffer stores them.
    pub fn from_bytes(ty: ScalarTy, b: &[u8]) -> Scalar {
        let mut w = [0u8; 8];
        let n = ty.bytes().min(b.len()).min(8);
        w[..n].copy_from_slice(&b[..n]);
        Scalar { ty, bits: u64::from_le_bytes(w) & mask(ty.bits()) }
    }

    /// Little-endian bytes, [`ScalarTy::bytes`] of them.
    pub fn to_bytes(self) -> Vec<u8> {
        self.bits.to_le_bytes()[..self.ty.bytes()].to_vec()
    }

    /// The integer sign-extended from its width.
    pub fn signed(self) -> i64 {
        let w = self.ty.bits();
        if w >= 64 { self.bits as i64 } else { ((self.bits << (64 - w)) as i64) >> (64 - w) }
    }

    /// The integer zero-extended.
    pub fn unsigned(self) -> u64 {
        self.bits
    }

    /// The float's value.
    pub fn float(self) -> f64 {
        match self.ty {
            ScalarTy::F32 => f32::from_bits(self.bits as u32) as f64,
            _ => f64::from_bits(self.bits),
        }
    }

    /// Whether an `i1` (or any integer) is nonzero.
    pub fn truth(self) -> bool {
        self.bits != 0
    }
}

/// A scalar operand: a constant known when the plan was read, or a slot.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Operand {
    Const(Scalar),
    Slot(Slot),
}

/// `arith.cmpi` predicates in MLIR's enum order.
const CMPI: [&str; 10] = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"];
/// `arith.cmpf` predicates in MLIR's enum order.
const CMPF: [&str; 16] = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true"];

/// The host scalar ops (the `arith` ops a program leaves outside its kernels: loop bounds,
/// counters, conditions, switch indices).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostOp {
    AddI,
    SubI,
    MulI,
    DivSI,
    DivUI,
    RemSI,
    RemUI,
    CeilDivSI,
    FloorDivSI,
    MaxSI,
    MinSI,
    MaxUI,
    MinUI,
    AndI,
    OrI,
    XOrI,
    ShLI,
    ShRSI,
    ShRUI,
    /// `arith.cmpi` with its predicate (index into [`CMPI`]).
    CmpI(u8),
    AddF,
    SubF,
    MulF,
    DivF,
    MaximumF,
    MinimumF,
    /// `arith.cmpf` with its predicate (index into [`CMPF`]).
    CmpF(u8),
    Select,
    /// `arith.index_cast` / `extsi` / `trunci`: sign-extend or wrap to the result width.
    CastSI,
    /// `arith.index_castui` / `extui`: zero-extend or wrap.
    CastUI,
    SIToFP,
    UIToFP,
    FPToSI,
    /// `arith.extf` / `truncf`.
    CastF,
}

/// Op name -> [`HostOp`] (comparisons take their predicate separately: [`host_op`]).
const OPS: &[(&str, HostOp)] = &[
    ("arith.addi", HostOp::AddI),
    ("arith.subi", HostOp::SubI),
    ("arith.muli", HostOp::MulI),
    ("arith.divsi", HostOp::DivSI),
    ("arith.divui", HostOp::DivUI),
    ("arith.remsi", HostOp::RemSI),
    ("arith.remui", HostOp::RemUI),
    ("arith.ceildivsi", HostOp::CeilDivSI),
    ("arith.floordivsi", HostOp::FloorDivSI),
    ("arith.maxsi", HostOp::MaxSI),
    ("arith.minsi", HostOp::MinSI),
    ("arith.maxui", HostOp::MaxUI),
    ("arith.minui", HostOp::MinUI),
    ("arith.andi", HostOp::AndI),
    ("arith.ori", HostOp::OrI),
    ("arith.xori", HostOp::XOrI),
    ("arith.shli", HostOp::ShLI),
    ("arith.shrsi", HostOp::ShRSI),
    ("arith.shrui", HostOp::ShRUI),
    ("arith.addf", HostOp::AddF),
    ("arith.subf", HostOp::SubF),
    ("arith.mulf", HostOp::MulF),
    ("arith.divf", HostOp::DivF),
    ("arith.maximumf", HostOp::MaximumF),
    ("arith.minimumf", HostOp::MinimumF),
    ("arith.select", HostOp::Select),
    ("arith.index_cast", HostOp::CastSI),
    ("arith.extsi", HostOp::CastSI),
    ("arith.trunci", HostOp::CastSI),
    ("arith.index_castui", HostOp::CastUI),
    ("arith.extui", HostOp::CastUI),
    ("arith.sitofp", HostOp::SIToFP),
    ("arith.uitofp", HostOp::UIToFP),
    ("arith.fptosi", HostOp::FPToSI),
    ("arith.extf", HostOp::CastF),
    ("arith.truncf", HostOp::CastF),
];

/// The host op of `name` (`predicate`: the comparison's integer attribute), if the host
/// program supports it.
pub fn host_op(name: &str, predicate: Option<i64>) -> Option<HostOp> {
    let p = |n: usize| predicate.and_then(|p| u8::try_from(p).ok()).filter(|&p| (p as usize) < n);
    match name {
        "arith.cmpi" => p(CMPI.len()).map(HostOp::CmpI),
        "arith.cmpf" => p(CMPF.len()).map(HostOp::CmpF),
        _ => OPS.iter().find(|(n, _)| *n == name).map(|(_, op)| *op),
    }
}

impl std::fmt::Display for HostOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HostOp::CmpI(p) => write!(f, "cmpi {}", CMPI[*p as usize]),
            HostOp::CmpF(p) => write!(f, "cmpf {}", CMPF[*p as usize]),
            op => {
                let name = OPS.iter().find(|(_, o)| o == op).map_or("?", |(n, _)| n);
                write!(f, "{}", name.trim_start_matches("arith."))
            }
        }
    }
}

/// Evaluates `op` on `args` giving a value of type `ty`; an error for a division by zero or
/// an overflowing signed division (undefined behaviour in MLIR) and for operands that do not
/// fit the op.
pub fn eval(op: HostOp, ty: ScalarTy, args: &[Scalar]) -> Result<Scalar, String> {
    use HostOp::*;
    let need = match op {
        Select => 3,
        CastSI | CastUI | SIToFP | UIToFP | FPToSI | CastF => 1,
        _ => 2,
    };
    if args.len() != need {
        return Err(format!("host {op}: {} operands, expected {need}", args.len()));
    }
    let (a, b) = (args[0], *args.get(1).unwrap_or(&args[0]));
    let int = |v: i64| Scalar::int(ty, v);
    let bool_ = |v: bool| Scalar::int(ScalarTy::Int(1), v as i64);
    let (sa, sb, ua, ub) = (a.signed(), b.signed(), a.unsigned(), b.unsigned());
    let zero = || if ub == 0 { Err(format!("host {op}: division by zero")) } else { Ok(()) };
    let signed_div = || {
        zero()?;
        let w = a.ty.bits().clamp(1, 64);
        if sb == -1 && sa == i64::MIN >> (64 - w) {
            return Err(format!("host {op}: signed division overflow"));
        }
        Ok(())
    };
    Ok(match op {
        AddI => int(sa.wrapping_add(sb)),
        SubI => int(sa.wrapping_sub(sb)),
        MulI => int(sa.wrapping_mul(sb)),
        DivSI => {
            signed_div()?;
            int(sa.wrapping_div(sb))
        }
        DivUI => {
            zero()?;
            int((ua / ub) as i64)
        }
        RemSI => {
            signed_div()?;
            int(sa.wrapping_rem(sb))
        }
        RemUI => {
            zero()?;
            int((ua % ub) as i64)
        }
        CeilDivSI | FloorDivSI => {
            signed_div()?;
            let (q, r) = (sa.wrapping_div(sb), sa.wrapping_rem(sb));
            let adjust = r != 0 && ((r < 0) != (sb < 0));
            let q = match op {
                CeilDivSI if r != 0 && !adjust => q + 1,
                FloorDivSI if adjust => q - 1,
                _ => q,
            };
            int(q)
        }
        MaxSI => int(sa.max(sb)),
        MinSI => int(sa.min(sb)),
        MaxUI => int(ua.max(ub) as i64),
        MinUI => int(ua.min(ub) as i64),
        AndI => int((ua & ub) as i64),
        OrI => int((ua | ub) as i64),
        XOrI => int((ua ^ ub) as i64),
        ShLI | ShRSI | ShRUI => {
            let w = a.ty.bits() as u64;
            if ub >= w {
                return Err(format!("host {op}: shift by {ub} of a {w}-bit value"));
            }
            match op {
                ShLI => int((ua << ub) as i64),
                ShRSI => int(sa >> ub),
                _ => int((ua >> ub) as i64),
            }
        }
        CmpI(p) => bool_(match CMPI[p as usize] {
            "eq" => ua == ub,
            "ne" => ua != ub,
            "slt" => sa < sb,
            "sle" => sa <= sb,
            "sgt" => sa > sb,
            "sge" => sa >= sb,
            "ult" => ua < ub,
            "ule" => ua <= ub,
            "ugt" => ua > ub,
            _ => ua >= ub,
        }),
        AddF | SubF | MulF | DivF | MaximumF | MinimumF => {
            let (x, y) = (a.float(), b.float());
            let v = match op {
                AddF => x + y,
                SubF => x - y,
                MulF => x * y,
                DivF => x / y,
                // IEEE maximum / minimum: NaN propagates, -0 < +0.
                _ if x.is_nan() || y.is_nan() => f64::NAN,
                MaximumF => if x == y { if x.is_sign_negative() { y } else { x } } else { x.max(y) },
                _ => if x == y { if x.is_sign_negative() { x } else { y } } else { x.min(y) },
            };
            Scalar::f64(ty, v)
        }
        CmpF(p) => {
            let (x, y) = (a.float(), b.float());
            let uno = x.is_nan() || y.is_nan();
            bool_(match CMPF[p as usize] {
                "false" => false,
                "oeq" => !uno && x == y,
                "ogt" => !uno && x > y,
                "oge" => !uno && x >= y,
                "olt" => !uno && x < y,
                "ole" => !uno && x <= y,
                "one" => !uno && x != y,
                "ord" => !uno,
                "ueq" => uno || x == y,
                "ugt" => uno || x > y,
                "uge" => uno || x >= y,
                "ult" => uno || x < y,
                "ule" => uno || x <= y,
                "une" => uno || x != y,
                "uno" => uno,
                _ => true,
            })
        }
        Select => {
            let v = if a.truth() { args[1] } else { args[2] };
            Scalar { ty, bits: v.bits }
        }
        CastSI => int(sa),
        CastUI => int(ua as i64),
        SIToFP => Scalar::f64(ty, sa as f64),
        UIToFP => Scalar::f64(ty, ua as f64),
        FPToSI => {
            let x = a.float().trunc();
            let w = ty.bits();
            let (lo, hi) = (-(2f64.powi(w as i32 - 1)), 2f64.powi(w as i32 - 1));
            if !(x >= lo && x < hi) {
                return Err(format!("host {op}: {x} does not fit {ty}"));
            }
            int(x as i64)
        }
        CastF => Scalar::f64(ty, a.float()),
    })
}

/// One kernel launch.
#[derive(Clone, Debug, PartialEq)]
pub struct Launch {
    /// Index into [`super::CudaProgram::kernels`].
    pub kernel: usize,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Bare-pointer ABI: a buffer slot passes its device pointer, a scalar its bytes.
    pub args: Vec<Operand>,
}

/// A matrix product through cuBLAS (`gemm_strided_batched`): `c[i] += a[i] @ b[i]` for each
/// of `batch` row-major `m x k` and `k x n` matrices of buffers `a`, `b` into `m x n` `c`
/// (`linalg.matmul`/`batch_matmul` semantics: C accumulates, after its fill kernel).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gemm {
    pub a: Slot,
    pub b: Slot,
    pub c: Slot,
    pub batch: usize,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// f64 (else f32).
    pub f64: bool,
}

/// One arm of a [`Step::Branch`]: its steps and the values it yields.
#[derive(Clone, Debug, PartialEq)]
pub struct Arm {
    pub steps: Vec<Step>,
    pub yields: Vec<Operand>,
}

/// One step of a call, in program order on one stream.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    Launch(Launch),
    Gemm(Gemm),
    /// A fresh zeroed device buffer of `bytes` bytes (at least one allocated) in `dst`.
    Alloc { dst: Slot, bytes: usize },
    /// The scalar at byte `offset` of buffer `buf` into `dst` (after the stream's work).
    Load { dst: Slot, buf: Slot, offset: usize, ty: ScalarTy },
    /// `value` written at byte `offset` of buffer `buf`, in stream order.
    Store { buf: Slot, offset: usize, value: Operand },
    /// `dst = op(args)` on the host, of type `ty`.
    Arith { dst: Slot, op: HostOp, ty: ScalarTy, args: Vec<Operand> },
    /// `scf.for`: `iv` from `lb` while `< ub` (signed) by `step`, `args` starting at `inits`
    /// and replaced by `yields` after each iteration; `results` the final `args`.
    For { lb: Operand, ub: Operand, step: Operand, iv: Slot, inits: Vec<Operand>, args: Vec<Slot>, body: Vec<Step>, yields: Vec<Operand>, results: Vec<Slot> },
    /// `scf.while`: `before_args` bound to `inits`, `before` runs, and while `cond` holds
    /// the `forward`ed values become `after_args`, `after` runs, and its `yields` the next
    /// `before_args`; when `cond` fails the `forward`ed values are the `results`.
    While { inits: Vec<Operand>, before_args: Vec<Slot>, before: Vec<Step>, cond: Operand, forward: Vec<Operand>, after_args: Vec<Slot>, after: Vec<Step>, yields: Vec<Operand>, results: Vec<Slot> },
    /// `scf.if` (cases `[1]` on an `i1`: arm 0 when true) or `scf.index_switch` on `on`:
    /// arm `k` where `on == cases[k]`, the last arm otherwise.
    Branch { on: Operand, cases: Vec<i64>, arms: Vec<Arm>, results: Vec<Slot> },
    /// The contents of buffer `buf` (a contiguous value of type `ty`) handed to host callback
    /// `callback` as operand `index` of `count` (`quabla_interp::callback::deliver`), with
    /// its `batched` flags.
    Callback { buf: Slot, ty: TensorType, callback: i64, index: i64, count: i64, batched: Vec<i64> },
}

/// A constant buffer (a `memref.global`), uploaded once per executable.
#[derive(Clone, Debug, PartialEq)]
pub struct ConstBuffer {
    pub slot: Slot,
    pub name: String,
    pub bytes: Vec<u8>,
}

/// What the host does per call.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostPlan {
    /// Slots the program uses; the first `params` are the entry's arguments (inputs, then one
    /// output buffer per result: destination passing).
    pub slots: usize,
    pub params: usize,
    /// Constant buffers, bound before the steps run.
    pub consts: Vec<ConstBuffer>,
    pub steps: Vec<Step>,
}

impl Step {
    /// The nested step lists of a loop or branch.
    pub fn regions(&self) -> Vec<&[Step]> {
        match self {
            Step::For { body, .. } => vec![body],
            Step::While { before, after, .. } => vec![before, after],
            Step::Branch { arms, .. } => arms.iter().map(|a| a.steps.as_slice()).collect(),
            Step::Launch(_) | Step::Gemm(_) | Step::Alloc { .. } | Step::Load { .. } | Step::Store { .. } | Step::Arith { .. } | Step::Callback { .. } => vec![],
        }
    }
}

fn walk<'a>(steps: &'a [Step], out: &mut Vec<&'a Step>) {
    for s in steps {
        out.push(s);
        for r in s.regions() {
            walk(r, out);
        }
    }
}

impl HostPlan {
    /// Every step, nested ones included, in program order.
    pub fn all_steps(&self) -> Vec<&Step> {
        let mut v = Vec::new();
        walk(&self.steps, &mut v);
        v
    }

    /// The kernel launches (nested ones included), in order.
    pub fn launches(&self) -> impl Iterator<Item = &Launch> {
        self.all_steps().into_iter().filter_map(|s| if let Step::Launch(l) = s { Some(l) } else { None })
    }

    /// The cuBLAS products (nested ones included), in order.
    pub fn gemms(&self) -> impl Iterator<Item = &Gemm> {
        self.all_steps().into_iter().filter_map(|s| if let Step::Gemm(g) = s { Some(g) } else { None })
    }

    /// Whether the host reads device memory during a call (loops, branches, callbacks).
    pub fn reads_device(&self) -> bool {
        self.all_steps().iter().any(|s| matches!(s, Step::Load { .. } | Step::Callback { .. }))
    }

    /// The plan as comment lines (`quabla-opt --emit=ptx`): `bN` slots, `kernels[i]` names
    /// for launches.
    pub fn describe(&self, kernel_name: &dyn Fn(usize) -> String) -> String {
        let mut s = String::new();
        for k in 0..self.params {
            s.push_str(&format!("// b{k}: argument {k}\n"));
        }
        for c in &self.consts {
            s.push_str(&format!("// b{}: constant @{} of {} bytes\n", c.slot, c.name, c.bytes.len()));
        }
        describe_steps(&self.steps, 0, kernel_name, &mut s);
        s
    }
}

fn operand(o: &Operand) -> String {
    match o {
        Operand::Slot(b) => format!("b{b}"),
        Operand::Const(c) => format!("0x{}", c.to_bytes().iter().rev().map(|x| format!("{x:02x}")).collect::<String>()),
    }
}

fn list(os: &[Operand]) -> String {
    os.iter().map(operand).collect::<Vec<_>>().join(", ")
}

fn slots(ss: &[Slot]) -> String {
    ss.iter().map(|s| format!("b{s}")).collect::<Vec<_>>().join(", ")
}

fn describe_steps(steps: &[Step], depth: usize, kernel_name: &dyn Fn(usize) -> String, s: &mut String) {
    let pad = "  ".repeat(depth);
    for step in steps {
        let line = match step {
            Step::Launch(l) => format!("launch {} grid {:?} block {:?} args ({})", kernel_name(l.kernel), l.grid, l.block, list(&l.args)),
            Step::Gemm(g) => format!("cublas gemm {} batch {} m {} n {} k {}: b{} += b{} @ b{}", if g.f64 { "f64" } else { "f32" }, g.batch, g.m, g.n, g.k, g.c, g.a, g.b),
            Step::Alloc { dst, bytes } => format!("b{dst} = alloc {bytes} bytes"),
            Step::Load { dst, buf, offset, ty } => format!("b{dst} = load {ty} b{buf}[{offset}]"),
            Step::Store { buf, offset, value } => format!("store {} b{buf}[{offset}]", operand(value)),
            Step::Arith { dst, op, ty, args } => format!("b{dst} = {op} {} : {ty}", list(args)),
            Step::For { lb, ub, step: st, iv, inits, args, results, .. } => {
                format!("({}) = for b{iv} = {} to {} step {} iter ({}) = ({})", slots(results), operand(lb), operand(ub), operand(st), slots(args), list(inits))
            }
            Step::While { inits, before_args, results, .. } => format!("({}) = while ({}) = ({})", slots(results), slots(before_args), list(inits)),
            Step::Branch { on, cases, results, .. } => format!("({}) = branch on {} cases {cases:?}", slots(results), operand(on)),
            Step::Callback { buf, ty, callback, index, count, .. } => format!("callback {callback} operand {index} of {count}: b{buf} : {ty}"),
        };
        s.push_str(&format!("// {pad}{line}\n"));
        match step {
            Step::For { body, yields, .. } => {
                describe_steps(body, depth + 1, kernel_name, s);
                s.push_str(&format!("// {pad}  yield ({})\n", list(yields)));
            }
            Step::While { before, cond, forward, after_args, after, yields, .. } => {
                describe_steps(before, depth + 1, kernel_name, s);
                s.push_str(&format!("// {pad}  condition {} forward ({})\n// {pad}do ({}):\n", operand(cond), list(forward), slots(after_args)));
                describe_steps(after, depth + 1, kernel_name, s);
                s.push_str(&format!("// {pad}  yield ({})\n", list(yields)));
            }
            Step::Branch { arms, .. } => {
                for (k, a) in arms.iter().enumerate() {
                    s.push_str(&format!("// {pad}arm {k}:\n"));
                    describe_steps(&a.steps, depth + 1, kernel_name, s);
                    s.push_str(&format!("// {pad}  yield ({})\n", list(&a.yields)));
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const I64: ScalarTy = ScalarTy::Int(64);
    const I32: ScalarTy = ScalarTy::Int(32);

    fn i(ty: ScalarTy, v: i64) -> Scalar {
        Scalar::int(ty, v)
    }

    #[test]
    fn integer_ops_wrap_to_their_width() {
        assert_eq!(eval(HostOp::AddI, I32, &[i(I32, i32::MAX as i64), i(I32, 1)]).unwrap().signed(), i32::MIN as i64);
        assert_eq!(eval(HostOp::SubI, I64, &[i(I64, 3), i(I64, 10)]).unwrap().signed(), -7);
        assert_eq!(eval(HostOp::MulI, ScalarTy::Index, &[i(ScalarTy::Index, 6), i(ScalarTy::Index, -7)]).unwrap().signed(), -42);
        // The counted loop's final counter: lb + max(0, ceildiv(ub - lb, step)) * step.
        for (a, b, ceil, floor) in [(7, 2, 4, 3), (-7, 2, -3, -4), (7, -2, -3, -4), (-7, -2, 4, 3), (6, 3, 2, 2), (0, 5, 0, 0)] {
            assert_eq!(eval(HostOp::CeilDivSI, I64, &[i(I64, a), i(I64, b)]).unwrap().signed(), ceil, "ceildiv({a}, {b})");
            assert_eq!(eval(HostOp::FloorDivSI, I64, &[i(I64, a), i(I64, b)]).unwrap().signed(), floor, "floordiv({a}, {b})");
        }
        assert_eq!(eval(HostOp::DivSI, I64, &[i(I64, -7), i(I64, 2)]).unwrap().signed(), -3);
        assert_eq!(eval(HostOp::RemSI, I64, &[i(I64, -7), i(I64, 2)]).unwrap().signed(), -1);
        assert_eq!(eval(HostOp::DivUI, I32, &[i(I32, -1), i(I32, 2)]).unwrap().unsigned(), 0x7fff_ffff);
        assert_eq!(eval(HostOp::MaxSI, I64, &[i(I64, -5), i(I64, 0)]).unwrap().signed(), 0);
        assert_eq!(eval(HostOp::MaxUI, I32, &[i(I32, -5), i(I32, 0)]).unwrap().signed(), -5);
        assert_eq!(eval(HostOp::ShRSI, I32, &[i(I32, -8), i(I32, 1)]).unwrap().signed(), -4);
        assert_eq!(eval(HostOp::ShRUI, I32, &[i(I32, -8), i(I32, 28)]).unwrap().signed(), 15);
        assert!(eval(HostOp::DivSI, I64, &[i(I64, 1), i(I64, 0)]).is_err());
        assert!(eval(HostOp::DivSI, I64, &[i(I64, i64::MIN), i(I64, -1)]).is_err());
        assert!(eval(HostOp::ShLI, I32, &[i(I32, 1), i(I32, 32)]).is_err());
        assert!(eval(HostOp::AddI, I32, &[i(I32, 1)]).is_err());
    }

    #[test]
    fn casts_comparisons_and_select() {
        let b = ScalarTy::Int(1);
        assert_eq!(eval(HostOp::CastSI, ScalarTy::Index, &[i(I32, -3)]).unwrap().signed(), -3);
        assert_eq!(eval(HostOp::CastUI, I64, &[i(I32, -1)]).unwrap().signed(), 0xffff_ffff);
        assert_eq!(eval(HostOp::CastSI, ScalarTy::Int(8), &[i(I64, 0x1ff)]).unwrap().signed(), -1);
        let slt = host_op("arith.cmpi", Some(2)).unwrap();
        let ult = host_op("arith.cmpi", Some(6)).unwrap();
        assert!(eval(slt, b, &[i(I64, -1), i(I64, 0)]).unwrap().truth());
        assert!(!eval(ult, b, &[i(I64, -1), i(I64, 0)]).unwrap().truth());
        let olt = host_op("arith.cmpf", Some(4)).unwrap();
        let ult_f = host_op("arith.cmpf", Some(11)).unwrap();
        let (x, nan) = (Scalar::f64(ScalarTy::F32, 1.5), Scalar::f64(ScalarTy::F32, f64::NAN));
        assert!(eval(olt, b, &[x, Scalar::f64(ScalarTy::F32, 2.0)]).unwrap().truth());
        assert!(!eval(olt, b, &[x, nan]).unwrap().truth() && eval(ult_f, b, &[x, nan]).unwrap().truth());
        assert_eq!(eval(HostOp::Select, I64, &[i(b, 1), i(I64, 4), i(I64, 9)]).unwrap().signed(), 4);
        assert_eq!(eval(HostOp::Select, I64, &[i(b, 0), i(I64, 4), i(I64, 9)]).unwrap().signed(), 9);
        assert_eq!(eval(HostOp::SIToFP, ScalarTy::F64, &[i(I32, -2)]).unwrap().float(), -2.0);
        assert_eq!(eval(HostOp::FPToSI, I32, &[Scalar::f64(ScalarTy::F64, -2.7)]).unwrap().signed(), -2);
        assert!(eval(HostOp::FPToSI, I32, &[Scalar::f64(ScalarTy::F64, 3e9)]).is_err());
        assert_eq!(eval(HostOp::AddF, ScalarTy::F32, &[x, x]).unwrap().float(), 3.0);
        assert!(eval(HostOp::MaximumF, ScalarTy::F64, &[Scalar::f64(ScalarTy::F64, 1.0), Scalar::f64(ScalarTy::F64, f64::NAN)]).unwrap().float().is_nan());
        assert_eq!(host_op("arith.cmpi", Some(10)), None);
        assert_eq!(host_op("arith.negf", None), None);
        assert_eq!(format!("{slt}"), "cmpi slt");
        assert_eq!(format!("{}", HostOp::CeilDivSI), "ceildivsi");
    }

    #[test]
    fn scalar_bytes_round_trip() {
        let v = Scalar::int(I32, -2);
        assert_eq!(v.to_bytes(), (-2i32).to_le_bytes().to_vec());
        assert_eq!(Scalar::from_bytes(I32, &v.to_bytes()), v);
        assert_eq!(Scalar::from_bytes(ScalarTy::Int(1), &[1]).to_bytes(), vec![1]);
        assert_eq!(Scalar::f64(ScalarTy::F32, 0.5).to_bytes(), 0.5f32.to_le_bytes().to_vec());
    }
}
