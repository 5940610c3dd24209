//! OpenCode's SQLite database (`~/.local/share/opencode/opencode.db`), read with SQLite
//! itself (`rusqlite`, bundled), read-only, in one read transaction, so the sessions read
//! are one consistent snapshot even while OpenCode is writing.
//!
//! OpenCode keeps the database in WAL mode. While OpenCode has it open, `-wal` and `-shm`
//! files lie beside it: the database is then opened read-only (`mode=ro`), which takes
//! SQLite's ordinary read locks through the `-shm` and never writes; OpenCode's writes
//! after the snapshot are not seen. When there is no `-wal` file nobody has it open (the
//! last connection checkpoints it and removes the file), and a read-only open would still
//! create an empty `-wal` and `-shm` beside it and leave them there: the database is then
//! opened `immutable=1`, which creates nothing and takes no locks. Should OpenCode start
//! writing while it is read so (a `-wal` appears by the end), the read fails with an error
//! saying to read it again: what was read may not be one snapshot. A database whose header
//! says it is not in WAL mode (a copy made with another journal) has no `-wal` even while
//! it is written, and a writer's uncommitted pages may lie in the file: it is opened
//! `mode=ro`, whose locks wait for the writer (in that mode a read-only open creates no
//! files).
//!
//! Lines: for each session (oldest first, by `time_created` then `id`), its record, then
//! each of its messages (by `time_created`, `id`) followed by that message's parts (by
//! `id`, which OpenCode makes ascending). A subagent's session comes inside the `task` part
//! that names it in its metadata: first that part as it was while the subagent ran (its
//! `status` `running`), then the subagent's session, then the part itself, as the stream
//! would have told them. A line's number (`rawRef.line`) is that row's place in this order,
//! and the record names the row's `id`. A row whose JSON is broken becomes a line holding
//! the row as text, kept `raw`.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, OptionalExtension};

use super::{record, MESSAGE, PART, SESSION};
use crate::io::{Decoded, LinesOut, Produced};

/// The first bytes of every SQLite database file.
const HEADER: &[u8] = b"SQLite format 3\0";

/// The lines of the OpenCode database at `path`, when `head` says it is SQLite and its
/// tables are OpenCode's (others, Codex's or Copilot's, are not read).
pub(in crate::provider) fn decode(path: &Path, head: &[u8]) -> Option<io::Result<Decoded>> {
    if !head.starts_with(HEADER) {
        return None;
    }
    let conn = match open(path, is_wal(head)) {
        Ok(conn) => conn,
        Err(e) => return Some(Err(io::Error::other(e))),
    };
    match is_opencode(&conn.0) {
        Ok(true) => {}
        Ok(false) => return None,
        Err(e) => return Some(Err(io::Error::other(e))),
    }
    let produced = Produced::spawn("opencode-db", move |out| read(conn, out));
    Some(produced.map(|p| Decoded::lines(Box::new(p))))
}

/// A connection, and the `-wal` file whose appearing means the immutable read raced a writer.
struct Db(Connection, Option<PathBuf>);

/// True when the database header's read and write versions (bytes 18 and 19) are 2: WAL.
fn is_wal(head: &[u8]) -> bool {
    head.get(18..20) == Some(&[2, 2])
}

fn open(path: &Path, wal_mode: bool) -> rusqlite::Result<Db> {
    let wal = PathBuf::from(format!("{}-wal", path.display()));
    let quiet = wal_mode && !wal.exists();
    let mut uri = String::from("file:");
    for b in path.to_string_lossy().bytes() {
        // A path in a URI: `?`, `#` and `%` would end or escape it.
        match b {
            b'?' | b'#' | b'%' => uri.push_str(&format!("%{b:02X}")),
            _ => uri.push(b as char),
        }
    }
    uri.push_str(if quiet { "?immutable=1" } else { "?mode=ro" });
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(uri, flags)?;
    // A writer holding its lock briefly (a checkpoint) is waited for, not an error.
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    Ok(Db(conn, quiet.then_some(wal)))
}

fn is_opencode(conn: &Connection) -> rusqlite::Result<bool> {
    let n: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('session', 'message', 'part')",
        [],
        |r| r.get(0),
    )?;
    Ok(n == 3)
}

/// A session row's JSON, with the ids the row keeps in columns put back, as `opencode
/// export` has it (the rows' JSON below likewise); `NULL` when the row's JSON is broken.
macro_rules! session_info {
    () => {
        "json_object('id', id, 'parentID', parent_id, 'directory', directory, \
        'title', title, 'version', version, 'agent', agent, \
        'model', CASE WHEN json_valid(model) THEN json(model) END, \
        'time', json_object('created', time_created, 'updated', time_updated))"
    };
}
/// A part row's JSON, the ids it keeps in columns put back, with more paths set (`extra`).
macro_rules! part_json {
    ($($extra:literal)?) => {
        concat!("json_set(data, '$.id', id, '$.messageID', message_id, '$.sessionID', session_id" $(, ", ", $extra)?, ")")
    };
}
/// The sessions in the order they are read: those whose parent is in the database after all
/// others, so that a subagent's comes after the session whose call reads it.
const SESSIONS: &str = concat!(
    "SELECT id, ",
    session_info!(),
    " FROM session ORDER BY parent_id IN (SELECT id FROM session), time_created, id"
);
/// Session `?1`, when its parent is session `?2`.
const CHILD: &str = concat!("SELECT id, ", session_info!(), " FROM session WHERE id = ?1 AND parent_id = ?2");
/// The messages of session `?1` created after `?2` and up to `?3`.
const MESSAGES: &str = "SELECT id, CASE WHEN json_valid(data) THEN json_set(data, '$.id', id, '$.sessionID', session_id) END, data \
    FROM message WHERE session_id = ?1 AND time_created > ?2 AND time_created <= ?3 ORDER BY time_created, id";
const MESSAGES_AFTER: &str = "SELECT EXISTS (SELECT 1 FROM message WHERE session_id = ?1 AND time_created > ?2)";
/// A part's row, then the session its tool's metadata names (a `task` call's subagent), the
/// part as it was while that ran, and when the call ended.
const PARTS: &str = concat!(
    "SELECT id, CASE WHEN json_valid(data) THEN ",
    part_json!(),
    " END, data, \
    CASE WHEN json_valid(data) AND json_type(data, '$.state.metadata.sessionId') = 'text' \
    THEN json_extract(data, '$.state.metadata.sessionId') END, \
    CASE WHEN json_valid(data) AND json_type(data, '$.state.metadata.sessionId') = 'text' THEN ",
    part_json!("'$.state.status', 'running'"),
    " END, \
    CASE WHEN json_valid(data) AND json_type(data, '$.state.time.end') = 'integer' \
    THEN json_extract(data, '$.state.time.end') END \
    FROM part WHERE message_id = ?1 ORDER BY id"
);

/// The sessions that messages name and the `session` table lacks, oldest first.
const ORPHAN_SESSIONS: &str = "SELECT session_id FROM message WHERE session_id NOT IN (SELECT id FROM session) \
    GROUP BY session_id ORDER BY min(time_created), session_id";
/// The parts whose message the `message` table lacks.
const ORPHAN_PARTS: &str = concat!(
    "SELECT id, CASE WHEN json_valid(data) THEN ",
    part_json!(),
    " END, data FROM part WHERE message_id NOT IN (SELECT id FROM message) ORDER BY id"
);
/// The record of a part whose message is gone: no dialect reads it, so it is kept `raw`.
const ORPHAN_PART: &str = "opencode-part-without-message";

/// How deep subagents are read inside the call that spawned them; a deeper one is read
/// after the others, in its place among the sessions.
const NESTING: usize = 16;

/// Why reading stopped: SQLite failed, or the filter stopped reading.
enum Stop {
    Sql(rusqlite::Error),
    Out(io::Error),
}

impl From<rusqlite::Error> for Stop {
    fn from(e: rusqlite::Error) -> Stop {
        Stop::Sql(e)
    }
}

impl From<io::Error> for Stop {
    fn from(e: io::Error) -> Stop {
        Stop::Out(e)
    }
}

fn read(db: Db, out: &mut LinesOut) -> io::Result<()> {
    let Db(conn, wal) = db;
    match read_rows(&conn, out) {
        Ok(()) => {}
        Err(Stop::Sql(e)) => return Err(io::Error::other(e)),
        Err(Stop::Out(e)) => return Err(e),
    }
    if wal.is_some_and(|w| w.exists()) {
        return Err(io::Error::other(
            "OpenCode began writing the database while it was read without locks: read it again",
        ));
    }
    Ok(())
}

/// Every row, in one read transaction. A subagent's session is read inside the `task` call
/// that spawned it, between the call as it ran and its end, as the stream would have shown
/// it; the other sessions in order; then the rows of no session ([`Reader::orphans`]).
fn read_rows(conn: &Connection, out: &mut LinesOut) -> Result<(), Stop> {
    // Deferred: the snapshot is taken by the first read, and every read after sees it.
    conn.execute_batch("BEGIN")?;
    let mut sessions = conn.prepare(SESSIONS)?;
    let mut rows = sessions.query([])?;
    let mut reader = Reader { conn, out, line: Vec::new(), read: HashMap::new(), reading: Vec::new() };
    while let Some(row) = rows.next()? {
        let id: String = row.get(0)?;
        // A subagent's read up to its last call's end: the rest of it, should there be any.
        let after = match reader.read.get(&id) {
            None => i64::MIN,
            Some(&after) if after < i64::MAX && reader.has_messages_after(&id, after)? => after,
            Some(_) => continue,
        };
        reader.session(&id, &row.get::<_, String>(1)?, (after, i64::MAX), 0)?;
    }
    drop(rows);
    reader.orphans()?;
    conn.execute_batch("COMMIT")?;
    Ok(())
}

struct Reader<'a> {
    conn: &'a Connection,
    out: &'a mut LinesOut,
    line: Vec<u8>,
    /// The subagents' sessions read inside their calls, each up to when its last call
    /// ended (`i64::MAX`: whole). OpenCode's `task` can resume a subagent: each call reads
    /// the messages it made.
    read: HashMap<String, i64>,
    /// The sessions being read, outermost first: a subagent's session that names one of
    /// them (a damaged database's cycle) is not read inside itself.
    reading: Vec<String>,
}

impl Reader<'_> {
    /// Session `id` (its JSON `info`), then each of its messages created within `span`
    /// followed by its parts.
    fn session(&mut self, id: &str, info: &str, span: (i64, i64), depth: usize) -> Result<(), Stop> {
        self.line.clear();
        record(SESSION, "info", info, &mut self.line);
        self.out.line(&self.line)?;
        self.reading.push(id.to_owned());
        let read = self.messages(id, span, depth);
        self.reading.pop();
        read
    }

    /// The messages of session `id` created within `span`, each followed by its parts.
    fn messages(&mut self, id: &str, (after, until): (i64, i64), depth: usize) -> Result<(), Stop> {
        // Cached statements: one still being stepped through (a parent's) is not reused.
        let mut messages = self.conn.prepare_cached(MESSAGES)?;
        let mut msgs = messages.query(rusqlite::params![id, after, until])?;
        while let Some(m) = msgs.next()? {
            let message: String = m.get(0)?;
            emit(MESSAGE, "info", m, self.out, &mut self.line)?;
            let mut parts = self.conn.prepare_cached(PARTS)?;
            let mut ps = parts.query([&message])?;
            while let Some(p) = ps.next()? {
                if let (Some(child), Some(running)) = (p.get::<_, Option<String>>(3)?, p.get::<_, Option<String>>(4)?) {
                    let ended = p.get::<_, Option<i64>>(5)?.unwrap_or(i64::MAX);
                    self.child(id, &child, &running, ended, depth)?;
                }
                emit(PART, "part", p, self.out, &mut self.line)?;
            }
        }
        Ok(())
    }

    fn has_messages_after(&self, id: &str, after: i64) -> rusqlite::Result<bool> {
        let mut query = self.conn.prepare_cached(MESSAGES_AFTER)?;
        query.query_row(rusqlite::params![id, after], |r| r.get(0))
    }

    /// The rows a damaged or half-deleted database holds apart from any session: messages
    /// whose session row is gone are read as their session's (which then has no start of
    /// its own), parts whose message row is gone each become a line of an
    /// [`ORPHAN_PART`] record, kept `raw`, so nothing in the database is dropped unsaid.
    fn orphans(&mut self) -> Result<(), Stop> {
        let mut sessions = self.conn.prepare(ORPHAN_SESSIONS)?;
        let mut ids = sessions.query([])?;
        while let Some(row) = ids.next()? {
            self.messages(&row.get::<_, String>(0)?, (i64::MIN, i64::MAX), 0)?;
        }
        let mut parts = self.conn.prepare(ORPHAN_PARTS)?;
        let mut ps = parts.query([])?;
        while let Some(p) = ps.next()? {
            emit(ORPHAN_PART, "part", p, self.out, &mut self.line)?;
        }
        Ok(())
    }

    /// The subagent's session `child` that a part of session `parent` names, read after the
    /// part as it was while the subagent ran, up to when the call `ended`: when it is that
    /// session's child, not being read already, and not too deep.
    fn child(&mut self, parent: &str, child: &str, running: &str, ended: i64, depth: usize) -> Result<(), Stop> {
        let after = self.read.get(child).copied().unwrap_or(i64::MIN);
        if depth >= NESTING || after == i64::MAX || self.reading.iter().any(|s| s == child) {
            return Ok(());
        }
        let mut query = self.conn.prepare_cached(CHILD)?;
        let Some(info) = query.query_row([child, parent], |r| r.get::<_, String>(1)).optional()? else {
            return Ok(());
        };
        self.read.insert(child.to_owned(), ended.max(after));
        self.line.clear();
        record(PART, "part", running, &mut self.line);
        self.out.line(&self.line)?;
        self.session(child, &info, (after, ended), depth + 1)
    }
}

/// The line of a message or part row: its record, or the row as text when its JSON is
/// broken (its parser then keeps it `raw`).
fn emit(kind: &str, key: &str, row: &rusqlite::Row<'_>, out: &mut LinesOut, line: &mut Vec<u8>) -> io::Result<()> {
    let json: Option<String> = row.get(1).map_err(io::Error::other)?;
    line.clear();
    match json {
        Some(json) => record(kind, key, &json, line),
        None => {
            let id: String = row.get(0).map_err(io::Error::other)?;
            let data: String = row.get(2).unwrap_or_default();
            let broken = serde_json::json!({ "type": kind, "id": id, "brokenData": data });
            line.extend_from_slice(broken.to_string().as_bytes());
        }
    }
    out.line(line)
}
