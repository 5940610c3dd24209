//! What people read, shared by the human projection and `summarize`'s reports: status glyphs
//! and words, colours, the small text helpers that keep a line safe ([`style`]), and the error
//! grammar ([`grammar`]). It sits below both so that neither reaches into the other.

pub(crate) mod grammar;
pub(crate) mod style;
