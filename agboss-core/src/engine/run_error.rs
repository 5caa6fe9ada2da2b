//! [`RunError`]: why a run failed, and which failures leave it resumable; [`StepFailedError`]:
//! why one step failed (a blocked tool, a guardrail's block, a failed call).
use crate::contract::outcome::{ToolBlockedError, ToolCallError};
use crate::dto::ValidationError;
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
    /// The run's agents handed it over more than `max_handoffs` times (a cycle, most
    /// likely: `#[agent(handoffs = [..])]`, `RunContext::max_handoffs`).
    #[error(
        "agent `{agent}` would hand the run over once more than max_handoffs ({max_handoffs}) allows"
    )]
    MaxHandoffsExceeded {
        /// The agent whose handoff was refused.
        agent: String,
        /// The limit.
        max_handoffs: u32,
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
    UsageLimit(#[from] crate::contract::usage_limits::UsageLimitExceeded),
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
    /// An edit ([`Decision::edit`](crate::engine::Decision::edit)) whose input fails the
    /// tool's input DTO: nothing was recorded, the ticket stays pending, and `source` names
    /// every failing field (what an inbox shows the approver beside the field). Checked once
    /// the approver is authorized.
    #[error("the edit of ticket `{ticket_id}` ({tool}) is refused: {source}")]
    InvalidEdit {
        /// The ticket (still pending).
        ticket_id: String,
        /// Its tool.
        tool: String,
        /// The failing fields (paths like `$.amountCents`).
        #[source]
        source: ValidationError,
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

/// A run that failed: which run ([`RunFailed::run_id`]), and why ([`RunFailed::error`], a
/// [`RunError`], which a `RunFailed` dereferences to). One pointer wide (both are boxed: an
/// error is the rare path, and a run's `Result` stays small). What [`App::execute`](crate::App::execute),
/// a [`RunStream`](super::RunStream)'s last item and the resumes
/// ([`App::resume_run`](crate::App::resume_run), [`App::resume_ticket`](crate::App::resume_ticket),
/// ...) return, so a run that stopped (blocked, failed, waiting for approval) is found by its id
/// without reading its events. Its `Display` and `source()` are the error's.
///
/// ```
/// use agboss_core::{App, RunContext, RunError, Target};
/// # futures::executor::block_on(async {
/// let app = App::builder().build().unwrap();
/// let failed = app.execute(Target::named("nobody"), "hi", RunContext::new()).await.unwrap_err();
/// assert!(failed.run_id().starts_with("run_"));
/// assert!(matches!(*failed, RunError::UnknownTarget { .. })); // `*`: the RunError
/// let error: RunError = failed.into_error();
/// # let _ = error;
/// # });
/// ```
#[derive(Debug)]
pub struct RunFailed(Box<(String, RunError)>);

impl RunFailed {
    /// Run `run_id` failed with `error`.
    pub fn new(run_id: impl Into<String>, error: impl Into<RunError>) -> Self {
        Self(Box::new((run_id.into(), error.into())))
    }
    /// The run. Empty only when no run was found to resume (a resume by ticket whose ticket
    /// could not be read).
    pub fn run_id(&self) -> &str {
        &self.0.0
    }
    /// Why it failed (also `*failed`).
    pub fn error(&self) -> &RunError {
        &self.0.1
    }
    /// The error, without the run id (also `RunError::from(failed)`).
    pub fn into_error(self) -> RunError {
        self.0.1
    }
    /// The run id and the error.
    pub fn into_parts(self) -> (String, RunError) {
        *self.0
    }
}

impl std::ops::Deref for RunFailed {
    type Target = RunError;
    fn deref(&self) -> &RunError {
        self.error()
    }
}

impl std::fmt::Display for RunFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self.error(), f)
    }
}

impl std::error::Error for RunFailed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(self.error())
    }
}

impl From<RunFailed> for RunError {
    fn from(failed: RunFailed) -> Self {
        failed.into_error()
    }
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
