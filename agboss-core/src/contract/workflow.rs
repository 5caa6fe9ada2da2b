//! Workflows and applications: the outer scopes of the cascade. How a workflow's steps run is
//! in [`crate::engine::workflow`].
use std::any::TypeId;
use std::fmt;

use super::agent::{AgentMeta, RouterMeta};
use super::guardrail::ScopeGuardrails;
use super::interceptor::InterceptorMeta;
use super::pii_policy::PiiPolicyMeta;
use super::tool::ToolMeta;

/// Registration data of a `#[workflow]`.
pub struct WorkflowMeta {
    /// Unique kebab-case name ending in `-workflow`.
    pub name: &'static str,
    /// What the workflow does.
    pub description: &'static str,
    /// The struct's type name.
    pub type_name: &'static str,
    /// The struct's `TypeId`.
    pub type_id: fn() -> TypeId,
    /// Agents run under the workflow.
    pub agents: &'static [&'static AgentMeta],
    /// Routers run under the workflow.
    pub routers: &'static [&'static RouterMeta],
    /// Tools the workflow calls as steps of its own.
    pub tools: &'static [&'static ToolMeta],
    /// Interceptors attached at the workflow.
    pub tool_interceptors: &'static [&'static InterceptorMeta],
    /// Inherited interceptors removed at the workflow.
    pub exclude_tool_interceptors: &'static [&'static InterceptorMeta],
    /// PII policies attached at the workflow.
    pub pii_policies: &'static [&'static PiiPolicyMeta],
    /// Default `max_result_size` for tools under the workflow.
    pub max_result_size: Option<usize>,
    /// Guardrails attached and excluded here.
    pub guardrails: ScopeGuardrails,
    /// Usage limits declared here (`usage_limits(..)`): a run on a path under this scope gets
    /// the strictest of every scope's, the app's and its own
    /// ([`UsageLimits`](crate::engine::UsageLimits)).
    pub usage_limits: crate::contract::usage_limits::UsageLimitsMeta,
}

impl fmt::Debug for WorkflowMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// Implemented by `#[workflow]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a workflow [workflow.not-a-workflow]",
    label = "expected a `#[workflow]` struct",
    note = "only structs annotated with `#[workflow(...)]` can be listed in `workflows = [...]`"
)]
pub trait Workflow: 'static {
    /// Registration data.
    const META: &'static WorkflowMeta;
}

/// Registration data of an `#[application]`.
pub struct ApplicationMeta {
    /// Unique kebab-case name ending in `-application`.
    pub name: &'static str,
    /// What the application does.
    pub description: &'static str,
    /// The struct's type name.
    pub type_name: &'static str,
    /// The struct's `TypeId`.
    pub type_id: fn() -> TypeId,
    /// Its workflows.
    pub workflows: &'static [&'static WorkflowMeta],
    /// Agents run directly under the application.
    pub agents: &'static [&'static AgentMeta],
    /// Routers run directly under the application.
    pub routers: &'static [&'static RouterMeta],
    /// Tools callable directly (every tool an agent or workflow uses is too).
    pub tools: &'static [&'static ToolMeta],
    /// MCP servers whose every tool is callable directly (`mcp_servers = [..]`).
    pub mcp_servers: &'static [&'static str],
    /// Interceptors attached at the application (outermost).
    pub tool_interceptors: &'static [&'static InterceptorMeta],
    /// PII policies attached at the application (outermost).
    pub pii_policies: &'static [&'static PiiPolicyMeta],
    /// Default `max_result_size` for every tool.
    pub max_result_size: Option<usize>,
    /// Guardrails attached and excluded here.
    pub guardrails: ScopeGuardrails,
    /// Usage limits declared here (`usage_limits(..)`): a run on a path under this scope gets
    /// the strictest of every scope's, the app's and its own
    /// ([`UsageLimits`](crate::engine::UsageLimits)).
    pub usage_limits: crate::contract::usage_limits::UsageLimitsMeta,
}

impl fmt::Debug for ApplicationMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// Implemented by `#[application]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an application [application.not-an-application]",
    label = "expected an `#[application]` struct",
    note = "annotate it with `#[application(...)]`"
)]
pub trait Application: 'static {
    /// Registration data.
    const META: &'static ApplicationMeta;
}
