//! Engine unit tests: ids, provenance, lifecycle rules and the summary.

use std::collections::BTreeMap;

use super::emit::event_id;
use super::*;

fn engine() -> Engine {
    Engine::new(Clock::Fixed(1_767_225_600_000), 1024)
}

fn shell(id: &str, cmd: &str) -> ToolStarted {
    ToolStarted {
        tool_call_id: id.into(),
        name: "Bash".into(),
        qualified: "Bash".into(),
        kind: ToolKind::Shell,
        target: None,
        input: None,
        command: Some(cmd.into()),
        cwd: None,
    }
}

fn types(events: &[Event]) -> Vec<String> {
    events.iter().map(|e| e.type_name().to_owned()).collect()
}

#[test]
fn ids_are_session_turn_seq_and_lines_without_events_wait_for_the_next_event() {
    let mut e = engine();
    e.begin_line(1, false);
    e.session_started(Some("abc"), SessionStarted { provider: "x".into(), ..Default::default() });
    e.end_line();
    e.begin_line(2, false);
    e.end_line();
    e.begin_line(3, true);
    e.end_line();
    e.begin_line(4, false);
    e.turn_started(Some("hi".into()));
    e.end_line();
    let evs: Vec<Event> = e.drain().collect();
    assert_eq!(evs[0].event_id, "abc:0:1");
    assert_eq!(evs[1].event_id, "abc:1:2");
    assert_eq!(evs[0].raw_ref, RawRef::span(1, 1));
    assert_eq!(evs[1].raw_ref, RawRef::span(2, 4));
}

#[test]
fn a_second_terminal_for_a_tool_is_absorbed() {
    let mut e = engine();
    e.begin_line(1, false);
    e.turn_started(None);
    e.tool_started(shell("t1", "ls"), ToolContext::default());
    e.tool_started(shell("t1", "ls"), ToolContext::default());
    e.tool_ended("t1", ToolStatus::Completed, None);
    e.tool_ended("t1", ToolStatus::Failed, None);
    e.tool_output("t1", Stream::Combined, Update::Delta, "late");
    let evs: Vec<Event> = e.drain().collect();
    assert_eq!(types(&evs), ["turn.started", "tool.started", "tool.completed"]);
}

#[test]
fn a_known_nonzero_exit_fails_a_completed_tool() {
    let mut e = engine();
    e.begin_line(1, false);
    e.tool_started(shell("t1", "make"), ToolContext::default());
    e.tool_exit("t1", ExitSource::Structured, 2);
    e.tool_ended("t1", ToolStatus::Completed, None);
    let last = e.drain().next_back().unwrap();
    assert_eq!(last.type_name(), "tool.failed");
    let Body::ToolEnded(t) = last.body else { panic!() };
    assert_eq!(t.output.unwrap().exit_code, Some(2));
}

#[test]
fn end_of_input_synthesizes_interrupted_terminals_and_a_failed_summary() {
    let mut e = engine();
    e.begin_line(1, false);
    e.session_started(None, SessionStarted { provider: "x".into(), ..Default::default() });
    e.turn_started(None);
    e.tool_started(shell("t1", "sleep 9"), ToolContext::default());
    e.approval_requested("a1", Some("t1"), None);
    e.end_line();
    let summary = e.finish(BTreeMap::new());
    let evs: Vec<Event> = e.drain().collect();
    assert_eq!(
        types(&evs),
        [
            "session.started",
            "turn.started",
            "tool.started",
            "approval.requested",
            "approval.settled",
            "tool.interrupted",
            "turn.interrupted"
        ]
    );
    assert!(evs[4..].iter().all(|e| e.source == Source::Normalizer));
    let Body::Summary(s) = &summary.body else { panic!() };
    assert!(!s.ok);
    assert_eq!(s.error.as_ref().unwrap().category, ErrorCategory::Interrupted);
    assert_eq!(summary.status, Some(Status::Interrupted));
    assert_eq!(s.figures.tools.interrupted, 1);
}

#[test]
fn empty_input_is_an_input_error() {
    let mut e = engine();
    let summary = e.finish(BTreeMap::new());
    let Body::Summary(s) = &summary.body else { panic!() };
    assert_eq!(s.error.as_ref().unwrap().category, ErrorCategory::InputError);
    assert_eq!(summary.event_id, "s1:0:1");
}

#[test]
fn a_rejected_approval_makes_the_failed_tool_denied() {
    let mut e = engine();
    e.begin_line(1, false);
    e.tool_started(shell("t1", "rm -rf /"), ToolContext::default());
    e.approval_requested("a1", Some("t1"), Some("run rm?".into()));
    e.approval_settled("a1", Decision::RejectOnce);
    e.approval_settled("a1", Decision::AllowOnce);
    e.tool_ended("t1", ToolStatus::Failed, None);
    let evs: Vec<Event> = e.drain().collect();
    assert_eq!(types(&evs), ["tool.started", "approval.requested", "approval.settled", "tool.denied"]);

    // A refused call never ran: what its result says is why, from both streams, not output.
    e.tool_started(shell("t2", "rm -rf /"), ToolContext::default());
    e.approval_requested("a2", Some("t2"), None);
    e.approval_settled("a2", Decision::RejectOnce);
    e.tool_output("t2", Stream::Stdout, Update::Final, "refused");
    e.tool_output("t2", Stream::Stderr, Update::Final, "by the user");
    e.tool_ended("t2", ToolStatus::Failed, None);
    let evs: Vec<Event> = e.drain().collect();
    let Some(Body::ToolEnded(end)) = evs.last().map(|ev| &ev.body) else { panic!("{evs:?}") };
    assert_eq!(
        (end.output.is_none(), end.error.as_ref().map(|e| e.message.as_str())),
        (true, Some("refused\nby the user"))
    );
}

#[test]
fn a_question_is_settled_by_its_answer_and_a_declined_one_refuses_no_tool() {
    let mut e = engine();
    e.begin_line(1, false);
    e.tool_started(shell("t1", "deploy"), ToolContext::default());
    e.question_asked("q1", Some("t1"), Some("Which env?".into()));
    e.approval_settled("q1", Decision::Declined);
    e.tool_ended("t1", ToolStatus::Failed, None);
    e.question_asked("q2", None, Some("Go on?".into()));
    e.approval_settled("q2", Decision::Answered);
    let evs: Vec<Event> = e.drain().collect();
    assert_eq!(types(&evs)[3], "tool.failed", "a declined question is no denial of the tool");
    let approvals: Vec<(Option<ApprovalKind>, Option<Decision>, Option<Status>)> = evs
        .iter()
        .filter_map(|ev| match &ev.body {
            Body::ApprovalRequested(a) | Body::ApprovalSettled(a) => Some((a.kind, a.decision, ev.status)),
            _ => None,
        })
        .collect();
    let q = Some(ApprovalKind::Question);
    assert_eq!(
        approvals,
        [
            (q, None, Some(Status::Started)),
            (q, Some(Decision::Declined), Some(Status::Denied)),
            (q, None, Some(Status::Started)),
            (q, Some(Decision::Answered), Some(Status::Completed)),
        ]
    );
}

#[test]
fn a_call_whose_approval_was_refused_is_denied_when_its_turn_is_cancelled() {
    let mut e = engine();
    e.begin_line(1, false);
    e.turn_started(None);
    e.tool_started(shell("t1", "touch x"), ToolContext::default());
    e.tool_started(shell("t2", "ls"), ToolContext::default());
    e.approval_requested("a1", Some("t1"), None);
    e.approval_settled("a1", Decision::RejectOnce);
    e.turn_ended(Outcome::Cancelled, None, None);
    let evs: Vec<Event> = e.drain().collect();
    assert_eq!(types(&evs)[5..], ["tool.denied", "tool.cancelled", "turn.cancelled"]);
}

#[test]
fn usage_totals_replace_and_increments_add() {
    let mut e = engine();
    e.begin_line(1, false);
    let u = Usage { input_tokens: Some(10), ..Default::default() };
    e.usage(u, UsageScope::Increment);
    e.usage(u, UsageScope::Increment);
    e.usage(Usage { input_tokens: Some(15), output_tokens: Some(3), ..Default::default() }, UsageScope::Total);
    let summary = e.finish(BTreeMap::new());
    let Body::Summary(s) = &summary.body else { panic!() };
    assert_eq!(s.figures.usage.input_tokens, Some(15));
    assert_eq!(s.figures.usage.output_tokens, Some(3));
    assert_eq!(s.figures.usage.cache_read, None);
}

#[test]
fn running_totals_replace_and_their_events_carry_what_each_added() {
    let mut e = engine();
    e.begin_line(1, false);
    let total = |input, output| Usage { input_tokens: Some(input), output_tokens: Some(output), ..Default::default() };
    // Codex's turn 1, then its resumed turn 2 reporting the thread's running total.
    e.usage(total(19_254, 24), UsageScope::Cumulative);
    e.usage(total(29_051, 36), UsageScope::Cumulative);
    let added: Vec<Usage> =
        e.drain().filter_map(|ev| if let Body::Usage(u) = ev.body { Some(u) } else { None }).collect();
    assert_eq!(added, [total(19_254, 24), total(9_797, 12)]);
    let summary = e.finish(BTreeMap::new());
    let Body::Summary(s) = &summary.body else { panic!() };
    assert_eq!(s.figures.usage, total(29_051, 36));
}

#[test]
fn event_ids_are_written_as_format_writes_them() {
    for (session, turn, seq) in [
        ("s1", 0, 1),
        ("", 0, 0),
        ("ses_Ä✓", 9, 10),
        ("x", 10, 99),
        ("x", u64::MAX, u64::MAX - 1),
        ("y", 1_000_000, 12_345_678_901),
    ] {
        assert_eq!(event_id(session, turn, seq), format!("{session}:{turn}:{seq}"));
    }
    for n in (0..64).map(|k| 1u64 << k).chain((0..20).map(|k| 10u64.pow(k))).flat_map(|n| [n - 1, n, n + 1]) {
        assert_eq!(event_id("s", n, n), format!("s:{n}:{n}"));
    }
}

#[test]
fn an_unnamed_session_never_takes_a_name_a_provider_gave() {
    let started = || SessionStarted { provider: "x".into(), ..Default::default() };
    let mut e = engine();
    e.session_started(Some("s2"), started());
    e.session_started(None, started());
    assert_eq!(e.session_id(), Some("s3"));
    e.session_started(Some("s2"), started());
    assert_eq!((e.current, e.sessions.len()), (Some(0), 2), "back to the session the provider named");
    e.use_session("s3", "x");
    assert_eq!(e.current, Some(1));
}

#[test]
fn a_background_call_outlives_its_turn_and_is_interrupted_only_when_the_input_ends() {
    let mut e = engine();
    e.begin_line(1, false);
    e.turn_started(None);
    e.tool_started(shell("bg", "sleep 9"), ToolContext::default());
    e.tool_started(shell("fg", "ls"), ToolContext::default());
    e.tool_backgrounded("bg");
    e.turn_ended(Outcome::Completed, None, None);
    let evs: Vec<Event> = e.drain().collect();
    // The turn's end interrupts the call in the foreground only.
    assert_eq!(types(&evs), ["turn.started", "tool.started", "tool.started", "tool.interrupted", "turn.completed"]);
    assert!(e.tool_is_open("bg") && e.tool_is_background("bg"));
    e.begin_line(2, false);
    e.tool_output("bg", Stream::Combined, Update::Final, "done\n");
    e.tool_ended("bg", ToolStatus::Completed, None);
    let evs: Vec<Event> = e.drain().collect();
    assert_eq!(types(&evs), ["tool.completed"]);

    // One still running at the end of input is cut short, and the run with it.
    let mut e = engine();
    e.begin_line(1, false);
    e.turn_started(None);
    e.tool_started(shell("bg", "sleep 9"), ToolContext::default());
    e.tool_backgrounded("bg");
    e.turn_ended(Outcome::Completed, None, None);
    let summary = e.finish(BTreeMap::new());
    let evs: Vec<Event> = e.drain().collect();
    assert_eq!(types(&evs), ["turn.started", "tool.started", "turn.completed", "tool.interrupted"]);
    let Body::Summary(s) = summary.body else { panic!() };
    assert_eq!(s.error.map(|e| e.category), Some(ErrorCategory::Interrupted));
}

#[test]
fn a_result_before_its_call_settles_the_call_when_it_arrives() {
    let mut e = engine();
    e.begin_line(1, false);
    e.turn_started(None);
    e.end_line();
    e.drain().for_each(drop);
    e.begin_line(2, false);
    e.set_time(1_000);
    e.tool_output("t1", Stream::Combined, Update::Final, "out\n");
    e.tool_exit("t1", ExitSource::Structured, 3);
    e.tool_ended("t1", ToolStatus::Completed, None);
    e.end_line();
    assert!(e.drain().next().is_none(), "nothing is said of a call before it is announced");
    e.begin_line(3, false);
    e.set_time(2_000);
    e.tool_started(shell("t1", "false"), ToolContext::default());
    e.end_line();
    let evs: Vec<Event> = e.drain().collect();
    assert_eq!(types(&evs), ["tool.started", "tool.failed"]);
    let Body::ToolEnded(t) = &evs[1].body else { panic!() };
    let out = t.output.as_ref().unwrap();
    assert_eq!((out.exit_code, out.stdout.as_deref()), (Some(3), Some("out\n")));
    // The end keeps its own time and lines.
    assert_eq!(evs[1].timestamp, "1970-01-01T00:00:01.000Z");
    assert_eq!(evs[1].raw_ref, RawRef::span(2, 3));
}

/// An end whose call was never announced is reported when its turn ends, inside the turn;
/// one outside any turn at the end of input.
#[test]
fn an_end_whose_call_never_comes_is_reported_when_its_turn_ends() {
    let mut e = engine();
    e.begin_line(1, false);
    e.turn_started(None);
    e.tool_output("lost", Stream::Combined, Update::Final, "partial");
    e.tool_ended("never", ToolStatus::Failed, None);
    e.turn_ended(Outcome::Completed, None, None);
    e.tool_ended("after", ToolStatus::Completed, None);
    e.finish(BTreeMap::new());
    let evs: Vec<Event> = e.drain().collect();
    assert_eq!(
        types(&evs),
        ["turn.started", "tool.started", "tool.failed", "turn.completed", "tool.started", "tool.completed"]
    );
    assert!(matches!(&evs[1].body, Body::ToolStarted(t) if t.tool_call_id == "never" && t.name == "unknown"));
    assert!(matches!(&evs[4].body, Body::ToolStarted(t) if t.tool_call_id == "after"));
}

#[test]
fn usage_adds_up_and_saturates_instead_of_wrapping() {
    let mut total = Usage { input_tokens: Some(u64::MAX), ..Usage::default() };
    total.add(&Usage { input_tokens: Some(2), output_tokens: Some(5), ..Usage::default() });
    assert_eq!((total.input_tokens, total.output_tokens, total.cache_read), (Some(u64::MAX), Some(5), None));
}
