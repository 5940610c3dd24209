//! Yardsticks for `bench/run`: what the hardware and serde_json allow, built on the
//! project's own line I/O, so the toolkit's figures can be read as ratios to them.
//!
//! ```text
//! yardstick copy  < in.jsonl > out   # memchr line copier: the I/O ceiling
//! yardstick typed < in.jsonl > out   # typed serde_json parse + compact re-serialize of
//!                                    # every line of a Claude stream: the parsing ceiling
//! ```
//!
//! `copy` reads with [`LineReader`] (memchr splitting and UTF-8 validation, as every
//! filter does) and writes with [`LineWriter`]. `typed` parses each line into borrowed
//! structs (`Cow<str>`: no copy unless the JSON string has escapes) declaring the fields of
//! Claude Code's stream-json that `normalize` reads, the tool output in both places it
//! appears included, and writes them back compact. Exit 1 if a line does not parse.

use std::borrow::Cow;
use std::fmt;
use std::io::{self, Write};
use std::marker::PhantomData;
use std::process::ExitCode;

use minicode_output::io::{Line, LineReader, LineWriter, DEFAULT_MAX_LINE};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

type Str<'a> = Cow<'a, str>;

/// One line of the stream: every kind in one struct, absent fields skipped on output.
#[derive(Deserialize, Serialize)]
struct Wire<'a> {
    #[serde(rename = "type", borrow)]
    kind: Str<'a>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    subtype: Option<Str<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    session_id: Option<Str<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    parent_tool_use_id: Option<Str<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    uuid: Option<Str<'a>>,
    // system/init
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    cwd: Option<Str<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    model: Option<Str<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    tools: Option<Vec<Str<'a>>>,
    // assistant, user
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    message: Option<Message<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    tool_use_result: Option<ToolUseResult<'a>>,
    // stream_event
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    event: Option<StreamEvent<'a>>,
    // result
    #[serde(default, skip_serializing_if = "Option::is_none")]
    is_error: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    duration_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    num_turns: Option<u64>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    result: Option<Str<'a>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    total_cost_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    usage: Option<Usage>,
}

#[derive(Deserialize, Serialize)]
struct Message<'a> {
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    id: Option<Str<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    role: Option<Str<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    model: Option<Str<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    content: Option<Content<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    stop_reason: Option<Str<'a>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    usage: Option<Usage>,
}

/// A string or a list of blocks. Serialized untagged; deserialized by hand, because an
/// untagged enum buffers its input and so cannot hold the `RawValue` of a tool's input.
#[derive(Serialize)]
#[serde(untagged)]
enum Content<'a> {
    Text(Str<'a>),
    Blocks(Vec<Block<'a>>),
}

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Content<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an array of blocks")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Owned(s.to_owned())))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Owned(s)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(b) = seq.next_element()? {
                    blocks.push(b);
                }
                Ok(Content::Blocks(blocks))
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

#[derive(Deserialize, Serialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow)]
    kind: Str<'a>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    text: Option<Str<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    id: Option<Str<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    name: Option<Str<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    input: Option<&'a RawValue>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    tool_use_id: Option<Str<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    content: Option<Content<'a>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    is_error: Option<bool>,
}

#[derive(Deserialize, Serialize)]
struct ToolUseResult<'a> {
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    stdout: Option<Str<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    stderr: Option<Str<'a>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    interrupted: Option<bool>,
    #[serde(rename = "isImage", default, skip_serializing_if = "Option::is_none")]
    is_image: Option<bool>,
}

#[derive(Deserialize, Serialize)]
struct StreamEvent<'a> {
    #[serde(rename = "type", borrow)]
    kind: Str<'a>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    index: Option<u32>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    message: Option<Message<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    content_block: Option<Block<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    delta: Option<Delta<'a>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    usage: Option<Usage>,
}

#[derive(Deserialize, Serialize)]
struct Delta<'a> {
    #[serde(rename = "type", borrow, default, skip_serializing_if = "Option::is_none")]
    kind: Option<Str<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    text: Option<Str<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    partial_json: Option<Str<'a>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    stop_reason: Option<Str<'a>>,
}

#[derive(Deserialize, Serialize)]
struct Usage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    output_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cache_read_input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cache_creation_input_tokens: Option<u64>,
}

fn run(typed: bool) -> io::Result<u64> {
    let mut lines = LineReader::new(io::stdin().lock(), DEFAULT_MAX_LINE);
    let mut out = LineWriter::new(io::stdout().lock());
    let mut bad = 0;
    while let Some(line) = lines.next_line()? {
        let text = match line {
            Line::Text(t) => t,
            Line::Oversized { .. } => {
                bad += 1;
                continue;
            }
        };
        if !typed {
            out.write_line(&text)?;
        } else if !text.trim().is_empty() {
            match serde_json::from_str::<Wire<'_>>(&text) {
                Ok(w) => out.write_json(&w)?,
                Err(e) => {
                    if bad == 0 {
                        eprintln!("yardstick: {e}");
                    }
                    bad += 1;
                }
            }
        }
    }
    out.flush()?;
    Ok(bad)
}

fn main() -> ExitCode {
    let typed = match std::env::args().nth(1).as_deref() {
        Some("copy") => false,
        Some("typed") => true,
        _ => {
            eprintln!("usage: yardstick copy|typed < in.jsonl > out");
            return ExitCode::from(2);
        }
    };
    match run(typed) {
        Ok(0) => ExitCode::SUCCESS,
        Ok(bad) => {
            eprintln!("yardstick: {bad} line(s) could not be used");
            ExitCode::from(1)
        }
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("yardstick: {e}");
            let _ = io::stderr().flush();
            ExitCode::from(2)
        }
    }
}
