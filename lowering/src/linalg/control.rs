//! Lowering of control flow. `quabla.if` becomes `scf.if` on the `i1` extracted from its 0-d
//! predicate; each body is lowered in place with its parameters bound to the captured operands
//! (scf regions see the enclosing values), and yields with `scf.yield`. One-shot
//! bufferization turns the tensor results into buffers without copies of the untaken branch.
use quabla_dialect::{ControlOp, Func, Op, TensorType};

use super::{lower_block, Ctx, Emitter};
use crate::LowerError;

/// `scf.yield` of a region body's outputs.
fn scf_yield(e: &mut Emitter, f: &Func, outputs: &[quabla_dialect::Value]) {
    let ys: Vec<String> = outputs.iter().map(|v| e.name(*v)).collect();
    if ys.is_empty() {
        e.line("scf.yield");
    } else {
        let yt: Vec<String> = outputs.iter().map(|v| f.ty(*v).to_string()).collect();
        e.line(format!("scf.yield {} : {}", ys.join(", "), yt.join(", ")));
    }
}

/// `quabla.if`: returns the names of the results.
pub fn lower_if(e: &mut Emitter, cx: &Ctx, f: &Func, o: &Op, results: &[TensorType]) -> Result<Vec<String>, LowerError> {
    let loc = e.loc.clone();
    let p = o.operands[0];
    let c = e.op(format!("tensor.extract {}[] : {}", e.name(p), f.ty(p)));
    let n = e.fresh();
    let rt: Vec<String> = results.iter().map(|t| t.to_string()).collect();
    let (lhs, ty) = match results.len() {
        0 => (String::new(), String::new()),
        1 => (format!("{n} = "), format!(" -> ({})", rt[0])),
        k => (format!("{n}:{k} = "), format!(" -> ({})", rt.join(", "))),
    };
    e.raw_line(format!("{lhs}scf.if {c}{ty} {{"));
    for (i, body) in o.regions.iter().enumerate() {
        if i == 1 {
            e.raw_line("} else {");
        }
        for (bp, outer) in body.params.iter().zip(&o.operands[1..]) {
            let name = e.name(*outer);
            e.alias(*bp, name);
        }
        e.depth += 1;
        lower_block(e, cx, f, &body.ops, &body.outputs)?;
        e.loc = loc.clone();
        scf_yield(e, f, &body.outputs);
        e.depth -= 1;
    }
    e.line("}");
    Ok(match results.len() {
        1 => vec![n],
        k => (0..k).map(|i| format!("{n}#{i}")).collect(),
    })
}

/// `quabla.while`: `scf.while` over the carries; the cond region's ops run in the before
/// region, whose `scf.condition` forwards the carries to the body (the after region).
pub fn lower_while(e: &mut Emitter, cx: &Ctx, f: &Func, o: &Op) -> Result<Vec<String>, LowerError> {
    let loc = e.loc.clone();
    let (cond, body) = (&o.regions[0], &o.regions[1]);
    let ts = o.operands.iter().map(|v| f.ty(*v).to_string()).collect::<Vec<_>>().join(", ");
    let args: Vec<String> = cond.params.iter().map(|_| e.fresh()).collect();
    let inits: Vec<String> = args.iter().zip(&o.operands).map(|(a, x)| format!("{a} = {}", e.name(*x))).collect();
    for (p, a) in cond.params.iter().zip(&args) {
        e.alias(*p, a.clone());
    }
    let n = e.fresh();
    let lhs = match o.results.len() {
        0 => String::new(),
        1 => format!("{n} = "),
        k => format!("{n}:{k} = "),
    };
    e.raw_line(format!("{lhs}scf.while ({}) : ({ts}) -> ({ts}) {{", inits.join(", ")));
    e.depth += 1;
    lower_block(e, cx, f, &cond.ops, &cond.outputs)?;
    e.loc = loc.clone();
    let c = e.op(format!("tensor.extract {}[] : tensor<i1>", e.name(cond.outputs[0])));
    if args.is_empty() {
        e.line(format!("scf.condition({c})"));
    } else {
        e.line(format!("scf.condition({c}) {} : {ts}", args.join(", ")));
    }
    e.depth -= 1;
    e.raw_line("} do {");
    let bargs: Vec<String> = body.params.iter().map(|_| e.fresh()).collect();
    let decl: Vec<String> = bargs.iter().zip(&body.params).map(|(a, p)| format!("{a}: {}", f.ty(*p))).collect();
    for (p, a) in body.params.iter().zip(&bargs) {
        e.alias(*p, a.clone());
    }
    e.raw_line(format!("^bb0({}):", decl.join(", ")));
    e.depth += 1;
    lower_block(e, cx, f, &body.ops, &body.outputs)?;
    e.loc = loc.clone();
    scf_yield(e, f, &body.outputs);
    e.depth -= 1;
    e.line("}");
    Ok(match o.results.len() {
        1 => vec![n],
        k => (0..k).map(|i| format!("{n}#{i}")).collect(),
    })
}

/// Lowers one op of this family, returning its results' names (exhaustive over the family).
pub fn lower(e: &mut Emitter, cx: &Ctx, f: &Func, o: &Op, op: &ControlOp) -> Result<Vec<String>, LowerError> {
    match op {
        ControlOp::If { results } => lower_if(e, cx, f, o, results),
        ControlOp::While {} => lower_while(e, cx, f, o),
    }
}
