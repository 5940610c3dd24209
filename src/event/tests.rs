use serde_json::{Map, Value};

use super::*;

#[test]
fn a_null_tool_input_is_not_written_so_the_event_round_trips() {
    // Found by fuzzing: `"input":null` read back as no input, so `project --mode jsonl`
    // dropped it and the stream was no longer written back byte for byte.
    let started = ToolStarted {
        tool_call_id: "c1".into(),
        name: "Bash".into(),
        qualified: "Bash".into(),
        kind: ToolKind::Shell,
        target: None,
        input: Some(Value::Null),
        command: None,
        cwd: None,
    };
    let json = serde_json::to_string(&started).unwrap();
    assert!(!json.contains("input"), "{json}");
    let back: ToolStarted = serde_json::from_str(&json).unwrap();
    assert_eq!(serde_json::to_string(&back).unwrap(), json);
}

const ENVELOPE: &str = r#""schema":"minicode.output.v1","eventId":"e1","sessionId":"s1","turnId":1"#;
const DONE: &str = r#"{"toolCallId":"c1","name":"Bash","kind":"shell","output":{"stdout":"ok\n","exit_code":0}}"#;

fn read(line: &str) -> Result<Event, serde_json::Error> {
    serde_json::from_str(line)
}

#[test]
fn a_payload_reads_the_same_before_or_after_its_type() {
    let type_first = read(&format!(r#"{{{ENVELOPE},"type":"tool.completed","payload":{DONE}}}"#)).unwrap();
    let payload_first = read(&format!(r#"{{{ENVELOPE},"payload":{DONE},"type":"tool.completed"}}"#)).unwrap();
    assert_eq!(type_first, payload_first);
    let Body::ToolEnded(t) = &type_first.body else { panic!("{type_first:?}") };
    assert_eq!((t.outcome, t.output.as_ref().and_then(|o| o.stdout.as_deref())), (Outcome::Completed, Some("ok\n")));
    // A type this version does not know keeps its payload and the fields after it.
    let other = read(&format!(r#"{{{ENVELOPE},"type":"x.new","payload":{{"a":1}},"b":2}}"#)).unwrap();
    let Body::Other(o) = &other.body else { panic!("{other:?}") };
    assert_eq!((o.payload.get("a"), o.extra.get("b")), (Some(&Value::from(1)), Some(&Value::from(2))));
}

#[test]
fn a_summary_takes_its_ok_from_after_its_payload() {
    let figures = r#"{"turns":0,"tools":{"total":0,"completed":0,"failed":0,"denied":0,"cancelled":0,"timeout":0,"interrupted":0},"input":{"lines":1,"events":0,"raw":0,"unknownTypes":0,"oversized":0,"redactions":{}}}"#;
    let summary = read(&format!(r#"{{{ENVELOPE},"type":"summary","payload":{figures},"ok":true}}"#)).unwrap();
    assert!(matches!(&summary.body, Body::Summary(s) if s.ok), "{summary:?}");
}

#[test]
fn of_two_payloads_that_fit_the_last_counts() {
    let first = DONE.replace("Bash", "Read");
    let line = format!(r#"{{{ENVELOPE},"type":"tool.completed","payload":{first},"payload":{DONE}}}"#);
    let ev = read(&line).unwrap();
    assert!(matches!(&ev.body, Body::ToolEnded(t) if t.name == "Bash"), "{ev:?}");
}

#[test]
fn a_second_type_must_agree_with_the_payload_read_under_the_first() {
    let line = format!(r#"{{{ENVELOPE},"type":"tool.completed","payload":{DONE},"type":"tool.completed"}}"#);
    assert!(read(&line).is_ok());
    let line = format!(r#"{{{ENVELOPE},"type":"tool.completed","payload":{DONE},"type":"tool.failed"}}"#);
    let error = read(&line).unwrap_err().to_string();
    assert!(error.contains(r#""tool.failed" after a payload read as "tool.completed""#), "{error}");
}

#[test]
fn a_payload_that_does_not_fit_its_type_is_an_error_either_way() {
    for line in [
        format!(r#"{{{ENVELOPE},"type":"tool.completed","payload":{{"name":"Bash"}}}}"#),
        format!(r#"{{{ENVELOPE},"payload":{{"name":"Bash"}},"type":"tool.completed"}}"#),
    ] {
        let error = read(&line).unwrap_err().to_string();
        assert!(error.contains("toolCallId"), "{line}: {error}");
    }
}

/// One line of every type of the catalog, `summary` aside, with every envelope field given
/// and the catalog's example payload: what the readers that know the format by heart are
/// tested on, so that a type or a field added to the tables reaches their tests.
pub(crate) fn example_lines() -> Vec<(String, String)> {
    let mut lines = Vec::new();
    for row in CATALOG {
        let payload: Map<String, Value> = serde_json::from_str(row.example).unwrap();
        for name in row.type_names() {
            let event = Event {
                event_id: "s1:1:1".into(),
                timestamp: "2026-01-01T00:00:00.000Z".into(),
                session_id: "s1".into(),
                turn_id: 1,
                correlation_id: Some("c1".into()),
                parent_id: Some("p1".into()),
                source: Source::Tool,
                severity: Severity::Warning,
                status: Some(Status::Running),
                visibility: Visibility::DETAIL,
                raw_ref: RawRef::span(1, 2),
                body: Body::Other(Other { type_name: name.clone(), payload: payload.clone(), extra: Map::new() }),
            };
            lines.push((name, serde_json::to_string(&event).unwrap()));
        }
    }
    lines
}

#[test]
fn every_type_of_the_catalog_reads_as_itself_and_writes_back_unchanged() {
    let lines = example_lines();
    assert_eq!(
        lines.iter().map(|(n, _)| n.clone()).chain(["summary".to_owned()]).collect::<Vec<_>>(),
        EventType::all_type_names()
    );
    for (name, line) in lines {
        let event: Event = serde_json::from_str(&line).unwrap();
        assert_eq!(event.type_name(), name);
        assert!(!matches!(event.body, Body::Other(_)), "{name} is read as a type not known");
        // Every field of the example is a field of the payload, and every envelope field is kept.
        let written: Value = serde_json::from_str(&serde_json::to_string(&event).unwrap()).unwrap();
        assert_eq!(written, serde_json::from_str::<Value>(&line).unwrap(), "{name}");
        // Read the same with the payload before the type (kept, then read once the type is known).
        let value: Map<String, Value> = serde_json::from_str(&line).unwrap();
        let (ty, rest): (Vec<_>, Vec<_>) = value.into_iter().partition(|(k, _)| k == "type");
        let late: Map<String, Value> = rest.into_iter().chain(ty).collect();
        assert_eq!(serde_json::from_str::<Event>(&serde_json::to_string(&late).unwrap()).unwrap(), event, "{name}");
    }
}

#[test]
fn the_skim_cuts_every_tool_output_string_of_every_type_and_nothing_else() {
    for (name, line) in example_lines() {
        let mut whole: Event = serde_json::from_str(&line).unwrap();
        let mut outputs = 0;
        whole.for_each_text_mut(|field, s| outputs += usize::from(field == TextField::ToolOutput && !s.is_empty()));
        let cut = Event::cut_tool_output(&line).map_or(Vec::new(), |c| c.cut);
        for piece in &cut {
            let text: String = serde_json::from_str(piece.literal).unwrap();
            assert_eq!(whole.tool_output(piece.field), Some(text.as_str()), "{name}");
        }
        assert_eq!(cut.len(), outputs, "{name}: the skim misses tool output, or cuts what is not");
    }
}

#[test]
fn the_man_page_lists_every_type_and_every_envelope_field() {
    let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/man/minicode-output.7")).unwrap();
    let section = |from: &str, to: &str| {
        let start = page.find(from).unwrap_or_else(|| panic!("no {from}")) + from.len();
        page[start..][..page[start..].find(to).unwrap()].to_owned()
    };
    let listed: Vec<String> = section(".SH EVENTS\n", "\n.PP")
        .split([',', ' ', '\n'])
        .map(|w| w.trim_end_matches('.'))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect();
    assert_eq!(listed, EventType::all_type_names(), "man/minicode-output.7, EVENTS");
    let mut fields: Vec<String> = section(".SH ENVELOPE\n", ".SH EVENTS")
        .lines()
        .filter_map(|l| l.strip_prefix(".B "))
        .flat_map(|l| l.split(", ").map(str::to_owned).collect::<Vec<_>>())
        .collect();
    let mut keys: Vec<String> =
        ["schema", "type", "payload"].into_iter().chain(ENVELOPE_KEYS.iter().copied()).map(str::to_owned).collect();
    fields.sort();
    keys.sort();
    assert_eq!(fields, keys, "man/minicode-output.7, ENVELOPE");
}

#[test]
fn a_line_error_names_its_column_not_line_1() {
    let e = serde_json::from_str::<Event>(r#"{"x":1}"#).unwrap_err();
    assert_eq!(crate::event::line_error(&e), "missing field `type` (column 7)");
    // An error past a line's end is said as serde says it.
    let e = serde_json::from_str::<serde_json::Value>("{\n").unwrap_err();
    assert_eq!(crate::event::line_error(&e), e.to_string());
}
