//! minicode-output: small composable Unix filters for coding-agent output.
//!
//! Provider streams are parsed into one canonical event model ([`event`]) by the
//! [`provider`] parsers driving the shared lifecycle [`engine`]; stages ([`scrub`],
//! [`truncate`]) transform events; [`projection`]s render them; [`summarize`] reports.
//! [`normalize()`] runs the whole `normalize` pipeline over a reader.
//!
//! Parse a Codex `exec --json` stream, then render it as `project --mode normal` would:
//!
//! ```
//! use minicode_output::engine::clock::Clock;
//! use minicode_output::event::Body;
//! use minicode_output::projection::{render, Mode, Options};
//!
//! let codex = br#"{"type":"thread.started","thread_id":"t1"}
//! {"type":"turn.started"}
//! {"type":"item.started","item":{"id":"i1","type":"command_execution","command":"make test","aggregated_output":"","exit_code":null,"status":"in_progress"}}
//! {"type":"item.completed","item":{"id":"i1","type":"command_execution","command":"make test","aggregated_output":"1 failed\n","exit_code":2,"status":"failed"}}
//! {"type":"item.completed","item":{"id":"i2","type":"agent_message","text":"One test fails."}}
//! {"type":"turn.completed","usage":{"input_tokens":10,"output_tokens":2}}
//! "#;
//! let events = minicode_output::normalize(&codex[..], None, Clock::Fixed(0))?;
//! let exit = events.iter().find_map(|e| match &e.body {
//!     Body::ToolEnded(t) => t.output.as_ref()?.exit_code,
//!     _ => None,
//! });
//! assert_eq!(exit, Some(2));
//!
//! let text = String::from_utf8(render(Mode::Normal, Options::default(), &events)).unwrap();
//! assert!(text.contains("One test fails."), "{text}");
//! # Ok::<(), std::io::Error>(())
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

// Input is read when `poll` says it is ready and a stop request comes from SIGINT/SIGTERM:
// both are Unix's. Better a clear refusal than a build that half works.
#[cfg(not(unix))]
compile_error!("minicode-output builds on Unix only (Linux, macOS, the BSDs)");

pub mod bound;
pub mod cli;
pub mod engine;
pub mod event;
pub mod io;
pub mod pipeline;
pub mod projection;
pub mod provider;
mod scan;
pub mod scrub;
pub mod summarize;
pub mod truncate;
mod vocabulary;

pub use pipeline::normalize;

// The README's Rust examples compile and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
