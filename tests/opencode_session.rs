//! OpenCode's session files (`opencode.db`, `opencode export` documents) against the same
//! runs' live streams, and `normalize DIR`: the walk, what it reads and what it skips.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{bin, fixture, json_lines};

const SCENARIOS: [&str; 5] = ["text", "exit4", "write", "subagent", "resume"];

fn normalize(paths: &[&Path]) -> (Vec<Value>, String) {
    let out = bin("normalize").args(paths).output().unwrap();
    assert!(out.status.success(), "{paths:?}: {}", String::from_utf8_lossy(&out.stderr));
    (json_lines(&out.stdout), String::from_utf8(out.stderr).unwrap())
}

/// What a session file and its stream must agree on, for the run's root session.
#[derive(Debug, PartialEq)]
struct Agreed {
    turns: usize,
    /// Each root tool: its name, kind, how it ended and its exit code.
    tools: Vec<(String, String, String, Option<i64>)>,
    files: Vec<(String, String)>,
    final_text: String,
    outcome: String,
}

fn agreed(events: &[Value], root: &str) -> Agreed {
    let root_events = || events.iter().filter(|e| e["sessionId"] == root);
    let ended = ["tool.completed", "tool.failed", "tool.denied", "tool.cancelled"];
    let tools = root_events()
        .filter(|e| ended.contains(&e["type"].as_str().unwrap()) && e["parentId"].is_null())
        .map(|e| {
            let p = &e["payload"];
            let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
            (s(&p["name"]), s(&p["kind"]), s(&e["type"]), p["output"]["exit_code"].as_i64())
        })
        .collect();
    let files = root_events()
        .filter(|e| e["type"] == "file.changed")
        .map(|e| (e["payload"]["path"].as_str().unwrap().into(), e["payload"]["change"].as_str().unwrap().into()))
        .collect();
    let final_text = root_events()
        .rfind(|e| e["type"] == "text" && e["payload"]["role"] == "assistant")
        .map_or(String::new(), |e| e["payload"]["delta"].as_str().unwrap().into());
    let summary = events.last().unwrap();
    assert_eq!(summary["type"], "summary");
    Agreed {
        turns: root_events().filter(|e| e["type"] == "turn.started").count(),
        tools,
        files,
        final_text,
        outcome: summary["status"].as_str().unwrap().into(),
    }
}

fn scenario(name: &str) -> PathBuf {
    fixture(&format!("sessions/opencode-1.18.33/{name}"))
}

/// The stream of a run (both invocations of a resumed one).
fn stream(dir: &Path) -> Vec<PathBuf> {
    let mut files = vec![dir.join("stdout.jsonl")];
    if dir.join("stdout-turn2.jsonl").exists() {
        files.push(dir.join("stdout-turn2.jsonl"));
    }
    files
}

#[test]
fn the_database_the_export_and_the_stream_agree() {
    for name in SCENARIOS {
        let dir = scenario(name);
        let stream_files = stream(&dir);
        let (live, _) = normalize(&stream_files.iter().map(PathBuf::as_path).collect::<Vec<_>>());
        let root = live[0]["sessionId"].as_str().unwrap().to_owned();
        let want = agreed(&live, &root);
        assert!(want.turns > 0 && !want.final_text.is_empty(), "{name}: {want:?}");
        for file in ["opencode.db", "export.json"] {
            let (events, stderr) = normalize(&[&dir.join(file)]);
            assert_eq!(agreed(&events, &root), want, "{name}/{file}");
            assert!(stderr.is_empty(), "{name}/{file}: {stderr}");
            let summary = events.last().unwrap();
            assert_eq!(summary["payload"]["input"]["raw"], 0, "{name}/{file}");
            // Only the session files hold the prompt.
            let prompt = events.iter().find(|e| e["type"] == "turn.started").unwrap()["payload"]["prompt"].clone();
            assert!(prompt.as_str().is_some_and(|p| p.contains("SCENARIO_")), "{name}/{file}: {prompt}");
        }
    }
}

#[test]
fn a_subagent_s_session_in_the_database_is_linked_to_its_task() {
    let (events, _) = normalize(&[&scenario("subagent").join("opencode.db")]);
    let task = events.iter().find(|e| e["type"] == "tool.started" && e["payload"]["name"] == "task").unwrap();
    let child_tool = events
        .iter()
        .find(|e| e["type"] == "tool.started" && e["sessionId"] != task["sessionId"])
        .expect("the child session's tool");
    assert_eq!(child_tool["parentId"], task["payload"]["toolCallId"]);
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

/// A scratch directory of this test's own.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("minicode-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
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
    let root = before[0]["sessionId"].as_str().unwrap();
    assert_eq!(agreed(&during, root), agreed(&before, root), "the last commit is what is read");
    writer.execute_batch("ROLLBACK").unwrap();
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
