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

fn registry() -> &'static Mutex<(i64, HashMap<i64, HostFn>)> {
    static R: OnceLock<Mutex<(i64, HashMap<i64, HostFn>)>> = OnceLock::new();
    R.get_or_init(|| Mutex::new((0, HashMap::new())))
}

thread_local! {
    /// Operands delivered so far, per callback id, until the last one arrives.
    static PENDING: RefCell<HashMap<i64, Vec<Option<Arg>>>> = RefCell::new(HashMap::new());
}

/// Registers `f` and returns its id (ids start at 1 and are never reused in a process).
pub fn register(f: HostFn) -> i64 {
    let mut r = registry().lock().unwrap_or_else(|e| e.into_inner());
    r.0 += 1;
    let id = r.0;
    r.1.insert(id, f);
    id
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
        Some(f) => f(args),
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

/// Evaluates the family's op: delivers the operand, returns it.
pub(super) fn eval(xs: &[&Buffer], _ty: &TensorType, op: &CallbackOp) -> Result<Vec<Buffer>> {
    let CallbackOp::HostCallback { callback, index, count, batched } = op;
    deliver(*callback, *index, *count, Arg { value: xs[0].clone(), batched: batched.clone() });
    Ok(vec![xs[0].clone()])
}

#[cfg(test)]
mod tests {
    use super::*;
    use quabla_dialect::OpKind;

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
