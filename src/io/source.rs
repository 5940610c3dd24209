//! Where input comes from: stdin, files, bytes in memory, or a list of paths read lazily
//! (`--files-from`), and why a source could not be read.

use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use super::input::{is_regular, Waiting};
use super::{decoding, Input};

/// Where input comes from: stdin (`-` or no operands) or files, in order.
#[derive(Debug, Clone)]
pub enum Source {
    /// Standard input.
    Stdin,
    /// A file.
    File(PathBuf),
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
        let file = |f: File| if is_regular(&f) { decoding(f) } else { decoding(Waiting::new(f)) };
        match self {
            // Read as a file of its own, not through std's buffer, which `poll` cannot see.
            Source::Stdin => match io::stdin().as_fd().try_clone_to_owned() {
                Ok(fd) => file(File::from(fd)),
                Err(_) => decoding(io::stdin()),
            },
            Source::File(p) => file(File::open(p)?),
            Source::Bytes(b) => decoding(io::Cursor::new(std::sync::Arc::clone(b))),
        }
    }

    /// False when opening and reading the source never waits for a writer (a regular file,
    /// bytes in memory), so output need not be flushed before it is opened.
    pub fn may_wait(&self) -> bool {
        match self {
            Source::Stdin => true,
            Source::File(p) => !std::fs::metadata(p).is_ok_and(|m| m.is_file()),
            Source::Bytes(_) => false,
        }
    }

    /// A name for messages.
    pub fn name(&self) -> String {
        match self {
            Source::Stdin => "<stdin>".into(),
            Source::File(p) => p.display().to_string(),
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
}

impl Sources {
    /// The operands; none means stdin.
    pub fn from_operands(paths: &[PathBuf]) -> Sources {
        Sources { given: Source::from_operands(paths), list: None }
    }

    /// The paths listed in `list` (`-` is stdin), one per line, or NUL-separated with `nul`.
    pub fn listed_in(list: &Path, nul: bool) -> Sources {
        let list = if list == Path::new("-") { Source::Stdin } else { Source::File(list.to_path_buf()) };
        Sources { given: Vec::new(), list: Some((list, if nul { 0 } else { b'\n' })) }
    }

    /// True when the input may be several files, so provenance names the file of each line.
    pub fn names_files(&self) -> bool {
        self.list.is_some() || self.given.len() > 1
    }

    /// The sources in order; an error reading the list itself ends the iteration with it.
    pub fn iter(&self) -> io::Result<SourceIter> {
        let list = match &self.list {
            Some((source, end)) => {
                Some(List { reader: io::BufReader::new(source.open()?), end: *end, name: source.name() })
            }
            None => None,
        };
        Ok(SourceIter { given: self.given.clone().into_iter(), list, path: Vec::new() })
    }
}

impl From<Vec<Source>> for Sources {
    fn from(given: Vec<Source>) -> Sources {
        Sources { given, list: None }
    }
}

/// The sources of a [`Sources`], in order.
pub struct SourceIter {
    given: std::vec::IntoIter<Source>,
    list: Option<List>,
    path: Vec<u8>,
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
        use std::io::BufRead;
        use std::os::unix::ffi::OsStrExt;
        if let Some(s) = self.given.next() {
            return Some(Ok(s));
        }
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
