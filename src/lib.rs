//! minicode-output: small composable Unix filters for coding-agent output.
//!
//! Provider streams are parsed into one canonical event model ([`event`]) by the
//! [`provider`] parsers driving the shared lifecycle [`engine`]; stages ([`scrub`],
//! [`truncate`]) transform events; [`projection`]s render them; [`summarize`] reports.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod bound;
pub mod engine;
pub mod event;
pub mod io;
pub mod projection;
pub mod provider;
pub mod cli;
pub mod scrub;
pub mod summarize;
pub mod truncate;
