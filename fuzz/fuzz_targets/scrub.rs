//! `scrub` on fuzz input; the checks are in `fuzz/check.rs`.
#![no_main]

#[path = "../check.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check_scrub(data));
