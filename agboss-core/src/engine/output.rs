//! What a run gives back: its [`RunOutput`], the defaults of its limits, and the counters
//! ([`Stats`]) its units add to as it goes.
use crate::model::Usage;

/// Model turns an agent may take when it sets no `max_turns`.
pub const DEFAULT_MAX_TURNS: u32 = 10;
/// Tool calls of one turn running at once when the agent sets no `max_parallel_tool_calls`.
pub const DEFAULT_MAX_PARALLEL_TOOL_CALLS: usize = 4;

/// The result of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunOutput {
    /// The run id.
    pub run_id: String,
    /// The final answer (of the last step, for a workflow).
    pub text: String,
    /// Tokens used by every model call of the run.
    pub usage: Usage,
    /// Model calls made (routers' included).
    pub model_turns: u32,
    /// Tool calls the models requested (rejected ones included).
    pub tool_calls: u32,
    /// `(router, chosen agent)` for each router step.
    pub routes: Vec<(String, String)>,
    /// The thread the run continued.
    pub thread_id: Option<String>,
    /// Journal steps read back instead of done again (0 unless the run was resumed).
    pub replayed_steps: u64,
}

/// What a run counts as it goes (one per run, lent `&mut` to the unit that runs).
#[derive(Default)]
pub(crate) struct Stats {
    pub(crate) usage: Usage,
    pub(crate) model_turns: u32,
    pub(crate) tool_calls: u32,
    pub(crate) routes: Vec<(String, String)>,
}
