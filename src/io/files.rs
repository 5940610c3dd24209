//! Where a line of the whole input is, when the input is several files read as one: its
//! file and that file's own line number, as provenance (`rawRef`) and diagnostics cite it.

use std::sync::Arc;

/// The input files, each by the number of the line of the whole input before its first.
/// Empty when the input names no files (stdin, or one file given alone).
#[derive(Debug, Default)]
pub struct Files(Vec<(u64, Arc<str>)>);

impl Files {
    /// The file `name` begins after line `before` of the whole input.
    pub fn begin(&mut self, before: u64, name: &str) {
        self.0.push((before, Arc::from(name)));
    }

    /// The line of the whole input before the last file's first (0 before any file).
    pub fn before_last(&self) -> u64 {
        self.0.last().map_or(0, |(before, _)| *before)
    }

    /// The file holding line `n` of the whole input, and the line before that file's first.
    pub fn of(&self, n: u64) -> Option<(&Arc<str>, u64)> {
        let i = self.0.partition_point(|(before, _)| *before < n).checked_sub(1)?;
        let (before, name) = &self.0[i];
        Some((name, *before))
    }

    /// Lines `first` to `last` of the whole input (all in one file), for a person:
    /// `line 7` or `lines 7-9`, after the file's name when the input names files.
    pub fn cite(&self, first: u64, last: u64) -> String {
        let (file, before) = self.of(last).map_or((None, 0), |(f, b)| (Some(f), b));
        let (first, last) = (first.saturating_sub(before).max(1), last - before);
        let lines = if first == last { format!("line {last}") } else { format!("lines {first}-{last}") };
        match file {
            Some(file) => format!("{file}: {lines}"),
            None => lines,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_cited_by_its_file_and_its_number_there() {
        let mut files = Files::default();
        assert_eq!(files.cite(4, 4), "line 4");
        files.begin(0, "a.jsonl");
        files.begin(3, "b.jsonl");
        files.begin(3, "empty.jsonl");
        files.begin(3, "c.jsonl");
        assert_eq!(files.cite(3, 3), "a.jsonl: line 3");
        assert_eq!(files.cite(4, 6), "c.jsonl: lines 1-3");
        assert_eq!(files.of(5).map(|(f, b)| (f.as_ref(), b)), Some(("c.jsonl", 3)));
        assert_eq!(files.before_last(), 3);
    }
}
