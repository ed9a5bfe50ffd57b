//! `quabla-canonicalize`: fold, CSE and DCE repeated until nothing changes (bounded).
use quabla_dialect::Module;

use super::{cse::cse, dce::dce, fold::fold};

/// Upper bound on fixpoint rounds; each round strictly shrinks or rewrites the program.
pub const MAX_ROUNDS: usize = 32;

pub fn canonicalize(m: &mut Module) -> bool {
    let mut changed = false;
    for _ in 0..MAX_ROUNDS {
        let c = fold(m) | cse(m) | dce(m);
        changed |= c;
        if !c {
            break;
        }
    }
    changed
}
