//! The agents added beside the first five (GitHub Copilot CLI, Cline, Factory droid, Kilo
//! Code, Cursor agent, Amp): golden outputs of their recordings (or of cases constructed from
//! their published documentation), what each recording showed, and detection that never
//! takes one agent's lines for another's.

use serde_json::Value;

use crate::support::*;

#[test]
fn golden_copilot_1_0_102() {
    golden_dir("copilot/1.0.102", &[]);
}

#[test]
fn golden_cline_3_0_65() {
    golden_dir("cline/3.0.65", &[]);
}

#[test]
fn golden_droid_0_225_2() {
    golden_dir("droid/0.225.2", &[]);
}

#[test]
fn golden_kilo_7_7_7() {
    golden_dir("kilo/7.7.7", &[]);
}

#[test]
fn golden_kilo_7_7_9() {
    golden_dir("kilo/7.7.9", &[]);
}

fn events(rel: &str) -> Vec<Value> {
    json_lines(&run("normalize", &[], &read(rel)))
}

/// The provider of each session, in order.
fn providers(events: &[Value]) -> Vec<&str> {
    of_type(events, "session.started").iter().map(|e| e["payload"]["provider"].as_str().unwrap()).collect()
}

/// The terminal events of tool calls: type, exit code, and stdout.
fn tool_ends(events: &[Value]) -> Vec<(&str, Option<i64>, Option<&str>)> {
    events
        .iter()
        .filter(|e| {
            e["type"].as_str().is_some_and(|t| t.starts_with("tool.") && t != "tool.started" && t != "tool.output")
        })
        .map(|e| {
            let out = &e["payload"]["output"];
            (e["type"].as_str().unwrap(), out["exit_code"].as_i64(), out["stdout"].as_str())
        })
        .collect()
}

#[test]
fn copilot_exit_codes_come_from_their_field_and_the_trailer_is_not_output() {
    let evs = events("copilot/1.0.102/exit4.input.jsonl");
    assert_eq!(providers(&evs), ["copilot"]);
    assert_eq!(tool_ends(&evs), [("tool.failed", Some(4), Some("line1\nline2\n"))]);
    let text: String = of_type(&evs, "text").iter().map(|t| t["payload"]["delta"].as_str().unwrap()).collect();
    assert_eq!(text.matches("I'll r").count(), 1, "text once: {text}");
    let s = evs.last().unwrap();
    assert_eq!((s["payload"]["turns"].as_u64(), s["payload"]["input"]["raw"].as_u64()), (Some(1), Some(0)));
}

#[test]
fn copilot_denied_is_a_denial_and_edits_are_file_changes() {
    let evs = events("copilot/1.0.102/deny.input.jsonl");
    assert_eq!(tool_ends(&evs), [("tool.denied", None, None)]);
    assert_eq!(only(&evs, "tool.denied")["payload"]["error"]["category"], "PERMISSION_DENIED");
    let evs = events("copilot/1.0.102/write.input.jsonl");
    assert_eq!(only(&evs, "file.changed")["payload"]["path"], "/tmp/sess/w-copilot-yguh/hello.txt");
}

#[test]
fn cline_reads_the_exit_code_from_its_text_and_a_tty_refusal_as_a_denial() {
    let evs = events("cline/3.0.65/exit4.input.jsonl");
    assert_eq!(providers(&evs), ["cline"]);
    assert_eq!(tool_ends(&evs), [("tool.failed", Some(4), Some("line1\nline2\n"))]);
    let text: String = of_type(&evs, "text").iter().map(|t| t["payload"]["delta"].as_str().unwrap()).collect();
    assert_eq!(text, "I'll run that now.Finished scenario EXIT4. All requested tool calls were made.");
    assert_eq!(only(&evs, "tool.started")["payload"]["command"], "printf 'line1\\nline2\\n'; exit 4");
    let evs = events("cline/3.0.65/deny.input.jsonl");
    assert_eq!(tool_ends(&evs), [("tool.denied", None, None)]);
    assert_eq!(evs.last().unwrap()["payload"]["usage"]["input_tokens"], 11011);
}

#[test]
fn droid_is_one_session_of_its_own_and_its_refusal_fails_the_run() {
    let evs = events("droid/0.225.2/exit4.input.jsonl");
    assert_eq!(providers(&evs), ["droid"]);
    assert_eq!(tool_ends(&evs), [("tool.failed", Some(4), Some("line1\nline2"))]);
    let evs = events("droid/0.225.2/deny.input.jsonl");
    assert_eq!(providers(&evs), ["droid"]);
    assert_eq!(tool_ends(&evs), [("tool.denied", None, None)]);
    let s = evs.last().unwrap();
    assert_eq!((&s["ok"], &s["error"]["category"]), (&Value::Bool(false), &Value::from("PERMISSION_DENIED")));
    let evs = events("droid/0.225.2/write.input.jsonl");
    assert_eq!(only(&evs, "file.changed")["payload"]["path"], "/tmp/sess/w-droid-NJ7I/hello.txt");
}

#[test]
fn kilo_is_read_as_opencode_and_named_kilo_once_its_step_finish_says_so() {
    let evs = events("kilo/7.7.7/exit4.input.jsonl");
    assert_eq!(providers(&evs), ["kilo"]);
    assert_eq!(tool_ends(&evs), [("tool.failed", Some(4), Some("line1\nline2\n"))]);
    assert_eq!(providers(&events("opencode/exit4.input.jsonl")), ["opencode"], "OpenCode's own runs stay OpenCode's");
}

/// Kilo Code 7.7.9: a run that stops on a refused permission says why in an `error` that is
/// a bare string, read as the run's denial, not kept raw.
#[test]
fn kilo_7_7_9_says_a_refused_run_in_a_bare_error() {
    let evs = events("kilo/7.7.9/deny-ask.input.jsonl");
    assert!(of_type(&evs, "raw").is_empty(), "{:?}", of_type(&evs, "raw"));
    let failed = only(&evs, "turn.failed");
    assert_eq!(failed["payload"]["error"]["category"], "PERMISSION_DENIED");
    assert!(failed["payload"]["error"]["message"].as_str().unwrap().contains("auto-rejected permission"), "{failed}");
    assert!(failed["payload"]["error"]["action"].as_str().unwrap().contains("Kilo Code's `permission`"), "{failed}");
    assert_eq!(tool_ends(&evs).iter().map(|t| t.0).collect::<Vec<_>>(), ["tool.denied"]);
}

/// Kilo over ACP announces a command with only its working directory (`rawInput: {cwd}`) and
/// sends the command in the update after: the call starts with its command. A call whose
/// permission was refused never ran: the refusal's text is its error, not its output.
#[test]
fn kilo_over_acp_starts_a_command_with_its_command_and_a_refusal_is_no_output() {
    for input in ["acp/kilo-7.7.7-exit4.input.jsonl", "acp/kilo-7.7.9-exit4.input.jsonl"] {
        let started = only(&events(input), "tool.started").clone();
        assert_eq!(started["payload"]["command"], "printf 'line1\\nline2\\n'; exit 4", "{input}");
    }
    // Two such calls made in parallel: each starts with its command, when its update comes.
    let input = String::from_utf8(read("acp/kilo-7.7.9-exit4@stdout.input.jsonl")).unwrap();
    let lines: Vec<&str> = input.lines().collect();
    let id = "call_mock_s0_0_25";
    assert!(lines[6].contains(r#""sessionUpdate":"tool_call""#) && lines[6].contains(id));
    let twin = |l: &str| l.replace(id, "call_twin").replace("exit 4", "exit 5");
    let mut parallel: Vec<String> = lines[..7].iter().map(|l| l.to_string()).collect();
    parallel.push(twin(lines[6]));
    parallel.extend(lines[7..13].iter().map(|l| l.to_string()));
    parallel.extend(lines[7..13].iter().map(|l| twin(l)));
    parallel.extend(lines[13..].iter().map(|l| l.to_string()));
    let evs = json_lines(&run("normalize", &[], format!("{}\n", parallel.join("\n")).as_bytes()));
    let commands: Vec<&str> =
        of_type(&evs, "tool.started").iter().map(|e| e["payload"]["command"].as_str().unwrap_or("none")).collect();
    assert_eq!(commands, ["printf 'line1\\nline2\\n'; exit 4", "printf 'line1\\nline2\\n'; exit 5"]);
    let evs = events("acp/kilo-7.7.9-deny.input.jsonl");
    let denied = only(&evs, "tool.denied");
    assert_eq!(denied["payload"]["output"], Value::Null, "{denied}");
    assert_eq!(denied["payload"]["error"]["message"], "The user rejected permission to use this specific tool call.");
    assert_eq!(only(&evs, "tool.started")["payload"]["command"], "touch denied.txt && echo should-not-run");
}

#[test]
fn copilot_over_acp_takes_its_exit_code_from_shell_exit_and_its_name_from_agent_info() {
    for input in ["acp/copilot-1.0.102-exit4.input.jsonl", "acp/copilot-1.0.102-exit4@stdout.input.jsonl"] {
        let evs = events(input);
        assert_eq!(providers(&evs), ["Copilot"], "{input}");
        assert_eq!(tool_ends(&evs), [("tool.failed", Some(4), Some("line1\nline2\n"))], "{input}");
    }
    assert_eq!(providers(&events("acp/kilo-7.7.7-exit4.input.jsonl")), ["Kilo"]);
}

#[test]
fn golden_constructed_from_published_docs() {
    for dir in ["cursor/constructed", "amp/constructed"] {
        golden_dir(dir, &[]);
    }
}

#[test]
fn cursor_tool_calls_are_read_with_kinds_exit_codes_and_denials() {
    let evs = events("cursor/constructed/tools.input.jsonl");
    assert_eq!(providers(&evs), ["cursor"]);
    let ends: Vec<&str> = tool_ends(&evs).iter().map(|(t, ..)| *t).collect();
    assert_eq!(ends, ["tool.completed", "tool.completed", "tool.failed", "tool.denied"]);
    assert_eq!(tool_ends(&evs)[2], ("tool.failed", Some(4), Some("line1\nline2\n")));
    assert_eq!(only(&evs, "file.changed")["payload"]["change"], "add");
    assert_eq!(providers(&events("cursor/constructed/text.input.jsonl")), ["cursor"], "no tool call: the init decides");
}

#[test]
fn amp_is_read_as_claude_code_and_named_amp() {
    for case in ["text", "exit4"] {
        assert_eq!(providers(&events(&format!("amp/constructed/{case}.input.jsonl"))), ["amp"]);
    }
}

/// The folders of each dialect's fixtures.
const FIXTURES: [(&str, &[&str]); 16] = [
    ("claude", &["claude", "claude/2.1.332", "claude/constructed"]),
    ("qwen", &["qwen/0.24.4"]),
    ("amp", &["amp/constructed"]),
    ("codex", &["codex", "codex/constructed"]),
    ("opencode", &["opencode", "opencode/constructed"]),
    ("kilo", &["kilo/7.7.7", "kilo/7.7.9"]),
    ("gemini", &["gemini", "gemini/constructed"]),
    ("acp", &["acp"]),
    ("copilot", &["copilot/1.0.102"]),
    ("cline", &["cline/3.0.65"]),
    ("droid", &["droid/0.225.2"]),
    ("cursor", &["cursor/constructed"]),
    ("codex-rollout", &["sessions/codex-0.171.0"]),
    ("copilot-session", &["sessions/copilot-1.0.102"]),
    ("droid-session", &["sessions/droid-0.225.2"]),
    ("gemini-session", &["sessions/gemini-cli-0.61.0"]),
];

/// The inputs of a fixture folder: its `*.input.jsonl`, or for a folder of recorded session
/// files (`sessions/…`), every session file under a run's `home/`.
fn dialect_inputs(dir: &str) -> Vec<String> {
    if !dir.starts_with("sessions/") {
        return inputs(dir);
    }
    files_under(&fixture(dir), &[".jsonl"])
        .into_iter()
        .filter(|p| p.split('/').any(|c| c == "home"))
        .map(|p| format!("{dir}/{p}"))
        .collect()
}

/// The negative half of detection: no line of any dialect's fixtures is surely another
/// dialect's, and a run's first JSON line is never claimed by another dialect alone.
#[test]
fn no_dialect_claims_another_dialects_lines() {
    use minicode_output::provider::{Claim, Probe, Provider};
    let mut failures = Vec::new();
    for (own, dirs) in FIXTURES {
        let own: Provider = own.parse().unwrap();
        for input in dirs.iter().flat_map(|d| dialect_inputs(d)) {
            let text = String::from_utf8_lossy(&read(&input)).into_owned();
            let mut first = true;
            for (n, line) in text.lines().enumerate() {
                let Some(probe) = Probe::parse(line) else { continue };
                let claims: Vec<(Provider, Claim)> = Provider::ALL.iter().map(|&p| (p, p.claim(&probe))).collect();
                for (p, claim) in &claims {
                    if *p != own && *claim == Claim::Yes {
                        failures.push(format!("{input}:{}: {p} says yes to a {own} line", n + 1));
                    }
                }
                let own_claims = claims.iter().any(|(p, c)| *p == own && *c != Claim::No);
                if first && !own_claims && claims.iter().any(|(_, c)| *c != Claim::No) {
                    failures.push(format!("{input}:{}: the first line is claimed, but not by {own}", n + 1));
                }
                first = false;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Session transcripts are their reader's alone, line by line, and their readers claim no
/// line of the same runs' streams.
#[test]
fn session_transcripts_and_streams_never_claim_each_others_lines() {
    use minicode_output::provider::{Claim, Probe, Provider};
    let mut failures = Vec::new();
    for (cli, own) in [("claude-code-2.1.332", "claude-session"), ("qwen-code-0.24.4", "qwen-session")] {
        let own: Provider = own.parse().unwrap();
        let dir = fixture(&format!("sessions/{cli}"));
        for file in files_under(&dir, &[".jsonl"]) {
            let stream = !file.contains("/home/");
            let text = std::fs::read_to_string(dir.join(&file)).unwrap();
            for (n, line) in text.lines().enumerate() {
                let Some(probe) = Probe::parse(line) else { continue };
                for &p in Provider::ALL {
                    let claim = p.claim(&probe);
                    let session_reader = p.name().ends_with("-session");
                    let wrong = if stream {
                        session_reader && claim != Claim::No
                    } else if p == own {
                        claim != Claim::Yes
                    } else {
                        claim == Claim::Yes
                    };
                    if wrong {
                        failures.push(format!("{cli}/{file}:{}: {p} says {claim:?}", n + 1));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Runs of several agents concatenated are each read as their own agent's.
#[test]
fn concatenated_runs_of_the_new_agents_keep_their_names() {
    let order = [
        "droid/0.225.2/exit4.input.jsonl",
        "claude/2.1.332/exit4.input.jsonl",
        "cursor/constructed/tools.input.jsonl",
        "copilot/1.0.102/exit4.input.jsonl",
        "amp/constructed/exit4.input.jsonl",
        "cline/3.0.65/exit4.input.jsonl",
        "kilo/7.7.7/exit4.input.jsonl",
        "qwen/0.24.4/exit4.input.jsonl",
    ];
    let input: Vec<u8> = order.iter().flat_map(|f| read(f)).collect();
    let evs = json_lines(&run("normalize", &[], &input));
    assert_eq!(providers(&evs), ["droid", "claude-code", "cursor", "copilot", "amp", "cline", "kilo", "qwen-code"]);
    let s = evs.last().unwrap();
    assert_eq!(s["payload"]["input"]["raw"], 0, "{s}");
    let failed_with_4 = tool_ends(&evs).iter().filter(|(t, code, _)| *t == "tool.failed" && *code == Some(4)).count();
    assert_eq!(failed_with_4, order.len());
}
