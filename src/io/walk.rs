//! The walk of a directory operand: every file under it, in the order of their paths'
//! bytes, one directory's entries in memory at a time.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The files under a directory, depth first, sorted by the bytes of their paths, so
/// `X.jsonl` comes before `X/subagents/…` and the order never depends on the file system.
/// Only the entries of the directories on the way down are held. Symbolic links to
/// directories are not followed (they could lead back up, into a loop): they are handed
/// out like files, for the reader to say so.
#[derive(Debug)]
pub(super) struct Walk {
    /// The directories being listed, outermost first, with their entries still to visit.
    levels: Vec<std::vec::IntoIter<Entry>>,
}

#[derive(Debug)]
struct Entry {
    path: PathBuf,
    /// A directory to descend into (not a link to one).
    dir: bool,
}

impl Walk {
    /// The walk of `root` (followed even when it is a link: the user named it).
    pub(super) fn new(root: &Path) -> io::Result<Walk> {
        Ok(Walk { levels: vec![list(root)?.into_iter()] })
    }

    /// The next file, or a directory that could not be listed (opening it says why).
    pub(super) fn next(&mut self) -> Option<PathBuf> {
        loop {
            let level = self.levels.last_mut()?;
            let Some(entry) = level.next() else {
                self.levels.pop();
                continue;
            };
            if !entry.dir {
                return Some(entry.path);
            }
            match list(&entry.path) {
                Ok(entries) => self.levels.push(entries.into_iter()),
                Err(_) => return Some(entry.path),
            }
        }
    }
}

/// The entries of `dir`, sorted as their paths sort: a directory's name is compared with a
/// `/` after it, which sorts after `.` and every other character a name may hold but NUL.
fn list(dir: &Path) -> io::Result<Vec<Entry>> {
    let mut entries = Vec::new();
    for e in fs::read_dir(dir)? {
        let e = e?;
        let dir = e.file_type().is_ok_and(|t| t.is_dir());
        let mut key: OsString = e.file_name();
        if dir {
            key.push("/");
        }
        entries.push((key, Entry { path: e.path(), dir }));
    }
    entries.sort_unstable_by(|(a, _), (b, _)| a.as_bytes().cmp(b.as_bytes()));
    Ok(entries.into_iter().map(|(_, e)| e).collect())
}
