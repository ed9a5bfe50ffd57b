//! Quabla's passes (Rust, run as MLIR external passes) and the registry that names them.
//! Each pass imports the module into the in-memory IR, transforms it, and writes it back.
pub mod autodiff;
pub mod outline;
pub mod registry;
pub mod rules;
pub mod rewrite;
pub mod simplify;

pub use autodiff::AutodiffError;
pub use registry::{add_pipeline, passes, PassError, PassInfo};
pub use simplify::canonicalize::canonicalize;
