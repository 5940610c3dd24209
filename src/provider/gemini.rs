//! Gemini dialect (to be written).

use super::{LineError, Parse};
use crate::engine::Engine;

/// The Gemini parser.
#[derive(Debug, Default)]
pub struct Gemini;

impl Parse for Gemini {
    fn line(&mut self, _line: &str, _engine: &mut Engine) -> Result<(), LineError> {
        Err(LineError::UnknownType(String::new()))
    }
}
