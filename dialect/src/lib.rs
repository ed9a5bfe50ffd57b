//! The `quabla` dialect: types, the op set with one shape/dtype rule per op, the in-memory
//! IR that passes and the tracer work on, and the bridge to MLIR (IRDL loading, import,
//! write-back).
pub mod error;
pub mod ir;
pub mod mlir;
pub mod ops;
pub mod types;

pub use error::{DialectError, Result};
pub use ir::{insert_axis, walk_ops, walk_ops_mut, Body, Func, Loc, Module, Op, Transform, TransformKind, Value};
pub use ops::{ArgOp, BinaryOp, CmpDir, DotDims, Literal, OpKind, ReduceOp, UnaryOp};
pub use types::{DType, TensorType};
