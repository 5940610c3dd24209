//! Integration tests: one module per binary, sharing the harness in `support`.

mod support;

mod normalize;
mod summarize;
