//! OpenCode dialect (to be written).

use super::{LineError, Parse};
use crate::engine::Engine;

/// The OpenCode parser.
#[derive(Debug, Default)]
pub struct OpenCode;

impl Parse for OpenCode {
    fn line(&mut self, _line: &str, _engine: &mut Engine) -> Result<(), LineError> {
        Err(LineError::UnknownType(String::new()))
    }
}
