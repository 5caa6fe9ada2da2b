//! Layer 5, the engine: runs of an agent, a router or a workflow (the [`Target`]) to a final
//! answer, under a [`RunContext`] (tenant, run id, cancellation, limits, a hook to wrap tool
//! callbacks). [`App::execute`](crate::App::execute) runs it without an event sink,
//! [`App::stream`](crate::App::stream) with one, yielding its [`RunEvent`]s and ending with
//! `RunEvent::Completed(output)` (the value `execute` returns) or with the error `execute` returns.
//!
//! # The tool loop of an agent
//! Each model turn's tool calls go through the agent's callback stack (by default its
//! [`BoundTool`](crate::cascade::BoundTool)s on their path, each running the whole guarded pipeline,
//! decorated by [`crate::callback`]); every [`CallOutcome`](crate::CallOutcome) is read by
//! the one observation policy ([`crate::pipeline::observe`]):
//!
//! 1. Unknown tool, arguments that are not JSON, arguments that fail the input DTO: the model
//!    gets an error observation saying exactly what was wrong (field paths for the DTO), and the
//!    loop goes on.
//! 2. `before_tool_call` chain → approval hook point → `run` → `after_tool_call` chain → output
//!    re-validation → masking and truncation → observation.
//! 3. `reply_to_model(message)`: the tool does not run; `message` is the call's observation.
//! 4. `block(reason)`: the tool does not run and the step fails at once with
//!    [`ToolBlockedError`](crate::contract::outcome::ToolBlockedError) (as a [`StepFailedError`]);
//!    sibling calls of the same turn still in flight are dropped (cancelled). An interceptor that
//!    errors, panics or runs past its time limit fails the step the same way (fail closed; never
//!    a soft observation, whatever a listener returns).
//! 5. A tool's own error (failure, panic, timeout, invalid output) is reported to the model as a
//!    safe observation (generic text and the error class) unless a listener reported it; the full
//!    error goes to `tracing` and to the event stream ([`RunEvent::ToolError`]). With
//!    [`ToolErrorPolicy::FailStep`](crate::contract::agent::ToolErrorPolicy::FailStep) (on the agent, or per tool
//!    with [`RunContext::tool_error_policy`]) it fails the step instead.
//! 6. The calls of one turn run concurrently, at most `max_parallel_tool_calls` at once (default
//!    [`DEFAULT_MAX_PARALLEL_TOOL_CALLS`]); observations go back in the model's order. At most
//!    `max_turns` model turns (default [`DEFAULT_MAX_TURNS`]), else
//!    [`RunError::MaxTurnsExceeded`]. A tool's `run` is bounded by `#[tool(timeout_ms = ..)]` and
//!    [`RunContext::tool_timeout`]; each interceptor hook by its own limit.
//! 7. `after_tool_call` hooks run only for calls whose tool ran and succeeded: a reply, a block,
//!    a guard failure or a tool error skips them (and their output never reaches the model).
//!
//! # The units and who owns what
//! One owner holds a run's state, `RunState` (`state.rs`): the runtime, the
//! context, the event sink, the run id, the journal and the input precheck flag, behind
//! accessors. The driver (`run.rs`: `run`, [`RunStream`]) sets it up before the target runs
//! (it prechecks the input, opens the journal); from then on every unit gets `&RunState` and
//! the run's `&mut Stats`, reads the state, emits through it, and returns an outcome. No unit
//! changes the run's state, and none is a method of it.
//!
//! | file | unit | owns |
//! |---|---|---|
//! | `state.rs` | the run's state | `RunState` and its narrow API (`emit`, `or_cancel`, `journal`, ...) |
//! | `run.rs` | the driver | a run's setup, span, journal open/heartbeat/close, dispatch by target; `RunStream` |
//! | `agent_loop.rs` | the agent loop | model turns of one agent until its final answer or `max_turns` |
//! | `tool_calls.rs` | a turn's calls | concurrency, in-doubt checks, journaling and observation of each call |
//! | `first_turn.rs` | parallel input guardrails | the first turn raced with them, held until they pass |
//! | `guardrails.rs` | the guardrail boundary | `check_text` on input/output, the precheck before a run is stored |
//! | `typed_output.rs` | a typed answer | asking for the schema, decoding, corrections, `InvalidOutput` |
//! | `gate.rs` | the output gate | `OutputGate`: holding, windowing and releasing streamed text |
//! | `model_turn.rs` | journaled replay of model turns | one model call: read back, or streamed and recorded |
//! | `router.rs` | the router | choosing a route, running it |
//! | `agent_tool.rs`, `nesting.rs` | agents as tools, nested runs | the `ask_<name>` tool type and its nested run; what a run lends its tool calls (budget, depth, tenant, events) |
//! | `handoff.rs` | handoffs | an agent's `transfer_to_<name>` tools, the handoff's journal step, its target, the run's bound |
//! | `flow.rs` | the workflow flow | a workflow's steps in order, `on_error` handlers |
//! | `tool_step.rs` | a workflow tool step | one journaled call of a tool, no model reading it |
//! | `approval.rs` | gated calls in a run | a journaled call's ticket: opening, claiming, refusing |
//! | `ticket/` | the ticket lifecycle | the one state machine of a ticket, `Decision`, `OnRejection` |
//! | `direct.rs` | gated direct calls | a direct call's one-call run and its ticket |
//! | `journal.rs`, `replay.rs`, `in_doubt.rs` | the journal | the run's lease and writes; what it read back; calls in doubt |
//! | `budget.rs`, `prices.rs` | usage limits | the run's budget (its limits, `UsageLimits`, are data of `contract::usage_limits`): reserve before a call, settle after, nested runs; `PriceTable` |
//! | `tenant_usage.rs`, `admit.rs` | admitting a call | the tenant windows in the store; a call reserved in the run's budget then in its tenant's windows, settled after |
//! | `context.rs`, `workflow.rs`, `output.rs`, `run_error.rs`, `events.rs` | data | `RunContext`/`Target`, `Flow`, `RunOutput`/`Stats`, `RunError`, `RunEvent` |
//! | `telemetry.rs`, `pretty.rs` | reporting | spans; events for people |
//!
//! Invariants: the files import each other without a cycle (data at the bottom, then the
//! state, the boundary and the journal, the units, the driver on top:
//! `scripts/file-cycles.py` checks it); `RunState` has its inherent impl in `state.rs` only;
//! the journal is written before a run goes on (a resumed run reads back what it finds);
//! every ticket transition goes through `ticket/`.
//!
//! Uses [`crate::callback`], [`crate::cascade`], [`crate::pipeline`], [`crate::contract`] and the
//! leaves.
use std::collections::HashMap;
use std::sync::Arc;

use crate::callback::stack::ToolCallListenerSet;
use crate::cascade::{Resolved, ResolvedAgent, ResolvedRouter, ResolvedWorkflow};
use crate::model::SharedChatModel;
use crate::pipeline::ErasedChannel;
use crate::store::SharedStore;

pub(crate) mod account;
mod admit;
mod agent_loop;
pub(crate) mod agent_tool;
pub(crate) mod approval;
mod budget;
pub mod context;
pub(crate) mod direct;
pub mod events;
mod first_turn;
mod flow;
mod gate;
mod guardrails;
mod handoff;
pub(crate) mod in_doubt;
pub(crate) mod journal;
mod model_turn;
mod nesting;
mod output;
mod pretty;
mod prices;
mod replay;
mod router;
pub mod run;
mod run_error;
mod state;
mod telemetry;
mod tenant_usage;
pub(crate) mod ticket;
mod tool_calls;
mod tool_step;
mod typed_output;
pub mod workflow;

pub use crate::contract::usage_limits::{
    DEFAULT_TOKEN_RESERVATION, LimitKind, TenantUsageLimits, UsageCount, UsageLimitExceeded,
    UsageLimits,
};
pub use agent_tool::{AgentAnswer, AgentRequest, AgentToolError};
pub use context::{CancelToken, RunContext, Target};
pub use events::{CallDecision, RouteReason, RunEvent, StepKind, StepOutcome};
pub use handoff::DEFAULT_MAX_HANDOFFS;
pub use in_doubt::InDoubtResolution;
pub use nesting::DEFAULT_MAX_AGENT_TOOL_DEPTH;
pub use output::{DEFAULT_MAX_PARALLEL_TOOL_CALLS, DEFAULT_MAX_TURNS, OutputError, RunOutput};
pub use prices::{Price, PriceTable};
pub use router::parse_route;
pub use run::RunStream;
pub use run_error::StepFailedError;
pub use run_error::{RunError, RunFailed};
pub(crate) use state::RunState;
pub(crate) use tenant_usage::TenantGate;
pub use ticket::Decision;

/// What runs need of a built app: its resolved structure, its models, its listeners.
pub(crate) struct Runtime {
    pub(crate) resolved: Resolved,
    pub(crate) model: Option<SharedChatModel>,
    pub(crate) agent_models: HashMap<&'static str, SharedChatModel>,
    pub(crate) listeners: ToolCallListenerSet,
    /// Threads and run journals, when the app has a store.
    pub(crate) store: Option<Durability>,
    /// The approval channels of the app's gated tools, by name.
    pub(crate) channels: HashMap<&'static str, Arc<dyn ErasedChannel>>,
    /// The application's usage limits (a run's own ones tighten them).
    pub(crate) usage_limits: UsageLimits,
    /// What each model's tokens cost (for cost bounds).
    pub(crate) prices: Arc<PriceTable>,
    /// The tenant windows, kept in the app's store.
    pub(crate) tenant_gate: Option<TenantGate>,
    /// How streamed answers of guarded paths are released (a run may override it).
    pub(crate) output_streaming: crate::contract::guardrail::OutputStreaming,
    /// The undecorated tool callbacks of each agent path (by `ResolvedAgent::index`), made on
    /// first use: a run does not rebuild the tools' definitions and schemas.
    pub(crate) agent_callbacks: Vec<std::sync::OnceLock<Vec<crate::callback::SharedToolCallback>>>,
}

/// The app's store and how its runs hold their leases.
#[derive(Clone, Debug)]
pub(crate) struct Durability {
    pub(crate) store: SharedStore,
    /// This app instance's worker id (lease holder).
    pub(crate) worker: String,
    pub(crate) lease_ttl: std::time::Duration,
}

impl Runtime {
    /// The app's store, worker id and lease time; [`StoreError::NotConfigured`] for an app
    /// without a store.
    pub(crate) fn durability(&self) -> Result<&Durability, crate::store::StoreError> {
        self.store
            .as_ref()
            .ok_or(crate::store::StoreError::NotConfigured)
    }

    /// The undecorated callbacks of `agent`'s tools (cached per path).
    pub(crate) fn base_callbacks(
        &self,
        agent: &ResolvedAgent,
    ) -> Vec<crate::callback::SharedToolCallback> {
        match self.agent_callbacks.get(agent.index) {
            Some(cell) => cell
                .get_or_init(|| crate::callback::stack::base_callbacks(agent))
                .clone(),
            None => crate::callback::stack::base_callbacks(agent),
        }
    }

    /// An agent by name: its path directly under the application if it has one, else its first
    /// path under a workflow.
    pub(crate) fn agent_by_name(&self, name: &str) -> Option<&Arc<ResolvedAgent>> {
        let mut paths = self.resolved.agents.iter().filter(|a| a.meta.name == name);
        let first = paths.next()?;
        if first.workflow().is_none() {
            return Some(first);
        }
        Some(paths.find(|a| a.workflow().is_none()).unwrap_or(first))
    }

    /// A router by name (its first path).
    pub(crate) fn router_by_name(&self, name: &str) -> Option<&Arc<ResolvedRouter>> {
        self.resolved.routers.iter().find(|r| r.meta.name == name)
    }

    /// A workflow by name.
    pub(crate) fn workflow_by_name(&self, name: &str) -> Option<&Arc<ResolvedWorkflow>> {
        self.resolved.workflows.iter().find(|w| w.meta.name == name)
    }

    /// The chat model of an agent or router: its own if one was set, else the default.
    pub(crate) fn model_for(&self, agent_or_router_name: &str) -> Option<&SharedChatModel> {
        self.agent_models
            .get(agent_or_router_name)
            .or(self.model.as_ref())
    }
}
