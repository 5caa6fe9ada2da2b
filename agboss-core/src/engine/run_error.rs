//! [`RunError`]: why a run failed, and which failures leave it resumable; [`StepFailedError`]:
//! why one step failed (a blocked tool, a guardrail's block, a failed call).
use crate::contract::outcome::{ToolBlockedError, ToolCallError};
use crate::model::ModelError;
use crate::pipeline::guard::GuardrailBlockedError;
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
    /// An agent with a typed output (`#[agent(output = ..)]`) gave no valid answer: its last
    /// one failed the DTO's validation after every correction (`output_retries`) was used.
    /// The source names every failing path.
    #[error("agent `{agent}` gave no valid {} after {attempts} answers: {source}", source.dto)]
    InvalidOutput {
        /// The agent.
        agent: String,
        /// Invalid answers it gave.
        attempts: u32,
        /// The last answer's failures.
        #[source]
        source: crate::dto::ValidationError,
    },
    /// A usage limit refused a model or tool call before it started, or a model call passed a
    /// token bound (see [`UsageLimits`](super::UsageLimits)): the run stops, never silently.
    #[error(transparent)]
    UsageLimit(#[from] super::limits::UsageLimitExceeded),
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
    pub fn as_blocked(&self) -> Option<&ToolBlockedError> {
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

/// A step of an agent run or a workflow failed. A blocked tool is one kind of failed step:
/// handlers of `StepFailedError` catch `ToolBlockedError` too, and can tell it apart with
/// [`StepFailedError::as_blocked`] or a `match`. A block is always `ToolBlocked`, never a
/// `ToolCall` (which only [`StepFailedError::from_tool_call`] makes).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StepFailedError {
    /// An interceptor blocked a tool call.
    #[error(transparent)]
    ToolBlocked(#[from] ToolBlockedError),
    /// A guardrail blocked the input or the output of an agent or router (or failed closed).
    #[error(transparent)]
    GuardrailBlocked(#[from] GuardrailBlockedError),
    /// A tool call failed in another way that fails the step (never a block: that is
    /// `ToolBlocked`). Made by [`StepFailedError::from_tool_call`].
    #[error("step `{step}` failed: {source}")]
    #[non_exhaustive]
    ToolCall {
        /// The step (agent, tool or workflow name).
        step: String,
        /// The tool call's error.
        #[source]
        source: Box<ToolCallError>,
    },
    /// Any other failure of a step (model errors, turn limits...).
    #[error("step `{step}` failed: {message}")]
    Other {
        /// The step (agent, tool or workflow name).
        step: String,
        /// What went wrong.
        message: String,
    },
}

impl StepFailedError {
    /// The block, when the step failed because a tool was blocked.
    pub fn as_blocked(&self) -> Option<&ToolBlockedError> {
        match self {
            Self::ToolBlocked(b) => Some(b),
            Self::ToolCall { .. } | Self::GuardrailBlocked(_) | Self::Other { .. } => None,
        }
    }

    /// The guardrail's block, when a guardrail stopped the step.
    pub fn as_guardrail_blocked(&self) -> Option<&GuardrailBlockedError> {
        match self {
            Self::GuardrailBlocked(b) => Some(b),
            _ => None,
        }
    }

    /// Wraps a tool-call error as a step failure (a block stays a `ToolBlocked`).
    pub fn from_tool_call(step: impl Into<String>, err: ToolCallError) -> Self {
        match err.into_blocked() {
            Ok(blocked) => Self::ToolBlocked(blocked),
            Err(other) => Self::ToolCall {
                step: step.into(),
                source: Box::new(other),
            },
        }
    }
}
