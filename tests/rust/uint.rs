//! Unsigned integers (ui8, ui32) and the shifts: every elementwise op, comparison,
//! conversion and reduction on unsigned operands, and the three shifts and
//! `population_count` on every integer dtype, give the same bits in the JIT as in the
//! reference interpreter, and both equal Rust's own u8/u32/i32/i64 arithmetic (an oracle
//! independent of either engine) on values that include 0, the maximum, the sign bit and
//! shift amounts at and beyond the width.
use quabla_dialect::{
    ArgOp, BinaryOp, CmpDir, DType, ElementwiseOp, OpKind, ReduceOp, Reducer, TensorType, UnaryOp,
};
use quabla_runtime::{interp, Buffer, CompileOptions, Executor};
use quabla_tests::one_op_module;

use crate::executor;

/// Runs a one-op module in the JIT and the interpreter; asserts they agree bit for bit and
/// returns the JIT's output.
fn both(what: &str, kind: OpKind, inputs: &[Buffer]) -> Buffer {
    let params: Vec<TensorType> = inputs.iter().map(|b| b.ty().clone()).collect();
    let m = one_op_module(kind, &params);
    let want = interp::run_func(&m, "main", inputs)
        .unwrap_or_else(|e| panic!("{what}: interpreter: {e}"))
        .remove(0);
    let exe = executor()
        .compile(&m, "main", &CompileOptions::default())
        .unwrap_or_else(|e| panic!("{what}: compile: {e}\n{}", m.to_mlir()));
    let refs: Vec<&Buffer> = inputs.iter().collect();
    let got = exe
        .run(&refs)
        .unwrap_or_else(|e| panic!("{what}: run: {e}"))
        .remove(0);
    assert_eq!(got.ty(), want.ty(), "{what}");
    assert_eq!(
        got.bytes(),
        want.bytes(),
        "{what}: JIT {got:?} vs interpreter {want:?}"
    );
    got
}

const U32S: [u32; 10] = [0, 1, 2, 7, 31, 32, 33, 0x7FFF_FFFF, 0x8000_0000, u32::MAX];
const U8S: [u8; 10] = [0, 1, 2, 7, 8, 9, 100, 127, 128, 255];

/// All pairs of the sample values, as two flat vectors.
fn pairs<T: Copy>(v: &[T]) -> (Vec<T>, Vec<T>) {
    v.iter()
        .flat_map(|&a| v.iter().map(move |&b| (a, b)))
        .unzip()
}

fn bin(op: BinaryOp) -> OpKind {
    OpKind::Elementwise(ElementwiseOp::Binary { op })
}

fn un(op: UnaryOp) -> OpKind {
    OpKind::Elementwise(ElementwiseOp::Unary { op })
}

/// The reference of a binary op on u32 (StableHLO semantics: x/0 = all ones, x%0 = x,
/// out-of-range shifts 0 or the sign fill).
fn u32_ref(op: BinaryOp, a: u32, b: u32) -> u32 {
    match op {
        BinaryOp::Add => a.wrapping_add(b),
        BinaryOp::Sub => a.wrapping_sub(b),
        BinaryOp::Mul => a.wrapping_mul(b),
        BinaryOp::Div => a.checked_div(b).unwrap_or(u32::MAX),
        BinaryOp::Rem => a.checked_rem(b).unwrap_or(a),
        BinaryOp::Max => a.max(b),
        BinaryOp::Min => a.min(b),
        BinaryOp::And => a & b,
        BinaryOp::Or => a | b,
        BinaryOp::Xor => a ^ b,
        BinaryOp::ShiftLeft => a.checked_shl(b).unwrap_or(0),
        BinaryOp::ShiftRightLogical => a.checked_shr(b).unwrap_or(0),
        BinaryOp::ShiftRightArithmetic => ((a as i32) >> b.min(31)) as u32,
        BinaryOp::Pow | BinaryOp::Atan2 | BinaryOp::Logaddexp => unreachable!("float ops"),
    }
}

const UINT_BINARY: [BinaryOp; 13] = [
    BinaryOp::Add,
    BinaryOp::Sub,
    BinaryOp::Mul,
    BinaryOp::Div,
    BinaryOp::Rem,
    BinaryOp::Max,
    BinaryOp::Min,
    BinaryOp::And,
    BinaryOp::Or,
    BinaryOp::Xor,
    BinaryOp::ShiftLeft,
    BinaryOp::ShiftRightLogical,
    BinaryOp::ShiftRightArithmetic,
];

#[test]
fn u32_binary_ops_match_rust_arithmetic() {
    let (a, b) = pairs(&U32S);
    let n = a.len() as i64;
    let (xa, xb) = (
        Buffer::from_slice(&[n], &a).unwrap(),
        Buffer::from_slice(&[n], &b).unwrap(),
    );
    for op in UINT_BINARY {
        let got = both(op.name(), bin(op), &[xa.clone(), xb.clone()]);
        let want: Vec<u32> = a.iter().zip(&b).map(|(&p, &q)| u32_ref(op, p, q)).collect();
        assert_eq!(
            got.as_slice::<u32>().unwrap(),
            want.as_slice(),
            "{}",
            op.name()
        );
    }
}

#[test]
fn u8_binary_ops_match_rust_arithmetic() {
    let (a, b) = pairs(&U8S);
    let n = a.len() as i64;
    let (xa, xb) = (
        Buffer::from_slice(&[n], &a).unwrap(),
        Buffer::from_slice(&[n], &b).unwrap(),
    );
    for op in UINT_BINARY {
        let got = both(op.name(), bin(op), &[xa.clone(), xb.clone()]);
        let want: Vec<u8> = a
            .iter()
            .zip(&b)
            .map(|(&p, &q)| match op {
                BinaryOp::Div => p.checked_div(q).unwrap_or(u8::MAX),
                BinaryOp::Rem => p.checked_rem(q).unwrap_or(p),
                BinaryOp::ShiftLeft => p.checked_shl(q as u32).unwrap_or(0),
                BinaryOp::ShiftRightLogical => p.checked_shr(q as u32).unwrap_or(0),
                BinaryOp::ShiftRightArithmetic => ((p as i8) >> q.min(7)) as u8,
                _ => u32_ref(op, p as u32, q as u32) as u8,
            })
            .collect();
        assert_eq!(
            got.as_slice::<u8>().unwrap(),
            want.as_slice(),
            "{}",
            op.name()
        );
    }
}

#[test]
fn shifts_of_signed_integers_follow_stablehlo() {
    let vals: [i32; 8] = [0, 1, -1, -8, 5, i32::MIN, i32::MAX, 40];
    let (a, b) = pairs(&vals);
    let n = a.len() as i64;
    let (xa, xb) = (
        Buffer::from_slice(&[n], &a).unwrap(),
        Buffer::from_slice(&[n], &b).unwrap(),
    );
    for op in [
        BinaryOp::ShiftLeft,
        BinaryOp::ShiftRightLogical,
        BinaryOp::ShiftRightArithmetic,
    ] {
        let got = both(op.name(), bin(op), &[xa.clone(), xb.clone()]);
        let want: Vec<i32> = a
            .iter()
            .zip(&b)
            .map(|(&p, &q)| u32_ref(op, p as u32, q as u32) as i32)
            .collect();
        assert_eq!(
            got.as_slice::<i32>().unwrap(),
            want.as_slice(),
            "{}",
            op.name()
        );
    }
    let v64: [i64; 6] = [0, 1, -1, i64::MIN, 63, 64];
    let (a, b) = pairs(&v64);
    let n = a.len() as i64;
    let (xa, xb) = (
        Buffer::from_slice(&[n], &a).unwrap(),
        Buffer::from_slice(&[n], &b).unwrap(),
    );
    for op in [
        BinaryOp::ShiftLeft,
        BinaryOp::ShiftRightLogical,
        BinaryOp::ShiftRightArithmetic,
    ] {
        let got = both(op.name(), bin(op), &[xa.clone(), xb.clone()]);
        let want: Vec<i64> = a
            .iter()
            .zip(&b)
            .map(|(&p, &q)| {
                let (x, s) = (p as u64, q as u64);
                match op {
                    BinaryOp::ShiftLeft => {
                        if s >= 64 {
                            0
                        } else {
                            (x << s) as i64
                        }
                    }
                    BinaryOp::ShiftRightLogical => {
                        if s >= 64 {
                            0
                        } else {
                            (x >> s) as i64
                        }
                    }
                    _ => p >> s.min(63),
                }
            })
            .collect();
        assert_eq!(
            got.as_slice::<i64>().unwrap(),
            want.as_slice(),
            "{} i64",
            op.name()
        );
    }
}

#[test]
fn unsigned_unary_ops_and_popcount() {
    let x = Buffer::from_slice(&[10], &U32S).unwrap();
    type Case = (UnaryOp, fn(u32) -> u32);
    let cases: [Case; 5] = [
        (UnaryOp::Neg, |a| a.wrapping_neg()),
        (UnaryOp::Abs, |a| a),
        (UnaryOp::Sign, |a| (a != 0) as u32),
        (UnaryOp::Not, |a| !a),
        (UnaryOp::PopulationCount, |a| a.count_ones()),
    ];
    for (op, f) in cases {
        let got = both(op.name(), un(op), std::slice::from_ref(&x));
        let want: Vec<u32> = U32S.iter().map(|&a| f(a)).collect();
        assert_eq!(
            got.as_slice::<u32>().unwrap(),
            want.as_slice(),
            "{}",
            op.name()
        );
    }
    let y = Buffer::from_slice(&[10], &U8S).unwrap();
    let got = both("popcount u8", un(UnaryOp::PopulationCount), &[y]);
    assert_eq!(
        got.as_slice::<u8>().unwrap(),
        U8S.iter()
            .map(|a| a.count_ones() as u8)
            .collect::<Vec<_>>()
            .as_slice()
    );
    let s = Buffer::from_slice(&[4], &[-1i32, 0, 7, i32::MIN]).unwrap();
    let got = both("popcount i32", un(UnaryOp::PopulationCount), &[s]);
    assert_eq!(got.as_slice::<i32>().unwrap(), &[32, 0, 3, 1]);
}

#[test]
fn unsigned_comparisons_are_unsigned() {
    let (a, b) = pairs(&U32S);
    let n = a.len() as i64;
    let (xa, xb) = (
        Buffer::from_slice(&[n], &a).unwrap(),
        Buffer::from_slice(&[n], &b).unwrap(),
    );
    for dir in CmpDir::ALL {
        let got = both(
            dir.name(),
            OpKind::Elementwise(ElementwiseOp::Compare { direction: dir }),
            &[xa.clone(), xb.clone()],
        );
        let want: Vec<bool> = a
            .iter()
            .zip(&b)
            .map(|(p, q)| match dir {
                CmpDir::Eq => p == q,
                CmpDir::Ne => p != q,
                CmpDir::Lt => p < q,
                CmpDir::Le => p <= q,
                CmpDir::Gt => p > q,
                CmpDir::Ge => p >= q,
            })
            .collect();
        assert_eq!(
            got.as_slice::<bool>().unwrap(),
            want.as_slice(),
            "{}",
            dir.name()
        );
    }
}

#[test]
fn conversions_to_and_from_unsigned() {
    let conv = |to| OpKind::Elementwise(ElementwiseOp::Convert { to });
    let x = Buffer::from_slice(&[10], &U32S).unwrap();
    let f = both("u32->f64", conv(DType::F64), std::slice::from_ref(&x));
    assert_eq!(
        f.as_slice::<f64>().unwrap(),
        U32S.iter()
            .map(|&a| a as f64)
            .collect::<Vec<_>>()
            .as_slice()
    );
    let i = both("u32->i64", conv(DType::I64), std::slice::from_ref(&x));
    assert_eq!(
        i.as_slice::<i64>().unwrap(),
        U32S.iter()
            .map(|&a| a as i64)
            .collect::<Vec<_>>()
            .as_slice()
    );
    let i = both("u32->i32", conv(DType::I32), std::slice::from_ref(&x));
    assert_eq!(
        i.as_slice::<i32>().unwrap(),
        U32S.iter()
            .map(|&a| a as i32)
            .collect::<Vec<_>>()
            .as_slice()
    );
    let u = both("u32->u8", conv(DType::U8), std::slice::from_ref(&x));
    assert_eq!(
        u.as_slice::<u8>().unwrap(),
        U32S.iter().map(|&a| a as u8).collect::<Vec<_>>().as_slice()
    );
    let b = both("u32->i1", conv(DType::I1), std::slice::from_ref(&x));
    assert_eq!(
        b.as_slice::<bool>().unwrap(),
        U32S.iter().map(|&a| a != 0).collect::<Vec<_>>().as_slice()
    );
    let f32s = both("u32->f32", conv(DType::F32), std::slice::from_ref(&x));
    assert_eq!(
        f32s.as_slice::<f32>().unwrap(),
        U32S.iter()
            .map(|&a| a as f32)
            .collect::<Vec<_>>()
            .as_slice()
    );
    let y = Buffer::from_slice(&[10], &U8S).unwrap();
    let w = both("u8->u32", conv(DType::U32), std::slice::from_ref(&y));
    assert_eq!(
        w.as_slice::<u32>().unwrap(),
        U8S.iter().map(|&a| a as u32).collect::<Vec<_>>().as_slice()
    );
    let s = Buffer::from_slice(&[5], &[-1i64, 0, 4294967296 + 5, 300, i64::MIN]).unwrap();
    let w = both("i64->u32", conv(DType::U32), std::slice::from_ref(&s));
    assert_eq!(w.as_slice::<u32>().unwrap(), &[u32::MAX, 0, 5, 300, 0]);
    let w = both("i64->u8", conv(DType::U8), &[s]);
    assert_eq!(w.as_slice::<u8>().unwrap(), &[255, 0, 5, 44, 0]);
    // Float -> unsigned truncates and saturates (Rust `as`): negatives and NaN give 0.
    let fl = [
        -3.5f64,
        -0.5,
        0.0,
        2.9,
        4294967295.0,
        4294967296.0,
        1e20,
        f64::NAN,
        255.5,
        256.0,
    ];
    let xf = Buffer::from_slice(&[10], &fl).unwrap();
    let w = both("f64->u32", conv(DType::U32), std::slice::from_ref(&xf));
    assert_eq!(
        w.as_slice::<u32>().unwrap(),
        fl.iter().map(|&a| a as u32).collect::<Vec<_>>().as_slice()
    );
    let w = both("f64->u8", conv(DType::U8), &[xf]);
    assert_eq!(
        w.as_slice::<u8>().unwrap(),
        fl.iter().map(|&a| a as u8).collect::<Vec<_>>().as_slice()
    );
    let xf32 = Buffer::from_slice(&[4], &[-1.0f32, 3.7, 5e9, 200.0]).unwrap();
    let w = both("f32->u32", conv(DType::U32), &[xf32]);
    assert_eq!(w.as_slice::<u32>().unwrap(), &[0, 3, u32::MAX, 200]);
}

#[test]
fn unsigned_reductions_and_argmax() {
    let x = Buffer::from_slice(&[2, 5], &U32S).unwrap();
    let red = |op| OpKind::Reduce(ReduceOp::Reduce { op, dims: vec![1] });
    let s = both("sum", red(Reducer::Sum), std::slice::from_ref(&x));
    let want = |f: fn(&[u32]) -> u32| [f(&U32S[..5]), f(&U32S[5..])];
    assert_eq!(
        s.as_slice::<u32>().unwrap(),
        &want(|v| v.iter().fold(0u32, |a, &b| a.wrapping_add(b)))
    );
    let mx = both("max", red(Reducer::Max), std::slice::from_ref(&x));
    assert_eq!(
        mx.as_slice::<u32>().unwrap(),
        &want(|v| *v.iter().max().unwrap())
    );
    let mn = both("min", red(Reducer::Min), std::slice::from_ref(&x));
    assert_eq!(
        mn.as_slice::<u32>().unwrap(),
        &want(|v| *v.iter().min().unwrap())
    );
    let p = both("prod", red(Reducer::Prod), std::slice::from_ref(&x));
    assert_eq!(
        p.as_slice::<u32>().unwrap(),
        &want(|v| v.iter().fold(1u32, |a, &b| a.wrapping_mul(b)))
    );
    let am = both(
        "argmax",
        OpKind::Reduce(ReduceOp::ArgReduce {
            op: ArgOp::Max,
            dim: 1,
            index: DType::I64,
        }),
        std::slice::from_ref(&x),
    );
    assert_eq!(am.as_slice::<i64>().unwrap(), &[4, 4]);
    let am = both(
        "argmin",
        OpKind::Reduce(ReduceOp::ArgReduce {
            op: ArgOp::Min,
            dim: 1,
            index: DType::I32,
        }),
        &[x],
    );
    assert_eq!(am.as_slice::<i32>().unwrap(), &[0, 0]);
}

#[test]
fn unsigned_powi_and_constants() {
    let x = Buffer::from_slice(&[10], &U32S).unwrap();
    let got = both(
        "powi 3",
        OpKind::Elementwise(ElementwiseOp::Powi { exponent: 3 }),
        std::slice::from_ref(&x),
    );
    assert_eq!(
        got.as_slice::<u32>().unwrap(),
        U32S.iter()
            .map(|&a| a.wrapping_pow(3))
            .collect::<Vec<_>>()
            .as_slice()
    );
    // A negative exponent: 1 stays 1, everything else (no -1 in unsigned) is 0.
    let got = both(
        "powi -1",
        OpKind::Elementwise(ElementwiseOp::Powi { exponent: -1 }),
        &[x],
    );
    assert_eq!(
        got.as_slice::<u32>().unwrap(),
        U32S.iter()
            .map(|&a| (a == 1) as u32)
            .collect::<Vec<_>>()
            .as_slice()
    );
}

#[test]
fn the_dialect_spells_unsigned_as_ui_and_the_linalg_text_signless() {
    let t = TensorType::new(DType::U32, [3]);
    assert_eq!(t.to_string(), "tensor<3xui32>");
    assert_eq!(TensorType::parse("tensor<2xui8>").unwrap().dtype, DType::U8);
    let m = one_op_module(bin(BinaryOp::Div), &[t.clone(), t.clone()]);
    let text = m.to_mlir();
    assert!(text.contains("tensor<3xui32>"), "{text}");
    let lin = quabla_lowering::linalg::lower_module(&m, quabla_lowering::Abi::Tensor).unwrap();
    assert!(
        !lin.contains("ui32") && lin.contains("tensor<3xi32>") && lin.contains("arith.divui"),
        "{lin}"
    );
    // Outside the lowering the spelling is back to ui32.
    assert_eq!(t.to_string(), "tensor<3xui32>");
    let sh = quabla_lowering::stablehlo::export_module(&m).unwrap();
    assert!(
        sh.contains("tensor<3xui32>") && sh.contains("stablehlo.divide"),
        "{sh}"
    );
}

#[test]
fn unsigned_iota_and_constants() {
    use quabla_dialect::{ConstantOp, Literal};
    for d in [DType::U8, DType::U32] {
        let got = both(
            "iota",
            OpKind::Constant(ConstantOp::Iota {
                dim: 1,
                ty: TensorType::new(d, [2, 3]),
            }),
            &[],
        );
        assert_eq!(
            (0..6).map(|i| got.get_i64(i)).collect::<Vec<_>>(),
            vec![0, 1, 2, 0, 1, 2]
        );
    }
    let lit = Literal::from_i64s(
        TensorType::new(DType::U32, [3]),
        &[u32::MAX as i64, 0, 0x8000_0000],
    );
    let got = both(
        "constant",
        OpKind::Constant(ConstantOp::Constant { value: lit }),
        &[],
    );
    assert_eq!(got.as_slice::<u32>().unwrap(), &[u32::MAX, 0, 0x8000_0000]);
}
