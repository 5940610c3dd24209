//! Approvals: one request and exactly one settlement each; a rejection marks its tool call,
//! whose end is then a denial. An agent's question to the user is an approval of kind
//! `question`, settled by its answer; declining it refuses no tool.

use super::emit::Meta;
use super::state::ApprovalState;
use super::{clean_id, scoped, Engine};
use crate::event::*;

impl Engine {
    /// Emits `approval.requested` once per approval id.
    pub fn approval_requested(&mut self, approval_id: &str, tool_call_id: Option<&str>, title: Option<String>) {
        self.request_approval(approval_id, tool_call_id, title, None);
    }

    /// An agent's question to the user: an approval exchange of kind `question`, which its
    /// answer settles ([`Decision::Answered`], [`Decision::Declined`], …).
    pub fn question_asked(&mut self, approval_id: &str, tool_call_id: Option<&str>, title: Option<String>) {
        self.request_approval(approval_id, tool_call_id, title, Some(ApprovalKind::Question));
    }

    fn request_approval(
        &mut self,
        approval_id: &str,
        tool_call_id: Option<&str>,
        title: Option<String>,
        kind: Option<ApprovalKind>,
    ) {
        let approval_id = &*clean_id(approval_id);
        let tool_call_id = tool_call_id.map(clean_id);
        let tool_call_id = tool_call_id.as_deref();
        let i = self.session_index();
        if self.sessions[i].approvals.contains_key(approval_id)
            || self.settled_approvals.contains(&scoped(i, approval_id))
        {
            return;
        }
        self.sessions[i]
            .approvals
            .insert(approval_id.to_owned(), ApprovalState { tool_call_id: tool_call_id.map(str::to_owned), kind });
        let body = Body::ApprovalRequested(Approval {
            approval_id: approval_id.to_owned(),
            tool_call_id: tool_call_id.map(str::to_owned),
            title,
            kind,
            decision: None,
        });
        let meta = Meta::new(Visibility::ALL).status(Status::Started).correlation(Some(approval_id.to_owned()));
        self.emit(body, meta);
    }

    /// Settles an approval once; a rejection marks its tool so that its end is `tool.denied`.
    pub fn approval_settled(&mut self, approval_id: &str, decision: Decision) {
        self.settle(&clean_id(approval_id), decision, Source::Agent);
    }

    pub(super) fn settle(&mut self, approval_id: &str, decision: Decision, source: Source) {
        let i = self.session_index();
        let s = &mut self.sessions[i];
        let Some(a) = s.approvals.remove(approval_id) else { return };
        self.settled_approvals.insert(&scoped(i, approval_id));
        let tool_call_id = a.tool_call_id;
        // An unanswered question refuses no tool; a refused permission does.
        if a.kind.is_none() && !decision.is_allowed() && decision != Decision::Unknown {
            if let Some(t) = tool_call_id.as_deref().and_then(|t| s.tools.get_mut(t)) {
                t.rejected = true;
            }
        }
        let status = if decision.is_yes() { Status::Completed } else { Status::Denied };
        let body = Body::ApprovalSettled(Approval {
            approval_id: approval_id.to_owned(),
            tool_call_id,
            title: None,
            kind: a.kind,
            decision: Some(decision),
        });
        let meta = Meta::new(Visibility::ALL).status(status).source(source).correlation(Some(approval_id.to_owned()));
        self.emit(body, meta);
    }
}
