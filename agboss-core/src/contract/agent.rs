//! Agents and routers: `#[agent]` runs a model in a tool loop over its tools; `#[router]` picks
//! one of its agents for an input. Their runtime is in [`crate::engine`].
use std::any::TypeId;
use std::fmt;

use serde_json::Value;

use super::channel::ChannelMeta;
use super::guardrail::ScopeGuardrails;
use super::interceptor::InterceptorMeta;
use super::pii_policy::PiiPolicyMeta;
use super::tool::ToolMeta;
use crate::dto::{Dto, ValidationError, code};

/// What an agent does when one of its tools returns an error (not a block: a block always fails
/// the step).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolErrorPolicy {
    /// Report a safe error message to the model as the call's observation and go on (default).
    #[default]
    Report,
    /// Fail the step with the tool's error.
    FailStep,
}

/// The typed answer of an agent (`#[agent(output = SomeDto)]`): the DTO its final answer must
/// decode to, by its schema and its decoder. What the agent loop asks the model for and how it
/// reads the answer are in [`crate::engine`]; [`RunOutput::value`](crate::engine::RunOutput::value)
/// gives the typed value back.
///
/// ```
/// use agboss_core::contract::agent::AgentOutput;
/// use agboss_core::dto::Dto;
///
/// #[derive(Dto, Debug)]
/// pub struct VerdictDto {
///     #[boolean(prompt = "Whether the refund is granted")]
///     pub granted: bool,
/// }
///
/// const OUTPUT: AgentOutput = AgentOutput::of::<VerdictDto>();
/// assert_eq!(OUTPUT.dto, "VerdictDto");
/// assert_eq!((OUTPUT.decode)(r#"{"granted": true}"#).unwrap()["granted"], true);
/// let err = (OUTPUT.decode)(r#"{"granted": "yes"}"#).unwrap_err();
/// assert_eq!(err.errors[0].path, "$.granted");
/// ```
#[derive(Clone, Copy)]
pub struct AgentOutput {
    /// The DTO's type name ([`Dto::DTO_NAME`]).
    pub dto: &'static str,
    /// The DTO's JSON Schema ([`Dto::json_schema`]).
    pub schema: fn() -> Value,
    /// Decodes and validates an answer like a tool input ([`Dto::from_json_str`]: every
    /// failing path), and gives it back as the JSON of the typed value (its canonical form).
    pub decode: fn(&str) -> Result<Value, ValidationError>,
}

impl AgentOutput {
    /// The output of DTO `T`.
    pub const fn of<T: Dto>() -> Self {
        Self {
            dto: T::DTO_NAME,
            schema: T::json_schema,
            decode: decode::<T>,
        }
    }
}

impl fmt::Debug for AgentOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.dto)
    }
}

/// [`AgentOutput::decode`] of `T`.
fn decode<T: Dto>(text: &str) -> Result<Value, ValidationError> {
    let value = T::from_json_str(text)?;
    serde_json::to_value(&value).map_err(|e| {
        ValidationError::single(T::DTO_NAME, "$", code::JSON, &format!("cannot encode: {e}"))
    })
}

/// Registration data of an `#[agent]`.
pub struct AgentMeta {
    /// Unique kebab-case name ending in `-agent`.
    pub name: &'static str,
    /// What the agent is for (routers show it to the model).
    pub description: &'static str,
    /// The system prompt.
    pub instructions: &'static str,
    /// The struct's type name.
    pub type_name: &'static str,
    /// The struct's `TypeId`.
    pub type_id: fn() -> TypeId,
    /// The tools the agent may call.
    pub tools: &'static [&'static ToolMeta],
    /// MCP servers whose every tool the agent may call (`mcp_servers = [..]`).
    pub mcp_servers: &'static [&'static str],
    /// Interceptors attached at the agent.
    pub tool_interceptors: &'static [&'static InterceptorMeta],
    /// Inherited interceptors removed at the agent.
    pub exclude_tool_interceptors: &'static [&'static InterceptorMeta],
    /// PII policies attached at the agent.
    pub pii_policies: &'static [&'static PiiPolicyMeta],
    /// Upper bound of model turns in one run.
    pub max_turns: Option<u32>,
    /// Upper bound of tool calls of one turn running at once.
    pub max_parallel_tool_calls: Option<usize>,
    /// What a tool's own error does.
    pub tool_errors: ToolErrorPolicy,
    /// Default `max_result_size` for the agent's tools (a tool's own value wins).
    pub max_result_size: Option<usize>,
    /// Guardrails attached and excluded here.
    pub guardrails: ScopeGuardrails,
    /// The typed answer (`output = SomeDto`); `None`: free text.
    pub output: Option<AgentOutput>,
    /// Answers that fail the output's validation sent back to the model as a correction
    /// before the step fails (`output_retries`; `None`: [`DEFAULT_OUTPUT_RETRIES`]).
    pub output_retries: Option<u32>,
    /// The agents this one may hand the rest of its run to (`handoffs = [..]`): the model
    /// sees one `transfer_to_<name>` tool per target ([`handoff_tool_name`]). Functions
    /// ([`agent_meta`]), so two agents may hand off to each other.
    pub handoffs: &'static [fn() -> &'static AgentMeta],
    /// The agents this one may call as tools (`agent_tools = [..]`): the model sees one
    /// `ask_<name>` tool per agent ([`agent_tool_name`]), guarded by this agent's path like
    /// any tool; a call runs the agent as a nested run. Functions ([`agent_meta`]), so two
    /// agents may list each other (the nesting depth is bounded at run time).
    pub agent_tools: &'static [fn() -> &'static AgentMeta],
    /// `ask_approval = SomeChannel`: a call of this agent as another agent's tool
    /// (`agent_tools = [..]`) waits for a human decision through this channel, after the
    /// caller's interceptors allowed it and before the agent runs.
    pub ask_approval: Option<&'static ChannelMeta>,
    /// Usage limits declared here (`usage_limits(..)`): a run on a path under this scope gets
    /// the strictest of every scope's, the app's and its own
    /// ([`UsageLimits`](crate::engine::UsageLimits)).
    pub usage_limits: crate::contract::usage_limits::UsageLimitsMeta,
}

/// The registration data of agent `A`: what `handoffs = [..]` lists.
///
/// ```
/// use agboss_core::contract::agent::agent_meta;
/// use agboss_core::prelude::*;
///
/// #[agent(name = "shipping-agent", description = "Tracks parcels")]
/// pub struct ShippingAgent;
///
/// assert_eq!(agent_meta::<ShippingAgent>().name, "shipping-agent");
/// ```
#[must_use]
pub fn agent_meta<A: Agent>() -> &'static AgentMeta {
    A::META
}

/// The name of the tool the model calls to hand its run to `target` (an agent's name):
/// `transfer_to_` and the name with `-` as `_`.
///
/// ```
/// use agboss_core::contract::agent::handoff_tool_name;
///
/// assert_eq!(handoff_tool_name("shipping-agent"), "transfer_to_shipping_agent");
/// ```
#[must_use]
pub fn handoff_tool_name(target: &str) -> String {
    format!("transfer_to_{}", target.replace('-', "_"))
}

/// The name of the tool another agent's model calls to ask agent `agent` (its name), listed
/// in `agent_tools = [..]`: `ask_` and the name with `-` as `_`.
///
/// ```
/// use agboss_core::contract::agent::agent_tool_name;
///
/// assert_eq!(agent_tool_name("shipping-agent"), "ask_shipping_agent");
/// ```
#[must_use]
pub fn agent_tool_name(agent: &str) -> String {
    format!("ask_{}", agent.replace('-', "_"))
}

/// Corrections an agent with a typed output gets when it sets no `output_retries`.
pub const DEFAULT_OUTPUT_RETRIES: u32 = 2;

impl fmt::Debug for AgentMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// Implemented by `#[agent]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an agent [agent.not-an-agent]",
    label = "expected an `#[agent]` struct",
    note = "only structs annotated with `#[agent(...)]` can be listed in `agents = [...]` / `routes = [...]` / `handoffs = [...]` / `agent_tools = [...]`"
)]
pub trait Agent: 'static {
    /// Registration data.
    const META: &'static AgentMeta;
}

/// Registration data of a `#[router]`.
pub struct RouterMeta {
    /// Unique kebab-case name ending in `-router`.
    pub name: &'static str,
    /// What the router is for.
    pub description: &'static str,
    /// Extra guidance for the model choosing a route.
    pub instructions: &'static str,
    /// The struct's type name.
    pub type_name: &'static str,
    /// The struct's `TypeId`.
    pub type_id: fn() -> TypeId,
    /// The agents it routes to.
    pub routes: &'static [&'static AgentMeta],
    /// The agent used when the model's choice is unusable (default: the first route).
    pub fallback: Option<&'static AgentMeta>,
    /// Guardrails attached and excluded here.
    pub guardrails: ScopeGuardrails,
}

impl fmt::Debug for RouterMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// Implemented by `#[router]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a router [router.not-a-router]",
    label = "expected a `#[router]` struct",
    note = "only structs annotated with `#[router(...)]` can be listed in `routers = [...]`"
)]
pub trait Router: 'static {
    /// Registration data.
    const META: &'static RouterMeta;
}
