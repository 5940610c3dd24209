//! placeholder
#[derive(Debug, Default)]
/// x
pub struct Claude;
impl super::Parse for Claude { fn line(&mut self, _l: &str, _e: &mut crate::engine::Engine) -> Result<(), super::LineError> { Err(super::LineError::UnknownType(String::new())) } }
