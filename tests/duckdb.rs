//! DuckDB, the engine people reach for first, reads the canonical events of every agent's
//! bundled runs as they are: the README's queries run as written and agree with the events
//! counted here, and every JSON path has one type across all agents, so DuckDB infers one
//! column type per path. Needs the `duckdb` Python package (`tests/requirements.txt`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::*;

/// The SQL of the README's "Query with DuckDB" section, statement by statement.
fn readme_queries() -> Vec<String> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let section = readme.split("### Query with DuckDB").nth(1).expect("the README has a DuckDB section");
    let sql = section.split("```sql\n").nth(1).and_then(|s| s.split("```").next()).expect("an sql block");
    let code: String = sql.lines().filter(|l| !l.trim_start().starts_with("--")).map(|l| format!("{l}\n")).collect();
    code.split(";\n").map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect()
}

/// Every provider input under `fixtures/`, in a stable order.
fn provider_inputs() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.to_string_lossy().ends_with(".input.jsonl") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root().join("fixtures"), &mut out);
    out.sort();
    out
}

/// Runs the statements in `dir` with DuckDB; the rows of each SELECT, and the JSON paths of
/// each event type whose values DuckDB could give no single type (its `"JSON"` leaves).
const RUNNER: &str = r#"
import duckdb, json, sys
con = duckdb.connect()
out = {"results": [], "mixed": {}}
for stmt in json.load(open("queries.json")):
    rel = con.sql(stmt)
    if rel is not None:
        cols = rel.columns
        out["results"].append([dict(zip(cols, row)) for row in rel.fetchall()])
def walk(s, path, found):
    if isinstance(s, dict):
        for k, v in s.items():
            walk(v, path + "." + k, found)
    elif isinstance(s, list):
        for v in s:
            walk(v, path + "[]", found)
    elif s == "JSON":
        found.append(path)
raw = "read_ndjson_objects('runs.events.jsonl')"
for (t,) in con.sql(f"SELECT DISTINCT json->>'type' FROM {raw} ORDER BY 1").fetchall():
    (structure,) = con.execute(f"SELECT json_group_structure(json) FROM {raw} WHERE json->>'type' = ?", [t]).fetchone()
    found = []
    walk(json.loads(structure), "", found)
    out["mixed"][t] = found
json.dump(out, sys.stdout, default=str)
"#;

#[test]
fn the_readmes_duckdb_queries_agree_with_the_events_of_every_agent() {
    let Some(python) = python_with(&["duckdb"]) else { return };
    let dir = std::env::temp_dir().join(format!("minicode-duckdb-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let inputs = provider_inputs();
    let list: String = inputs.iter().map(|p| format!("{}\n", p.display())).collect();
    // Some fixtures are bad input on purpose (exit 1): their raw events load as well.
    let events = bin("normalize").args(["--files-from", "-"]).write_stdin(list).output().unwrap();
    assert!(events.status.code().unwrap_or(2) < 2, "{}", String::from_utf8_lossy(&events.stderr));
    std::fs::write(dir.join("runs.events.jsonl"), &events.stdout).unwrap();
    let report = bin("summarize").args(["--format", "json"]).arg(dir.join("runs.events.jsonl")).output().unwrap();
    std::fs::write(dir.join("runs.summary.json"), &report.stdout).unwrap();
    let queries = readme_queries();
    std::fs::write(dir.join("queries.json"), serde_json::to_vec(&queries).unwrap()).unwrap();
    let out = std::process::Command::new(python).args(["-c", RUNNER]).current_dir(&dir).output().unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert!(out.status.success(), "duckdb: {}", String::from_utf8_lossy(&out.stderr));
    let out: Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = out["results"].as_array().unwrap();
    assert_eq!(results.len(), 4, "four SELECTs in the README");

    // The same figures, counted here from the events.
    let events = json_lines(&events.stdout);
    let key =
        |e: &Value| (e["sessionId"].as_str().unwrap().to_owned(), e["rawRef"]["file"].as_str().unwrap().to_owned());
    let provider: BTreeMap<_, _> = events
        .iter()
        .filter(|e| e["type"] == "session.started")
        .map(|e| (key(e), e["payload"]["provider"].as_str().unwrap().to_owned()))
        .collect();
    let ended: Vec<&Value> = events
        .iter()
        .filter(|e| {
            e["type"].as_str().is_some_and(|t| t.starts_with("tool.") && !matches!(t, "tool.started" | "tool.output"))
        })
        .filter(|e| provider.contains_key(&key(e)))
        .collect();

    let by_outcome: u64 = results[0].as_array().unwrap().iter().map(|r| r["tools"].as_u64().unwrap()).sum();
    assert_eq!(by_outcome, ended.len() as u64, "tools by outcome: every ended tool once");
    let agents: BTreeSet<&str> =
        results[0].as_array().unwrap().iter().map(|r| r["provider"].as_str().unwrap()).collect();
    for expected in ["claude-code", "codex", "gemini-cli", "opencode", "qwen-code"] {
        assert!(agents.contains(expected), "{expected} in {agents:?}");
    }

    let failed: Vec<i64> = ended
        .iter()
        .filter(|e| e["type"] == "tool.failed" && e["payload"]["kind"] == "shell")
        .map(|e| e["payload"]["output"]["exit_code"].as_i64().unwrap_or(-1))
        .collect();
    let rows = results[1].as_array().unwrap();
    assert_eq!(rows.len(), failed.len(), "one row per failed command");
    let codes: Vec<i64> = rows.iter().map(|r| r["exit_code"].as_i64().unwrap_or(-1)).collect();
    assert_eq!(codes.iter().filter(|&&c| c == 4).count(), failed.iter().filter(|&&c| c == 4).count());
    assert!(codes.contains(&4), "the exit4 runs' commands");

    let tokens: u64 = events
        .iter()
        .filter(|e| e["type"] == "usage" && provider.contains_key(&key(e)))
        .filter_map(|e| e["payload"]["input_tokens"].as_u64())
        .sum();
    let summed: u64 = results[2].as_array().unwrap().iter().filter_map(|r| r["input"].as_u64()).sum();
    assert!(tokens > 0 && summed == tokens, "input tokens by model: {summed}, counted {tokens}");

    let report: Value = serde_json::from_slice(&report.stdout).unwrap();
    let runs: u64 = results[3].as_array().unwrap().iter().map(|r| r["runs"].as_u64().unwrap()).sum();
    assert_eq!(runs, report["runs"]["total"].as_u64().unwrap(), "runs by verdict");

    // One type per path. Two paths are free-form on purpose: a tool's input is the agent's
    // own arguments (a command is a string for some agents, an argv array for others), and
    // the redaction counts are a map keyed by rule.
    let free_form = [("tool.started", ".payload.input"), ("summary", ".payload.input.redactions")];
    for (t, paths) in out["mixed"].as_object().unwrap() {
        for p in paths.as_array().unwrap() {
            let p = p.as_str().unwrap();
            assert!(
                free_form.iter().any(|(ft, fp)| ft == t && p.starts_with(fp)),
                "{t}{p} has values of several JSON types across agents"
            );
        }
    }
}
