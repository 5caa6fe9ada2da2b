//! [`RunEvent`]: what a run reports while it happens (`app.stream(..)`).
//!
//! Events of one run come in this order for an agent step:
//! `StepStarted` → per model turn: `TextDelta`* → `Usage`? → `ToolCallRequested`* (model order)
//! → per call `ToolCallDecision` → (`ToolResult` | `ToolError` | `ToolCallCancelled`) → … →
//! `FinalAnswer` → `StepFinished` (an agent with a typed output: `OutputRejected` for each
//! invalid answer, and the answer's one `TextDelta` only once it is valid). A stream then ends with `Completed` (or the run's error).
//! Guardrails add a `GuardrailVerdict` per check: the input ones right after `StepStarted` (for
//! the target of a run with a store, right after `RunStarted`: they run before the run is
//! stored), the output ones before the text they release (`TextDelta`) and before
//! `FinalAnswer`.
use std::fmt;

pub use crate::contract::outcome::CallDecision;
use crate::model::Usage;

use super::RunOutput;

/// The kind of a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StepKind {
    /// An agent's tool loop.
    Agent,
    /// A router choosing a route (the chosen agent is a step of its own).
    Router,
    /// A workflow tool step.
    Tool,
    /// A workflow's `.map(..)` step.
    Map,
    /// A whole workflow.
    Workflow,
}

impl fmt::Display for StepKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Agent => "agent",
            Self::Router => "router",
            Self::Tool => "tool",
            Self::Map => "map",
            Self::Workflow => "workflow",
        })
    }
}

/// Why a router picked its route.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RouteReason {
    /// The model named this route.
    ModelChoice {
        /// The model's raw answer.
        answer: String,
    },
    /// The model's answer was unusable (or the model failed): the deterministic fallback.
    Fallback {
        /// Why the answer was not used.
        why: String,
    },
}

/// How a step ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StepOutcome {
    /// It produced an output.
    Succeeded,
    /// It failed; the error follows as the run's error or is handled by `on_error`.
    Failed {
        /// The error, rendered.
        error: String,
    },
    /// It failed and an `on_error` handler recovered.
    Recovered {
        /// The error, rendered.
        error: String,
    },
    /// It stopped resumable: it waits for approval, a call is in doubt, or the store failed
    /// (see [`RunError::leaves_run_resumable`](super::RunError::leaves_run_resumable)).
    Paused {
        /// Why, rendered.
        reason: String,
    },
}

impl StepOutcome {
    /// The outcome of a step that ended with `result`.
    pub(crate) fn of<T>(result: &Result<T, super::RunError>) -> Self {
        match result {
            Ok(_) => Self::Succeeded,
            Err(e) if e.leaves_run_resumable() => Self::Paused {
                reason: e.to_string(),
            },
            Err(e) => Self::Failed {
                error: e.to_string(),
            },
        }
    }
}

/// One event of a run. Every event but `RunStarted`/`Completed` names its `step`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum RunEvent {
    /// The run began.
    RunStarted {
        /// The run id.
        run_id: String,
        /// The target's name.
        target: String,
    },
    /// The run was taken up again from its journal (after `RunStarted`): completed steps are
    /// read back, not done again.
    RunResumed {
        /// The run id.
        run_id: String,
        /// Journal steps found.
        replayed_steps: u64,
    },
    /// A resumed run found a call started with no recorded end, of a tool that is not
    /// idempotent: the run stops with [`RunError::InDoubt`](super::RunError::InDoubt).
    ToolCallInDoubt {
        /// The run's target.
        step: String,
        /// The call.
        call_id: String,
        /// The tool.
        tool: String,
    },
    /// A gated call's ticket was stored and its channel told (`notified` says whether telling
    /// it worked; the ticket is pending either way).
    ApprovalRequested {
        /// The ticket.
        ticket: Box<crate::store::Ticket>,
        /// Whether the channel was told.
        notified: Result<(), String>,
    },
    /// A step began.
    StepStarted {
        /// Agent, router, tool, map or workflow name.
        step: String,
        /// Its kind.
        kind: StepKind,
        /// Its input.
        input: String,
    },
    /// A piece of model text, as it streams.
    TextDelta {
        /// The agent or router.
        step: String,
        /// The text.
        delta: String,
    },
    /// Token accounting of one model call.
    Usage {
        /// The agent or router.
        step: String,
        /// This call's usage.
        usage: Usage,
    },
    /// The model asked for a tool call (emitted for every call of a turn, in the model's order,
    /// before any runs).
    ToolCallRequested {
        /// The agent.
        step: String,
        /// The model's call id.
        call_id: String,
        /// The tool name the model used.
        tool: String,
        /// The raw JSON arguments.
        arguments: String,
    },
    /// What the guard decided about a call.
    ToolCallDecision {
        /// The agent (or workflow tool step).
        step: String,
        /// The call id.
        call_id: String,
        /// The tool.
        tool: String,
        /// The decision.
        decision: CallDecision,
    },
    /// A call's observation, as the model reads it.
    ToolResult {
        /// The agent.
        step: String,
        /// The call id.
        call_id: String,
        /// The tool.
        tool: String,
        /// The observation.
        content: String,
        /// Whether it reports an error or refusal.
        is_error: bool,
        /// Whether `max_result_size` cut it.
        truncated: bool,
    },
    /// A tool's own failure, in full (the model only gets a safe summary).
    ToolError {
        /// The agent.
        step: String,
        /// The call id.
        call_id: String,
        /// The tool.
        tool: String,
        /// The full error.
        error: String,
    },
    /// A call still in flight when a sibling blocked (or the run was cancelled); it was dropped.
    ToolCallCancelled {
        /// The agent.
        step: String,
        /// The call id.
        call_id: String,
        /// The tool.
        tool: String,
    },
    /// An agent handed the rest of the run to another (`#[agent(handoffs = [..])]`).
    Handoff {
        /// The agent that handed over.
        from: String,
        /// The agent that goes on.
        to: String,
        /// The reason the model gave, if any.
        reason: Option<String>,
    },
    /// An event of the run an agent tool's call started (`#[agent(agent_tools = [..])]`),
    /// nested in that call: from its `RunStarted` (the nested run's id) to its last event.
    Nested {
        /// The calling agent.
        step: String,
        /// The agent tool's call.
        call_id: String,
        /// The agent tool.
        tool: String,
        /// The nested run's event.
        event: Box<RunEvent>,
    },
    /// A router chose a route.
    RouteChosen {
        /// The router.
        router: String,
        /// The chosen agent.
        route: String,
        /// Why.
        reason: RouteReason,
    },
    /// A guardrail decided about a text at the boundary of an agent or router: `verdict` is
    /// `pass`, `rewrite`, `block` or `respond`, or `failed` when the guardrail errored,
    /// panicked or timed out (the step then fails closed).
    GuardrailVerdict {
        /// The agent or router.
        step: String,
        /// The guardrail's name.
        guardrail: String,
        /// Input or output.
        boundary: crate::contract::guardrail::Boundary,
        /// The whole text, a streamed window, or an interim text.
        scope: crate::contract::guardrail::TextScope,
        /// `pass`, `rewrite`, `block`, `respond` or `failed`.
        verdict: &'static str,
    },
    /// The answer of an agent with a typed output (`#[agent(output = ..)]`) failed its
    /// validation; it goes back to the model as a correction, or, past the agent's
    /// `output_retries`, the step fails with
    /// [`RunError::InvalidOutput`](super::RunError::InvalidOutput). The answer itself never
    /// reaches the caller.
    OutputRejected {
        /// The agent.
        step: String,
        /// Which invalid answer this is (1 for the first).
        attempt: u32,
        /// Every failing path.
        error: crate::dto::ValidationError,
    },
    /// A usage limit refused a model or tool call before it started (or a model call passed
    /// a token bound): the run stops with [`RunError::UsageLimit`](super::RunError::UsageLimit).
    UsageLimitExceeded {
        /// The agent, router or tool step.
        step: String,
        /// Which bound, and by how much.
        error: crate::contract::usage_limits::UsageLimitExceeded,
    },
    /// An agent produced its final answer (a turn without tool calls).
    FinalAnswer {
        /// The agent.
        step: String,
        /// The answer.
        text: String,
    },
    /// A step ended.
    StepFinished {
        /// The step.
        step: String,
        /// Its kind.
        kind: StepKind,
        /// How it ended.
        outcome: StepOutcome,
    },
    /// The last event of a successful stream: the same output `execute` returns.
    Completed(RunOutput),
}
