//! Secrets streamed in pieces: a model streams its text, its thinking and a tool's output a
//! few characters per event, so a key split over two deltas would pass a scrubber that
//! looks at each event alone. The [`Holder`] keeps the unfinished tail of each stream (the
//! text that could still be the start of a secret, see [`hold_from`]) and gives it to the
//! stream's next delta, so a secret is whole in one event when that event is scrubbed.
//!
//! Events keep their order: an event whose tail is held waits, with every event after it,
//! until the stream's next delta, an event that ends the stream's block (an event of its
//! session, see [`Ends`]), or a pause of the input ([`Holder::pause`], which lets an
//! unfinished private key wait for its END line) decides it, unless the output must be
//! reproducible ([`Pauses::Wait`]): where a pause falls depends on read timing, so then
//! only the stream's next delta, its block's end or the end of the input decide, and the
//! same input gives the same bytes however it arrives. The held tail is bounded by
//! [`MAX_HOLD`], and the events waiting behind held tails by count ([`MAX_WAITING`]) and by
//! bytes ([`MAX_WAITING_BYTES`]); a key decided early, by those bounds, has the rest of its
//! lines redacted as the key's all the same ([`Seal::KeyGoesOn`]). Text only moves from an
//! event to a later one of the same stream when a tail was held, so a stream with nothing
//! secret-like in it comes out as it went in; an event whose text all moved on keeps an
//! empty delta (its id and provenance stay).
//!
//! A delta that begins a new block of its stream ([`Piece::First`], where the provider says
//! so) is still joined to the held tail, as a second scrub of the output would join it, but
//! the tail is first scrubbed as the end of its block ([`Holder::push_sealing`]): `AKIA…`
//! ending one message and `Using…` beginning the next make no longer run that is no key.
//! A delta joined across other sessions' events or other streams' deltas, which may or may
//! not begin a new block (a thought chunk, a message chunk, a thought chunk, from an agent
//! that gives no message ids), has the tail first redacted of what it shows alone and the
//! join would hide ([`Seal::Crossed`]).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet, VecDeque};

use super::check::KeyTail;
use super::control::clean;
use super::detect::Detector;
use super::lead::Walks;
use crate::bound::ceil_boundary;
use crate::engine::clock::Clock;
use crate::event::{Body, Event, Piece, Role, Stream};

/// The longest tail held for a stream: longer than a 4096-bit RSA key in PEM and than the
/// reach of a keyword-anchored rule on its line. A longer key is decided half a hold at a
/// time, its lines after the first piece sealed as the key's ([`Seal::KeyGoesOn`]).
pub const MAX_HOLD: usize = 8 * 1024;

/// The most events waiting behind held tails; past it the oldest stream is decided.
pub const MAX_WAITING: usize = 256;

/// The most bytes (by [`Delta::weight`]) waiting behind held tails; past it the oldest
/// stream is decided, so 256 large tool results cannot pile up behind one held tail. One
/// item alone may weigh more (a line is bounded by the reader): it still holds its tail.
pub const MAX_WAITING_BYTES: usize = 4 * 1024 * 1024;

/// Where the tail of `text` that could still be (or lead to) a secret starts: the last
/// run of non-white-space characters (a token being streamed), the start of a literal
/// anchor (`gh` of `ghp_`), the whole last line when it holds an anchor (a keyword whose
/// value may follow) and a match that was under way where it began, the line before when
/// it is an element whose value may be on the next line (`<password>`), a match the next
/// text could complete from its first bytes on (the context of `docker login -p`, the
/// lines of a `.netrc` entry), an unfinished PEM block, lines that may be the last of a
/// key without its BEGIN line (with the line before them); at most [`MAX_HOLD`] bytes.
pub fn hold_from(text: &str) -> usize {
    Scan::default().hold_from(text, 0)
}

/// Bytes before a delta looked at again with it, for what may begin in the tail and end in
/// the delta: an anchor literal, also spelled with escapes or invisible characters between
/// its letters (then a longer one could be missed), a `-----BEGIN` or `-----END`.
const REACH: usize = 256;

/// What [`hold_from`] found in a held tail, so that with the next delta only the delta
/// and `REACH` bytes before it are looked at, not the whole tail again: the cost of a
/// delta is its length and a constant, however long the tail. Positions are in the text.
#[derive(Debug, Clone, Default)]
pub struct Scan {
    /// Where the last line starts.
    line: usize,
    /// The last line holds an anchor.
    anchored: bool,
    /// Where the last run of non-white-space starts.
    run: usize,
    /// The DFA walks of the rules with leads.
    walks: Walks,
    /// Where the earliest match under way when the last line began starts: it may end in
    /// that line, so the line's start is no place to cut it.
    open_at_line: Option<usize>,
    /// Where the line before the last starts, when it is an element that may hold a secret
    /// with its value on the next line (`<password>`): held until that line ends.
    element: Option<usize>,
    /// An unfinished PEM block: where its `-----BEGIN` line starts, and the `-----BEGIN`
    /// (both 0 when they were decided before: see `key_cut`).
    pem: Option<(usize, usize)>,
    /// The text goes on with that block's lines, its BEGIN line decided before: a key longer
    /// than [`MAX_HOLD`]. What is decided of it is a key's lines with nothing before them to
    /// say so ([`Seal::KeyGoesOn`]).
    key_cut: bool,
    /// Whole lines at the end of what was seen that may be the last lines of a key without
    /// its BEGIN line ([`KeyTail`]), and where the line before them starts: an END line may
    /// follow.
    key_tail: KeyTail,
    key_tail_at: usize,
}

impl Scan {
    /// Where the held tail of `text` starts ([`hold_from`]), given that this scan has seen
    /// `text[..seen]`; then this scan has seen all of `text`.
    pub fn hold_from(&mut self, text: &str, seen: usize) -> usize {
        let detector = Detector::global();
        let b = text.as_bytes();
        let back = |n: usize| ceil_boundary(text, seen.saturating_sub(n));
        let near = back(b"-----BEGIN".len() - 1).max(self.pem.map_or(0, |(_, begin)| begin + 1));
        if let Some(begin) = memchr::memmem::rfind(&b[near..], b"-----BEGIN").map(|i| near + i) {
            // No line ends in the last line of what was seen, nor inside the `-----BEGIN`.
            let lo = self.line.max(seen.min(begin));
            self.pem = Some((memchr::memrchr(b'\n', &b[lo..begin]).map_or(self.line, |i| lo + i + 1), begin));
        }
        if let Some((_, begin)) = self.pem {
            let near = back(b"-----END".len() - 1).max(begin);
            if memchr::memmem::find(&b[near..], b"-----END").is_some() {
                self.pem = None;
            }
        }
        if let Some(i) = text[seen..].rfind(char::is_whitespace) {
            self.run = seen + i + text[seen + i..].chars().next().map_or(1, char::len_utf8);
        }
        match memchr::memrchr(b'\n', &b[seen..]) {
            Some(i) => {
                let line = seen + i + 1;
                let mut start = self.line;
                for nl in memchr::memchr_iter(b'\n', &b[seen..line]).map(|j| seen + j) {
                    let next = self.key_tail.line(&text[start..nl]);
                    // A run starts only after a line that is none of a key's: one held from
                    // further back than a scan of the rest would hold would not be decided
                    // alike by a second scrub.
                    if next.is_open() && !self.key_tail.is_open() {
                        self.key_tail_at = line_before(b, start);
                    }
                    self.key_tail = next;
                    start = nl + 1;
                }
                detector.leads().advance(&mut self.walks, &text[..line], seen);
                self.open_at_line = detector.leads().earliest_open(&self.walks);
                detector.leads().advance(&mut self.walks, text, line);
                self.element = element_start(detector, text, line - 1);
                self.line = line;
                self.anchored = detector.may_match(&text[self.line..]);
            }
            None => {
                if !self.anchored {
                    self.anchored = detector.may_match(&text[self.line.max(back(REACH))..]);
                }
                detector.leads().advance(&mut self.walks, text, seen);
            }
        }
        let mut from = self.run;
        let end = ceil_boundary(text, text.len().saturating_sub(detector.longest_literal()));
        if let Some(p) = detector.partial_anchor_at_end(&text[end..]).map(|p| end + p) {
            // An anchor with a space in it starts before the last run: hold from its own run.
            from = from.min(self.run_of(text, p));
        }
        if self.anchored {
            from = from.min(self.line);
            if let Some(p) = self.open_at_line {
                // `machine` and `login` lines before a `.netrc` `password` line.
                from = from.min(self.run_of(text, p));
            }
        }
        if let Some(e) = self.element {
            from = from.min(e);
        }
        if let Some(p) = detector.leads().earliest_open(&self.walks) {
            // From the start of the word it begins in (`enterprise.` of
            // `enterprise.contribsys.com`): a word cut in two would be held whole by a second
            // scrub, which would then put the text in other events than the first did.
            from = from.min(self.run_of(text, p));
        }
        if let Some((line, _)) = self.pem {
            from = from.min(line);
        }
        if self.key_tail.is_open() {
            from = from.min(self.key_tail_at);
        } else if matches!(b.last(), Some(b' ' | b'\t' | b'\r')) && self.key_tail.line(&text[self.line..]).is_open() {
            // The line may be a key's, its line break still to come after blanks (CRLF):
            // let go at its blanks, it would come to the next scan without its start.
            from = from.min(line_before(b, self.line));
        }
        let cap = ceil_boundary(text, text.len().saturating_sub(MAX_HOLD));
        if from >= cap || self.pem.is_none() && !self.key_cut {
            return from.max(cap);
        }
        // A key longer than the hold is decided half a hold at a time, between its lines:
        // each piece is whole lines, which read after a BEGIN line are the key's.
        let half = ceil_boundary(text, text.len() - MAX_HOLD / 2);
        memchr::memchr(b'\n', &b[half..]).map(|i| half + i + 1).filter(|&at| at < text.len()).unwrap_or(half)
    }

    /// The scan of the text that goes on with a key whose lines so far were decided.
    fn in_key() -> Scan {
        Scan { pem: Some((0, 0)), key_cut: true, ..Scan::default() }
    }

    /// Where the run of non-white-space that holds `text[p]` starts, looking back at most
    /// `REACH` bytes (past them, the start of the text).
    fn run_of(&self, text: &str, p: usize) -> usize {
        let lo = ceil_boundary(text, p.saturating_sub(REACH));
        match text[lo..p].rfind(char::is_whitespace) {
            _ if p >= self.run => self.run,
            Some(i) => lo + i + text[lo + i..].chars().next().map_or(1, char::len_utf8),
            None => 0,
        }
    }

    /// The text loses its first `n` bytes (they were decided): what began in them begins
    /// at the start now, which holds at least what a scan of the rest would hold.
    pub fn shift(&mut self, n: usize) {
        self.line = self.line.saturating_sub(n);
        self.run = self.run.saturating_sub(n);
        self.walks.shift(n);
        self.open_at_line = self.open_at_line.map(|p| p.saturating_sub(n));
        self.element = self.element.map(|e| e.saturating_sub(n));
        self.key_tail_at = self.key_tail_at.saturating_sub(n);
        // A key goes on until what is decided passes its BEGIN line, and then until a piece
        // of it is decided after its END line was seen.
        self.key_cut = match self.pem {
            Some((line, _)) => self.key_cut || n > line,
            None => self.key_cut && n == 0,
        };
        if let Some((line, begin)) = &mut self.pem {
            *line = line.saturating_sub(n);
            *begin = begin.saturating_sub(n);
        }
    }
}

/// Where the line before the one that starts at `b[start]` starts (0 when there is none):
/// it may be the context a value on that line is a secret by (`<password>`), which must not
/// be decided without it.
fn line_before(b: &[u8], start: usize) -> usize {
    let before = start.checked_sub(1).map(|end| memchr::memrchr(b'\n', &b[..end]));
    before.flatten().map_or(0, |i| i + 1)
}

/// Where the line that ends at the new line `text[nl]` starts, when it ends an element
/// that may name a secret (`<password>`, `<api_key> `), whose value may come on the next
/// line; the line is looked at back to [`REACH`] bytes before its end.
fn element_start(detector: &Detector, text: &str, nl: usize) -> Option<usize> {
    let b = text.as_bytes();
    let lo = ceil_boundary(text, nl.saturating_sub(REACH));
    let end = b[lo..nl].iter().rposition(|c| !matches!(c, b' ' | b'\t' | b'\r'))?;
    if b[lo + end] != b'>' {
        return None;
    }
    let start = memchr::memrchr(b'\n', &b[lo..nl]).map_or(lo, |i| lo + i + 1);
    detector.may_match(&text[start..nl]).then_some(start)
}

/// The stream a delta is of: its session, the call that spawned its agent for a subagent's,
/// its kind, and its tool call (empty for text and thinking). Ids are keyed without control
/// bytes, as they are written, so that a second scrub keys them alike.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StreamKey {
    session: String,
    parent: String,
    kind: &'static str,
    call: String,
}

/// The open streams' blocks that an item which is no delta ends. Sessions run side by side
/// (an ACP client's, a pipe of two runs): another session's tool call ends no block of
/// this one, whose message may go on, in the middle of a secret, with its next chunk.
/// Within a session an event ends every block, a subagent's or another tool's too: held
/// text joined across it would be moved before it, out of the session's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ends<'a> {
    /// None: a usage report (it comes in the middle of a message), a line that is no event,
    /// a blank line.
    Nothing,
    /// Those of one session.
    Session(Cow<'a, str>),
    /// Every one: a run ends (its summary).
    All,
}

impl<'a> Ends<'a> {
    /// The blocks an event of `session` ends, by its type: one rule for an event read whole
    /// (`normalize`) and for one skimmed from its line (`scrub`), so both cut text alike.
    pub fn of(type_name: &str, session: &'a str) -> Ends<'a> {
        match type_name {
            "usage" => Ends::Nothing,
            "summary" => Ends::All,
            _ => Ends::Session(clean(session)),
        }
    }

    /// These ends, holding their session's id.
    pub fn into_owned(self) -> Ends<'static> {
        match self {
            Ends::Nothing => Ends::Nothing,
            Ends::Session(s) => Ends::Session(Cow::Owned(s.into_owned())),
            Ends::All => Ends::All,
        }
    }

    /// These ends, borrowing their session's id.
    pub fn borrowed(&self) -> Ends<'_> {
        match self {
            Ends::Nothing => Ends::Nothing,
            Ends::Session(s) => Ends::Session(Cow::Borrowed(s)),
            Ends::All => Ends::All,
        }
    }

    /// True when these are the blocks of `key`'s stream among them.
    fn include(&self, key: &StreamKey) -> bool {
        match self {
            Ends::Nothing => false,
            Ends::Session(session) => key.session == *session,
            Ends::All => true,
        }
    }
}

/// An item of a stream of events: an event, or a line that carries one.
pub trait Delta {
    /// The stream this item is a delta of, or `None`.
    fn stream(&self) -> Option<StreamKey>;
    /// The blocks this item, not a delta, ends.
    fn ends_blocks(&self) -> Ends<'_>;
    /// The delta text (called only when [`Delta::stream`] is `Some`).
    fn delta_mut(&mut self) -> &mut String;
    /// True when the delta begins a new block of its stream ([`Piece::First`]): a secret
    /// that ended the block before it ended there, whatever this one begins with. The item
    /// forgets it: past the holder it means nothing, and the item is then what it reads
    /// back as from its line.
    fn take_first_piece(&mut self) -> bool {
        false
    }
    /// Told that the holder changed the delta.
    fn touched(&mut self) {}
    /// About how many bytes the item holds while it waits, for [`MAX_WAITING_BYTES`].
    fn weight(&mut self) -> usize;
}

/// The kind of stream an event is a delta of, and its tool call (empty for text), or `None`
/// for an event that is no delta.
fn stream_kind(event: &Event) -> Option<(&'static str, &str)> {
    Some(match &event.body {
        Body::Text(t) => (
            match t.role {
                Role::Assistant => "text/assistant",
                Role::User => "text/user",
                Role::System => "text/system",
            },
            "",
        ),
        Body::Reasoning(_) => ("reasoning", ""),
        Body::ToolOutput(o) => (
            match o.stream {
                Stream::Combined => "output/combined",
                Stream::Stdout => "output/stdout",
                Stream::Stderr => "output/stderr",
            },
            o.tool_call_id.as_str(),
        ),
        _ => return None,
    })
}

/// True when `event` is a delta of a stream, which a [`Holder`] may hold and join to the
/// deltas before and after it; any other event it passes on unchanged.
pub fn is_delta(event: &Event) -> bool {
    stream_kind(event).is_some()
}

impl Delta for Event {
    fn stream(&self) -> Option<StreamKey> {
        let (kind, call) = stream_kind(self)?;
        Some(StreamKey {
            session: clean(&self.session_id).into_owned(),
            parent: clean(self.parent_id.as_deref().unwrap_or("")).into_owned(),
            kind,
            call: clean(call).into_owned(),
        })
    }

    fn ends_blocks(&self) -> Ends<'_> {
        Ends::of(self.type_name(), &self.session_id)
    }

    fn take_first_piece(&mut self) -> bool {
        let piece = match &mut self.body {
            Body::Text(t) => &mut t.piece,
            Body::Reasoning(r) => &mut r.piece,
            _ => return false,
        };
        std::mem::take(piece) == Piece::First
    }

    fn delta_mut(&mut self) -> &mut String {
        match &mut self.body {
            Body::Text(t) => &mut t.delta,
            Body::Reasoning(r) => &mut r.delta,
            Body::ToolOutput(o) => &mut o.delta,
            _ => unreachable!("delta_mut is only called on deltas"),
        }
    }

    fn weight(&mut self) -> usize {
        // The text fields and a little for the envelope's ids.
        let mut n = 256;
        self.for_each_text_mut(|_, s| n += s.len());
        n
    }
}

/// What a pause of the input does to the held tails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pauses {
    /// A pause decides them, so nothing waits on a silent pipe; where a stream's text is cut
    /// between its events then depends on when the input paused.
    Decide,
    /// They wait for the stream's next delta, its block's end or the end of the input, so
    /// the output bytes depend on the input alone: reproducible mode trades that latency.
    Wait,
}

impl Pauses {
    /// `Wait` when the clock is fixed (`SOURCE_DATE_EPOCH`: the output must be
    /// reproducible), else `Decide`.
    pub fn for_clock(clock: Clock) -> Pauses {
        match clock {
            Clock::Fixed(_) => Pauses::Wait,
            Clock::System => Pauses::Decide,
        }
    }
}

/// An item waiting to be written.
struct Slot<T> {
    item: T,
    /// The item's [`Delta::weight`] when it last changed.
    weight: usize,
    /// For the open (last) delta of its stream: its stream, where its undecided tail starts,
    /// what the scan of that tail found (its positions in the tail), and the holder's
    /// [`Holder::crossings`] when it was held.
    open: Option<(StreamKey, usize, Scan, u64)>,
}

impl<T: Delta> Slot<T> {
    /// Decides the held tail: the lines of a key whose BEGIN line went out before are sealed
    /// as such ([`Seal::KeyGoesOn`]). Returns the stream and its scan, when it was open.
    fn settle(
        &mut self,
        bytes: &mut usize,
        mut seal: impl FnMut(&mut String, Seal<'_>) -> bool,
    ) -> Option<(StreamKey, Scan)> {
        let (key, cut, scan, _) = self.open.take()?;
        if scan.key_cut {
            let mut tail = self.item.delta_mut().split_off(cut);
            seal(&mut tail, Seal::KeyGoesOn);
            append_here(self.item.delta_mut(), &tail);
            self.item.touched();
            let weight = self.item.weight();
            *bytes = *bytes - self.weight + weight;
            self.weight = weight;
        }
        Some((key, scan))
    }
}

/// What a seal is asked to do with a held tail, before the stream's next text is joined to
/// it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seal<'a> {
    /// The tail ended its block (the next text begins a new one): scrub it as an end.
    Ended,
    /// Events of other sessions, or other streams' deltas, came between the tail and
    /// `next`, which may begin a new block or go on with this one: redact what the tail
    /// alone shows as a secret and the join would not (see
    /// [`crate::scrub::Scrubber::seal_lost`]).
    Crossed {
        /// The next text of the stream.
        next: &'a str,
    },
    /// The text goes on with the lines of a private key whose BEGIN line went out in an
    /// earlier piece (a key longer than [`MAX_HOLD`]): redact the key's lines it begins with
    /// (see [`crate::scrub::Scrubber::key_goes_on`]).
    KeyGoesOn,
}

/// Holds back the undecided tails of delta streams; see the module doc.
pub struct Holder<T> {
    queue: VecDeque<Slot<T>>,
    /// The position in `queue` of each stream's open slot, counted from `popped`.
    open: HashMap<StreamKey, u64>,
    /// The streams whose held tail, inside an unfinished key, was decided to keep the
    /// waiting items bounded: their next delta goes on with the key's lines.
    in_key: HashSet<StreamKey>,
    /// How many slots have left the queue.
    popped: u64,
    /// The sum of the waiting slots' weights.
    bytes: usize,
    pauses: Pauses,
    /// Where a held tail and the next delta are joined.
    joined: String,
    /// How many items have come that a stream's block may have ended at, unsaid: events
    /// that end blocks (of some session: held across one of another session's, a stream's
    /// next text may or may not begin a new block), and deltas (held across another
    /// stream's, as a thought across a message's chunk where the agent gives no message
    /// ids). A stream's next delta seals its tail when any came between ([`Seal::Crossed`]).
    crossings: u64,
}

impl<T: Delta> Holder<T> {
    /// An empty holder, whose [`Holder::pause`] does as `pauses` says.
    pub fn new(pauses: Pauses) -> Holder<T> {
        Holder {
            queue: VecDeque::new(),
            open: HashMap::new(),
            in_key: HashSet::new(),
            popped: 0,
            bytes: 0,
            pauses,
            joined: String::new(),
            crossings: 0,
        }
    }

    /// True when nothing waits.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Takes the next item; appends to `ready` the items now decided, in order.
    pub fn push(&mut self, item: T, ready: &mut Vec<T>) {
        self.push_sealing(item, ready, |_, _| false);
    }

    /// [`Holder::push`], which calls `seal` on the held tail of the item's stream when the
    /// item begins a new block ([`Delta::take_first_piece`], [`Seal::Ended`]) or when other
    /// sessions' events or other streams' deltas came between them ([`Seal::Crossed`]);
    /// `seal` says whether it changed the tail. The item's text is joined to what that left.
    /// It is still joined, so that the text is cut between events as a second scrub of the
    /// output (which knows nothing of blocks) cuts it.
    pub fn push_sealing(
        &mut self,
        mut item: T,
        ready: &mut Vec<T>,
        mut seal: impl FnMut(&mut String, Seal<'_>) -> bool,
    ) {
        match item.stream() {
            None => {
                let ends = item.ends_blocks();
                if ends != Ends::Nothing {
                    self.decide_open(|key, _| ends.include(key), &mut seal);
                    if !self.in_key.is_empty() {
                        self.in_key.retain(|key| !ends.include(key));
                    }
                    self.crossings += 1;
                }
                if self.queue.is_empty() {
                    ready.push(item);
                    return;
                }
                self.enqueue(item, None);
            }
            Some(key) => {
                let mut text = std::mem::take(item.delta_mut());
                let first = item.take_first_piece();
                // Most streams never held a key: their deltas hash no key more.
                let goes_on = !self.in_key.is_empty() && self.in_key.remove(&key) && !first;
                let (mut scan, mut seen) = (if goes_on { Scan::in_key() } else { Scan::default() }, 0);
                if let Some(at) = self.open.remove(&key) {
                    let prev = &mut self.queue[(at - self.popped) as usize];
                    let (_, cut, tail_scan, crossings) = prev.open.take().expect("an open stream's slot is open");
                    let delta = prev.item.delta_mut();
                    // The text is joined in a buffer of the holder's and given back to the
                    // two deltas' own strings, grown only by `append_here`.
                    let joined = &mut self.joined;
                    joined.clear();
                    joined.push_str(&delta[cut..]);
                    delta.truncate(cut);
                    // A sealed tail that changed is looked at again whole (it is short).
                    let sealed = if first {
                        if tail_scan.key_cut {
                            seal(joined, Seal::KeyGoesOn);
                        }
                        seal(joined, Seal::Ended);
                        if tail_scan.pem.is_some() {
                            // A key its block's end cut off may go on in the new block (as a
                            // model's next message): the new text is read as its lines.
                            scan = Scan::in_key();
                        }
                        true
                    } else {
                        crossings != self.crossings && seal(joined, Seal::Crossed { next: &text })
                    };
                    let tail = if sealed {
                        0
                    } else {
                        scan = tail_scan;
                        joined.len()
                    };
                    joined.push_str(&text);
                    // Only the new text (and a little before it) is looked at: see `Scan`.
                    let decided = scan.hold_from(joined, tail);
                    if scan.key_cut && decided > 0 {
                        let mut piece = joined[..decided].to_owned();
                        seal(&mut piece, Seal::KeyGoesOn);
                        append_here(delta, &piece);
                    } else {
                        append_here(delta, &joined[..decided]);
                    }
                    scan.shift(decided);
                    prev.item.touched();
                    let weight = prev.item.weight();
                    self.bytes = self.bytes - prev.weight + weight;
                    prev.weight = weight;
                    text.clear();
                    append_here(&mut text, &joined[decided..]);
                    if joined.capacity() > MAX_HOLD * 4 {
                        *joined = String::new();
                    }
                    seen = text.len();
                    item.touched();
                }
                self.crossings += 1;
                let cut = scan.hold_from(&text, seen);
                scan.shift(cut);
                *item.delta_mut() = text;
                if cut == item.delta_mut().len() && self.queue.is_empty() {
                    ready.push(item);
                    return;
                }
                let open = (cut < item.delta_mut().len()).then(|| {
                    self.open.insert(key.clone(), self.popped + self.queue.len() as u64);
                    (key, cut, scan, self.crossings)
                });
                self.enqueue(item, open);
            }
        }
        self.pop_decided(ready);
        while self.queue.len() > MAX_WAITING || (self.bytes > MAX_WAITING_BYTES && self.queue.len() > 1) {
            self.decide_front(&mut seal);
            self.pop_decided(ready);
        }
    }

    fn enqueue(&mut self, mut item: T, open: Option<(StreamKey, usize, Scan, u64)>) {
        let weight = item.weight();
        self.bytes += weight;
        self.queue.push_back(Slot { item, weight, open });
    }

    /// The input pauses: with [`Pauses::Decide`], decides every held tail but that of an
    /// unfinished private key (see [`Holder::decide_all`]); with [`Pauses::Wait`], does
    /// nothing.
    pub fn pause(&mut self, ready: &mut Vec<T>, seal: impl FnMut(&mut String, Seal<'_>) -> bool) {
        if self.pauses == Pauses::Decide {
            // A key's lines after a pause, written without its BEGIN line before them, are
            // base64 that nothing marks as secret: the key waits for its END line (or for
            // `MAX_HOLD`, or the input's end) as it would on an input that never paused. So
            // do lines that may be the last of a key cut from its BEGIN line.
            self.decide_open(|_, scan| scan.pem.is_none() && !scan.key_tail.is_open(), seal);
            self.pop_decided(ready);
        }
    }

    /// Decides every held tail (the input ends): appends every waiting item to `ready`,
    /// in order. `seal` seals the lines of a key whose BEGIN line went out before
    /// ([`Seal::KeyGoesOn`]).
    pub fn decide_all(&mut self, ready: &mut Vec<T>, seal: impl FnMut(&mut String, Seal<'_>) -> bool) {
        self.decide_open(|_, _| true, seal);
        self.pop_decided(ready);
    }

    /// Decides the held tails of the streams `which` picks, given each one's scan. There are
    /// at most as many as items wait ([`MAX_WAITING`]), so looking at each costs a bounded
    /// time per item.
    fn decide_open(
        &mut self,
        mut which: impl FnMut(&StreamKey, &Scan) -> bool,
        mut seal: impl FnMut(&mut String, Seal<'_>) -> bool,
    ) {
        let (queue, popped, bytes) = (&mut self.queue, self.popped, &mut self.bytes);
        self.open.retain(|key, at| {
            let slot = &mut queue[(*at - popped) as usize];
            let decided = slot.open.as_ref().is_none_or(|(_, _, scan, _)| which(key, scan));
            if decided {
                slot.settle(bytes, &mut seal);
            }
            !decided
        });
    }

    /// Decides the front item's held tail, to keep the items waiting bounded; a key it was
    /// inside goes on in its stream's next delta.
    fn decide_front(&mut self, seal: impl FnMut(&mut String, Seal<'_>) -> bool) {
        let Some(slot) = self.queue.front_mut() else { return };
        if let Some((key, scan)) = slot.settle(&mut self.bytes, seal) {
            self.open.remove(&key);
            if scan.pem.is_some() {
                if self.in_key.len() >= MAX_WAITING {
                    self.in_key.clear();
                }
                self.in_key.insert(key);
            }
        }
    }

    fn pop_decided(&mut self, ready: &mut Vec<T>) {
        while self.queue.front().is_some_and(|s| s.open.is_none()) {
            if let Some(slot) = self.queue.pop_front() {
                self.bytes -= slot.weight;
                ready.push(slot.item);
                self.popped += 1;
            }
        }
    }
}

/// Appends `more` to `s`; when `s` has no room, into a new string of this thread's. The
/// deltas were read on another thread (`normalize`): glibc's realloc of a string of that
/// thread's locks that thread's arena, which its malloc takes for each string it reads, and
/// the two then wait on each other (on the benchmark stream, 4 in 5 of `normalize`'s
/// context switches were that; with this, 10 % less time).
fn append_here(s: &mut String, more: &str) {
    if s.capacity() - s.len() < more.len() {
        let mut grown = String::with_capacity(s.len() + more.len());
        grown.push_str(s);
        *s = grown;
    }
    s.push_str(more);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `append_here` appends in place while there is room, and otherwise into a string of
    /// its own making: the old one is left to be freed, never grown where it was allocated.
    #[test]
    fn append_here_grows_into_a_new_string() {
        let mut s = String::with_capacity(8);
        s.push_str("abc");
        let at = s.as_ptr();
        append_here(&mut s, "de");
        assert_eq!((s.as_str(), s.as_ptr()), ("abcde", at));
        s.shrink_to_fit();
        let at = s.as_ptr();
        append_here(&mut s, "fgh");
        assert_eq!(s, "abcdefgh");
        assert_ne!(s.as_ptr(), at, "grown in place");
    }

    #[test]
    fn a_token_being_streamed_is_held() {
        assert_eq!(hold_from("first line\nits value is ghp_abc"), "first line\n".len());
        assert_eq!(hold_from("some words"), "some ".len());
        assert_eq!(hold_from("plain words.\n"), "plain words.\n".len());
        assert_eq!(hold_from("words then gh"), "words then ".len());
    }

    #[test]
    fn a_line_with_a_keyword_is_held_whole() {
        let text = "done\nexport password = hunter";
        assert_eq!(hold_from(text), "done\n".len());
    }

    #[test]
    fn the_context_of_a_secret_is_held_with_it() {
        assert_eq!(hold_from("ok\ndocker "), "ok\n".len());
        let netrc = "# creds\nmachine example.com\nlogin ci\n";
        assert_eq!(hold_from(netrc), "# creds\n".len());
    }

    #[test]
    fn a_finished_netrc_entry_is_not_cut_before_its_password_line() {
        // Held from the `password` line, the entry's first lines would go out alone and the
        // password line, scrubbed without them, would not be a `.netrc` entry.
        let netrc = "machine git.example.com\n  login ci\n  password cxd2B1d6pXKBSopa_51\n";
        assert_eq!(hold_from(netrc), netrc.len());
    }

    #[test]
    fn an_unfinished_pem_block_is_held() {
        let text = "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\n";
        assert_eq!(hold_from(text), 2);
        let whole = "x\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\n";
        assert_eq!(hold_from(whole), whole.len());
    }

    #[test]
    fn a_key_longer_than_the_hold_is_decided_half_a_hold_at_a_time_between_its_lines() {
        const LINE: &str = "MIIEowIBAAKCAQEAx4YzQUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZn";
        let text = "-----BEGIN RSA PRIVATE KEY-----\n".to_owned() + &(LINE.to_owned() + "\n").repeat(200);
        let mut scan = Scan::default();
        let at = scan.hold_from(&text, 0);
        assert!(text[..at].ends_with('\n') && (MAX_HOLD / 2 - LINE.len()..=MAX_HOLD / 2).contains(&(text.len() - at)));
        assert!(!scan.key_cut, "the BEGIN line is in what is decided now");
        scan.shift(at);
        assert!(scan.key_cut, "the rest goes on with the key's lines");
        // Its END line ends the key: what is decided after it is plain text again.
        let rest = text[at..].to_owned() + "-----END RSA PRIVATE KEY-----\nok ";
        let at = scan.hold_from(&rest, text.len() - at);
        scan.shift(at);
        assert!(!scan.key_cut);
    }

    /// An item of a test stream: a delta of stream `a` or another line, weighing `weight`.
    struct Item {
        delta: Option<String>,
        weight: usize,
    }

    impl Delta for Item {
        fn stream(&self) -> Option<StreamKey> {
            self.delta.as_ref().map(|_| StreamKey {
                session: "s".to_owned(),
                parent: String::new(),
                kind: "text/assistant",
                call: String::new(),
            })
        }
        fn ends_blocks(&self) -> Ends<'_> {
            Ends::Nothing
        }
        fn delta_mut(&mut self) -> &mut String {
            self.delta.as_mut().expect("a delta")
        }
        fn weight(&mut self) -> usize {
            self.weight
        }
    }

    #[test]
    fn the_lines_waiting_behind_a_held_tail_are_bounded_by_bytes() {
        let mut holder = Holder::new(Pauses::Wait);
        let mut ready = Vec::new();
        holder.push(Item { delta: Some("export KEY=ghp_abc".to_owned()), weight: 100 }, &mut ready);
        assert!(ready.is_empty(), "the token's tail is held");
        // Far fewer lines than MAX_WAITING, but large ones: the tail is decided once they
        // weigh more than MAX_WAITING_BYTES, and the lines go out in order behind it.
        let line = MAX_WAITING_BYTES / 8;
        let mut pushed = 1;
        while ready.is_empty() {
            holder.push(Item { delta: None, weight: line }, &mut ready);
            pushed += 1;
            assert!(pushed < MAX_WAITING, "still waiting after {pushed} lines");
        }
        assert_eq!(ready.len(), pushed);
        assert!(pushed * line > MAX_WAITING_BYTES && (pushed - 2) * line <= MAX_WAITING_BYTES, "{pushed}");
        assert_eq!(ready[0].delta.as_deref(), Some("export KEY=ghp_abc"));
        assert!(holder.is_empty());
    }

    #[test]
    fn one_large_delta_alone_still_holds_its_tail() {
        let mut holder = Holder::new(Pauses::Wait);
        let mut ready = Vec::new();
        holder.push(Item { delta: Some("key=ghp_abc".to_owned()), weight: 2 * MAX_WAITING_BYTES }, &mut ready);
        assert!(ready.is_empty());
        holder.push(Item { delta: Some("def".to_owned()), weight: 10 }, &mut ready);
        holder.decide_all(&mut ready, |_, _| false);
        let text: String = ready.iter().filter_map(|i| i.delta.clone()).collect();
        assert_eq!(text, "key=ghp_abcdef");
        assert!(
            ready.iter().any(|i| i.delta.as_deref() == Some("key=ghp_abcdef")),
            "the token came whole in one event"
        );
    }

    #[test]
    fn a_tail_that_ended_its_block_is_sealed_then_joined() {
        let event = |delta: &str, piece| {
            let line = r#"{"schema":"minicode.output.v1","eventId":"s:1:1","type":"text","sessionId":"s","payload":{"delta":"","role":"assistant"}}"#;
            let mut event = Event::from_json(line, false).unwrap();
            event.body = Body::Text(crate::event::Text { delta: delta.into(), role: Role::Assistant, piece });
            event
        };
        for (piece, sealed) in [(Piece::First, true), (Piece::Next, false)] {
            let mut holder = Holder::new(Pauses::Wait);
            let (mut ready, mut seals) = (Vec::new(), Vec::new());
            let mut seal = |tail: &mut String, seal: Seal<'_>| {
                assert_eq!(seal, Seal::Ended, "no other session's event came between");
                seals.push(tail.clone());
                *tail = tail.replace("ghp_abc", "[X]");
                true
            };
            holder.push_sealing(event("see ghp_abc", Piece::First), &mut ready, &mut seal);
            holder.push_sealing(event("Next words", piece), &mut ready, &mut seal);
            holder.decide_all(&mut ready, |_, _| false);
            let deltas: Vec<String> = ready.iter_mut().map(|e| e.delta_mut().clone()).collect();
            let text = if sealed { "see [X]Next words" } else { "see ghp_abcNext words" };
            assert_eq!(deltas.concat(), text, "{piece:?}");
            assert_eq!(seals, if sealed { vec!["see ghp_abc"] } else { vec![] }, "{piece:?}");
            assert!(ready.iter_mut().all(|e| !e.take_first_piece()), "the pieces are forgotten");
        }
    }

    #[test]
    fn a_tail_held_across_another_streams_delta_is_sealed_as_crossed() {
        let delta = |kind: &str, delta: &str| {
            let line = format!(
                r#"{{"schema":"minicode.output.v1","eventId":"s:1:1","type":"{kind}","sessionId":"s","payload":{{"delta":"{delta}","role":"assistant"}}}}"#
            );
            Event::from_json(&line, false).unwrap()
        };
        for between in [None, Some("text")] {
            let mut holder = Holder::new(Pauses::Wait);
            let (mut ready, mut seals) = (Vec::new(), Vec::new());
            let mut seal = |tail: &mut String, seal: Seal<'_>| {
                seals.push((tail.clone(), seal == Seal::Crossed { next: "Using it" }));
                false
            };
            holder.push_sealing(delta("reasoning", "see ghp_abc"), &mut ready, &mut seal);
            if let Some(kind) = between {
                holder.push_sealing(delta(kind, "On it."), &mut ready, &mut seal);
            }
            holder.push_sealing(delta("reasoning", "Using it"), &mut ready, &mut seal);
            let crossed = between.map(|_| ("see ghp_abc".to_owned(), true));
            assert_eq!(seals, Vec::from_iter(crossed), "{between:?}");
        }
    }

    #[test]
    fn an_event_ends_the_blocks_of_its_own_session_only() {
        let event = |session: &str, kind: &str, payload: &str| {
            let line = format!(
                r#"{{"schema":"minicode.output.v1","eventId":"{session}:1:1","type":"{kind}","sessionId":"{session}","payload":{payload}}}"#
            );
            Event::from_json(&line, false).unwrap()
        };
        let text = |session: &str, delta: &str| {
            event(session, "text", &format!(r#"{{"delta":"{delta}","role":"assistant"}}"#))
        };
        let mut holder = Holder::new(Pauses::Wait);
        let mut ready = Vec::new();
        holder.push(text("A", "see ghp_abc"), &mut ready);
        holder.push(text("B", "and ghp_xyz"), &mut ready);
        holder.push(event("B", "turn.started", "{}"), &mut ready);
        assert!(ready.is_empty(), "A's tail waits, and everything behind it");
        holder.push(text("A", "def"), &mut ready);
        holder.push(event("A", "turn.started", "{}"), &mut ready);
        let deltas: Vec<String> = ready.iter_mut().filter(|e| is_delta(e)).map(|e| e.delta_mut().clone()).collect();
        // A's line (it holds an anchor) moved on whole to A's next delta; B's was decided at
        // B's event.
        assert_eq!(deltas, ["", "and ghp_xyz", "see ghp_abcdef"]);
        assert_eq!(ready.len(), 5);
        assert!(holder.is_empty());
        holder.push(text("A", "ghp_1"), &mut ready);
        let summary = include_str!("../../fixtures/kilo/7.7.7/exit4.events.jsonl")
            .lines()
            .find(|l| l.contains(r#""type":"summary""#))
            .unwrap();
        holder.push(Event::from_json(summary, false).unwrap(), &mut ready);
        assert!(holder.is_empty(), "a run's summary ends every block");
    }

    #[test]
    fn the_hold_is_bounded() {
        let text = "password=".to_owned() + &"x".repeat(3 * MAX_HOLD);
        assert!(text.len() - hold_from(&text) <= MAX_HOLD);
    }

    #[test]
    fn a_match_under_way_is_held_with_the_word_it_begins_in() {
        // The `.netrc`-like context `contribsys` begins inside `enterprise.contribsys.com`;
        // held from `contribsys`, `enterprise.` would go out alone, and a second scrub (where
        // it is the last word of its event, held) would join it to the next event again.
        let text = "bundle config --local enterprise.contribsys.com 77eed01b:7eb9c05d\nexport X=1\n";
        let mut holder = Holder::new(Pauses::Wait);
        let mut ready = Vec::new();
        let mut at = 0;
        for len in [6, 3, 1].into_iter().cycle() {
            let end = (at + len).min(text.len());
            holder.push(Item { delta: Some(text[at..end].to_owned()), weight: 1 }, &mut ready);
            at = end;
            if at == text.len() {
                break;
            }
        }
        holder.decide_all(&mut ready, |_, _| false);
        let deltas: Vec<String> = ready.into_iter().filter_map(|i| i.delta).collect();
        assert_eq!(deltas.concat(), text);
        assert!(deltas.iter().any(|d| d.starts_with("enterprise.contribsys.com")), "{deltas:?}");
    }
}
