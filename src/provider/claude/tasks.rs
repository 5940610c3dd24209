//! Background work in a Claude-shaped stream: asynchronous subagents and
//! `run_in_background` commands (Claude Code), background agents (Qwen Code).
//!
//! A `task_started` line ties a task to the call that launched it. When that call's result
//! arrives before the task has finished, the result is only a launch receipt: the call
//! stays open, in the background, until the task's `task_notification` (or, failing that, the
//! last status a `task_updated` set) says how it ended. A foreground subagent's notification
//! comes before its call's result, which then ends the call as usual.

use std::collections::HashMap;

use super::wire::Task;
use crate::engine::{parse_exit_in, Engine, ExitSource, ToolStatus, Update};
use crate::event::{ErrorCategory, ErrorInfo, Stream};

/// The tasks of a run that have started and not yet been reported ended.
#[derive(Debug, Default)]
pub(super) struct Tasks {
    /// Task id to the call that launched it.
    calls: HashMap<String, String>,
    /// Calls with a running task, to the last status a `task_updated` line gave it.
    running: HashMap<String, Option<String>>,
}

impl Tasks {
    /// `task_started`: the call now has a task running.
    pub fn started(&mut self, task: Task) {
        if let Some(call) = task.tool_use_id {
            if let Some(id) = task.task_id {
                self.calls.insert(id, call.clone());
            }
            self.running.entry(call).or_insert(None);
        }
    }

    /// True when the call's task is still running: its result is a launch receipt.
    pub fn is_running(&self, call: &str) -> bool {
        self.running.contains_key(call)
    }

    /// `task_updated`: remembers the status it sets, for when no notification follows.
    pub fn updated(&mut self, task: Task) {
        let call = task.tool_use_id.or_else(|| self.calls.get(task.task_id.as_deref()?).cloned());
        let status = task.patch.and_then(|p| p.status);
        if let (Some(call), Some(status)) = (call, status) {
            if let Some(s) = self.running.get_mut(&call) {
                *s = Some(status);
            }
        }
    }

    /// `task_notification`: the task ended. A call that went to the background ends with it;
    /// a call still in the foreground is ended by its own result, which follows.
    pub fn notified(&mut self, task: Task, engine: &mut Engine) {
        let call = task.tool_use_id.clone().or_else(|| self.calls.get(task.task_id.as_deref()?).cloned());
        let Some(call) = call else { return };
        self.forget(&call, task.task_id.as_deref());
        if !engine.tool_is_background(&call) {
            return;
        }
        if let Some(summary) = task.summary.as_deref() {
            engine.tool_output(&call, Stream::Combined, Update::Final, summary);
            if let Some(code) = parse_exit_in(summary) {
                engine.tool_exit(&call, ExitSource::ParsedText, code);
            }
        }
        end(engine, &call, task.status.as_deref());
    }

    /// End of input: a background call whose task an update said had ended ends so.
    pub fn finish(&mut self, engine: &mut Engine) {
        let mut ended: Vec<(String, String)> =
            self.running.drain().filter_map(|(call, status)| Some((call, status?))).collect();
        ended.sort();
        for (call, status) in ended {
            if engine.tool_is_background(&call) && status != "running" {
                end(engine, &call, Some(&status));
            }
        }
        self.calls.clear();
    }

    fn forget(&mut self, call: &str, task_id: Option<&str>) {
        self.running.remove(call);
        if let Some(id) = task_id {
            self.calls.remove(id);
        }
    }
}

/// Ends a background call with its task's status.
fn end(engine: &mut Engine, call: &str, status: Option<&str>) {
    let (status, error) = match status {
        Some("completed") | None => (ToolStatus::Completed, None),
        Some(s @ ("killed" | "stopped" | "cancelled")) => (
            ToolStatus::Cancelled,
            Some(ErrorInfo {
                category: ErrorCategory::Cancelled,
                message: format!("the background task was {s}"),
                action: None,
            }),
        ),
        Some(s) => (
            ToolStatus::Failed,
            Some(ErrorInfo { category: ErrorCategory::ToolError, message: format!("the background task {s}"), action: None }),
        ),
    };
    engine.tool_ended(call, status, error);
}
