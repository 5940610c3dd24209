//! Integration tests: one module per binary, sharing the harness in `support`.

mod support;

mod normalize;
mod opencode;
mod gemini;
