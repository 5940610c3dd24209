//! Where a rule's match could still be under way at the end of a text: what a stream must
//! hold back when a secret's context comes before its anchor (`docker` before `login -p`,
//! `machine` lines before a `.netrc` `password`), possibly lines earlier.
//!
//! Taken from the rules themselves: the first bytes of each rule's pattern (its *leads*,
//! extracted from the regex) say where a match may begin, and one lazy DFA over every such
//! pattern, run anchored from each lead, says whether the text from there is still the start
//! of a match. Rules whose matches may begin with too many different bytes to list (a class,
//! a look at the start of a line) have no leads; the stream's tail rules cover them.

use std::sync::Mutex;

use aho_corasick::AhoCorasick;
use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::hybrid::LazyStateID;
use regex_automata::nfa::thompson;
use regex_automata::{Anchored, Input};
use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::hir::{Capture, Hir, HirKind, Look, Repetition};

use super::rules::Rule;

/// Leads are cut to this many bytes: the first bytes of a word suffice to start the DFA,
/// and short leads keep the literal set small.
const LEAD_LEN: usize = 3;

/// The rules' leads and the DFA that follows them; see the module doc.
pub struct Leads {
    literals: AhoCorasick,
    dfa: DFA,
    cache: Mutex<Cache>,
}

impl Leads {
    /// The leads of `rules`; the rules without leads are left out.
    pub fn new(rules: &[Rule]) -> Leads {
        let mut extractor = Extractor::new();
        extractor.kind(ExtractKind::Prefix).limit_literal_len(LEAD_LEN);
        let (mut literals, mut hirs) = (Vec::<Vec<u8>>::new(), Vec::new());
        for rule in rules {
            // Every pattern is compiled by the rule-table test, so this cannot fail at run time.
            let hir = regex_syntax::parse(rule.pattern).unwrap_or_else(|e| panic!("rule {}: {e}", rule.id));
            let seq = extractor.extract(&hir);
            let Some(lits) = seq.literals() else { continue };
            if lits.is_empty() || lits.iter().any(|l| l.as_bytes().is_empty()) {
                continue;
            }
            literals.extend(lits.iter().map(|l| l.as_bytes().to_vec()));
            hirs.push(ascii_word_boundaries(&hir));
        }
        literals.sort_unstable();
        literals.dedup();
        let nfa = thompson::Compiler::new()
            .configure(thompson::Config::new().shrink(true))
            .build_many_from_hir(&hirs)
            .expect("the rule patterns compile");
        let dfa = DFA::builder().build_from_nfa(nfa).expect("the rule patterns build a lazy DFA");
        let cache = Mutex::new(dfa.create_cache());
        Leads { literals: AhoCorasick::new(&literals).expect("leads build an automaton"), dfa, cache }
    }

    /// Where the earliest match of a rule with leads that is still under way at the end of
    /// `text` (a match the next bytes could continue) begins.
    pub fn open_match_from(&self, text: &str) -> Option<usize> {
        let mut walks = Walks::default();
        self.advance(&mut walks, text, 0);
        self.earliest_open(&walks)
    }

    /// Walks the DFA of `walks` (over `text[..new]`) through the bytes of `text` from `new`,
    /// and from the leads that end there: each new byte is stepped once per live state,
    /// not once per lead behind it.
    pub fn advance(&self, walks: &mut Walks, text: &str, new: usize) {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        let clears = cache.clear_count();
        let mut next = match walks.clears == clears {
            true => self.walk_all(&mut cache, &walks.walks, text, new),
            // The states the walks reached went with the cache that held them: the text is
            // walked again from its leads.
            false => self.walk_all(&mut cache, &[], text, 0),
        };
        if cache.clear_count() != clears {
            // Cleared during the walks: the states reached before are gone too.
            let clears = cache.clear_count();
            next = self.walk_all(&mut cache, &[], text, 0);
            if cache.clear_count() != clears {
                // Again: every walk is held, as a match under way.
                next.iter_mut().for_each(|w| w.1 = None);
            }
        }
        walks.walks = next;
        walks.clears = cache.clear_count();
    }

    /// The walks `from` (over `text[..new]`) stepped through `text[new..]`, and the walks
    /// from the leads that end there, at most one per state (the earliest), by start.
    fn walk_all(
        &self,
        cache: &mut Cache,
        from: &[(usize, Option<LazyStateID>)],
        text: &str,
        new: usize,
    ) -> Vec<(usize, Option<LazyStateID>)> {
        let bytes = text.as_bytes();
        let mut next = Vec::with_capacity(from.len() + 4);
        let clears = cache.clear_count();
        for &(start, state) in from {
            if cache.clear_count() != clears {
                // The states left are gone with the cache: the caller walks again.
                break;
            }
            if let Some(state) = state.map_or(Some(None), |sid| self.walk(cache, sid, &bytes[new..])) {
                next.push((start, state));
            }
        }
        let lo = new.saturating_sub(LEAD_LEN - 1);
        for m in self.literals.find_overlapping_iter(aho_corasick::Input::new(text).span(lo..text.len())) {
            let input = Input::new(text).range(m.start()..).anchored(Anchored::Yes);
            let state = match self.dfa.start_state_forward(cache, &input) {
                Ok(sid) => self.walk(cache, sid, &bytes[m.start()..]),
                Err(_) => Some(None),
            };
            if let Some(state) = state {
                next.push((m.start(), state));
            }
        }
        // Walks in one state go on alike: the earliest start of each is kept.
        next.sort_unstable_by_key(|&(start, _)| start);
        let mut seen = Vec::with_capacity(next.len());
        next.retain(|&(_, state)| {
            let first = !seen.contains(&state);
            seen.push(state);
            first
        });
        next
    }

    /// Steps `sid` through `bytes`: `None` when the walk dies, `Some(None)` when the DFA
    /// gives up (held, as a match under way), else the state reached.
    fn walk(&self, cache: &mut Cache, mut sid: LazyStateID, bytes: &[u8]) -> Option<Option<LazyStateID>> {
        for &b in bytes {
            match self.dfa.next_state(cache, sid, b) {
                Ok(next) => sid = next,
                Err(_) => return Some(None),
            }
            if sid.is_dead() {
                return None;
            }
            if sid.is_quit() {
                return Some(None);
            }
        }
        Some(Some(sid))
    }

    /// Where the earliest walk of `walks` that the next bytes could still continue begins.
    pub fn earliest_open(&self, walks: &Walks) -> Option<usize> {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        let valid = walks.clears == cache.clear_count();
        walks
            .walks
            .iter()
            .find(|&&(_, state)| match state {
                // A walk whose state went with the cache is held, as a match under way.
                Some(sid) if valid => self.is_open(&mut cache, sid),
                _ => true,
            })
            .map(|&(start, _)| start)
    }

    /// True when a match of the walk in state `sid` could still end after the next byte.
    /// The DFA reports a match one byte late (a match state tells of the match that ended
    /// before the byte that led to it), so a walk past a rule's closing byte (the new line
    /// after a token) is not a match state yet: it is open only if some next byte leads to
    /// a state that is not a match, or to a match state that some byte after it continues.
    /// Held one delta longer, a finished token would be cut from its line's start, and a
    /// second scrub, holding that line whole, would put the text in other events.
    fn is_open(&self, cache: &mut Cache, sid: LazyStateID) -> bool {
        let clears = cache.clear_count();
        if sid.is_match() {
            return self.goes_on(cache, clears, sid);
        }
        (0..=255u8).any(|b| match self.step(cache, clears, sid, b) {
            None => true,
            Some(n) if n.is_match() => self.goes_on(cache, clears, n),
            Some(n) => !n.is_dead(),
        })
    }

    /// True when some next byte takes state `sid` to a state that is not dead.
    fn goes_on(&self, cache: &mut Cache, clears: usize, sid: LazyStateID) -> bool {
        (0..=255u8).any(|b| self.step(cache, clears, sid, b).is_none_or(|n| !n.is_dead()))
    }

    /// The state `sid` goes to on `b`; `None` when the cache was cleared since it counted
    /// `clears` (the states are gone: the walk is held, as open).
    fn step(&self, cache: &mut Cache, clears: usize, sid: LazyStateID, b: u8) -> Option<LazyStateID> {
        self.dfa.next_state(cache, sid, b).ok().filter(|_| cache.clear_count() == clears)
    }
}

/// The DFA walks from the leads of a text being streamed (see [`Leads::advance`]), at most
/// one per state; positions are in the text.
#[derive(Debug, Clone, Default)]
pub struct Walks {
    /// Each walk's start and state, by start; no state when the DFA gave up on it.
    walks: Vec<(usize, Option<LazyStateID>)>,
    /// How often the DFA's cache had been cleared when the states were reached.
    clears: usize,
}

impl Walks {
    /// The text loses its first `n` bytes: a walk that began in them begins at its start
    /// now (held from there, which is more than a scan of what is left would hold).
    pub fn shift(&mut self, n: usize) {
        self.walks.iter_mut().for_each(|(start, _)| *start = start.saturating_sub(n));
    }
}

/// `hir` with its Unicode word boundaries made ASCII ones, which a lazy DFA follows over any
/// text (it gives up on non-ASCII bytes for Unicode ones). The rules put `\b` next to ASCII
/// letters, where an ASCII boundary holds whenever the Unicode one does, so no match is lost.
fn ascii_word_boundaries(hir: &Hir) -> Hir {
    match hir.kind() {
        HirKind::Look(look) => Hir::look(match look {
            Look::WordUnicode => Look::WordAscii,
            Look::WordUnicodeNegate => Look::WordAsciiNegate,
            Look::WordStartUnicode => Look::WordStartAscii,
            Look::WordEndUnicode => Look::WordEndAscii,
            Look::WordStartHalfUnicode => Look::WordStartHalfAscii,
            Look::WordEndHalfUnicode => Look::WordEndHalfAscii,
            other => *other,
        }),
        HirKind::Repetition(r) => {
            Hir::repetition(Repetition { sub: Box::new(ascii_word_boundaries(&r.sub)), ..r.clone() })
        }
        HirKind::Capture(c) => Hir::capture(Capture { sub: Box::new(ascii_word_boundaries(&c.sub)), ..c.clone() }),
        HirKind::Concat(subs) => Hir::concat(subs.iter().map(ascii_word_boundaries).collect()),
        HirKind::Alternation(subs) => Hir::alternation(subs.iter().map(ascii_word_boundaries).collect()),
        HirKind::Empty | HirKind::Literal(_) | HirKind::Class(_) => hir.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scrub::rules::RULES;

    fn leads() -> Leads {
        Leads::new(RULES)
    }

    #[test]
    fn context_before_the_anchor_is_an_open_match() {
        let l = leads();
        assert_eq!(l.open_match_from("run: docker "), Some(5));
        assert_eq!(l.open_match_from("x\nmachine example.com\nlogin ci\n"), Some(2));
        assert_eq!(l.open_match_from("mysql -u root -p"), Some(0));
    }

    #[test]
    fn a_context_the_text_has_left_is_not_open() {
        let l = leads();
        assert_eq!(l.open_match_from("docker build .\nplain words"), None);
        assert_eq!(l.open_match_from("please login to the site"), None);
        assert_eq!(l.open_match_from("plain text"), None);
    }

    #[test]
    fn a_token_past_its_closing_byte_is_not_open() {
        // The match is reported one byte after the new line that closes it: the walk is
        // done there, not held one delta longer.
        let l = leads();
        let token = "EAAAzcQRgVhKZB6McdZw2_V7ukj7xgynZmVGlO232uaGLvo6a5qTxCdvhZBjidQV";
        assert!(l.open_match_from(&format!("access_token: {token}")).is_some());
        assert_eq!(l.open_match_from(&format!("access_token: {token}\n")), None);
    }
}
