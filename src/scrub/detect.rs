//! Finding secrets with the rule table: one keyword pass (two Aho-Corasick automata, one
//! case-sensitive and one not, plus the rare hand-written scan) decides which rules could
//! match; only those run their regexes, compiled on first use. Overlapping findings are
//! settled by the table's order, so a specific format wins over a generic assignment.

use std::ops::Range;
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use regex::Regex;

use super::rules::{Anchor, Rule, RULES};

/// One secret found in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Its bytes in the text.
    pub range: Range<usize>,
    /// The rule that found it, an index into [`RULES`].
    pub rule: usize,
}

/// The compiled rule table. Build it once with [`Detector::global`].
pub struct Detector {
    rules: &'static [Rule],
    exact: AhoCorasick,
    exact_rule: Vec<usize>,
    any_case: AhoCorasick,
    any_case_rule: Vec<usize>,
    scans: Vec<(usize, fn(&str) -> bool)>,
    regexes: Vec<OnceLock<Regex>>,
}

/// A set of rule indexes; the table has fewer than 128 rules (checked when it is built).
type RuleSet = u128;

impl Detector {
    /// The detector for the built-in [`RULES`], built on first use.
    pub fn global() -> &'static Detector {
        static DETECTOR: OnceLock<Detector> = OnceLock::new();
        DETECTOR.get_or_init(|| Detector::new(RULES))
    }

    fn new(rules: &'static [Rule]) -> Detector {
        assert!(rules.len() <= RuleSet::BITS as usize, "the rule set is a u128");
        let (mut exact, mut exact_rule, mut any_case, mut any_case_rule, mut scans) = (vec![], vec![], vec![], vec![], vec![]);
        for (i, rule) in rules.iter().enumerate() {
            match rule.anchor {
                Anchor::Literal(words) => words.iter().for_each(|w| {
                    exact.push(*w);
                    exact_rule.push(i);
                }),
                Anchor::AnyCase(words) => words.iter().for_each(|w| {
                    any_case.push(*w);
                    any_case_rule.push(i);
                }),
                Anchor::Scan(f) => scans.push((i, f)),
            }
        }
        let build = |words: &[&str], fold: bool| {
            AhoCorasickBuilder::new()
                .match_kind(MatchKind::Standard)
                .ascii_case_insensitive(fold)
                .build(words)
                // The literals are a fixed table of short strings: building cannot fail.
                .expect("anchor literals build an automaton")
        };
        Detector {
            rules,
            exact: build(&exact, false),
            exact_rule,
            any_case: build(&any_case, true),
            any_case_rule,
            scans,
            regexes: rules.iter().map(|_| OnceLock::new()).collect(),
        }
    }

    /// The rules whose anchors occur in `text`: empty in the common case.
    fn candidates(&self, text: &str) -> RuleSet {
        let mut set: RuleSet = 0;
        for m in self.exact.find_overlapping_iter(text) {
            set |= 1 << self.exact_rule[m.pattern().as_usize()];
        }
        for m in self.any_case.find_overlapping_iter(text) {
            set |= 1 << self.any_case_rule[m.pattern().as_usize()];
        }
        for (i, scan) in &self.scans {
            if set & (1 << i) == 0 && scan(text) {
                set |= 1 << i;
            }
        }
        set
    }

    /// True when some rule could match `text` (a cheap test: anchors only).
    pub fn may_match(&self, text: &str) -> bool {
        self.candidates(text) != 0
    }

    fn regex(&self, i: usize) -> &Regex {
        self.regexes[i].get_or_init(|| {
            // Every pattern is compiled by the rule-table test, so this cannot fail at run time.
            Regex::new(self.rules[i].pattern).unwrap_or_else(|e| panic!("rule {}: {e}", self.rules[i].id))
        })
    }

    /// Every secret in `text`, without overlaps, in text order.
    pub fn find(&self, text: &str) -> Vec<Finding> {
        let set = self.candidates(text);
        if set == 0 {
            return Vec::new();
        }
        let mut found: Vec<Finding> = Vec::new();
        for i in (0..self.rules.len()).filter(|i| set & (1 << i) != 0) {
            let rule = &self.rules[i];
            for caps in self.regex(i).captures_iter(text) {
                let Some(m) = caps.iter().skip(1).flatten().next().or_else(|| caps.get(0)) else { continue };
                let range = m.range();
                // Rules come in priority order: a finding that overlaps an earlier one loses.
                if range.is_empty() || found.iter().any(|f| f.range.start < range.end && range.start < f.range.end) {
                    continue;
                }
                if rule.check.accepts(m.as_str()) {
                    found.push(Finding { range, rule: i });
                }
            }
        }
        found.sort_by_key(|f| f.range.start);
        found
    }

    /// The rule a finding came from.
    pub fn rule(&self, f: &Finding) -> &'static Rule {
        &self.rules[f.rule]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles_and_every_rule_has_an_anchor() {
        let d = Detector::global();
        for (i, rule) in RULES.iter().enumerate() {
            let _ = d.regex(i);
            if let Anchor::Literal(w) | Anchor::AnyCase(w) = rule.anchor {
                assert!(!w.is_empty(), "{}", rule.id);
            }
            if let Anchor::AnyCase(w) = rule.anchor {
                assert!(w.iter().all(|w| *w == w.to_ascii_lowercase()), "{}: give any-case anchors in lowercase", rule.id);
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
    fn plain_text_has_no_candidates() {
        assert!(!Detector::global().may_match("Compiling minicode v0.1.0\n    Finished release in 3.2s\n"));
    }
}
