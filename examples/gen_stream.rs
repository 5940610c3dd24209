//! Deterministic generator of a synthetic Claude Code `--output-format stream-json` stream,
//! the input of `bench/run`.
//!
//! ```text
//! cargo run --release --example gen_stream -- --size-mb 200 --seed 1 > claude.jsonl
//! cargo run --release --example gen_stream -- --huge-line-mb 100 > huge.jsonl
//! ```
//!
//! One compact JSON object per line, raw UTF-8 (control characters escaped as JSON requires).
//! The same seed always gives the same bytes.
//!
//! Shape, repeated until `--size-mb` (1e6 bytes) is reached at a turn boundary:
//! - a session: one `system/init` line, then 25-60 turns, then one `result` line;
//! - a turn: the `stream_event` lines of one assistant message (`message_start`, a text block
//!   of 8-40 `text_delta`s, a `tool_use` block of 2-6 `input_json_delta`s, `message_delta`,
//!   `message_stop`), the full `assistant` line (text + Bash `tool_use`), and the `user` line
//!   with the `tool_result`, whose output Claude Code repeats in `tool_use_result.stdout`.
//!
//! Tool output size (bytes before escaping): 55 % log-uniform 100 B-2 KiB, 30 % 2-16 KiB,
//! 12 % 16-100 KiB, 3 % 100-300 KiB. Flavours: compiler output with ANSI colour (20 %), test
//! runner with ANSI and Unicode marks (15 %), ls/grep/cat of source with quotes and
//! backslashes (30 %), git log with multi-byte names, CJK and emoji (15 %), `\r` progress
//! bars (10 %), CRLF text (5 %), JSON dumps (5 %).
//!
//! `--huge-line-mb N` writes one session whose single `user` line carries a tool result of
//! about N MB instead. `--stats` prints lines and bytes per kind on stderr.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::process::ExitCode;

const MODEL: &str = "claude-sonnet-4-5-20250929";
const TOOLS: &[&str] = &[
    "Task",
    "Bash",
    "Glob",
    "Grep",
    "ExitPlanMode",
    "Read",
    "Edit",
    "Write",
    "NotebookEdit",
    "WebFetch",
    "TodoWrite",
    "WebSearch",
    "BashOutput",
    "KillShell",
    "SlashCommand",
];
const WORDS: &[&str] = &[
    "the", "a", "to", "of", "and", "in", "is", "it", "that", "for", "file", "test", "build", "error", "function",
    "module", "crate", "value", "return", "let", "fn", "struct", "impl", "use", "pub", "self", "match", "some", "none",
    "ok", "result", "string", "parse", "json", "line", "output", "input", "stream", "event", "token", "cargo", "run",
    "check", "fix", "update",
];
const UNI: &[&str] = &[
    "é",
    "ü",
    "ß",
    "ø",
    "ñ",
    "—",
    "…",
    "“",
    "”",
    "→",
    "✓",
    "✗",
    "•",
    "±",
    "µ",
    "λ",
    "修复",
    "错误",
    "日本語",
    "テスト",
    "한국어",
    "Привет",
    "Ελλάδα",
    "🚀",
    "🐛",
    "✨",
    "📦",
    "🔥",
];
const NAMES: &[&str] = &[
    "José Müller",
    "Zoë Ødegaard",
    "李雷",
    "田中 太郎",
    "Renée Dupré",
    "Søren Kierkegaard",
    "Alice",
    "Bob Smith",
    "Ğülşen Çelik",
    "Dmitrij Šostakovič",
];
const COMMANDS: &[&str] = &[
    "cargo build 2>&1",
    "cargo test --all 2>&1 | tail -n 200",
    "ls -la {path}",
    "grep -rn \"{word}\" src/",
    "git log --format='%h %an %s' -n 50",
    "cat {path}",
    "npm install",
    "python3 -m pytest -q",
];

/// splitmix64: small, fast, and good enough for synthetic data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `lo..=hi`.
    fn int(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }

    fn words(&mut self, lo: u64, hi: u64) -> String {
        let n = self.int(lo, hi);
        let mut s = String::new();
        for i in 0..n {
            if i > 0 {
                s.push(' ');
            }
            s.push_str(self.pick(WORDS));
        }
        s
    }

    fn path(&mut self) -> String {
        let n = self.int(1, 3);
        let dirs: Vec<&str> = (0..n).map(|_| self.pick(WORDS)).collect();
        format!("src/{}{}", dirs.join("/"), self.pick(&[".rs", ".py", ".ts", ".go", ".md"]))
    }

    fn hex(&mut self, n: usize) -> String {
        (0..n).map(|_| char::from(b"0123456789abcdef"[self.below(16)])).collect()
    }

    fn uuid(&mut self) -> String {
        let h = self.hex(32);
        format!("{}-{}-{}-{}-{}", &h[..8], &h[8..12], &h[12..16], &h[16..20], &h[20..])
    }

    fn b62(&mut self, n: usize) -> String {
        const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        (0..n).map(|_| char::from(A[self.below(A.len())])).collect()
    }
}

// ---------- pools of output lines per flavour, built once and sampled ----------

const E: &str = "\x1b";

fn pool_cargo(r: &mut Rng) -> Vec<String> {
    (0..1500)
        .map(|_| {
            let k = r.unit();
            if k < 0.35 {
                let (a, b, x, y) = (r.pick(WORDS), r.pick(WORDS), r.int(0, 9), r.int(0, 30));
                format!("   {E}[1m{E}[32m   Compiling{E}[0m {a}-{b} v0.{x}.{y}")
            } else if k < 0.6 {
                format!("{E}[1m{E}[33mwarning{E}[0m{E}[1m: unused variable: `{}`{E}[0m", r.pick(WORDS))
            } else if k < 0.8 {
                let (p, l, c) = (r.path(), r.int(1, 900), r.int(1, 80));
                format!("  {E}[1m{E}[38;5;12m-->{E}[0m {p}:{l}:{c}")
            } else {
                let (n, a, b, w) = (r.int(1, 999), r.pick(WORDS), r.pick(WORDS), r.words(1, 4));
                format!("{E}[1m{E}[38;5;12m{n:4} |{E}[0m     let {a} = {b}(\"{w}\");")
            }
        })
        .collect()
}

fn pool_tests(r: &mut Rng) -> Vec<String> {
    (0..1500)
        .map(|_| {
            let k = r.unit();
            if k < 0.7 {
                let (a, b, c) = (r.pick(WORDS), r.pick(WORDS), r.pick(WORDS));
                format!("test {a}::{b}_{c} ... {E}[32mok{E}[0m")
            } else if k < 0.8 {
                let (a, b) = (r.pick(WORDS), r.pick(WORDS));
                format!("test {a}::{b} ... {E}[31mFAILED{E}[0m")
            } else if k < 0.9 {
                let (m, w, u, ms) = (r.pick(&["✓", "✗", "•"]), r.words(2, 6), r.pick(UNI), r.int(0, 999));
                format!("  {m} {w} {u} ({ms} ms)")
            } else {
                let (p, l, c, a, b) = (r.path(), r.int(1, 500), r.int(1, 60), r.words(1, 3), r.words(1, 3));
                format!("thread 'main' panicked at {p}:{l}:{c}:\nassertion `left == right` failed\n  left: \"{a}\"\n right: \"{b}\"")
            }
        })
        .collect()
}

fn pool_source(r: &mut Rng) -> Vec<String> {
    (0..3000)
        .map(|_| {
            let k = r.unit();
            if k < 0.25 {
                let (size, day, min, p) = (r.int(0, 999_999), r.int(1, 31), r.int(0, 59), r.path());
                format!("-rw-r--r--  1 user user {size:7} Oct {day:2} 12:{min:02} {p}")
            } else if k < 0.55 {
                let (p, l, v, w, u) = (r.path(), r.int(1, 999), r.pick(WORDS), r.words(1, 5), r.pick(WORDS));
                format!("{p}:{l}:    let {v} = format!(\"{{}}\\\\{{}}\", \"{w}\", r\"C:\\Users\\{u}\");")
            } else if k < 0.85 {
                let (n, f, a, c) = (r.int(1, 9999), r.pick(WORDS), r.words(1, 6), r.words(2, 8));
                format!("{n:6}\t    {f}(\"{a}\")  // {c}")
            } else {
                let (a, u, b) = (r.words(2, 6), r.pick(UNI), r.words(1, 4));
                format!("    // {a} {u} {b}")
            }
        })
        .collect()
}

fn pool_git(r: &mut Rng) -> Vec<String> {
    (0..1500)
        .map(|_| {
            let k = r.unit();
            if k < 0.5 {
                let (h, u, w, v) = (r.hex(7), r.pick(UNI), r.words(2, 7), r.pick(UNI));
                format!("{h} {u} {w} {v}")
            } else if k < 0.8 {
                let (n, w) = (r.pick(NAMES), r.pick(WORDS));
                format!("Author: {n} <{w}@example.org>")
            } else {
                let (w, u) = (r.words(3, 10), r.pick(UNI));
                format!("    {w} {u}")
            }
        })
        .collect()
}

fn pool_progress(r: &mut Rng) -> Vec<String> {
    (0..600)
        .map(|_| {
            let name = r.pick(WORDS);
            let step = [5, 10, 20][r.below(3)];
            let mut s = String::new();
            for i in (0..=100).step_by(step) {
                let done = i / 5;
                s.push_str(&format!("\r{name} [{}{}] {i:3}%", "#".repeat(done), ".".repeat(20 - done)));
            }
            s + " done"
        })
        .collect()
}

fn pool_crlf(r: &mut Rng) -> Vec<String> {
    (0..1500)
        .map(|_| {
            let (w, u) = (r.words(3, 14), r.pick(UNI));
            format!("{w} {u}\r")
        })
        .collect()
}

fn pool_json(r: &mut Rng) -> Vec<String> {
    (0..1500)
        .map(|_| {
            let (k, j, w, u) = (r.pick(WORDS), r.pick(WORDS), r.words(1, 5), r.pick(UNI));
            let (n, b) = (r.int(0, 101_000) as i64 - 1000, r.pick(&["true", "false", "null"]));
            format!("  \"{k}\": {{\"{j}\": \"{w} {u}\", \"n\": {n}, \"ok\": {b}}},")
        })
        .collect()
}

type PoolFn = fn(&mut Rng) -> Vec<String>;

/// (share, name, pool builder).
const FLAVOURS: &[(f64, &str, PoolFn)] = &[
    (0.20, "cargo", pool_cargo),
    (0.15, "tests", pool_tests),
    (0.30, "source", pool_source),
    (0.15, "git", pool_git),
    (0.10, "progress", pool_progress),
    (0.05, "crlf", pool_crlf),
    (0.05, "json", pool_json),
];

/// (share, low bytes, high bytes) of tool output, log-uniform within a bucket.
const SIZES: &[(f64, f64, f64)] =
    &[(0.55, 100.0, 2048.0), (0.30, 2048.0, 16384.0), (0.12, 16384.0, 102400.0), (0.03, 102400.0, 307200.0)];

fn bucket(r: &mut Rng, shares: impl Iterator<Item = f64>) -> usize {
    let x = r.unit();
    let mut acc = 0.0;
    let mut last = 0;
    for (i, s) in shares.enumerate() {
        acc += s;
        last = i;
        if x < acc {
            return i;
        }
    }
    last
}

// ---------- a minimal compact JSON writer that keeps key order ----------

fn esc(buf: &mut Vec<u8>, s: &str) {
    serde_json::to_writer(&mut *buf, s).expect("writing to a Vec");
}

/// Writes one JSON object; keys appear in the order they are written.
struct Obj<'a> {
    buf: &'a mut Vec<u8>,
    first: bool,
}

impl<'a> Obj<'a> {
    fn open(buf: &'a mut Vec<u8>) -> Obj<'a> {
        buf.push(b'{');
        Obj { buf, first: true }
    }

    fn key(&mut self, k: &str) -> &mut Vec<u8> {
        if !std::mem::take(&mut self.first) {
            self.buf.push(b',');
        }
        esc(self.buf, k);
        self.buf.push(b':');
        self.buf
    }

    fn s(&mut self, k: &str, v: &str) -> &mut Self {
        esc(self.key(k), v);
        self
    }

    /// A value already in JSON form.
    fn raw(&mut self, k: &str, v: &str) -> &mut Self {
        self.key(k).extend_from_slice(v.as_bytes());
        self
    }

    fn n(&mut self, k: &str, v: impl std::fmt::Display) -> &mut Self {
        let b = self.key(k);
        write!(b, "{v}").expect("writing to a Vec");
        self
    }

    fn strs(&mut self, k: &str, v: &[&str]) -> &mut Self {
        let b = self.key(k);
        b.push(b'[');
        for (i, s) in v.iter().enumerate() {
            if i > 0 {
                b.push(b',');
            }
            esc(b, s);
        }
        b.push(b']');
        self
    }

    fn obj(&mut self, k: &str, f: impl FnOnce(&mut Obj<'_>)) -> &mut Self {
        let mut o = Obj::open(self.key(k));
        f(&mut o);
        o.close();
        self
    }

    fn close(self) {
        self.buf.push(b'}');
    }
}

/// Builds a whole object into `buf`.
fn object(buf: &mut Vec<u8>, f: impl FnOnce(&mut Obj<'_>)) {
    let mut o = Obj::open(buf);
    f(&mut o);
    o.close();
}

#[derive(Default)]
struct Kind {
    lines: u64,
    bytes: u64,
    max: u64,
}

struct Gen<W: Write> {
    rng: Rng,
    pools: Vec<(Vec<String>, Vec<usize>)>,
    out: W,
    line: Vec<u8>,
    bytes: u64,
    kinds: BTreeMap<String, Kind>,
}

impl<W: Write> Gen<W> {
    fn new(seed: u64, out: W) -> Gen<W> {
        let pools = FLAVOURS
            .iter()
            .enumerate()
            .map(|(i, (_, _, build))| {
                let lines = build(&mut Rng(seed.wrapping_mul(1000).wrapping_add(i as u64 + 1)));
                let lens = lines.iter().map(|l| l.len() + 1).collect();
                (lines, lens)
            })
            .collect();
        Gen { rng: Rng(seed), pools, out, line: Vec::new(), bytes: 0, kinds: BTreeMap::new() }
    }

    /// Writes the line built by `f` and counts it under `kind`.
    fn emit(&mut self, kind: &str, f: impl FnOnce(&mut Vec<u8>)) -> io::Result<()> {
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        f(&mut line);
        line.push(b'\n');
        self.out.write_all(&line)?;
        let n = line.len() as u64;
        self.bytes += n;
        let k = self.kinds.entry(kind.to_string()).or_default();
        k.lines += 1;
        k.bytes += n;
        k.max = k.max.max(n);
        self.line = line;
        Ok(())
    }

    /// Tool output of about `target` bytes, in one flavour; returns it and the flavour name.
    fn output_text(&mut self, target: usize) -> (String, &'static str) {
        let f = bucket(&mut self.rng, FLAVOURS.iter().map(|f| f.0));
        let (lines, lens) = &self.pools[f];
        let mut text = String::with_capacity(target + 512);
        let mut n = 0;
        while n < target {
            let i = self.rng.below(lines.len());
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&lines[i]);
            n += lens[i];
        }
        (text, FLAVOURS[f].1)
    }

    fn session(&mut self, sid: &str) -> io::Result<()> {
        let uuid = self.rng.uuid();
        self.emit("system", |b| {
            object(b, |o| {
                o.s("type", "system").s("subtype", "init").s("cwd", "/home/user/project").s("session_id", sid);
                o.strs("tools", TOOLS).raw("mcp_servers", "[]").s("model", MODEL).s("permissionMode", "default");
                o.strs("slash_commands", &["compact", "context", "cost", "init", "review"]);
                o.s("apiKeySource", "none").s("output_style", "default").strs("agents", &["general-purpose"]);
                o.s("uuid", &uuid);
            })
        })
    }

    /// One `stream_event` line around the event written by `f`.
    fn stream_event(&mut self, sid: &str, f: impl FnOnce(&mut Obj<'_>)) -> io::Result<()> {
        let uuid = self.rng.uuid();
        self.emit("stream_event", |b| {
            object(b, |o| {
                o.s("type", "stream_event").obj("event", f).s("session_id", sid);
                o.raw("parent_tool_use_id", "null").s("uuid", &uuid);
            })
        })
    }

    fn turn(&mut self, sid: &str) -> io::Result<()> {
        let r = &mut self.rng;
        let mid = format!("msg_01{}", r.b62(22));
        let tid = format!("toolu_01{}", r.b62(22));
        let (inp, cw, cr, outp) = (r.int(1, 50), r.int(0, 5000), r.int(0, 90_000), r.int(1, 600));
        let usage = |o: &mut Obj<'_>| {
            o.n("input_tokens", inp).n("cache_creation_input_tokens", cw).n("cache_read_input_tokens", cr);
            o.n("output_tokens", outp).s("service_tier", "standard");
        };
        // The message, with its content written by `content`.
        let message = |o: &mut Obj<'_>, content: &dyn Fn(&mut Vec<u8>)| {
            o.s("model", MODEL).s("id", &mid).s("type", "message").s("role", "assistant");
            content(o.key("content"));
            o.raw("stop_reason", "null").raw("stop_sequence", "null").obj("usage", usage);
        };
        self.stream_event(sid, |o| {
            o.s("type", "message_start").obj("message", |m| message(m, &|b| b.extend_from_slice(b"[]")));
        })?;
        self.stream_event(sid, |o| {
            o.s("type", "content_block_start").n("index", 0).obj("content_block", |c| {
                c.s("type", "text").s("text", "");
            });
        })?;
        let mut text = String::new();
        for _ in 0..self.rng.int(8, 40) {
            let w = self.rng.words(1, 6);
            let cut = self.rng.int(1, 40) as usize;
            let mut s = format!(" {}", &w[..cut.min(w.len())]);
            if self.rng.unit() < 0.1 {
                s.push(' ');
                s.push_str(self.rng.pick(UNI));
            }
            text.push_str(&s);
            self.stream_event(sid, |o| {
                o.s("type", "content_block_delta").n("index", 0).obj("delta", |d| {
                    d.s("type", "text_delta").s("text", &s);
                });
            })?;
        }
        self.stream_event(sid, |o| {
            o.s("type", "content_block_stop").n("index", 0);
        })?;
        let r = &mut self.rng;
        let cmd = r.pick(COMMANDS).replace("{path}", &r.path()).replace("{word}", r.pick(WORDS));
        let description = r.words(2, 6);
        let mut input = Vec::new();
        object(&mut input, |o| {
            o.s("command", &cmd).s("description", &description);
        });
        let input = String::from_utf8(input).expect("JSON is UTF-8");
        self.stream_event(sid, |o| {
            o.s("type", "content_block_start").n("index", 1).obj("content_block", |c| {
                c.s("type", "tool_use").s("id", &tid).s("name", "Bash").raw("input", "{}");
            });
        })?;
        let pieces = self.rng.int(2, 6) as usize;
        let step = input.len() / pieces + 1; // the input is ASCII, so any byte cut is a char cut
        for chunk in input.as_bytes().chunks(step) {
            let part = std::str::from_utf8(chunk).expect("ASCII");
            self.stream_event(sid, |o| {
                o.s("type", "content_block_delta").n("index", 1).obj("delta", |d| {
                    d.s("type", "input_json_delta").s("partial_json", part);
                });
            })?;
        }
        self.stream_event(sid, |o| {
            o.s("type", "content_block_stop").n("index", 1);
        })?;
        self.stream_event(sid, |o| {
            o.s("type", "message_delta").obj("delta", |d| {
                d.s("stop_reason", "tool_use").raw("stop_sequence", "null");
            });
            o.obj("usage", |u| {
                u.n("output_tokens", outp);
            });
        })?;
        self.stream_event(sid, |o| {
            o.s("type", "message_stop");
        })?;
        let uuid = self.rng.uuid();
        let text = text.trim();
        self.emit("assistant", |b| {
            object(b, |o| {
                o.s("type", "assistant").obj("message", |m| {
                    message(m, &|b| {
                        b.push(b'[');
                        object(b, |t| {
                            t.s("type", "text").s("text", text);
                        });
                        b.push(b',');
                        object(b, |t| {
                            t.s("type", "tool_use").s("id", &tid).s("name", "Bash").raw("input", &input);
                        });
                        b.push(b']');
                    })
                });
                o.raw("parent_tool_use_id", "null").s("session_id", sid).s("uuid", &uuid);
            })
        })?;
        let size = SIZES[bucket(&mut self.rng, SIZES.iter().map(|s| s.0))];
        let target = (size.1.ln() + self.rng.unit() * (size.2.ln() - size.1.ln())).exp() as usize;
        let (output, flavour) = self.output_text(target);
        let is_error = self.rng.unit() < 0.08;
        let uuid = self.rng.uuid();
        self.tool_result(sid, &tid, &output, is_error, &uuid, Some(&format!("user/tool_result/{flavour}")))
    }

    /// The `user` line carrying a tool result; with `kind`, also the `tool_use_result` copy.
    fn tool_result(
        &mut self,
        sid: &str,
        tid: &str,
        output: &str,
        is_error: bool,
        uuid: &str,
        kind: Option<&str>,
    ) -> io::Result<()> {
        let mut escaped = Vec::with_capacity(output.len() + output.len() / 8 + 2);
        esc(&mut escaped, output);
        let escaped = std::str::from_utf8(&escaped).expect("JSON is UTF-8");
        self.emit(kind.unwrap_or("user/huge"), |b| {
            object(b, |o| {
                o.s("type", "user").obj("message", |m| {
                    m.s("role", "user");
                    let b = m.key("content");
                    b.push(b'[');
                    object(b, |t| {
                        t.s("tool_use_id", tid)
                            .s("type", "tool_result")
                            .raw("content", escaped)
                            .raw("is_error", &is_error.to_string());
                    });
                    b.push(b']');
                });
                o.raw("parent_tool_use_id", "null").s("session_id", sid).s("uuid", uuid);
                if kind.is_some() {
                    o.obj("tool_use_result", |t| {
                        t.raw("stdout", escaped).s("stderr", "").raw("interrupted", "false").raw("isImage", "false");
                    });
                }
            })
        })
    }

    fn result(&mut self, sid: &str, turns: u64) -> io::Result<()> {
        let r = &mut self.rng;
        let ok = r.unit() < 0.85;
        let (d, da) = (r.int(1000, 900_000), r.int(1000, 900_000));
        let text = format!("{} {}", r.words(10, 60), r.pick(UNI));
        let cost = 0.01 + r.unit() * 4.99;
        let (i, cw, cr, o) = (r.int(10, 9999), r.int(0, 99_999), r.int(0, 999_999), r.int(10, 99_999));
        let uuid = r.uuid();
        self.emit("result", |b| {
            object(b, |x| {
                x.s("type", "result").s("subtype", if ok { "success" } else { "error_max_turns" }).n("is_error", !ok);
                x.n("duration_ms", d).n("duration_api_ms", da).n("num_turns", turns).s("result", &text);
                x.s("session_id", sid).n("total_cost_usd", format!("{cost:.6}"));
                x.obj("usage", |u| {
                    u.n("input_tokens", i).n("cache_creation_input_tokens", cw).n("cache_read_input_tokens", cr);
                    u.n("output_tokens", o).raw("server_tool_use", r#"{"web_search_requests":0}"#);
                    u.s("service_tier", "standard");
                });
                x.raw("modelUsage", "{}").raw("permission_denials", "[]").s("uuid", &uuid);
            })
        })
    }

    fn run(&mut self, size: u64) -> io::Result<()> {
        while self.bytes < size {
            let sid = self.rng.uuid();
            self.session(&sid)?;
            let n = self.rng.int(25, 60);
            let mut done = 0;
            while done < n {
                self.turn(&sid)?;
                done += 1;
                if self.bytes >= size {
                    break;
                }
            }
            self.result(&sid, done)?;
        }
        Ok(())
    }

    fn huge(&mut self, size: u64) -> io::Result<()> {
        let sid = self.rng.uuid();
        self.session(&sid)?;
        let tid = format!("toolu_01{}", self.rng.b62(22));
        let (output, _) = self.output_text(size as usize);
        let uuid = self.rng.uuid();
        self.tool_result(&sid, &tid, &output, false, &uuid, None)?;
        self.result(&sid, 1)
    }

    fn print_stats(&self) {
        let total: u64 = self.kinds.values().map(|k| k.lines).sum();
        eprintln!("{:<28} {:>10} {:>7} {:>14} {:>7} {:>12}", "kind", "lines", "lines%", "bytes", "bytes%", "max_line");
        for (name, k) in &self.kinds {
            let lp = 100.0 * k.lines as f64 / total.max(1) as f64;
            let bp = 100.0 * k.bytes as f64 / self.bytes.max(1) as f64;
            eprintln!("{name:<28} {:>10} {lp:>6.2}% {:>14} {bp:>6.2}% {:>12}", k.lines, k.bytes, k.max);
        }
        eprintln!("{:<28} {total:>10} {:>7} {:>14}", "total", "", self.bytes);
    }
}

const USAGE: &str = "usage: gen_stream [--size-mb N] [--huge-line-mb N] [--seed S] [--stats] > out.jsonl";

struct Opts {
    size_mb: f64,
    huge_mb: Option<f64>,
    seed: u64,
    stats: bool,
}

/// The value after option `name`, parsed.
fn value<T: std::str::FromStr>(args: &mut impl Iterator<Item = String>, name: &str) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    let v = args.next().ok_or_else(|| format!("{name} needs a value"))?;
    v.parse().map_err(|e| format!("{name} {v:?}: {e}"))
}

/// The options, or `None` for `--help`.
fn parse_args() -> Result<Option<Opts>, String> {
    let mut o = Opts { size_mb: 50.0, huge_mb: None, seed: 1, stats: false };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--size-mb" => o.size_mb = value(&mut args, &a)?,
            "--huge-line-mb" => o.huge_mb = Some(value(&mut args, &a)?),
            "--seed" => o.seed = value(&mut args, &a)?,
            "--stats" => o.stats = true,
            "-h" | "--help" => return Ok(None),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if !(o.size_mb >= 0.0 && o.huge_mb.unwrap_or(0.0) >= 0.0) {
        return Err("sizes must be non-negative numbers".into());
    }
    Ok(Some(o))
}

fn main() -> ExitCode {
    let Opts { size_mb, huge_mb, seed, stats } = match parse_args() {
        Ok(Some(o)) => o,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("gen_stream: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let stdout = io::stdout().lock();
    let mut g = Gen::new(seed, io::BufWriter::with_capacity(1 << 20, stdout));
    let done = match huge_mb {
        Some(mb) => g.huge((mb * 1e6) as u64),
        None => g.run((size_mb * 1e6) as u64),
    }
    .and_then(|()| g.out.flush());
    match done {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gen_stream: {e}");
            return ExitCode::from(2);
        }
    }
    if stats {
        g.print_stats();
    }
    ExitCode::SUCCESS
}
