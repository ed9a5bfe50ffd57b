//! The pass registry: quabla's Rust passes by name, and pipeline strings that mix them with
//! upstream MLIR passes. MLIR's textual pipeline parser cannot name Rust passes, so a
//! pipeline is split at top-level commas; our names become external passes and each run of
//! other elements is handed to MLIR's parser (`mlirOpPassManagerAddPipeline`), in order.
use std::collections::BTreeMap;

use melior::ir::operation::OperationLike;
use melior::ir::r#type::TypeId;
use melior::ir::OperationRef;
use melior::pass::{create_external, ExternalPass, OperationPassManager, PassManager};
use melior::StringRef;
use quabla_dialect::mlir::{import_module, replace_module_body, Diag};
use quabla_dialect::Module;

use crate::simplify;

/// Options given as `name{key=value key2=value}`.
pub type PassOptions = BTreeMap<String, String>;

/// What a registered pass does to the module.
#[derive(Clone, Copy)]
pub enum Action {
    /// Transform the quabla-level module in place.
    Transform(fn(&mut Module, &PassOptions) -> Result<(), String>),
    /// Produce the new module text (a conversion to other dialects).
    Convert(fn(&Module, &PassOptions) -> Result<String, String>),
    /// Only import and verify.
    Verify,
}

/// A registered quabla pass.
pub struct PassInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub options: &'static str,
    pub action: Action,
}

/// The StableHLO export: its text is not MLIR this context can parse (StableHLO is not
/// registered), so it never runs inside a pass manager; quabla-opt calls its action on the
/// imported module after the pipeline and prints the text.
pub const STABLEHLO: &str = "convert-quabla-to-stablehlo";

#[repr(align(8))]
struct PassId;
static IDS: [PassId; 16] = [const { PassId }; 16];

fn no_opts(opts: &PassOptions, pass: &str) -> Result<(), String> {
    match opts.keys().next() {
        Some(k) => Err(format!("{pass}: unknown option `{k}`")),
        None => Ok(()),
    }
}

/// Every registered pass. Indices are stable within a build (they select the pass TypeId).
pub fn passes() -> &'static [PassInfo] {
    static PASSES: &[PassInfo] = &[
        PassInfo { name: "quabla-verify", summary: "verify every quabla op against its shape rule", options: "", action: Action::Verify },
        PassInfo {
            name: "quabla-autodiff",
            summary: "give every jvp/vjp transform function its derivative body, innermost first",
            options: "",
            action: Action::Transform(|m, o| {
                no_opts(o, "quabla-autodiff")?;
                crate::autodiff::autodiff(m)
            }),
        },
        PassInfo {
            name: "quabla-vmap",
            summary: "give every vmap transform function its batched body (expands every transform kind, innermost first)",
            options: "",
            action: Action::Transform(|m, o| {
                no_opts(o, "quabla-vmap")?;
                crate::autodiff::autodiff(m)
            }),
        },
        PassInfo {
            name: "quabla-inline",
            summary: "inline every quabla.call",
            options: "",
            action: Action::Transform(|m, o| {
                no_opts(o, "quabla-inline")?;
                simplify::inline::inline(m);
                Ok(())
            }),
        },
        PassInfo {
            name: "quabla-cse",
            summary: "merge identical ops",
            options: "",
            action: Action::Transform(|m, o| {
                no_opts(o, "quabla-cse")?;
                simplify::cse::cse(m);
                Ok(())
            }),
        },
        PassInfo {
            name: "quabla-fold",
            summary: "constant folding and algebraic identities",
            options: "",
            action: Action::Transform(|m, o| {
                no_opts(o, "quabla-fold")?;
                simplify::fold::fold(m);
                Ok(())
            }),
        },
        PassInfo {
            name: "quabla-dce",
            summary: "remove unused ops",
            options: "",
            action: Action::Transform(|m, o| {
                no_opts(o, "quabla-dce")?;
                simplify::dce::dce(m);
                Ok(())
            }),
        },
        PassInfo {
            name: "quabla-symbol-dce",
            summary: "remove private functions no public function reaches",
            options: "",
            action: Action::Transform(|m, o| {
                no_opts(o, "quabla-symbol-dce")?;
                simplify::dce::symbol_dce(m);
                Ok(())
            }),
        },
        PassInfo {
            name: "quabla-canonicalize",
            summary: "fold, cse and dce to a fixpoint",
            options: "",
            action: Action::Transform(|m, o| {
                no_opts(o, "quabla-canonicalize")?;
                simplify::canonicalize::canonicalize(m);
                Ok(())
            }),
        },
        PassInfo {
            name: "convert-quabla-to-linalg",
            summary: "lower quabla ops to linalg/tensor/arith/math",
            options: "abi=tensor|dps",
            action: Action::Convert(|m, o| {
                let abi = match o.get("abi").map(String::as_str) {
                    None | Some("tensor") => quabla_lowering::Abi::Tensor,
                    Some("dps") => quabla_lowering::Abi::Dps,
                    Some(v) => return Err(format!("convert-quabla-to-linalg: option abi must be `tensor` or `dps`, got `{v}`")),
                };
                if let Some(k) = o.keys().find(|k| *k != "abi") {
                    return Err(format!("convert-quabla-to-linalg: unknown option `{k}`"));
                }
                quabla_lowering::lower_module(m, abi).map_err(|e| e.to_string())
            }),
        },
        PassInfo {
            name: STABLEHLO,
            summary: "export to StableHLO text (terminal: quabla-opt --emit=stablehlo, or last in --pass-pipeline)",
            options: "",
            action: Action::Convert(|m, o| {
                no_opts(o, STABLEHLO)?;
                quabla_lowering::export_module(m).map_err(|e| e.to_string())
            }),
        },
    ];
    PASSES
}

pub fn find(name: &str) -> Option<(usize, &'static PassInfo)> {
    passes().iter().enumerate().find(|(_, p)| p.name == name)
}

/// Runs one registered pass on a module op: import (verifying), act, write back.
fn run_pass(info: &PassInfo, opts: &PassOptions, op: OperationRef, pass: ExternalPass) {
    // Keep the ContextRef alive: `to_ref` borrows it.
    let cref = op.context();
    let context = unsafe { cref.to_ref() };
    let module = match import_module(op) {
        Ok(m) => m,
        Err(d) => {
            d.emit(context);
            pass.signal_failure();
            return;
        }
    };
    let fail = |msg: String| {
        Diag { loc: Some(op.location().to_raw()), message: msg }.emit(context);
        pass.signal_failure();
    };
    let text = match info.action {
        Action::Verify => return,
        Action::Transform(f) => {
            let mut m = module;
            if let Err(e) = f(&mut m, opts) {
                return fail(e);
            }
            if let Err(e) = m.verify() {
                return fail(format!("{}: internal error: the pass produced invalid IR: {e}", info.name));
            }
            m.to_mlir()
        }
        Action::Convert(_) if info.name == STABLEHLO => {
            return fail(format!("{STABLEHLO} is terminal: StableHLO is not a dialect of this context, so no pass can follow it; use quabla-opt --emit=stablehlo or put it last in --pass-pipeline"));
        }
        Action::Convert(f) => match f(&module, opts) {
            Ok(t) => t,
            Err(e) => return fail(e),
        },
    };
    if let Err(e) = replace_module_body(context, op, &text) {
        fail(format!("{}: {e}", info.name));
    }
}

/// Parses `{a=1 b=2}`.
fn parse_options(s: &str) -> Result<PassOptions, String> {
    let mut o = PassOptions::new();
    for kv in s.split_whitespace() {
        let (k, v) = kv.split_once('=').ok_or_else(|| format!("malformed pass option `{kv}` (expected key=value)"))?;
        o.insert(k.to_string(), v.to_string());
    }
    Ok(o)
}

/// Splits at top-level commas.
fn split_top(s: &str) -> Vec<String> {
    let (mut depth, mut cur, mut out) = (0i32, String::new(), Vec::new());
    for c in s.chars() {
        match c {
            '(' | '{' => depth += 1,
            ')' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur).trim().to_string());
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

fn add_upstream(opm: OperationPassManager, elements: &str) -> Result<(), String> {
    unsafe extern "C" fn cb(s: mlir_sys::MlirStringRef, data: *mut std::ffi::c_void) {
        let out = unsafe { &mut *(data as *mut String) };
        out.push_str(unsafe { StringRef::from_raw(s) }.as_str().unwrap_or("?"));
    }
    let mut err = String::new();
    let r = unsafe { mlir_sys::mlirOpPassManagerAddPipeline(opm.to_raw(), StringRef::new(elements).to_raw(), Some(cb), &mut err as *mut String as *mut _) };
    if r.value != 0 {
        Ok(())
    } else {
        Err(if err.is_empty() { format!("invalid pass pipeline `{elements}`") } else { err })
    }
}

/// Appends `pipeline` (`builtin.module(a,b,...)` or `a,b,...`) to `pm`.
pub fn add_pipeline(pm: &PassManager, pipeline: &str) -> Result<(), String> {
    let p = pipeline.trim();
    let inner = match p.strip_prefix("builtin.module(") {
        Some(r) => r.strip_suffix(')').ok_or_else(|| format!("unbalanced parentheses in pipeline `{p}`"))?,
        None => p,
    };
    let mut pending: Vec<String> = Vec::new();
    let flush = |pending: &mut Vec<String>| -> Result<(), String> {
        if !pending.is_empty() {
            add_upstream(pm.as_operation_pass_manager(), &pending.join(","))?;
            pending.clear();
        }
        Ok(())
    };
    for el in split_top(inner) {
        let name = el.split(['{', '(']).next().unwrap_or("").trim().to_string();
        match find(&name) {
            Some((idx, info)) => {
                flush(&mut pending)?;
                let opts = match el.find('{') {
                    Some(i) => parse_options(el[i + 1..].trim_end().strip_suffix('}').ok_or_else(|| format!("unbalanced braces in `{el}`"))?)?,
                    None => PassOptions::new(),
                };
                let runner = move |op: OperationRef, pass: ExternalPass| run_pass(info, &opts, op, pass);
                pm.add_pass(create_external(runner, TypeId::create(&IDS[idx]), info.name, info.name, info.summary, "builtin.module", &[]));
            }
            None => pending.push(el),
        }
    }
    flush(&mut pending)
}
