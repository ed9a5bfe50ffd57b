//! The `quabla` dialect: types, the op set with one shape/dtype rule per op, the in-memory
//! IR that passes and the tracer work on, and the bridge to MLIR (IRDL loading, import,
//! write-back).
pub mod error;
pub mod ir;
pub mod mlir;
pub mod ops;
pub mod size;
pub mod types;

pub use error::{DialectError, Result};
pub use ir::{insert_axis, walk_ops, walk_ops_mut, Body, Func, Loc, Module, Op, Transform, TransformKind, Value};
pub use ops::{Combiner, ScatterDims, ScatterOp};
pub use ops::{ConvAttrs, ConvDims, ConvWindow, ConvolutionOp, ReduceWindowOp, Window, WindowReducer};
pub use ops::{all_op_names, keywords, ArgOp, AttrSource, BinaryOp, CallOp, CmpDir, ConstantOp, ControlOp, DotDims, DotOp, ElementwiseOp, RECOMPUTE_COST, Family, LayoutOp, LinalgOp, Literal, OpKind, ReduceOp, Reducer, SlicingOp, UnaryOp};
pub use ops::SortOp;
pub use ops::CallbackOp;
pub use ops::{AxisName, CollectiveOp};
pub use types::{DType, TensorType};
