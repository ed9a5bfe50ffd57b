//! The vmap expansion: every batched value carries its batch dim first (inputs are moved
//! there on entry, outputs moved to their out_axes on exit); ops without a batched operand
//! are copied unchanged, the others go through their family's batching rule.
use std::collections::HashMap;

use quabla_dialect::{Func, Value, insert_axis};

use crate::rules::{self, RuleError, B};

pub fn vmap_func(g: &Func, name: &str, in_axes: &[Option<i64>], out_axes: &[Option<i64>], size: i64) -> Result<Func, RuleError> {
    let ptys: Vec<_> = g.param_types().iter().zip(in_axes).map(|(t, a)| insert_axis(t, *a, size)).collect();
    let mut f = Func::new(name, &ptys);
    let mut map: HashMap<Value, (Value, bool)> = HashMap::new();
    for (i, p) in g.params.iter().enumerate() {
        let v = f.params[i];
        let mut b = B { f: &mut f, loc: None };
        let entry = match in_axes[i] {
            Some(a) => (rules::move_axis(&mut b, v, a as usize, 0), true),
            None => (v, false),
        };
        map.insert(*p, entry);
    }
    for op in &g.ops {
        let xs: Vec<Value> = op.operands.iter().map(|v| map[v].0).collect();
        let batched: Vec<bool> = op.operands.iter().map(|v| map[v].1).collect();
        let mut b = B { f: &mut f, loc: op.loc.clone() };
        let outs = if batched.iter().any(|&x| x) {
            rules::batch(&mut b, op, &xs, &batched, size)?
        } else {
            let rs = b.f.push(op.kind.clone(), &xs, op.loc.clone()).map_err(|e| RuleError::Internal(e.to_string()))?;
            rs.into_iter().map(|r| (r, false)).collect()
        };
        for (r, o) in op.results.iter().zip(outs) {
            map.insert(*r, o);
        }
    }
    let mut outs = Vec::new();
    for (j, o) in g.outputs.iter().enumerate() {
        let (v, batched) = map[o];
        let mut b = B { f: &mut f, loc: None };
        outs.push(match (out_axes[j], batched) {
            (Some(a), true) => rules::move_axis(&mut b, v, 0, a as usize),
            (Some(a), false) => {
                let l = rules::lift(&mut b, v, size);
                rules::move_axis(&mut b, l, 0, a as usize)
            }
            (None, false) => v,
            (None, true) => {
                return Err(RuleError::Batch(format!("output {j} of @{} depends on a mapped input, so out_axes[{j}] cannot be None", g.name)));
            }
        });
    }
    f.outputs = outs;
    Ok(f)
}
