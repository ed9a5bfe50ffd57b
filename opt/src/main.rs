//! The `quabla-opt` binary: the driver is the library's `opt_main` (src/lib.rs).
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    ExitCode::from(quabla_opt::opt_main(&args) as u8)
}
