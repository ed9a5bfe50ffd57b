//! Simplification passes on the quabla level: fold, CSE, DCE, inline, canonicalize.
pub mod accumulate;
pub mod canonicalize;
pub mod chains;
pub mod cse;
pub mod dce;
pub mod fold;
pub mod inline;
