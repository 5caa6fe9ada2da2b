//! [`RunError`]: why a run failed, and which failures leave it resumable.
use crate::error::StepFailedError;
use crate::model::ModelError;
use crate::store::{StoreError, Ticket};

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// No agent, router or workflow of that name (or a flow step that is not part of its
    /// workflow).
    #[error("unknown target: no {kind} named `{name}` in this app")]
    UnknownTarget {
        /// What was looked for.
        kind: String,
        /// The name.
        name: String,
    },
    /// No chat model for an agent or router.
    #[error(
        "no chat model for `{step}`: set one with `AppBuilder::model` or `AppBuilder::agent_model`"
    )]
    NoModel {
        /// The agent or router.
        step: String,
    },
    /// A model call failed.
    #[error("the model call of `{step}` failed: {source}")]
    Model {
        /// The agent or router.
        step: String,
        /// The model's error.
        #[source]
        source: ModelError,
    },
    /// An agent took `max_turns` model turns without a final answer.
    #[error("agent `{agent}` reached max_turns ({max_turns}) without a final answer")]
    MaxTurnsExceeded {
        /// The agent.
        agent: String,
        /// The limit.
        max_turns: u32,
    },
    /// A step failed: a blocked tool (`as_blocked()`), a failing guard, a tool error under
    /// `FailStep`, or an error an `on_error` handler re-raised.
    #[error(transparent)]
    Step(#[from] StepFailedError),
    /// The run's [`CancelToken`](super::CancelToken) was cancelled.
    #[error("the run was cancelled")]
    Cancelled,
    /// The thread store failed, refused the run (a foreign or unknown thread, a finished run,
    /// another worker's lease) or is not configured. A run stopped by a store failure stays
    /// resumable: its journal holds every step that completed.
    #[error("thread store: {0}")]
    Store(#[from] StoreError),
    /// A resumed run found a call of a tool that is not idempotent started with no recorded
    /// end: the tool may or may not have done its work, so it is not run again. Decide with
    /// [`App::resolve_in_doubt`](crate::App::resolve_in_doubt), then resume the run.
    #[error(
        "run `{run_id}`: tool call `{call_id}` of `{tool}` started and has no recorded end; it is \
         not run again (the tool is not idempotent): resolve it with App::resolve_in_doubt, then \
         resume the run"
    )]
    InDoubt {
        /// The run.
        run_id: String,
        /// The call.
        call_id: String,
        /// The tool.
        tool: String,
        /// The call's journal key.
        key: String,
    },
    /// The run stopped at gated calls waiting for a human decision: their tickets, in the
    /// model's order. Every other call of the turn ran and is journaled. Decide each ticket
    /// ([`App::decide`](crate::App::decide)), then resume the run
    /// ([`App::resume`](crate::App::resume) / [`App::resume_run`](crate::App::resume_run)); the
    /// turn goes on once every ticket is decided.
    #[error("run `{run_id}` waits for approval of {} call(s): {}", tickets.len(), tickets.iter().map(|t| format!("{} ({} via {})", t.id, t.tool, t.channel)).collect::<Vec<_>>().join(", "))]
    AwaitingApproval {
        /// The run.
        run_id: String,
        /// The pending tickets.
        tickets: Vec<Ticket>,
    },
    /// The approver may not decide the ticket (no approver named, another tenant's, or the
    /// channel refused, failed or panicked): nothing was decided.
    #[error("`{approver}` may not decide ticket `{ticket_id}`: {reason}")]
    Unauthorized {
        /// The approver's id.
        approver: String,
        /// The ticket.
        ticket_id: String,
        /// Why.
        reason: String,
    },
    /// [`App::resolve_in_doubt`](crate::App::resolve_in_doubt) found no call of that id in
    /// doubt in the run's journal (it finished, was resolved, or never started).
    #[error("run `{run_id}` has no call `{call_id}` in doubt")]
    NotInDoubt {
        /// The run.
        run_id: String,
        /// The call.
        call_id: String,
    },
    /// A resumed run does not match its journal (another input, or a model request that
    /// differs from the journaled one because the app changed). Nothing was run; the run stays
    /// resumable by an app that matches it.
    #[error("run `{run_id}` does not match its journal at `{key}`: {detail}")]
    JournalMismatch {
        /// The run.
        run_id: String,
        /// The step.
        key: String,
        /// What differs.
        detail: String,
    },
}

impl RunError {
    /// The block, when the run failed because an interceptor blocked a tool.
    pub fn as_blocked(&self) -> Option<&crate::ToolBlockedError> {
        match self {
            Self::Step(s) => s.as_blocked(),
            _ => None,
        }
    }
    /// Whether the run stays resumable after this error (its journal is kept, its lease given
    /// back): a store failure that may pass ([`StoreError::is_permanent`] is false), a call in
    /// doubt, a journal mismatch. Any other error finishes the run, a permanent store failure
    /// (corrupt or unknown stored data) included: retrying it would fail the same way.
    pub fn leaves_run_resumable(&self) -> bool {
        matches!(self, Self::Store(e) if !e.is_permanent())
            || matches!(
                self,
                Self::InDoubt { .. } | Self::JournalMismatch { .. } | Self::AwaitingApproval { .. }
            )
    }
    /// The step failure, if that is what ended the run.
    pub fn as_step_failed(&self) -> Option<&StepFailedError> {
        match self {
            Self::Step(s) => Some(s),
            _ => None,
        }
    }
}
