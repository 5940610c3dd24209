//! `normalize`: golden outputs over real captures, and the behaviour of a Unix filter.

use predicates::prelude::*;

use crate::support::*;

#[test]
fn golden_codex() {
    golden_dir("codex", &[]);
}
