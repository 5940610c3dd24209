//! Hostile and broken input: every case must end in a complete, valid stream with a
//! summary last, every non-blank input line referenced, and a clear stderr message where
//! input was rejected.

use std::collections::BTreeSet;

use crate::support::*;

/// Runs normalize and checks the invariants every output must keep; returns the events.
fn normalize_checked(input: &[u8], args: &[&str]) -> (Vec<serde_json::Value>, String, i32) {
    let out = bin("normalize").args(args).write_stdin(input.to_vec()).output().unwrap();
    let code = out.status.code().expect("exited normally");
    assert!(code == 0 || code == 1, "exit {code}");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(out.stdout.ends_with(b"\n"), "output ends with a whole line");
    let events = json_lines(&out.stdout);
    let summaries: Vec<usize> =
        events.iter().enumerate().filter(|(_, e)| e["type"] == "summary").map(|(i, _)| i).collect();
    assert_eq!(summaries, [events.len() - 1], "exactly one summary, last");
    let mut refs = BTreeSet::new();
    for e in &events {
        let first = e["rawRef"]["line"].as_u64().unwrap();
        refs.extend(first..=e["rawRef"]["endLine"].as_u64().unwrap_or(first));
    }
    let text =
        if input.starts_with(b"\xff\xfe") || input.starts_with(b"\xfe\xff") { Vec::new() } else { input.to_vec() };
    for (n, line) in text.split(|&b| b == b'\n').enumerate() {
        // Blank: spaces and tabs, and the `\r` of a CRLF ending.
        if !line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
            assert!(refs.contains(&(n as u64 + 1)), "line {} is referenced by no event", n + 1);
        }
    }
    (events, stderr, code)
}

fn types(events: &[serde_json::Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

#[test]
fn whitespace_only_is_an_input_error() {
    let (events, stderr, code) = normalize_checked(b" \n\t\n\r\n", &[]);
    assert_eq!(types(&events), ["summary"]);
    assert_eq!(events[0]["error"]["category"], "INPUT_ERROR");
    assert_eq!(code, 1);
    assert!(stderr.contains("no agent events"), "{stderr}");
}

#[test]
fn other_white_space_is_content_kept_as_raw() {
    // A form feed or a no-break space is not nothing: the line is kept (cleaned) as raw.
    let (events, stderr, _) = normalize_checked(b"\x0c\n\xc2\xa0\n \t\n", &[]);
    assert_eq!(types(&events), ["raw", "raw", "summary"]);
    assert_eq!((&events[0]["payload"]["line"], &events[1]["payload"]["line"]), (&"".into(), &"\u{a0}".into()));
    assert!(stderr.contains("line 1") && stderr.contains("line 2") && !stderr.contains("line 3"), "{stderr}");
}

#[test]
fn binary_and_nul_bytes_become_clean_raw_events() {
    let mut input: Vec<u8> = (0u8..=255).filter(|&b| b != b'\n').collect();
    input.extend_from_slice(b"\n{\"type\":\0\"x\"}\n");
    let (events, stderr, code) = normalize_checked(&input, &[]);
    assert_eq!(code, 1);
    assert!(stderr.contains("line 1") && stderr.contains("line 2"), "{stderr}");
    let raws: Vec<&str> =
        events.iter().filter(|e| e["type"] == "raw").map(|e| e["payload"]["line"].as_str().unwrap()).collect();
    assert_eq!(raws.len(), 2);
    assert!(raws.iter().all(|r| !r.chars().any(|c| c.is_control() && c != '\n' && c != '\t')), "{raws:?}");
    assert!(raws[0].contains("ABCDEFGHIJ"), "visible bytes are kept");
}

#[test]
fn utf16_with_a_bom_is_decoded() {
    let text = read("codex/text.input.jsonl");
    let mut input = vec![0xff, 0xfe];
    for u in String::from_utf8(text).unwrap().encode_utf16() {
        input.extend_from_slice(&u.to_le_bytes());
    }
    let (events, _, code) = normalize_checked(&input, &[]);
    assert_eq!(code, 0);
    assert_eq!(events.last().unwrap()["ok"], true);
    assert!(types(&events).contains(&"text"));
}

/// Files concatenated (`cat a.jsonl b.jsonl`) each with its byte order mark, UTF-8 or UTF-16,
/// or a doubled one: every mark that starts a line is dropped, so no line turns raw.
#[test]
fn byte_order_marks_that_start_lines_are_dropped() {
    let text = String::from_utf8(read("codex/text.input.jsonl")).unwrap();
    let (plain, _, _) = normalize_checked(text.as_bytes(), &[]);
    let lines: Vec<&str> = text.lines().collect();
    let marked: String = lines.iter().map(|l| format!("\u{feff}\u{feff}{l}\n")).collect();
    let utf16: Vec<u8> = std::iter::once('\u{feff}')
        .chain(marked.chars())
        .collect::<String>()
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect();
    for input in [marked.into_bytes(), utf16] {
        let (events, _, code) = normalize_checked(&input, &[]);
        assert_eq!(code, 0, "{events:?}");
        assert_eq!(events, plain);
    }
}

/// A blank id (empty, or white space once cleaned) is one session, as any id is, named as a
/// session without one is: a session id is never empty (the schema says so). Every line of
/// a run naming it is that one session.
#[test]
fn a_blank_session_id_is_one_named_session() {
    let input = b"{\"type\":\"thread.started\",\"thread_id\":\"\\u0001\\t\"}\n{\"type\":\"turn.started\"}\n{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}\n";
    let (events, _, _) = normalize_checked(input, &[]);
    assert!(events.iter().all(|e| e["sessionId"] == "s1"), "{events:?}");
    let queued = b"{\"type\":\"queue-operation\",\"operation\":\"enqueue\",\"timestamp\":\"2026-12-01T18:57:35.446Z\",\"sessionId\":\"\",\"content\":\"hi\"}\n";
    let (events, _, _) = normalize_checked(queued, &[]);
    assert!(events.iter().all(|e| e["sessionId"] == "s1"), "{events:?}");
    // OpenCode names the session on every line.
    let text = String::from_utf8(read("opencode/text.input.jsonl")).unwrap();
    let id = &text[text.find("\"sessionID\":\"").unwrap() + 13..];
    let id = &id[..id.find('"').unwrap()];
    let (plain, _, _) = normalize_checked(text.as_bytes(), &[]);
    let (blank, _, _) = normalize_checked(text.replace(id, "").as_bytes(), &[]);
    assert!(blank.iter().all(|e| e["sessionId"] == "s1"), "{blank:?}");
    let (a, b) = (plain.last().unwrap(), blank.last().unwrap());
    assert_eq!((&b["ok"], &b["status"], &b["payload"]["turns"]), (&a["ok"], &a["status"], &a["payload"]["turns"]));
}

#[test]
fn deeply_nested_json_is_raw_not_a_crash() {
    let mut line = "[".repeat(10_000);
    line.push_str(&"]".repeat(10_000));
    let input = format!(
        "{{\"type\":\"thread.started\",\"thread_id\":\"t\"}}\n{line}\n{{\"x\":{}}}\n",
        "{\"a\":".repeat(10_000) + "1" + &"}".repeat(10_000)
    );
    let (events, _, _) = normalize_checked(input.as_bytes(), &[]);
    assert_eq!(events.iter().filter(|e| e["type"] == "raw").count(), 2);
}

#[test]
fn an_oversized_line_becomes_a_raw_event_and_reading_goes_on() {
    let mut input = b"{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n{\"type\":\"turn.started\"}\n{\"type\":\"item.completed\",\"item\":{\"id\":\"a\",\"type\":\"agent_message\",\"text\":\"".to_vec();
    input.extend(std::iter::repeat_n(b'x', 3_000_000));
    input.extend_from_slice(b"\"}}\n{\"type\":\"turn.completed\"}\n");
    let (events, stderr, code) = normalize_checked(&input, &["--max-line-bytes", "1000000"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("line 3") && stderr.contains("over the line limit"), "{stderr}");
    let raw = events.iter().find(|e| e["type"] == "raw").unwrap();
    assert_eq!(raw["payload"]["reason"], "oversized");
    assert!(types(&events).contains(&"turn.completed"));
    assert_eq!(events.last().unwrap()["payload"]["input"]["oversized"], 1);
}

#[test]
fn a_hundred_megabyte_line_is_bounded() {
    let mut input = b"{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n{\"type\":\"turn.started\"}\n{\"type\":\"item.completed\",\"item\":{\"id\":\"c\",\"type\":\"command_execution\",\"command\":\"yes\",\"aggregated_output\":\"".to_vec();
    input.extend(std::iter::repeat_n(b'y', 100_000_000));
    input.extend_from_slice(b"END\",\"exit_code\":0,\"status\":\"completed\"}}\n{\"type\":\"turn.completed\"}\n");
    let (events, _, code) = normalize_checked(&input, &["--max-line-bytes", "134217728"]);
    assert_eq!(code, 0);
    let done = events.iter().find(|e| e["type"] == "tool.completed").unwrap();
    let stdout = done["payload"]["output"]["stdout"].as_str().unwrap();
    assert!(stdout.len() <= 256 * 1024 && stdout.ends_with("END"));
    assert_eq!(done["payload"]["output"]["truncated"], true);
}

#[test]
fn duplicated_and_out_of_order_events_give_one_lifecycle() {
    let input = br#"{"type":"thread.started","thread_id":"t"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"c","type":"command_execution","command":"ls","aggregated_output":"a\n","exit_code":0,"status":"completed"}}
{"type":"item.started","item":{"id":"c","type":"command_execution","command":"ls","aggregated_output":"","status":"in_progress"}}
{"type":"item.completed","item":{"id":"c","type":"command_execution","command":"ls","aggregated_output":"a\n","exit_code":2,"status":"failed"}}
{"type":"turn.completed"}
{"type":"turn.completed"}
"#;
    let (events, _, _) = normalize_checked(input, &[]);
    assert_eq!(
        types(&events),
        ["session.started", "turn.started", "tool.started", "tool.completed", "turn.completed", "summary"]
    );
}

#[test]
fn two_sessions_interleaved_keep_their_own_ids_and_turns() {
    let a = read("claude/exit4.input.jsonl");
    let b = read("claude/text.input.jsonl");
    let (la, lb): (Vec<&[u8]>, Vec<&[u8]>) = (a.split(|&c| c == b'\n').collect(), b.split(|&c| c == b'\n').collect());
    let mut input = Vec::new();
    for i in 0..la.len().max(lb.len()) {
        for l in [la.get(i), lb.get(i)].into_iter().flatten() {
            if !l.is_empty() {
                input.extend_from_slice(l);
                input.push(b'\n');
            }
        }
    }
    let (events, _, code) = normalize_checked(&input, &[]);
    assert_eq!(code, 0);
    let sessions: BTreeSet<&str> = events.iter().map(|e| e["sessionId"].as_str().unwrap()).collect();
    assert_eq!(sessions.len(), 2);
    let summary = events.last().unwrap();
    assert_eq!(summary["payload"]["sessions"].as_array().unwrap().len(), 2);
    assert_eq!(summary["payload"]["turns"], 2);
    assert_eq!(summary["ok"], true);
}

#[test]
fn two_runs_concatenated_are_two_sessions_one_summary() {
    let mut input = read("codex/exit4.input.jsonl");
    input.extend(read("codex/err400.input.jsonl"));
    let (events, _, _) = normalize_checked(&input, &[]);
    let summary = events.last().unwrap();
    assert_eq!(summary["payload"]["turns"], 2);
    assert_eq!(summary["ok"], false);
    assert_eq!(summary["error"]["category"], "PROVIDER_ERROR");
    assert_eq!(events.iter().filter(|e| e["type"] == "session.started").count(), 2);
}

#[test]
fn unknown_event_types_are_kept_as_raw_and_counted() {
    let cases: [&[u8]; 2] = [
        b"{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"u\",\"claude_code_version\":\"2.1.197\"}\n{\"type\":\"hologram\",\"x\":1}\n{\"type\":\"system\",\"subtype\":\"brand_new\"}\n{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false}\n",
        b"{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n{\"type\":\"turn.started\"}\n{\"type\":\"item.completed\",\"item\":{\"id\":\"i\",\"type\":\"hologram\"}}\n{\"type\":\"brand.new\"}\n{\"type\":\"turn.completed\"}\n",
    ];
    for input in cases {
        let (events, _, code) = normalize_checked(input, &[]);
        assert_eq!(code, 0, "unknown types are not rejected input");
        let raws: Vec<_> = events.iter().filter(|e| e["type"] == "raw").collect();
        assert_eq!(raws.len(), 2);
        assert!(raws.iter().all(|r| r["payload"]["reason"] == "unknown_type"));
        assert_eq!(events.last().unwrap()["payload"]["input"]["unknownTypes"], 2);
        assert_eq!(events.last().unwrap()["ok"], true);
    }
}

#[test]
fn a_stream_cut_mid_line_closes_everything() {
    let input = read("claude/exit4.input.jsonl");
    let cut = &input[..input.len() * 2 / 3];
    let (events, _, _) = normalize_checked(cut, &[]);
    let summary = events.last().unwrap();
    assert_eq!(summary["ok"], false);
    assert_eq!(summary["status"], "interrupted");
    assert!(types(&events).contains(&"turn.interrupted"));
}

#[test]
fn control_bytes_in_ids_and_names_are_removed_too() {
    // Found by fuzzing: a DEL in a tool call id went out raw. Text fields were scrubbed, but
    // ids and names were written as the provider spelt them.
    let input = "{\"type\":\"thread.started\",\"thread_id\":\"t\\u001b]0;title\\u0007\"}\n{\"type\":\"turn.started\"}\n{\"type\":\"item.completed\",\"item\":{\"id\":\"c\u{7f}\\u001b[31m1\\r\",\"type\":\"mcp_tool_call\",\"server\":\"s\\u0000\",\"tool\":\"t\u{9b}x\",\"status\":\"completed\"}}\n{\"type\":\"turn.completed\"}\n";
    let (events, _, _) = normalize_checked(input.as_bytes(), &[]);
    assert_no_control_bytes(&events);
    assert_eq!(events[0]["sessionId"], "t");
    assert!(types(&events).contains(&"tool.completed"));
}

#[test]
fn control_bytes_in_the_name_of_a_call_with_long_output_are_removed() {
    // An event with long text is checked for control bytes without its (already clean) text.
    let output = "line of output\n".repeat(400);
    let input = format!(
        "{{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s\",\"model\":\"m\",\"tools\":[]}}\n\
         {{\"type\":\"assistant\",\"session_id\":\"s\",\"message\":{{\"id\":\"m1\",\"content\":[{{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"Ba\\u001b[31msh\u{7f}\",\"input\":{{\"command\":\"ls\"}}}}]}}}}\n\
         {{\"type\":\"user\",\"session_id\":\"s\",\"message\":{{\"content\":[{{\"type\":\"tool_result\",\"tool_use_id\":\"t1\",\"content\":{output:?}}}]}}}}\n\
         {{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"session_id\":\"s\"}}\n"
    );
    let (events, _, _) = normalize_checked(input.as_bytes(), &[]);
    assert_no_control_bytes(&events);
    let ended = events.iter().find(|e| e["type"] == "tool.completed").expect("the call completes");
    assert_eq!(ended["payload"]["name"], "Bash");
    assert!(ended["payload"]["output"]["stdout"].as_str().is_some_and(|s| s.len() >= 4096), "{ended}");
}

fn assert_no_control_bytes(events: &[serde_json::Value]) {
    fn strings<'a>(v: &'a serde_json::Value, out: &mut Vec<&'a str>) {
        match v {
            serde_json::Value::String(s) => out.push(s),
            serde_json::Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
            serde_json::Value::Object(o) => o.values().for_each(|x| strings(x, out)),
            _ => {}
        }
    }
    let mut all = Vec::new();
    events.iter().for_each(|e| strings(e, &mut all));
    let bad: Vec<&&str> = all.iter().filter(|s| s.chars().any(|c| c.is_control() && c != '\n' && c != '\t')).collect();
    assert!(bad.is_empty(), "{bad:?}");
}

/// A turn the agent says is done, with a tool call that never said how it ended (its result
/// line lost, or one the parser could not read): the call is interrupted and the run is
/// never ok, though the turn completed. The whole capture is ok.
#[test]
fn a_completed_turn_with_a_call_that_never_ended_is_not_an_ok_run() {
    let claude = String::from_utf8(read("claude/exit4.input.jsonl")).unwrap();
    let codex = String::from_utf8(read("codex/exit4.input.jsonl")).unwrap();
    let without_result: String =
        claude.lines().enumerate().filter(|(i, _)| *i != 3).map(|(_, l)| format!("{l}\n")).collect();
    assert!(claude.lines().nth(3).unwrap().contains("tool_result"), "line 4 is the call's result");
    // Codex's item.completed for the command, with an exit code it cannot read.
    let unreadable = codex.replace(r#""exit_code":4"#, r#""exit_code":"4""#);
    assert_ne!(unreadable, codex);
    for (name, whole, damaged) in [("claude", &claude, &without_result), ("codex", &codex, &unreadable)] {
        let (events, _, _) = normalize_checked(whole.as_bytes(), &[]);
        assert_eq!(events.last().unwrap()["payload"]["tools"]["interrupted"], 0, "{name}");
        let (events, _, _) = normalize_checked(damaged.as_bytes(), &[]);
        let summary = events.last().unwrap();
        assert_eq!((&summary["ok"], &summary["status"]), (&false.into(), &"interrupted".into()), "{name}");
        assert_eq!(summary["payload"]["verdict"], "incomplete", "{name}");
        assert_eq!(summary["payload"]["tools"]["interrupted"], 1, "{name}");
        let tool = events.iter().find(|e| e["type"] == "tool.interrupted").unwrap();
        assert_eq!(tool["payload"]["error"]["message"], "the turn ended before the tool call said how it ended");
    }
}

/// A tool's end in a status word the parser does not know is never a success: the call
/// fails naming the word, and the run is not ok. Codex's own words keep their meaning.
#[test]
fn a_tool_status_the_parser_does_not_know_is_never_a_success() {
    let codex = String::from_utf8(read("codex/exit4.input.jsonl")).unwrap();
    let gemini = String::from_utf8(read("gemini/exit4.input.jsonl")).unwrap();
    let codex_as = |status: &str| {
        codex.replace(r#""exit_code":4,"status":"failed""#, &format!(r#""exit_code":null,"status":"{status}""#))
    };
    let (events, _, _) = normalize_checked(codex_as("timed_out").as_bytes(), &[]);
    assert_eq!(types(&events).iter().filter(|t| **t == "tool.timeout").count(), 1);
    let gemini_failed = gemini.replace(r#""status":"success","output""#, r#""status":"exploded","output""#);
    assert_ne!(gemini_failed, gemini);
    for (name, input) in [("codex", codex_as("exploded")), ("gemini", gemini_failed)] {
        let (events, _, _) = normalize_checked(input.as_bytes(), &[]);
        let failed = events.iter().find(|e| e["type"] == "tool.failed").expect(name);
        assert!(failed["payload"]["error"]["message"].as_str().unwrap().contains(r#"status "exploded""#), "{name}");
        let summary = events.last().unwrap();
        assert_eq!((&summary["ok"], &summary["error"]["category"]), (&false.into(), &"INPUT_ERROR".into()), "{name}");
    }
}

/// The lines of `a` and `b` taken in turn, as logs merged by time.
fn interleaved(a: &str, b: &str) -> String {
    let (mut a, mut b) = (a.lines(), b.lines());
    let mut merged = String::new();
    loop {
        let (x, y) = (a.next(), b.next());
        if x.is_none() && y.is_none() {
            return merged;
        }
        x.into_iter().chain(y).for_each(|l| merged.push_str(&format!("{l}\n")));
    }
}

/// Two droid runs merged line by line: a `tool_result` belongs to the session it names, so
/// the failed command ends in the run that made it and the other run, which made none, stays
/// a success; two runs whose calls share an id each end their own.
#[test]
fn merged_droid_runs_keep_each_tool_result_with_its_call() {
    let exit4 = String::from_utf8(read("droid/0.225.2/exit4.input.jsonl")).unwrap();
    let text = String::from_utf8(read("droid/0.225.2/text.input.jsonl")).unwrap();
    let (events, _, _) = normalize_checked(interleaved(&exit4, &text).as_bytes(), &[]);
    let types = types(&events);
    assert!(!types.contains(&"raw"), "{types:?}");
    let session_of = |t: &str| events.iter().find(|e| e["type"] == t).map(|e| e["sessionId"].clone()).unwrap();
    assert_eq!(session_of("tool.failed"), session_of("tool.started"));
    let failed = events.iter().find(|e| e["type"] == "tool.failed").unwrap();
    assert_eq!(failed["payload"]["output"]["exit_code"], 4, "{failed}");
    let summary = events.last().unwrap();
    assert_eq!(summary["payload"]["tools"]["total"], 1, "{}", summary["payload"]);
    assert_eq!(summary["payload"]["tools"]["interrupted"], 0, "{}", summary["payload"]);

    let first: serde_json::Value = serde_json::from_str(exit4.lines().next().unwrap()).unwrap();
    let twin = exit4.replace(first["session_id"].as_str().unwrap(), "22222222-2222-4222-8222-222222222222");
    let (events, _, _) = normalize_checked(interleaved(&exit4, &twin).as_bytes(), &[]);
    let failed: Vec<&str> =
        events.iter().filter(|e| e["type"] == "tool.failed").map(|e| e["sessionId"].as_str().unwrap()).collect();
    assert_eq!(failed.len(), 2, "{failed:?}");
    assert_ne!(failed[0], failed[1]);
    assert_eq!(events.last().unwrap()["payload"]["tools"]["interrupted"], 0);
}

/// Two Claude Code runs merged line by line (logs merged by time): a `system` line that
/// names its session is that session's, so the deny run's `permission_denied` ends its own
/// call once, and the text run gets no call it never made. A hook's line before a run's
/// init starts no session of its own: the init still gives the session its start.
#[test]
fn merged_claude_runs_keep_each_system_line_in_its_own_session() {
    let deny = String::from_utf8(read("claude/2.1.332/deny.input.jsonl")).unwrap();
    let text = String::from_utf8(read("claude/2.1.332/text.input.jsonl")).unwrap();
    let (events, _, _) = normalize_checked(interleaved(&deny, &text).as_bytes(), &[]);
    let summary = events.last().unwrap();
    assert_eq!(summary["payload"]["tools"]["total"], 1, "{}", summary["payload"]);
    assert_eq!(summary["payload"]["tools"]["denied"], 1);
    let starts: Vec<&str> =
        events.iter().filter(|e| e["type"] == "tool.started").map(|e| e["payload"]["name"].as_str().unwrap()).collect();
    assert_eq!(starts, ["Bash"]);

    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let hook = serde_json::json!({"type": "system", "subtype": "hook_started", "session_id": first["session_id"]});
    let (events, _, _) = normalize_checked(format!("{hook}\n{text}").as_bytes(), &[]);
    assert_eq!(events[0]["type"], "session.started");
    assert_eq!(events[0]["payload"]["providerVersion"], "2.1.332");
}

/// A line that is not read as it should be is cited by its file and that file's own line
/// number when the input names its files, as `rawRef` cites it: by every binary.
#[test]
fn a_rejected_line_is_cited_by_its_file_and_its_line_there() {
    let dir = std::env::temp_dir().join(format!("minicode-cite-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let canonical = run("normalize", &[], &read("codex/exit4.input.jsonl"));
    let (good, bad) = (dir.join("good.jsonl"), dir.join("bad.jsonl"));
    std::fs::write(&good, &canonical).unwrap();
    std::fs::write(&bad, "{\"x\":1}\nnot json\n").unwrap();
    let (good, bad) = (good.to_str().unwrap(), bad.to_str().unwrap());
    let lines = canonical.iter().filter(|&&b| b == b'\n').count();
    for name in ["summarize", "project", "scrub", "truncate"] {
        let out = bin(name).args([good, bad]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(&format!("{bad}: line 2: ")), "{name}: {stderr}");
        assert!(!stderr.contains(&format!("line {}", lines + 2)), "{name}: {stderr}");
        // serde's own "line 1" of a line read alone is not said beside the input's line.
        assert!(!stderr.contains("at line 1 column"), "{name}: {stderr}");
        // One input alone names no file.
        let alone = bin(name).arg(bad).output().unwrap();
        assert!(String::from_utf8_lossy(&alone.stderr).contains(&format!("{name}: line 2: ")), "{name}");
    }
    let weird = dir.join("weird.jsonl");
    std::fs::write(&weird, "{\"type\":\"weird.thing\"}\n").unwrap();
    let out = bin("normalize").args([good, weird.to_str().unwrap()]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("{}: line 1: 1 JSON line(s) of no dialect", weird.display())), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}
