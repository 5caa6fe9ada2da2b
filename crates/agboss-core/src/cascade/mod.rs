//! The app and the interceptor cascade: chains are resolved once, when the app is built.
//!
//! `before_tool_call` runs outer to inner (application → … → tool), `after_tool_call` inner to
//! outer. `exclude_tool_interceptors` at a scope removes an inherited interceptor for that scope
//! and everything below it; an interceptor attached at several scopes runs once, at its outermost
//! place.
mod describe;

use std::any::TypeId;
use std::collections::HashMap;
use std::fmt;
use std::hash::BuildHasherDefault;
use std::marker::PhantomData;
use std::sync::Arc;

use serde_json::Value;

use crate::agent::{AgentMeta, RouterMeta};
use crate::di::{CallId, Injectable, Services, TenantContext};
use crate::dto::Dto;
use crate::error::{BlockKind, BuildError, ToolBlockedError, ToolCallError};
use crate::interceptor::{ErasedInterceptor, InterceptorMeta, ToolInterceptor};
use crate::pipeline::{CallEnv, ErasedToolSlot, JsonOutcome, Outcome, ToolSlot, run_typed};
use crate::registry::Registration;
use crate::tool::{Tool, ToolMeta};

/// The kind of a scope in the cascade.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScopeKind {
    /// `#[application]` (or the app builder).
    Application,
    /// `#[workflow]`.
    Workflow,
    /// `#[agent]`.
    Agent,
    /// `#[tool]` / `#[mcp_tool]`.
    Tool,
}

impl fmt::Display for ScopeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Application => "application",
            Self::Workflow => "workflow",
            Self::Agent => "agent",
            Self::Tool => "tool",
        })
    }
}

/// A scope: its kind and name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ScopeRef {
    /// Application, workflow, agent or tool.
    pub kind: ScopeKind,
    /// The component's name.
    pub name: &'static str,
}

impl fmt::Display for ScopeRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} `{}`", self.kind, self.name)
    }
}

/// One scope of a path with what it attaches and excludes.
#[derive(Debug, Clone)]
pub struct ScopeSpec {
    /// The scope.
    pub scope: ScopeRef,
    /// `tool_interceptors = [...]`.
    pub attach: Vec<&'static InterceptorMeta>,
    /// `exclude_tool_interceptors = [...]`.
    pub exclude: Vec<&'static InterceptorMeta>,
    /// `pii_policies = [...]`.
    pub pii_policies: Vec<&'static crate::pii_policy::PiiPolicyMeta>,
}

/// One interceptor of a resolved chain and where it came from.
#[derive(Debug, Clone)]
pub struct ChainEntry {
    /// The interceptor.
    pub interceptor: &'static InterceptorMeta,
    /// The scope that attached it (its outermost place).
    pub origin: ScopeRef,
}

/// An inherited interceptor that a scope excluded.
#[derive(Debug, Clone)]
pub struct Exclusion {
    /// The interceptor.
    pub interceptor: &'static InterceptorMeta,
    /// Where it was attached.
    pub attached_at: ScopeRef,
    /// Where it was excluded.
    pub excluded_at: ScopeRef,
}

/// The resolved, ordered interceptor chain of one tool on one path.
pub struct Chain {
    pub(crate) before: Box<[Arc<dyn ErasedInterceptor>]>,
    /// Already in inner-to-outer order.
    pub(crate) after: Box<[Arc<dyn ErasedInterceptor>]>,
    pub(crate) entries: Vec<ChainEntry>,
    pub(crate) exclusions: Vec<Exclusion>,
    pub(crate) path: Arc<[&'static str]>,
    pub(crate) pii: crate::pii_policy::PiiChain,
}

impl fmt::Debug for Chain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Chain")
            .field("path", &self.path)
            .field("entries", &self.entries)
            .field("exclusions", &self.exclusions)
            .finish()
    }
}

impl Chain {
    /// The interceptors in `before_tool_call` order (outer to inner), with their origin.
    pub fn entries(&self) -> &[ChainEntry] {
        &self.entries
    }
    /// The exclusions applied on this path.
    pub fn exclusions(&self) -> &[Exclusion] {
        &self.exclusions
    }
    /// Names of the interceptors whose `before_tool_call` runs, in order.
    pub fn before_order(&self) -> Vec<&'static str> {
        self.before.iter().map(|i| i.meta().name).collect()
    }
    /// Names of the interceptors whose `after_tool_call` runs, in order (inner to outer).
    pub fn after_order(&self) -> Vec<&'static str> {
        self.after.iter().map(|i| i.meta().name).collect()
    }
    /// The scope names of the path (outermost first, without the tool).
    pub fn path(&self) -> &[&'static str] {
        &self.path
    }
}

/// Builds each interceptor type once per app.
#[derive(Default)]
pub(crate) struct InterceptorPool {
    built: HashMap<TypeId, Arc<dyn ErasedInterceptor>>,
    pub(crate) pii: crate::pii_policy::PiiPool,
}

impl InterceptorPool {
    pub(crate) fn get(
        &mut self,
        meta: &'static InterceptorMeta,
        services: &mut Services,
    ) -> Result<Arc<dyn ErasedInterceptor>, BuildError> {
        if let Some(i) = self.built.get(&(meta.type_id)()) {
            return Ok(Arc::clone(i));
        }
        services.ensure(meta.type_name, meta.deps, &mut Vec::new())?;
        let built = (meta.build)(services).map_err(|e| BuildError::ServiceConstruction {
            service: meta.type_name,
            message: e.to_string(),
        })?;
        self.built.insert((meta.type_id)(), Arc::clone(&built));
        Ok(built)
    }
}

/// Resolves the chain of one path (outermost scope first; the last scope is the tool's).
pub(crate) fn resolve_chain(
    scopes: &[ScopeSpec],
    pool: &mut InterceptorPool,
    services: &mut Services,
) -> Result<Chain, BuildError> {
    let mut entries: Vec<ChainEntry> = Vec::new();
    let mut exclusions: Vec<Exclusion> = Vec::new();
    for spec in scopes {
        for ex in &spec.exclude {
            if let Some(pos) = entries.iter().position(|e| e.interceptor.same(ex)) {
                let removed = entries.remove(pos);
                exclusions.push(Exclusion {
                    interceptor: removed.interceptor,
                    attached_at: removed.origin,
                    excluded_at: spec.scope,
                });
            }
        }
        for at in &spec.attach {
            if !entries.iter().any(|e| e.interceptor.same(at)) {
                entries.push(ChainEntry {
                    interceptor: at,
                    origin: spec.scope,
                });
            }
        }
    }
    let mut before = Vec::new();
    let mut after = Vec::new();
    for entry in &entries {
        let built = pool.get(entry.interceptor, services)?;
        if built.has_before() {
            before.push(Arc::clone(&built));
        }
        if built.has_after() {
            after.push(built);
        }
    }
    after.reverse();
    let path: Arc<[&'static str]> = scopes
        .iter()
        .filter(|s| s.scope.kind != ScopeKind::Tool)
        .map(|s| s.scope.name)
        .collect();
    let pii = crate::pii_policy::resolve(
        scopes.iter().map(|s| s.pii_policies.as_slice()),
        &mut pool.pii,
    )?;
    Ok(Chain {
        before: before.into(),
        after: after.into(),
        entries,
        exclusions,
        path,
        pii,
    })
}

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
    pub pii_policies: &'static [&'static crate::pii_policy::PiiPolicyMeta],
    /// Default `max_result_size` for tools under the workflow.
    pub max_result_size: Option<usize>,
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
    /// Interceptors attached at the application (outermost).
    pub tool_interceptors: &'static [&'static InterceptorMeta],
    /// PII policies attached at the application (outermost).
    pub pii_policies: &'static [&'static crate::pii_policy::PiiPolicyMeta],
    /// Default `max_result_size` for every tool.
    pub max_result_size: Option<usize>,
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

/// A tool bound to one path of the cascade: its instance, its resolved chain and the app's
/// services. What an agent loop, a workflow step or a callback calls.
#[derive(Clone)]
pub struct BoundTool {
    pub(crate) meta: &'static ToolMeta,
    pub(crate) slot: Arc<dyn ErasedToolSlot>,
    pub(crate) chain: Arc<Chain>,
    pub(crate) services: Arc<Services>,
    pub(crate) max_result_size: Option<usize>,
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
    pub fn meta(&self) -> &'static ToolMeta {
        self.meta
    }
    /// The resolved chain on this path.
    pub fn chain(&self) -> &Chain {
        &self.chain
    }
    /// The effective `max_result_size` (tool, else agent, else workflow, else application).
    pub fn max_result_size(&self) -> Option<usize> {
        self.max_result_size
    }
    /// The definition a model sees: name, description, input JSON Schema.
    pub fn definition(&self) -> crate::model::ToolDefinition {
        crate::model::ToolDefinition::new(
            self.meta.name,
            self.meta.description,
            (self.meta.input_schema)(),
        )
    }
    /// Runs one call through the guarded pipeline of this path, with JSON text arguments as a
    /// model sends them. `reply_to_model` is an outcome; a block is an error.
    pub async fn call(
        &self,
        call_id: &str,
        tenant: Option<&TenantContext>,
        args: &str,
    ) -> Result<JsonOutcome, ToolCallError> {
        let env = CallEnv {
            services: &self.services,
            tenant,
            call_id: CallId::new(call_id),
        };
        self.call_with(env, args).await
    }

    pub(crate) async fn call_with(
        &self,
        env: CallEnv<'_>,
        args: &str,
    ) -> Result<JsonOutcome, ToolCallError> {
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
    /// Its tools, in declaration order.
    pub tools: Vec<BoundTool>,
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
}

/// Something found at build time that is probably a mistake but does not stop the app.
/// Reported through `tracing::warn!` and [`App::warnings`]; [`AppBuilder::deny_warnings`]
/// turns them into a build error.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildWarning {
    /// An exclusion with nothing inherited to remove.
    UselessExclusion {
        /// The interceptor excluded.
        interceptor: &'static str,
        /// Where.
        at: ScopeRef,
    },
    /// A registered component that no path of the application reaches.
    Unreachable {
        /// tool, agent, router or workflow.
        kind: &'static str,
        /// Its name.
        name: &'static str,
    },
}

impl fmt::Display for BuildWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UselessExclusion { interceptor, at } => write!(
                f,
                "{at} excludes `{interceptor}`, but no outer scope attaches it: the exclusion does nothing"
            ),
            Self::Unreachable { kind, name } => write!(
                f,
                "{kind} `{name}` is registered but no path of the application reaches it"
            ),
        }
    }
}

struct AppInner {
    name: &'static str,
    application: Option<&'static ApplicationMeta>,
    services: Arc<Services>,
    tools: Vec<ToolEntry>,
    by_type: HashMap<TypeId, usize, BuildHasherDefault<TypeIdHasher>>,
    by_name: HashMap<&'static str, usize>,
    agents: Vec<Arc<ResolvedAgent>>,
    routers: Vec<Arc<ResolvedRouter>>,
    workflows: Vec<Arc<ResolvedWorkflow>>,
    warnings: Vec<BuildWarning>,
    model: Option<crate::model::SharedChatModel>,
    agent_models: HashMap<&'static str, crate::model::SharedChatModel>,
    listeners: crate::listener::ToolCallListenerSet,
}

/// `TypeId`s are hashes already: the typed handle's lookup (on every direct call) skips SipHash.
#[derive(Default)]
struct TypeIdHasher(u64);

impl std::hash::Hasher for TypeIdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 ^= n;
    }
    fn write_u128(&mut self, n: u128) {
        self.0 ^= n as u64 ^ (n >> 64) as u64;
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

pub(crate) struct ToolEntry {
    pub(crate) bound: BoundTool,
}

/// A built application: services constructed, every chain resolved. Cheap to clone.
#[derive(Clone)]
pub struct App {
    inner: Arc<AppInner>,
}

impl fmt::Debug for App {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("App")
            .field("name", &self.inner.name)
            .field(
                "tools",
                &self
                    .inner
                    .tools
                    .iter()
                    .map(|t| t.bound.meta.name)
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// Builds an [`App`]: from an `#[application]` ([`AppBuilder::application`]) or piece by piece.
///
/// ```
/// # use agboss_core::{App, tool, ToolHandler, ToolError};
/// # use agboss_core::dto::Dto;
/// # #[derive(Dto, Debug, Clone, PartialEq)]
/// # pub struct PingDto { #[text(prompt = "Anything")] pub text: String }
/// # #[tool(name = "ping-tool", description = "Answers", input = PingDto, output = PingDto)]
/// # pub struct PingTool;
/// # impl ToolHandler<PingDto, PingDto> for PingTool {
/// #     async fn run(&self, input: PingDto) -> Result<PingDto, ToolError> { Ok(input) }
/// # }
/// let app = App::builder().tool::<PingTool>().build().expect("valid app");
/// let out = futures::executor::block_on(app.tool::<PingTool>().invoke_json(r#"{"text":"hi"}"#));
/// assert_eq!(out.unwrap(), r#"{"text":"hi"}"#);
/// ```
#[must_use = "an AppBuilder does nothing until `.build()`"]
pub struct AppBuilder {
    name: &'static str,
    application: Option<&'static ApplicationMeta>,
    attach: Vec<&'static InterceptorMeta>,
    pub(crate) pii_policies: Vec<&'static crate::pii_policy::PiiPolicyMeta>,
    tools: Vec<&'static ToolMeta>,
    agents: Vec<&'static AgentMeta>,
    routers: Vec<&'static RouterMeta>,
    workflows: Vec<&'static WorkflowMeta>,
    max_result_size: Option<usize>,
    services: Services,
    deny_warnings: bool,
    model: Option<crate::model::SharedChatModel>,
    agent_models: HashMap<&'static str, crate::model::SharedChatModel>,
    pub(crate) listeners: crate::listener::ToolCallListenerSet,
}

impl App {
    /// Starts an app builder.
    pub fn builder() -> AppBuilder {
        AppBuilder {
            name: "app",
            application: None,
            attach: Vec::new(),
            pii_policies: Vec::new(),
            tools: Vec::new(),
            agents: Vec::new(),
            routers: Vec::new(),
            workflows: Vec::new(),
            max_result_size: None,
            services: Services::default(),
            deny_warnings: false,
            model: None,
            agent_models: HashMap::new(),
            listeners: Default::default(),
        }
    }

    /// The app's name.
    pub fn name(&self) -> &'static str {
        self.inner.name
    }

    /// A handle to call tool `T` directly, through its application → tool chain.
    pub fn tool<T: Tool>(&self) -> ToolHandle<'_, T> {
        ToolHandle {
            app: self,
            tenant: None,
            call_id: None,
            _tool: PhantomData,
        }
    }

    /// A handle to call a tool by its registered name with JSON arguments (direct chain).
    pub fn tool_by_name(&self, name: &str) -> Option<DynToolHandle<'_>> {
        let idx = *self.inner.by_name.get(name)?;
        Some(DynToolHandle {
            app: self,
            entry: &self.inner.tools[idx],
            tenant: None,
            call_id: None,
        })
    }

    /// The tools of the app.
    pub fn tools(&self) -> impl Iterator<Item = &'static ToolMeta> + '_ {
        self.inner.tools.iter().map(|t| t.bound.meta)
    }

    /// The resolved direct-invoke chain of tool `T`.
    pub fn direct_chain<T: Tool>(&self) -> Option<&Chain> {
        let idx = *self.inner.by_type.get(&TypeId::of::<T>())?;
        Some(&self.inner.tools[idx].bound.chain)
    }

    /// The app's services.
    pub fn services(&self) -> &Services {
        &self.inner.services
    }

    /// Every agent on every path (an agent under two workflows appears twice).
    pub fn agents(&self) -> impl Iterator<Item = &Arc<ResolvedAgent>> {
        self.inner.agents.iter()
    }

    /// Agent `A` by type: its path directly under the application if it has one, else its first
    /// path under a workflow.
    pub fn agent<A: crate::agent::Agent>(&self) -> Option<&Arc<ResolvedAgent>> {
        self.agent_by_name(A::META.name)
    }

    /// An agent by name (same preference as [`App::agent`]).
    pub fn agent_by_name(&self, name: &str) -> Option<&Arc<ResolvedAgent>> {
        let mut paths = self.inner.agents.iter().filter(|a| a.meta.name == name);
        let first = paths.next()?;
        if first.workflow().is_none() {
            return Some(first);
        }
        Some(paths.find(|a| a.workflow().is_none()).unwrap_or(first))
    }

    /// Agent `A` on its path under workflow `W`.
    pub fn agent_in<W: Workflow, A: crate::agent::Agent>(&self) -> Option<&Arc<ResolvedAgent>> {
        self.inner
            .agents
            .iter()
            .find(|a| a.meta.name == A::META.name && a.workflow() == Some(W::META.name))
    }

    /// Every router on every path.
    pub fn routers(&self) -> impl Iterator<Item = &Arc<ResolvedRouter>> {
        self.inner.routers.iter()
    }

    /// A router by name (its first path).
    pub fn router_by_name(&self, name: &str) -> Option<&Arc<ResolvedRouter>> {
        self.inner.routers.iter().find(|r| r.meta.name == name)
    }

    /// The workflows.
    pub fn workflows(&self) -> impl Iterator<Item = &Arc<ResolvedWorkflow>> {
        self.inner.workflows.iter()
    }

    /// A workflow by name.
    pub fn workflow_by_name(&self, name: &str) -> Option<&Arc<ResolvedWorkflow>> {
        self.inner.workflows.iter().find(|w| w.meta.name == name)
    }

    /// The chat model of an agent or router: its own if one was set, else the default.
    pub fn model_for(&self, agent_or_router_name: &str) -> Option<&crate::model::SharedChatModel> {
        self.inner
            .agent_models
            .get(agent_or_router_name)
            .or(self.inner.model.as_ref())
    }

    /// What the build found suspicious (see [`BuildWarning`]).
    pub fn warnings(&self) -> &[BuildWarning] {
        &self.inner.warnings
    }

    /// The tool-call listeners of the app (see [`crate::listener`]).
    pub fn tool_call_listeners(&self) -> &crate::listener::ToolCallListenerSet {
        &self.inner.listeners
    }

    /// Every tool of the app, bound on its direct (application → tool) chain.
    pub fn bound_tools(&self) -> impl Iterator<Item = &BoundTool> {
        self.inner.tools.iter().map(|t| &t.bound)
    }

    /// Renders the resolved structure: every path, every tool's chain in order, where each
    /// interceptor came from and where one was excluded.
    pub fn describe(&self) -> String {
        crate::cascade::describe::render(self)
    }

    fn entry<T: Tool>(&self) -> Result<(&ToolEntry, &ToolSlot<T>), ToolCallError> {
        let not_in_app = || ToolCallError::NotInApp {
            tool_name: T::META.name.to_string(),
        };
        let idx = *self
            .inner
            .by_type
            .get(&TypeId::of::<T>())
            .ok_or_else(not_in_app)?;
        let entry = &self.inner.tools[idx];
        let slot = entry
            .bound
            .slot
            .as_any()
            .downcast_ref::<ToolSlot<T>>()
            .ok_or_else(not_in_app)?;
        Ok((entry, slot))
    }
}

impl AppBuilder {
    /// Builds the app of an `#[application]`: its name, interceptors, workflows, agents,
    /// routers and tools.
    pub fn application<A: Application>(mut self) -> Self {
        let meta = A::META;
        self.name = meta.name;
        self.application = Some(meta);
        self.attach.extend_from_slice(meta.tool_interceptors);
        self.pii_policies.extend_from_slice(meta.pii_policies);
        self.workflows.extend_from_slice(meta.workflows);
        self.agents.extend_from_slice(meta.agents);
        self.routers.extend_from_slice(meta.routers);
        self.tools.extend_from_slice(meta.tools);
        self.max_result_size = meta.max_result_size;
        self
    }
    /// Names the app (the application scope in chains and errors).
    pub fn name(mut self, name: &'static str) -> Self {
        self.name = name;
        self
    }
    /// Attaches an interceptor at application level (outermost).
    pub fn tool_interceptor<I: ToolInterceptor>(mut self) -> Self {
        self.attach.push(I::META);
        self
    }
    /// Adds a tool (its tool-level interceptors come with it), callable directly.
    pub fn tool<T: Tool>(mut self) -> Self {
        self.tools.push(T::META);
        self
    }
    /// Adds a tool by its registration data.
    pub fn tool_meta(mut self, meta: &'static ToolMeta) -> Self {
        self.tools.push(meta);
        self
    }
    /// Adds an agent directly under the application.
    pub fn agent<A: crate::agent::Agent>(mut self) -> Self {
        self.agents.push(A::META);
        self
    }
    /// Adds a router directly under the application.
    pub fn router<R: crate::agent::Router>(mut self) -> Self {
        self.routers.push(R::META);
        self
    }
    /// Adds a workflow.
    pub fn workflow<W: Workflow>(mut self) -> Self {
        self.workflows.push(W::META);
        self
    }
    /// Application-wide default `max_result_size`.
    pub fn max_result_size(mut self, bytes: usize) -> Self {
        self.max_result_size = Some(bytes);
        self
    }
    /// Provides a service instance (required for `#[injectable(provided)]`, and replaces the
    /// default construction of any other service: the way to plug in a fake in tests).
    pub fn provide<S: Injectable>(mut self, service: S) -> Self {
        self.services.insert(Arc::new(service));
        self
    }
    /// Like [`AppBuilder::provide`], with a shared instance.
    pub fn provide_arc<S: Injectable>(mut self, service: Arc<S>) -> Self {
        self.services.insert(service);
        self
    }
    /// The default chat model of every agent and router.
    pub fn model(mut self, model: impl crate::model::ChatModel + 'static) -> Self {
        self.model = Some(Arc::new(model));
        self
    }
    /// The default chat model, already shared.
    pub fn shared_model(mut self, model: crate::model::SharedChatModel) -> Self {
        self.model = Some(model);
        self
    }
    /// A chat model for one agent (or router), overriding the default.
    pub fn agent_model(
        mut self,
        agent_or_router_name: &'static str,
        model: crate::model::SharedChatModel,
    ) -> Self {
        self.agent_models.insert(agent_or_router_name, model);
        self
    }
    /// Makes every [`BuildWarning`] a build error.
    pub fn deny_warnings(mut self) -> Self {
        self.deny_warnings = true;
        self
    }

    /// Checks names, builds services, resolves every chain of every path.
    pub fn build(self) -> Result<App, BuildError> {
        crate::registry::check_unique_names()?;
        let mut r = Resolution {
            services: self.services,
            pool: InterceptorPool::default(),
            slots: HashMap::new(),
            warnings: Vec::new(),
            exclusions: Vec::new(),
            app_max: self.max_result_size,
        };
        let app_scope = ScopeSpec {
            scope: ScopeRef {
                kind: ScopeKind::Application,
                name: self.name,
            },
            attach: self.attach,
            exclude: Vec::new(),
            pii_policies: self.pii_policies,
        };

        // Build every tool slot first (services must exist before the Arc is frozen).
        let mut all_tools: Vec<&'static ToolMeta> = self.tools.clone();
        let note_agent_tools = |agent: &'static AgentMeta, out: &mut Vec<&'static ToolMeta>| {
            out.extend_from_slice(agent.tools);
        };
        for a in &self.agents {
            note_agent_tools(a, &mut all_tools);
        }
        for router in &self.routers {
            for a in router.routes {
                note_agent_tools(a, &mut all_tools);
            }
        }
        for w in &self.workflows {
            all_tools.extend_from_slice(w.tools);
            for a in w.agents {
                note_agent_tools(a, &mut all_tools);
            }
            for router in w.routers {
                for a in router.routes {
                    note_agent_tools(a, &mut all_tools);
                }
            }
        }
        for meta in &all_tools {
            r.slot(meta)?;
        }

        // Resolve chains against the services, then freeze them.
        let mut pending_tools: Vec<(&'static ToolMeta, Chain, Option<usize>)> = Vec::new();
        for meta in dedup(&all_tools) {
            let chain = r.chain(&[app_scope.clone(), tool_scope(meta)])?;
            pending_tools.push((meta, chain, r.app_max));
        }
        let mut pending_agents: Vec<PendingAgent> = Vec::new();
        let mut pending_routers: Vec<(usize, &'static RouterMeta, Vec<usize>)> = Vec::new();
        let mut pending_workflows: Vec<PendingWorkflow> = Vec::new();
        let app_scopes = vec![app_scope.clone()];
        for a in &self.agents {
            pending_agents.push(r.agent(&app_scopes, a, None)?);
        }
        for router in &self.routers {
            let mut routes = Vec::new();
            for a in router.routes {
                routes.push(pending_agents.len());
                pending_agents.push(r.agent(&app_scopes, a, None)?);
            }
            pending_routers.push((usize::MAX, router, routes));
        }
        for w in &self.workflows {
            let w_scope = ScopeSpec {
                scope: ScopeRef {
                    kind: ScopeKind::Workflow,
                    name: w.name,
                },
                attach: w.tool_interceptors.to_vec(),
                exclude: w.exclude_tool_interceptors.to_vec(),
                pii_policies: w.pii_policies.to_vec(),
            };
            let scopes = vec![app_scope.clone(), w_scope.clone()];
            let mut agents = Vec::new();
            for a in w.agents {
                agents.push(pending_agents.len());
                pending_agents.push(r.agent(&scopes, a, w.max_result_size)?);
            }
            let mut routers = Vec::new();
            for router in w.routers {
                let mut routes = Vec::new();
                for a in router.routes {
                    routes.push(pending_agents.len());
                    pending_agents.push(r.agent(&scopes, a, w.max_result_size)?);
                }
                routers.push(pending_routers.len());
                pending_routers.push((pending_workflows.len(), router, routes));
            }
            let mut tools = Vec::new();
            for t in w.tools {
                let chain = r.chain(&[app_scope.clone(), w_scope.clone(), tool_scope(t)])?;
                tools.push((*t, chain, w.max_result_size.or(r.app_max)));
            }
            pending_workflows.push(PendingWorkflow {
                meta: w,
                agents,
                routers,
                tools,
            });
        }

        // Warnings.
        let mut warnings = r.warnings;
        for (at, interceptor, used) in &r.exclusions {
            if !used {
                warnings.push(BuildWarning::UselessExclusion {
                    interceptor: interceptor.name,
                    at: *at,
                });
            }
        }
        if self.application.is_some() {
            let reached_agents: Vec<&str> = pending_agents.iter().map(|a| a.meta.name).collect();
            let reached_routers: Vec<&str> = pending_routers.iter().map(|r| r.1.name).collect();
            let reached_workflows: Vec<&str> =
                pending_workflows.iter().map(|w| w.meta.name).collect();
            let reached_tools: Vec<&str> = all_tools.iter().map(|t| t.name).collect();
            for reg in crate::registry::all() {
                let (kind, name, reached) = match reg {
                    Registration::Agent(m) => ("agent", m.name, reached_agents.contains(&m.name)),
                    Registration::Router(m) => {
                        ("router", m.name, reached_routers.contains(&m.name))
                    }
                    Registration::Workflow(m) => {
                        ("workflow", m.name, reached_workflows.contains(&m.name))
                    }
                    Registration::Tool(m) => ("tool", m.name, reached_tools.contains(&m.name)),
                    _ => continue,
                };
                if !reached {
                    warnings.push(BuildWarning::Unreachable { kind, name });
                }
            }
        }
        warnings.sort_by_key(|w| w.to_string());
        warnings.dedup();
        for w in &warnings {
            tracing::warn!(app = self.name, "{w}");
        }
        if self.deny_warnings && !warnings.is_empty() {
            return Err(BuildError::Invalid(format!(
                "the app has {} warning(s) and `deny_warnings` is on: {}",
                warnings.len(),
                warnings
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ")
            )));
        }

        // Freeze.
        let services = Arc::new(r.services);
        let slots = r.slots;
        let bind =
            |meta: &'static ToolMeta, chain: Chain, inherited_max: Option<usize>| BoundTool {
                meta,
                slot: Arc::clone(&slots[&(meta.type_id)()]),
                chain: Arc::new(chain),
                services: Arc::clone(&services),
                max_result_size: meta.max_result_size.or(inherited_max),
            };
        let mut tools = Vec::new();
        let mut by_type = HashMap::default();
        let mut by_name = HashMap::new();
        for (meta, chain, max) in pending_tools {
            by_type.insert((meta.type_id)(), tools.len());
            by_name.insert(meta.name, tools.len());
            tools.push(ToolEntry {
                bound: bind(meta, chain, max),
            });
        }
        let agents: Vec<Arc<ResolvedAgent>> = pending_agents
            .into_iter()
            .map(|p| {
                Arc::new(ResolvedAgent {
                    meta: p.meta,
                    scopes: p.scopes,
                    tools: p
                        .tools
                        .into_iter()
                        .map(|(m, c, max)| bind(m, c, max))
                        .collect(),
                })
            })
            .collect();
        let routers: Vec<Arc<ResolvedRouter>> = pending_routers
            .iter()
            .map(|(_, meta, routes)| {
                Arc::new(ResolvedRouter {
                    meta,
                    routes: routes.iter().map(|i| Arc::clone(&agents[*i])).collect(),
                })
            })
            .collect();
        let workflows = pending_workflows
            .into_iter()
            .map(|w| {
                Arc::new(ResolvedWorkflow {
                    meta: w.meta,
                    agents: w.agents.iter().map(|i| Arc::clone(&agents[*i])).collect(),
                    routers: w.routers.iter().map(|i| Arc::clone(&routers[*i])).collect(),
                    tools: w
                        .tools
                        .into_iter()
                        .map(|(m, c, max)| bind(m, c, max))
                        .collect(),
                })
            })
            .collect();
        Ok(App {
            inner: Arc::new(AppInner {
                name: self.name,
                application: self.application,
                services,
                tools,
                by_type,
                by_name,
                agents,
                routers,
                workflows,
                warnings,
                model: self.model,
                agent_models: self.agent_models,
                listeners: self.listeners,
            }),
        })
    }
}

fn tool_scope(meta: &'static ToolMeta) -> ScopeSpec {
    ScopeSpec {
        scope: ScopeRef {
            kind: ScopeKind::Tool,
            name: meta.name,
        },
        attach: meta.tool_interceptors.to_vec(),
        exclude: meta.exclude_tool_interceptors.to_vec(),
        pii_policies: meta.pii_policies.to_vec(),
    }
}

fn dedup(tools: &[&'static ToolMeta]) -> Vec<&'static ToolMeta> {
    let mut out: Vec<&'static ToolMeta> = Vec::new();
    for t in tools {
        if !out.iter().any(|o| (o.type_id)() == (t.type_id)()) {
            out.push(t);
        }
    }
    out
}

struct PendingAgent {
    meta: &'static AgentMeta,
    scopes: Vec<ScopeRef>,
    tools: Vec<(&'static ToolMeta, Chain, Option<usize>)>,
}

struct PendingWorkflow {
    meta: &'static WorkflowMeta,
    agents: Vec<usize>,
    routers: Vec<usize>,
    tools: Vec<(&'static ToolMeta, Chain, Option<usize>)>,
}

/// The mutable state of one build.
struct Resolution {
    services: Services,
    pool: InterceptorPool,
    slots: HashMap<TypeId, Arc<dyn ErasedToolSlot>>,
    warnings: Vec<BuildWarning>,
    /// Every (scope, excluded interceptor) and whether it removed something on any path: an
    /// exclusion is useless only when it is useless on every path through its scope.
    exclusions: Vec<(ScopeRef, &'static InterceptorMeta, bool)>,
    app_max: Option<usize>,
}

impl Resolution {
    fn slot(&mut self, meta: &'static ToolMeta) -> Result<(), BuildError> {
        let id = (meta.type_id)();
        if self.slots.contains_key(&id) {
            return Ok(());
        }
        self.services
            .ensure(meta.type_name, meta.deps, &mut Vec::new())?;
        let slot = (meta.erased)().build_slot(&self.services).map_err(|e| {
            BuildError::ServiceConstruction {
                service: meta.type_name,
                message: e.to_string(),
            }
        })?;
        self.slots.insert(id, slot);
        Ok(())
    }

    fn chain(&mut self, scopes: &[ScopeSpec]) -> Result<Chain, BuildError> {
        let chain = resolve_chain(scopes, &mut self.pool, &mut self.services)?;
        for spec in scopes {
            for ex in &spec.exclude {
                let used = chain
                    .exclusions
                    .iter()
                    .any(|e| e.interceptor.same(ex) && e.excluded_at == spec.scope);
                match self
                    .exclusions
                    .iter_mut()
                    .find(|(at, i, _)| *at == spec.scope && i.same(ex))
                {
                    Some(entry) => entry.2 |= used,
                    None => self.exclusions.push((spec.scope, ex, used)),
                }
            }
        }
        Ok(chain)
    }

    fn agent(
        &mut self,
        outer: &[ScopeSpec],
        meta: &'static AgentMeta,
        workflow_max: Option<usize>,
    ) -> Result<PendingAgent, BuildError> {
        let agent_scope = ScopeSpec {
            scope: ScopeRef {
                kind: ScopeKind::Agent,
                name: meta.name,
            },
            attach: meta.tool_interceptors.to_vec(),
            exclude: meta.exclude_tool_interceptors.to_vec(),
            pii_policies: meta.pii_policies.to_vec(),
        };
        let mut scopes: Vec<ScopeSpec> = outer.to_vec();
        scopes.push(agent_scope);
        let inherited = meta.max_result_size.or(workflow_max).or(self.app_max);
        let mut tools = Vec::new();
        for t in meta.tools {
            let mut path = scopes.clone();
            path.push(tool_scope(t));
            let chain = self.chain(&path)?;
            tools.push((*t, chain, inherited));
        }
        // An agent without tools still reports its useless exclusions.
        if meta.tools.is_empty() {
            self.chain(&scopes)?;
        }
        Ok(PendingAgent {
            meta,
            scopes: scopes.iter().map(|s| s.scope).collect(),
            tools,
        })
    }
}

/// A typed handle on one tool of an app: `app.tool::<T>().invoke(input)`.
#[must_use = "a ToolHandle does nothing until `.invoke(..)`"]
pub struct ToolHandle<'a, T> {
    app: &'a App,
    tenant: Option<TenantContext>,
    call_id: Option<CallId>,
    _tool: PhantomData<fn() -> T>,
}

impl<T: Tool> ToolHandle<'_, T> {
    /// Runs the call for a tenant (what `TenantContext` deps receive).
    pub fn tenant(mut self, tenant: impl Into<TenantContext>) -> Self {
        self.tenant = Some(tenant.into());
        self
    }
    /// Sets the call id (generated otherwise).
    pub fn call_id(mut self, call_id: &str) -> Self {
        self.call_id = Some(CallId::new(call_id));
        self
    }

    fn env(&self) -> CallEnv<'_> {
        CallEnv {
            services: &self.app.inner.services,
            tenant: self.tenant.as_ref(),
            call_id: self.call_id.clone().unwrap_or_else(CallId::generate),
        }
    }

    /// Invokes the tool with a typed input, through the whole pipeline. A `reply_to_model`
    /// decision is a [`ToolBlockedError`] here, since no model reads it. The typed output is not
    /// truncated (`max_result_size` bounds text results; see [`ToolHandle::invoke_json`]).
    pub async fn invoke(&self, input: T::Input) -> Result<T::Output, ToolCallError> {
        let (entry, slot) = self.app.entry::<T>()?;
        input
            .validate()
            .map_err(|source| ToolCallError::InvalidInput {
                tool_name: T::META.name.to_string(),
                source,
            })?;
        let env = self.env();
        let call_id = env.call_id.clone();
        match run_typed(slot, &entry.bound.chain, env, input).await? {
            Outcome::Ran(out) => Ok(out),
            Outcome::ReplyToModel {
                message,
                interceptor,
            } => Err(reply_as_block(T::META.name, &call_id, interceptor, message)),
        }
    }

    /// Invokes the tool with JSON text arguments, as a model would; returns the serialized
    /// output, truncated to `max_result_size`.
    pub async fn invoke_json(&self, args: &str) -> Result<String, ToolCallError> {
        let env = self.env();
        let call_id = env.call_id.clone();
        direct_text(self.call_env(env, args).await?, T::META.name, &call_id)
    }

    async fn call_env(&self, env: CallEnv<'_>, args: &str) -> Result<JsonOutcome, ToolCallError> {
        let (entry, slot) = self.app.entry::<T>()?;
        crate::pipeline::call_json_typed(
            slot,
            &entry.bound.chain,
            env,
            args,
            entry.bound.max_result_size,
        )
        .await
    }

    /// Like [`ToolHandle::invoke_json`] with a JSON value.
    pub async fn invoke_value(&self, args: Value) -> Result<Value, ToolCallError> {
        let text = self.invoke_json(&args.to_string()).await?;
        serde_json::from_str(&text).map_err(|e| ToolCallError::Serialize {
            tool_name: T::META.name.to_string(),
            message: e.to_string(),
        })
    }

    /// Runs the call and reports a `reply_to_model` as an outcome instead of an error (what an
    /// agent loop does).
    pub async fn call(&self, args: &str) -> Result<JsonOutcome, ToolCallError> {
        self.call_env(self.env(), args).await
    }
}

fn reply_as_block(
    tool_name: &str,
    call_id: &CallId,
    interceptor: &'static str,
    message: String,
) -> ToolCallError {
    ToolCallError::Blocked(ToolBlockedError {
        tool_name: tool_name.to_string(),
        call_id: call_id.to_string(),
        interceptor,
        kind: BlockKind::ReplyToModel { message },
    })
}

/// The text of a direct JSON call: a `reply_to_model` is a block here, since no model reads it.
fn direct_text(
    outcome: JsonOutcome,
    tool_name: &str,
    call_id: &CallId,
) -> Result<String, ToolCallError> {
    match outcome {
        JsonOutcome::Ran { text, .. } => Ok(text),
        JsonOutcome::ReplyToModel {
            message,
            interceptor,
        } => Err(reply_as_block(tool_name, call_id, interceptor, message)),
    }
}

/// A handle on a tool found by name, called with JSON.
#[must_use = "a DynToolHandle does nothing until `.invoke_json(..)`"]
pub struct DynToolHandle<'a> {
    app: &'a App,
    entry: &'a ToolEntry,
    tenant: Option<TenantContext>,
    call_id: Option<CallId>,
}

impl DynToolHandle<'_> {
    /// The tool's registration data.
    pub fn meta(&self) -> &'static ToolMeta {
        self.entry.bound.meta
    }
    /// Runs the call for a tenant.
    pub fn tenant(mut self, tenant: impl Into<TenantContext>) -> Self {
        self.tenant = Some(tenant.into());
        self
    }
    /// Sets the call id.
    pub fn call_id(mut self, call_id: &str) -> Self {
        self.call_id = Some(CallId::new(call_id));
        self
    }
    fn env(&self) -> CallEnv<'_> {
        CallEnv {
            services: &self.app.inner.services,
            tenant: self.tenant.as_ref(),
            call_id: self.call_id.clone().unwrap_or_else(CallId::generate),
        }
    }
    /// Invokes with JSON text (see [`ToolHandle::invoke_json`]).
    pub async fn invoke_json(&self, args: &str) -> Result<String, ToolCallError> {
        let env = self.env();
        let call_id = env.call_id.clone();
        direct_text(
            self.entry.bound.call_with(env, args).await?,
            self.entry.bound.meta.name,
            &call_id,
        )
    }
    /// Runs the call, reporting `reply_to_model` as an outcome.
    pub async fn call(&self, args: &str) -> Result<JsonOutcome, ToolCallError> {
        self.entry.bound.call_with(self.env(), args).await
    }
}

/// Decodes a DTO for a tool's input from JSON, as the pipeline does (used by test helpers).
#[doc(hidden)]
pub fn decode_input<T: Tool>(args: &Value) -> Result<T::Input, ToolCallError> {
    <T::Input as Dto>::from_json_value(args).map_err(|source| ToolCallError::InvalidInput {
        tool_name: T::META.name.to_string(),
        source,
    })
}
