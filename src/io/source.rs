//! Where input comes from: stdin, files, the files under a directory, bytes in memory, or a
//! list of paths read lazily (`--files-from`); which files a filter reads ([`Formats`]: the
//! files found under a directory it does not recognise are skipped, and files that are not
//! lines are decoded into lines); and why a source could not be read.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use super::input::{regular_size, Waiting};
use super::{decoding, without_bom, Input, Place};

/// Where input comes from: stdin (`-` or no operands) or files, in order.
#[derive(Debug, Clone)]
pub enum Source {
    /// Standard input.
    Stdin,
    /// A file named by the user: read whatever it holds (what is not understood is kept).
    /// A directory is walked: its files come as [`Source::Found`].
    File(PathBuf),
    /// A file found in a directory walk: read only when the filter recognises it.
    Found(PathBuf),
    /// Bytes already in memory (for embedding the filters, and for the fuzz targets).
    Bytes(std::sync::Arc<[u8]>),
}

impl Source {
    /// The operands as sources; none means stdin.
    pub fn from_operands(paths: &[PathBuf]) -> Vec<Source> {
        if paths.is_empty() {
            return vec![Source::Stdin];
        }
        paths.iter().map(|p| if p == Path::new("-") { Source::Stdin } else { Source::File(p.clone()) }).collect()
    }

    /// Opens the source, decoding UTF-16 when it starts with a BOM.
    pub fn open(&self) -> io::Result<Box<dyn Input>> {
        let file = |f: File| if regular_size(&f).is_some() { decoding(f) } else { decoding(Waiting::new(f)) };
        match self {
            // Read as a file of its own, not through std's buffer, which `poll` cannot see.
            Source::Stdin => match io::stdin().as_fd().try_clone_to_owned() {
                Ok(fd) => file(File::from(fd)),
                Err(_) => decoding(io::stdin()),
            },
            Source::File(p) | Source::Found(p) => file(File::open(p)?),
            Source::Bytes(b) => decoding(io::Cursor::new(std::sync::Arc::clone(b))),
        }
    }

    /// False when opening and reading the source never waits for a writer (a regular file,
    /// bytes in memory), so output need not be flushed before it is opened.
    pub fn may_wait(&self) -> bool {
        match self {
            Source::Stdin => true,
            Source::File(p) => !std::fs::metadata(p).is_ok_and(|m| m.is_file()),
            Source::Found(_) | Source::Bytes(_) => false,
        }
    }

    /// A name for messages.
    pub fn name(&self) -> String {
        match self {
            Source::Stdin => "<stdin>".into(),
            Source::File(p) | Source::Found(p) => p.display().to_string(),
            Source::Bytes(_) => "<memory>".into(),
        }
    }
}

/// The inputs of one run: the operands in order, or the paths a list names
/// (`--files-from`), read one at a time so a list of any length takes no more memory than
/// its longest path.
#[derive(Debug, Clone)]
pub struct Sources {
    given: Vec<Source>,
    /// The list, and what ends each of its paths (`\n`, or NUL with `-0`).
    list: Option<(Source, u8)>,
    /// What the filter reads.
    formats: &'static dyn Formats,
}

/// What a filter reads: which files found in a directory are its input, and how files that
/// are not lines (a database, a JSON document) become lines. The filter gives it; the walk
/// and the input loop know no format.
pub trait Formats: Sync + std::fmt::Debug {
    /// A reader of the lines of the file at `path`, when its first bytes (`head`, up to
    /// [`HEAD_BYTES`]) say it is a file of another kind the filter reads.
    fn decode(&self, path: &Path, head: &[u8]) -> Option<io::Result<Decoded>>;
    /// Whether a file found in a directory whose first non-blank line is `line` is input.
    fn claims(&self, line: &str) -> bool;
    /// Whether the file at `path` is read as part of another file its decoder reads (a
    /// droid session's settings): found in a directory, it is then neither read on its own
    /// nor skipped; named, it is skipped (and said to be), not read as lines of its own.
    fn read_with_another(&self, _path: &Path) -> bool {
        false
    }
    /// What gives the lines of a document read from input that is not a file (a pipe:
    /// `opencode export … | normalize`), when it is one the filter reads: asked only of
    /// input whose first line is `{` alone, as a JSON document printed indented begins and
    /// no line of JSON does, with all of it, up to [`DOCUMENT_BYTES`]. Without one (the
    /// default), such input is lines as it comes, never read ahead.
    fn text_decoder(&self) -> Option<DecodeText> {
        None
    }
}

/// The lines of a whole document read from a pipe, when it is one ([`Formats::text_decoder`]).
pub type DecodeText = fn(&[u8]) -> Option<Decoded>;

/// A file of another kind ([`Formats::decode`]), as lines.
pub struct Decoded {
    /// Its lines.
    pub lines: Box<dyn Input>,
    /// The sessions it holds, when its format says which are part of another (see
    /// [`Place`]).
    pub sessions: Vec<Place>,
}

impl Decoded {
    /// Lines that hold no session another waits for.
    pub fn lines(lines: Box<dyn Input>) -> Decoded {
        Decoded { lines, sessions: Vec::new() }
    }
}

/// How much of a file [`Formats::decode`] is shown.
pub const HEAD_BYTES: usize = 64 * 1024;
/// The largest document read whole (a thousand times the largest session document seen).
pub const DOCUMENT_BYTES: u64 = 64 * 1024 * 1024;
/// How much of a found file is read for its first line; a longer first line is taken for
/// input when it starts as a JSON object does.
const FIRST_LINE_BYTES: usize = 1024 * 1024;
/// How many whole lines after a first line not claimed may still make a found file input.
const LOOK_AHEAD: usize = 8;

/// JSON lines: the files found in a directory are read when their first non-blank line is
/// a JSON object, and no file is decoded.
#[derive(Debug)]
pub struct JsonLines;

impl Formats for JsonLines {
    fn decode(&self, _: &Path, _: &[u8]) -> Option<io::Result<Decoded>> {
        None
    }

    fn claims(&self, line: &str) -> bool {
        matches!(serde_json::from_str::<serde_json::Value>(line), Ok(serde_json::Value::Object(_)))
    }
}

/// A source opened: its lines, or why a file found in a directory is not read.
pub enum Opened {
    /// The lines.
    Lines(Box<dyn Input>),
    /// The lines of a file holding sessions, by their ids.
    Sessions(Box<dyn Input>, Vec<String>),
    /// Not read yet: a session of the file (its `ids`) is part of session `parent`, whose
    /// file has not been read.
    Waits {
        /// The sessions the file holds.
        ids: Vec<String>,
        /// The session it waits for.
        parent: String,
    },
    /// Not read, and why: not a file the filter recognises.
    Skipped(&'static str),
    /// Not read on its own: it is read with another file ([`Formats::read_with_another`]).
    WithAnother,
}

impl Sources {
    /// The operands; none means stdin.
    pub fn from_operands(paths: &[PathBuf]) -> Sources {
        Sources { given: Source::from_operands(paths), list: None, formats: &JsonLines }
    }

    /// The paths listed in `list` (`-` is stdin), one per line, or NUL-separated with `nul`.
    pub fn listed_in(list: &Path, nul: bool) -> Sources {
        let list = if list == Path::new("-") { Source::Stdin } else { Source::File(list.to_path_buf()) };
        Sources { given: Vec::new(), list: Some((list, if nul { 0 } else { b'\n' })), formats: &JsonLines }
    }

    /// The same inputs, read as `formats` says.
    pub fn reading(self, formats: &'static dyn Formats) -> Sources {
        Sources { formats, ..self }
    }

    /// True when the input may be several files, so provenance names the file of each line.
    pub fn names_files(&self) -> bool {
        self.list.is_some()
            || self.given.len() > 1
            || self.given.iter().any(|s| matches!(s, Source::File(p) if p.is_dir()))
    }

    /// Opens `source`: a file the filter decodes becomes its lines; a file found in a
    /// directory is read only when the filter recognises its first line (or decodes it); a
    /// file that is part of another session is read only when `may_read` says so of that
    /// session.
    pub fn open(&self, source: &Source, may_read: &dyn Fn(&str) -> bool) -> io::Result<Opened> {
        let (Source::File(path) | Source::Found(path)) = source else { return self.stream(source.open()?) };
        let found = matches!(source, Source::Found(_));
        if found && std::fs::symlink_metadata(path)?.is_symlink() && path.is_dir() {
            return Ok(Opened::Skipped("a symbolic link to a directory, not followed"));
        }
        if path.is_dir() {
            // A directory the walk could not list: listing it again says why.
            std::fs::read_dir(path)?;
            return Err(io::Error::other("the directory could not be listed"));
        }
        if self.formats.read_with_another(path) {
            // Named, it is said to be skipped: its lines are not another session's.
            return Ok(if found {
                Opened::WithAnother
            } else {
                Opened::Skipped("read with the session file beside it")
            });
        }
        // Opening a FIFO waits for a writer, which a walk must not do (a named one is
        // read: the user may have named a pipe, as `<(cmd)` does). Devices are skipped too.
        if found && !std::fs::metadata(path)?.is_file() {
            return Ok(Opened::Skipped("not a regular file"));
        }
        let file = File::open(path)?;
        let Some(size) = regular_size(&file) else {
            return match found {
                true => Ok(Opened::Skipped("not a regular file")),
                false => self.stream(source.open()?),
            };
        };
        // Formats are told by their text, whatever its encoding: a document saved as
        // UTF-16 or with a UTF-8 byte order mark (as Windows tools write) is the same one.
        let mut input = decoding(file)?;
        // Read in one go: most session files are smaller than the head.
        let mut head = Vec::with_capacity(size.min(HEAD_BYTES as u64) as usize);
        (&mut input).take(HEAD_BYTES as u64).read_to_end(&mut head)?;
        let marks = head.len() - without_bom(&head).len();
        head.drain(..marks);
        let (lines, sessions) = match self.formats.decode(path, &head) {
            Some(decoded) => {
                let decoded = decoded?;
                (decoded.lines, decoded.sessions)
            }
            None => {
                if found {
                    if let Some(why) = self.refuses(&mut input, &mut head)? {
                        return Ok(Opened::Skipped(why));
                    }
                }
                (Box::new(io::Cursor::new(head).chain(input)) as Box<dyn Input>, Vec::new())
            }
        };
        if sessions.is_empty() {
            return Ok(Opened::Lines(lines));
        }
        // A session that is part of one neither read nor in this file waits for it.
        let ids: Vec<String> = sessions.iter().map(|s| s.id.clone()).collect();
        let parent = sessions.into_iter().filter_map(|s| s.parent).find(|p| !may_read(p) && !ids.contains(p));
        Ok(match parent {
            Some(parent) => Opened::Waits { ids, parent },
            None => Opened::Sessions(lines, ids),
        })
    }

    /// Input that is not a file: its lines as they come, unless its first line is `{`
    /// alone and the whole is a document the filter decodes ([`Formats::text_decoder`]).
    /// Only such input is read ahead (its first line, up to [`HEAD_BYTES`], first), so a
    /// live stream's lines are not held back.
    fn stream(&self, mut input: Box<dyn Input>) -> io::Result<Opened> {
        let Some(decode) = self.formats.text_decoder() else { return Ok(Opened::Lines(input)) };
        let mut head: Vec<u8> = Vec::new();
        let mut chunk = [0u8; 4096];
        let opens_a_document = loop {
            let text = without_bom(&head);
            let start = text.iter().position(|b| !b.is_ascii_whitespace());
            if let Some(s) = start {
                if let Some(end) = memchr::memchr(b'\n', &text[s..]) {
                    break text[s..s + end].trim_ascii() == b"{";
                }
            }
            // A long first line is no document's `{`: it goes on as lines, bounded as any.
            if head.len() >= HEAD_BYTES {
                break false;
            }
            match input.read(&mut chunk) {
                Ok(0) => break false,
                Ok(n) => head.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        };
        if opens_a_document {
            (&mut input).take(DOCUMENT_BYTES + 1 - head.len() as u64).read_to_end(&mut head)?;
            if head.len() as u64 <= DOCUMENT_BYTES {
                if let Some(decoded) = decode(without_bom(&head)) {
                    let ids = decoded.sessions.into_iter().map(|s| s.id).collect();
                    return Ok(Opened::Sessions(decoded.lines, ids));
                }
            }
        }
        Ok(Opened::Lines(Box::new(io::Cursor::new(head).chain(input))))
    }

    /// Why a found file is not input, reading more of it while its first line goes on.
    fn refuses(&self, file: &mut impl Read, head: &mut Vec<u8>) -> io::Result<Option<&'static str>> {
        loop {
            let start = head.iter().position(|b| !b.is_ascii_whitespace());
            if let Some(start) = start {
                if let Some(end) = memchr::memchr(b'\n', &head[start..]) {
                    let first = &head[start..start + end];
                    return Ok(if self.claims(first) || self.claims_a_line_after(&head[start + end + 1..]) {
                        None
                    } else if memchr::memchr(0, first).is_some() {
                        Some("binary")
                    } else {
                        Some("not a file of a format it reads")
                    });
                }
            }
            let before = head.len();
            if before >= FIRST_LINE_BYTES {
                return Ok((head.get(start.unwrap_or(0)) != Some(&b'{')).then_some("not a file of a format it reads"));
            }
            file.take(HEAD_BYTES as u64).read_to_end(head)?;
            if head.len() == before {
                // The file ends within its first line.
                return Ok(match start {
                    None => Some("empty"),
                    Some(s) => match std::str::from_utf8(&head[s..]) {
                        Ok(line) if self.formats.claims(line.trim_end()) => None,
                        _ => Some("not a file of a format it reads"),
                    },
                });
            }
        }
    }

    /// Whether the line `line` is of a format the filter reads.
    fn claims(&self, line: &[u8]) -> bool {
        std::str::from_utf8(line).is_ok_and(|line| self.formats.claims(line.trim_end()))
    }

    /// Whether one of the first few whole lines of `rest` (what the head holds after a
    /// first line not claimed) is claimed: a damaged first line (a write cut short, stray
    /// bytes) leaves the records after it, which are read (the damaged line kept raw).
    fn claims_a_line_after(&self, rest: &[u8]) -> bool {
        let whole = &rest[..memchr::memrchr(b'\n', rest).map_or(0, |i| i + 1)];
        whole.split(|&b| b == b'\n').filter(|l| !l.trim_ascii().is_empty()).take(LOOK_AHEAD).any(|l| self.claims(l))
    }

    /// The sources in order; an error reading the list itself ends the iteration with it.
    pub fn iter(&self) -> io::Result<SourceIter> {
        let list = match &self.list {
            Some((source, end)) => {
                Some(List { reader: io::BufReader::new(source.open()?), end: *end, name: source.name() })
            }
            None => None,
        };
        Ok(SourceIter { given: self.given.clone().into_iter(), list, path: Vec::new(), walk: None })
    }
}

impl From<Vec<Source>> for Sources {
    fn from(given: Vec<Source>) -> Sources {
        Sources { given, list: None, formats: &JsonLines }
    }
}

/// The sources of a [`Sources`], in order.
pub struct SourceIter {
    given: std::vec::IntoIter<Source>,
    list: Option<List>,
    path: Vec<u8>,
    /// The directory operand being walked.
    walk: Option<super::walk::Walk>,
}

/// A list of paths being read: the reader, what ends each path, and the list's name.
struct List {
    reader: io::BufReader<Box<dyn Input>>,
    end: u8,
    name: String,
}

impl Iterator for SourceIter {
    type Item = io::Result<Source>;

    fn next(&mut self) -> Option<io::Result<Source>> {
        loop {
            if let Some(path) = self.walk.as_mut().and_then(super::walk::Walk::next) {
                return Some(Ok(Source::Found(path)));
            }
            self.walk = None;
            let next = match self.given.next() {
                Some(s) => s,
                None => match self.listed()? {
                    Ok(s) => s,
                    Err(e) => return Some(Err(e)),
                },
            };
            match &next {
                Source::File(p) if p.is_dir() => match super::walk::Walk::new(p) {
                    Ok(walk) => self.walk = Some(walk),
                    // Opening it says why it could not be listed.
                    Err(_) => return Some(Ok(next)),
                },
                _ => return Some(Ok(next)),
            }
        }
    }
}

impl SourceIter {
    /// The next path of the list, if there is one.
    fn listed(&mut self) -> Option<io::Result<Source>> {
        use std::io::BufRead;
        use std::os::unix::ffi::OsStrExt;
        let List { reader, end, name } = self.list.as_mut()?;
        loop {
            self.path.clear();
            match reader.read_until(*end, &mut self.path) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(e) => return Some(Err(io::Error::new(e.kind(), format!("reading the list {name}: {e}")))),
            }
            if self.path.last() == Some(end) {
                self.path.pop();
            }
            // `find -print` lists end with a newline; a blank entry names no file.
            if !self.path.is_empty() {
                let path = Path::new(std::ffi::OsStr::from_bytes(&self.path));
                return Some(Ok(Source::File(path.to_path_buf())));
            }
        }
    }
}

/// Why a source gave less than all its lines: it could not be opened, or reading it failed
/// part way. Either is said and counted by the caller, and the next source is read.
#[derive(Debug)]
pub struct Unreadable {
    /// The source, as named in messages.
    pub name: String,
    /// What went wrong.
    pub error: io::Error,
    /// True when it failed part way, after some of its lines were read.
    pub part_way: bool,
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.part_way {
            false => write!(f, "cannot read {}: {}", self.name, self.error),
            true => write!(f, "reading {} stopped part way: {}", self.name, self.error),
        }
    }
}
