//! The README PINN (vmap of grad of grad, inside value_and_grad) built in the IR: loss and
//! gradient equal the closed form u_xx = -w^2 sin(w x) and finite differences, through the
//! interpreter and the JIT; the canonicalized program stays small.
use quabla_dialect::{DType, TensorType};
use quabla_runtime::{interp, Buffer, CompileOptions, Executor};
use quabla_tests::pinn::{compile_ready, pinn_module};

use crate::executor;

fn loss(w: f64, xs: &[f64]) -> f64 {
    let pi = std::f64::consts::PI;
    xs.iter().map(|&x| (-w * w * (w * x).sin() + pi * pi * (pi * x).sin()).powi(2)).sum::<f64>() / xs.len() as f64
}

#[test]
fn pinn_loss_and_gradient() {
    let n = 8;
    let xs: Vec<f64> = (0..n).map(|i| 0.05 + 0.9 * i as f64 / (n - 1) as f64).collect();
    let m = compile_ready(pinn_module(n as i64));
    let ops = m.func("main").unwrap().ops.len();
    eprintln!("PINN value_and_grad ops after canonicalize: {ops}");
    assert!(ops <= 40, "value_and_grad(PINN loss) has {ops} ops after canonicalize:\n{}", m.to_mlir());
    let w = 2.5;
    let wb = Buffer::from_f64s(TensorType::new(DType::F64, []), &[w]).unwrap();
    let xb = Buffer::from_f64s(TensorType::new(DType::F64, [n as i64]), &xs).unwrap();
    let h = 1e-6;
    let fd = (loss(w + h, &xs) - loss(w - h, &xs)) / (2.0 * h);
    for out in [interp::run_func(&m, "main", &[wb.clone(), xb.clone()]).unwrap(), executor().compile(&m, "main", &CompileOptions::default()).unwrap().run(&[&wb, &xb]).unwrap()] {
        let (l, g) = (out[0].get_f64(0), out[1].get_f64(0));
        assert!((l - loss(w, &xs)).abs() <= 1e-12 * loss(w, &xs), "loss {l} vs {}", loss(w, &xs));
        assert!((g - fd).abs() <= 1e-6 * fd.abs().max(1.0), "dloss/dw {g} vs finite differences {fd}");
    }
}
