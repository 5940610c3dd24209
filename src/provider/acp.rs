//! Acp dialect (to be written).

use super::{LineError, Parse};
use crate::engine::Engine;

/// The Acp parser.
#[derive(Debug, Default)]
pub struct Acp;

impl Parse for Acp {
    fn line(&mut self, _line: &str, _engine: &mut Engine) -> Result<(), LineError> {
        Err(LineError::UnknownType(String::new()))
    }
}
