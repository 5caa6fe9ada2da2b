//! Agents as tools (`#[agent(agent_tools = [..])]`): each listed agent is one `ask_<name>`
//! tool of the listing agent ([`agent_tool_name`]), bound to that agent's path by the
//! cascade like any tool, so its calls run the one guarded pipeline (the path's chain,
//! journaled, fail closed). The tool's body runs the agent as a run nested in the calling
//! run (`nesting.rs`): same tenant, same cancellation, its budget inside the caller's, its
//! events forwarded as [`RunEvent::Nested`], its own cascade inside. The nested run is not
//! journaled on its own: the calling run journals the call as a whole (not idempotent: a call
//! with no recorded end is in doubt, never rerun), and a nested call that needs approval
//! fails the agent tool's call ([`AgentToolError::NeedsApproval`]).
use std::borrow::Cow;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::context::{RunContext, Target, TargetKind};
use super::events::RunEvent;
use super::nesting::calling_run;
use super::run::run;
use super::run_error::{RunError, RunFailed, StepFailedError};
use super::state::RunState;
use crate::contract::agent::{AgentMeta, agent_tool_name};
use crate::contract::handler_error::ToolError;
use crate::contract::outcome::ToolCallErrorKind;
use crate::contract::tool::ToolHandler;
use crate::contract::tool::{ErasedToolType, Tool, ToolMeta};
use crate::contract::{Built, MetaRef};
use crate::di::{DiError, Resolver, Services, TenantContext};
use crate::dto::{Dto, FieldError, JsonPath, code};
use crate::pipeline::{ErasedToolSlot, ToolSlot};

/// What the model sends an agent tool: the request the agent answers, self-contained (the
/// agent sees nothing else of the calling conversation).
///
/// ```
/// use agboss_core::dto::Dto;
/// use agboss_core::engine::AgentRequest;
///
/// let req = AgentRequest::from_json_str(r#"{"request": "Where is parcel P-1?"}"#).unwrap();
/// assert_eq!(req.request, "Where is parcel P-1?");
/// assert!(AgentRequest::from_json_str(r#"{"request": 7}"#).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentRequest {
    /// The request.
    pub request: String,
}

#[diagnostic::do_not_recommend]
impl Dto for AgentRequest {
    const DTO_NAME: &'static str = "AgentRequest";
    fn json_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "request": {
                    "type": "string",
                    "description": "What to ask the agent, self-contained: it sees nothing else of this conversation"
                }
            },
            "required": ["request"],
            "additionalProperties": false
        })
    }
    fn validate_into(&self, _path: &mut JsonPath, _errors: &mut Vec<FieldError>) {}
    fn check_json_into(value: &Value, path: &mut JsonPath, errors: &mut Vec<FieldError>) {
        path.push_key("request");
        match value.get("request") {
            Some(Value::String(_)) => {}
            None | Some(Value::Null) => {
                errors.push(FieldError::new(
                    path,
                    code::REQUIRED,
                    "`request` is required",
                ));
            }
            Some(_) => errors.push(FieldError::new(path, code::TYPE, "expected a string")),
        }
        path.pop();
    }
}

/// What an agent tool answers (the observation the calling model reads): the agent's typed
/// answer as its JSON when it has an `output = SomeDto`, else `{"answer": "<its text>"}`.
///
/// ```
/// use agboss_core::engine::AgentAnswer;
/// use serde_json::json;
///
/// let answer = AgentAnswer::text("P-1 is in Lyon.");
/// assert_eq!(answer.as_value(), &json!({"answer": "P-1 is in Lyon."}));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct AgentAnswer(Value);

impl AgentAnswer {
    /// The answer of an agent without a typed output.
    pub fn text(text: impl Into<String>) -> Self {
        Self(json!({ "answer": text.into() }))
    }
    /// The answer as JSON.
    pub fn as_value(&self) -> &Value {
        &self.0
    }
}

#[diagnostic::do_not_recommend]
impl Dto for AgentAnswer {
    const DTO_NAME: &'static str = "AgentAnswer";
    fn json_schema() -> Value {
        json!({"description": "The agent's typed answer, or {\"answer\": text}"})
    }
    fn validate_into(&self, _path: &mut JsonPath, _errors: &mut Vec<FieldError>) {}
    fn check_json_into(_value: &Value, _path: &mut JsonPath, _errors: &mut Vec<FieldError>) {}
}

/// Why an agent tool's call did not give the agent's answer: the call's tool error (the
/// calling agent's `tool_errors` policy decides what its model reads), its `source()` the
/// nested run's error where there is one.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentToolError {
    /// The tool was called outside a run (a direct call, an MCP client): it has no run to
    /// nest in.
    #[error("agent tool `{tool}` runs only as a tool call of an agent's run")]
    OutsideRun {
        /// The tool.
        tool: String,
    },
    /// No agent of the app answers to the tool's name.
    #[error("agent tool `{tool}`: no agent of the app answers to it")]
    UnknownAgent {
        /// The tool.
        tool: String,
    },
    /// Agent tools nest deeper than the run's bound
    /// ([`RunContext::max_agent_tool_depth`](super::RunContext::max_agent_tool_depth)):
    /// agents that call each other, most likely.
    #[error(
        "agent `{agent}` would run at nesting depth {depth}, past max_agent_tool_depth ({max_depth})"
    )]
    TooDeep {
        /// The agent the call would have run.
        agent: String,
        /// The depth it would have run at.
        depth: u32,
        /// The bound.
        max_depth: u32,
    },
    /// A call of the nested run needs a human decision, which a nested run cannot wait for:
    /// the call fails (nothing of that gated call ran).
    #[error(
        "agent `{agent}` needs approval for `{tool}`, which a run nested in an agent tool cannot wait for"
    )]
    NeedsApproval {
        /// The agent.
        agent: String,
        /// Its gated tool.
        tool: String,
    },
    /// The nested run failed (a guardrail, a block, a usage limit, the model...).
    #[error("agent `{agent}` failed (nested run `{run_id}`)")]
    Failed {
        /// The agent.
        agent: String,
        /// The nested run's id.
        run_id: String,
        /// Its error.
        #[source]
        source: RunError,
    },
}

impl AgentToolError {
    /// The nested run's error, when it failed.
    pub fn run_error(&self) -> Option<&RunError> {
        match self {
            Self::Failed { source, .. } => Some(source),
            _ => None,
        }
    }

    fn of_run(agent: &str, failed: RunFailed) -> Self {
        let (run_id, source) = failed.into_parts();
        if let RunError::Step(StepFailedError::ToolCall { source: call, .. }) = &source
            && let ToolCallErrorKind::ApprovalRequired { .. } = call.kind()
        {
            return Self::NeedsApproval {
                agent: agent.to_string(),
                tool: call.tool_name().to_string(),
            };
        }
        Self::Failed {
            agent: agent.to_string(),
            run_id,
            source,
        }
    }
}

/// One call of an agent tool, built for it (it knows its call).
pub(crate) struct AgentTool {
    tool: Cow<'static, str>,
    call_id: String,
    /// The calling agent (the innermost scope of the call's path).
    step: String,
    tenant: Option<TenantContext>,
}

impl ToolHandler<AgentRequest, AgentAnswer> for AgentTool {
    async fn run(&self, input: AgentRequest) -> Result<AgentAnswer, ToolError> {
        self.ask(input.request).await.map_err(ToolError::from)
    }
}

impl AgentTool {
    async fn ask(&self, request: String) -> Result<AgentAnswer, AgentToolError> {
        let calling = calling_run().ok_or_else(|| AgentToolError::OutsideRun {
            tool: self.tool.to_string(),
        })?;
        let agent = calling
            .rt
            .resolved
            .agents
            .iter()
            .map(|a| a.meta.name)
            .find(|name| agent_tool_name(name) == self.tool)
            .ok_or_else(|| AgentToolError::UnknownAgent {
                tool: self.tool.to_string(),
            })?;
        if calling.depth >= calling.max_depth {
            return Err(AgentToolError::TooDeep {
                agent: agent.to_string(),
                depth: calling.depth + 1,
                max_depth: calling.max_depth,
            });
        }
        let ctx = RunContext {
            tenant: self.tenant.clone(),
            cancel: calling.cancel.clone(),
            ..RunContext::default()
        };
        let target = Target(TargetKind::Agent(agent.to_string()));
        let (tx, rx) = match &calling.sink {
            Some(_) => {
                let (tx, rx) = mpsc::unbounded_channel();
                (Some(tx), Some(rx))
            }
            None => (None, None),
        };
        // Made in this task: its budget and depth nest in the calling run's.
        let mut state = RunState::new(Arc::clone(&calling.rt), ctx, tx, agent.to_string());
        state.without_journal();
        // Boxed: a run holds its tool calls, this one among them.
        let nested = Box::pin(run(state, target, request));
        let result = match (rx, &calling.sink) {
            (Some(mut rx), Some(outer)) => {
                let forward = async {
                    while let Some(event) = rx.recv().await {
                        let _ = outer.send(RunEvent::Nested {
                            step: self.step.clone(),
                            call_id: self.call_id.clone(),
                            tool: self.tool.to_string(),
                            event: Box::new(event),
                        });
                    }
                };
                futures::join!(nested, forward).0
            }
            _ => nested.await,
        };
        match result {
            Ok(out) => Ok(out
                .output
                .map_or_else(|| AgentAnswer::text(out.text), AgentAnswer)),
            Err(failed) => Err(AgentToolError::of_run(agent, failed)),
        }
    }
}

/// The registration data of the type (each agent tool runs under its own, [`meta`]).
const AGENT_TOOL: &ToolMeta = &ToolMeta::new(
    "agent-tool",
    "an agent called as a tool",
    "AgentTool",
    std::any::TypeId::of::<AgentTool>,
    || &AgentToolType,
)
.with_schemas(AgentRequest::json_schema, AgentAnswer::json_schema);

impl Tool for AgentTool {
    type Input = AgentRequest;
    type Output = AgentAnswer;
    const META: &'static ToolMeta = AGENT_TOOL;
    const META_PER_SLOT: bool = true;
    fn construct(resolver: &Resolver<'_>) -> Result<Self, DiError> {
        let execution = resolver
            .execution()
            .ok_or_else(|| DiError::Failed("an agent tool is built for its call".into()))?;
        Ok(Self {
            tool: Cow::Owned(execution.tool_name().to_string()),
            call_id: execution.call_id().to_string(),
            step: execution
                .path()
                .last()
                .copied()
                .unwrap_or_default()
                .to_string(),
            tenant: resolver.tenant().cloned(),
        })
    }
}

struct AgentToolType;

impl ErasedToolType for AgentToolType {
    fn build_slot(&self, meta: &MetaRef<ToolMeta>, _: &Services) -> Result<Built, DiError> {
        let slot: Arc<dyn ErasedToolSlot> = Arc::new(ToolSlot::<AgentTool>::per_call(meta.clone()));
        Ok(Built::new(slot))
    }
}

/// The registration data of the tool that asks `agent` (what the cascade binds on the path of
/// each agent that lists it in `agent_tools`): named [`agent_tool_name`], input
/// [`AgentRequest`], not idempotent, gated by the agent's `ask_approval` channel if it has one.
pub(crate) fn meta(agent: &'static AgentMeta) -> MetaRef<ToolMeta> {
    let mut meta = ToolMeta::new(
        "",
        "",
        AGENT_TOOL.type_name,
        AGENT_TOOL.type_id,
        AGENT_TOOL.erased,
    )
    .with_schemas(AgentRequest::json_schema, AgentAnswer::json_schema)
    .with_approval(agent.ask_approval, None);
    meta.name = Cow::Owned(agent_tool_name(agent.name));
    meta.description = Cow::Owned(format!(
        "Ask {}: {}. Send one self-contained request; it answers with its result.",
        agent.name, agent.description
    ));
    MetaRef::Shared(Arc::new(meta))
}
