//! Precompiled CPU kernels that compiled programs call: the blocked, packed matrix product
//! of large `f32`/`f64` `dot_general`s ([`gemm`]) and large transposes ([`transpose`]). They are built with the crate (opt-level 3
//! in every profile), so a program that calls them spends no JIT time on them: the
//! micro-kernels are written once per instruction set with the `core::arch` intrinsics and
//! chosen at run time from the host's features.
pub mod gemm;
pub mod reduce;
pub mod host;
pub mod transpose;
