//! OpenCode's session files (`opencode.db`, `opencode export` documents): what is particular
//! to them, and `normalize DIR`: the walk, what it reads and what it skips. That they agree
//! with the same runs' live streams is checked with every other CLI's in `sessions.rs`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::sessions::scratch;
use crate::support::{bin, fixture, json_lines, of_type};

fn normalize(paths: &[&Path]) -> (Vec<Value>, String) {
    let out = bin("normalize").args(paths).output().unwrap();
    assert!(out.status.success(), "{paths:?}: {}", String::from_utf8_lossy(&out.stderr));
    (json_lines(&out.stdout), String::from_utf8(out.stderr).unwrap())
}

fn scenario(name: &str) -> PathBuf {
    fixture(&format!("sessions/opencode-1.18.33/{name}"))
}

/// A subagent's own session (its `parentID` the run's, named by the `task` call's metadata)
/// is read as the stream shows a subagent: its events are the call's, in the run's session,
/// not a run or turn of its own. The database's is read while the call runs; a separate
/// export of it, read after its parent's, comes after the call's end, still the call's.
#[test]
fn a_subagent_s_session_is_its_task_call_s() {
    let dir = scenario("subagent");
    let db = [dir.join("opencode.db")];
    let exports = [dir.join("export.json"), dir.join("export-child.json")];
    for (files, during) in [(&db[..], true), (&exports[..], false)] {
        let paths: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
        let (events, _) = normalize(&paths);
        let task = events.iter().find(|e| e["type"] == "tool.started" && e["payload"]["name"] == "task").unwrap();
        let call = &task["payload"]["toolCallId"];
        let sessions: std::collections::BTreeSet<&str> =
            events.iter().map(|e| e["sessionId"].as_str().unwrap()).collect();
        assert_eq!(sessions.len(), 1, "{files:?}: {sessions:?}");
        assert_eq!(of_type(&events, "session.started").len(), 1, "{files:?}");
        assert_eq!(of_type(&events, "turn.started").len(), 1, "{files:?}");
        let child: Vec<&Value> = events.iter().filter(|e| e["parentId"] == *call).collect();
        let tool = child.iter().find(|e| e["type"] == "tool.started").expect("the subagent's tool");
        assert_eq!(tool["payload"]["command"], "echo from-subagent", "{files:?}");
        let texts: Vec<&str> =
            child.iter().filter(|e| e["type"] == "text").filter_map(|e| e["payload"]["delta"].as_str()).collect();
        assert!(texts.iter().any(|t| t.contains("SUBCHILD")), "{files:?}: {texts:?}");
        let at = |e: &Value| events.iter().position(|x| x == e).unwrap();
        let end =
            events.iter().position(|e| e["type"] == "tool.completed" && e["payload"]["toolCallId"] == *call).unwrap();
        assert_eq!(child.iter().all(|e| at(e) < end), during, "{files:?}: the subagent is read while its call runs");
        let summary = events.last().unwrap();
        assert_eq!((&summary["ok"], &summary["payload"]["turns"]), (&Value::Bool(true), &Value::from(1)), "{files:?}");
        assert!(summary["payload"]["sessions"].is_null(), "{files:?}: one run");
        assert_eq!(summary["payload"]["tools"]["total"], 2, "{files:?}");
    }
}

/// OpenCode's session ids sort newest first, so a subagent's export sorts before its
/// parent's, in a directory as in a shell glob: it waits until its parent's is read, and
/// the run is the one the parent-first order gives. A child whose parent is not given is
/// still read, last, as a run of its own.
#[test]
fn a_subagent_s_export_waits_for_its_parent_s() {
    let dir = scenario("subagent");
    let without_file = |mut events: Vec<Value>| {
        events.iter_mut().for_each(|e| {
            e["rawRef"].as_object_mut().map(|r| r.remove("file"));
        });
        events.pop();
        events
    };
    let (parent_first, _) = normalize(&[&dir.join("export.json"), &dir.join("export-child.json")]);
    let (child_first, _) = normalize(&[&dir.join("export-child.json"), &dir.join("export.json")]);
    assert_eq!(without_file(child_first), without_file(parent_first.clone()));
    let archive = scratch("opencode-exports");
    std::fs::copy(dir.join("export-child.json"), archive.join("ses_1.json")).unwrap();
    std::fs::copy(dir.join("export.json"), archive.join("ses_2.json")).unwrap();
    let (walked, _) = normalize(&[&archive]);
    assert_eq!(without_file(walked), without_file(parent_first));
    std::fs::remove_file(archive.join("ses_2.json")).unwrap();
    std::fs::copy(scenario("text").join("export.json"), archive.join("ses_3.json")).unwrap();
    let (orphan, _) = normalize(&[&archive]);
    let runs: Vec<&Value> = orphan.iter().filter(|e| e["type"] == "session.started").collect();
    assert_eq!(runs.len(), 2);
    assert!(runs[1]["rawRef"]["file"].as_str().unwrap().ends_with("ses_1.json"), "{runs:?}");
    // A file of several exports holds each of their sessions: the child of its second waits
    // for no other file.
    let both = archive.join("both.json");
    let text = std::fs::read_to_string(scenario("text").join("export.json")).unwrap();
    std::fs::write(&both, text + &std::fs::read_to_string(dir.join("export.json")).unwrap()).unwrap();
    let write = scenario("write").join("export.json");
    let (events, _) = normalize(&[&both, &dir.join("export-child.json"), &write]);
    let files: Vec<&str> = events.iter().filter_map(|e| e["rawRef"]["file"].as_str()).collect();
    let first_write = files.iter().position(|f| f.ends_with("write/export.json")).unwrap();
    assert!(files[..first_write].iter().any(|f| f.ends_with("export-child.json")), "{files:?}");
    // A session's `info` is read whole, however large: a child's placed as a small one is.
    let mut child: Value = serde_json::from_slice(&std::fs::read(dir.join("export-child.json")).unwrap()).unwrap();
    child["info"]["title"] = Value::from("x".repeat(100_000));
    std::fs::write(archive.join("ses_1.json"), serde_json::to_vec_pretty(&child).unwrap()).unwrap();
    std::fs::copy(dir.join("export.json"), archive.join("ses_2.json")).unwrap();
    std::fs::remove_file(archive.join("ses_3.json")).unwrap();
    std::fs::remove_file(&both).unwrap();
    let (large, _) = normalize(&[&archive]);
    assert_eq!(of_type(&large, "session.started").len(), 1);
}

/// `opencode export … | normalize`: an export read from a pipe is the export named as a file;
/// another document printed indented is kept line by line, raw, as before.
#[test]
fn an_export_piped_in_is_read_as_the_file() {
    let path = scenario("subagent").join("export.json");
    let (named, _) = normalize(&[&path]);
    let piped = json_lines(&crate::support::run("normalize", &[], &std::fs::read(&path).unwrap()));
    let strip = |mut events: Vec<Value>| {
        events.pop();
        events
    };
    assert_eq!(strip(piped), strip(named));
    // `summarize` reads it as it reads provider output: normalized in process.
    let piped = crate::support::run("summarize", &["--format", "json"], &std::fs::read(&path).unwrap());
    let summary: Value = serde_json::from_slice(&piped).unwrap();
    assert_eq!((&summary["ok"], &summary["totals"]["turns"]), (&Value::Bool(true), &Value::from(1)), "{summary}");
    let other = crate::support::run("normalize", &[], b"{\n  \"response\": \"hi\"\n}\n");
    let events = json_lines(&other);
    assert_eq!(of_type(&events, "raw").len(), 3, "{events:?}");
}

/// An export saved by Windows tools (`opencode export … > file` in Windows PowerShell writes
/// UTF-16 with a byte order mark; `Out-File -Encoding utf8` a UTF-8 one) is the same
/// document, named as a file, found in a directory, or piped. They were raw lines.
#[test]
fn an_export_in_utf16_or_with_a_byte_order_mark_is_the_same_export() {
    let path = scenario("exit4").join("export.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let (plain, _) = normalize(&[&path]);
    let without_summary = |mut events: Vec<Value>| {
        events.pop();
        events
    };
    let plain = without_summary(plain);
    let utf16 = |big: bool| -> Vec<u8> {
        let units = std::iter::once(0xfeff).chain(text.encode_utf16());
        units.flat_map(|u: u16| if big { u.to_be_bytes() } else { u.to_le_bytes() }).collect()
    };
    let dir = scratch("export-encodings");
    for (name, bytes) in [
        ("utf8-bom", [&b"\xef\xbb\xbf"[..], text.as_bytes()].concat()),
        ("utf16le", utf16(false)),
        ("utf16be", utf16(true)),
    ] {
        let file = dir.join(name).join("export.json");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, &bytes).unwrap();
        assert_eq!(without_summary(normalize(&[&file]).0), plain, "{name}, named");
        let piped = json_lines(&crate::support::run("normalize", &[], &bytes));
        assert_eq!(without_summary(piped), plain, "{name}, piped");
        let (found, stderr) = normalize(&[file.parent().unwrap()]);
        assert!(stderr.is_empty(), "{name}: {stderr}");
        assert_eq!(of_type(&found, "tool.started").len(), of_type(&plain, "tool.started").len(), "{name}, found");
    }
}

#[test]
fn export_provenance_is_the_line_of_the_document() {
    let path = scenario("exit4").join("export.json");
    let (events, _) = normalize(&[&path]);
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let tool = events.iter().find(|e| e["type"] == "tool.started").unwrap();
    let line = tool["rawRef"]["line"].as_u64().unwrap() as usize;
    assert!(lines[line - 1].trim_start().starts_with('{'), "line {line}: {}", lines[line - 1]);
    assert!(lines[line].contains("\"type\": \"tool\""), "line {}: {}", line + 1, lines[line]);
}

#[test]
fn the_database_is_read_while_a_writer_holds_a_write_transaction() {
    let dir = scratch("opencode-writer");
    let db = dir.join("opencode.db");
    std::fs::copy(scenario("exit4").join("opencode.db"), &db).unwrap();
    let (before, _) = normalize(&[&db]);
    // Read when nobody has it open: nothing is created beside it.
    let beside: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(beside, ["opencode.db"]);
    let writer = rusqlite::Connection::open(&db).unwrap();
    writer.execute_batch("BEGIN IMMEDIATE").unwrap();
    writer.execute("DELETE FROM part", []).unwrap();
    let (during, stderr) = normalize(&[&db]);
    assert!(stderr.is_empty(), "{stderr}");
    assert_eq!(during, before, "the last commit is what is read");
    writer.execute_batch("ROLLBACK").unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A copy of the database in rollback-journal mode has no `-wal` even while it is written,
/// and a writer whose cache overflows puts its uncommitted pages in the file itself: they
/// are never read. The read waits for the writer's lock, then says it could not read.
#[test]
fn a_writer_s_uncommitted_pages_in_a_rollback_journal_database_are_never_read() {
    let dir = scratch("opencode-journal");
    let db = dir.join("opencode.db");
    std::fs::copy(scenario("exit4").join("opencode.db"), &db).unwrap();
    let writer = rusqlite::Connection::open(&db).unwrap();
    // A one-page cache: the update's pages spill to the file before it commits.
    writer.execute_batch("PRAGMA journal_mode=DELETE; PRAGMA cache_size=1; BEGIN EXCLUSIVE").unwrap();
    let changed = writer.execute("UPDATE part SET data = replace(data, 'Finished', 'UNCOMMITTED')", []).unwrap();
    writer.execute_batch("UPDATE message SET data = data; UPDATE session SET title = title").unwrap();
    assert!(changed > 0 && dir.join("opencode.db-journal").exists());
    let out = bin("normalize").arg(&db).timeout(std::time::Duration::from_secs(60)).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!stdout.contains("UNCOMMITTED"), "an uncommitted write was read: {stderr}");
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("locked"), "{stderr}");
    writer.execute_batch("ROLLBACK").unwrap();
    let (after, _) = normalize(&[&db]);
    assert!(after.iter().any(|e| e.to_string().contains("Finished")), "the committed text is read once it is free");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_directory_is_walked_in_path_order_reading_sessions_and_skipping_the_rest() {
    let home = scratch("walk-home");
    let data = home.join(".local/share/opencode");
    std::fs::create_dir_all(data.join("snapshot/objects")).unwrap();
    std::fs::copy(scenario("text").join("opencode.db"), data.join("opencode.db")).unwrap();
    std::fs::write(data.join("snapshot/objects/ab"), b"x\x01\0\x9c binary").unwrap();
    std::fs::write(data.join("auth.json"), "{\n  \"mock\": {\"type\": \"api\"}\n}\n").unwrap();
    std::fs::create_dir_all(home.join("runs/X")).unwrap();
    std::fs::copy(scenario("exit4").join("stdout.jsonl"), home.join("runs/X.jsonl")).unwrap();
    std::fs::copy(scenario("write").join("export.json"), home.join("runs/X/sub.json")).unwrap();
    std::fs::write(home.join("runs/lock"), "4242").unwrap();
    std::fs::write(home.join("runs/config.toml"), "model = \"x\"\n").unwrap();
    std::os::unix::fs::symlink(&home, home.join("runs/loop")).unwrap();

    let (events, stderr) = normalize(&[&home]);
    let mut files: Vec<&str> = events.iter().filter_map(|e| e["rawRef"]["file"].as_str()).collect();
    files.dedup();
    let rel = |p: &str| Path::new(p).strip_prefix(&home).unwrap().to_str().unwrap().to_owned();
    let read: Vec<String> = files.iter().map(|f| rel(f)).collect();
    assert_eq!(read, [".local/share/opencode/opencode.db", "runs/X.jsonl", "runs/X/sub.json"]);
    let summary = events.last().unwrap();
    assert_eq!(summary["payload"]["input"]["skipped"], 5, "{stderr}");
    for skipped in ["auth.json", "snapshot/objects/ab", "runs/lock", "runs/config.toml", "runs/loop"] {
        assert!(stderr.lines().any(|l| l.starts_with("normalize: skipped ") && l.contains(skipped)), "{stderr}");
    }
    assert_eq!(summary["payload"]["turns"], 3);
    // The order is the paths', whatever order the directory lists them in.
    let (again, _) = normalize(&[&home]);
    assert_eq!(again.len(), events.len());
    let _ = std::fs::remove_dir_all(&home);
}

/// Parts OpenCode defines say what they mean (a compaction, a retried request) or are known
/// to have no event; a part of a type it did not define is kept as a `raw` event, not
/// dropped with whatever it held.
#[test]
fn every_part_is_read_or_kept_raw() {
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(scenario("exit4").join("export.json")).unwrap()).unwrap();
    let mut doc = doc;
    let parts = doc["messages"][1]["parts"].as_array_mut().unwrap();
    let tool = parts.iter().position(|p| p["type"] == "tool").unwrap();
    parts[tool] = serde_json::json!({"type": "future-part", "id": "prt_x", "sessionID": parts[tool]["sessionID"], "messageID": parts[tool]["messageID"]});
    let like = |kind: &str, extra: Value| {
        let mut p = serde_json::json!({"type": kind, "id": format!("prt_{kind}"), "sessionID": parts[0]["sessionID"], "messageID": parts[0]["messageID"]});
        p.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        p
    };
    let added = [
        like("compaction", serde_json::json!({"auto": true})),
        like("retry", serde_json::json!({"attempt": 2})),
        like("snapshot", serde_json::json!({"snapshot": "abc"})),
    ];
    parts.splice(1..1, added);
    let dir = scratch("opencode-parts");
    let path = dir.join("export.json");
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let (events, stderr) = normalize(&[&path]);
    let raw: Vec<&Value> = events.iter().filter(|e| e["type"] == "raw").collect();
    assert_eq!(raw.len(), 1, "{raw:?}");
    assert!(raw[0]["payload"]["line"].as_str().unwrap().contains("future-part"));
    assert!(stderr.contains("part future-part"), "{stderr}");
    let compacted: Vec<&Value> = events.iter().filter(|e| e["type"] == "context.compacted").collect();
    assert_eq!(compacted.len(), 1);
    assert_eq!(compacted[0]["payload"]["reason"], "auto");
    assert!(events
        .iter()
        .any(|e| e["type"] == "warning" && e["payload"]["message"] == "retrying the API request (attempt 2)"));
}

/// A session's start is dated by the session's own `time.created`, its turn by the user's
/// message and every other event by the session's own times, never by when it was read:
/// reading a database or an export twice gives the same events.
#[test]
fn a_session_is_dated_by_its_own_times() {
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(scenario("exit4").join("export.json")).unwrap()).unwrap();
    let created = doc["info"]["time"]["created"].as_i64().unwrap();
    let updated = doc["info"]["time"]["updated"].as_i64().unwrap();
    let prompt = doc["messages"][0]["info"]["time"]["created"].as_i64().unwrap();
    assert_eq!(doc["messages"][0]["info"]["role"], "user");
    for file in ["opencode.db", "export.json"] {
        let (events, _) = normalize(&[&scenario("exit4").join(file)]);
        let at = |e: &Value| minicode_output::engine::clock::parse_rfc3339(e["timestamp"].as_str().unwrap());
        let started = events.iter().find(|e| e["type"] == "session.started").unwrap();
        assert_eq!(at(started), Some(created), "{file}: {started}");
        assert_eq!(at(of_type(&events, "turn.started")[0]), Some(prompt), "{file}");
        for e in &events[..events.len() - 1] {
            assert!(at(e).is_some_and(|t| (created..=updated).contains(&t)), "{file}: {e}");
        }
        assert_eq!(events, normalize(&[&scenario("exit4").join(file)]).0, "{file}: read twice");
    }
}

/// Rows a damaged or half-deleted database holds apart from any session are read, never
/// dropped: parts whose message row is gone are kept `raw` (and the turn they would have
/// ended is not `ok`), messages whose session row is gone are read as that session's.
#[test]
fn rows_whose_message_or_session_is_gone_are_read() {
    let dir = scratch("opencode-orphans");
    let damaged = |name: &str, sql: &str| {
        let db = dir.join(name);
        std::fs::copy(scenario("exit4").join("opencode.db"), &db).unwrap();
        // Without the foreign keys the bundled SQLite enforces, which would delete the rows
        // that depend on the deleted one.
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(&format!("PRAGMA foreign_keys = OFF; {sql}")).unwrap();
        drop(conn);
        normalize(&[&db]).0
    };
    let events = damaged(
        "no-message.db",
        "DELETE FROM message WHERE id = (SELECT id FROM message ORDER BY time_created DESC LIMIT 1)",
    );
    let raw = of_type(&events, "raw");
    assert_eq!(raw.len(), 3, "the last message's three parts");
    let kept = |text: &str| raw.iter().any(|r| r["payload"]["line"].as_str().unwrap().contains(text));
    assert!(kept("Finished scenario EXIT4") && kept("step-finish"), "the answer and its step are kept: {raw:?}");
    let summary = events.last().unwrap();
    assert_eq!((&summary["ok"], &summary["payload"]["input"]["raw"]), (&Value::Bool(false), &Value::from(3)));

    let events = damaged("no-session.db", "DELETE FROM session");
    assert_eq!(of_type(&events, "tool.failed")[0]["payload"]["output"]["exit_code"], 4);
    assert!(of_type(&events, "text")
        .iter()
        .any(|t| t["payload"]["delta"].as_str().unwrap().contains("Finished scenario EXIT4")));
    assert_eq!(events.last().unwrap()["payload"]["turns"], 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A copy of the recorded subagent run's database, changed by `sql` (foreign keys off).
fn subagent_db(dir: &Path, name: &str, sql: &str) -> PathBuf {
    let db = dir.join(name);
    std::fs::create_dir_all(dir).unwrap();
    std::fs::copy(scenario("subagent").join("opencode.db"), &db).unwrap();
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(&format!("PRAGMA foreign_keys = OFF; {sql}")).unwrap();
    db
}

/// The message of the run's own session (not the subagent's) that holds the `task` call.
const TASK_MESSAGE: &str = "(SELECT message_id FROM part WHERE data LIKE '%\"tool\":\"task\"%')";

/// The subagent's rows come in the middle of the message holding its call: what follows
/// them in that message (its step's end) is the run's again, and decides how its turn ended.
#[test]
fn the_rest_of_the_message_after_a_subagent_is_the_runs() {
    let dir = scratch("opencode-after-subagent");
    // The run ends with the step that holds the call: the final answer's message is gone.
    let last = "(SELECT id FROM message WHERE session_id = (SELECT id FROM session WHERE parent_id IS NULL) \
        ORDER BY time_created DESC LIMIT 1)";
    for (reason, status, category) in
        [("stop", "completed", Value::Null), ("length", "failed", Value::from("BUDGET_EXCEEDED"))]
    {
        let db = subagent_db(
            &dir,
            &format!("{reason}.db"),
            &format!(
                "DELETE FROM part WHERE message_id = {last}; DELETE FROM message WHERE id = {last};
                 UPDATE part SET data = json_set(data, '$.reason', '{reason}')
                 WHERE message_id = {TASK_MESSAGE} AND data LIKE '%\"step-finish\"%';"
            ),
        );
        let (events, _) = normalize(&[&db]);
        let summary = events.last().unwrap();
        assert_eq!((&summary["status"], &summary["error"]["category"]), (&Value::from(status), &category), "{reason}");
        let end = events.iter().rev().find(|e| e["type"].as_str().unwrap().starts_with("turn.")).unwrap();
        assert_eq!(end["payload"]["stopReason"], reason);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// OpenCode's `task` can resume a subagent (`task_id`): a second call naming the same
/// session. Each call gets the subagent's messages made while it ran.
#[test]
fn a_resumed_subagent_s_work_is_the_call_that_resumed_it() {
    let dir = scratch("opencode-resumed-subagent");
    let (parent, child) =
        ("(SELECT id FROM session WHERE parent_id IS NULL)", "(SELECT id FROM session WHERE parent_id IS NOT NULL)");
    // After the first call's end, a second call resumes the child, which answers again;
    // the run's final answer comes after.
    let t: i64 = 1_796_151_911_135;
    let sql = format!(
        "UPDATE message SET time_created = {final_at} WHERE id = (SELECT id FROM message WHERE session_id = {parent} ORDER BY time_created DESC LIMIT 1);
         INSERT INTO message VALUES ('msg_resume_a', {parent}, {t}, {t}, '{{\"role\":\"assistant\",\"time\":{{\"created\":{t},\"completed\":{t5}}}}}');
         INSERT INTO part SELECT 'prt_resume_a', 'msg_resume_a', {parent}, {t}, {t},
           '{{\"type\":\"tool\",\"tool\":\"task\",\"callID\":\"call_resume\",\"state\":{{\"status\":\"completed\",\"input\":{{\"prompt\":\"continue\"}},\"output\":\"resumed\",\"metadata\":{{\"sessionId\":\"' || {child} || '\"}},\"time\":{{\"start\":{t1},\"end\":{t4}}}}}}}';
         INSERT INTO message VALUES ('msg_resume_b', {child}, {t3}, {t3}, '{{\"role\":\"assistant\",\"time\":{{\"created\":{t3},\"completed\":{t4}}}}}');
         INSERT INTO part VALUES ('prt_resume_b', 'msg_resume_b', {child}, {t3}, {t3}, '{{\"type\":\"text\",\"text\":\"Resumed and continued.\"}}');",
        final_at = t + 6, t1 = t + 1, t3 = t + 3, t4 = t + 4, t5 = t + 5,
    );
    let db = subagent_db(&dir, "resumed.db", &sql);
    let (events, _) = normalize(&[&db]);
    let text = events.iter().find(|e| e["payload"]["delta"] == "Resumed and continued.").expect("the resumed work");
    assert_eq!(text["parentId"], "call_resume");
    let at = |e: &Value| events.iter().position(|x| x == e).unwrap();
    let ended = |id: &str| {
        events.iter().position(|e| e["type"] == "tool.completed" && e["payload"]["toolCallId"] == id).unwrap()
    };
    let started =
        events.iter().position(|e| e["type"] == "tool.started" && e["payload"]["toolCallId"] == "call_resume");
    assert!(ended("call_mock_s0_0_102") < started.unwrap() && at(text) < ended("call_resume"));
    let first: Vec<&Value> = events.iter().filter(|e| e["parentId"] == "call_mock_s0_0_102").collect();
    assert!(first.iter().all(|e| at(e) < ended("call_mock_s0_0_102")), "the first call's work is its own");
    assert_eq!(events.last().unwrap()["payload"]["turns"], 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A damaged database whose `task` call names the session it is in (its own parent) never
/// reads that session inside itself: each of its rows is read once.
#[test]
fn a_session_named_by_its_own_call_is_read_once() {
    let dir = scratch("opencode-cycle");
    let root = "(SELECT id FROM session WHERE parent_id IS NULL)";
    let sql = format!(
        "UPDATE part SET data = json_set(data, '$.state.metadata.sessionId', {root}) WHERE data LIKE '%\"tool\":\"task\"%';
         UPDATE session SET parent_id = id WHERE parent_id IS NULL;"
    );
    let db = subagent_db(&dir, "cycle.db", &sql);
    let (cycle, _) = normalize(&[&db]);
    let (plain, _) = normalize(&[&subagent_db(&dir, "plain.db", "")]);
    let texts = |events: &[Value]| events.iter().filter(|e| e["type"] == "text").count();
    assert_eq!(texts(&cycle), texts(&plain));
    assert_eq!(of_type(&cycle, "usage").len(), of_type(&plain, "usage").len());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `project` and `summarize` read OpenCode's database and exports named as files, as they
/// read any agent's output: what they give is what they give of `normalize`'s output.
#[test]
fn project_and_summarize_read_the_session_files_themselves() {
    let dir = scenario("subagent");
    for file in ["opencode.db", "export.json"] {
        let path = dir.join(file);
        let normalized = bin("normalize").arg(&path).output().unwrap().stdout;
        assert!(!normalized.is_empty());
        let projected = bin("project").args(["--mode", "jsonl"]).arg(&path).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&projected.stdout), String::from_utf8_lossy(&normalized), "{file}");
        let summary = bin("summarize").args(["--format", "json"]).arg(&path).output().unwrap();
        let piped = crate::support::run("summarize", &["--format", "json"], &normalized);
        assert_eq!(String::from_utf8_lossy(&summary.stdout), String::from_utf8_lossy(&piped), "{file}");
        assert_eq!(summary.status.code(), Some(0), "{file}");
    }
}
