use std::fs::File;
use std::io::{Read, Write};

use super::input::Waiting;
use super::line::CHUNK;
use super::*;
use crate::event::Event;

fn lines(input: &[u8], max: usize) -> Vec<String> {
    let mut r = LineReader::new(input, max);
    let mut out = Vec::new();
    while let Some(l) = r.next_line().unwrap() {
        out.push(match l {
            Line::Text(t) => t.into_owned(),
            Line::Oversized { bytes, .. } => format!("<{bytes}>"),
        });
    }
    out
}

#[test]
fn an_oversized_lines_sample_never_ends_in_part_of_a_word() {
    let token = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789";
    for at in 4000..4100 {
        // The whole line in the buffer, or one that goes on past it.
        for tail in [b"c d ".repeat(300), vec![b'x'; 2 * CHUNK]] {
            let mut line = format!("{}{token} ", "a b ".repeat(at / 4)).into_bytes();
            line.extend(tail);
            line.push(b'\n');
            let mut r = LineReader::new(&line[..], 5000);
            let Some(Line::Oversized { sample, .. }) = r.next_line().unwrap() else { panic!("at {at}") };
            assert!(sample.len() <= 4096 && sample.ends_with(' '), "at {at}: {sample:?}");
            assert!(!sample.contains("ghp_") || sample.contains(token), "at {at}: {sample:?}");
        }
    }
    let mut r = LineReader::new(&b"short line\n"[..], 4);
    assert!(matches!(r.next_line().unwrap(), Some(Line::Oversized { sample, .. }) if sample == "short line"));
}

#[test]
fn blank_is_spaces_and_tabs_only() {
    assert!(["", " ", "\t \t"].iter().all(|l| is_blank(l)));
    assert!(!["\x0c", "\u{a0}", "\u{3000}", " \r ", "x"].iter().any(|l| is_blank(l)));
}

#[test]
fn a_line_read_without_tool_output_is_cleaned_and_fails_as_a_whole_line() {
    let line = |kind: &str| {
        format!(
            r#"{{"schema":"minicode.output.v1","eventId":"s:1:2","type":"tool.completed","sessionId":"s\u001b[31m","turnId":1,"payload":{{"toolCallId":"c","name":"ls","output":{{"stdout":"a\nb"}},"kind":"{kind}"}}}}"#
        )
    };
    let how = |tool_output| Reading { clean: true, tool_output };
    assert!(Event::cut_tool_output(&line("shell")).is_some(), "the line is cut");
    let ev = how(false).read(&line("shell")).unwrap();
    assert_eq!(ev.session_id, "s");
    assert_eq!(ev, Event { body: ev.body.clone(), ..how(true).read(&line("shell")).unwrap() });
    let crate::event::Body::ToolEnded(t) = &ev.body else { panic!("{ev:?}") };
    assert_eq!(t.output.as_ref().and_then(|o| o.stdout.as_deref()), Some(""));
    // Read cut, the error would be four columns sooner.
    let error = |tool_output| how(tool_output).read(&line("spade")).unwrap_err().to_string();
    assert_eq!(error(false), error(true));
}

#[test]
fn splits_crlf_bom_and_a_final_line_without_newline() {
    assert_eq!(lines(b"\xef\xbb\xbfa\r\nb\n\nc", 100), ["a", "b", "", "c"]);
}

#[test]
fn every_trailing_carriage_return_goes_with_the_line_ending() {
    assert_eq!(lines(b"a\r\r\nb\rc\r\r\r\n\r\n\r\r", 100), ["a", "b\rc", "", ""]);
}

#[test]
fn invalid_utf8_is_decoded_lossily() {
    assert_eq!(lines(b"caf\xe9\n", 100), ["caf\u{fffd}"]);
}

#[test]
fn long_lines_become_oversized_and_reading_goes_on() {
    let mut input = vec![b'x'; 300_000];
    input.extend_from_slice(b"\nnext\n");
    assert_eq!(lines(&input, 1000), ["<300000>", "next"]);
    let mut input = b"short\n".to_vec();
    input.extend(std::iter::repeat_n(b'y', 2000));
    input.extend_from_slice(b"\nlast");
    assert_eq!(lines(&input, 1000), ["short", "<2000>", "last"]);
}

#[test]
fn lines_across_chunk_boundaries_are_whole() {
    let input: Vec<u8> = (0..50_000).flat_map(|i| format!("line {i}\n").into_bytes()).collect();
    let got = lines(&input, DEFAULT_MAX_LINE);
    assert_eq!(got.len(), 50_000);
    assert_eq!(got[49_999], "line 49999");
}

#[test]
fn utf16_with_bom_is_decoded() {
    let mut bytes = vec![0xff, 0xfe];
    for u in "héllo\nwörld\n".encode_utf16() {
        bytes.extend_from_slice(&u.to_le_bytes());
    }
    let r = decoding(io::Cursor::new(bytes)).unwrap();
    let mut lr = LineReader::new(r, 100);
    let mut got = Vec::new();
    while let Some(Line::Text(t)) = lr.next_line().unwrap() {
        got.push(t.into_owned());
    }
    assert_eq!(got, ["héllo", "wörld"]);
}

/// Input handed over in pieces, of which the first `ready` are waiting; reading past
/// them is where a pipe would wait, and fails the test instead.
struct Script {
    pieces: std::collections::VecDeque<&'static [u8]>,
    ready: usize,
}

impl Read for Script {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        assert!(self.ready > 0, "read an input that had nothing ready");
        self.ready -= 1;
        let piece = self.pieces.pop_front().unwrap_or_default();
        buf[..piece.len()].copy_from_slice(piece);
        Ok(piece.len())
    }
}

impl Input for Script {
    fn ready(&self) -> bool {
        self.ready > 0
    }
}

fn script(pieces: &[&'static [u8]], ready: usize, max_line: usize) -> LineReader<Script> {
    LineReader::new(Script { pieces: pieces.iter().copied().collect(), ready }, max_line)
}

fn text(line: Option<Line<'_>>) -> String {
    match line {
        Some(Line::Text(t)) => t.into_owned(),
        other => panic!("expected a line, got {other:?}"),
    }
}

#[test]
fn input_waits_when_no_whole_line_is_buffered_or_ready() {
    // Half a line buffered and nothing ready: the reader must flush before it waits.
    let mut r = script(&[b"a\nb"], 1, 100);
    assert_eq!(text(r.next_line().unwrap()), "a");
    assert!(r.would_wait().unwrap());

    // The rest of the line is ready: it is read, and the next line needs no wait.
    let mut r = script(&[b"a\nb", b"c\nd"], 2, 100);
    assert_eq!(text(r.next_line().unwrap()), "a");
    assert!(!r.would_wait().unwrap());
    assert_eq!(text(r.next_line().unwrap()), "bc");

    // What was ready still ends mid-line: that counts as waiting.
    let mut r = script(&[b"a\nb", b"c"], 2, 100);
    assert_eq!(text(r.next_line().unwrap()), "a");
    assert!(r.would_wait().unwrap());

    // The end of the input is ready too: the last line without a newline follows at once.
    let mut r = script(&[b"a\nb"], 2, 100);
    assert_eq!(text(r.next_line().unwrap()), "a");
    assert!(!r.would_wait().unwrap());
    assert_eq!(text(r.next_line().unwrap()), "b");
    assert!(r.next_line().unwrap().is_none());

    // A line already past the limit is skipped by reading on, which may wait.
    let mut r = script(&[b"a\nbbbbbbbbbb", b"\n"], 2, 4);
    assert_eq!(text(r.next_line().unwrap()), "a");
    assert!(r.would_wait().unwrap());

    // Input that never waits (a file, bytes in memory) never asks for a flush, even with
    // a line longer than one read.
    let long = [&b"a\n"[..], &[b'b'; 3 * CHUNK], b"\nc\n"].concat();
    let mut r = LineReader::new(decoding(io::Cursor::new(long)).unwrap(), DEFAULT_MAX_LINE);
    assert_eq!(text(r.next_line().unwrap()), "a");
    assert!(!r.would_wait().unwrap());
}

#[test]
fn a_pipe_is_ready_once_its_writer_wrote_or_closed() {
    let (reader, mut writer) = io::pipe().unwrap();
    let mut pipe = Waiting(File::from(std::os::fd::OwnedFd::from(reader)));
    assert!(!pipe.ready());
    writer.write_all(b"x\n").unwrap();
    assert!(pipe.ready());
    let mut buf = [0; 8];
    assert_eq!(pipe.read(&mut buf).unwrap(), 2);
    assert!(!pipe.ready());
    drop(writer);
    assert!(pipe.ready());
    assert_eq!(pipe.read(&mut buf).unwrap(), 0);
}
