//! `quabla-opt`: runs pass pipelines (quabla's Rust passes mixed with upstream MLIR passes)
//! on `.mlir` files, prints the result at a chosen level, and can run `@main` with the JIT
//! or the reference interpreter. Errors are diagnostics with locations and exit code 1.
//!
//! The driver is this library's [`opt_main`]: the `quabla-opt` binary (src/main.rs) calls it,
//! and so does the Python extension (python/src/opt.rs), whose `quabla-opt` console script
//! runs it in-process, so an installed wheel carries one copy of MLIR, not two.
use std::io::{Read, Write};

use melior::ir::Module as MlirModule;
use melior::pass::{PassIrPrintingOptions, PassManager};
use melior::{Context, StringRef};
use quabla_dialect::mlir::{import_module, new_context};
use quabla_compiler::{Caller, EmitKind};
use quabla_dialect::{ConstantOp, Literal, Module, OpKind, TensorType};
use quabla_runtime::{Buffer, CompileOptions};

const USAGE: &str = "usage: quabla-opt [FILE|-] [options]

Reads MLIR (quabla dialect in generic form, func.func, func.return) from FILE or stdin.

options:
  --pass-pipeline=PIPE     run PIPE: quabla passes and upstream passes mixed, e.g.
                           'builtin.module(quabla-inline,quabla-canonicalize)'
  --emit=quabla|linalg|llvm|ptx|stablehlo|mlx
                           print the module after the pipeline (quabla, default), lowered to
                           linalg (convert-quabla-to-linalg), or to the LLVM dialect (CPU pipeline),
                           or for CUDA (ptx: the launches of @main and each kernel's PTX),
                           or exported to StableHLO (runs quabla-autodiff, quabla-inline,
                           quabla-canonicalize and quabla-symbol-dce after the pipeline, then
                           convert-quabla-to-stablehlo; a --pass-pipeline that ends with
                           convert-quabla-to-stablehlo selects the export and runs as written);
                           mlx prints the Python source (mlx.core calls) that the mlx executor
                           runs, after the same default pipeline (terminal pass name
                           convert-quabla-to-mlx)
  --print-ir-after-all     print the IR after every pass (to stderr); consecutive quabla
                           passes run as one pass, so the dump follows each such group
  --print-pipeline         print the pass pipeline run and the compile pipeline object used
                           (the process-wide default one, or none) to stderr
  --verify-each[=false]    verify the IR after each pass (default true)
  --split-input-file       process chunks separated by '// -----' independently
  --verify-diagnostics     check '// expected-error@+N {{text}}' annotations instead of printing
  --run                    run @main with the JIT and print its outputs, one per line
  --interpret              run @main with the reference interpreter instead of the JIT
  --arg=LITERAL            an input for --run, as an MLIR dense literal, in order:
                           --arg='dense<[1.0, 2.0]> : tensor<2xf32>'
  --random-args[=SEED]     fill every --run input with pseudo-random values
  --opt-level=N            LLVM optimisation level for --run (0-3, default 2)
  --cuda-arch=sm_XY        GPU architecture of --emit=ptx (default sm_90)
  --list-passes            list quabla's passes
  --print-irdl             print the IRDL definition of the dialect
  --print-pyi              print the type stubs of the extension module quabla._quabla";

#[derive(Default)]
struct Opts {
    file: Option<String>,
    pipeline: Option<String>,
    emit: String,
    print_after_all: bool,
    print_pipeline: bool,
    verify_each: bool,
    split: bool,
    verify_diags: bool,
    run: bool,
    interpret: bool,
    args: Vec<String>,
    random: Option<u64>,
    opt_level: usize,
    cuda_arch: Option<String>,
}

/// The options of `args`, or `None` when an informational option (`--help`, `--list-passes`,
/// `--print-irdl`, `--print-pyi`) already printed what was asked.
fn parse_args(args: &[String]) -> Result<Option<Opts>, String> {
    let mut o = Opts { emit: "quabla".into(), verify_each: true, opt_level: 2, ..Default::default() };
    for a in args.iter().skip(1).cloned() {
        let (k, v) = match a.split_once('=') {
            Some((k, v)) => (k.to_string(), Some(v.to_string())),
            None => (a.clone(), None),
        };
        match k.as_str() {
            "--pass-pipeline" => o.pipeline = Some(v.ok_or("--pass-pipeline needs a value")?),
            "--emit" => {
                let e = v.ok_or("--emit needs a value")?;
                quabla_compiler::emitter(&e).map_err(|e| e.to_string())?;
                o.emit = e;
            }
            "--print-ir-after-all" => o.print_after_all = true,
            "--print-pipeline" => o.print_pipeline = true,
            "--verify-each" => o.verify_each = v.as_deref() != Some("false"),
            "--split-input-file" => o.split = true,
            "--verify-diagnostics" => o.verify_diags = true,
            "--run" => o.run = true,
            "--interpret" => {
                o.run = true;
                o.interpret = true
            }
            "--arg" => o.args.push(v.ok_or("--arg needs a value")?),
            "--random-args" => o.random = Some(v.map(|s| s.parse().map_err(|_| format!("--random-args: bad seed `{s}`"))).transpose()?.unwrap_or(0)),
            "--opt-level" => o.opt_level = v.and_then(|s| s.parse().ok()).filter(|n| *n <= 3).ok_or("--opt-level needs 0..3")?,
            "--cuda-arch" => o.cuda_arch = Some(v.ok_or("--cuda-arch needs a value (sm_80, sm_90, ...)")?),
            "--list-passes" => {
                for p in quabla_passes::passes() {
                    let opts = if p.options.is_empty() { String::new() } else { format!(" {{{}}}", p.options) };
                    println!("  {}{opts}: {}", p.name, p.summary);
                }
                for e in quabla_compiler::emitters() {
                    if let Some(name) = e.pass {
                        println!("  {name}: {}", e.summary);
                    }
                }
                return Ok(None);
            }
            "--print-irdl" => {
                print!("{}", quabla_dialect::ops::irdl_text());
                return Ok(None);
            }
            "--print-pyi" => {
                print!("{}", pyi_text());
                return Ok(None);
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(None);
            }
            s if s.starts_with('-') && s != "-" => return Err(format!("unknown option `{s}`\n{USAGE}")),
            _ => {
                if o.file.is_some() {
                    return Err("only one input file is accepted".into());
                }
                o.file = Some(a);
            }
        }
    }
    Ok(Some(o))
}

/// The type stubs of the extension module `quabla._quabla` (`--print-pyi`, checked in as
/// `python/quabla/_quabla.pyi`): the hand-written part (python/stubs/extension.pyi: the Rust
/// classes and functions of python/src, with the Tensor methods of quabla/_tensor.py that
/// scripts/gen_stubs.py writes) and the op builder `Op` generated from the op table
/// (`quabla_dialect::ops::pyi_text`). A test checks the checked-in file; `mypy.stubtest`
/// checks it against the built module (tests/wheel/test_stubs.py).
pub fn pyi_text() -> String {
    const HEADER: &str = "# Generated by quabla-opt --print-pyi from python/stubs/extension.pyi and the op table;\n\
         # do not edit. Regenerate with `cargo run -p quabla-opt -- --print-pyi > python/quabla/_quabla.pyi`.\n\
         \"\"\"Type stubs of the extension module: its classes and functions, and the op builder ``Op``\n\
         typed from the op table (one overload per keyword list; keywords are the ops' MLIR attribute\n\
         names).\"\"\"\n\n";
    let extension = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../python/stubs/extension.pyi"));
    format!("{HEADER}{extension}{}", quabla_dialect::ops::pyi_text())
}

/// `loc("f.mlir":3:5)` -> `f.mlir:3:5`.
fn plain_loc(l: &str) -> String {
    let s = l.strip_prefix("loc(").and_then(|r| r.strip_suffix(')')).unwrap_or(l);
    let s = match s.strip_prefix("callsite(") {
        Some(r) => r.split(" at ").next().unwrap_or(r),
        None => s,
    };
    if let Some(r) = s.strip_prefix('"') {
        if let Some((file, rest)) = r.split_once('"') {
            return format!("{file}{rest}");
        }
    }
    s.to_string()
}

fn line_of(loc: &str) -> Option<usize> {
    let mut it = loc.rsplitn(3, ':');
    let _col = it.next()?;
    it.next()?.parse().ok()
}

type Diags = std::rc::Rc<std::cell::RefCell<Vec<(String, String)>>>;

/// The text of a panic payload (`panic!` with a literal or a formatted message).
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    match (payload.downcast_ref::<&str>(), payload.downcast_ref::<String>()) {
        (Some(s), _) => s.to_string(),
        (None, Some(s)) => s.clone(),
        (None, None) => "a panic without a message".to_string(),
    }
}

/// Runs `quabla-opt` on `args` (`args[0]` is the program name, as `std::env::args()`) and
/// returns the process exit code: 0 on success, 1 on errors (diagnostics on stderr). A panic
/// anywhere below is the last line of defence: reported as `quabla-opt: internal error, please
/// report: <message> (at <file:line>)` on stderr with code 1, never an abort or Rust's default
/// panic output (the previous panic hook is restored afterwards). Stdout is flushed before it
/// returns (the Python console script exits through Python, not Rust's runtime).
pub fn opt_main(args: &[String]) -> i32 {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|info| {
        let at = info.location().map(|l| format!(" (at {}:{})", l.file(), l.line())).unwrap_or_default();
        eprintln!("quabla-opt: internal error, please report: {}{at}", panic_message(info.payload()));
    }));
    let code = std::panic::catch_unwind(|| run(args)).unwrap_or(1);
    std::panic::set_hook(previous);
    let _ = std::io::stdout().flush();
    code
}

fn run(args: &[String]) -> i32 {
    let o = match parse_args(args) {
        Ok(Some(o)) => o,
        Ok(None) => return 0,
        Err(e) => {
            eprintln!("quabla-opt: {e}");
            return 1;
        }
    };
    let (name, text) = match o.file.as_deref() {
        None | Some("-") => {
            let mut s = String::new();
            if std::io::stdin().read_to_string(&mut s).is_err() {
                eprintln!("quabla-opt: cannot read stdin");
                return 1;
            }
            ("<stdin>".to_string(), s)
        }
        Some(f) => match std::fs::read_to_string(f) {
            Ok(s) => (f.to_string(), s),
            Err(e) => {
                eprintln!("quabla-opt: cannot read {f}: {e}");
                return 1;
            }
        },
    };
    let context = new_context();
    let diags: Diags = Default::default();
    let sink = diags.clone();
    let verify_mode = o.verify_diags;
    context.attach_diagnostic_handler(move |d| {
        let loc = plain_loc(&d.location().to_string());
        let sev = match d.severity() {
            melior::diagnostic::DiagnosticSeverity::Error => "error",
            melior::diagnostic::DiagnosticSeverity::Warning => "warning",
            melior::diagnostic::DiagnosticSeverity::Note => "note",
            melior::diagnostic::DiagnosticSeverity::Remark => "remark",
        };
        let msg = d.to_string();
        if !verify_mode {
            eprintln!("{loc}: {sev}: {msg}");
        }
        if sev == "error" {
            sink.borrow_mut().push((loc, msg));
        }
        true
    });
    let chunks: Vec<&str> = if o.split { text.split("// -----").collect() } else { vec![&text] };
    let mut ok = true;
    for (i, chunk) in chunks.iter().enumerate() {
        if i > 0 && !o.verify_diags {
            println!("// -----");
        }
        // Keep line numbers of the whole file: pad the chunk with the newlines before it.
        let offset: usize = chunks[..i].iter().map(|c| c.matches('\n').count()).sum();
        let padded = format!("{}{}", "\n".repeat(offset), chunk);
        diags.borrow_mut().clear();
        let r = process(&context, &o, &name, &padded);
        if o.verify_diags {
            ok &= check_expected(&padded, &diags.borrow());
        } else if let Err(e) = r {
            if !e.is_empty() {
                eprintln!("{name}: error: {e}");
            }
            ok = false;
        }
    }
    if ok {
        0
    } else {
        1
    }
}

/// Compares emitted errors with `expected-error` annotations. Returns true when they match.
fn check_expected(text: &str, got: &[(String, String)]) -> bool {
    let mut expected: Vec<(usize, String)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some(p) = line.find("expected-error") else { continue };
        let rest = &line[p + "expected-error".len()..];
        let (delta, rest) = match rest.strip_prefix('@') {
            Some(r) => {
                let end = r.find(|c: char| c.is_whitespace() || c == '{').unwrap_or(r.len());
                (r[..end].parse::<i64>().unwrap_or(0), &r[end..])
            }
            None => (0, rest),
        };
        let msg = rest.split_once("{{").and_then(|(_, r)| r.split_once("}}")).map(|(m, _)| m.to_string()).unwrap_or_default();
        expected.push(((i as i64 + 1 + delta) as usize, msg));
    }
    let mut ok = true;
    let mut used = vec![false; got.len()];
    for (line, msg) in &expected {
        let hit = got.iter().enumerate().position(|(k, (l, m))| !used[k] && line_of(l) == Some(*line) && m.contains(msg.as_str()));
        match hit {
            Some(k) => used[k] = true,
            None => {
                eprintln!("error: expected error at line {line} not produced: {msg}");
                ok = false;
            }
        }
    }
    for (k, (l, m)) in got.iter().enumerate() {
        if !used[k] {
            eprintln!("{l}: error: unexpected error: {m}");
            ok = false;
        }
    }
    ok
}

fn parse_module<'c>(ctx: &'c Context, name: &str, text: &str) -> Option<MlirModule<'c>> {
    // Like mlir-opt, accept top-level functions without an explicit `module { }`: wrap them
    // on the first line so that line numbers in diagnostics stay those of the file.
    let has_module = text.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with("//")).is_some_and(|l| l.starts_with("module") || l.starts_with("\"builtin.module\""));
    let wrapped;
    let text = if has_module {
        text
    } else {
        wrapped = format!("module {{{text}\n}}");
        &wrapped
    };
    let op = unsafe { mlir_sys::mlirOperationCreateParse(ctx.to_raw(), StringRef::new(text).to_raw(), StringRef::new(name).to_raw()) };
    if op.ptr.is_null() {
        return None;
    }
    let op = unsafe { melior::ir::Operation::from_raw(op) };
    match MlirModule::from_operation(op) {
        Some(m) => Some(m),
        None => {
            eprintln!("{name}: error: expected a builtin.module at the top level");
            None
        }
    }
}

/// Runs the pipeline and the requested output on one module. Errors already reported
/// through diagnostics come back as an empty string.
fn process(ctx: &Context, o: &Opts, name: &str, text: &str) -> Result<(), String> {
    let mut module = parse_module(ctx, name, text).ok_or_else(String::new)?;
    // Verify first: the input must be valid quabla IR before any pass touches it.
    let pm = PassManager::new(ctx);
    pm.enable_verifier(o.verify_each);
    if o.print_after_all {
        // MLIR refuses IR printing on a multi-threaded context (an LLVM fatal error).
        ctx.enable_multi_threading(false);
        pm.enable_ir_printing(&PassIrPrintingOptions { before_all: false, after_all: true, module_scope: true, on_change: false, on_failure: false, flags: Default::default(), tree_printing_path: Default::default() });
    }
    let plan = quabla_compiler::opt_plan(o.pipeline.as_deref(), &o.emit).map_err(|e| e.to_string())?;
    if o.print_pipeline {
        let used = match quabla_compiler::pipeline_used(Caller::Opt) {
            None => "none".to_string(),
            Some(p) if p.is_default() => format!("default ({})", p.text()),
            Some(p) => format!("custom ({})", p.text()),
        };
        eprintln!("quabla-opt: pass pipeline: {}", plan.pipeline);
        eprintln!("quabla-opt: compile pipeline: {used}");
    }
    quabla_passes::add_pipeline(&pm, &plan.pipeline).map_err(|e| e.to_string())?;
    pm.run(&mut module).map_err(|_| String::new())?;
    let copts = CompileOptions { opt_level: o.opt_level, cuda_arch: o.cuda_arch.clone(), ..Default::default() };
    let text = match plan.emitter.kind {
        EmitKind::Mlir { .. } if !o.run => {
            println!("{}", module.as_operation());
            return Ok(());
        }
        EmitKind::Mlir { .. } => None,
        EmitKind::Text(emit) => Some(emit),
    };
    let m = import_module(module.as_operation()).map_err(|d| {
        d.emit(ctx);
        String::new()
    })?;
    if let Some(emit) = text {
        print!("{}", emit(&m, &copts).map_err(|e| e.to_string())?);
        if !o.run {
            return Ok(());
        }
    }
    run_main(ctx, o, &m, &copts)
}

fn parse_literal(ctx: &Context, s: &str) -> Result<Literal, String> {
    let ty_text = s.rsplit_once(':').map(|(_, t)| t.trim()).ok_or_else(|| format!("--arg `{s}`: expected `dense<...> : tensor<...>`"))?;
    let ty = TensorType::parse(ty_text)?;
    let text = format!("func.func @f() -> {ty} {{\n  %0 = \"quabla.constant\"() {{value = {s}}} : () -> {ty}\n  return %0 : {ty}\n}}");
    let m = MlirModule::parse(ctx, &text).ok_or_else(|| format!("--arg `{s}` is not a valid dense literal"))?;
    let imported = import_module(m.as_operation()).map_err(|d| d.message)?;
    match &imported.funcs[0].ops[0].kind {
        OpKind::Constant(ConstantOp::Constant { value }) => Ok(value.clone()),
        _ => Err("unreachable".into()),
    }
}

/// A pseudo-random input of type `ty`, written straight into a checked, fallibly allocated
/// buffer (a too big or unallocatable parameter type is an error, not an abort).
fn random_buffer(ty: &TensorType, seed: &mut u64) -> Result<Buffer, String> {
    use quabla_dialect::DType;
    let mut b = Buffer::try_zeros(ty.clone()).map_err(|e| format!("--random-args: {e}"))?;
    let size = ty.dtype.size();
    let dst = b.bytes_mut().ok_or("--random-args: a fresh host buffer is not writable")?;
    for c in dst.chunks_exact_mut(size) {
        *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let u = (*seed >> 11) as f64 / (1u64 << 53) as f64;
        match ty.dtype {
            DType::I1 => c[0] = (u < 0.5) as u8,
            DType::I32 => c.copy_from_slice(&(((u * 20.0).floor() - 10.0) as i32).to_le_bytes()),
            DType::I64 => c.copy_from_slice(&(((u * 20.0).floor() - 10.0) as i64).to_le_bytes()),
            DType::U8 => c[0] = (u * 256.0) as u8,
            DType::U32 => c.copy_from_slice(&((u * 4294967296.0) as u32).to_le_bytes()),
            DType::F32 => c.copy_from_slice(&((u * 4.0 - 2.0) as f32).to_le_bytes()),
            DType::F64 => c.copy_from_slice(&(u * 4.0 - 2.0).to_le_bytes()),
        }
    }
    Ok(b)
}

/// Runs `@main` on the `--arg`/`--random-args` inputs with the executor of device `cpu`, or
/// `interp` for `--interpret`, and prints each output.
fn run_main(ctx: &Context, o: &Opts, m: &Module, copts: &CompileOptions) -> Result<(), String> {
    let f = m.func("main").ok_or("--run: the module has no @main")?;
    let params = f.param_types();
    let inputs: Vec<Buffer> = if let Some(seed) = o.random {
        let mut s = seed.wrapping_add(0x9E3779B97F4A7C15);
        params.iter().map(|t| random_buffer(t, &mut s)).collect::<Result<_, _>>()?
    } else {
        if o.args.len() != params.len() {
            return Err(format!("--run: @main takes {} arguments, {} --arg given", params.len(), o.args.len()));
        }
        let mut v = Vec::new();
        for (i, (a, t)) in o.args.iter().zip(&params).enumerate() {
            let l = parse_literal(ctx, a)?;
            if &l.ty != t {
                return Err(format!("--arg {i}: type {} does not match @main parameter {i} of type {t}", l.ty));
            }
            v.push(Buffer::from_bytes(l.ty.clone(), &l.bytes).map_err(|e| format!("--arg {i}: {e}"))?);
        }
        v
    };
    let device = if o.interpret { "interp" } else { quabla_runtime::DEFAULT_DEVICE };
    let exe = quabla_runtime::executor(device).map_err(|e| e.to_string())?;
    let refs: Vec<&Buffer> = inputs.iter().collect();
    let outs = exe.compile(m, "main", copts).map_err(|e| e.to_string())?.run(&refs).map_err(|e| e.to_string())?;
    for b in outs {
        println!("{}", b.to_literal().to_mlir());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn pyi_file_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../python/quabla/_quabla.pyi");
        let on_disk = std::fs::read_to_string(path).unwrap_or_default();
        assert!(on_disk == super::pyi_text(), "python/quabla/_quabla.pyi is stale: regenerate with `cargo run -p quabla-opt -- --print-pyi > python/quabla/_quabla.pyi`");
    }
}
