//! The exports the ecosystem reads: `otlp`, `atif` and `ag-ui`, checked by the formats' own
//! published definitions (OTLP protobuf messages, Harbor's ATIF models as JSON Schema,
//! AG-UI's event models) and against the canonical tools of real captures, one for one.

use std::collections::{BTreeMap, HashSet};

use serde_json::Value;

use super::{case_input, CASES};
use crate::support::*;

fn project(args: &[&str], input: &[u8]) -> Vec<u8> {
    let out = bin("project").args(args).write_stdin(input.to_vec()).output().expect("runs");
    assert!(out.status.success(), "project {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// The canonical captures of Claude Code, Codex, ACP agents and OpenCode.
fn captures() -> Vec<(String, Vec<u8>)> {
    let mut v = Vec::new();
    for dir in ["claude", "codex", "acp", "opencode"] {
        for input in inputs(dir) {
            let events = input.replace(".input.jsonl", ".events.jsonl");
            v.push((events.clone(), read(&events)));
        }
    }
    v
}

/// The cases and the captures.
fn all_inputs() -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = CASES.iter().map(|c| (c.to_string(), case_input(c))).collect();
    v.extend(captures());
    v
}

/// Runs a checker of tests/support on `input`; returns what it printed (a count).
fn python_check(python: &std::path::Path, script: &str, input: Vec<u8>) -> u64 {
    let out = std::process::Command::new(python)
        .arg(root().join("tests/support").join(script))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().expect("piped").write_all(&input)?;
            child.wait_with_output()
        })
        .expect("the checker runs");
    assert!(out.status.success(), "{script}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().parse().expect("a count")
}

#[test]
fn otlp_parses_into_the_official_protobuf_messages() {
    let Some(python) = python_with(&["google.protobuf", "opentelemetry.proto.collector.trace.v1.trace_service_pb2"])
    else {
        return;
    };
    let mut all = Vec::new();
    for (_, input) in all_inputs() {
        all.extend(project(&["--mode", "otlp"], &input));
        all.extend(project(&["--mode", "otlp", "--with-content"], &input));
    }
    let spans = python_check(&python, "otlp_check.py", all);
    assert!(spans > 300, "only {spans} spans were checked");
}

#[test]
fn ag_ui_events_validate_against_the_published_models() {
    let Some(python) = python_with(&["ag_ui.core", "pydantic"]) else { return };
    let mut all = Vec::new();
    for (_, input) in all_inputs() {
        all.extend(project(&["--mode", "ag-ui"], &input));
        all.extend(project(&["--mode", "ag-ui", "--ag-ui-format", "jsonl"], &input));
    }
    let events = python_check(&python, "ag_ui_check.py", all);
    assert!(events > 2000, "only {events} events were checked");
}

/// A run ends at its latest event: not at the time the input was read (an archive's run
/// would end days after it did, or, with SOURCE_DATE_EPOCH, before it started), nor at the
/// next run's first event.
#[test]
fn an_ag_ui_run_ends_at_its_latest_event() {
    for (name, input) in all_inputs() {
        let mut latest = None;
        for e in json_lines(&project(&["--mode", "ag-ui", "--ag-ui-format", "jsonl"], &input)) {
            let at = e["timestamp"].as_i64();
            match e["type"].as_str().unwrap() {
                "RUN_STARTED" => latest = at,
                "RUN_FINISHED" | "RUN_ERROR" => assert_eq!(at, latest, "{name}: {e}"),
                // The summary's own time, said as it is.
                "RAW" if e["event"]["type"] == "summary" => {}
                _ => latest = latest.max(at),
            }
        }
    }
}

/// The documents of an `atif` output: one object, or an array of them.
fn documents(out: &[u8]) -> Vec<Value> {
    match serde_json::from_slice(out).expect("one JSON document") {
        Value::Array(docs) => docs,
        doc => vec![doc],
    }
}

/// The rules Harbor's models check in code, beyond their schema.
fn harbor_rules(name: &str, t: &Value) {
    let steps = t["steps"].as_array().unwrap();
    for (i, step) in steps.iter().enumerate() {
        assert_eq!(step["step_id"].as_u64(), Some(i as u64 + 1), "{name}: step ids are sequential from 1");
        if step["source"] != "agent" {
            for f in ["model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics"] {
                assert!(step.get(f).is_none(), "{name}: {f} on a {} step", step["source"]);
            }
        }
        let calls: HashSet<&str> = step["tool_calls"]
            .as_array()
            .map(|c| c.iter().map(|c| c["tool_call_id"].as_str().unwrap()).collect())
            .unwrap_or_default();
        for r in step["observation"]["results"].as_array().into_iter().flatten() {
            if let Some(id) = r["source_call_id"].as_str() {
                assert!(calls.contains(id), "{name}: result for {id} is not in its step's calls");
            }
        }
    }
    let subs = t["subagent_trajectories"].as_array().cloned().unwrap_or_default();
    let ids: HashSet<&str> = subs.iter().map(|s| s["trajectory_id"].as_str().expect("embedded ids")).collect();
    assert_eq!(ids.len(), subs.len(), "{name}: embedded trajectory ids are unique");
    for r in all_results(t) {
        for link in r["subagent_trajectory_ref"].as_array().into_iter().flatten() {
            assert!(ids.contains(link["trajectory_id"].as_str().unwrap()), "{name}: unresolved {link}");
        }
    }
}

/// Every observation result of a trajectory and its embedded ones.
fn all_results(t: &Value) -> Vec<&Value> {
    let mut v: Vec<&Value> = Vec::new();
    let mut docs = vec![t];
    docs.extend(t["subagent_trajectories"].as_array().into_iter().flatten());
    for d in docs {
        for step in d["steps"].as_array().into_iter().flatten() {
            v.extend(step["observation"]["results"].as_array().into_iter().flatten());
        }
    }
    v
}

/// The content attributes of `--with-content` hold what the conventions' own schemas of
/// them require (an output message says why it finished).
#[test]
fn otlp_messages_validate_against_the_conventions_schemas() {
    let validator = |name: &str| {
        let schema: Value = serde_json::from_slice(&read(&format!("otel-genai-schema/{name}.json"))).unwrap();
        jsonschema::validator_for(&schema).expect("the schema compiles")
    };
    let schemas = [
        ("gen_ai.input.messages", validator("gen-ai-input-messages")),
        ("gen_ai.output.messages", validator("gen-ai-output-messages")),
    ];
    let mut checked = [0, 0];
    for (name, input) in all_inputs() {
        for span in spans(&project(&["--mode", "otlp", "--with-content"], &input)) {
            for (i, (key, validator)) in schemas.iter().enumerate() {
                let Some(v) = attr(&span, key) else { continue };
                let messages: Value = serde_json::from_str(v["stringValue"].as_str().unwrap()).unwrap();
                if let Some(e) = validator.iter_errors(&messages).next() {
                    panic!("{name}: {key} does not validate ({e} at {})", e.instance_path);
                }
                checked[i] += 1;
            }
        }
    }
    assert!(checked.iter().all(|&n| n > 20), "{checked:?}");
}

/// A run known only by its summary (the agent failed before it said anything of its
/// session) is a trajectory of its failure, which the schema accepts, not an empty array.
#[test]
fn atif_keeps_a_run_known_only_by_its_failure() {
    let schema: Value = serde_json::from_slice(&read("atif-schema/trajectory.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the ATIF schema compiles");
    for case in
        ["opencode/err500", "qwen/0.24.4/cancel", "opencode/cancel-early-startup", "acp/auggie-offline-print-json"]
    {
        let events = read(&format!("{case}.events.jsonl"));
        let summary = json_lines(&events).pop().unwrap();
        let doc: Value = serde_json::from_slice(&project(&["--mode", "atif"], &events)).unwrap();
        assert!(validator.is_valid(&doc), "{case}: {doc}");
        let steps = doc["steps"].as_array().unwrap();
        assert!(!steps.is_empty(), "{case}");
        if summary["error"].is_object() {
            assert!(
                steps.iter().any(|s| s["extra"]["error"]["category"] == summary["error"]["category"]),
                "{case}: {doc}"
            );
        }
    }
}

/// A canonical event whose time is not a date (hand-made input) gives a step with no
/// timestamp, never one ATIF's ISO 8601 field would refuse.
#[test]
fn atif_writes_only_dates_as_timestamps() {
    let mut input = Vec::new();
    for mut ev in json_lines(&case_input("codex-exit4")) {
        ev["timestamp"] = "yesterday".into();
        input.extend_from_slice(format!("{ev}\n").as_bytes());
    }
    let doc = &documents(&project(&["--mode", "atif"], &input))[0];
    let steps = doc["steps"].as_array().unwrap();
    assert!(!steps.is_empty());
    assert!(steps.iter().all(|s| s.get("timestamp").is_none()), "{doc}");
}

/// A turn's usage is its last agent step's metrics whichever comes first: a session file
/// tells each message's usage before its text. The steps add up to `final_metrics`.
#[test]
fn atif_steps_carry_their_turns_usage_whatever_the_order() {
    for run in ["claude-code-2.1.332/exit4", "copilot-1.0.102/exit4", "qwen-code-0.24.4/exit4", "codex-0.171.0/resume"]
    {
        let events = bin("normalize").arg(fixture(&format!("sessions/{run}/home"))).output().unwrap().stdout;
        for doc in documents(&project(&["--mode", "atif"], &events)) {
            let steps = doc["steps"].as_array().unwrap();
            let sum: u64 = steps.iter().filter_map(|s| s["metrics"]["prompt_tokens"].as_u64()).sum();
            let total = doc["final_metrics"]["total_prompt_tokens"].as_u64();
            assert!(total.is_some_and(|t| t > 0), "{run}: {total:?}");
            assert_eq!(Some(sum), total, "{run}: the steps' prompt tokens");
            for s in steps.iter().filter(|s| !s["metrics"].is_null()) {
                assert_eq!(s["source"], "agent", "{run}: metrics on a {} step", s["source"]);
            }
        }
    }
}

#[test]
fn atif_validates_against_harbors_schema_and_rules() {
    let schema: Value = serde_json::from_slice(&read("atif-schema/trajectory.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the ATIF schema compiles");
    let mut checked = 0;
    for (name, input) in all_inputs() {
        for doc in documents(&project(&["--mode", "atif"], &input)) {
            if let Some(e) = validator.iter_errors(&doc).next() {
                panic!("{name}: not an ATIF trajectory ({e} at {})", e.instance_path);
            }
            assert_eq!(doc["schema_version"], "ATIF-v1.8", "{name}");
            harbor_rules(&name, &doc);
            for sub in doc["subagent_trajectories"].as_array().into_iter().flatten() {
                harbor_rules(&name, sub);
            }
            checked += 1;
        }
    }
    assert!(checked > 50, "only {checked} trajectories were checked");
}

#[test]
fn atif_writes_one_document_per_session_and_an_array_for_several() {
    assert!(serde_json::from_slice::<Value>(&project(&["--mode", "atif"], &case_input("codex-exit4")))
        .unwrap()
        .is_object());
    let two: Value = serde_json::from_slice(&project(&["--mode", "atif"], &case_input("two-sessions"))).unwrap();
    let ids: Vec<&str> = two.as_array().unwrap().iter().map(|d| d["session_id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["s1", "s2"]);
    assert_eq!(project(&["--mode", "atif"], b""), b"[]\n");
}

#[test]
fn atif_leaves_unknown_figures_absent() {
    // two-sessions has no usage at all: no token or cost figure may appear, not even 0.
    let out = String::from_utf8(project(&["--mode", "atif"], &case_input("two-sessions"))).unwrap();
    for f in ["prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd"] {
        assert!(!out.contains(f), "{f} appears without usage: {out}");
    }
    let doc = &documents(&project(&["--mode", "atif"], &case_input("claude-subagent")))[0];
    assert!(doc["final_metrics"]["total_prompt_tokens"].as_u64().unwrap() > 0);
    let sub = &doc["subagent_trajectories"][0];
    let link = all_results(doc).into_iter().find_map(|r| r["subagent_trajectory_ref"][0]["trajectory_id"].as_str());
    assert_eq!(link, sub["trajectory_id"].as_str(), "the spawning call names the child trajectory");
}

/// A tool call as every export must carry it: session, id, outcome, exit code.
type Tool = (String, String, String, Option<i64>);

fn canonical_tools(input: &[u8]) -> Vec<Tool> {
    let mut v: Vec<Tool> = json_lines(input)
        .iter()
        .filter_map(|e| {
            let outcome = e["type"].as_str()?.strip_prefix("tool.")?;
            if outcome == "started" || outcome == "output" {
                return None;
            }
            let p = &e["payload"];
            Some((s(&e["sessionId"]), s(&p["toolCallId"]), outcome.to_owned(), p["output"]["exit_code"].as_i64()))
        })
        .collect();
    v.sort();
    v
}

fn s(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_owned()
}

fn attr<'a>(span: &'a Value, key: &str) -> Option<&'a Value> {
    span["attributes"].as_array()?.iter().find(|a| a["key"] == key).map(|a| &a["value"])
}

fn spans(out: &[u8]) -> Vec<Value> {
    json_lines(out)
        .into_iter()
        .flat_map(|r| {
            r["resourceSpans"][0]["scopeSpans"][0]["spans"].as_array().cloned().expect("spans in every request")
        })
        .collect()
}

fn otlp_tools(out: &[u8]) -> Vec<Tool> {
    let mut v: Vec<Tool> = spans(out)
        .iter()
        .filter(|sp| attr(sp, "gen_ai.operation.name").map(|v| &v["stringValue"]) == Some(&"execute_tool".into()))
        .map(|sp| {
            let a = |k: &str| attr(sp, k).map(|v| s(&v["stringValue"])).unwrap_or_default();
            let exit = attr(sp, "process.exit.code").and_then(|v| v["intValue"].as_str()?.parse().ok());
            (a("gen_ai.conversation.id"), a("gen_ai.tool.call.id"), a("minicode.outcome"), exit)
        })
        .collect();
    v.sort();
    v
}

fn ag_ui_tools(out: &[u8]) -> Vec<Tool> {
    let text = String::from_utf8(out.to_vec()).unwrap();
    let mut session = String::new();
    let mut v = Vec::new();
    for frame in text.split_terminator("\n\n") {
        let e: Value = serde_json::from_str(frame.strip_prefix("data: ").expect("a data frame")).unwrap();
        match e["type"].as_str().unwrap() {
            "RUN_STARTED" => session = s(&e["threadId"]),
            "TOOL_CALL_RESULT" => v.push((
                session.clone(),
                s(&e["toolCallId"]),
                s(&e["metadata"]["outcome"]),
                e["metadata"]["exitCode"].as_i64(),
            )),
            _ => {}
        }
    }
    v.sort();
    v
}

fn atif_tools(out: &[u8]) -> Vec<Tool> {
    let mut v = Vec::new();
    for doc in documents(out) {
        for r in all_results(&doc) {
            v.push((
                s(&doc["session_id"]),
                s(&r["source_call_id"]),
                s(&r["extra"]["outcome"]),
                r["extra"]["exit_code"].as_i64(),
            ));
        }
    }
    v.sort();
    v
}

#[test]
fn every_export_carries_the_canonical_tools_one_for_one() {
    let mut per_dir: BTreeMap<String, usize> = BTreeMap::new();
    let mut outcomes = HashSet::new();
    for (name, input) in captures() {
        let tools = canonical_tools(&input);
        assert_eq!(otlp_tools(&project(&["--mode", "otlp"], &input)), tools, "{name}: otlp");
        assert_eq!(ag_ui_tools(&project(&["--mode", "ag-ui"], &input)), tools, "{name}: ag-ui");
        assert_eq!(atif_tools(&project(&["--mode", "atif"], &input)), tools, "{name}: atif");
        *per_dir.entry(name.split('/').next().unwrap().to_owned()).or_default() += tools.len();
        outcomes.extend(tools.iter().map(|t| t.2.clone()));
    }
    for dir in ["claude", "codex", "acp", "opencode"] {
        assert!(per_dir.get(dir).copied().unwrap_or(0) >= 5, "too few tools from {dir}: {per_dir:?}");
    }
    for o in ["completed", "failed", "denied", "cancelled"] {
        assert!(outcomes.contains(o), "no {o} tool in the captures: {outcomes:?}");
    }
}

#[test]
fn otlp_spans_form_one_tree_per_session_with_stable_ids() {
    let input = case_input("two-sessions");
    let first = project(&["--mode", "otlp"], &input);
    assert_eq!(first, project(&["--mode", "otlp"], &input), "ids and output are deterministic");
    let all = spans(&first);
    let traces: HashSet<String> = all.iter().map(|sp| s(&sp["traceId"])).collect();
    assert_eq!(traces.len(), 2, "one trace per session");
    for trace in traces {
        let mine: Vec<&Value> = all.iter().filter(|sp| sp["traceId"] == trace.as_str()).collect();
        let ids: HashSet<&str> = mine.iter().map(|sp| sp["spanId"].as_str().unwrap()).collect();
        assert_eq!(ids.len(), mine.len(), "span ids are unique");
        let roots: Vec<&&Value> = mine.iter().filter(|sp| sp.get("parentSpanId").is_none()).collect();
        assert_eq!(roots.len(), 1, "one root span per trace");
        assert_eq!(roots[0]["kind"], 3, "the session is a CLIENT span");
        for sp in &mine {
            if let Some(p) = sp["parentSpanId"].as_str() {
                assert!(ids.contains(p), "{} has a parent outside its trace", sp["name"]);
            }
        }
    }
    // The subagent: an invoke_agent span under the Agent tool, the child's Bash under it.
    let sub = spans(&project(&["--mode", "otlp"], &case_input("claude-subagent")));
    let find = |name: &str| sub.iter().find(|sp| sp["name"].as_str().unwrap().starts_with(name)).unwrap();
    let (agent_tool, child, bash) = (find("execute_tool Agent"), find("invoke_agent Agent"), find("execute_tool Bash"));
    assert_eq!(child["parentSpanId"], agent_tool["spanId"]);
    assert_eq!(bash["parentSpanId"], child["spanId"]);
}

/// Times the OTLP fields cannot hold (fixed64 nanoseconds: 1970 to 2554) are clamped, never
/// written as numbers out of their range.
#[test]
fn otlp_times_stay_within_fixed64() {
    let input =
        String::from_utf8(case_input("codex-exit4")).unwrap().replace("\"timestamp\":\"2026-", "\"timestamp\":\"2600-");
    let out = spans(&project(&["--mode", "otlp"], input.as_bytes()));
    assert!(!out.is_empty());
    for sp in out {
        for key in ["startTimeUnixNano", "endTimeUnixNano"] {
            assert!(s(&sp[key]).parse::<u64>().is_ok(), "{key}: {}", sp[key]);
        }
    }
}

#[test]
fn otlp_status_and_attributes_follow_the_outcome() {
    let out = project(&["--mode", "otlp"], &case_input("codex-exit4"));
    let failed = spans(&out).into_iter().find(|sp| attr(sp, "process.exit.code").is_some()).unwrap();
    assert_eq!(attr(&failed, "process.exit.code").unwrap()["intValue"], "4", "int64 as a string");
    assert_eq!(failed["status"]["code"], 2);
    assert!(attr(&failed, "error.type").is_some());
    let kinds: HashSet<String> = spans(&project(&["--mode", "otlp"], &case_input("two-sessions")))
        .iter()
        .filter_map(|sp| attr(sp, "minicode.outcome").map(|v| s(&v["stringValue"])))
        .collect();
    for o in ["cancelled", "interrupted", "failed", "completed"] {
        assert!(kinds.contains(o), "{o} is not kept apart: {kinds:?}");
    }
    for line in json_lines(&out) {
        assert_eq!(line["resourceSpans"][0]["scopeSpans"][0]["schemaUrl"], "https://opentelemetry.io/schemas/1.41.0");
    }
}

/// A child agent whose events come after the call that spawned it ended (a background
/// agent), or whose call the input never showed (Qwen Code's memory extractor): its OTLP span
/// is written under that call's span or the session's, once; its AG-UI subagent run ends
/// before the run does.
#[test]
fn a_child_agent_that_outlives_its_call_is_closed_in_every_export() {
    let home = |run: &str| {
        let out = bin("normalize").arg(fixture(&format!("sessions/{run}/home"))).output().unwrap();
        out.stdout
    };
    let inputs = [
        run("normalize", &[], &read("acp/claude-agent-acp-0.101.0-subagent.input.jsonl")),
        home("claude-code-2.1.332/subagent"),
        home("qwen-code-0.24.4/constructed-deny"),
    ];
    for (i, events) in inputs.iter().enumerate() {
        let spans: Vec<Value> = json_lines(&project(&["--mode", "otlp"], events))
            .iter()
            .flat_map(|r| r["resourceSpans"][0]["scopeSpans"][0]["spans"].as_array().unwrap().clone())
            .collect();
        let ids: Vec<&str> = spans.iter().map(|s| s["spanId"].as_str().unwrap()).collect();
        assert_eq!(ids.iter().collect::<HashSet<_>>().len(), ids.len(), "input {i}: a span id twice");
        assert!(
            spans.iter().any(|s| s["name"].as_str().unwrap().starts_with("invoke_agent")
                && s["attributes"].to_string().contains("minicode.parent_tool_call_id")),
            "input {i}: a child agent's span"
        );
        for s in &spans {
            if let Some(p) = s["parentSpanId"].as_str() {
                assert!(ids.contains(&p), "input {i}: {} has no parent span in its trace", s["name"]);
            }
        }
        let mut open = HashSet::new();
        for e in json_lines(&project(&["--mode", "ag-ui", "--ag-ui-format", "jsonl"], events)) {
            let id = e["subagentRunId"].as_str().unwrap_or_default().to_owned();
            match e["type"].as_str().unwrap() {
                "SUBAGENT_STARTED" => assert!(open.insert(id), "input {i}: started twice"),
                "SUBAGENT_FINISHED" | "SUBAGENT_ERROR" => assert!(open.remove(&id), "input {i}: ended unstarted"),
                "RUN_FINISHED" | "RUN_ERROR" => assert!(open.is_empty(), "input {i}: {open:?} open at the run's end"),
                _ => {}
            }
        }
    }
}

/// A child agent's span is named by the task the model wrote for it only with content:
/// without, by the tool that spawned it, so no word of the model's input is exported.
#[test]
fn otlp_names_a_child_agent_by_its_task_only_with_content() {
    let events = run("normalize", &[], &read("claude/2.1.332/subagent.input.jsonl"));
    let task = "Run a command in a subagent";
    assert!(String::from_utf8_lossy(&events).contains(task), "the task is in the events");
    let plain = String::from_utf8(project(&["--mode", "otlp"], &events)).unwrap();
    assert!(!plain.contains(task), "the task without --with-content");
    assert!(plain.contains("\"invoke_agent Agent\""), "the child agent's span");
    let rich = String::from_utf8(project(&["--mode", "otlp", "--with-content"], &events)).unwrap();
    assert!(rich.contains(&format!("\"invoke_agent {task}\"")), "the task with --with-content");
}

#[test]
fn otlp_content_is_opt_in_and_scrubbed() {
    const SECRET: &str = "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";
    let input = case_input("kitchen-sink");
    let plain = String::from_utf8(project(&["--mode", "otlp"], &input)).unwrap();
    for key in
        ["gen_ai.tool.call.arguments", "gen_ai.tool.call.result", "gen_ai.input.messages", "gen_ai.output.messages"]
    {
        assert!(!plain.contains(key), "{key} without --with-content");
    }
    let rich = String::from_utf8(project(&["--mode", "otlp", "--with-content"], &input)).unwrap();
    for key in ["gen_ai.tool.call.arguments", "gen_ai.tool.call.result", "gen_ai.output.messages"] {
        assert!(rich.contains(key), "no {key} with --with-content");
    }
    let leaky = format!(
        "{}\n",
        r#"{"schema":"minicode.output.v1","eventId":"s1:1:1","type":"turn.started","timestamp":"2026-01-01T00:00:00.000Z","sessionId":"s1","turnId":1,"source":"agent","severity":"info","status":"started","visibility":["machine"],"rawRef":{"line":1},"payload":{"prompt":"use SECRET"}}"#
            .replace("SECRET", SECRET)
    );
    let out = String::from_utf8(project(&["--mode", "otlp", "--with-content"], leaky.as_bytes())).unwrap();
    assert!(out.contains("gen_ai.input.messages") && !out.contains(SECRET), "{out}");
    let usage = bin("project").args(["--mode", "jsonl", "--with-content"]).write_stdin(input).assert();
    usage.code(2);
}
