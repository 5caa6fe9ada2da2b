//! What the cascade resolves: every tool bound to its path ([`BoundTool`]), and the agents,
//! routers and workflows with their tools bound.
use crate::contract::usage_limits::UsageLimits;
use std::fmt;
use std::sync::Arc;

use super::guardrails::Guardrails;
use crate::contract::MetaRef;
use crate::contract::agent::{AgentMeta, RouterMeta};
use crate::contract::outcome::{CallOutcome, Rendered};
use crate::contract::scope::{ScopeKind, ScopeRef};
use crate::contract::tool::ToolMeta;
use crate::contract::workflow::WorkflowMeta;
use crate::di::{CallId, Services, TenantContext};
use crate::model::ToolDefinition;
use crate::pipeline::Chain;
use crate::pipeline::{CallEnv, ErasedToolSlot};

/// A tool bound to one path of the cascade: its instance, its resolved chain and the app's
/// services. What an agent loop, a workflow step or a callback calls.
#[derive(Clone)]
pub struct BoundTool {
    pub(crate) meta: MetaRef<ToolMeta>,
    pub(crate) slot: Arc<dyn ErasedToolSlot>,
    pub(crate) chain: Arc<Chain>,
    pub(crate) services: Arc<Services>,
    pub(crate) max_result_size: Option<usize>,
    /// The policy digest, computed the first time it is asked for (only gated calls need it).
    pub(crate) policy: Arc<std::sync::OnceLock<Arc<str>>>,
}

impl fmt::Debug for BoundTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BoundTool")
            .field("tool", &self.meta.name)
            .field("chain", &self.chain)
            .finish()
    }
}

impl BoundTool {
    /// The tool's registration data.
    pub fn meta(&self) -> &ToolMeta {
        &self.meta
    }
    /// The tool's registration data as the app holds it: a constant of the program, or (a tool
    /// of a whole MCP server) data the app owns.
    pub fn meta_ref(&self) -> &MetaRef<ToolMeta> {
        &self.meta
    }
    /// The resolved chain on this path.
    pub fn chain(&self) -> &Chain {
        &self.chain
    }
    /// A digest (SHA-256, hex) of the policy a call of this tool runs under on this path: the
    /// tool, its path, its `before_tool_call` and `after_tool_call` order, its PII policies,
    /// its approval channel and its limits. An approval ticket made under another policy is not
    /// applied.
    pub fn policy_digest(&self) -> Arc<str> {
        Arc::clone(self.policy.get_or_init(|| self.compute_policy_digest()))
    }

    fn compute_policy_digest(&self) -> Arc<str> {
        let policy = format!(
            "{}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}",
            self.meta.name,
            self.chain.path(),
            self.chain.before_order(),
            self.chain.after_order(),
            self.chain.pii().names(),
            self.meta.approval.map(|c| c.name),
            self.max_result_size,
        );
        crate::stamp::sha256_hex(policy.as_bytes()).into()
    }
    /// Decodes and validates JSON text arguments against the tool's input DTO (and its
    /// `max_input_size`), calling nothing: [`ToolCallErrorKind::InvalidInput`](crate::contract::outcome::ToolCallErrorKind::InvalidInput) with every failing
    /// field. A remote tool has no DTO here and passes.
    pub fn check_input(&self, args: &str) -> Result<(), crate::contract::outcome::ToolCallError> {
        self.slot.check_input(&self.meta, args)
    }
    /// The effective `max_result_size` (tool, else agent, else workflow, else application).
    pub fn max_result_size(&self) -> Option<usize> {
        self.max_result_size
    }
    /// The definition a model sees: name, description, input JSON Schema.
    pub fn definition(&self) -> ToolDefinition {
        ToolDefinition::new(
            &*self.meta.name,
            &*self.meta.description,
            self.slot
                .model_input_schema()
                .unwrap_or_else(|| (self.meta.input_schema)()),
        )
    }
    /// Runs one call through the guarded pipeline of this path, with JSON text arguments as a
    /// model sends them.
    pub async fn call(
        &self,
        call_id: &str,
        tenant: Option<&TenantContext>,
        args: &str,
    ) -> CallOutcome<Rendered> {
        let env = CallEnv {
            services: &self.services,
            tenant,
            call_id: CallId::new(call_id),
            run_timeout: None,
            progress: None,
            idempotency_key: None,
            approval: None,
        };
        self.call_with(env, args).await
    }

    /// [`BoundTool::call`] with every per-call input given.
    pub(crate) async fn call_with(&self, env: CallEnv<'_>, args: &str) -> CallOutcome<Rendered> {
        self.slot
            .call_json(&self.chain, env, args, self.max_result_size)
            .await
    }
}

/// An agent on one path (application → [workflow →] agent), with its tools bound to their chains.
#[derive(Debug)]
pub struct ResolvedAgent {
    /// The agent's registration data.
    pub meta: &'static AgentMeta,
    /// The scopes above and including the agent, outermost first.
    pub scopes: Vec<ScopeRef>,
    /// Its text boundary on this path (a route's include its router's).
    pub guardrails: Guardrails,
    /// Its tools, in declaration order.
    pub tools: Vec<BoundTool>,
    /// Its place among the app's agent paths (what per-path caches are indexed by).
    pub(crate) index: usize,
    /// The usage limits declared on its path: the strictest of the application's, the
    /// workflow's and its own `usage_limits(..)`.
    pub usage_limits: UsageLimits,
}

impl ResolvedAgent {
    /// A tool of the agent by name.
    pub fn tool(&self, name: &str) -> Option<&BoundTool> {
        self.tools.iter().find(|t| t.meta.name == name)
    }
    /// The workflow the agent runs under on this path, if any.
    pub fn workflow(&self) -> Option<&'static str> {
        self.scopes
            .iter()
            .find(|s| s.kind == ScopeKind::Workflow)
            .map(|s| s.name)
    }
}

/// A router on one path, with its resolved routes.
#[derive(Debug)]
pub struct ResolvedRouter {
    /// The router's registration data.
    pub meta: &'static RouterMeta,
    /// The guardrails of application → [workflow →] router: the input ones run before the
    /// route is chosen.
    pub guardrails: Guardrails,
    /// The routes, in declaration order, each on this router's path.
    pub routes: Vec<Arc<ResolvedAgent>>,
}

/// A workflow with everything under it resolved.
#[derive(Debug)]
pub struct ResolvedWorkflow {
    /// The workflow's registration data.
    pub meta: &'static WorkflowMeta,
    /// Its agents.
    pub agents: Vec<Arc<ResolvedAgent>>,
    /// Its routers.
    pub routers: Vec<Arc<ResolvedRouter>>,
    /// Its own tool steps, bound on application → workflow → tool.
    pub tools: Vec<BoundTool>,
    /// The usage limits declared on its path: the strictest of the application's and its own.
    pub usage_limits: UsageLimits,
}
