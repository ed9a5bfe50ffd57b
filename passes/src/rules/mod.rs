//! Differentiation rules, one file per op family (mirroring dialect/src/ops/): each op's
//! JVP rule (tangents in, tangents out) and VJP rule (result cotangent in, operand
//! cotangents out) sit side by side. `None` is a symbolic zero: rules skip work for it and
//! the autodiff pass materialises zeros only where a value is required.
pub mod call;
pub mod callback;
pub mod collective;
pub mod constant;
pub mod control;
pub mod dot;
pub mod elementwise;
pub mod layout;
pub mod linalg;
pub mod reduce;
pub mod slicing;
pub mod scatter;
pub mod convolution;
pub mod reduce_window;
pub mod sort;

use quabla_dialect::{BinaryOp, CallOp, CmpDir, ConstantOp, DType, DotOp, ElementwiseOp, Func, LayoutOp, Literal, Loc, Op, OpKind, ReduceOp, Reducer, SlicingOp, TensorType, UnaryOp, Value};

/// Errors of the differentiation rules.
#[derive(Debug, thiserror::Error)]
pub enum RuleError {
    /// The op has no derivative rule (explicit gap, listed in docs/op_status.md).
    #[error("'quabla.{op}' op has no {rule} rule")]
    Unsupported { op: &'static str, rule: &'static str },
    /// Reverse mode of a `quabla.while` whose trip count is not static (JAX rejects it too).
    #[error("'quabla.while' op has no vjp rule without a static trip count (reverse mode needs a counter from a constant, stepped by a constant, compared against a constant, as qb.fori_loop with concrete bounds and qb.scan build); {0}; use those, or forward mode (qb.jvp, qb.jacfwd)")]
    DynamicTripCount(String),
    #[error("internal autodiff error: {0}")]
    Internal(String),
    /// A vmap that cannot be expressed (e.g. out_axes=None on a mapped result).
    #[error("{0}")]
    Batch(String),
}

pub type Tangents = Vec<Option<Value>>;

/// The literal of the constant op of `ops` (at any depth) that defines `v`, if one does.
pub fn constant_of(ops: &[Op], v: Value) -> Option<&Literal> {
    let mut lit = None;
    quabla_dialect::walk_ops(ops, &mut |o| {
        if let (OpKind::Constant(ConstantOp::Constant { value }), true) = (&o.kind, o.results.first() == Some(&v)) {
            lit = Some(value);
        }
    });
    lit
}

/// Emits ops into a function at the location of the op being differentiated.
pub struct B<'a> {
    pub f: &'a mut Func,
    pub loc: Loc,
}

impl B<'_> {
    pub fn ty(&self, v: Value) -> TensorType {
        self.f.ty(v).clone()
    }

    pub fn op(&mut self, kind: OpKind, xs: &[Value]) -> Value {
        self.f.push1(kind, xs, self.loc.clone()).unwrap_or_else(|e| panic!("autodiff rule built an invalid op: {e}"))
    }

    pub fn un(&mut self, u: UnaryOp, x: Value) -> Value {
        self.op(OpKind::Elementwise(ElementwiseOp::Unary { op: u }), &[x])
    }

    pub fn bin(&mut self, b: BinaryOp, x: Value, y: Value) -> Value {
        self.op(OpKind::Elementwise(ElementwiseOp::Binary { op: b }), &[x, y])
    }

    pub fn add(&mut self, x: Value, y: Value) -> Value {
        self.bin(BinaryOp::Add, x, y)
    }

    pub fn sub(&mut self, x: Value, y: Value) -> Value {
        self.bin(BinaryOp::Sub, x, y)
    }

    pub fn mul(&mut self, x: Value, y: Value) -> Value {
        self.bin(BinaryOp::Mul, x, y)
    }

    pub fn div(&mut self, x: Value, y: Value) -> Value {
        self.bin(BinaryOp::Div, x, y)
    }

    pub fn neg(&mut self, x: Value) -> Value {
        self.un(UnaryOp::Neg, x)
    }

    /// A splat constant of type `ty`: a constant when it has at most
    /// `fold::MAX_SPLAT_ELEMENTS` elements (as folding writes them), else the broadcast of a
    /// scalar constant. The gradient of `clip(x, -0.5, 0.5)` over 4096 x 1024 f32 made twelve
    /// dense 16 MB constants (max/min's tie weights): 225 ms of the compile in the passes.
    pub fn splat(&mut self, ty: &TensorType, v: f64) -> Value {
        if ty.num_elements() <= crate::simplify::fold::MAX_SPLAT_ELEMENTS {
            return self.op(OpKind::Constant(ConstantOp::Constant { value: Literal::splat(ty.clone(), v) }), &[]);
        }
        let s = self.op(OpKind::Constant(ConstantOp::Constant { value: Literal::splat(TensorType::scalar(ty.dtype), v) }), &[]);
        self.broadcast(s, vec![], ty.shape.clone())
    }

    /// A splat constant shaped like `x`.
    pub fn like(&mut self, x: Value, v: f64) -> Value {
        let t = self.ty(x);
        self.splat(&t, v)
    }

    pub fn zeros(&mut self, ty: &TensorType) -> Value {
        self.splat(ty, 0.0)
    }

    pub fn cmp(&mut self, dir: CmpDir, x: Value, y: Value) -> Value {
        self.op(OpKind::Elementwise(ElementwiseOp::Compare { direction: dir}), &[x, y])
    }

    pub fn select(&mut self, p: Value, x: Value, y: Value) -> Value {
        self.op(OpKind::Elementwise(ElementwiseOp::Select {}), &[p, x, y])
    }

    pub fn convert(&mut self, x: Value, to: DType) -> Value {
        if self.ty(x).dtype == to {
            return x;
        }
        self.op(OpKind::Elementwise(ElementwiseOp::Convert { to }), &[x])
    }

    pub fn reduce_sum(&mut self, x: Value, dims: Vec<i64>) -> Value {
        if dims.is_empty() {
            return x;
        }
        self.op(OpKind::Reduce(ReduceOp::Reduce { op: Reducer::Sum, dims }), &[x])
    }

    pub fn reshape(&mut self, x: Value, shape: Vec<i64>) -> Value {
        if self.ty(x).shape == shape {
            return x;
        }
        self.op(OpKind::Layout(LayoutOp::Reshape { shape }), &[x])
    }

    pub fn transpose(&mut self, x: Value, perm: Vec<i64>) -> Value {
        if perm.iter().enumerate().all(|(i, &p)| p == i as i64) {
            return x;
        }
        self.op(OpKind::Layout(LayoutOp::Transpose { perm }), &[x])
    }

    pub fn broadcast(&mut self, x: Value, dims: Vec<i64>, shape: Vec<i64>) -> Value {
        if self.ty(x).shape == shape {
            return x;
        }
        self.op(OpKind::Layout(LayoutOp::BroadcastInDim { dims, shape }), &[x])
    }

    /// `t` or a materialised zero of `like`'s type.
    pub fn or_zero(&mut self, t: Option<Value>, like: Value) -> Value {
        match t {
            Some(t) => t,
            None => {
                let ty = self.ty(like);
                self.zeros(&ty)
            }
        }
    }

    /// Sum of optional values (None + None = None).
    pub fn add_opt(&mut self, a: Option<Value>, b: Option<Value>) -> Option<Value> {
        match (a, b) {
            (Some(a), Some(b)) => Some(self.add(a, b)),
            (a, None) => a,
            (None, b) => b,
        }
    }

    /// `t * w` where `t` may be a symbolic zero.
    pub fn scale(&mut self, t: Option<Value>, w: Value) -> Option<Value> {
        t.map(|t| self.mul(t, w))
    }
}

/// True when values of this type carry tangents/cotangents.
pub fn differentiable(t: &TensorType) -> bool {
    t.dtype.is_float()
}

/// Dispatches the JVP rule of `op` (exhaustive over families).
pub fn jvp(b: &mut B, op: &Op, tangents: &[Option<Value>]) -> Result<Tangents, RuleError> {
    match &op.kind {
        OpKind::Elementwise(ElementwiseOp::Unary { op: _ }) | OpKind::Elementwise(ElementwiseOp::Binary { op: _ }) | OpKind::Elementwise(ElementwiseOp::Powi { .. }) | OpKind::Elementwise(ElementwiseOp::Compare { .. }) | OpKind::Elementwise(ElementwiseOp::Select {}) | OpKind::Elementwise(ElementwiseOp::Convert { .. }) => elementwise::jvp(b, op, tangents),
        OpKind::Constant(ConstantOp::Constant { .. }) | OpKind::Constant(ConstantOp::Iota { .. }) => constant::jvp(b, op, tangents),
        OpKind::Layout(LayoutOp::BroadcastInDim { .. }) | OpKind::Layout(LayoutOp::Reshape { .. }) | OpKind::Layout(LayoutOp::Transpose { .. }) | OpKind::Layout(LayoutOp::StopGradient {}) => layout::jvp(b, op, tangents),
        OpKind::Slicing(SlicingOp::Concatenate { .. }) | OpKind::Slicing(SlicingOp::Slice { .. }) | OpKind::Slicing(SlicingOp::Pad { .. }) | OpKind::Slicing(SlicingOp::DynamicSlice { .. }) | OpKind::Slicing(SlicingOp::Gather { .. }) => slicing::jvp(b, op, tangents),
        OpKind::Slicing(SlicingOp::DynamicUpdateSlice {}) => slicing::jvp(b, op, tangents),
        OpKind::Reduce(ReduceOp::Reduce { .. }) | OpKind::Reduce(ReduceOp::ArgReduce { .. }) => reduce::jvp(b, op, tangents),
        OpKind::Dot(DotOp::DotGeneral { .. }) => dot::jvp(b, op, tangents),
        OpKind::Call(CallOp::Call { .. }) => Err(RuleError::Internal("calls are inlined before differentiation".into())),
        OpKind::Call(CallOp::CustomJvp { .. }) | OpKind::Call(CallOp::CustomVjp { .. }) => call::jvp(b, op, tangents),
        OpKind::Control(_) => control::jvp(b, op, tangents),
        OpKind::Scatter(_) => scatter::jvp(b, op, tangents),
        OpKind::Convolution(_) => convolution::jvp(b, op, tangents),
        OpKind::ReduceWindow(_) => reduce_window::jvp(b, op, tangents),
        OpKind::Linalg(_) => linalg::jvp(b, op, tangents),
        OpKind::Sort(_) => sort::jvp(b, op, tangents),
        OpKind::Callback(_) => callback::jvp(b, op, tangents),
        OpKind::Collective(_) => collective::jvp(b, op, tangents),
    }
}

/// Dispatches the VJP rule of `op`: operand cotangents from the cotangents of its results
/// (one per result, `None` a symbolic zero; the sweep calls it only when one is nonzero).
/// Single-result ops get their result's cotangent; region ops get them all.
pub fn vjp(b: &mut B, op: &Op, cts: &[Option<Value>]) -> Result<Tangents, RuleError> {
    if let OpKind::Control(_) = &op.kind {
        // Region ops (several results): every cotangent goes to the rule, none is dropped.
        return control::vjp(b, op, cts);
    }
    if let OpKind::Call(CallOp::CustomJvp { .. }) | OpKind::Call(CallOp::CustomVjp { .. }) = &op.kind {
        // Custom-derivative calls may have several results: every cotangent goes to the rule.
        return call::vjp(b, op, cts);
    }
    if let OpKind::Linalg(_) = &op.kind {
        // Decompositions have several results: every cotangent goes to the rule.
        return linalg::vjp(b, op, cts);
    }
    let Some(ct) = cts.first().copied().flatten() else {
        return Ok(vec![None; op.operands.len()]);
    };
    match &op.kind {
        OpKind::Elementwise(ElementwiseOp::Unary { op: _ }) | OpKind::Elementwise(ElementwiseOp::Binary { op: _ }) | OpKind::Elementwise(ElementwiseOp::Powi { .. }) | OpKind::Elementwise(ElementwiseOp::Compare { .. }) | OpKind::Elementwise(ElementwiseOp::Select {}) | OpKind::Elementwise(ElementwiseOp::Convert { .. }) => elementwise::vjp(b, op, ct),
        OpKind::Constant(ConstantOp::Constant { .. }) | OpKind::Constant(ConstantOp::Iota { .. }) => constant::vjp(b, op, ct),
        OpKind::Layout(LayoutOp::BroadcastInDim { .. }) | OpKind::Layout(LayoutOp::Reshape { .. }) | OpKind::Layout(LayoutOp::Transpose { .. }) | OpKind::Layout(LayoutOp::StopGradient {}) => layout::vjp(b, op, ct),
        OpKind::Slicing(SlicingOp::Concatenate { .. }) | OpKind::Slicing(SlicingOp::Slice { .. }) | OpKind::Slicing(SlicingOp::Pad { .. }) | OpKind::Slicing(SlicingOp::DynamicSlice { .. }) | OpKind::Slicing(SlicingOp::Gather { .. }) => slicing::vjp(b, op, ct),
        OpKind::Slicing(SlicingOp::DynamicUpdateSlice {}) => slicing::vjp(b, op, ct),
        OpKind::Reduce(ReduceOp::Reduce { .. }) | OpKind::Reduce(ReduceOp::ArgReduce { .. }) => reduce::vjp(b, op, ct),
        OpKind::Dot(DotOp::DotGeneral { .. }) => dot::vjp(b, op, ct),
        OpKind::Call(CallOp::Call { .. }) => Err(RuleError::Internal("calls are inlined before differentiation".into())),
        OpKind::Call(CallOp::CustomJvp { .. }) | OpKind::Call(CallOp::CustomVjp { .. }) => call::vjp(b, op, cts),
        OpKind::Control(_) => control::vjp(b, op, cts),
        OpKind::Scatter(_) => scatter::vjp(b, op, ct),
        OpKind::Convolution(_) => convolution::vjp(b, op, ct),
        OpKind::ReduceWindow(_) => reduce_window::vjp(b, op, ct),
        OpKind::Linalg(_) => linalg::vjp(b, op, cts),
        OpKind::Sort(_) => sort::vjp(b, op, ct),
        OpKind::Callback(_) => callback::vjp(b, op, ct),
        OpKind::Collective(_) => collective::vjp(b, op, ct),
    }
}

/// Moves dim `from` of `x` to position `to`.
pub fn move_axis(b: &mut B, x: Value, from: usize, to: usize) -> Value {
    let r = b.ty(x).rank();
    let mut order: Vec<i64> = (0..r as i64).filter(|&d| d != from as i64).collect();
    order.insert(to, from as i64);
    b.transpose(x, order)
}

/// Broadcasts an unbatched value to a leading batch dim of extent `size`.
pub fn lift(b: &mut B, x: Value, size: i64) -> Value {
    let t = b.ty(x);
    let mut shape = vec![size];
    shape.extend(&t.shape);
    b.op(OpKind::Layout(LayoutOp::BroadcastInDim { dims: (1..=t.rank() as i64).collect(), shape }), &[x])
}

/// Lifts every unbatched operand.
pub fn lift_all(b: &mut B, xs: &[Value], batched: &[bool], size: i64) -> Vec<Value> {
    xs.iter().zip(batched).map(|(x, bt)| if *bt { *x } else { lift(b, *x, size) }).collect()
}

/// `[0] ++ (v + 1)`: attribute dims of an op applied under a leading batch dim.
pub fn shift(v: &[i64], first: i64) -> Vec<i64> {
    std::iter::once(first).chain(v.iter().map(|d| d + 1)).collect()
}

/// Dispatches the batching rule of `op`; batched operands have their batch dim first.
/// Returns each result with whether it is batched (then with the batch dim first).
pub fn batch(b: &mut B, op: &Op, xs: &[Value], batched: &[bool], size: i64) -> Result<Vec<(Value, bool)>, RuleError> {
    match &op.kind {
        OpKind::Elementwise(ElementwiseOp::Unary { op: _ }) | OpKind::Elementwise(ElementwiseOp::Binary { op: _ }) | OpKind::Elementwise(ElementwiseOp::Powi { .. }) | OpKind::Elementwise(ElementwiseOp::Compare { .. }) | OpKind::Elementwise(ElementwiseOp::Select {}) | OpKind::Elementwise(ElementwiseOp::Convert { .. }) => elementwise::batch(b, op, xs, batched, size),
        OpKind::Constant(ConstantOp::Constant { .. }) | OpKind::Constant(ConstantOp::Iota { .. }) => constant::batch(b, op, xs, batched, size),
        OpKind::Layout(LayoutOp::BroadcastInDim { .. }) | OpKind::Layout(LayoutOp::Reshape { .. }) | OpKind::Layout(LayoutOp::Transpose { .. }) | OpKind::Layout(LayoutOp::StopGradient {}) => layout::batch(b, op, xs, batched, size),
        OpKind::Slicing(SlicingOp::Concatenate { .. }) | OpKind::Slicing(SlicingOp::Slice { .. }) | OpKind::Slicing(SlicingOp::Pad { .. }) | OpKind::Slicing(SlicingOp::DynamicSlice { .. }) | OpKind::Slicing(SlicingOp::Gather { .. }) => slicing::batch(b, op, xs, batched, size),
        OpKind::Slicing(SlicingOp::DynamicUpdateSlice {}) => slicing::batch(b, op, xs, batched, size),
        OpKind::Reduce(ReduceOp::Reduce { .. }) | OpKind::Reduce(ReduceOp::ArgReduce { .. }) => reduce::batch(b, op, xs, batched, size),
        OpKind::Dot(DotOp::DotGeneral { .. }) => dot::batch(b, op, xs, batched, size),
        OpKind::Call(CallOp::Call { .. }) => Err(RuleError::Internal("calls are inlined before batching".into())),
        OpKind::Call(CallOp::CustomJvp { .. }) | OpKind::Call(CallOp::CustomVjp { .. }) => call::batch(b, op, xs, batched, size),
        OpKind::Control(_) => control::batch(b, op, xs, batched, size),
        OpKind::Scatter(_) => scatter::batch(b, op, xs, batched, size),
        OpKind::Convolution(_) => convolution::batch(b, op, xs, batched, size),
        OpKind::ReduceWindow(_) => reduce_window::batch(b, op, xs, batched, size),
        OpKind::Linalg(_) => linalg::batch(b, op, xs, batched, size),
        OpKind::Sort(_) => sort::batch(b, op, xs, batched, size),
        OpKind::Callback(_) => callback::batch(b, op, xs, batched, size),
        OpKind::Collective(_) => collective::batch(b, op, xs, batched, size),
    }
}
