//! What a dialect says about itself: its name, how sure it is that a line is its own, and
//! its parser. Every dialect module declares one [`Dialect`]; the registry in `provider.rs`
//! lists them and [`decide`] picks among their claims, so what tells a dialect apart lives
//! beside its parser, and a new dialect never needs another one's detection changed.

use serde_json::{Map, Value};

use super::Parse;

/// One dialect `normalize` reads.
pub struct Dialect {
    /// The name `--from` takes.
    pub name: &'static str,
    /// What it reads, for `--help`, the man page and the completions.
    pub about: &'static str,
    /// The parser family. Dialects of one family are read by one parser that names their
    /// runs itself (Claude Code and Qwen Code): a run need not wait to tell them apart.
    pub family: &'static str,
    /// The `type`s of the lines that open a run of this dialect (Claude Code's `system`
    /// init): such a line in another dialect's run is checked for the start of a new run.
    pub opens: &'static [&'static str],
    /// How sure the dialect is that a JSON line is its own.
    pub claim: fn(&Probe) -> Claim,
    /// A fresh parser.
    pub parser: fn() -> Box<dyn Parse>,
}

/// How sure a dialect is that a line is its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// Not a line this dialect prints.
    No,
    /// A shape this dialect prints, but others print it too.
    Maybe,
    /// A field or value only this dialect prints.
    Yes,
}

/// A JSON line, parsed once for every dialect's claim.
#[derive(Debug)]
pub struct Probe {
    obj: Map<String, Value>,
}

impl Probe {
    /// The line as a JSON object; `None` for anything else, which no dialect claims.
    pub fn parse(line: &str) -> Option<Probe> {
        match serde_json::from_str(line) {
            Ok(Value::Object(obj)) => Some(Probe { obj }),
            _ => None,
        }
    }

    /// The top-level field `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.obj.get(key)
    }

    /// True when the top-level field `key` is present (even `null`).
    pub fn has(&self, key: &str) -> bool {
        self.obj.contains_key(key)
    }

    /// The top-level string field `key`.
    pub fn str(&self, key: &str) -> Option<&str> {
        self.obj.get(key)?.as_str()
    }

    /// The line's `type`.
    pub fn kind(&self) -> Option<&str> {
        self.str("type")
    }

    /// The value at a path of object keys (`["part", "state", "metadata"]`).
    pub fn at(&self, path: &[&str]) -> Option<&Value> {
        let (first, rest) = path.split_first()?;
        rest.iter().try_fold(self.obj.get(*first)?, |v, k| v.get(k))
    }
}

/// What the claims of every dialect on one line come to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict<T> {
    /// One dialect claims the line (it alone says yes, or it alone says maybe).
    One(T),
    /// Several dialects say maybe, none yes: a later line has to decide.
    Several(Vec<T>),
    /// No dialect claims the line.
    None,
}

/// Picks among `claims` (in registry order): the dialect that says yes (the first, should
/// two), else the only one that says maybe, else all that do.
pub fn decide<T>(claims: impl IntoIterator<Item = (T, Claim)>) -> Verdict<T> {
    let mut maybe = Vec::new();
    for (d, claim) in claims {
        match claim {
            Claim::Yes => return Verdict::One(d),
            Claim::Maybe => maybe.push(d),
            Claim::No => {}
        }
    }
    match maybe.len() {
        0 => Verdict::None,
        1 => Verdict::One(maybe.pop().expect("one")),
        _ => Verdict::Several(maybe),
    }
}

/// Yes when `yes`, else maybe when `maybe`, else no: most claims are this.
pub fn claim(yes: bool, maybe: bool) -> Claim {
    if yes {
        Claim::Yes
    } else if maybe {
        Claim::Maybe
    } else {
        Claim::No
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yes_wins_a_single_maybe_decides_and_several_wait() {
        assert_eq!(decide([("a", Claim::Maybe), ("b", Claim::Yes)]), Verdict::One("b"));
        assert_eq!(decide([("a", Claim::No), ("b", Claim::Maybe)]), Verdict::One("b"));
        assert_eq!(decide([("a", Claim::Maybe), ("b", Claim::Maybe)]), Verdict::Several(vec!["a", "b"]));
        assert_eq!(decide([("a", Claim::No)]), Verdict::<&str>::None);
    }

    #[test]
    fn a_probe_reads_fields_and_paths_of_an_object_only() {
        let p = Probe::parse(r#"{"type":"x","part":{"state":{"n":1}},"z":null}"#).unwrap();
        assert_eq!(p.kind(), Some("x"));
        assert_eq!(p.at(&["part", "state", "n"]).and_then(Value::as_u64), Some(1));
        assert!(p.has("z") && p.str("z").is_none() && p.at(&["part", "nope"]).is_none());
        assert!(Probe::parse("[1]").is_none() && Probe::parse("nope").is_none());
    }
}
