//! The typed models of every attribute macro's arguments. Key groups that several macros
//! share are one struct each, flattened into the macros that accept them: [`Named`]
//! (`name`, `description`), [`Cascade`] (what a scope attaches to tool calls) and
//! [`Guardrails`] (what a scope attaches at its text boundary).
use darling::FromMeta;

use darling::util::SpannedValue;

use super::value::{Flag, Int, PathCounts, PathList, Str, StrList, TypePath};

/// `name`, `description`: every named component, with the keys `T` of its kind (darling
/// flattens one group per struct, so the groups nest: `Named<AgentKeys>` holds
/// `Guardrails<Cascade>`).
#[derive(FromMeta)]
pub struct Named<T> {
    pub name: Str,
    pub description: Str,
    #[darling(flatten)]
    pub keys: T,
}

/// No further keys.
#[derive(FromMeta, Default)]
pub struct NoKeys {}

/// The cascade keys of tool calls: `tool_interceptors`, `exclude_tool_interceptors`,
/// `pii_policies`, `max_result_size` (tools, agents, workflows, the application).
#[derive(FromMeta, Default)]
pub struct Cascade {
    pub tool_interceptors: Option<PathList>,
    pub exclude_tool_interceptors: Option<PathList>,
    pub pii_policies: Option<PathList>,
    pub max_result_size: Option<Int>,
}

/// The guardrail keys of a scope (agents, routers, workflows, the application), with the
/// other keys `T` of its group (the [`Cascade`], or [`NoKeys`] for a router).
#[derive(FromMeta, Default)]
pub struct Guardrails<T> {
    #[darling(flatten)]
    pub rest: T,
    pub input_guardrails: Option<PathList>,
    pub exclude_input_guardrails: Option<PathList>,
    pub output_guardrails: Option<PathList>,
    pub exclude_output_guardrails: Option<PathList>,
    pub mask_answer: Flag,
}

/// `usage_limits(..)` of a scope (agents, workflows, the application): what a run on a path
/// under it may spend.
#[derive(FromMeta, Default)]
pub struct UsageLimitKeys {
    pub model_requests: Option<Int>,
    pub input_tokens: Option<Int>,
    pub output_tokens: Option<Int>,
    pub tool_calls: Option<Int>,
    pub tool_calls_per_tool: Option<PathCounts>,
    pub cost_micros: Option<Int>,
}

/// `usage_limits(..)`, with the span of what the user wrote.
pub type UsageLimitsKey = Option<SpannedValue<UsageLimitKeys>>;

/// `#[tool(..)]`.
#[derive(FromMeta)]
pub struct ToolKeys {
    pub input: TypePath,
    pub output: TypePath,
    pub max_input_size: Option<Int>,
    pub timeout_ms: Option<Int>,
    pub idempotent: Flag,
    pub long_running: Flag,
    pub approval: Option<TypePath>,
    pub approval_when: Option<TypePath>,
    pub deps: Option<PathList>,
    #[darling(flatten)]
    pub cascade: Cascade,
}

/// `#[mcp_tool(..)]`.
#[derive(FromMeta)]
pub struct McpToolKeys {
    pub server: Str,
    pub remote: Str,
    pub input: Option<TypePath>,
    pub output: Option<TypePath>,
    pub max_input_size: Option<Int>,
    pub timeout_ms: Option<Int>,
    pub idempotent: Flag,
    pub approval: Option<TypePath>,
    #[darling(flatten)]
    pub cascade: Cascade,
}

/// `#[tool_interceptor(..)]`.
#[derive(FromMeta)]
pub struct InterceptorKeys {
    pub deps: Option<PathList>,
    pub timeout_ms: Option<Int>,
}

/// `#[channel(..)]`.
#[derive(FromMeta)]
pub struct ChannelKeys {
    pub deps: Option<PathList>,
    pub ttl_ms: Option<Int>,
}

/// `#[input_guardrail(..)]`.
#[derive(FromMeta)]
pub struct InputGuardrailKeys {
    pub deps: Option<PathList>,
    pub timeout_ms: Option<Int>,
    pub cheap: Flag,
    pub parallel: Flag,
}

/// `#[output_guardrail(..)]`.
#[derive(FromMeta)]
pub struct OutputGuardrailKeys {
    pub deps: Option<PathList>,
    pub timeout_ms: Option<Int>,
    pub cheap: Flag,
    pub max_match: Option<Int>,
}

/// `#[pii_policy(..)]`.
#[derive(FromMeta)]
pub struct PiiPolicyKeys {
    pub detectors: Option<PathList>,
    pub custom_detectors: Option<PathList>,
    pub strategy: Option<Str>,
    pub keep: Option<Int>,
    pub hash_key_env: Option<Str>,
}

/// `#[injectable(..)]`.
#[derive(FromMeta, Default)]
pub struct InjectableArgs {
    pub deps: Option<PathList>,
    pub provided: Flag,
    pub default: Flag,
}

/// `#[agent(..)]`.
#[derive(FromMeta)]
pub struct AgentKeys {
    pub instructions: Option<Str>,
    pub tools: Option<PathList>,
    pub mcp_servers: Option<StrList>,
    pub max_turns: Option<Int>,
    pub max_parallel_tool_calls: Option<Int>,
    pub tool_errors: Option<Str>,
    pub output: Option<TypePath>,
    pub output_retries: Option<Int>,
    pub handoffs: Option<PathList>,
    pub agent_tools: Option<PathList>,
    pub ask_approval: Option<TypePath>,
    pub usage_limits: UsageLimitsKey,
    #[darling(flatten)]
    pub scope: Guardrails<Cascade>,
}

/// `#[router(..)]`.
#[derive(FromMeta)]
pub struct RouterKeys {
    pub instructions: Option<Str>,
    pub routes: PathList,
    pub fallback: Option<TypePath>,
    #[darling(flatten)]
    pub scope: Guardrails<NoKeys>,
}

/// `#[workflow(..)]`.
#[derive(FromMeta)]
pub struct WorkflowKeys {
    pub agents: Option<PathList>,
    pub routers: Option<PathList>,
    pub tools: Option<PathList>,
    pub usage_limits: UsageLimitsKey,
    #[darling(flatten)]
    pub scope: Guardrails<Cascade>,
}

/// `#[application(..)]`.
#[derive(FromMeta)]
pub struct ApplicationKeys {
    pub workflows: Option<PathList>,
    pub agents: Option<PathList>,
    pub routers: Option<PathList>,
    pub tools: Option<PathList>,
    pub mcp_servers: Option<StrList>,
    pub usage_limits: UsageLimitsKey,
    #[darling(flatten)]
    pub scope: Guardrails<Cascade>,
}

/// The model of `#[tool(..)]`.
pub type ToolArgs = Named<ToolKeys>;
/// The model of `#[mcp_tool(..)]`.
pub type McpToolArgs = Named<McpToolKeys>;
/// The model of `#[tool_interceptor(..)]`.
pub type InterceptorArgs = Named<InterceptorKeys>;
/// The model of `#[channel(..)]`.
pub type ChannelArgs = Named<ChannelKeys>;
/// The model of `#[input_guardrail(..)]`.
pub type InputGuardrailArgs = Named<InputGuardrailKeys>;
/// The model of `#[output_guardrail(..)]`.
pub type OutputGuardrailArgs = Named<OutputGuardrailKeys>;
/// The model of `#[pii_policy(..)]`.
pub type PiiPolicyArgs = Named<PiiPolicyKeys>;
/// The model of `#[agent(..)]`.
pub type AgentArgs = Named<AgentKeys>;
/// The model of `#[router(..)]`.
pub type RouterArgs = Named<RouterKeys>;
/// The model of `#[workflow(..)]`.
pub type WorkflowArgs = Named<WorkflowKeys>;
/// The model of `#[application(..)]`.
pub type ApplicationArgs = Named<ApplicationKeys>;
