//! Second looks at a candidate secret after its pattern matched: format checksums (GitHub,
//! npm), structure (JWT, Discord ids, PEM bodies) and the heuristics that keep placeholders,
//! code and ordinary words from being redacted. False positives destroy the output's value,
//! so every rule passes through one of these.

/// How a rule confirms a candidate; every check also rejects placeholders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// The format is specific enough on its own.
    Format,
    /// The last 6 characters are the base62 CRC32 of the 30 after the prefix (GitHub, npm).
    Crc32Base62,
    /// A JWT whose first segment decodes to a JSON header naming `alg` or `typ`.
    Jwt,
    /// A Discord bot token: its first segment is the base64 of a numeric user id.
    DiscordId,
    /// A PEM block, or the last lines of one, whose body holds random base64, as a key's
    /// does: a run of 40 with capitals, small letters and digits, as a line of a key is (not
    /// `...`, a hash in hex, a word or an identifier), or a key wrapped in shorter lines
    /// (runs of 16 or more that each mix them, adding up to 80).
    PemBody,
    /// Random-looking letters (Hugging Face tokens), not a CamelCase identifier.
    RandomLetters,
    /// A password in a URL or connection string: not a placeholder word or a variable.
    Password,
    /// Base64 of `user:password` with a password (Docker's `auth`, HTTP Basic).
    BasicAuth,
    /// A value assigned to a secret-looking name, at least this long: see [`looks_assigned`].
    Assigned(usize),
    /// A value assigned to a name that names a service and a secret: see [`looks_vendor_assigned`].
    VendorAssigned,
    /// A Slack token: three dash-separated parts after its prefix, or one of 8+ letters and digits.
    SlackToken,
}

impl Check {
    /// True when `secret`, found by a rule's pattern and followed by `after` in the text,
    /// is taken as a real secret.
    pub fn accepts(self, secret: &str, after: &str) -> bool {
        if secret.contains("[REDACTED") {
            return false;
        }
        match self {
            Check::PemBody => {
                base64_runs(secret).any(|run| run.len() >= 40 && mixes_case_and_digits(run)) || short_key_lines(secret)
            }
            // A checksum that holds cannot be typed by chance: whatever the token looks like,
            // it was issued. One that fails proves nothing (a token cut, mistyped or made up
            // is still one to every scanner): the token is then judged by its look.
            Check::Crc32Base62 => has_crc32_checksum(secret) || !is_placeholder(secret),
            _ if is_placeholder(secret) => false,
            Check::Format => true,
            Check::Jwt => is_jwt(secret),
            Check::DiscordId => is_discord_token(secret),
            Check::RandomLetters => letters_look_random(secret.rsplit('_').next().unwrap_or(secret)),
            Check::Password => is_password(secret),
            Check::BasicAuth => is_basic_auth(secret),
            // A value followed by `(` is a call (`getpass()`, `parenthesized!(…)`): code.
            Check::VendorAssigned => !after.starts_with('(') && looks_vendor_assigned(secret),
            // Three parts after the prefix is the shape of today's tokens; older and
            // configuration tokens have fewer, one of them random.
            Check::SlackToken => {
                let parts = secret.trim_start_matches("xoxe.").split('-').skip(1);
                parts.clone().count() >= 3
                    || parts.into_iter().any(|p| {
                        p.len() >= 8
                            && p.bytes().any(|c| c.is_ascii_digit())
                            && p.bytes().any(|c| c.is_ascii_alphabetic())
                    })
            }
            Check::Assigned(min) => {
                let quoted = after.trim_start_matches('\\').starts_with(['"', '\'', '`']);
                !after.starts_with('(') && looks_assigned(secret, min) && (quoted || !is_compound_identifier(secret))
            }
        }
    }
}

/// Example keys that vendors document and people paste as they are; their placeholder word
/// runs into the letters around it, so the word test alone misses them.
const DOCUMENTED: [&str; 2] = ["wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY"];

/// The words and signs that mark a placeholder (see [`is_placeholder`]).
const MARKS: [&str; 22] = [
    "example",
    "xxxx",
    "your",
    "placeholder",
    "changeme",
    "change_me",
    "change-me",
    "dummy",
    "sample",
    "redacted",
    "fake",
    "replace",
    "insert",
    "_here",
    "-here",
    "****",
    "...",
    "…",
    "${",
    "{{",
    "}}",
    "$(",
];

/// Placeholders and references that stand for a secret without being one: `<your-key>`,
/// `sk-...`, `YOUR_TOKEN_HERE`, `xxxx`, `${TOKEN}`, `$DB_PASSWORD`, `%PASSWORD%`,
/// `{{ secrets.X }}`, `****`, AWS's documented `…EXAMPLE` keys, and runs of one repeated or
/// sequential character.
///
/// A word counts only as a person types it into a placeholder: in one case (or capitalized)
/// and with no letter against it (`YOUR_KEY`, `7EXAMPLE`). Random tokens hold such words
/// too, in among other letters (`dyoURLo`, `XfakeQ`): taking those for placeholders let a
/// real key through now and then. A key with such a word beside it (`…_EXAMPLE`) is still
/// a placeholder here; the detector takes the words out ([`without_placeholders`]) and asks
/// whether what is left is still a secret.
pub fn is_placeholder(v: &str) -> bool {
    DOCUMENTED.contains(&v)
        || v.starts_with('<')
        || v.ends_with('>')
        || is_reference(v)
        || !placeholder_spans(v).is_empty()
}

/// `v` without the placeholder words, fillers (`...`, `****`) and runs that
/// [`is_placeholder`] sees in it; `None` when there are none, or when `v` is a placeholder
/// by its form (`<…>`, a reference, a template, a redaction marker) and so wholly one.
pub fn without_placeholders(v: &str) -> Option<String> {
    const FORMS: [&str; 5] = ["${", "{{", "}}", "$(", "[REDACTED"];
    if v.starts_with('<') || v.ends_with('>') || is_reference(v) || FORMS.iter().any(|f| v.contains(f)) {
        return None;
    }
    let spans = placeholder_spans(v);
    if spans.is_empty() {
        return None;
    }
    let b = v.as_bytes();
    let mut keep = vec![true; b.len()];
    for r in spans {
        keep[r].iter_mut().for_each(|k| *k = false);
    }
    let kept: Vec<u8> = b.iter().zip(&keep).filter(|(_, k)| **k).map(|(c, _)| *c).collect();
    Some(String::from_utf8_lossy(&kept).into_owned())
}

/// Where `v` holds a placeholder word (see [`is_placeholder`]) or a run of 8+ repeated or
/// sequential characters.
fn placeholder_spans(v: &str) -> Vec<std::ops::Range<usize>> {
    let lower = v.to_ascii_lowercase();
    let b = v.as_bytes();
    let letter_at = |i: Option<usize>| i.and_then(|i| b.get(i)).is_some_and(u8::is_ascii_alphabetic);
    // `word` is `mark` but for case (it was found in `lower`).
    let typed = |m: &str, at: usize| {
        let (word, mark, end) = (&b[at..at + m.len()], m.as_bytes(), at + m.len());
        let lower_or_capitalized = word[1..] == mark[1..];
        let upper = word.iter().zip(mark).all(|(w, c)| *w == c.to_ascii_uppercase());
        let one_case = lower_or_capitalized || upper;
        let starts_clear = !mark[0].is_ascii_alphabetic() || !letter_at(at.checked_sub(1));
        let ends_clear = !mark[mark.len() - 1].is_ascii_alphabetic() || !letter_at(Some(end));
        one_case && starts_clear && ends_clear
    };
    let mut spans: Vec<std::ops::Range<usize>> = MARKS
        .iter()
        .flat_map(|m| lower.match_indices(m).filter(|(at, _)| typed(m, *at)).map(|(at, m)| at..at + m.len()))
        .collect();
    spans.extend(monotone_runs(b, 8));
    spans
}

/// A variable or template standing for the value: `${X}`, `$(cmd)`, `$env:X`, `$DB_PASS`,
/// `$password`, `%PASSWORD%`, `%(pw)s`, `@password`, `&password`. A password may begin with
/// those signs too (`$3cr3t!`, `@dm1n`, `%Tr0ub4dor`, `&x9Kq…`): a sign before a plain name
/// is a reference, before anything else a password.
fn is_reference(v: &str) -> bool {
    let name = |s: &str| {
        let b = s.as_bytes();
        !b.is_empty()
            && (b[0].is_ascii_alphabetic() || b[0] == b'_')
            && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
    };
    // Names as code writes them: UPPER_SNAKE (digits allowed), or letters and `_` alone.
    let code_name = |s: &str| {
        name(s)
            && (s.bytes().all(|c| !c.is_ascii_lowercase()) || s.bytes().all(|c| c.is_ascii_alphabetic() || c == b'_'))
    };
    match v.as_bytes().first() {
        Some(b'$') => {
            let rest = &v[1..];
            rest.starts_with(['{', '(']) || rest.starts_with("env:") || code_name(rest)
        }
        Some(b'%') => {
            let rest = &v[1..];
            rest.strip_suffix('%').is_some_and(name)
                || (rest.starts_with('(') && rest.contains(")s"))
                || matches!(rest, "s" | "d")
        }
        Some(b'@' | b'&') => code_name(&v[1..]) || v[1..].starts_with('{'),
        _ => false,
    }
}

/// The runs of `len` or more bytes of `b` that repeat one byte or count up by one
/// (`00000000`, `abcdefgh`, `12345678`), as typed placeholders do and random text rarely does.
fn monotone_runs(b: &[u8], len: usize) -> Vec<std::ops::Range<usize>> {
    let mut runs = Vec::new();
    let (mut same, mut step) = (0, 0);
    for i in 1..=b.len() {
        let more = i < b.len();
        let same_on = more && b[i] == b[i - 1];
        let step_on = more && b[i] == b[i - 1].wrapping_add(1) && b[i].is_ascii_alphanumeric();
        // `same` and `step` are where the current runs began.
        if !same_on {
            if i - same >= len {
                runs.push(same..i);
            }
            same = i;
        }
        if !step_on {
            if i - step >= len {
                runs.push(step..i);
            }
            step = i;
        }
    }
    runs
}

const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The IEEE CRC32 (as zlib computes it) of `data`.
pub fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// The 6-character base62 checksum GitHub and npm tokens end with: the CRC32 of the random
/// part, in the alphabet `0-9A-Za-z`, padded with `0`.
pub fn base62_checksum(random: &str) -> String {
    let mut n = crc32(random.as_bytes());
    let mut out = [b'0'; 6];
    for slot in out.iter_mut().rev() {
        *slot = BASE62[(n % 62) as usize];
        n /= 62;
    }
    // Only ASCII bytes from BASE62 were written.
    String::from_utf8_lossy(&out).into_owned()
}

/// True when a `prefix_` token ends with the base62 CRC32 of the characters between the
/// prefix and those 6.
pub fn has_crc32_checksum(token: &str) -> bool {
    let body = token.rsplit('_').next().unwrap_or("");
    body.len() > 6 && body.is_ascii() && base62_checksum(&body[..body.len() - 6]) == body[body.len() - 6..]
}

/// Decodes unpadded or padded base64, standard or URL-safe.
pub fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for c in s.trim_end_matches('=').bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

fn is_jwt(token: &str) -> bool {
    let header = token.split('.').next().and_then(base64_decode).unwrap_or_default();
    let header = String::from_utf8_lossy(&header);
    header.starts_with('{') && (header.contains("\"alg\"") || header.contains("\"typ\""))
}

fn is_discord_token(token: &str) -> bool {
    let id = token.split('.').next().and_then(base64_decode).unwrap_or_default();
    (17..=20).contains(&id.len()) && id.iter().all(u8::is_ascii_digit)
}

/// A key's body wrapped in lines shorter than 40 (`fold -w 32`, a narrow pane): runs of 16
/// or more that each mix capitals, small letters and digits, as random bytes encode, and
/// add up to 80. A line or two, hashes, words and identifiers are not enough.
fn short_key_lines(s: &str) -> bool {
    base64_runs(s).filter(|run| run.len() >= 16 && mixes_case_and_digits(run)).map(str::len).sum::<usize>() >= 80
}

/// True when `s` may begin a line of a PEM block shown by a tool, as the rules' `pem_gutter`
/// reads it: blanks, then at most 12 characters that are neither ASCII letters nor line
/// breaks (a line number, a diff's sign, quote or comment marks, a box-drawn rule).
pub(crate) fn is_pem_gutter(s: &str) -> bool {
    let s = s.trim_start_matches([' ', '\t']);
    s.chars().nth(12).is_none() && !s.bytes().any(|c| c.is_ascii_alphabetic() || c == b'\r' || c == b'\n')
}

/// Whole lines, as they come, that may be the last lines of a key whose BEGIN line is not
/// there (a text cut to its tail): what `private-key-pem-tail` redacts once the END line
/// follows. Lines of 16 or more base64 characters, then at most one shorter one (the last
/// of the body) and an OpenPGP checksum line (`=` and 4 characters), each after a gutter
/// ([`is_pem_gutter`]). Those who pass a text on line by line hold such a run until a line
/// ends it, so that the END line finds the whole body with it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum KeyTail {
    /// The lines so far end with none that may be a key's.
    #[default]
    None,
    /// They end with lines of a key's body; more may come.
    Body,
    /// They end with those and a short line, the last of a body: only an END line may come.
    Last,
}

impl KeyTail {
    /// The run after one more whole line (without its line break). A body line goes on
    /// with it, also after a short one (the tail may begin there: the rule finds it from
    /// that line); a short line ends a body, a checksum may follow it; any other line ends
    /// the run, an END line too: the caller, holding the run, gives it to the scrubber with
    /// that line.
    pub(crate) fn line(self, line: &str) -> KeyTail {
        let line = line.trim_end();
        let run =
            line.bytes().rev().take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'=')).count();
        if run == 0 || !is_pem_gutter(&line[..line.len() - run]) {
            return KeyTail::None;
        }
        let checksum = || run == 5 && line[line.len() - 5..].starts_with('=') && !line.ends_with('=');
        match (run >= 16, self) {
            (true, _) => KeyTail::Body,
            (false, KeyTail::Body) => KeyTail::Last,
            (false, KeyTail::Last) if checksum() => KeyTail::Last,
            (false, _) => KeyTail::None,
        }
    }

    /// True when a run of a key's lines is open.
    pub(crate) fn is_open(self) -> bool {
        self != KeyTail::None
    }
}

fn mixes_case_and_digits(run: &str) -> bool {
    let b = run.as_bytes();
    b.iter().any(u8::is_ascii_uppercase) && b.iter().any(u8::is_ascii_lowercase) && b.iter().any(u8::is_ascii_digit)
}

/// The runs of base64 characters (without padding) in `s`.
fn base64_runs(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '+' || c == '/'))
}

/// Random mixed-case letters switch case often; CamelCase identifiers switch about twice a
/// word and have no runs of capitals unless they hold an acronym.
fn letters_look_random(s: &str) -> bool {
    let b = s.as_bytes();
    let switches = b.windows(2).filter(|w| w[0].is_ascii_uppercase() != w[1].is_ascii_uppercase()).count();
    let capital_pairs = b.windows(2).filter(|w| w[0].is_ascii_uppercase() && w[1].is_ascii_uppercase()).count();
    switches * 3 >= b.len() || (capital_pairs >= 3 && switches * 5 >= b.len())
}

fn is_basic_auth(v: &str) -> bool {
    let Some(plain) = base64_decode(v).and_then(|b| String::from_utf8(b).ok()) else { return false };
    plain.split_once(':').is_some_and(|(user, pass)| {
        !pass.is_empty()
            && plain.chars().all(|c| !c.is_control())
            && !user.contains(char::is_whitespace)
            && is_password(pass)
    })
}

fn is_password(v: &str) -> bool {
    const WORDS: [&str; 10] =
        ["password", "passwd", "pass", "pwd", "secret", "token", "x", "null", "none", "undefined"];
    !v.chars().all(|c| c == '*' || c == 'x' || c == 'X') && !WORDS.iter().any(|w| v.eq_ignore_ascii_case(w))
}

/// A value assigned to a secret-looking name (`API_KEY=…`, `"password": "…"`) is taken as a
/// secret when it is at least `min` bytes, holds a letter and a digit or symbol (or is long
/// random letters), and is not code (`os.environ`, `get_token`, `Option`, `*mut`), a path, a
/// URL, a version, a word list (`my-app-secret`), a boolean or a number. (Unquoted compound
/// identifiers, `Ed25519PrivateKey`, are rejected by the caller, which knows the quoting.)
pub fn looks_assigned(v: &str, min: usize) -> bool {
    if v.len() < min || !v.bytes().any(|c| c.is_ascii_alphabetic()) {
        return false;
    }
    const WORDS: [&str; 6] = ["true", "false", "null", "none", "undefined", "required"];
    if WORDS.iter().any(|w| v.eq_ignore_ascii_case(w)) || is_path_or_url(v) || is_version(v) {
        return false;
    }
    let has_digit = v.bytes().any(|c| c.is_ascii_digit());
    let has_symbol = v.bytes().any(|c| !c.is_ascii_alphanumeric() && !matches!(c, b'_' | b'-' | b'.' | b':'));
    if v.starts_with('*') {
        return false;
    }
    if has_digit || has_symbol {
        return !is_code_path(v);
    }
    // Letters joined by `_ - . ::`: an identifier, a word list or a dotted path, unless the
    // letters are long and random.
    v.len() >= 20 && !v.contains(['.', ':']) && letters_look_random(&v.replace(['_', '-'], ""))
}

/// A value given to a name that holds a service's name and a secret word
/// (`CONFLUENT_TOKEN`, `etsyKey`): the name says what it is, so the value need only be 16+
/// characters that are not code, a path, a version or a word: letters and digits (a
/// compound identifier of them included: random tokens often read as one), 32+ digits (a
/// client secret; shorter is an id), or 16+ letters that are not words joined.
pub fn looks_vendor_assigned(v: &str) -> bool {
    if v.len() < 16 || is_path_or_url(v) || is_version(v) || is_code_path(v) || v.starts_with('*') {
        return false;
    }
    let has_digit = v.bytes().any(|c| c.is_ascii_digit());
    let has_letter = v.bytes().any(|c| c.is_ascii_alphabetic());
    match (has_letter, has_digit) {
        (false, _) => v.len() >= 32 && v.bytes().all(|c| c.is_ascii_digit()),
        (true, true) => true,
        (true, false) => {
            looks_assigned(v, 16) || (v.bytes().all(|c| c.is_ascii_alphabetic()) && !is_compound_identifier(v))
        }
    }
}

/// `snake_case_2`, `camelCase`, `Ed25519PrivateKey`: an identifier of two or more words,
/// the kind a type annotation or an assignment in code names. Words are the letter runs
/// split at `_`, digits and lower-to-upper case changes; they are words when none is a lone
/// letter, they average 3+ letters and each of 3+ letters has a vowel. About 1.5 % of
/// random 24-character strings pass this too, which is why quoted values skip the test.
pub fn is_compound_identifier(v: &str) -> bool {
    let b = v.as_bytes();
    if b.is_empty()
        || !(b[0].is_ascii_alphabetic() || b[0] == b'_')
        || !b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
    {
        return false;
    }
    let mut words: Vec<&[u8]> = Vec::new();
    let mut start = None;
    for (i, c) in b.iter().enumerate() {
        let boundary = !c.is_ascii_alphabetic() || (c.is_ascii_uppercase() && i > 0 && b[i - 1].is_ascii_lowercase());
        if boundary {
            if let Some(s) = start.take() {
                words.push(&b[s..i]);
            }
        }
        if c.is_ascii_alphabetic() && start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        words.push(&b[s..]);
    }
    let letters: usize = words.iter().map(|w| w.len()).sum();
    let vowel = |w: &&[u8]| w.iter().any(|c| b"aeiouyAEIOUY".contains(c));
    words.len() >= 2
        && words.iter().all(|w| w.len() >= 2)
        && letters >= 3 * words.len()
        && words.iter().filter(|w| w.len() >= 3).all(vowel)
}

fn is_path_or_url(v: &str) -> bool {
    v.starts_with(['/', '~']) || v.starts_with("./") || v.starts_with("../") || v.contains("://") || {
        let b = v.as_bytes();
        b.len() > 2 && b[0].is_ascii_alphabetic() && b[1] == b':' && b[2] == b'\\'
    }
}

fn is_version(v: &str) -> bool {
    let v = v.strip_prefix('v').unwrap_or(v);
    v.split('.').count() >= 2 && v.split('.').all(|p| !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit()))
}

/// `a.b.c`, `A::b`, `ed25519.Ed25519PrivateKey` where every part is an identifier and the
/// letters do not look random: code, not a secret.
fn is_code_path(v: &str) -> bool {
    let parts: Vec<&str> = v.split(['.', ':']).filter(|p| !p.is_empty()).collect();
    parts.len() >= 2
        && parts.iter().all(|p| {
            let b = p.as_bytes();
            (b[0].is_ascii_alphabetic() || b[0] == b'_') && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
        })
        && !letters_look_random(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_tail_is_body_lines_then_at_most_one_short_line() {
        use super::KeyTail::{self, Body, Last, None};
        let body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7";
        let run = |lines: &[&str]| {
            lines
                .iter()
                .scan(KeyTail::None, |t, l| {
                    *t = t.line(l);
                    Some(*t)
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(run(&[body, body, "AbC=", "-----END PRIVATE KEY-----"]), [Body, Body, Last, None]);
        // An OpenPGP checksum after the short line; one checksum is no body line.
        assert_eq!(run(&[body, "AbC=", "=XyZ1", "-----END"]), [Body, Last, Last, None]);
        assert_eq!(run(&["=XyZ1", body, "AbC=", "=XyZ=", "==XyZ"]), [None, Body, Last, None, None]);
        // A short line alone, or a second one, is no key's; a body line starts anew.
        assert_eq!(
            run(&["AbC=", body, "Done", "Done", body, "Done", body]),
            [None, Body, Last, None, Body, Last, Body]
        );
        // Blanks, then gutters without letters, up to 12 characters; trailing blanks and CR.
        assert_eq!(run(&[&format!("    12\u{2192}{body}\r"), &format!("> > {body}  "), "+ AbC="]), [Body, Body, Last]);
        let (bat, deep) = (format!("  12 \u{2502} {body}"), format!("{}> [12] {body}", " ".repeat(20)));
        assert_eq!(run(&[&bat, &deep, &format!("12-{body}"), "// AbC="]), [Body, Body, Body, Last]);
        assert_eq!(
            run(&[&format!("key: {body}"), &format!("1234567890123 {body}"), "", body]),
            [None, None, None, Body]
        );
    }

    #[test]
    fn crc32_matches_zlib() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn base62_checksum_round_trips() {
        let random = "abcdefghijKLMNOPQRST0123456789";
        let token = format!("ghp_{random}{}", base62_checksum(random));
        assert!(has_crc32_checksum(&token));
        let mut bad = token.clone();
        bad.replace_range(4..5, "b");
        assert!(!has_crc32_checksum(&bad));
    }

    #[test]
    fn placeholders_are_recognised() {
        for p in [
            "<your-api-key>",
            "YOUR_TOKEN_HERE",
            "sk-...",
            "${TOKEN}",
            "{{ secrets.X }}",
            "AKIAIOSFODNN7EXAMPLE",
            "********",
            "abcdefghij",
        ] {
            assert!(is_placeholder(p), "{p}");
        }
        assert!(!is_placeholder("hX9q2LmZ0pR7"));
        // Found by the planted-secret proptest: words inside random tokens.
        for random in ["T1G22dyoURLoeDmxG4cmLEk", "q8XfakeQ2m", "ZyourZ", "Your9", "a…b"] {
            assert_eq!(is_placeholder(random), matches!(random, "Your9" | "a…b"), "{random}");
        }
    }

    #[test]
    fn a_checksum_that_holds_outranks_the_placeholder_look() {
        let random = "A".repeat(30);
        let token = format!("npm_{random}{}", base62_checksum(&random));
        assert!(is_placeholder(&token) && Check::Crc32Base62.accepts(&token, ""));
    }

    #[test]
    fn assigned_values_need_to_look_like_secrets() {
        for v in ["hunter22", "P@ssw0rd!", "s3cr3t-v4lue", "cGFzc3dvcmQxMjM="] {
            assert!(looks_assigned(v, 6), "{v}");
        }
        for v in [
            "os.environ",
            "getpass.getpass",
            "Option",
            "my-app-secret",
            "/run/secrets/db",
            "1.2.3",
            "true",
            "12345678",
            "self.token",
            "AutoTokenizer",
            "*mut",
            "ed25519.Ed25519PrivateKey",
        ] {
            assert!(!looks_assigned(v, 6), "{v}");
        }
        for v in ["_bindgen_ty_24", "Ed25519PrivateKey", "my_pass_12"] {
            assert!(is_compound_identifier(v) && !Check::Assigned(6).accepts(v, ";"), "{v}");
            assert!(Check::Assigned(6).accepts(v, "\""), "{v} quoted");
        }
        for v in ["hunter22", "Summer2024", "q8ZtR2mXv9LpW4nK7sYb", "a-b_c"] {
            assert!(!is_compound_identifier(v), "{v}");
        }
    }

    #[test]
    fn random_letters_differ_from_camel_case() {
        assert!(letters_look_random("ZKOrbQvoHkWBlyzeFMMdHUGtBNLvNxBfIH"));
        assert!(!letters_look_random("AutoModelForSequenceClassification"));
    }
}
