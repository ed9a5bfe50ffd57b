//! The keys of `qb.jit`'s Rust fast path: a call's positional arguments written as bytes
//! (their pytree structure, the type of each Tensor leaf, the value of each static leaf)
//! beside the Tensor leaves in `qb.tree` order, the order of the program's inputs.
//!
//! Encoding: a Tensor is `T`, its dtype code, its rank (u32) and its dims (i64, little endian); a
//! tuple `(` and a list `[` with their length, then their items; a dict with string keys
//! `{` and its length, then per key in sorted order (as `qb.tree` traverses it) the key's
//! length and UTF-8 bytes and the value; `None` is `N`; the static leaves a cache key holds
//! by value: `b` bool, `i` int (i64), `f` float (its bits: `0.0` and `-0.0` differ, as
//! `jit._Exact` has them), `s` str. A NumPy array in a dynamic position is keyed as the Tensor
//! the Python path makes of it (`tensor::ndarray_type`) and becomes that Tensor (a copy) once
//! the call is served ([`import_arrays`]). Anything else (0-d arrays and the dtypes that path
//! widens, Python numbers in dynamic positions, namedtuples and registered nodes, keyword
//! arguments) has no key: the call goes to the Python path.
//!
//! Invariant: a key is registered ([`registration`]) only when every leaf of the dynamic
//! positions is a Tensor or such an array and every leaf of the static positions a value. Calls are keyed
//! without knowing which positions are static ([`call`]); a key that matches a registered one
//! has the same number of arguments, hence the same static positions, and the same kind of
//! leaf at each place, so it is served only where the registration was valid.
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use quabla_dialect::TensorType;

use crate::tensor::{code, ndarray_type, Tensor};

/// A dynamic leaf of a call: a Tensor, or a NumPy array and the type of the Tensor it
/// becomes ([`import_arrays`]).
pub enum Leaf<'py> {
    Tensor(Bound<'py, Tensor>),
    Array(Bound<'py, PyAny>, TensorType),
}

impl Leaf<'_> {
    /// The type of the program input this leaf is.
    pub fn ty(&self) -> TensorType {
        match self {
            Leaf::Tensor(t) => t.get().buf.ty().clone(),
            Leaf::Array(_, ty) => ty.clone(),
        }
    }
}

/// Replaces the arrays among a served call's `leaves` by their Tensors (copies,
/// `tensor::from_buffer`, as the Python path imports them); Tensor leaves stay as they are
/// (no allocation on the per-call path when there is no array).
pub fn import_arrays<'py>(py: Python<'py>, leaves: &mut [Leaf<'py>]) -> PyResult<()> {
    for l in leaves.iter_mut() {
        if let Leaf::Array(a, _) = l {
            *l = Leaf::Tensor(crate::tensor::from_buffer(py, a, None)?.into_bound(py));
        }
    }
    Ok(())
}

/// Writes the key of a Tensor leaf of type `ty`.
fn tensor_key(key: &mut Vec<u8>, ty: &TensorType) {
    key.push(b'T');
    key.push(code(ty.dtype) as u8);
    key.extend_from_slice(&(ty.shape.len() as u32).to_le_bytes());
    for d in &ty.shape {
        key.extend_from_slice(&d.to_le_bytes());
    }
}

/// What a leaf may be where it is met.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Allow {
    /// Tensors and static values (a call: positions are not known to be static or not).
    Any,
    /// Tensors only (a dynamic position of a registration).
    Tensors,
    /// Static values only (a static position of a registration).
    Values,
}

/// Writes the key of `x` into `key` and its dynamic leaves into `leaves`; false when `x` has
/// no key under `allow`.
fn walk<'py>(x: &Bound<'py, PyAny>, allow: Allow, key: &mut Vec<u8>, leaves: &mut Vec<Leaf<'py>>) -> bool {
    if let Ok(t) = x.cast::<Tensor>() {
        if allow == Allow::Values {
            return false;
        }
        tensor_key(key, t.get().buf.ty());
        leaves.push(Leaf::Tensor(t.clone()));
        return true;
    }
    if allow != Allow::Values {
        if let Some(ty) = ndarray_type(x) {
            tensor_key(key, &ty);
            leaves.push(Leaf::Array(x.clone(), ty));
            return true;
        }
    }
    if let Ok(t) = x.cast_exact::<PyTuple>() {
        key.push(b'(');
        key.extend_from_slice(&(t.len() as u32).to_le_bytes());
        return t.iter().all(|c| walk(&c, allow, key, leaves));
    }
    if let Ok(l) = x.cast_exact::<PyList>() {
        key.push(b'[');
        key.extend_from_slice(&(l.len() as u32).to_le_bytes());
        return l.iter().all(|c| walk(&c, allow, key, leaves));
    }
    if let Ok(d) = x.cast_exact::<PyDict>() {
        let mut items: Vec<(Bound<'py, PyString>, Bound<'py, PyAny>)> = Vec::with_capacity(d.len());
        for (k, v) in d.iter() {
            let Ok(s) = k.cast_into_exact::<PyString>() else { return false };
            if s.to_str().is_err() {
                return false;
            }
            items.push((s, v));
        }
        // Python orders str by code point; UTF-8 byte order is the same order. (`to_str`
        // reads CPython's cached UTF-8: no copy on the call path.)
        items.sort_by(|a, b| a.0.to_str().unwrap_or_default().cmp(b.0.to_str().unwrap_or_default()));
        key.push(b'{');
        key.extend_from_slice(&(items.len() as u32).to_le_bytes());
        for (k, v) in &items {
            let k = k.to_str().unwrap_or_default();
            key.extend_from_slice(&(k.len() as u32).to_le_bytes());
            key.extend_from_slice(k.as_bytes());
            if !walk(v, allow, key, leaves) {
                return false;
            }
        }
        return true;
    }
    if x.is_none() {
        key.push(b'N');
        return true;
    }
    if allow == Allow::Tensors {
        return false;
    }
    if let Ok(b) = x.cast_exact::<PyBool>() {
        key.push(b'b');
        key.push(u8::from(b.is_true()));
        return true;
    }
    if let Ok(i) = x.cast_exact::<PyInt>() {
        let Ok(v) = i.extract::<i64>() else { return false };
        key.push(b'i');
        key.extend_from_slice(&v.to_le_bytes());
        return true;
    }
    if let Ok(f) = x.cast_exact::<PyFloat>() {
        key.push(b'f');
        key.extend_from_slice(&f.value().to_bits().to_le_bytes());
        return true;
    }
    if let Ok(s) = x.cast_exact::<PyString>() {
        let Ok(s) = s.to_str() else { return false };
        key.push(b's');
        key.extend_from_slice(&(s.len() as u32).to_le_bytes());
        key.extend_from_slice(s.as_bytes());
        return true;
    }
    false
}

/// Writes the key of positional arguments `args` into `key` and their Tensor leaves into
/// `leaves`, position `i` under `allow(i)`; false when they have no key.
fn walk_args<'py>(args: &Bound<'py, PyTuple>, allow: impl Fn(usize) -> Allow, key: &mut Vec<u8>, leaves: &mut Vec<Leaf<'py>>) -> bool {
    key.extend_from_slice(&(args.len() as u32).to_le_bytes());
    args.iter().enumerate().all(|(i, a)| walk(&a, allow(i), key, leaves))
}

/// Writes the key of a call's positional arguments `args` into `key` and their Tensor leaves
/// into `leaves`; false when the call has no key.
pub fn call<'py>(args: &Bound<'py, PyTuple>, key: &mut Vec<u8>, leaves: &mut Vec<Leaf<'py>>) -> bool {
    walk_args(args, |_| Allow::Any, key, leaves)
}

/// The key under which a call of `args` with static positions `statics` is served, and the
/// Tensor leaves of its dynamic positions, or None when such a call cannot be keyed.
pub fn registration<'py>(args: &Bound<'py, PyTuple>, statics: &[usize]) -> Option<(Vec<u8>, Vec<Leaf<'py>>)> {
    let (mut key, mut leaves) = (Vec::with_capacity(64), Vec::new());
    let allow = |i| if statics.contains(&i) { Allow::Values } else { Allow::Tensors };
    walk_args(args, allow, &mut key, &mut leaves).then_some((key, leaves))
}
