//! Prints the IRDL definition generated from the op table:
//! `cargo run -q -p quabla-dialect --example gen_irdl > dialect/quabla.irdl.mlir`
fn main() {
    print!("{}", quabla_dialect::ops::irdl_text());
}
