//! Export of control flow. `quabla.if` becomes `stablehlo.if` on its 0-d `tensor<i1>`
//! predicate; each body is exported in place (StableHLO regions see the enclosing values),
//! with its parameters bound to the captured operands, ending in `stablehlo.return`.
//! `quabla.case` becomes `stablehlo.case` (same clamping semantics) on its index as
//! `tensor<i32>`; an i64 index is first mapped to `N - 1` when out of range, then converted.
use std::collections::HashMap;

use quabla_dialect::{ControlOp, Func, Op, TensorType};

use super::{export_op, Emitter, Tv};
use crate::LowerError;

/// `quabla.if`: returns the results.
pub fn lower_if(e: &mut Emitter, names: &HashMap<String, String>, f: &Func, o: &Op, results: &[TensorType]) -> Result<Vec<Tv>, LowerError> {
    let loc = e.loc.clone();
    let p = e.get(f, o.operands[0]);
    branch_op(e, names, f, o, results, "stablehlo.if", &p, &loc)
}

/// `stablehlo.if` / `stablehlo.case` (`name`) on `selector` with `o`'s regions exported in
/// place, each region's parameters bound to the op's captured operands (`o.operands[1..]`).
#[allow(clippy::too_many_arguments)]
fn branch_op(e: &mut Emitter, names: &HashMap<String, String>, f: &Func, o: &Op, results: &[TensorType], name: &str, selector: &Tv, loc: &Option<String>) -> Result<Vec<Tv>, LowerError> {
    let r = e.fresh();
    let lhs = match results.len() {
        0 => String::new(),
        1 => format!("{r} = "),
        k => format!("{r}:{k} = "),
    };
    e.raw_line(format!("{lhs}\"{name}\"({}) ({{", selector.name));
    for (i, body) in o.regions.iter().enumerate() {
        if i > 0 {
            e.raw_line("}, {");
        }
        for (bp, outer) in body.params.iter().zip(&o.operands[1..]) {
            let name = e.name(*outer);
            e.alias(*bp, name);
        }
        e.depth += 1;
        for op in &body.ops {
            export_op(e, names, f, op)?;
        }
        e.loc = loc.clone();
        let ys: Vec<String> = body.outputs.iter().map(|v| e.name(*v)).collect();
        let yt: Vec<String> = body.outputs.iter().map(|v| f.ty(*v).to_string()).collect();
        e.line(format!("\"stablehlo.return\"({}) : ({}) -> ()", ys.join(", "), yt.join(", ")));
        e.depth -= 1;
    }
    let rt: Vec<String> = results.iter().map(|t| t.to_string()).collect();
    e.line(format!("}}) : ({}) -> ({})", selector.ty, rt.join(", ")));
    Ok(match results.len() {
        1 => vec![Tv::new(r, &results[0])],
        _ => results.iter().enumerate().map(|(i, t)| Tv::new(format!("{r}#{i}"), t)).collect(),
    })
}

/// `quabla.while`: `stablehlo.while` over the carries (cond region returning the 0-d
/// predicate, body region returning the next carries).
pub fn lower_while(e: &mut Emitter, names: &HashMap<String, String>, f: &Func, o: &Op) -> Result<Vec<Tv>, LowerError> {
    let loc = e.loc.clone();
    let ts: Vec<TensorType> = o.operands.iter().map(|v| f.ty(*v).clone()).collect();
    let tl = ts.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(", ");
    let xs: Vec<String> = o.operands.iter().map(|v| e.name(*v)).collect();
    let r = e.fresh();
    let lhs = match o.results.len() {
        0 => String::new(),
        1 => format!("{r} = "),
        k => format!("{r}:{k} = "),
    };
    e.raw_line(format!("{lhs}\"stablehlo.while\"({}) ({{", xs.join(", ")));
    for (i, region) in o.regions.iter().enumerate() {
        if i == 1 {
            e.raw_line("}, {");
        }
        let args: Vec<String> = region.params.iter().map(|_| e.fresh()).collect();
        let decl: Vec<String> = args.iter().zip(&ts).map(|(a, t)| format!("{a}: {t}")).collect();
        for (p, a) in region.params.iter().zip(&args) {
            e.alias(*p, a.clone());
        }
        e.raw_line(format!("^bb0({}):", decl.join(", ")));
        e.depth += 1;
        for op in &region.ops {
            export_op(e, names, f, op)?;
        }
        e.loc = loc.clone();
        let ys: Vec<String> = region.outputs.iter().map(|v| e.name(*v)).collect();
        let yt: Vec<String> = region.outputs.iter().map(|v| f.ty(*v).to_string()).collect();
        e.line(format!("\"stablehlo.return\"({}) : ({}) -> ()", ys.join(", "), yt.join(", ")));
        e.depth -= 1;
    }
    e.line(format!("}}) : ({tl}) -> ({tl})"));
    Ok(match o.results.len() {
        1 => vec![Tv::new(r, &ts[0])],
        _ => ts.iter().enumerate().map(|(i, t)| Tv::new(format!("{r}#{i}"), t)).collect(),
    })
}

/// `quabla.case`: `stablehlo.case` over the branches; returns the results.
pub fn lower_case(e: &mut Emitter, names: &HashMap<String, String>, f: &Func, o: &Op, results: &[TensorType]) -> Result<Vec<Tv>, LowerError> {
    use super::elementwise::{bin, compare, convert, select};
    use quabla_dialect::{CmpDir, DType};
    let loc = e.loc.clone();
    let mut p = e.get(f, o.operands[0]);
    let n = o.regions.len();
    if p.ty.dtype == DType::I64 {
        // Out of range (negative or >= N) selects the last branch before narrowing to i32.
        let zero = e.splat_num(&p.ty, 0.0);
        let top = e.splat_num(&p.ty, n as f64);
        let last = e.splat_num(&p.ty, (n - 1) as f64);
        let lo = compare(e, CmpDir::Lt, &p, &zero);
        let hi = compare(e, CmpDir::Ge, &p, &top);
        let bad = bin(e, "stablehlo.or", &lo, &hi);
        let q = select(e, &bad, &last, &p);
        p = convert(e, &q, DType::I32);
    }
    branch_op(e, names, f, o, results, "stablehlo.case", &p, &loc)
}

/// Lowers one op of this family, returning its results' names (exhaustive over the family).
pub fn lower(e: &mut Emitter, names: &HashMap<String, String>, f: &Func, o: &Op, op: &ControlOp) -> Result<Vec<Tv>, LowerError> {
    match op {
        ControlOp::If { results } => lower_if(e, names, f, o, results),
        ControlOp::While {} => lower_while(e, names, f, o),
        ControlOp::Case { results } => lower_case(e, names, f, o, results),
    }
}
