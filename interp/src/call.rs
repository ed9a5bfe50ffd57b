//! Function evaluation: `run_func` walks a function's ops in order over an environment of
//! buffers, and `quabla.call @f` evaluates `@f` of the same module. Input types are checked
//! against the parameters, every op's computed result types against the IR's, and a call
//! cycle is reported (`call_c3`) instead of recursing forever. A custom-derivative call
//! (`custom_jvp_call`, `custom_vjp_call`) evaluates its primal body (region 0).
use quabla_dialect::{CallOp, ControlOp, Func, Module, Op, OpKind, TensorType, Value};

use super::{run_op, InterpError, Result};
use crate::buffer::Buffer;

/// Runs `@name` with `stack` holding the functions being evaluated (for cycle detection).
pub(super) fn run_func_in<'m>(m: &'m Module, name: &str, inputs: &[Buffer], stack: &mut Vec<&'m str>) -> Result<Vec<Buffer>> {
    let f = m.func(name).ok_or_else(|| InterpError::UnknownFunction(name.to_string()))?;
    if stack.contains(&f.name.as_str()) {
        return Err(InterpError::Recursion(f.name.clone()));
    }
    if inputs.len() != f.params.len() {
        return Err(InterpError::InputCount { func: f.name.clone(), expected: f.params.len(), actual: inputs.len() });
    }
    for (index, (b, &p)) in inputs.iter().zip(&f.params).enumerate() {
        if b.ty() != f.ty(p) {
            return Err(InterpError::InputType { func: f.name.clone(), index, expected: f.ty(p).clone(), actual: b.ty().clone() });
        }
    }
    let mut env: Vec<Option<Buffer>> = vec![None; f.types.len()];
    stack.push(&f.name);
    let outs = eval_block(m, f, &f.params, &f.ops, &f.outputs, inputs.to_vec(), &mut env, stack)?;
    stack.pop();
    Ok(outs)
}

/// Evaluates one block of `f` (its body or a region of one of its ops) on `inputs` bound to
/// `params`, in the function-wide environment `env` (value ids are unique in a function).
#[allow(clippy::too_many_arguments)]
pub(super) fn eval_block<'m>(m: &'m Module, f: &'m Func, params: &[Value], ops: &'m [Op], outputs: &[Value], inputs: Vec<Buffer>, env: &mut Vec<Option<Buffer>>, stack: &mut Vec<&'m str>) -> Result<Vec<Buffer>> {
    for (b, &p) in inputs.into_iter().zip(params) {
        env[p.0 as usize] = Some(b);
    }
    let undefined = |v: u32| InterpError::UndefinedValue { func: f.name.clone(), value: v };
    for op in ops {
        let args: Vec<Buffer> = op.operands.iter().map(|v| env.get(v.0 as usize).and_then(Option::as_ref).cloned().ok_or_else(|| undefined(v.0))).collect::<Result<_>>()?;
        let refs: Vec<&Buffer> = args.iter().collect();
        let outs = match &op.kind {
            OpKind::Call(CallOp::Call { callee, results }) => call(m, callee, results, &refs, stack)?,
            OpKind::Control(ControlOp::If { .. }) => super::control::eval_if(m, f, op, args, env, stack)?,
            OpKind::Control(ControlOp::While {}) => super::control::eval_while(m, f, op, args, env, stack)?,
            OpKind::Control(ControlOp::Case { .. }) => super::control::eval_case(m, f, op, args, env, stack)?,
            OpKind::Call(CallOp::CustomJvp { .. }) | OpKind::Call(CallOp::CustomVjp { .. }) => {
                let body = &op.regions[0];
                eval_block(m, f, &body.params, &body.ops, &body.outputs, args, env, stack)?
            }
            _ => run_op(&op.kind, &refs)?,
        };
        if outs.len() != op.results.len() {
            return Err(InterpError::ResultCount { func: f.name.clone(), op: op.kind.name(), expected: op.results.len(), actual: outs.len() });
        }
        for (index, (b, &r)) in outs.into_iter().zip(&op.results).enumerate() {
            let want = env.get(r.0 as usize).map(|_| f.ty(r)).ok_or_else(|| undefined(r.0))?;
            if b.ty() != want {
                return Err(InterpError::ResultType { func: f.name.clone(), op: op.kind.name(), index, expected: want.clone(), actual: b.ty().clone() });
            }
            env[r.0 as usize] = Some(b);
        }
    }
    outputs.iter().map(|v| env.get(v.0 as usize).cloned().flatten().ok_or_else(|| undefined(v.0))).collect()
}

/// `quabla.call @callee`: runs the callee and checks its outputs against the op's result types.
fn call<'m>(m: &'m Module, callee: &str, results: &[TensorType], args: &[&Buffer], stack: &mut Vec<&'m str>) -> Result<Vec<Buffer>> {
    let inputs: Vec<Buffer> = args.iter().map(|b| (*b).clone()).collect();
    let outs = run_func_in(m, callee, &inputs, stack)?;
    let got: Vec<TensorType> = outs.iter().map(|b| b.ty().clone()).collect();
    if got != results {
        return Err(InterpError::Shape(quabla_dialect::DialectError::shape(
            "call",
            "call_c2",
            format!("results ({}) do not match the results of @{callee} ({})", join(results), join(&got)),
        )));
    }
    Ok(outs)
}

fn join(ts: &[TensorType]) -> String {
    ts.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::super::{run_func, InterpError};
    use quabla_dialect::{BinaryOp, CallOp, DType, ElementwiseOp, Func, Module, OpKind, ReduceOp, Reducer, TensorType, UnaryOp};

    /// @sq(x) = x * x (private); @main(x, y) = (reduce_sum(sq(x) + y), neg(y)).
    fn module() -> Module {
        let t = TensorType::new(DType::F64, [3]);
        let mut sq = Func::new("sq", std::slice::from_ref(&t));
        sq.public = false;
        let x = sq.params[0];
        let y = sq.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Mul }), &[x, x], None).unwrap();
        sq.outputs = vec![y];
        let mut main = Func::new("main", &[t.clone(), t.clone()]);
        let (x, y) = (main.params[0], main.params[1]);
        let s = main.push1(OpKind::Call(CallOp::Call { callee: "sq".into(), results: vec![t.clone()] }), &[x], None).unwrap();
        let a = main.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Add }), &[s, y], None).unwrap();
        let r = main.push1(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Sum, dims: vec![0] }), &[a], None).unwrap();
        let n = main.push1(OpKind::Elementwise(ElementwiseOp::Unary { op: UnaryOp::Neg }), &[y], None).unwrap();
        main.outputs = vec![r, n];
        Module { funcs: vec![sq, main] }
    }

    #[test]
    fn call_through_run_func() {
        let m = module();
        m.verify().unwrap();
        let out = run_func(&m, "main", &[f64s(&[3], &[1.0, 2.0, 3.0]), f64s(&[3], &[0.5, 0.5, 0.5])]).unwrap();
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].shape(), &[] as &[i64]);
        assert_eq!(out[0].to_f64_vec(), vec![15.5]);
        assert_eq!(out[1].to_f64_vec(), vec![-0.5; 3]);
    }

    #[test]
    fn input_errors_name_the_argument() {
        let m = module();
        let x = f64s(&[3], &[1.0, 2.0, 3.0]);
        match run_func(&m, "main", std::slice::from_ref(&x)).unwrap_err() {
            InterpError::InputCount { expected: 2, actual: 1, .. } => {}
            e => panic!("{e}"),
        }
        let e = run_func(&m, "main", &[x.clone(), f32s(&[3], &[1.0, 2.0, 3.0])]).unwrap_err();
        assert_eq!(e.to_string(), "@main: input 1 has type tensor<3xf32>, expected tensor<3xf64>");
        assert_eq!(run_func(&m, "nope", &[]).unwrap_err(), InterpError::UnknownFunction("nope".into()));
    }

    #[test]
    fn recursion_is_an_error() {
        let t = TensorType::scalar(DType::I32);
        let mut f = Func::new("f", std::slice::from_ref(&t));
        let x = f.params[0];
        let y = f.push1(OpKind::Call(CallOp::Call { callee: "f".into(), results: vec![t] }), &[x], None).unwrap();
        f.outputs = vec![y];
        let m = Module { funcs: vec![f] };
        assert_eq!(run_func(&m, "f", &[i32s(&[], &[1])]).unwrap_err(), InterpError::Recursion("f".into()));
    }

    #[test]
    fn zero_d_function() {
        let t = TensorType::scalar(DType::I64);
        let mut f = Func::new("main", &[t.clone(), t]);
        let (a, b) = (f.params[0], f.params[1]);
        let q = f.push1(OpKind::Elementwise(ElementwiseOp::Binary { op: BinaryOp::Div }), &[a, b], None).unwrap();
        f.outputs = vec![q, a];
        let m = Module { funcs: vec![f] };
        let out = run_func(&m, "main", &[i64s(&[], &[-7]), i64s(&[], &[2])]).unwrap();
        assert_eq!(out[0].as_slice::<i64>().unwrap(), &[-3]);
        assert_eq!(out[1].as_slice::<i64>().unwrap(), &[-7]);
    }
}
