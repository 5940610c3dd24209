//! `normalize` on the session files Codex, Copilot CLI, droid and Gemini CLI write to disk:
//! golden outputs of each recorded run's files (`fixtures/sessions/<cli>-<version>/<run>/home/…`)
//! and what is particular to each format. That the files agree with the same run's live
//! stream is checked with every other CLI's in `sessions.rs`.

use std::path::PathBuf;

use serde_json::Value;

use crate::support::*;

/// The session files of a recorded run (`<cli>/<run>`): its home's `*.jsonl` files.
fn session_files(run: &str) -> Vec<PathBuf> {
    let files: Vec<PathBuf> =
        files_under(&fixture(&format!("sessions/{run}/home")), &[".jsonl"]).into_iter().map(PathBuf::from).collect();
    assert!(!files.is_empty(), "no session files in fixtures/sessions/{run}/home");
    files
}

/// `normalize` over a run's session files, named relative to its home (so provenance does not
/// depend on where the repository is).
fn normalize_sessions(run: &str, args: &[&str]) -> Vec<u8> {
    let home = fixture(&format!("sessions/{run}/home"));
    bin("normalize").current_dir(&home).args(args).args(session_files(run)).output().expect("runs").stdout
}

/// The runs recorded for `cli` (`codex-0.171.0`), sorted.
fn runs(cli: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(fixture(&format!("sessions/{cli}")))
        .unwrap()
        .filter_map(|e| e.ok().filter(|e| e.path().is_dir())?.file_name().into_string().ok())
        .map(|n| format!("{cli}/{n}"))
        .collect();
    v.sort();
    v
}

/// Checks `normalize` over each run's session files against `<run>.events.jsonl`.
fn golden_sessions(cli: &str) {
    let failures: Vec<String> = runs(cli)
        .iter()
        .filter_map(|run| golden(&format!("sessions/{run}.events.jsonl"), &normalize_sessions(run, &[])).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn golden_codex_rollouts() {
    golden_sessions("codex-0.171.0");
}

#[test]
fn golden_copilot_sessions() {
    golden_sessions("copilot-1.0.102");
}

#[test]
fn golden_droid_sessions() {
    golden_sessions("droid-0.225.2");
}

#[test]
fn golden_gemini_sessions() {
    golden_sessions("gemini-cli-0.61.0");
}

/// The events of a run's session files.
fn events(run: &str) -> Vec<Value> {
    json_lines(&normalize_sessions(run, &[]))
}

#[test]
fn a_resumed_rollout_is_one_session_of_two_turns_with_each_prompt() {
    let file = events("codex-0.171.0/resume");
    let sessions = of_type(&file, "session.started");
    assert_eq!(sessions.len(), 1);
    let p = &sessions[0]["payload"];
    assert_eq!(
        (p["provider"].as_str(), p["model"].as_str(), p["providerVersion"].as_str()),
        (Some("codex"), Some("gpt-5.5"), Some("0.171.0"))
    );
    let prompts: Vec<&str> =
        of_type(&file, "turn.started").iter().map(|e| e["payload"]["prompt"].as_str().unwrap()).collect();
    assert_eq!(prompts.len(), 2);
    assert!(prompts[1].starts_with("Thanks. Now summarise"), "{prompts:?}");
    let s = file.last().unwrap();
    assert_eq!(s["payload"]["input"]["raw"], 0, "{s}");
    // Two responses in turn 1, one in turn 2: each counted once, not again from `token_count`.
    assert_eq!(s["payload"]["usage"]["input_tokens"], 29051, "{s}");
}

#[test]
fn a_rollout_keeps_the_whole_output_and_the_structured_exit_code() {
    let file = events("codex-0.171.0/exit4");
    let failed = only(&file, "tool.failed");
    assert_eq!(failed["payload"]["output"], serde_json::json!({"exit_code": 4, "stdout": "line1\nline2\n"}));
    assert_eq!(only(&file, "tool.started")["payload"]["command"], "printf 'line1\\nline2\\n'; exit 4");
}

#[test]
fn a_resumed_copilot_session_is_one_session_of_two_turns_with_the_files_own_facts() {
    let file = events("copilot-1.0.102/resume");
    let p = &only(&file, "session.started")["payload"];
    assert_eq!((p["providerVersion"].as_str(), p["model"].as_str()), (Some("1.0.102"), Some("mock-model")));
    assert_eq!(of_type(&file, "turn.completed").len(), 2);
    let s = file.last().unwrap();
    assert_eq!(s["sessionId"], "ffa1f338-b3e7-42dd-98d0-c543269fbb08");
    assert_eq!((s["payload"]["input"]["raw"].as_u64(), s["payload"]["turns"].as_u64()), (Some(0), Some(2)), "{s}");
    // Three model calls, each recorded once.
    assert_eq!(s["payload"]["usage"]["input_tokens"], 36287, "{s}");
}

#[test]
fn a_droid_session_skips_its_injected_context_and_takes_its_usage_from_its_settings() {
    let file = events("droid-0.225.2/exit4");
    let prompt = &only(&file, "turn.started")["payload"]["prompt"];
    assert_eq!(prompt, "SCENARIO_EXIT4 WORKDIR=/tmp/sess/w-droid-5edO please do the task.");
    assert_eq!(
        only(&file, "tool.failed")["payload"]["output"],
        serde_json::json!({"exit_code": 4, "stdout": "line1\nline2"})
    );
    let usage = &only(&file, "usage")["payload"];
    assert_eq!(
        *usage,
        serde_json::json!({"input_tokens": 25193, "output_tokens": 24, "cache_read": 0, "cache_write": 0})
    );
}

/// A shell glob over a droid session's folder names its settings file too: that file is
/// read with the session, not again as lines of its own, and said to be skipped.
#[test]
fn a_droid_settings_file_named_with_its_session_is_read_once_with_it() {
    let home = fixture("sessions/droid-0.225.2/exit4/home");
    let jsonl = home.join(session_files("droid-0.225.2/exit4").remove(0));
    let settings = jsonl.with_extension("settings.json");
    assert!(settings.is_file(), "{}", settings.display());
    let alone = json_lines(&bin("normalize").arg(&jsonl).output().unwrap().stdout);
    let out = bin("normalize").arg(&jsonl).arg(&settings).output().unwrap();
    let both = json_lines(&out.stdout);
    assert!(of_type(&both, "raw").is_empty(), "no line of the settings is read as raw");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("skipped {}: read with the session file beside it", settings.display())),
        "{stderr}"
    );
    let (s, t) = (alone.last().unwrap(), both.last().unwrap());
    assert_eq!(only(&both, "usage")["payload"], only(&alone, "usage")["payload"]);
    let skipped = |summary: &Value| summary["payload"]["input"]["skipped"].as_u64().unwrap_or(0);
    assert_eq!((skipped(s), skipped(t)), (0, 1), "{t}");
}

/// Settings beside a droid session that cannot be used (too big to be droid's, or not JSON)
/// are said to be unread, in a warning, and the usage stays unknown; the session is read
/// as without them.
#[test]
fn a_droid_sessions_unusable_settings_are_said_and_leave_its_usage_unknown() {
    let dir = crate::sessions::scratch("droid-settings");
    let jsonl = session_files("droid-0.225.2/exit4").remove(0);
    let from = fixture("sessions/droid-0.225.2/exit4/home").join(&jsonl);
    std::fs::copy(from, dir.join("s.jsonl")).unwrap();
    for (settings, why) in [(vec![b' '; 64 * 1024 + 1], "limit"), (b"{\"tokenUsage\":".to_vec(), "not droid's")] {
        std::fs::write(dir.join("s.settings.json"), settings).unwrap();
        let out = bin("normalize").arg(dir.join("s.jsonl")).output().unwrap();
        let events = json_lines(&out.stdout);
        let warning = only(&events, "warning")["payload"]["message"].as_str().unwrap().to_owned();
        assert!(warning.starts_with("s.settings.json was not read") && warning.contains(why), "{warning}");
        let summary = events.last().unwrap();
        assert!(of_type(&events, "usage").is_empty() && summary["payload"]["usage"].is_null(), "{summary}");
        assert_eq!((summary["ok"].as_bool(), summary["payload"]["input"]["raw"].as_u64()), (Some(true), Some(0)));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_gemini_session_tells_each_rewritten_record_once_and_resumes_as_a_second_turn() {
    let file = events("gemini-cli-0.61.0/resume");
    assert_eq!(of_type(&file, "session.started").len(), 1);
    assert_eq!(of_type(&file, "tool.started").len(), 1, "the model message was written twice");
    assert_eq!(of_type(&file, "turn.completed").len(), 2);
    let texts = of_type(&file, "text").len();
    assert_eq!(texts, 3, "the history repeated by `$set messages` is not told again");
    let s = file.last().unwrap();
    assert_eq!(s["payload"]["input"]["raw"], 0, "{s}");
}

/// A session file saved as UTF-16 (with its byte order mark) and found in a directory walk is
/// read as its UTF-8 text: it was skipped as binary, its NULs taken for a binary file's.
#[test]
fn a_utf16_session_file_found_in_a_walk_is_read_as_its_text() {
    let run = "codex-0.171.0/write";
    let home = fixture(&format!("sessions/{run}/home"));
    let file = &session_files(run)[0];
    let text = std::fs::read_to_string(home.join(file)).unwrap();
    let utf16: Vec<u8> = std::iter::once(0xfeff).chain(text.encode_utf16()).flat_map(u16::to_le_bytes).collect();
    let walked = |name: &str, bytes: &[u8]| {
        let dir = crate::sessions::scratch(name);
        std::fs::create_dir_all(dir.join(file).parent().unwrap()).unwrap();
        std::fs::write(dir.join(file), bytes).unwrap();
        let out = bin("normalize").current_dir(&dir).arg(".").output().unwrap();
        (out.stdout, String::from_utf8(out.stderr).unwrap())
    };
    let (plain, _) = walked("walk-utf8", text.as_bytes());
    let (found, stderr) = walked("walk-utf16", &utf16);
    assert!(stderr.is_empty(), "{stderr}");
    assert!(!of_type(&json_lines(&plain), "tool.started").is_empty());
    assert_eq!(String::from_utf8(found).unwrap(), String::from_utf8(plain).unwrap());
}

/// A droid session and its settings saved as UTF-16 (or the settings with a UTF-8 byte order
/// mark) are read as their UTF-8 text: the session was read undecoded (every line raw) once
/// its settings lay beside it, and the settings were refused.
#[test]
fn a_utf16_droid_session_with_its_settings_is_read_as_its_text() {
    let run = "droid-0.225.2/exit4";
    let home = fixture(&format!("sessions/{run}/home"));
    let jsonl = home.join(session_files(run).remove(0));
    let plain = json_lines(&bin("normalize").arg(&jsonl).output().unwrap().stdout);
    let utf16 = |path: &std::path::Path| -> Vec<u8> {
        let text = std::fs::read_to_string(path).unwrap();
        std::iter::once(0xfeff).chain(text.encode_utf16()).flat_map(u16::to_le_bytes).collect()
    };
    let settings = std::fs::read(jsonl.with_extension("settings.json")).unwrap();
    let dir = crate::sessions::scratch("droid-utf16");
    for settings in [utf16(&jsonl.with_extension("settings.json")), [&b"\xef\xbb\xbf"[..], &settings].concat()] {
        std::fs::write(dir.join("s.jsonl"), utf16(&jsonl)).unwrap();
        std::fs::write(dir.join("s.settings.json"), settings).unwrap();
        let named = json_lines(&bin("normalize").arg(dir.join("s.jsonl")).output().unwrap().stdout);
        assert_eq!(named, plain);
        let out = bin("normalize").arg(&dir).output().unwrap();
        assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(only(&json_lines(&out.stdout), "usage")["payload"], only(&plain, "usage")["payload"]);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
