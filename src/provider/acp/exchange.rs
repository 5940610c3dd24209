//! Requests and their responses: `session/new`, `session/load`, `session/prompt`,
//! `session/request_permission`, `elicitation/create` (a question to the user) and the
//! `terminal/*` answers a client gives. Without direction markers a response is matched to
//! its request by id and shape, latest first, since both sides number their requests
//! independently.

use serde_json::value::RawValue;

use super::wire::{
    AnyResult, ContentBlock, ElicitationParams, PermissionParams, PromptParams, RpcError, SessionParams,
    TerminalParams,
};
use super::{id_text, params, usage, Acp, Dialect};
use crate::engine::{Engine, UsageScope};
use crate::event::{Decision, ErrorCategory, ErrorInfo, Outcome};
use crate::provider::errors::provider_error;
use crate::provider::LineError;

/// A request still waiting for its response.
#[derive(Debug)]
pub(super) struct Request {
    /// The raw JSON id.
    id: String,
    /// Sent by the agent (answered by the client) rather than by the client.
    by_agent: bool,
    what: Pending,
}

/// At most this many requests wait for an answer: with the agent's stdout alone, the
/// agent's own requests are never answered.
const MAX_PENDING: usize = 1024;

/// What a request was, so that its response can be read.
#[derive(Debug)]
enum Pending {
    /// `initialize`, `authenticate`: an error fails the run.
    Setup,
    NewSession {
        cwd: Option<String>,
    },
    LoadSession {
        session: Option<String>,
    },
    Prompt {
        session: Option<String>,
    },
    Permission {
        approval: String,
        tool: String,
        session: Option<String>,
        options: Vec<(String, Decision)>,
    },
    /// `elicitation/create`.
    Question {
        approval: String,
        session: Option<String>,
    },
    /// `terminal/output` or `terminal/wait_for_exit`.
    Terminal {
        terminal: String,
    },
    Other,
}

/// Client→agent requests.
const AGENT_METHODS: [&str; 13] = [
    "initialize",
    "authenticate",
    "session/new",
    "session/load",
    "session/resume",
    "session/prompt",
    "session/set_mode",
    "session/set_config_option",
    "session/set_model",
    "session/list",
    "session/delete",
    "session/close",
    "logout",
];

/// Agent→client requests.
const CLIENT_METHODS: [&str; 9] = [
    "session/request_permission",
    "fs/read_text_file",
    "fs/write_text_file",
    "terminal/create",
    "terminal/output",
    "terminal/release",
    "terminal/wait_for_exit",
    "terminal/kill",
    "elicitation/create",
];

/// Notifications that carry nothing to report.
pub(super) const QUIET_NOTIFICATIONS: [&str; 3] = ["session/cancel", "$/cancel_request", "elicitation/complete"];

impl Acp {
    // -------------------------------------------------------------- requests ----

    pub(super) fn request(
        &mut self,
        method: &str,
        id: &RawValue,
        raw: Option<&RawValue>,
        engine: &mut Engine,
    ) -> Result<(), LineError> {
        let from_client = AGENT_METHODS.contains(&method);
        if !from_client && !CLIENT_METHODS.contains(&method) {
            return Err(LineError::UnknownType(method.to_owned()));
        }
        let pending = match method {
            "initialize" | "authenticate" => Pending::Setup,
            "session/new" => Pending::NewSession { cwd: params::<SessionParams>(raw).unwrap_or_default().cwd },
            "session/load" | "session/resume" => {
                let p: SessionParams = params(raw)?;
                if let Some(sid) = p.session_id.as_deref().filter(|s| engine.session_id() != Some(*s)) {
                    engine.session_started(Some(sid), self.session_info(p.cwd, None));
                }
                Pending::LoadSession { session: p.session_id }
            }
            "session/prompt" => {
                let p: PromptParams = params(raw)?;
                self.enter_session(engine, p.session_id.as_deref());
                let text: Vec<&str> = p.prompt.iter().flatten().filter_map(ContentBlock::text).collect();
                self.turn_over();
                engine.turn_started((!text.is_empty()).then(|| text.join("\n")));
                Pending::Prompt { session: p.session_id }
            }
            "session/request_permission" => self.permission_requested(id, params(raw)?, engine),
            "elicitation/create" => self.question_asked(id, params(raw)?, engine),
            "terminal/output" | "terminal/wait_for_exit" => match params::<TerminalParams>(raw) {
                Ok(p) => Pending::Terminal { terminal: p.terminal_id },
                Err(_) => Pending::Other,
            },
            _ => Pending::Other,
        };
        self.transcript |= from_client;
        if self.pending.len() == MAX_PENDING {
            self.pending.remove(0);
        }
        self.pending.push(Request { id: id.get().to_owned(), by_agent: !from_client, what: pending });
        Ok(())
    }

    fn permission_requested(&mut self, id: &RawValue, p: PermissionParams, engine: &mut Engine) -> Pending {
        self.enter_session(engine, p.session_id.as_deref());
        self.note_dialect(&p.tool_call);
        engine.ensure_turn();
        let tool = p.tool_call.tool_call_id.clone();
        let title = p.tool_call.title.clone();
        self.tools.update(engine, self.dialect, p.tool_call, true);
        self.tools.permission_asked(&tool);
        let approval = id_text(id);
        engine.approval_requested(&approval, Some(&tool), title);
        let options =
            p.options.unwrap_or_default().into_iter().map(|o| (o.option_id, decision_of(o.kind.as_deref()))).collect();
        Pending::Permission { approval, tool, session: p.session_id, options }
    }

    /// An agent's question (a form to fill, or a URL to visit): an approval exchange of kind
    /// `question`. One scoped to a request rather than a session opens no turn.
    fn question_asked(&mut self, id: &RawValue, p: ElicitationParams, engine: &mut Engine) -> Pending {
        self.enter_session(engine, p.session_id.as_deref());
        if p.session_id.is_some() {
            engine.ensure_turn();
        }
        let title = match (p.message.filter(|m| !m.is_empty()), p.url) {
            (Some(m), Some(url)) => Some(format!("{m} ({url})")),
            (m, url) => m.or(url),
        };
        let approval = id_text(id);
        engine.question_asked(&approval, p.tool_call_id.as_deref(), title);
        Pending::Question { approval, session: p.session_id }
    }

    // ------------------------------------------------------------- responses ----

    pub(super) fn response(
        &mut self,
        id: Option<&RawValue>,
        result: Option<&RawValue>,
        error: Option<RpcError>,
        engine: &mut Engine,
    ) {
        let result: AnyResult = result.and_then(|r| serde_json::from_str(r.get()).ok()).unwrap_or_default();
        let pending = id.and_then(|id| self.take_pending(id.get(), &result, error.is_some()));
        if let Some(e) = error {
            return self.failed(pending, &e, engine);
        }
        match pending {
            Some(Pending::Prompt { session }) => self.prompt_ended(session.as_deref(), result, engine),
            Some(Pending::Permission { approval, tool, session, options }) => {
                let decision = match result.outcome {
                    Some(o) if o.outcome == "selected" => options
                        .into_iter()
                        .find(|(id, _)| Some(id) == o.option_id.as_ref())
                        .map_or(Decision::Unknown, |(_, d)| d),
                    Some(o) if o.outcome == "cancelled" => Decision::Cancelled,
                    _ => Decision::Unknown,
                };
                if decision != Decision::Unknown {
                    self.tools.permission_answered(&tool, decision.is_allowed());
                }
                self.enter_session(engine, session.as_deref());
                engine.approval_settled(&approval, decision);
            }
            Some(Pending::Question { approval, session }) => {
                let decision = match result.action.as_deref() {
                    Some("accept") => Decision::Answered,
                    Some("decline") => Decision::Declined,
                    Some("cancel") => Decision::Cancelled,
                    _ => Decision::Unknown,
                };
                self.enter_session(engine, session.as_deref());
                engine.approval_settled(&approval, decision);
            }
            Some(Pending::NewSession { cwd }) => {
                // The client's request is in the transcript, so its prompts would be: a
                // session without one was never asked anything.
                if self.session_created(result, cwd, engine) {
                    engine.session_closed();
                }
            }
            Some(Pending::LoadSession { session }) => {
                // The replayed history is over.
                self.enter_session(engine, session.as_deref());
                engine.turn_ended(Outcome::Completed, None, None);
            }
            Some(Pending::Terminal { terminal }) => {
                let exit = result.exit_status.as_ref().and_then(|s| s.exit_code).or(result.exit_code);
                self.tools.terminal(engine, &terminal, result.output.as_deref(), result.truncated == Some(true), exit);
            }
            // Without its request a response is known by its shape.
            Some(Pending::Setup | Pending::Other) | None => {
                if let Some(agent) = result.agent_info {
                    self.dialect = Dialect::of_agent(&agent.name);
                    self.agent = Some(agent);
                } else if result.stop_reason.is_some() {
                    self.prompt_ended(None, result, engine);
                } else if result.session_id.is_some() {
                    self.session_created(result, None, engine);
                }
            }
        }
    }

    /// The latest pending request with this id that the response can answer. Both sides
    /// number their requests, so the id alone is not enough: the answer's shape says who
    /// sent it where it can (a permission outcome or terminal output comes from the
    /// client), and the agent's requests are only answered in a transcript.
    fn take_pending(&mut self, id: &str, result: &AnyResult, is_error: bool) -> Option<Pending> {
        let by_client = result.outcome.is_some()
            || result.action.is_some()
            || result.output.is_some()
            || result.exit_status.is_some()
            || result.exit_code.is_some();
        self.transcript |= by_client;
        let transcript = self.transcript;
        let fits = |r: &Request| {
            let side = if r.by_agent { transcript } else { !by_client };
            side && match r.what {
                Pending::Prompt { .. } => is_error || result.stop_reason.is_some(),
                Pending::Permission { .. } => is_error || result.outcome.is_some(),
                Pending::Question { .. } => is_error || result.action.is_some(),
                _ => result.stop_reason.is_none() && result.outcome.is_none() && result.action.is_none(),
            }
        };
        let i = self.pending.iter().rposition(|r| r.id == id && fits(r))?;
        Some(self.pending.remove(i).what)
    }

    /// A `session/new` response: true when it named the session it made.
    fn session_created(&mut self, result: AnyResult, cwd: Option<String>, engine: &mut Engine) -> bool {
        let Some(sid) = result.session_id else { return false };
        self.cost.reset();
        let model = result.models.and_then(|m| m.current_model_id).or_else(|| {
            let options = result.config_options?;
            let model = options.into_iter().find(|o| o.category.as_deref() == Some("model"))?;
            model.current_value?.as_str().map(str::to_owned)
        });
        engine.session_started(Some(&sid), self.session_info(cwd, model));
        self.say_logged_out(engine);
        true
    }

    fn prompt_ended(&mut self, session: Option<&str>, result: AnyResult, engine: &mut Engine) {
        self.enter_session(engine, session);
        engine.ensure_turn();
        let mut figures = result.usage.as_ref().map(usage::of_prompt).unwrap_or_default();
        figures.cost_usd = self.cost.take_turn();
        engine.usage(figures, UsageScope::Increment);
        let (mut outcome, mut error) = result.stop_reason.as_deref().map_or((Outcome::Completed, None), stop_outcome);
        if let Some(said) = self.system_error.take().filter(|_| outcome == Outcome::Completed) {
            let said = said.trim();
            let message = if said.is_empty() { "the agent's model request failed (system error)" } else { said };
            outcome = Outcome::Failed;
            error = Some(provider_error(message, None));
        }
        engine.turn_ended(outcome, result.stop_reason, error);
        self.turn_over();
    }

    /// Forgets what the turn said of itself: the next one starts clean.
    pub(super) fn turn_over(&mut self) {
        self.system_error = None;
        self.tools.cancel_requested = false;
    }

    /// A JSON-RPC error response: a failed prompt fails its turn, a failed setup the run.
    fn failed(&mut self, pending: Option<Pending>, e: &RpcError, engine: &mut Engine) {
        let error = rpc_error(e);
        match pending {
            Some(Pending::Prompt { session }) => {
                self.enter_session(engine, session.as_deref());
                engine.ensure_turn();
                if e.code == REQUEST_CANCELLED {
                    engine.turn_ended(Outcome::Cancelled, None, None);
                } else {
                    engine.turn_ended(Outcome::Failed, None, Some(error));
                }
                self.turn_over();
            }
            Some(Pending::Setup | Pending::NewSession { .. } | Pending::LoadSession { .. }) => {
                self.run_failed(engine, error)
            }
            // The client could not answer the agent, or a side request failed: the agent
            // reports what that meant for the call.
            Some(Pending::Permission { .. } | Pending::Question { .. } | Pending::Terminal { .. } | Pending::Other) => {}
            None if engine.turn_is_open() => {
                engine.turn_ended(Outcome::Failed, None, Some(error));
                self.turn_over();
            }
            None => self.run_failed(engine, error),
        }
    }
}

/// ACP's "Authentication required".
const AUTH_REQUIRED: i64 = -32000;
/// ACP's "Request cancelled".
const REQUEST_CANCELLED: i64 = -32800;

/// Classifies a JSON-RPC error; the detail agents put in `data` joins the message.
fn rpc_error(e: &RpcError) -> ErrorInfo {
    let detail = match &e.data {
        Some(serde_json::Value::String(s)) => Some(s.as_str()),
        Some(d) => d.get("message").and_then(serde_json::Value::as_str),
        None => None,
    };
    let message = match detail {
        Some(d) if !d.is_empty() && !e.message.contains(d) => format!("{}: {d}", e.message),
        _ => e.message.clone(),
    };
    let mut error = provider_error(&message, None);
    if e.code == AUTH_REQUIRED {
        error.category = ErrorCategory::ConfigurationError;
        error.action = Some("authenticate the agent (for example with its login command) and retry".into());
    }
    error
}

/// How a prompt turn ended, by ACP stop reason.
pub(super) fn stop_outcome(reason: &str) -> (Outcome, Option<ErrorInfo>) {
    let failed = |category, message: &str, action: &str| {
        (Outcome::Failed, Some(ErrorInfo { category, message: message.into(), action: Some(action.into()) }))
    };
    match reason {
        "cancelled" => (Outcome::Cancelled, None),
        "max_tokens" => failed(
            ErrorCategory::BudgetExceeded,
            "the agent stopped: it reached its maximum number of tokens",
            "raise the agent's token limit or split the task",
        ),
        "max_turn_requests" => failed(
            ErrorCategory::MaxTurns,
            "the agent stopped: it reached its maximum number of model requests for one turn",
            "raise the agent's turn limit or split the task",
        ),
        "refusal" => (Outcome::Failed, Some(crate::provider::errors::refused())),
        "end_turn" => (Outcome::Completed, None),
        // Not one of the schema's reasons: how the turn ended is not known, so not ok.
        other => failed(
            ErrorCategory::ProviderError,
            &format!("the turn ended with stop reason {other:?}, which is not one ACP defines"),
            "check the agent's ACP version, or report the new stop reason",
        ),
    }
}

fn decision_of(kind: Option<&str>) -> Decision {
    match kind {
        Some("allow_once") => Decision::AllowOnce,
        Some("allow_always") => Decision::AllowAlways,
        Some("reject_once") => Decision::RejectOnce,
        Some("reject_always") => Decision::RejectAlways,
        _ => Decision::Unknown,
    }
}
