//! The host-callback family: `host_callback` delivers its operand to the host function
//! registered under its `callback` id and returns the operand (docs/spec.md, host_callback).
//!
//! The registry is process-wide: [`register`] returns a fresh id for a function (the Python
//! front registers one per `qb.debug.print` site it traces); the ops of one callback deliver
//! operands `0..count` in program order on one thread, and operand `count - 1` runs the
//! function with all of them ([`deliver`]). The interpreter calls [`deliver`] from its eval;
//! the CPU runtime's `quabla_host_callback_<dtype>` symbols call it from compiled code. An id
//! with no registered function prints the operands to stdout (so programs written in the
//! dialect, run by `quabla-opt --run` or `--interpret`, show their values).
use std::cell::RefCell;
use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

use quabla_dialect::{CallbackOp, TensorType};

use super::Result;
use crate::buffer::Buffer;

/// One delivered operand: its value and its `batched` flags (one per vmap, outermost first).
#[derive(Clone, Debug)]
pub struct Arg {
    pub value: Buffer,
    pub batched: Vec<i64>,
}

/// A host function: runs with the operands of one callback (in `index` order).
pub type HostFn = Arc<dyn Fn(Vec<Arg>) + Send + Sync>;

/// A pure host function (`pure_callback`): runs with the delivered operands, the type the
/// program gives result 0 and its `batched` flags (one per vmap, outermost first: its leading
/// dims are the axes of the vmaps flagged 1); returns every result with those dims, or an
/// error message.
pub type PureFn = Arc<dyn Fn(Vec<Arg>, &TensorType, &[i64]) -> std::result::Result<Vec<Buffer>, String> + Send + Sync>;

/// A registered host function.
#[derive(Clone)]
enum Entry {
    /// Runs when its last operand arrives (`qb.debug.print`, `qb.debug.callback`).
    Effect(HostFn),
    /// Runs when its result 0 is fetched (`callback_result`), on the operands delivered last.
    Pure(PureFn),
}

type Registry = (i64, HashMap<i64, Entry>);

fn registry() -> &'static Mutex<Registry> {
    static R: OnceLock<Mutex<Registry>> = OnceLock::new();
    R.get_or_init(|| Mutex::new((0, HashMap::new())))
}

thread_local! {
    /// Operands delivered so far, per callback id, until the last one arrives.
    static PENDING: RefCell<HashMap<i64, Vec<Option<Arg>>>> = RefCell::new(HashMap::new());
    /// The complete operands of pure callbacks, until their result 0 is fetched.
    static READY: RefCell<HashMap<i64, Vec<Arg>>> = RefCell::new(HashMap::new());
    /// The results of each pure callback's last run.
    static RESULTS: RefCell<HashMap<i64, Vec<Buffer>>> = RefCell::new(HashMap::new());
}

fn insert(e: Entry) -> i64 {
    let mut r = registry().lock().unwrap_or_else(|e| e.into_inner());
    r.0 += 1;
    let id = r.0;
    r.1.insert(id, e);
    id
}

/// Registers `f` and returns its id (ids start at 1 and are never reused in a process).
pub fn register(f: HostFn) -> i64 {
    insert(Entry::Effect(f))
}

/// Registers the pure function `f` and returns its id (shared with [`register`]'s).
pub fn register_pure(f: PureFn) -> i64 {
    insert(Entry::Pure(f))
}

fn last_error() -> &'static Mutex<Option<String>> {
    static E: OnceLock<Mutex<Option<String>>> = OnceLock::new();
    E.get_or_init(|| Mutex::new(None))
}

/// Records the failure of a pure callback inside compiled code (which cannot unwind): the
/// first one is kept until [`take_error`] (the caller of the program raises it).
pub fn record_error(message: String) {
    let mut e = last_error().lock().unwrap_or_else(|e| e.into_inner());
    if e.is_none() {
        *e = Some(message);
    }
    FAILED.store(true, std::sync::atomic::Ordering::Release);
}

/// Whether a failure is recorded: one relaxed load on every program run (`take_error`).
static FAILED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The failure recorded since the last call, if any.
pub fn take_error() -> Option<String> {
    if !FAILED.load(std::sync::atomic::Ordering::Acquire) {
        return None;
    }
    FAILED.store(false, std::sync::atomic::Ordering::Release);
    last_error().lock().unwrap_or_else(|e| e.into_inner()).take()
}

/// Result `index` of pure callback `id`, which the program types `ty` with the vmap axes its
/// `batched` flags name leading: fetching result 0 runs the function on the operands
/// delivered last (none for a callback without operands); the others come from that run.
pub fn fetch(id: i64, index: i64, ty: &TensorType, batched: &[i64]) -> std::result::Result<Buffer, String> {
    if index == 0 {
        let args = READY.with(|r| r.borrow_mut().remove(&id)).unwrap_or_default();
        let f = registry().lock().unwrap_or_else(|e| e.into_inner()).1.get(&id).cloned();
        let Some(Entry::Pure(f)) = f else {
            return Err(format!("callback {id} is not a registered pure callback"));
        };
        let rs = f(args, ty, batched)?;
        RESULTS.with(|r| r.borrow_mut().insert(id, rs));
    }
    let r = RESULTS.with(|r| r.borrow().get(&id).and_then(|v| v.get(index.max(0) as usize).cloned()));
    let r = r.ok_or_else(|| format!("pure callback {id} returned no result {index}"))?;
    if r.ty() != ty {
        return Err(format!("result {index} of pure callback {id} has type {}, but the program expects {ty}", r.ty()));
    }
    Ok(r)
}

/// Delivers operand `index` of `count` of callback `id`; the last one runs the callback.
pub fn deliver(id: i64, index: i64, count: i64, arg: Arg) {
    let count = count.max(1) as usize;
    let ready = PENDING.with(|p| {
        let mut p = p.borrow_mut();
        let slots = p.entry(id).or_insert_with(|| vec![None; count]);
        slots.resize(count, None);
        if let Some(s) = slots.get_mut(index.max(0) as usize) {
            *s = Some(arg);
        }
        if index as usize + 1 >= count {
            p.remove(&id).map(|v| v.into_iter().flatten().collect::<Vec<Arg>>())
        } else {
            None
        }
    });
    let Some(args) = ready else { return };
    let f = registry().lock().unwrap_or_else(|e| e.into_inner()).1.get(&id).cloned();
    match f {
        Some(Entry::Effect(f)) => f(args),
        Some(Entry::Pure(_)) => {
            READY.with(|r| r.borrow_mut().insert(id, args));
        }
        None => print_args(id, &args),
    }
}

/// The default for an unregistered id: one line per callback on stdout.
fn print_args(id: i64, args: &[Arg]) {
    let vals: Vec<String> = args.iter().map(|a| a.value.try_to_literal().map(|l| l.to_mlir()).unwrap_or_else(|e| e.to_string())).collect();
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "quabla.host_callback {id}: {}", vals.join(", "));
    let _ = out.flush();
}

/// Evaluates the family's ops: `host_callback` delivers the operand and returns it;
/// `callback_result` fetches a result of a pure callback.
pub(super) fn eval(xs: &[&Buffer], _ty: &TensorType, op: &CallbackOp) -> Result<Vec<Buffer>> {
    match op {
        CallbackOp::HostCallback { callback, index, count, batched } => {
            deliver(*callback, *index, *count, Arg { value: xs[0].clone(), batched: batched.clone() });
            Ok(vec![xs[0].clone()])
        }
        CallbackOp::CallbackResult { callback, index, batched, ty } => match fetch(*callback, *index, ty, batched) {
            Ok(b) => Ok(vec![b]),
            Err(message) => Err(super::InterpError::CallbackFailed { callback: *callback, message }),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quabla_dialect::OpKind;

    #[test]
    fn pure_callbacks_run_at_their_first_fetch() {
        let calls: Arc<Mutex<usize>> = Arc::default();
        let c = calls.clone();
        let id = register_pure(Arc::new(move |args: Vec<Arg>, ty: &TensorType, flags: &[i64]| {
            *c.lock().unwrap() += 1;
            assert!(flags.is_empty());
            let x = args[0].value.get_f64(0);
            Ok(vec![Buffer::from_slice(&ty.shape, &[x * 2.0]).unwrap(), Buffer::from_slice(&[], &[x + 1.0]).unwrap()])
        }));
        let a = Buffer::from_slice(&[], &[1.5f64]).unwrap();
        crate::run_op(&OpKind::Callback(CallbackOp::HostCallback { callback: id, index: 0, count: 1, batched: vec![] }), &[&a]).unwrap();
        let ty = TensorType::new(quabla_dialect::DType::F64, Vec::<i64>::new());
        let fetch_op = |index| OpKind::Callback(CallbackOp::CallbackResult { callback: id, index, batched: vec![], ty: ty.clone() });
        assert_eq!(crate::run_op(&fetch_op(0), &[]).unwrap()[0].get_f64(0), 3.0);
        assert_eq!(crate::run_op(&fetch_op(1), &[]).unwrap()[0].get_f64(0), 2.5);
        assert_eq!(*calls.lock().unwrap(), 1);
        // A result the function did not return, and an id that is not a pure callback.
        assert!(matches!(crate::run_op(&fetch_op(2), &[]), Err(crate::InterpError::CallbackFailed { .. })));
        let other = OpKind::Callback(CallbackOp::CallbackResult { callback: 1 << 40, index: 0, batched: vec![], ty });
        assert!(matches!(crate::run_op(&other, &[]), Err(crate::InterpError::CallbackFailed { .. })));
    }

    #[test]
    fn delivers_in_order_and_returns_the_operand() {
        let seen: Arc<Mutex<Vec<Vec<f64>>>> = Arc::default();
        let s = seen.clone();
        let id = register(Arc::new(move |args: Vec<Arg>| s.lock().unwrap().push(args.iter().map(|a| a.value.get_f64(0)).collect())));
        let a = Buffer::from_slice(&[1], &[1.5f64]).unwrap();
        let b = Buffer::from_slice(&[], &[2.5f64]).unwrap();
        let op = |index| OpKind::Callback(CallbackOp::HostCallback { callback: id, index, count: 2, batched: vec![] });
        let r = crate::run_op(&op(0), &[&a]).unwrap();
        assert!(r[0].same_storage(&a));
        assert!(seen.lock().unwrap().is_empty());
        crate::run_op(&op(1), &[&b]).unwrap();
        assert_eq!(*seen.lock().unwrap(), vec![vec![1.5, 2.5]]);
    }
}
