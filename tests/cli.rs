//! Integration tests: one module per binary, sharing the harness in `support`.

mod support;

mod acp;
mod agents;
mod architecture;
mod bad_input;
mod detect;
mod dialects;
mod docs;
mod duckdb;
mod fuzz_corpus;
mod gemini;
mod handoff;
mod normalize;
mod opencode;
mod opencode_session;
mod pipes;
mod project;
mod readme;
mod schema;
mod session_files;
mod sessions;
mod split;
mod summarize;

mod latency;
mod linear;
mod scrub;
mod truncate;
