//! Shared machinery for passes that rebuild a function body in one forward sweep:
//! a value substitution map (replaced values point at their replacement) and helpers to
//! find the defining op of a value and the constant a value holds.
use std::collections::HashMap;

use quabla_dialect::{CallOp, ConstantOp, Func, Literal, Op, OpKind, Value};

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
        .filter_map(|o| if let OpKind::Constant(ConstantOp::Constant { value }) = &o.kind { Some((o.results[0], value.clone())) } else { None })
        .collect()
}

/// True when `ops` (regions included) contain a call.
pub fn has_call(ops: &[Op]) -> bool {
    let mut any = false;
    quabla_dialect::walk_ops(ops, &mut |o| any |= matches!(o.kind, OpKind::Call(CallOp::Call { .. })));
    any
}

/// Appends copies of `ops` of function `g` to `out`, with fresh values of `f` for every
/// result and region parameter (`map` takes `g`'s values to `f`'s and must hold the free
/// values of `ops`); ops without a location take `loc`.
pub fn clone_ops_into(f: &mut Func, g: &Func, ops: &[Op], map: &mut HashMap<Value, Value>, loc: &quabla_dialect::Loc, out: &mut Vec<Op>) {
    for gop in ops {
        let operands: Vec<Value> = gop.operands.iter().map(|v| map[v]).collect();
        let mut regions = Vec::with_capacity(gop.regions.len());
        for r in &gop.regions {
            let params: Vec<Value> = r.params.iter().map(|p| {
                let v = f.new_value(g.ty(*p).clone());
                map.insert(*p, v);
                v
            }).collect();
            let mut body_ops = Vec::new();
            clone_ops_into(f, g, &r.ops, map, loc, &mut body_ops);
            regions.push(quabla_dialect::Body { params, ops: body_ops, outputs: r.outputs.iter().map(|v| map[v]).collect() });
        }
        let results: Vec<Value> = gop.results.iter().map(|r| f.new_value(g.ty(*r).clone())).collect();
        for (a, b) in gop.results.iter().zip(&results) {
            map.insert(*a, *b);
        }
        out.push(Op { kind: gop.kind.clone(), operands, results, regions, loc: gop.loc.clone().or(loc.clone()) });
    }
}
