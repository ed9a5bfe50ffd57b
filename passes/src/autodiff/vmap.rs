//! The vmap expansion: every batched value carries its batch dim first (inputs are moved
//! there on entry, outputs moved to their out_axes on exit); ops without a batched operand
//! are copied unchanged, the others go through their family's batching rule, and so do the
//! collectives naming the vmap's axis (and region ops holding them), batched or not.
use std::collections::HashMap;

use quabla_dialect::{AxisName, Func, Value, insert_axis};

use crate::rules::{self, RuleError, B};

/// The vmap of `g` with the given axes (the body of a `vmap` transform function).
pub fn vmap_func(g: &Func, name: &str, in_axes: &[Option<i64>], out_axes: &[Option<i64>], size: i64, axis_name: Option<&AxisName>) -> Result<Func, RuleError> {
    let (mut f, outs) = rules::collective::with_axis(axis_name.cloned(), || vmap_core(g, name, in_axes, size))?;
    let mut res = Vec::new();
    for (j, (v, batched)) in outs.into_iter().enumerate() {
        let mut b = B { f: &mut f, loc: None };
        res.push(match (out_axes[j], batched) {
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
    f.outputs = res;
    Ok(f)
}

/// The batching sweep: a function named `name` whose parameter i is `g`'s with the batch
/// dim at `in_axes[i]` (or unbatched), with the ops batched; returns it (outputs unset) with
/// each output of `g` as (value, batched) with the batch dim first. The new function's value
/// table starts as a copy of `g`'s, so rules can read the types of `g`'s region values
/// (`rules::control` batches the bodies of `quabla.if` with this).
pub(crate) fn vmap_core(g: &Func, name: &str, in_axes: &[Option<i64>], size: i64) -> Result<(Func, Vec<(Value, bool)>), RuleError> {
    let mut f = Func::new(name, &[]);
    f.types = g.types.clone();
    for (t, a) in g.param_types().iter().zip(in_axes) {
        let v = f.new_value(insert_axis(t, *a, size));
        f.params.push(v);
    }
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
        // Host callbacks record every vmap, mapped or not (rules::callback); collectives of
        // this vmap's axis resolve whether or not their operands are mapped.
        let outs = if batched.iter().any(|&x| x) || op.kind.has_effect() || rules::collective::resolves(op) {
            rules::batch(&mut b, op, &xs, &batched, size)?
        } else {
            let rs = b.f.push_with_regions(op.kind.clone(), &xs, op.regions.clone(), op.loc.clone()).map_err(|e| RuleError::Internal(e.to_string()))?;
            rs.into_iter().map(|r| (r, false)).collect()
        };
        for (r, o) in op.results.iter().zip(outs) {
            map.insert(*r, o);
        }
    }
    let outs = g.outputs.iter().map(|o| map[o]).collect();
    Ok((f, outs))
}
