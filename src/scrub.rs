//! The `scrub` stage: terminal control bytes out of every string ([`control`]), then secrets
//! replaced by typed markers (`[REDACTED:github-token]`) following the rule table
//! ([`rules`]). Ids and JSON object keys are scrubbed too, and stay what they were to the
//! event: a redacted id or key ends in a digest of the one it was, so it still names one
//! thing ([`Scrubber::scrub_id`]). Counts of redactions by kind feed the summary.
//!
//! Scrubbing is idempotent: a marker never matches a rule, and a text is scrubbed until
//! nothing changes, so a second pass finds nothing to do.
//!
//! ```
//! use minicode_output::scrub::Scrubber;
//! let mut s = Scrubber::new();
//! let out = s.scrub_str("export GITHUB_TOKEN=\x1b[1m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\x1b[0m");
//! assert_eq!(out, "export GITHUB_TOKEN=[REDACTED:github-token]");
//! assert_eq!(s.scrub_str(&out), out);
//! ```

pub mod check;
pub mod control;
pub mod detect;
pub mod json;
pub mod lead;
pub mod rules;
pub mod stream;
pub mod text;
pub mod view;
pub mod vouch;

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::event::{id_member, Event, Label, Relabel};
use detect::{Detector, Finding};
use json::Place;
use stream::Seal;

/// Text without its terminal control sequences and bytes: what other layers (the engine's
/// ids) use of this stage, so that they depend on its face and not on its modules.
pub use control::clean as without_controls;

/// What this build's scrubbing is: `normalize` stamps it on every session it writes
/// (`session.started`'s `scrubbedBy`), and `project` does not scrub again the events of a
/// session stamped with its own. A new revision whenever scrubbing would find more (a
/// rule, a check, a decoding), so that events an older build scrubbed are scrubbed again;
/// a test holds the rule table to the revision.
pub const REVISION: &str = "minicode-output/scrub-6";

/// How a redaction marker, `[REDACTED:kind]`, begins.
pub const MARK: &str = "[REDACTED:";

/// The marker of a private key (a test holds it to [`MARK`] and the key rules' kind).
pub(crate) const KEY_MARK: &str = "[REDACTED:private-key]";

/// Scrubs events and text, counting what it redacted.
#[derive(Debug, Default)]
pub struct Scrubber {
    counts: BTreeMap<String, u64>,
    known: Known,
}

impl Relabel for Scrubber {
    fn wants(&mut self, _: Label, s: &str) -> bool {
        !self.known.holds(s)
    }

    fn label(&mut self, label: Label, s: &mut String) {
        let new = match label {
            Label::Id => self.scrub_id(s),
            Label::EventId => self.scrub_event_id(s),
            Label::Name => self.scrub_known(s),
        };
        if let Cow::Owned(new) = new {
            *s = new;
        }
    }

    fn key(&mut self, key: &str) -> Option<String> {
        self.scrub_key(key)
    }
}

/// The strings last found safe (no control byte, no secret): an event's ids and names are
/// mostly those of the events before it (its session, its tool call, the tool's name), so
/// most are told safe by a comparison instead of a scan.
#[derive(Debug, Default)]
struct Known {
    safe: [String; KNOWN],
    next: usize,
}

/// How many safe strings [`Known`] keeps, and the longest it keeps.
const KNOWN: usize = 8;
const KNOWN_LEN: usize = 128;

impl Known {
    fn holds(&self, s: &str) -> bool {
        self.safe.iter().any(|k| k == s)
    }

    fn add(&mut self, s: &str) {
        if s.len() <= KNOWN_LEN && !self.holds(s) {
            let slot = &mut self.safe[self.next];
            slot.clear();
            slot.push_str(s);
            self.next = (self.next + 1) % KNOWN;
        }
    }
}

/// The digest that follows a redacted id or key: 12 hex digits of the XXH3 of the string it
/// was (without control bytes, for an id), fixed by XXH3's specification, so it is the same
/// in every run, build and filter.
pub fn id_digest(original: &str) -> String {
    format!("{:012x}", xxhash_rust::xxh3::xxh3_64(original.as_bytes()) >> 16)
}

/// `text` with each of `found` (in order, disjoint) replaced by its marker.
fn marked<'f>(text: &str, found: impl IntoIterator<Item = &'f Finding>) -> String {
    let detector = Detector::global();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for f in found {
        out.push_str(&text[at..f.range.start]);
        out.push_str(MARK);
        out.push_str(detector.rule(f).kind);
        out.push(']');
        at = f.range.end;
    }
    out.push_str(&text[at..]);
    out
}

/// The passes of a scrub of `text`: each finds the secrets of what the one before left and
/// replaces them by markers, until one finds none (a redaction can complete a pattern around
/// it only in contrived input; passing again until nothing changes makes a second scrub a
/// no-op whatever the input). `pass` sees each pass's findings and stops the scrub by
/// returning false. Returns the text the passes made, `None` when none changed it.
fn passes(text: &str, mut pass: impl FnMut(&[Finding]) -> bool) -> Option<String> {
    let detector = Detector::global();
    let mut changed: Option<String> = None;
    for _ in 0..4 {
        let text = changed.as_deref().unwrap_or(text);
        let found = detector.find(text);
        if found.is_empty() || !pass(&found) {
            break;
        }
        changed = Some(marked(text, &found));
    }
    changed
}

/// True when scrubbing `text` redacts any of `range`: a secret the text shows there, whole
/// or with text around it, or one that only a pass after another redaction finds. A seal
/// must leave such a range to that scrub: redacting part of it first could leave the rest
/// of that secret unrecognised.
fn touched_when_scrubbed(text: &str, mut range: std::ops::Range<usize>) -> bool {
    let detector = Detector::global();
    let mut touched = false;
    passes(text, |found| {
        touched = found.iter().any(|f| f.range.start < range.end && range.start < f.range.end);
        // The range moves by what each marker before it adds or takes.
        let start = range.start;
        for f in found.iter().filter(|f| f.range.end <= start) {
            let marker = MARK.len() + detector.rule(f).kind.len() + 1;
            range = range.start + marker - f.range.len()..range.end + marker - f.range.len();
        }
        !touched
    });
    touched
}

fn push_digest(out: &mut String, original: &str) {
    out.push('#');
    out.push_str(&id_digest(original));
}

impl Scrubber {
    /// A scrubber with the built-in rules.
    pub fn new() -> Scrubber {
        Scrubber::default()
    }

    /// Scrubs one string: borrowed when nothing changed, the common case.
    pub fn scrub_str<'a>(&mut self, s: &'a str) -> Cow<'a, str> {
        let text = control::clean(s);
        match self.redacted(&text) {
            Some(out) => Cow::Owned(out),
            None => text,
        }
    }

    /// `text` (without control bytes) with its secrets replaced by markers; `None` when it
    /// has none.
    fn redacted(&mut self, text: &str) -> Option<String> {
        passes(text, |found| {
            self.count(found);
            true
        })
    }

    /// Counts `found` among the redactions.
    fn count<'f>(&mut self, found: impl IntoIterator<Item = &'f Finding>) {
        let detector = Detector::global();
        for f in found {
            *self.counts.entry(detector.rule(f).kind.to_owned()).or_insert(0) += 1;
        }
    }

    /// Redacts in `tail`, the held end of a stream's text, the secrets it shows alone that
    /// it would not show followed by `next`, the stream's next text: `…QZ` ending one
    /// message and `Using…` beginning the next make `…QZUsing`, which is no key. A secret
    /// the join shows whole (a value that `next` goes on with) is left to be found so.
    /// Returns true when it changed `tail` (then without control bytes).
    pub fn seal_lost(&mut self, tail: &mut String, next: &str) -> bool {
        let detector = Detector::global();
        let alone = control::clean(tail);
        let found = detector.find(&alone);
        if found.is_empty() {
            return false;
        }
        let joined = control::clean(&[tail.as_str(), next].concat()).into_owned();
        // Cleaning the two together may change the tail's end (a sequence the join
        // completes): then every secret of the tail alone is redacted.
        let lost: Vec<Finding> = if joined.starts_with(&*alone) {
            found.into_iter().filter(|f| !touched_when_scrubbed(&joined, f.range.clone())).collect()
        } else {
            found
        };
        if lost.is_empty() {
            return false;
        }
        self.count(&lost);
        *tail = marked(&alone, &lost);
        true
    }

    /// Does what `seal` asks of `tail`, a stream's held tail (see [`Seal`]); true when it
    /// changed `tail`.
    pub fn seal(&mut self, tail: &mut String, seal: Seal<'_>) -> bool {
        match seal {
            Seal::Ended => self.scrub_text(tail),
            Seal::Crossed { next } => self.seal_lost(tail, next),
            Seal::KeyGoesOn => self.key_goes_on(tail),
        }
    }

    /// Redacts the lines of a private key that `piece` begins with, a key whose BEGIN line
    /// went out in an earlier piece of its stream (a key longer than a held tail): they are
    /// what the key's rule takes after a BEGIN line, up to its END line when `piece` holds
    /// it. Returns true when it changed `piece` (then without control bytes).
    pub fn key_goes_on(&mut self, piece: &mut String) -> bool {
        const BEGIN: &str = "-----BEGIN PRIVATE KEY-----\n";
        // A piece decided to bound what waits may begin inside a line: its start, however
        // short, is then read as the end of a body line.
        const INSIDE_A_LINE: &str = "-----BEGIN PRIVATE KEY-----\nAAAAAAAAAAAAAAAA";
        let clean = control::clean(piece);
        // The piece may begin with the marker of the key's lines before it, sealed at the
        // end of their block.
        let (before, rest) = clean.strip_prefix(KEY_MARK).map_or(("", &*clean), |rest| (KEY_MARK, rest));
        for head in [BEGIN, INSIDE_A_LINE] {
            let text = [head, rest].concat();
            let found = Detector::global().find(&text);
            if let Some(key) = found.iter().find(|f| f.range.start == 0 && f.range.end > head.len()) {
                self.count([key]);
                *piece = before.to_owned() + &marked(&text, [key]);
                return true;
            }
        }
        false
    }

    /// Scrubs one string in place; true when it changed.
    pub fn scrub_text(&mut self, s: &mut String) -> bool {
        let Cow::Owned(c) = self.scrub_str(s) else { return false };
        *s = c;
        true
    }

    /// Scrubs an id (of a session, tool call, approval): without control bytes, as the
    /// engine reads ids, and with its secrets redacted; a redacted id then ends in
    /// `#` and a digest of the id it was ([`id_digest`]), so that it stays the id of one
    /// thing: the same id is always written the same, two that differ stay apart.
    pub fn scrub_id<'a>(&mut self, id: &'a str) -> Cow<'a, str> {
        if self.known.holds(id) {
            return Cow::Borrowed(id);
        }
        let text = control::clean(id);
        match self.redacted(&text) {
            Some(mut out) => {
                push_digest(&mut out, &text);
                Cow::Owned(out)
            }
            None => {
                self.known.add(&text);
                text
            }
        }
    }

    /// Scrubs an event id, `{sessionId}:{turnId}:{seq}`: its session part as an id, so that
    /// it is written as the session's id is.
    pub fn scrub_event_id<'a>(&mut self, id: &'a str) -> Cow<'a, str> {
        let session_end = id.rmatch_indices(':').nth(1).map_or(id.len(), |(i, _)| i);
        let (session, rest) = id.split_at(session_end);
        match self.scrub_id(session) {
            Cow::Borrowed(_) => match control::clean(rest) {
                Cow::Borrowed(_) => Cow::Borrowed(id),
                Cow::Owned(rest) => Cow::Owned(format!("{session}{rest}")),
            },
            Cow::Owned(session) => Cow::Owned(session + &control::clean(rest)),
        }
    }

    /// Scrubs a key of a JSON object: a key that changes (control bytes, a secret) ends in
    /// `#` and a digest of the key it was, so that two keys of one object stay two.
    pub fn scrub_key(&mut self, key: &str) -> Option<String> {
        let Cow::Owned(mut out) = self.scrub_known(key) else { return None };
        push_digest(&mut out, key);
        Some(out)
    }

    /// [`Scrubber::scrub_str`] for a string that recurs from event to event (a tool's name,
    /// a key of its input): one that was found safe lately is told so by a comparison.
    fn scrub_known<'a>(&mut self, s: &'a str) -> Cow<'a, str> {
        if self.known.holds(s) {
            return Cow::Borrowed(s);
        }
        let out = self.scrub_str(s);
        if let Cow::Borrowed(_) = out {
            self.known.add(s);
        }
        out
    }

    /// Scrubs every string of an event: content, ids, names and object keys.
    pub fn scrub_event(&mut self, event: &mut Event) {
        event.for_each_text_mut(|_, s| {
            self.scrub_text(s);
        });
        event.relabel(self);
    }

    /// True when scrubbing the string values of the JSON line `line` could change it: it
    /// holds an unsafe character or an escape other than `\n`, `\t`, `\"`, `\\` (which could
    /// hide one, or a secret's keyword), or what may be a secret, in the line or in its
    /// strings decoded (a string may itself hold escaped text: `https:\\/\\/…`).
    pub fn may_change_json(&self, line: &str) -> bool {
        let detector = Detector::global();
        !control::json_is_clean(line.as_bytes())
            || detector.may_match(line)
            || view::View::of(line).is_some_and(|v| detector.may_match(&v.text))
    }

    /// Appends the JSON line `line` to `out` with every string scrubbed, the keys and ids
    /// of an event as [`Scrubber::scrub_event`] scrubs them, and each `\r` between its
    /// tokens, white space to JSON but a carriage return to a terminal, made a space.
    /// Returns true when anything changed.
    pub fn scrub_json_values(&mut self, line: &str, out: &mut Vec<u8>) -> bool {
        let start = out.len();
        let changed = json::rewrite_strings(line, out, |place, s| {
            let new = match place {
                Place::Key => return self.scrub_key(s),
                Place::Value { depth, key: Some(key) } => match id_member(depth, key) {
                    Some(Label::EventId) => self.scrub_event_id(s),
                    Some(_) => self.scrub_id(s),
                    None => self.scrub_str(s),
                },
                Place::Value { .. } => self.scrub_str(s),
            };
            match new {
                Cow::Owned(new) => Some(new),
                Cow::Borrowed(_) => None,
            }
        });
        // JSON allows no raw control character inside a string, so every `\r` is between
        // tokens.
        let written = &mut out[start..];
        let returns = memchr::memchr(b'\r', written).is_some();
        if returns {
            written.iter_mut().filter(|b| **b == b'\r').for_each(|b| *b = b' ');
        }
        changed || returns
    }

    /// Redactions so far, by kind.
    pub fn counts(&self) -> &BTreeMap<String, u64> {
        &self.counts
    }

    /// How many redactions so far.
    pub fn redactions(&self) -> u64 {
        self.counts.values().sum()
    }
}

/// A JSON line with the terminal control bytes removed from every string, keys included,
/// borrowed when there are none, which is checked cheaply. For readers of canonical lines:
/// [`Scrubber::scrub_event`] cleans what `normalize` writes, this also reaches lines written
/// by anything else.
pub fn clean_json_line(line: &str) -> Cow<'_, str> {
    if control::json_is_clean(line.as_bytes()) {
        return Cow::Borrowed(line);
    }
    let mut out = Vec::with_capacity(line.len());
    if !json::rewrite_strings(line, &mut out, |_, s| match control::clean(s) {
        Cow::Owned(clean) => Some(clean),
        Cow::Borrowed(_) => None,
    }) {
        return Cow::Borrowed(line);
    }
    // rewrite_strings copies `line` and writes whole strings, so the result is UTF-8.
    String::from_utf8(out).map_or(Cow::Borrowed(line), Cow::Owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "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";
    const OTHER: &str = "ghp_Synth3t1cT0kenF0rD0csN0tR3al005KMHj1";

    #[test]
    fn a_seal_redacts_only_what_the_join_would_hide() {
        let mut scrubber = Scrubber::new();
        let seal = |scrubber: &mut Scrubber, tail: &str, next: &str| {
            let mut tail = tail.to_owned();
            scrubber.seal_lost(&mut tail, next).then_some(tail)
        };
        // `…QZUsing` is no key: the key ended its message.
        let sealed = seal(&mut scrubber, "key AKIA3U23XXWXN4WGI4QZ", "Using it.");
        assert_eq!(sealed.as_deref(), Some("key [REDACTED:aws-access-key]"));
        // The value goes on in the next text: joined, it is found whole.
        assert_eq!(seal(&mut scrubber, "password: Xk9fQ2", "mZ7pLw done"), None);
        // A key the join still shows as one is left to be found with it.
        assert_eq!(seal(&mut scrubber, &format!("token {SECRET}"), " and more"), None);
        assert_eq!(seal(&mut scrubber, "plain words", "Next"), None);
        // Joined, another rule's secret overlaps the tail's: left to the join's scrub, which
        // redacts both (sealed first, the token's rest would show).
        let (tail, next) = ("password: hunter2/ghp_at9ag498dyT5bl5G", "hcqrGi0qx020vo3RWiXY ok");
        assert_eq!(seal(&mut scrubber, tail, next), None);
        assert!(!Scrubber::new().scrub_str(&format!("{tail}{next}")).contains("hcqrGi0qx0"));
        assert_eq!(scrubber.counts().values().sum::<u64>(), 1, "only the sealed key is counted");
    }

    #[test]
    fn the_key_marker_is_the_key_rules_marker() {
        let kinds: Vec<&str> =
            rules::RULES.iter().filter(|r| r.id.starts_with("private-key-pem")).map(|r| r.kind).collect();
        assert_eq!(kinds.len(), 2);
        assert!(kinds.iter().all(|kind| KEY_MARK == format!("{MARK}{kind}]")), "{kinds:?}");
    }

    #[test]
    fn the_revision_changes_with_the_rule_table() {
        // What each rule finds and how it is confirmed, without the formats' prose.
        let mut table = String::new();
        for r in rules::RULES {
            let anchor = match r.anchor {
                rules::Anchor::Literal(l) => format!("literal {l:?}"),
                rules::Anchor::Word(w) => format!("word {w:?}"),
                rules::Anchor::Assigned(w) => format!("assigned {w:?}"),
                rules::Anchor::Scan(_) => "scan".to_owned(),
            };
            table += &format!("{} {} {anchor} {:?} {}\n", r.id, r.kind, r.check, r.pattern);
        }
        let digest = format!("{:016x}", xxhash_rust::xxh3::xxh3_64(table.as_bytes()));
        assert_eq!(
            (REVISION, digest.as_str()),
            ("minicode-output/scrub-6", "e9cb237bd79018f9"),
            "the rule table changed: give scrub::REVISION a new number, and this test the new digest"
        );
    }

    #[test]
    fn an_id_with_a_secret_stays_one_id() {
        let mut s = Scrubber::new();
        let a = s.scrub_id(&format!("call_{SECRET}")).into_owned();
        let b = s.scrub_id(&format!("call_{OTHER}")).into_owned();
        assert!(a.starts_with("call_[REDACTED:github-token]#"), "{a}");
        assert_ne!(a, b, "two ids stay two");
        assert_eq!(Scrubber::new().scrub_id(&format!("call_{SECRET}")), a, "the same id is written the same");
        // Control bytes are not part of an id, as the engine reads ids.
        assert_eq!(s.scrub_id(&format!("call_\u{1b}[1m{SECRET}")), a);
        // Scrubbing again changes nothing, as an id or as text.
        assert_eq!(s.scrub_id(&a), a);
        assert_eq!(s.scrub_str(&a), a);
        assert_eq!(s.scrub_id("toolu_01ABC-def.2:x"), "toolu_01ABC-def.2:x");
    }

    #[test]
    fn an_event_id_is_written_on_its_session_id() {
        let mut s = Scrubber::new();
        let session = s.scrub_id(SECRET).into_owned();
        assert_eq!(s.scrub_event_id(&format!("{SECRET}:3:17")), format!("{session}:3:17"));
        assert_eq!(s.scrub_event_id("s1:0:1"), "s1:0:1");
    }

    #[test]
    fn keys_lose_secrets_and_control_characters_and_stay_apart() {
        let mut s = Scrubber::new();
        assert_eq!(s.scrub_key("command"), None);
        let secret = s.scrub_key(&format!("x-{SECRET}")).unwrap();
        assert!(secret.starts_with("x-[REDACTED:github-token]#"), "{secret}");
        let mut seen = Vec::new();
        for key in ["k\u{1b}[31mey", "k\u{85}ey", "k\u{202e}ey", "k\u{7f}ey", "k\u{80}ey"] {
            let clean = s.scrub_key(key).unwrap();
            assert!(clean.starts_with("key#"), "{key:?} gave {clean:?}");
            assert_eq!(s.scrub_key(&clean), None, "{clean}");
            assert!(!seen.contains(&clean), "{key:?} met another key");
            seen.push(clean);
        }
    }

    #[test]
    fn the_json_of_an_event_is_scrubbed_as_the_event_is() {
        let line = format!(
            r#"{{"schema":"minicode.output.v1","eventId":"{SECRET}:1:2","type":"tool.started","sessionId":"{SECRET}","correlationId":"c_{SECRET}","payload":{{"toolCallId":"c_{SECRET}","name":"n","qualified":"n","kind":"other","input":{{"k\u001b{SECRET}":"v","toolCallId":"{SECRET}"}}}}}}"#
        );
        let mut event: Event = serde_json::from_str(&line).unwrap();
        Scrubber::new().scrub_event(&mut event);
        let mut out = Vec::new();
        assert!(Scrubber::new().scrub_json_values(&line, &mut out));
        let rewritten: Event = serde_json::from_slice(&out).unwrap();
        assert_eq!(rewritten, event);
    }
}
