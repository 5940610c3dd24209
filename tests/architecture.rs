//! The layers as a test: every path into the crate that a source file names (`use crate::…`,
//! `crate::a::b` in code, `super::…` that leaves its module) is resolved to the module it
//! reaches, and the rules below fail on the first import that crosses a layer the wrong way.
//! Comments, strings and character literals are skipped, so a doc link or a fixture never
//! counts as an import.

use std::fs;
use std::path::{Path, PathBuf};

/// One path into the crate, as written in a file (resolved from the crate root).
#[derive(Debug, Clone)]
struct Import {
    file: String,
    line: usize,
    /// The module the file (or the inline module the path is in) is, from the crate root.
    from: Vec<String>,
    /// The path named, from the crate root.
    to: Vec<String>,
}

/// The rules, each a question about one import: `Some(why)` when it breaks the rule.
fn violation(i: &Import, submodules: &dyn Fn(&str, &str) -> bool, leaves: &[String]) -> Option<String> {
    let from = i.from.first().map(String::as_str).unwrap_or("");
    let to = i.to.first().map(String::as_str).unwrap_or("");
    let into_submodule = |top: &str| to == top && i.to.get(1).is_some_and(|s| submodules(top, s));
    match (from, to) {
        ("provider", "projection") => Some("a parser (provider) knows nothing of the projections".into()),
        ("projection", "provider") => Some("a projection knows nothing of the parsers (provider)".into()),
        ("event", t) if t != "event" && !leaves.iter().any(|l| l == t) => {
            Some("the event model imports nothing of the crate but itself (and leaf utilities)".into())
        }
        ("summarize", _) if into_submodule("projection") => Some(
            "summarize uses the projections' public face, not their modules (shared words live in vocabulary)".into(),
        ),
        ("engine", _) if into_submodule("scrub") => Some("the engine uses scrub's public face, not its modules".into()),
        _ => None,
    }
}

#[test]
fn layers_hold() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let imports = all_imports(&src);
    assert!(imports.len() > 200, "the scan found only {} imports: is it reading src/?", imports.len());
    let leaves = leaves(&imports);
    let submodules = |top: &str, name: &str| {
        src.join(top).join(format!("{name}.rs")).is_file() || src.join(top).join(name).join("mod.rs").is_file()
    };
    let broken: Vec<String> = imports
        .iter()
        .filter_map(|i| {
            let why = violation(i, &submodules, &leaves)?;
            Some(format!("{}:{}: {} -> crate::{}: {why}", i.file, i.line, i.from.join("::"), i.to.join("::")))
        })
        .collect();
    assert!(broken.is_empty(), "imports that cross a layer the wrong way:\n{}", broken.join("\n"));
}

/// The scanner sees what it must: grouped, nested and `super` paths, and nothing in
/// comments, strings or character literals.
#[test]
fn the_scanner_resolves_paths() {
    let text = r##"
use crate::{event::{Body, Event}, io};
use super::sibling::Thing; // crate::not_this
/// [`crate::nor_this`]
fn f() { let _ = crate::scan::find(b'{', "crate::nor_string", r#"crate::{x}"#); }
mod tests {
    use super::super::up;
    fn g() -> char { '}' }
}
use crate::after::Inline;
"##;
    let got: Vec<(usize, String, String)> = imports_of("x.rs", &["a".into(), "b".into()], text)
        .into_iter()
        .map(|i| (i.line, i.from.join("::"), i.to.join("::")))
        .collect();
    let want = [
        (2, "a::b", "event::Body"),
        (2, "a::b", "event::Event"),
        (2, "a::b", "io"),
        (3, "a::b", "a::sibling::Thing"),
        (5, "a::b", "scan::find"),
        (7, "a::b::tests", "a::up"),
        (10, "a::b", "after::Inline"),
    ];
    let want: Vec<(usize, String, String)> = want.iter().map(|(l, f, t)| (*l, f.to_string(), t.to_string())).collect();
    assert_eq!(got, want);
}

/// Top-level modules that name nothing of the crate but themselves: utilities any layer may use.
fn leaves(imports: &[Import]) -> Vec<String> {
    let tops: Vec<String> = imports.iter().filter_map(|i| i.from.first().cloned()).collect();
    let mut leaves: Vec<String> = tops
        .iter()
        .filter(|t| imports.iter().filter(|i| i.from.first() == Some(t)).all(|i| i.to.first() == Some(t)))
        .cloned()
        .collect();
    leaves.sort();
    leaves.dedup();
    leaves
}

fn all_imports(src: &Path) -> Vec<Import> {
    let mut files = Vec::new();
    walk(src, &mut files);
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let rel = f.strip_prefix(src).unwrap();
        let mut module: Vec<String> = rel.with_extension("").iter().map(|c| c.to_string_lossy().into_owned()).collect();
        if matches!(module.last().map(String::as_str), Some("mod" | "lib" | "main")) {
            module.pop();
        }
        let text = fs::read_to_string(&f).unwrap();
        out.extend(imports_of(&format!("src/{}", rel.display()), &module, &text));
    }
    out
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code of `text` as tokens of interest (identifiers, `::`, braces, `,`, `;`), each with
/// its line; comments, strings and character literals are dropped.
fn tokens(text: &str) -> Vec<(usize, String)> {
    let b = text.as_bytes();
    let (mut i, mut line) = (0, 1);
    let mut out = Vec::new();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while i < b.len() {
        let c = b[i];
        match c {
            b'\n' => {
                line += 1;
                i += 1;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
                line += text[i..end].matches('\n').count();
                i = end;
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    if b.get(i) == Some(&b'\n') {
                        line += 1;
                    }
                    i += 1;
                }
                i += 1;
            }
            b'\'' => {
                // A character literal ('x', '\n', '\u{7f}'), else a lifetime.
                if b.get(i + 1) == Some(&b'\\') {
                    i += 2;
                    while i < b.len() && b[i] != b'\'' {
                        i += 1;
                    }
                    i += 1;
                } else if let Some(len) = text[i + 1..].chars().next().map(char::len_utf8) {
                    i += if b.get(i + 1 + len) == Some(&b'\'') { len + 2 } else { 1 };
                } else {
                    i += 1;
                }
            }
            b'{' | b'}' | b',' | b';' => {
                out.push((line, (c as char).to_string()));
                i += 1;
            }
            b':' if b.get(i + 1) == Some(&b':') => {
                out.push((line, "::".into()));
                i += 2;
            }
            c if ident(c) => {
                let start = i;
                while i < b.len() && ident(b[i]) {
                    i += 1;
                }
                let word = &text[start..i];
                // Raw strings: r"…", r#"…"#, br#"…"#.
                let hashes = b[i..].iter().take_while(|&&h| h == b'#').count();
                if matches!(word, "r" | "br") && b.get(i + hashes) == Some(&b'"') {
                    let close = format!("\"{}", "#".repeat(hashes));
                    let body = i + hashes + 1;
                    let end = text[body..].find(&close).map_or(b.len(), |e| body + e + close.len());
                    line += text[i..end].matches('\n').count();
                    i = end;
                } else if word == "b" && b.get(i) == Some(&b'\'') {
                    // b'x' is read as a character literal next.
                } else {
                    out.push((line, word.to_owned()));
                }
            }
            _ => i += 1,
        }
    }
    out
}

/// Every path into the crate that `text` (the file of `module`) names.
fn imports_of(file: &str, module: &[String], text: &str) -> Vec<Import> {
    let toks = tokens(text);
    let mut out = Vec::new();
    // Inline modules (`mod tests { … }`) as (name, brace depth inside them).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0;
    let mut k = 0;
    while k < toks.len() {
        let t = toks[k].1.as_str();
        let here = || module.iter().cloned().chain(inline.iter().map(|(m, _)| m.clone())).collect::<Vec<_>>();
        match t {
            "{" => depth += 1,
            "}" => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth -= 1;
            }
            "mod" if toks.get(k + 2).is_some_and(|t| t.1 == "{") => {
                inline.push((toks[k + 1].1.clone(), depth + 1));
            }
            "crate" | "super" if toks.get(k + 1).is_some_and(|t| t.1 == "::") => {
                // A path continues a longer one (`x::crate` cannot occur; `a::super` can't either).
                let after_path = k > 0 && toks[k - 1].1 == "::";
                if !after_path {
                    let from = here();
                    let mut base = if t == "crate" { Vec::new() } else { from.clone() };
                    let mut j = k;
                    if t == "super" {
                        while toks.get(j).is_some_and(|t| t.1 == "super")
                            && toks.get(j + 1).is_some_and(|t| t.1 == "::")
                        {
                            base.pop();
                            j += 2;
                        }
                    } else {
                        j += 2;
                    }
                    let line = toks[k].0;
                    let mut paths = Vec::new();
                    j = path_tree(&toks, j, base, &mut paths);
                    for to in paths {
                        out.push(Import { file: file.into(), line, from: from.clone(), to });
                    }
                    k = j;
                    continue;
                }
            }
            _ => {}
        }
        k += 1;
    }
    out
}

/// Reads `a::b::{c, d::{e}}` from `toks[j]` on, after `prefix`; pushes each leaf path and
/// returns the index after the path. `self` in a group names the group's own prefix.
fn path_tree(toks: &[(usize, String)], mut j: usize, mut prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    loop {
        match toks.get(j).map(|t| t.1.as_str()) {
            Some("{") => {
                j += 1;
                loop {
                    match toks.get(j).map(|t| t.1.as_str()) {
                        Some("}") => return j + 1,
                        Some(",") => j += 1,
                        // `x as y`: the name given is not a path.
                        Some("as") => j += 2,
                        None => return j,
                        _ => j = path_tree(toks, j, prefix.clone(), out),
                    }
                }
            }
            Some("self") => {
                out.push(prefix);
                return j + 1;
            }
            Some(w) if w.starts_with(|c: char| c.is_alphabetic() || c == '_') => {
                prefix.push(w.to_owned());
                if toks.get(j + 1).is_some_and(|t| t.1 == "::") {
                    j += 2;
                } else {
                    out.push(prefix);
                    return j + 1;
                }
            }
            _ => {
                // A glob (`*` is not a token) or the end of the path.
                if !prefix.is_empty() {
                    out.push(prefix);
                }
                return j;
            }
        }
    }
}
