//! The pass registry: quabla's Rust passes by name, and pipeline strings that mix them with
//! upstream MLIR passes. MLIR's textual pipeline parser cannot name Rust passes, so a
//! pipeline is split at top-level commas into stages ([`plan`]): each run of consecutive
//! quabla passes becomes ONE external pass (one import with verification, the passes applied
//! in order on the in-memory IR, one final verify, one write-back), and each run of other
//! elements is handed to MLIR's parser (`mlirOpPassManagerAddPipeline`), in order.
//!
//! Invariants: a conversion (`convert-quabla-to-linalg`) ends its group, because what it
//! writes back is no longer quabla IR; `--print-ir-after-all` and `--verify-each` see a group
//! as one pass (the dump after a group is named by its passes joined with `,`). Each distinct
//! group name gets its own pass `TypeId`, interned for the life of the process, so any
//! number of passes and groups works. Exporters whose output is not MLIR of this context
//! (StableHLO) are not passes: they are emitters of the compiler crate.
use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, OnceLock};

use melior::ir::operation::OperationLike;
use melior::ir::r#type::TypeId;
use melior::ir::OperationRef;
use melior::pass::{create_external, ExternalPass, OperationPassManager, PassManager};
use melior::StringRef;
use quabla_dialect::mlir::{import_module, replace_module_body, Diag};
use quabla_dialect::{DialectError, Module};
use quabla_lowering::LowerError;

use crate::autodiff::AutodiffError;
use crate::simplify;

/// Options given as `name{key=value key2=value}`.
pub type PassOptions = BTreeMap<String, String>;

/// Errors of the registered passes and of pipeline strings.
#[derive(Debug, thiserror::Error)]
pub enum PassError {
    /// A pass got an option it does not have.
    #[error("{pass}: unknown option `{option}`")]
    UnknownOption { pass: &'static str, option: String },
    /// A pass option has a value outside its domain.
    #[error("{pass}: option {option} must be {expected}, got `{value}`")]
    BadOptionValue { pass: &'static str, option: &'static str, expected: &'static str, value: String },
    /// Transform expansion (quabla-autodiff, quabla-vmap) failed.
    #[error(transparent)]
    Autodiff(#[from] AutodiffError),
    /// A conversion pass could not lower the module.
    #[error(transparent)]
    Lower(#[from] LowerError),
    /// A pass (group) produced IR that fails verification: a bug in the pass.
    #[error("{pass}: internal error: the pass produced invalid IR: {source}")]
    InvalidResult { pass: String, source: DialectError },
    /// The module's new body did not parse back (a bug in the pass or the printer).
    #[error("{pass}: {message}")]
    WriteBack { pass: String, message: String },
    /// A `key=value` option list entry without `=`.
    #[error("malformed pass option `{0}` (expected key=value)")]
    MalformedOption(String),
    /// Unbalanced parentheses or braces in a pipeline string.
    #[error("unbalanced {what} in `{text}`")]
    Unbalanced { what: &'static str, text: String },
    /// MLIR's pipeline parser rejected a run of upstream elements.
    #[error("{0}")]
    Upstream(String),
    /// The name is not a registered quabla pass.
    #[error("unknown quabla pass `{0}`")]
    UnknownPass(String),
}

/// What a registered pass does to the module.
#[derive(Clone, Copy)]
pub enum Action {
    /// Transform the quabla-level module in place.
    Transform(fn(&mut Module, &PassOptions) -> Result<(), PassError>),
    /// Produce the new module text (a conversion to other dialects); ends its group.
    Convert(fn(&Module, &PassOptions) -> Result<String, PassError>),
    /// Only verify (the import of a group verifies every op against its shape rule).
    Verify,
}

/// A registered quabla pass.
pub struct PassInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub options: &'static str,
    pub action: Action,
}

fn no_opts(opts: &PassOptions, pass: &'static str) -> Result<(), PassError> {
    match opts.keys().next() {
        Some(k) => Err(PassError::UnknownOption { pass, option: k.clone() }),
        None => Ok(()),
    }
}

/// The value of `key`, the one option `pass` takes (`None` when absent); any other key is an error.
fn single_opt<'a>(opts: &'a PassOptions, pass: &'static str, key: &str) -> Result<Option<&'a str>, PassError> {
    match opts.keys().find(|k| *k != key) {
        Some(k) => Err(PassError::UnknownOption { pass, option: k.clone() }),
        None => Ok(opts.get(key).map(String::as_str)),
    }
}

/// `quabla-outline`'s `max-ops` (a positive integer; `outline::DEFAULT_MAX_OPS` when absent).
fn outline_max_ops(opts: &PassOptions) -> Result<usize, PassError> {
    const PASS: &str = "quabla-outline";
    let Some(v) = single_opt(opts, PASS, "max-ops")? else { return Ok(crate::outline::DEFAULT_MAX_OPS) };
    v.parse::<usize>().ok().filter(|&n| n > 0).ok_or_else(|| PassError::BadOptionValue { pass: PASS, option: "max-ops", expected: "a positive integer", value: v.to_string() })
}

/// Every registered pass.
pub fn passes() -> &'static [PassInfo] {
    static PASSES: &[PassInfo] = &[
        PassInfo { name: "quabla-verify", summary: "verify every quabla op against its shape rule", options: "", action: Action::Verify },
        PassInfo {
            name: "quabla-autodiff",
            summary: "give every jvp/vjp transform function its derivative body, innermost first",
            options: "",
            action: Action::Transform(|m, o| {
                no_opts(o, "quabla-autodiff")?;
                Ok(crate::autodiff::autodiff(m)?)
            }),
        },
        PassInfo {
            name: "quabla-vmap",
            summary: "give every vmap transform function its batched body (expands every transform kind, innermost first)",
            options: "",
            action: Action::Transform(|m, o| {
                no_opts(o, "quabla-vmap")?;
                Ok(crate::autodiff::autodiff(m)?)
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
            name: "quabla-outline",
            summary: "split functions longer than max-ops ops into private chunk functions called in sequence",
            options: "max-ops=N",
            action: Action::Transform(|m, o| {
                crate::outline::outline(m, outline_max_ops(o)?);
                Ok(())
            }),
        },
        PassInfo {
            name: "convert-quabla-to-linalg",
            summary: "lower quabla ops to linalg/tensor/arith/math",
            options: "abi=tensor|dps",
            action: Action::Convert(|m, o| {
                const PASS: &str = "convert-quabla-to-linalg";
                let abi = match single_opt(o, PASS, "abi")? {
                    None | Some("tensor") => quabla_lowering::Abi::Tensor,
                    Some("dps") => quabla_lowering::Abi::Dps,
                    Some(v) => return Err(PassError::BadOptionValue { pass: PASS, option: "abi", expected: "`tensor` or `dps`", value: v.to_string() }),
                };
                Ok(quabla_lowering::lower_module(m, abi)?)
            }),
        },
    ];
    PASSES
}

/// The registered pass named `name`.
pub fn find(name: &str) -> Option<&'static PassInfo> {
    passes().iter().find(|p| p.name == name)
}

/// Runs the transform (or verification) pass `name` on the in-memory IR, without MLIR.
/// Conversions produce text and are not run here (`PassError::UnknownPass` names them too).
pub fn run_in_memory(name: &str, m: &mut Module, opts: &PassOptions) -> Result<(), PassError> {
    match find(name).map(|p| p.action) {
        Some(Action::Transform(f)) => f(m, opts),
        Some(Action::Verify) => m.verify().map_err(|source| PassError::InvalidResult { pass: name.to_string(), source }),
        Some(Action::Convert(_)) | None => Err(PassError::UnknownPass(name.to_string())),
    }
}

/// One quabla pass of a pipeline with its options.
#[derive(Clone)]
pub struct Step {
    pub info: &'static PassInfo,
    pub opts: PassOptions,
}

/// A stage of a split pipeline.
#[derive(Clone)]
pub enum Stage {
    /// Consecutive quabla passes, run as one external pass.
    Quabla(Vec<Step>),
    /// Consecutive upstream elements, handed to MLIR's parser as one string.
    Upstream(String),
}

impl Stage {
    /// The stage's name: its pass names (or upstream elements) joined with `,`.
    pub fn name(&self) -> String {
        match self {
            Stage::Quabla(steps) => steps.iter().map(|s| s.info.name).collect::<Vec<_>>().join(","),
            Stage::Upstream(s) => s.clone(),
        }
    }
}

/// Parses `{a=1 b=2}`.
fn parse_options(s: &str) -> Result<PassOptions, PassError> {
    let mut o = PassOptions::new();
    for kv in s.split_whitespace() {
        let (k, v) = kv.split_once('=').ok_or_else(|| PassError::MalformedOption(kv.to_string()))?;
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

/// The elements of `pipeline` (`builtin.module(a,b,...)` or `a,b,...`), split at top-level
/// commas.
pub fn elements(pipeline: &str) -> Result<Vec<String>, PassError> {
    let p = pipeline.trim();
    let inner = match p.strip_prefix("builtin.module(") {
        Some(r) => r.strip_suffix(')').ok_or_else(|| PassError::Unbalanced { what: "parentheses", text: p.to_string() })?,
        None => p,
    };
    Ok(split_top(inner))
}

/// Splits `pipeline` into stages: runs of quabla passes (a conversion ends its run) and runs
/// of upstream elements.
pub fn plan(pipeline: &str) -> Result<Vec<Stage>, PassError> {
    let mut stages: Vec<Stage> = Vec::new();
    for el in elements(pipeline)? {
        let name = el.split(['{', '(']).next().unwrap_or("").trim().to_string();
        match find(&name) {
            Some(info) => {
                let opts = match el.find('{') {
                    Some(i) => parse_options(el[i + 1..].trim_end().strip_suffix('}').ok_or_else(|| PassError::Unbalanced { what: "braces", text: el.clone() })?)?,
                    None => PassOptions::new(),
                };
                let step = Step { info, opts };
                match stages.last_mut() {
                    Some(Stage::Quabla(steps)) if !matches!(steps.last().map(|s| s.info.action), Some(Action::Convert(_))) => steps.push(step),
                    _ => stages.push(Stage::Quabla(vec![step])),
                }
            }
            None => match stages.last_mut() {
                Some(Stage::Upstream(s)) => {
                    s.push(',');
                    s.push_str(&el);
                }
                _ => stages.push(Stage::Upstream(el)),
            },
        }
    }
    Ok(stages)
}

/// The storage behind a pass `TypeId` (MLIR identifies a pass by its address).
#[repr(align(8))]
pub struct PassId(#[allow(dead_code)] u8);

/// The `TypeId` storage of the external pass named `name`: one per distinct name, created on
/// first use and kept for the life of the process (so there is no cap on passes or groups).
pub fn pass_id(name: &str) -> &'static PassId {
    static IDS: OnceLock<Mutex<HashMap<String, &'static PassId>>> = OnceLock::new();
    let mut ids = IDS.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    ids.entry(name.to_string()).or_insert_with(|| Box::leak(Box::new(PassId(0))))
}

thread_local! {
    static IMPORTS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Number of module imports the quabla groups run so far on this thread (for tests: one per
/// group run).
pub fn imports_on_this_thread() -> usize {
    IMPORTS.with(|c| c.get())
}

/// Runs a group of quabla passes on a module op ([`run_group_inner`]). MLIR calls it through a
/// C frame, which a panic cannot unwind through (the process aborted: "panic in a function
/// that cannot unwind"): a panic of a pass is caught here and fails the pass (the panic hook
/// has reported it, e.g. quabla-opt's "internal error, please report").
fn run_group(name: &str, steps: &[Step], op: OperationRef, pass: ExternalPass) {
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_group_inner(name, steps, op, pass))).is_err() {
        pass.signal_failure();
    }
}

/// Import (verifying), apply each pass in order, verify once, write back once.
fn run_group_inner(name: &str, steps: &[Step], op: OperationRef, pass: ExternalPass) {
    // Keep the ContextRef alive: `to_ref` borrows it.
    let cref = op.context();
    let context = unsafe { cref.to_ref() };
    IMPORTS.with(|c| c.set(c.get() + 1));
    let mut module = match import_module(op) {
        Ok(m) => m,
        Err(d) => {
            d.emit(context);
            pass.signal_failure();
            return;
        }
    };
    let fail = |e: PassError| {
        Diag { loc: Some(op.location().to_raw()), message: e.to_string() }.emit(context);
        pass.signal_failure();
    };
    let mut changed = false;
    let mut text = None;
    for s in steps {
        match s.info.action {
            Action::Verify if changed => {
                if let Err(source) = module.verify() {
                    return fail(PassError::InvalidResult { pass: name.to_string(), source });
                }
            }
            Action::Verify => {}
            Action::Transform(f) => {
                if let Err(e) = f(&mut module, &s.opts) {
                    return fail(e);
                }
                changed = true;
            }
            Action::Convert(f) => match f(&module, &s.opts) {
                Ok(t) => text = Some(t),
                Err(e) => return fail(e),
            },
        }
    }
    let text = match text {
        Some(t) => t,
        None if changed => {
            if let Err(source) = module.verify() {
                return fail(PassError::InvalidResult { pass: name.to_string(), source });
            }
            module.to_mlir()
        }
        None => return,
    };
    if let Err(message) = replace_module_body(context, op, &text) {
        fail(PassError::WriteBack { pass: name.to_string(), message });
    }
}

fn add_upstream(opm: OperationPassManager, elements: &str) -> Result<(), PassError> {
    unsafe extern "C" fn cb(s: mlir_sys::MlirStringRef, data: *mut std::ffi::c_void) {
        let out = unsafe { &mut *(data as *mut String) };
        out.push_str(unsafe { StringRef::from_raw(s) }.as_str().unwrap_or("?"));
    }
    let mut err = String::new();
    let r = unsafe { mlir_sys::mlirOpPassManagerAddPipeline(opm.to_raw(), StringRef::new(elements).to_raw(), Some(cb), &mut err as *mut String as *mut _) };
    if r.value != 0 {
        Ok(())
    } else {
        Err(PassError::Upstream(if err.is_empty() { format!("invalid pass pipeline `{elements}`") } else { err }))
    }
}

/// Appends `pipeline` (`builtin.module(a,b,...)` or `a,b,...`) to `pm`: one external pass per
/// run of consecutive quabla passes, MLIR's parser for the rest.
pub fn add_pipeline(pm: &PassManager, pipeline: &str) -> Result<(), PassError> {
    for stage in plan(pipeline)? {
        match stage {
            Stage::Upstream(s) => add_upstream(pm.as_operation_pass_manager(), &s)?,
            Stage::Quabla(steps) => {
                let name = Stage::Quabla(steps.clone()).name();
                let id = TypeId::create(pass_id(&name));
                let summary = if steps.len() == 1 { steps[0].info.summary.to_string() } else { format!("quabla passes {name}, run as one pass") };
                let label = name.clone();
                let runner = move |op: OperationRef, pass: ExternalPass| run_group(&label, &steps, op, pass);
                pm.add_pass(create_external(runner, id, &name, &name, &summary, "builtin.module", &[]));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use melior::ir::Module as MlirModule;
    use quabla_dialect::mlir::new_context;

    use super::*;

    const PROGRAM: &str = r#"
func.func private @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "quabla.add"(%x, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = func.call @f(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "quabla.mul"(%0, %0) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %2 = "quabla.mul"(%0, %0) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %3 = "quabla.add"(%1, %2) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %3 : tensor<3xf32>
}
"#;

    fn names(stages: &[Stage]) -> Vec<String> {
        stages.iter().map(Stage::name).collect()
    }

    /// Runs `pipeline` on PROGRAM; returns the printed module and the imports it took.
    fn run(pipeline: &str) -> (String, usize) {
        let ctx = new_context();
        let mut m = MlirModule::parse(&ctx, PROGRAM).expect("parses");
        let pm = PassManager::new(&ctx);
        add_pipeline(&pm, pipeline).expect("valid pipeline");
        let before = imports_on_this_thread();
        pm.run(&mut m).expect("pipeline runs");
        (m.as_operation().to_string(), imports_on_this_thread() - before)
    }

    #[test]
    fn consecutive_quabla_passes_form_one_group() {
        let st = plan("builtin.module(quabla-verify,quabla-inline,quabla-cse,canonicalize,cse,quabla-dce,quabla-symbol-dce)").unwrap();
        assert_eq!(names(&st), ["quabla-verify,quabla-inline,quabla-cse", "canonicalize,cse", "quabla-dce,quabla-symbol-dce"]);
        // A conversion ends its group.
        let st = plan("quabla-canonicalize,convert-quabla-to-linalg{abi=dps},quabla-verify").unwrap();
        assert_eq!(names(&st), ["quabla-canonicalize,convert-quabla-to-linalg", "quabla-verify"]);
        match &st[0] {
            Stage::Quabla(steps) => assert_eq!(steps[1].opts.get("abi").map(String::as_str), Some("dps")),
            Stage::Upstream(_) => panic!("expected a quabla group"),
        }
    }

    #[test]
    fn a_group_imports_once() {
        let (out, imports) = run("builtin.module(quabla-verify,quabla-inline,quabla-cse,quabla-dce,quabla-symbol-dce)");
        assert_eq!(imports, 1);
        assert!(!out.contains("func.call") && !out.contains("@f("), "{out}");
        assert_eq!(out.matches("\"quabla.mul\"").count(), 1, "{out}");
        // An upstream pass between quabla passes splits them into two groups.
        let (_, imports) = run("builtin.module(quabla-inline,symbol-dce,quabla-cse)");
        assert_eq!(imports, 2);
    }

    #[test]
    fn no_cap_on_passes_or_groups() {
        // 40 distinct group names get 40 distinct TypeIds (the old registry had 16 slots).
        let ids: Vec<*const PassId> = (0..40).map(|i| pass_id(&format!("test-group-{i}")) as *const PassId).collect();
        let distinct: std::collections::HashSet<_> = ids.iter().collect();
        assert_eq!(distinct.len(), 40);
        assert_eq!(pass_id("test-group-3") as *const PassId, ids[3]);
        // A pipeline of 20 groups (separated by an upstream pass) with 20 distinct names runs.
        let all = ["quabla-inline", "quabla-cse", "quabla-fold", "quabla-dce", "quabla-symbol-dce"];
        let mut els = Vec::new();
        for i in 0..20 {
            els.push(format!("{},{}", all[i % 5], all[(i / 5 + i % 5 + 1) % 5]));
            els.push("canonicalize".to_string());
        }
        let pipeline = els.join(",");
        let groups = plan(&pipeline).unwrap().iter().filter(|s| matches!(s, Stage::Quabla(_))).count();
        assert_eq!(groups, 20);
        let (out, imports) = run(&pipeline);
        assert_eq!(imports, 20);
        assert!(out.contains("@main"), "{out}");
    }

    #[test]
    fn pass_errors_are_typed() {
        let mut m = Module::default();
        let mut o = PassOptions::new();
        o.insert("x".into(), "1".into());
        assert!(matches!(run_in_memory("quabla-cse", &mut m, &o), Err(PassError::UnknownOption { pass: "quabla-cse", .. })));
        assert!(matches!(run_in_memory("no-such-pass", &mut m, &PassOptions::new()), Err(PassError::UnknownPass(_))));
        let Some(PassInfo { action: Action::Convert(lower), .. }) = find("convert-quabla-to-linalg") else { panic!("registered conversion") };
        let mut o = PassOptions::new();
        o.insert("abi".into(), "c".into());
        let e = lower(&m, &o).unwrap_err();
        assert!(matches!(e, PassError::BadOptionValue { option: "abi", .. }));
        assert_eq!(e.to_string(), "convert-quabla-to-linalg: option abi must be `tensor` or `dps`, got `c`");
        assert!(matches!(plan("quabla-cse{abi}"), Err(PassError::MalformedOption(_))));
    }
}
