//! The JSON Schema of `minicode.output.v1` in `schema/` is generated from the event types
//! (`event::schema::generate`) and must be fresh (`BLESS=1 cargo test schema` regenerates
//! it); every canonical line the fixtures hold or the stages write validates against it, and
//! lines that break the contract do not.

use std::path::{Path, PathBuf};

use minicode_output::event::schema;
use serde_json::{json, Value};

use crate::support::*;

fn schema_path() -> PathBuf {
    root().join("schema").join("minicode.output.v1.schema.json")
}

fn validator() -> jsonschema::Validator {
    let schema: Value = serde_json::from_slice(&std::fs::read(schema_path()).expect("the committed schema")).unwrap();
    jsonschema::validator_for(&schema).expect("the schema compiles")
}

/// The first validation error of `line`, if any, with where it is.
fn problem(v: &jsonschema::Validator, line: &Value) -> Option<String> {
    v.iter_errors(line).next().map(|e| format!("{e} at {}", e.instance_path))
}

#[test]
fn committed_schema_is_fresh() {
    let mut text = serde_json::to_string_pretty(&schema::generate()).unwrap();
    text.push('\n');
    if let Err(e) = golden_at(&schema_path(), text.as_bytes()) {
        panic!("stale schema (BLESS=1 cargo test schema):\n{e}");
    }
}

/// Every `*.events.jsonl` under `fixtures/`: normalize's goldens for each provider and the
/// canonical inputs of `project` (whose `--mode jsonl` output is the input byte for byte).
fn canonical_fixtures() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.to_string_lossy().ends_with(".events.jsonl") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&fixture(""), &mut files);
    files.sort();
    files
}

/// Validates every line of `out`, collecting failures as `name:line: problem`.
fn check_lines(v: &jsonschema::Validator, name: &str, out: &[u8], failures: &mut Vec<String>) -> usize {
    let lines = json_lines(out);
    for (i, line) in lines.iter().enumerate() {
        if let Some(p) = problem(v, line) {
            failures.push(format!("{name}:{}: {p}", i + 1));
        }
    }
    lines.len()
}

#[test]
fn every_canonical_golden_line_validates() {
    let v = validator();
    let (mut failures, mut lines) = (Vec::new(), 0);
    let files = canonical_fixtures();
    for path in &files {
        let name = path.strip_prefix(root()).unwrap().display().to_string();
        lines += check_lines(&v, &name, &std::fs::read(path).unwrap(), &mut failures);
    }
    assert!(files.len() > 100 && lines > 1000, "only {} files, {lines} lines were checked", files.len());
    assert!(failures.is_empty(), "{} lines do not validate:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn scrub_and_truncate_output_validates() {
    let v = validator();
    let mut failures = Vec::new();
    for case in crate::project::CASES {
        let input = read(&format!("project/{case}.events.jsonl"));
        let scrubbed = run("scrub", &[], &input);
        check_lines(&v, &format!("scrub < {case}"), &scrubbed, &mut failures);
        // A small bound, so markers and `truncated: true` are written too.
        let bounded = run("truncate", &["--max-bytes", "16"], &scrubbed);
        check_lines(&v, &format!("scrub | truncate < {case}"), &bounded, &mut failures);
    }
    assert!(failures.is_empty(), "{} lines do not validate:\n{}", failures.len(), failures.join("\n"));
}

/// A valid `tool.failed` line from the hand-written kitchen-sink stream.
fn tool_failed() -> Value {
    let events = json_lines(&read("project/kitchen-sink.events.jsonl"));
    only(&events, "tool.failed").clone()
}

#[test]
fn schema_rejects_lines_that_break_the_contract() {
    let v = validator();
    let good = tool_failed();
    assert_eq!(problem(&v, &good), None);
    let summary = json_lines(&read("project/kitchen-sink.events.jsonl")).pop().unwrap();
    assert_eq!(problem(&v, &summary), None);

    let mut bad: Vec<(&str, Value)> = Vec::new();
    let mut with = |why: &'static str, base: &Value, edit: &dyn Fn(&mut Value)| {
        let mut e = base.clone();
        edit(&mut e);
        bad.push((why, e));
    };
    with("another schema version", &good, &|e| e["schema"] = json!("minicode.output.v2"));
    with("a tool terminal without toolCallId", &good, &|e| {
        e["payload"].as_object_mut().unwrap().remove("toolCallId");
    });
    with("a tool terminal without name", &good, &|e| {
        e["payload"].as_object_mut().unwrap().remove("name");
    });
    with("no payload", &good, &|e| {
        e.as_object_mut().unwrap().remove("payload");
    });
    with("no eventId", &good, &|e| {
        e.as_object_mut().unwrap().remove("eventId");
    });
    with("a status that is not one", &good, &|e| e["status"] = json!("done"));
    with("a status its type contradicts", &good, &|e| e["status"] = json!("completed"));
    with("a tool terminal without status", &good, &|e| {
        e.as_object_mut().unwrap().remove("status");
    });
    with("a tool kind that is not one", &good, &|e| e["payload"]["kind"] = json!("magic"));
    with("an unknown payload field", &good, &|e| e["payload"]["exitCode"] = json!(101));
    with("null for an absent field", &good, &|e| e["payload"]["durationMs"] = Value::Null);
    with("an unknown top-level field", &good, &|e| e["ok"] = json!(false));
    with("an unknown projection", &good, &|e| e["visibility"] = json!(["normal", "loud"]));
    with("a timestamp without milliseconds", &good, &|e| e["timestamp"] = json!("2026-01-01T00:00:13Z"));
    with("a negative turn", &good, &|e| e["turnId"] = json!(-1));
    with("a string exit code", &good, &|e| e["payload"]["output"]["exit_code"] = json!("101"));
    with("a summary without ok", &summary, &|e| {
        e.as_object_mut().unwrap().remove("ok");
    });
    with("a summary without tool counts", &summary, &|e| {
        e["payload"].as_object_mut().unwrap().remove("tools");
    });
    with("a summary whose status is not terminal", &summary, &|e| e["status"] = json!("running"));
    for (why, line) in &bad {
        assert!(problem(&v, line).is_some(), "the schema accepts {why}: {line}");
    }
}

#[test]
fn unknown_types_validate_with_any_payload_and_extra_fields() {
    let v = validator();
    let mut e = tool_failed();
    e["type"] = json!("x.vendor.thing");
    e["payload"] = json!({"anything": [1, {"goes": null}]});
    e["vendor"] = json!({"name": "acme"});
    assert_eq!(problem(&v, &e), None);
    // The envelope is still checked.
    e["severity"] = json!("loud");
    assert!(problem(&v, &e).is_some(), "an unknown type's envelope is not checked: {e}");
}
