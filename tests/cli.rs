//! Integration tests: one module per binary, sharing the harness in `support`.

mod support;

mod bad_input;
mod docs;
mod handoff;
mod normalize;
mod summarize;
