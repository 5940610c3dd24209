//! Finding secrets with the rule table: a keyword pass decides which rules could match (the
//! anchor literals, each word in three spellings, searched by a few vectorised scanners and
//! confirmed in the window around each hit by one overlapping automaton, which also searches
//! short texts whole; plus the rare hand-written scan); only those rules run their regexes,
//! compiled on first use. Overlapping findings are settled by the table's order, so a
//! specific format wins over a generic assignment.

use std::collections::{BTreeMap, HashSet};
use std::ops::Range;
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, Input, MatchKind};
use regex::{Captures, Match, Regex};

use super::check;
use super::lead::Leads;
use super::rules::{assigns_after, Anchor, Rule, RULES};
use super::view::View;
use crate::bound::{ceil_boundary, floor_boundary};

/// One secret found in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Its bytes in the text.
    pub range: Range<usize>,
    /// The rule that found it, an index into [`RULES`].
    pub rule: usize,
}

/// Findings by where they start; they never overlap.
type Found = BTreeMap<usize, Finding>;

/// True when `range` overlaps a finding. The findings are disjoint, so only the last one
/// that starts before `range` ends can: one lookup, where a scan of them all made a text
/// with many secrets quadratic.
fn overlaps(found: &Found, range: &Range<usize>) -> bool {
    found.range(..range.end).next_back().is_some_and(|(_, f)| f.range.end > range.start)
}

/// The compiled rule table. Build it once with [`Detector::global`].
pub struct Detector {
    rules: &'static [Rule],
    /// Leftmost-first automata over the anchor literals, at most [`SCAN_CHUNK`] literals
    /// each: below that size they use a vectorised (Teddy) prefilter.
    scanners: Vec<AhoCorasick>,
    /// One overlapping automaton over every literal, for the small window around a hit, and
    /// for a whole text up to [`SHORT`] bytes.
    verifier: AhoCorasick,
    /// The rules each literal (by verifier pattern id) is an anchor of.
    literal_rules: Vec<RuleSet>,
    /// The rules anchored by words: their regexes run only on the lines the words are on.
    word_rules: RuleSet,
    /// Those of them whose words count only before an assignment ([`Anchor::Assigned`]).
    assigned_rules: RuleSet,
    scans: Vec<(usize, Scan)>,
    regexes: Vec<OnceLock<Regex>>,
    /// Every proper prefix of an anchor literal, for [`Detector::partial_anchor_at_end`].
    prefixes: Prefixes,
    /// Where a match may begin, for [`Detector::open_match_from`]; built on first use, as
    /// only a stream held across deltas asks, and building it is most of the detector's
    /// cost to start (compiling every rule's pattern).
    leads: OnceLock<Leads>,
}

/// A hand-written test for a rule's anchor (see [`Anchor::Scan`]).
type Scan = fn(&str) -> bool;

/// A set of rule indexes; the table has fewer than 128 rules (checked when it is built).
type RuleSet = u128;

/// Where the anchors of a text are.
struct Hits {
    /// The rules with an anchor in the text.
    set: RuleSet,
    /// The offset of each word anchor, with the word-anchored rules it stands for (the
    /// [`Anchor::Assigned`] ones only where an assignment follows), in increasing order.
    at: Vec<(usize, RuleSet)>,
}

/// How far from its word a generic match may start or end.
const LINE_BACK: usize = 512;
const LINE_AHEAD: usize = 4096;

/// The lines around positions taken in increasing order: for each, its line and the line
/// after it, at most [`LINE_BACK`] bytes before the position and [`LINE_AHEAD`] after.
/// Each byte is searched for newlines at most twice, however many positions share a line
/// (a long line dense with words would otherwise be scanned again for each) and however
/// many short lines lie between two positions.
struct LinesAround<'t> {
    text: &'t str,
    /// The last newline before the position, and the first two at or after it.
    before: Option<usize>,
    next: Option<usize>,
    after: Option<usize>,
}

impl<'t> LinesAround<'t> {
    fn new(text: &'t str) -> LinesAround<'t> {
        let next = memchr::memchr(b'\n', text.as_bytes());
        let after = next.and_then(|n| Self::newline_after(text, n));
        LinesAround { text, before: None, next, after }
    }

    fn newline_after(text: &str, n: usize) -> Option<usize> {
        memchr::memchr(b'\n', &text.as_bytes()[n + 1..]).map(|i| n + 1 + i)
    }

    /// The window around `p`, which is not before the previous one asked for.
    fn around(&mut self, p: usize) -> Range<usize> {
        if self.next.is_some_and(|n| n < p) {
            match self.after.filter(|&a| a < p) {
                // Past both: the last newline before `p` is searched back from it, and the
                // lines between are not stepped through one by one.
                Some(a) => {
                    let b = &self.text.as_bytes()[..p];
                    self.before = memchr::memrchr(b'\n', &b[a..]).map(|i| a + i);
                    self.next = memchr::memchr(b'\n', &self.text.as_bytes()[p..]).map(|i| p + i);
                }
                None => (self.before, self.next) = (self.next, self.after),
            }
            self.after = self.next.and_then(|n| Self::newline_after(self.text, n));
        }
        let from = p.saturating_sub(LINE_BACK);
        let start = self.before.filter(|&n| n >= from).map_or(from, |n| n + 1);
        // To the end of the next line: an XML element may hold its value on a line of its own.
        let end = self.after.unwrap_or(self.text.len()).min(p + LINE_AHEAD);
        ceil_boundary(self.text, start)..floor_boundary(self.text, end)
    }
}

/// The literals an anchor is searched by: a word in lower case, upper case and capitalized.
fn spellings(anchor: &Anchor) -> impl Iterator<Item = String> + '_ {
    let (words, word): (&[&str], bool) = match anchor {
        Anchor::Literal(w) => (w, false),
        Anchor::Word(w) | Anchor::Assigned(w) => (w, true),
        Anchor::Scan(_) => (&[], false),
    };
    words.iter().flat_map(move |w| match word {
        false => vec![(*w).to_owned()],
        true => vec![w.to_string(), w.to_ascii_uppercase(), w[..1].to_ascii_uppercase() + &w[1..]],
    })
}

/// The proper prefixes of the anchor literals. Asked of every delta of a stream, so it is
/// a few lookups, not a comparison with every literal.
struct Prefixes {
    set: HashSet<Box<[u8]>>,
    /// The bytes a prefix starts with.
    first: [bool; 256],
    /// The first two bytes of the prefixes longer than one, a bit each: most places a
    /// suffix could begin are ruled out without hashing it.
    pairs: Box<[u64; 1024]>,
    /// The longest prefix.
    longest: usize,
}

impl Prefixes {
    fn of(literals: &[String]) -> Prefixes {
        let mut p = Prefixes { set: HashSet::new(), first: [false; 256], pairs: Box::new([0; 1024]), longest: 0 };
        for l in literals.iter().map(String::as_bytes).filter(|l| l.len() > 1) {
            p.first[l[0] as usize] = true;
            if l.len() > 2 {
                let pair = Prefixes::pair(l[0], l[1]);
                p.pairs[pair / 64] |= 1 << (pair % 64);
            }
            p.longest = p.longest.max(l.len() - 1);
            p.set.extend((1..l.len()).map(|k| l[..k].into()));
        }
        p
    }

    /// Where the longest suffix of `b` that is a proper prefix begins.
    fn longest_suffix(&self, b: &[u8]) -> Option<usize> {
        (b.len().saturating_sub(self.longest)..b.len()).find(|&i| {
            let starts = match b.get(i + 1) {
                Some(&next) => {
                    let pair = Prefixes::pair(b[i], next);
                    self.pairs[pair / 64] & (1 << (pair % 64)) != 0
                }
                None => self.first[b[i] as usize],
            };
            starts && self.set.contains(&b[i..])
        })
    }

    fn pair(a: u8, b: u8) -> usize {
        usize::from(a) << 8 | usize::from(b)
    }
}

/// The most literals one scanning automaton holds; past about 48, aho-corasick gives up its
/// vectorised prefilter and steps through every byte, several times slower.
const SCAN_CHUNK: usize = 40;

/// Up to this length a text (most are short stream deltas) is searched for every literal at
/// once by the verifier, instead of once per scanner: each scan costs its setup however
/// short the text.
const SHORT: usize = 64;

impl Detector {
    /// The detector for the built-in [`RULES`], built on first use.
    pub fn global() -> &'static Detector {
        static DETECTOR: OnceLock<Detector> = OnceLock::new();
        DETECTOR.get_or_init(|| Detector::new(RULES))
    }

    fn new(rules: &'static [Rule]) -> Detector {
        assert!(rules.len() <= RuleSet::BITS as usize, "the rule set is a u128");
        let (mut literals, mut literal_rules, mut scans) = (Vec::<String>::new(), Vec::<RuleSet>::new(), Vec::new());
        let (mut word_rules, mut assigned_rules): (RuleSet, RuleSet) = (0, 0);
        let mut add = |literal: String, rule: usize| match literals.iter().position(|l| *l == literal) {
            Some(at) => literal_rules[at] |= 1 << rule,
            None => {
                literals.push(literal);
                literal_rules.push(1 << rule);
            }
        };
        for (i, rule) in rules.iter().enumerate() {
            match rule.anchor {
                Anchor::Scan(f) => scans.push((i, f)),
                Anchor::Word(_) => word_rules |= 1 << i,
                Anchor::Assigned(_) => {
                    word_rules |= 1 << i;
                    assigned_rules |= 1 << i;
                }
                Anchor::Literal(_) => {}
            }
            spellings(&rule.anchor).for_each(|w| add(w, i));
        }
        let build = |words: &[String], kind: MatchKind, automaton: Option<AhoCorasickKind>| {
            AhoCorasickBuilder::new()
                .match_kind(kind)
                .kind(automaton)
                .build(words)
                // The literals are a fixed table of short strings: building cannot fail.
                .expect("anchor literals build an automaton")
        };
        Detector {
            rules,
            scanners: literals.chunks(SCAN_CHUNK).map(|c| build(c, MatchKind::LeftmostFirst, None)).collect(),
            // A DFA: the verifier steps through every byte of a short text, and a DFA's step
            // is one table lookup where the default NFA follows failure links.
            verifier: build(&literals, MatchKind::Standard, Some(AhoCorasickKind::DFA)),
            literal_rules,
            word_rules,
            assigned_rules,
            scans,
            regexes: rules.iter().map(|_| OnceLock::new()).collect(),
            prefixes: Prefixes::of(&literals),
            leads: OnceLock::new(),
        }
    }

    /// The rules whose anchors occur in `text` (empty in the common case), and where.
    ///
    /// The scan is non-overlapping, so a literal that overlaps a reported one may go
    /// unreported; but it overlaps that reported hit, so an overlapping search of a small
    /// window around each (rare) hit finds every literal there.
    fn candidates(&self, text: &str) -> Hits {
        self.candidates_by(text, text.len() <= SHORT)
    }

    /// [`Detector::candidates`], by one overlapping search of the whole text (`at_once`) or
    /// by the scanners; the two find the same literals.
    fn candidates_by(&self, text: &str, at_once: bool) -> Hits {
        let mut hits = Hits { set: 0, at: Vec::new() };
        let mut verify = |window: Range<usize>| {
            for o in self.verifier.find_overlapping_iter(Input::new(text).span(window)) {
                let rules = self.literal_rules[o.pattern().as_usize()];
                hits.set |= rules;
                let mut words = rules & self.word_rules;
                // Looked at once for the word, not once for each rule it anchors.
                if words & self.assigned_rules != 0 && !assigns_after(text, o.start()) {
                    words &= !self.assigned_rules;
                }
                if words != 0 {
                    hits.at.push((o.start(), words));
                }
            }
        };
        if at_once {
            // Every literal a scan would lead to, in one pass instead of one per scanner.
            verify(0..text.len());
        } else {
            let reach = self.verifier.max_pattern_len().saturating_sub(1);
            for scanner in &self.scanners {
                for m in scanner.find_iter(text) {
                    verify(m.start().saturating_sub(reach)..(m.end() + reach).min(text.len()));
                }
            }
        }
        // In text order, for the line windows of each word rule (the scanners each go
        // through the text, one after another).
        hits.at.sort_unstable_by_key(|&(p, _)| p);
        for (i, scan) in &self.scans {
            if hits.set & (1 << i) == 0 && scan(text) {
                hits.set |= 1 << i;
            }
        }
        hits
    }

    /// True when some rule could match `text` or its decoded [`View`] (a cheap test: anchors
    /// only).
    pub fn may_match(&self, text: &str) -> bool {
        self.candidates(text).set != 0 || View::of(text).is_some_and(|v| self.candidates(&v.text).set != 0)
    }

    /// Where the longest suffix of `text` that is the start of an anchor literal (not the
    /// whole literal) begins: text a stream could still complete into an anchor.
    pub fn partial_anchor_at_end(&self, text: &str) -> Option<usize> {
        self.prefixes.longest_suffix(text.as_bytes())
    }

    /// The leads of the rules whose matches begin with a known literal, for a scan that
    /// follows a stream ([`Leads::advance`]).
    pub fn leads(&self) -> &Leads {
        self.leads.get_or_init(|| Leads::new(self.rules))
    }

    /// The length of the longest anchor literal.
    pub fn longest_literal(&self) -> usize {
        self.verifier.max_pattern_len()
    }

    /// Where the earliest match that the text after `text` could still complete begins,
    /// for the rules whose matches begin with a known literal (see [`Leads`]).
    pub fn open_match_from(&self, text: &str) -> Option<usize> {
        self.leads().open_match_from(text)
    }

    fn regex(&self, i: usize) -> &Regex {
        self.regexes[i].get_or_init(|| {
            // Every pattern is compiled by the rule-table test, so this cannot fail at run time.
            Regex::new(self.rules[i].pattern).unwrap_or_else(|e| panic!("rule {}: {e}", self.rules[i].id))
        })
    }

    /// Every secret in `text`, without overlaps, in text order: those of the text as it
    /// stands, then those its decoded [`View`] adds, each over its whole original span.
    pub fn find(&self, text: &str) -> Vec<Finding> {
        let mut found = self.find_plain(text);
        if let Some(view) = View::of(text) {
            for f in self.find_plain(&view.text).into_values() {
                let range = view.original_range(f.range);
                if !range.is_empty() && !overlaps(&found, &range) {
                    found.insert(range.start, Finding { range, rule: f.rule });
                }
            }
        }
        found.into_values().collect()
    }

    /// Every secret in `text` as it stands, without overlaps, in text order.
    fn find_plain(&self, text: &str) -> Found {
        let hits = self.candidates(text);
        let mut found = Found::new();
        // The rules with an anchor, in table order: the set's bits, lowest first.
        let mut set = hits.set;
        while set != 0 {
            let i = set.trailing_zeros() as usize;
            set &= set - 1;
            if self.word_rules & (1 << i) == 0 {
                self.find_in(i, text, 0..text.len(), &mut found);
                continue;
            }
            // A generic rule's match holds its word and stays on one line: search only the
            // lines around the words, not the whole (possibly large) text.
            let at = hits.at.iter().filter(|(_, rules)| rules & (1 << i) != 0).map(|(p, _)| *p);
            let mut window: Option<Range<usize>> = None;
            let mut lines = LinesAround::new(text);
            for p in at {
                let line = lines.around(p);
                match &mut window {
                    Some(w) if line.start <= w.end => w.end = w.end.max(line.end),
                    _ => {
                        if let Some(w) = window.replace(line) {
                            self.find_in(i, text, w, &mut found);
                        }
                    }
                }
            }
            if let Some(w) = window {
                self.find_in(i, text, w, &mut found);
            }
        }
        found
    }

    /// Adds the findings of rule `i` inside `window` of `text` to `found`.
    fn find_in(&self, i: usize, text: &str, window: Range<usize>, found: &mut Found) {
        let (regex, haystack) = (self.regex(i), &text[window.clone()]);
        // Matches are rare: a plain search is much cheaper than setting up captures.
        if !regex.is_match(haystack) {
            return;
        }
        if regex.captures_len() == 1 {
            // No group: the match is the secret, less the line breaks and blanks it begins
            // and ends with, and a plain search finds it (setting up captures over a match as long
            // as a key body is most of the work).
            for m in regex.find_iter(haystack) {
                let range = window.start + m.start() + breaks(m.as_str(), false)
                    ..window.start + m.end() - breaks(m.as_str(), true);
                self.decide(i, text, range, found, || regex.captures_at(haystack, m.start()));
            }
            return;
        }
        for caps in regex.captures_iter(haystack) {
            let Some(m) = secret_of(&caps) else { continue };
            let range = window.start + m.start()..window.start + m.end();
            self.decide(i, text, range, found, || Some(caps));
        }
    }

    /// Records `range` of `text` as a finding of rule `i` when its check accepts it, or
    /// when it is a secret beside a placeholder; `caps`, the match's captures, are set up
    /// only for that second, rarer question.
    fn decide<'h>(
        &self,
        i: usize,
        text: &str,
        range: Range<usize>,
        found: &mut Found,
        caps: impl FnOnce() -> Option<Captures<'h>>,
    ) {
        // Rules come in priority order: a finding that overlaps an earlier one loses.
        if range.is_empty() || overlaps(found, &range) {
            return;
        }
        let (secret, after) = (&text[range.clone()], &text[range.end..]);
        if self.rules[i].check.accepts(secret, after)
            || caps().is_some_and(|caps| self.key_beside_placeholder(i, &caps, after))
        {
            found.insert(range.start, Finding { range, rule: i });
        }
    }

    /// True when the secret of match `caps` of rule `i`, rejected for a placeholder word
    /// or run in it, is a secret all the same once they are taken out: only a value that is
    /// wholly a placeholder is one. `AKIAIOSFODNN7EXAMPLE` (AWS's documented example) is
    /// too short without `EXAMPLE`; a real key with `_EXAMPLE` or `-dummy` after it is not.
    fn key_beside_placeholder(&self, i: usize, caps: &Captures<'_>, after: &str) -> bool {
        let (Some(m), Some(whole)) = (secret_of(caps), caps.get(0)) else { return false };
        let Some(rest) = check::without_placeholders(m.as_str()) else { return false };
        let (from, to) = (m.start() - whole.start(), m.end() - whole.start());
        let rebuilt = format!("{}{rest}{}", &whole.as_str()[..from], &whole.as_str()[to..]);
        self.regex(i)
            .captures(&rebuilt)
            .is_some_and(|c| secret_of(&c).is_some_and(|m| self.rules[i].check.accepts(m.as_str(), after)))
    }

    /// The rule a finding came from.
    pub fn rule(&self, f: &Finding) -> &'static Rule {
        &self.rules[f.rule]
    }
}

/// The secret a match holds: its first group that matched, or the whole match.
fn secret_of<'h>(caps: &Captures<'h>) -> Option<Match<'h>> {
    caps.iter().skip(1).flatten().next().or_else(|| caps.get(0))
}

/// How many bytes of line breaks (real or JSON-escaped) and blanks `s` begins with, or
/// ends with (`at_end`).
fn breaks(s: &str, at_end: bool) -> usize {
    const BLANKS: [char; 4] = ['\n', '\r', ' ', '\t'];
    let mut rest = s;
    loop {
        let (blank, escaped) = if at_end {
            let blank = rest.trim_end_matches(BLANKS);
            (blank, blank.strip_suffix("\\n").or_else(|| blank.strip_suffix("\\r")))
        } else {
            let blank = rest.trim_start_matches(BLANKS);
            (blank, blank.strip_prefix("\\n").or_else(|| blank.strip_prefix("\\r")))
        };
        let next = escaped.unwrap_or(blank);
        if next.len() == rest.len() {
            return s.len() - rest.len();
        }
        rest = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leads_are_built_only_when_a_stream_asks() {
        // Building them is most of a filter's start-up; finding secrets needs none.
        let d = Detector::new(RULES);
        assert!(!d.find("export GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345").is_empty());
        assert!(d.leads.get().is_none());
        assert_eq!(d.open_match_from("run: docker "), Some(5));
        assert!(d.leads.get().is_some());
    }

    #[test]
    fn every_pattern_compiles_and_every_rule_has_an_anchor() {
        let d = Detector::global();
        for (i, rule) in RULES.iter().enumerate() {
            let _ = d.regex(i);
            if let Anchor::Literal(w) | Anchor::Word(w) | Anchor::Assigned(w) = rule.anchor {
                assert!(!w.is_empty(), "{}", rule.id);
            }
            if let Anchor::Word(w) | Anchor::Assigned(w) = rule.anchor {
                assert!(
                    w.iter().all(|w| !w.is_empty() && *w == w.to_ascii_lowercase()),
                    "{}: give words in lowercase",
                    rule.id
                );
            }
        }
    }

    #[test]
    fn rule_ids_are_unique() {
        let mut ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), RULES.len());
    }

    #[test]
    fn nested_and_overlapping_anchors_are_all_found() {
        let d = Detector::global();
        let rule = |id: &str| RULES.iter().position(|r| r.id == id).unwrap();
        // "pass" (password-assignment) ends before "password" (connection-string) does.
        let set = d.candidates("x;Password=abc;").set;
        assert!(set & (1 << rule("password-assignment")) != 0 && set & (1 << rule("connection-string-password")) != 0);
        let set = d.candidates("Authorization: Bearer x, X-Api-Key: y").set;
        assert!(set & (1 << rule("authorization-header")) != 0 && set & (1 << rule("api-key-header")) != 0);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        #[test]
        fn one_search_finds_the_literals_the_scanners_find(pieces in proptest::collection::vec((0usize..1000, "[ a-zA-Z0-9_=:.~-]{0,6}"), 0..24)) {
            let d = Detector::global();
            // Anchor literals and their fragments (so that they overlap and nest), among other text.
            let mut words: Vec<String> = Vec::new();
            for rule in RULES {
                if let Anchor::Literal(w) | Anchor::Word(w) | Anchor::Assigned(w) = rule.anchor {
                    for w in w {
                        words.extend([w.to_string(), w.to_ascii_uppercase(), w[..w.len() / 2].to_owned(), w[w.len() / 2..].to_owned()]);
                    }
                }
            }
            let text: String = pieces.iter().map(|(i, other)| if i % 3 == 0 { other.clone() } else { words[i % words.len()].clone() }).collect();
            let (a, b) = (d.candidates_by(&text, true), d.candidates_by(&text, false));
            let places = |h: &Hits| {
                let mut at = h.at.clone();
                at.sort_unstable();
                at.dedup();
                at
            };
            proptest::prop_assert_eq!(a.set, b.set, "{:?}", text);
            proptest::prop_assert_eq!(places(&a), places(&b), "{:?}", text);
        }
    }

    proptest::proptest! {
        #[test]
        fn the_partial_anchor_is_the_longest_suffix_that_begins_a_literal(tail in "[a-zA-Z_:.-]{0,4}", which in 0usize..1000, cut in 0usize..40) {
            let d = Detector::global();
            let literals: Vec<String> = RULES.iter().flat_map(|r| spellings(&r.anchor)).collect();
            let l = &literals[which % literals.len()];
            // Text that ends in part of a literal, or in anything.
            let text = format!("{tail}{}", &l[..cut.min(l.len())]);
            // Every literal's longest proper prefix at the end of the text, compared byte by byte.
            let b = text.as_bytes();
            let naive = literals.iter().filter_map(|l| (1..l.len().min(b.len() + 1)).rev().find(|&k| b.ends_with(&l.as_bytes()[..k]))).max().map(|k| b.len() - k);
            proptest::prop_assert_eq!(d.partial_anchor_at_end(&text), naive, "{:?}", text);
        }
    }

    proptest::proptest! {
        #[test]
        fn the_lines_around_positions_are_those_a_search_from_each_finds(text in "[a\n]{0,64}", mut at in proptest::collection::vec(0usize..64, 0..12)) {
            at.retain(|&p| p < text.len());
            at.sort_unstable();
            let mut lines = LinesAround::new(&text);
            for p in at {
                let b = text.as_bytes();
                let before = memchr::memrchr(b'\n', &b[..p]);
                let next = memchr::memchr(b'\n', &b[p..]).map(|i| p + i);
                let after = next.and_then(|n| memchr::memchr(b'\n', &b[n + 1..]).map(|i| n + 1 + i));
                let start = before.filter(|&n| n >= p.saturating_sub(LINE_BACK)).map_or(p.saturating_sub(LINE_BACK), |n| n + 1);
                let end = after.unwrap_or(text.len()).min(p + LINE_AHEAD);
                proptest::prop_assert_eq!(lines.around(p), start..end, "{:?} at {}", text, p);
            }
        }
    }

    #[test]
    fn a_key_body_without_its_begin_line_is_found_from_its_first_whole_line_to_its_end() {
        let d = Detector::global();
        let rule = |id: &str| RULES.iter().position(|r| r.id == id).unwrap();
        let body = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789+/AbCdEfGhIjKlMnOpQrStUvWx";
        let end = "-----END RSA PRIVATE KEY-----";
        // Real and JSON-escaped line breaks; the prose before the body stays, a short word
        // on a line of its own too.
        for nl in ["\n", "\\n", "\r\n"] {
            let text = format!("the key is{nl}Output{nl}  {body}{nl}  {body}{nl}AbC={nl}{end}{nl}ok");
            let found = d.find(&text);
            assert_eq!(found.len(), 1, "{text:?}");
            let f = &found[0];
            assert_eq!(f.rule, rule("private-key-pem-tail"), "{text:?}");
            assert_eq!(&text[f.range.clone()], format!("{body}{nl}  {body}{nl}AbC={nl}{end}"), "{text:?}");
        }
        // A whole block is the block rule's, once; a certificate's body is no key's, and
        // neither are hashes, words and identifiers before an END line.
        let whole = format!("-----BEGIN RSA PRIVATE KEY-----\n{body}\n{end}");
        assert_eq!(d.find(&whole).iter().map(|f| f.rule).collect::<Vec<_>>(), [rule("private-key-pem")]);
        assert!(d.find(&format!("{body}\n-----END CERTIFICATE-----")).is_empty());
        let hashes = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\nThisIsAVeryLongIdentifierNameForSomething\n";
        assert!(d.find(&format!("{hashes}{end}")).is_empty());
        // Nor are they between a BEGIN and an END line, with or without gutters.
        for gutter in ["", "1. ", "    \""] {
            let lines: String = hashes.lines().map(|l| format!("{gutter}{l}\n")).collect();
            let text = format!("{gutter}-----BEGIN PRIVATE KEY-----\n{lines}{gutter}-----END PRIVATE KEY-----\n");
            assert!(d.find(&text).is_empty(), "{text}");
        }
    }

    #[test]
    fn a_key_shown_with_line_numbers_or_diff_signs_is_found_whole_and_cut() {
        let d = Detector::global();
        let body = ["AbCdEfGhIjKlMnOpQrStUvWxYz0123456789+/AbCdEfGhIjKlMnOpQrStUvWx", "Zz0Yy1Xx2Ww3=="];
        let lines =
            ["-----BEGIN OPENSSH PRIVATE KEY-----", body[0], body[0], body[1], "-----END OPENSSH PRIVATE KEY-----"];
        let gutters: [&dyn Fn(usize) -> String; 17] = [
            &|n| format!("{n:>6}\u{2192}"),   // Claude Code's Read tool
            &|n| format!("{n:>6}\t"),         // cat -n
            &|n| format!("{n:05}| "),         // OpenCode's read tool
            &|_| "+".to_owned(),              // a diff that adds the key
            &|_| "-".to_owned(),              // one that removes it
            &|_| "> ".to_owned(),             // a quote
            &|_| "> > ".to_owned(),           // a quote of a quote
            &|n| format!("{n}:"),             // grep -n
            &|n| format!("{n}-"),             // its context lines
            &|n| format!("{n:>4} \u{2502} "), // bat
            &|_| "// ".to_owned(),            // comment marks
            &|_| "; ".to_owned(),
            &|n| format!("{n}. "), // list items
            &|n| format!("[{n}] "),
            &|n| format!("> {n:>6}\u{2192}"), // a quoted read
            &|n| format!("+{n:>6}\u{2192}"),  // a diff of one
            &|_| " ".repeat(13),              // deep indentation
        ];
        for gutter in gutters {
            let text: String = lines.iter().enumerate().map(|(i, l)| format!("{}{l}\n", gutter(i + 1))).collect();
            // Whole, and cut: from a line of the body on, its gutter kept or not.
            let first = text.find(body[0]).unwrap();
            for from in [0, first, text[..first].rfind('\n').unwrap() + 1] {
                let shown = &text[from..];
                let redacted = d.find(shown).iter().rev().fold(shown.to_owned(), |mut t, f| {
                    t.replace_range(f.range.clone(), "#");
                    t
                });
                assert!(!redacted.contains("AbCdEf") && !redacted.contains("Zz0Yy1"), "{shown:?} -> {redacted:?}");
            }
        }
    }

    #[test]
    fn a_cut_key_takes_its_headers_and_whole_lines_of_base64_but_not_the_prose_after_them() {
        let d = Detector::global();
        let body = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789+/AbCdEfGhIjKlMnOpQrStUvWx";
        let begins = [
            "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0123456789ABCDEF\n",
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n",
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\nComment: C:\\Users\\me\\key.asc, see https://example.com/a--b-\n",
            "-----BEGIN PRIVATE KEY-----",
        ];
        // Prose, and lines that begin with 16 characters or more of base64 without being
        // base64 through.
        let proses = [
            "\nNote: the key was cut here.\nSee: the docs\n",
            "\nAcknowledgements follow below.\n",
            "\n/usr/local/bin/openssl-wrapper failed\n",
            "\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  key.pem\n",
            "\n\nConfigurationManager2 loads it\n",
        ];
        for (begin, prose) in begins.iter().flat_map(|b| proses.iter().map(move |p| (b, p))) {
            let text = format!("{begin}\n{body}\n{body}{prose}");
            let found = d.find(&text);
            assert_eq!(found.len(), 1, "{text:?}");
            assert_eq!(&text[found[0].range.clone()], format!("{begin}\n{body}\n{body}"), "{text:?}");
            assert_eq!(&text[found[0].range.end..], *prose);
        }
    }

    #[test]
    fn a_key_wrapped_in_short_lines_is_found_whole_cut_and_by_its_tail() {
        let d = Detector::global();
        let rule = |id: &str| RULES.iter().position(|r| r.id == id).unwrap();
        let body = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789+/AbCdEfGhIjKlMnOpQrStUvWx".repeat(3);
        let lines: Vec<&str> = (0..body.len() / 32).map(|i| &body[i * 32..i * 32 + 32]).collect();
        let (begin, end) = ("-----BEGIN PRIVATE KEY-----", "-----END PRIVATE KEY-----");
        let key = lines.join("\n");
        for (text, by) in [
            (format!("{begin}\n{key}\n{end}\n"), "private-key-pem"),
            (format!("{begin}\n{key}\n"), "private-key-pem"),
            (format!("{key}\n{end}\n"), "private-key-pem-tail"),
        ] {
            let found = d.find(&text);
            assert_eq!(found.iter().map(|f| f.rule).collect::<Vec<_>>(), [rule(by)], "{text:?}");
            assert!(text[found[0].range.clone()].contains(&key), "{text:?}");
        }
        // Two short lines, or lines of words, are no key.
        for body in [lines[..2].join("\n"), "Thisisalongwordwithoutbreaks\nAndanotherlongwordlikeit\n".repeat(3)] {
            assert!(d.find(&format!("{begin}\n{body}\n{end}")).is_empty(), "{body:?}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]

        /// The gate of [`Anchor::Assigned`] only saves searches: the rules find what they
        /// find when their words are plain [`Anchor::Word`]s.
        #[test]
        fn assigned_words_find_what_plain_words_find(pieces in proptest::collection::vec((0usize..10_000, 0usize..10_000), 1..12)) {
            static AS_WORDS: OnceLock<Detector> = OnceLock::new();
            let plain = AS_WORDS.get_or_init(|| {
                let rules: Vec<Rule> = RULES
                    .iter()
                    .map(|r| match r.anchor {
                        Anchor::Assigned(w) => Rule { anchor: Anchor::Word(w), ..*r },
                        _ => *r,
                    })
                    .collect();
                Detector::new(Vec::leak(rules))
            });
            let words = ["token", "TOKEN", "Token", "pass", "PASS", "Password", "pwd", "secret", "SECRET_KEY", "key", "ApiKey", "auth", "login", "credentials", "fastly", "STRIPE", "Etsy", "db"];
            let joints = ["", "_", ".", "-", "2", "Value", "\\\"", "\"", "'", "']", " ", "\t", " string ", " &str", " str"];
            let ops = ["=", ":", ":=", "::=", "=>", "?=", ".=", "+=", ",", ">", " = ", ": ", ", \"", ">\n", "\n", " is ", "(", ""];
            let values = ["s3cr3tV4lu3Xy9Qw2Lk8", "\"Zq8Wm2Rt6Yp4Ln0Vb7Hc\"", "'Kd9Fs1Ga3Hj5Kl7Zx2Cv'", "`Mn4Bv6Cx8Zl0Kj2Hg9Fd`", "hunter2hunter2", "value", "<x>", " </token>", "\n"];
            let text: String = pieces
                .iter()
                .map(|&(a, b)| format!("{}{}{}{}", words[a % words.len()], joints[b % joints.len()], ops[(a / 31) % ops.len()], values[(b / 17) % values.len()]))
                .collect::<Vec<_>>()
                .join(["", " ", "\n", "; "][pieces[0].0 % 4]);
            let d = Detector::global();
            proptest::prop_assert_eq!(d.find(&text), plain.find(&text), "{:?}", text);
        }
    }

    #[test]
    fn plain_text_has_no_candidates() {
        assert!(!Detector::global().may_match("Compiling minicode v0.1.0\n    Finished release in 3.2s\n"));
    }
}
