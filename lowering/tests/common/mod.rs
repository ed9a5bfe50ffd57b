//! Shared test harness: runs lowered modules through stock `mlir-opt` with the CPU pipeline
//! (and `mlir-translate` to LLVM IR), and JIT-runs them with `mlir-runner` through a `@main`
//! driver that calls each case's DPS entry on constant inputs and prints every output element
//! (floats as their bit patterns) with the C runner utilities.
#![allow(dead_code)]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use quabla_dialect::{DType, Func, Literal, Module, OpKind, TensorType, Value};
use quabla_lowering::linalg::lower_module_tiles;
use quabla_lowering::{cpu_pipeline, Abi, Codegen, CpuOptions};

/// The directory of the LLVM 22 tools.
pub fn llvm_bin() -> PathBuf {
    let prefix = std::env::var("MLIR_SYS_220_PREFIX").unwrap_or_else(|_| "/usr/lib/llvm-22".into());
    PathBuf::from(prefix).join("bin")
}

fn llvm_lib() -> PathBuf {
    llvm_bin().parent().map(|p| p.join("lib")).unwrap_or_default()
}

/// Runs `tool args` with `input` on stdin; Ok(stdout) on success, Err(stderr) otherwise.
pub fn run_tool(tool: &str, args: &[String], input: &str) -> Result<String, String> {
    let path = llvm_bin().join(tool);
    let mut child = Command::new(&path)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e} (install mlir-22-tools or set MLIR_SYS_220_PREFIX)", path.display()));
    let mut stdin = child.stdin.take().expect("stdin");
    let text = input.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(text.as_bytes()));
    let out = child.wait_with_output().expect("wait for tool");
    let _ = writer.join();
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// Runs the CPU pipeline on `text` and translates the result to LLVM IR; returns the
/// LLVM-dialect module.
pub fn to_llvm(text: &str, opts: &CpuOptions) -> Result<String, String> {
    let llvm = run_tool("mlir-opt", &[format!("--pass-pipeline={}", cpu_pipeline(opts))], text)?;
    for bad in ["linalg.", "tensor.", "bufferization.", "memref.", "scf.", "math.", "arith.", "vector.", "unrealized_conversion_cast"] {
        if let Some(i) = llvm.find(bad) {
            let line = llvm[..i].rsplit('\n').next().unwrap_or("").to_string() + llvm[i..].split('\n').next().unwrap_or("");
            return Err(format!("`{bad}` left after the pipeline: {line}"));
        }
    }
    run_tool("mlir-translate", &["--mlir-to-llvmir".into()], &llvm)?;
    Ok(llvm)
}

/// Lowers `m` with `abi` for the CPU and checks that the pipeline takes it to LLVM (both
/// vectorize settings: plain math ops and loops, or polynomial kernels and tiled matmuls).
pub fn check_pipeline(what: &str, m: &Module, abi: Abi) {
    for vectorize in [false, true] {
        let (text, tiles) = lower_module_tiles(m, abi, Codegen { approx_math: vectorize, tile_matmuls: vectorize, target: &quabla_lowering::target::cpu::CPU_GENERATED, ..Codegen::default() }).unwrap_or_else(|e| panic!("{what}: lowering failed: {e}"));
        if let Err(e) = to_llvm(&text, &CpuOptions { vectorize, transform: !tiles.is_empty(), ..CpuOptions::default() }) {
            panic!("{what} ({abi:?}, vectorize={vectorize}): pipeline failed:\n{e}\n--- input ---\n{text}");
        }
    }
}

/// A one-function module `@f` applying `kind` to parameters of the given types.
pub fn one_op(kind: OpKind, params: &[TensorType]) -> Module {
    let mut f = Func::new("f", params);
    let ps = f.params.clone();
    let r = f.push(kind.clone(), &ps, None).unwrap_or_else(|e| panic!("building {}: {e}", kind.name()));
    f.outputs = r;
    Module { funcs: vec![f] }
}

/// Output elements as printed by the driver.
#[derive(Clone, Debug, PartialEq)]
pub enum Vals {
    F(Vec<f64>),
    I(Vec<i64>),
}

impl Vals {
    pub fn f(&self) -> &[f64] {
        match self {
            Vals::F(v) => v,
            Vals::I(_) => panic!("expected float output, got {self:?}"),
        }
    }
    pub fn i(&self) -> &[i64] {
        match self {
            Vals::I(v) => v,
            Vals::F(_) => panic!("expected integer output, got {self:?}"),
        }
    }
}

/// One JIT case: a public function with its constant inputs.
pub struct Case {
    pub func: Func,
    pub inputs: Vec<Literal>,
}

impl Case {
    /// A case applying one op to inputs (types taken from the literals).
    pub fn op(name: &str, kind: OpKind, inputs: Vec<Literal>) -> Case {
        let tys: Vec<TensorType> = inputs.iter().map(|l| l.ty.clone()).collect();
        let mut f = Func::new(name, &tys);
        let ps = f.params.clone();
        f.outputs = f.push(kind.clone(), &ps, None).unwrap_or_else(|e| panic!("{name}: building {}: {e}", kind.name()));
        Case { func: f, inputs }
    }

    /// A case from a function body builder.
    pub fn build(name: &str, inputs: Vec<Literal>, body: impl FnOnce(&mut Func, &[Value]) -> Vec<Value>) -> Case {
        let tys: Vec<TensorType> = inputs.iter().map(|l| l.ty.clone()).collect();
        let mut f = Func::new(name, &tys);
        let ps = f.params.clone();
        f.outputs = body(&mut f, &ps);
        Case { func: f, inputs }
    }
}

fn flat_memref(t: &TensorType) -> String {
    format!("memref<{}x{}>", t.num_elements(), t.dtype)
}

/// Writes the `@main` driver for `cases`.
fn driver(cases: &[Case]) -> String {
    let mut s = String::new();
    s += "  func.func private @printI64(i64)\n  func.func private @printNewline()\n";
    s += "  func.func @main() {\n    %c0 = arith.constant 0 : index\n    %c1 = arith.constant 1 : index\n";
    for (k, c) in cases.iter().enumerate() {
        let f = &c.func;
        let mut args = vec![];
        let mut tys = vec![];
        for (i, l) in c.inputs.iter().enumerate() {
            s += &format!("    %k{k}_i{i} = arith.constant {}\n", l.to_mlir());
            args.push(format!("%k{k}_i{i}"));
            tys.push(l.ty.to_string());
        }
        let outs = f.result_types();
        for (j, t) in outs.iter().enumerate() {
            let m = quabla_lowering::linalg::memref(t);
            s += &format!("    %k{k}_o{j} = memref.alloc() : {m}\n");
            args.push(format!("%k{k}_o{j}"));
            tys.push(m);
        }
        s += &format!("    func.call @{}({}) : ({}) -> ()\n", f.name, args.join(", "), tys.join(", "));
        for (j, t) in outs.iter().enumerate() {
            let m = quabla_lowering::linalg::memref(t);
            let fm = flat_memref(t);
            let o = format!("%k{k}_o{j}");
            let flat = match t.rank() {
                0 => {
                    s += &format!("    %k{k}_f{j} = memref.expand_shape {o} [] output_shape [1] : {m} into {fm}\n");
                    format!("%k{k}_f{j}")
                }
                1 => o.clone(),
                r => {
                    let g: Vec<String> = (0..r).map(|i| i.to_string()).collect();
                    s += &format!("    %k{k}_f{j} = memref.collapse_shape {o} [[{}]] : {m} into {fm}\n", g.join(", "));
                    format!("%k{k}_f{j}")
                }
            };
            let n = t.num_elements();
            let d = t.dtype;
            s += &format!("    %k{k}_n{j} = arith.constant {n} : index\n");
            s += &format!("    scf.for %k{k}_j{j} = %c0 to %k{k}_n{j} step %c1 {{\n");
            s += &format!("      %x = memref.load {flat}[%k{k}_j{j}] : {fm}\n");
            s += match d {
                DType::F32 => "      %b = arith.bitcast %x : f32 to i32\n      %w = arith.extui %b : i32 to i64\n",
                DType::F64 => "      %w = arith.bitcast %x : f64 to i64\n",
                DType::I1 => "      %w = arith.extui %x : i1 to i64\n",
                DType::I32 => "      %w = arith.extsi %x : i32 to i64\n",
                DType::I64 => "      %w = arith.maxsi %x, %x : i64\n",
                DType::U8 => "      %w = arith.extui %x : i8 to i64\n",
                DType::U32 => "      %w = arith.extui %x : i32 to i64\n",
            };
            s += "      func.call @printI64(%w) : (i64) -> ()\n      func.call @printNewline() : () -> ()\n    }\n";
        }
    }
    s += "    return\n  }\n";
    s
}

/// JIT-runs every case (public functions, plus the private `helpers`) through the DPS ABI and
/// the default CPU pipeline, with LLVM at `opt_level`, and returns each case's outputs.
pub fn jit(cases: &[Case], helpers: &[Func], opt_level: u8) -> Vec<Vec<Vals>> {
    jit_with(cases, helpers, opt_level, Codegen { approx_math: true, tile_matmuls: true, target: &quabla_lowering::target::cpu::CPU_GENERATED, ..Codegen::default() })
}

/// [`jit`] of the linalg forms `cg` asks for, e.g. the CUDA target's (every computation a
/// kernel-shaped loop nest, indices read inside them, `math.*` ops), run by the CPU pipeline:
/// a GPU target's forms checked on a machine without a GPU.
pub fn jit_with(cases: &[Case], helpers: &[Func], opt_level: u8, cg: Codegen) -> Vec<Vec<Vals>> {
    let mut funcs: Vec<Func> = cases.iter().map(|c| c.func.clone()).collect();
    funcs.extend(helpers.iter().cloned());
    let m = Module { funcs };
    let (mut text, tiles) = lower_module_tiles(&m, Abi::Dps, cg).unwrap_or_else(|e| panic!("lowering failed: {e}"));
    let end = text.rfind('}').expect("module end");
    text.truncate(end);
    // The driver prints memref types as the lowering does: unsigned types signless.
    text += &quabla_dialect::types::with_signless_spelling(|| driver(cases));
    text += "}\n";
    let llvm = to_llvm(&text, &CpuOptions { vectorize: true, transform: !tiles.is_empty(), ..CpuOptions::default() }).unwrap_or_else(|e| panic!("pipeline failed:\n{e}\n--- input ---\n{text}"));
    let lib = llvm_lib().join("libmlir_c_runner_utils.so");
    let args = [format!("-O{opt_level}"), "-e".into(), "main".into(), "-entry-point-result=void".into(), format!("-shared-libs={}", lib.display())];
    let out = run_tool("mlir-runner", &args, &llvm).unwrap_or_else(|e| panic!("mlir-runner failed:\n{e}\n--- input ---\n{text}"));
    let mut words = out.split_whitespace().map(|w| w.parse::<i64>().unwrap_or_else(|_| panic!("bad output word `{w}` in:\n{out}")));
    let mut res = vec![];
    for c in cases {
        let mut outs = vec![];
        for t in c.func.result_types() {
            let raw: Vec<i64> = (0..t.num_elements()).map(|_| words.next().unwrap_or_else(|| panic!("output too short:\n{out}"))).collect();
            outs.push(match t.dtype {
                DType::F32 => Vals::F(raw.iter().map(|&w| f32::from_bits(w as u32) as f64).collect()),
                DType::F64 => Vals::F(raw.iter().map(|&w| f64::from_bits(w as u64)).collect()),
                DType::I1 | DType::I32 | DType::I64 | DType::U8 | DType::U32 => Vals::I(raw),
            });
        }
        res.push(outs);
    }
    assert!(words.next().is_none(), "extra output:\n{out}");
    res
}

/// `Literal` of floats with the given shape.
pub fn fl(d: DType, shape: &[i64], v: &[f64]) -> Literal {
    let ty = TensorType::new(d, shape);
    assert_eq!(ty.num_elements(), v.len(), "literal size");
    Literal::from_f64s(ty, v)
}

/// `Literal` of integers (or bools) with the given shape.
pub fn il(d: DType, shape: &[i64], v: &[i64]) -> Literal {
    let ty = TensorType::new(d, shape);
    assert_eq!(ty.num_elements(), v.len(), "literal size");
    Literal::from_i64s(ty, v)
}

/// Values of a literal as f64 / i64.
pub fn lit_f(l: &Literal) -> Vec<f64> {
    (0..l.len()).map(|i| l.get_f64(i)).collect()
}
pub fn lit_i(l: &Literal) -> Vec<i64> {
    (0..l.len()).map(|i| l.get_i64(i)).collect()
}

/// Float equality that treats NaN as equal to NaN and tells -0.0 from 0.0 (when `tol` is 0),
/// else relative tolerance `tol`.
pub fn assert_close(what: &str, got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let ok = if w.is_nan() {
            g.is_nan()
        } else if tol == 0.0 {
            g.to_bits() == w.to_bits()
        } else if w.is_infinite() {
            g == w
        } else {
            (g - w).abs() <= tol * w.abs().max(f64::MIN_POSITIVE)
        };
        assert!(ok, "{what}: element {i}: got {g:e}, want {w:e} (tol {tol})\n got  {got:?}\n want {want:?}");
    }
}
