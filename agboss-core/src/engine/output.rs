//! What a run gives back: its [`RunOutput`] (and its typed answer, [`RunOutput::value`]), the
//! defaults of its limits, and the counters ([`Stats`]) its units add to as it goes.
use serde_json::Value;

use crate::dto::{Dto, ValidationError};
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
    /// The typed answer, when the step that answered has one (`#[agent(output = ..)]`): the
    /// validated value's JSON as the output guardrails and `mask_answer` let it through
    /// (`text` is the same JSON, as text). `None` for a free-text answer, and when an output
    /// guardrail replaced the answer with a text that is not JSON.
    pub output: Option<Value>,
    /// What the run's budget counted: model and tool calls reserved (refused ones are not),
    /// tokens settled; runs nested in it (a tool that runs an agent) count into it too (see
    /// [`UsageLimits`](super::UsageLimits)).
    pub reserved: crate::contract::usage_limits::UsageCount,
}

impl RunOutput {
    /// The typed answer as `T` (the DTO of the answering agent's `output`), validated again:
    /// a field `mask_answer` masked out of its constraints fails with its path.
    ///
    /// ```
    /// use agboss_core::prelude::*;
    /// use agboss_testing::scripted::{ScriptedModel, Turn};
    ///
    /// #[derive(Dto, Debug)]
    /// pub struct VerdictDto {
    ///     #[boolean(prompt = "Whether the refund is granted")]
    ///     pub granted: bool,
    ///     #[text(prompt = "Why, in one sentence", max_length = 200)]
    ///     pub reason: String,
    /// }
    ///
    /// #[agent(name = "refund-agent", description = "Decides refunds", output = VerdictDto)]
    /// pub struct RefundAgent;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let model = ScriptedModel::new([
    ///     Turn::text(r#"{"granted": true, "reason": "Damaged on arrival."}"#),
    /// ]);
    /// let app = App::builder().agent::<RefundAgent>().model(model).build().unwrap();
    /// let out = app
    ///     .execute(Target::agent::<RefundAgent>(), "Order 7 arrived broken.", RunContext::new())
    ///     .await
    ///     .unwrap();
    /// let verdict: VerdictDto = out.value().unwrap();
    /// assert!(verdict.granted);
    /// assert_eq!(verdict.reason, "Damaged on arrival.");
    /// # });
    /// ```
    pub fn value<T: Dto>(&self) -> Result<T, OutputError> {
        let value = self.output.as_ref().ok_or(OutputError::Untyped)?;
        Ok(T::from_json_value(value)?)
    }
}

/// Why [`RunOutput::value`] gave no typed value.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// The answer is free text: the answering agent has no `output`, or an output guardrail
    /// replaced its answer with a text that is not JSON.
    #[error(
        "the run's answer is not a typed output (its agent has no `output`, or an output guardrail replaced the answer)"
    )]
    Untyped,
    /// The answer is not a valid `T` (another DTO than the agent's, or a field masked out of
    /// its constraints).
    #[error(transparent)]
    Invalid(#[from] ValidationError),
}

/// What a run counts as it goes (one per run, lent `&mut` to the unit that runs).
#[derive(Default)]
pub(crate) struct Stats {
    pub(crate) usage: Usage,
    pub(crate) model_turns: u32,
    pub(crate) tool_calls: u32,
    pub(crate) routes: Vec<(String, String)>,
    /// Handoffs the run made so far (bounded by `max_handoffs`).
    pub(crate) handoffs: u32,
    /// The typed answer of the last agent step that answered (see [`RunOutput::output`]).
    pub(crate) output: Option<Value>,
}
