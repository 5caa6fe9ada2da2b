//! Placeholder metas of the fallback impls a macro emits next to its compile errors (the model
//! is thiserror's `fallback.rs`): the user's type still implements its trait, so one mistake in
//! an attribute is one error, not a cascade of "`X` is not a tool" wherever `X` is named.
//! Never registered and never run: the crate does not compile.
use std::any::TypeId;

use super::{
    AgentMeta, ApplicationMeta, ChannelMeta, GuardrailMeta, InjectableMeta, InterceptorMeta,
    PiiPolicyMeta, RouterMeta, ScopeGuardrails, ToolErrorPolicy, ToolMeta, WorkflowMeta,
};
use crate::contract::guardrail::Boundary;
use crate::contract::usage_limits::UsageLimitsMeta;
use crate::pii::MaskStrategy;

/// The `TypeId` of every placeholder.
fn type_id() -> TypeId {
    TypeId::of::<()>()
}

const GUARDRAILS: ScopeGuardrails = ScopeGuardrails {
    input: &[],
    exclude_input: &[],
    output: &[],
    exclude_output: &[],
    mask_answer: false,
};

/// Placeholder of an erroneous `#[agent]`.
pub const AGENT: &AgentMeta = &AgentMeta {
    name: "",
    description: "",
    instructions: "",
    type_name: "",
    type_id,
    tools: &[],
    mcp_servers: &[],
    tool_interceptors: &[],
    exclude_tool_interceptors: &[],
    pii_policies: &[],
    max_turns: None,
    max_parallel_tool_calls: None,
    tool_errors: ToolErrorPolicy::Report,
    max_result_size: None,
    guardrails: GUARDRAILS,
    output: None,
    output_retries: None,
    handoffs: &[],
    agent_tools: &[],
    ask_approval: None,
    usage_limits: UsageLimitsMeta::NONE,
};

/// Placeholder of an erroneous `#[router]`.
pub const ROUTER: &RouterMeta = &RouterMeta {
    name: "",
    description: "",
    instructions: "",
    type_name: "",
    type_id,
    routes: &[],
    fallback: None,
    guardrails: GUARDRAILS,
};

/// Placeholder of an erroneous `#[workflow]`.
pub const WORKFLOW: &WorkflowMeta = &WorkflowMeta {
    name: "",
    description: "",
    type_name: "",
    type_id,
    agents: &[],
    routers: &[],
    tools: &[],
    tool_interceptors: &[],
    exclude_tool_interceptors: &[],
    pii_policies: &[],
    max_result_size: None,
    guardrails: GUARDRAILS,
    usage_limits: UsageLimitsMeta::NONE,
};

/// Placeholder of an erroneous `#[application]`.
pub const APPLICATION: &ApplicationMeta = &ApplicationMeta {
    name: "",
    description: "",
    type_name: "",
    type_id,
    workflows: &[],
    agents: &[],
    routers: &[],
    tools: &[],
    mcp_servers: &[],
    tool_interceptors: &[],
    pii_policies: &[],
    max_result_size: None,
    guardrails: GUARDRAILS,
    usage_limits: UsageLimitsMeta::NONE,
};

/// Placeholder of an erroneous `#[pii_policy]`.
pub const PII_POLICY: &PiiPolicyMeta = &PiiPolicyMeta {
    name: "",
    description: "",
    type_name: "",
    type_id,
    detectors: &[],
    custom_detectors: &[],
    strategy: MaskStrategy::Redact,
    hash_key_env: None,
};

/// Placeholder of an erroneous `#[tool_interceptor]`.
pub const INTERCEPTOR: &InterceptorMeta = &InterceptorMeta {
    name: "",
    description: "",
    type_name: "",
    type_id,
    deps: &[],
    timeout_ms: None,
    build: |_| unreachable!("a fallback meta is never built"),
};

/// Placeholder of an erroneous `#[channel]`.
pub const CHANNEL: &ChannelMeta = &ChannelMeta {
    name: "",
    description: "",
    type_name: "",
    type_id,
    deps: &[],
    ttl_ms: None,
    build: |_| unreachable!("a fallback meta is never built"),
};

/// Placeholder of an erroneous `#[input_guardrail]` or `#[output_guardrail]`.
pub const GUARDRAIL: &GuardrailMeta = &GuardrailMeta {
    name: "",
    description: "",
    type_name: "",
    type_id,
    boundary: Boundary::Input,
    deps: &[],
    timeout_ms: None,
    cheap: false,
    parallel: false,
    max_match: None,
    build: |_| unreachable!("a fallback meta is never built"),
};

/// Placeholder of an erroneous `#[injectable]`.
pub const INJECTABLE: &InjectableMeta = &InjectableMeta {
    type_name: "",
    type_id,
    deps: &[],
    construct: None,
};

/// Placeholder of an erroneous `#[tool]`.
pub const TOOL: &ToolMeta = &ToolMeta::new("", "", "", type_id, || {
    unreachable!("a fallback meta is never built")
});
