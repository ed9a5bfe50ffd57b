//! Shared machinery for passes that rebuild a function body in one forward sweep:
//! a value substitution map (replaced values point at their replacement) and helpers to
//! find the defining op of a value and the constant a value holds.
use std::collections::HashMap;

use quabla_dialect::{Func, Literal, Op, OpKind, Value};

/// Maps each value to its replacement (identity by default), with path compression.
pub struct Subst {
    map: Vec<u32>,
}

impl Subst {
    pub fn new(f: &Func) -> Self {
        Subst { map: (0..f.types.len() as u32).collect() }
    }

    pub fn get(&mut self, v: Value) -> Value {
        let mut r = v.0;
        while (r as usize) < self.map.len() && self.map[r as usize] != r {
            r = self.map[r as usize];
        }
        let mut c = v.0;
        while (c as usize) < self.map.len() && self.map[c as usize] != r {
            let n = self.map[c as usize];
            self.map[c as usize] = r;
            c = n;
        }
        Value(r)
    }

    /// Makes `from` an alias of `to`.
    pub fn set(&mut self, from: Value, to: Value) {
        let i = from.0 as usize;
        if i >= self.map.len() {
            self.map.extend(self.map.len() as u32..=from.0);
        }
        self.map[i] = to.0;
    }

    /// Rewrites the operands of `op` through the map.
    pub fn apply(&mut self, op: &mut Op) {
        for v in op.operands.iter_mut() {
            *v = self.get(*v);
        }
    }

    /// Rewrites the function outputs through the map.
    pub fn apply_outputs(&mut self, f: &mut Func) {
        let outs: Vec<Value> = f.outputs.iter().map(|v| self.get(*v)).collect();
        f.outputs = outs;
    }
}

/// Constants defined in `ops`, by result value.
pub fn constants(ops: &[Op]) -> HashMap<Value, Literal> {
    ops.iter()
        .filter_map(|o| if let OpKind::Constant { value } = &o.kind { Some((o.results[0], value.clone())) } else { None })
        .collect()
}

/// Number of uses of every value (operands and outputs).
pub fn use_counts(f: &Func) -> Vec<usize> {
    let mut n = vec![0usize; f.types.len()];
    for o in &f.ops {
        for v in &o.operands {
            n[v.0 as usize] += 1;
        }
    }
    for v in &f.outputs {
        n[v.0 as usize] += 1;
    }
    n
}
