//! Runs started inside a tool call of another run (nested runs): what the calling run lends
//! the call for its time ([`CallingRun`]: its budget, its runtime, its cancellation, its
//! nesting depth and where its events go), held in a task-local while the call runs. A run made
//! in that task nests its budget in the caller's (`limits.rs`: a nested run cannot bypass
//! the outer run's limits) and counts its depth from the caller's; an agent tool
//! (`agent_tool.rs`) reads the rest to run its agent.
use std::sync::Arc;

use tokio::sync::mpsc;

use super::Runtime;
use super::budget::RunBudget;
use super::events::RunEvent;

/// Agent-tool calls one run may nest when its context sets no bound
/// ([`RunContext::max_agent_tool_depth`](super::RunContext::max_agent_tool_depth)): a run
/// at that depth that calls an agent tool gets an error for the call instead of a nested run.
pub const DEFAULT_MAX_AGENT_TOOL_DEPTH: u32 = 3;

/// What a run lends each of its tool calls (made once per run: lending it to a call costs a
/// reference count).
pub(crate) struct CallingRun {
    pub(crate) budget: Arc<RunBudget>,
    pub(crate) rt: Arc<Runtime>,
    pub(crate) cancel: super::CancelToken,
    /// The run's depth (0: a run no tool call started).
    pub(crate) depth: u32,
    /// The bound on depth, the outermost run's.
    pub(crate) max_depth: u32,
    /// The run's events, when someone reads them.
    pub(crate) sink: Option<mpsc::UnboundedSender<RunEvent>>,
}

tokio::task_local! {
    /// The run whose tool call is running in this task.
    static CALLING_RUN: Arc<CallingRun>;
}

/// The run whose tool call is running in this task, if one is.
pub(crate) fn calling_run() -> Option<Arc<CallingRun>> {
    CALLING_RUN.try_with(Arc::clone).ok()
}

/// Runs `fut` (a tool call of the run that lends `lent`, `RunState::lent`) with that run as
/// the one a run started inside it nests in.
pub(crate) async fn calling<F: Future>(lent: &Arc<CallingRun>, fut: F) -> F::Output {
    CALLING_RUN.scope(Arc::clone(lent), fut).await
}
