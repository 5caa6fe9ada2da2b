//! Layer 5, the engine: runs of an agent, a router or a workflow (the [`Target`]) to a final
//! answer, under a [`RunContext`] (tenant, run id, cancellation, limits, a hook to wrap tool
//! callbacks). [`App::execute`](crate::App::execute) runs it without an event sink,
//! [`App::stream`](crate::App::stream) with one, yielding its [`RunEvent`]s and ending with
//! `RunEvent::Completed(output)` (the value `execute` returns) or with the error `execute` returns.
//!
//! # The tool loop of an agent
//! Each model turn's tool calls go through the agent's callback stack (by default its
//! [`BoundTool`](crate::BoundTool)s on their path, each running the whole guarded pipeline,
//! decorated by [`crate::callback::stack`]); every [`CallOutcome`](crate::CallOutcome) is read by
//! the one observation policy ([`crate::pipeline::observe`]):
//!
//! 1. Unknown tool, arguments that are not JSON, arguments that fail the input DTO: the model
//!    gets an error observation saying exactly what was wrong (field paths for the DTO), and the
//!    loop goes on.
//! 2. `before_tool_call` chain → approval hook point → `run` → `after_tool_call` chain → output
//!    re-validation → masking and truncation → observation.
//! 3. `reply_to_model(message)`: the tool does not run; `message` is the call's observation.
//! 4. `block(reason)`: the tool does not run and the step fails at once with
//!    [`ToolBlockedError`](crate::error::ToolBlockedError) (as a [`StepFailedError`](crate::StepFailedError));
//!    sibling calls of the same turn still in flight are dropped (cancelled). An interceptor that
//!    errors, panics or runs past its time limit fails the step the same way (fail closed; never
//!    a soft observation, whatever a listener returns).
//! 5. A tool's own error (failure, panic, timeout, invalid output) is reported to the model as a
//!    safe observation (generic text and the error class) unless a listener reported it; the full
//!    error goes to `tracing` and to the event stream ([`RunEvent::ToolError`]). With
//!    [`ToolErrorPolicy::FailStep`](crate::ToolErrorPolicy::FailStep) (on the agent, or per tool
//!    with [`RunContext::tool_error_policy`]) it fails the step instead.
//! 6. The calls of one turn run concurrently, at most `max_parallel_tool_calls` at once (default
//!    [`DEFAULT_MAX_PARALLEL_TOOL_CALLS`]); observations go back in the model's order. At most
//!    `max_turns` model turns (default [`DEFAULT_MAX_TURNS`]), else
//!    [`RunError::MaxTurnsExceeded`]. A tool's `run` is bounded by `#[tool(timeout_ms = ..)]` and
//!    [`RunContext::tool_timeout`]; each interceptor hook by its own limit.
//! 7. `after_tool_call` hooks run only for calls whose tool ran and succeeded: a reply, a block,
//!    a guard failure or a tool error skips them (and their output never reaches the model).
//!
//! Uses [`crate::callback`], [`crate::cascade`], [`crate::pipeline`], [`crate::contract`] and the
//! leaves.
use std::collections::HashMap;
use std::sync::Arc;

use crate::callback::stack::ToolCallListenerSet;
use crate::cascade::{Resolved, ResolvedAgent, ResolvedRouter, ResolvedWorkflow};
use crate::contract::channel::ErasedChannel;
use crate::model::SharedChatModel;
use crate::store::SharedStore;

mod agent_loop;
pub(crate) mod approval;
pub mod context;
pub(crate) mod direct;
pub mod events;
mod guardrails;
pub(crate) mod in_doubt;
pub(crate) mod journal;
mod pretty;
mod router;
pub mod run;
mod run_error;
mod telemetry;
mod tool_step;
pub mod workflow;

pub use approval::Decision;
pub use context::{CancelToken, RunContext, Target};
pub use events::{CallDecision, RouteReason, RunEvent, StepKind, StepOutcome};
pub use in_doubt::InDoubtResolution;
pub use router::parse_route;
pub use run::{DEFAULT_MAX_PARALLEL_TOOL_CALLS, DEFAULT_MAX_TURNS, RunError, RunOutput, RunStream};
pub use run_error::StepFailedError;

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
