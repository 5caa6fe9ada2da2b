//! Layer 6, the app: [`App`] (built once by [`AppBuilder`], cheap to clone), the typed and
//! by-name handles of its tools, its decorated callbacks, and its runs
//! ([`App::execute`], [`App::stream`]).
//!
//! Uses every layer below: [`crate::engine`], [`crate::callback`], [`crate::cascade`],
//! [`crate::pipeline`], [`crate::contract`].
#[cfg(feature = "mcp")]
mod accounts;
mod builder;
mod handle;
mod resume;
mod runs;
#[cfg(feature = "mcp")]
mod serve;
mod threads;
mod tickets;

use std::any::TypeId;
use std::fmt;
use std::sync::Arc;

pub use builder::AppBuilder;
pub use handle::{DynToolHandle, ToolHandle};
pub use runs::{RunFollow, RunUpdate, Runs};
pub use threads::Threads;
pub use tickets::{INPUT_HIDDEN, Tickets};

use crate::callback::stack::{RunLayers, ToolCallListenerSet, agent_stack, stack};
use crate::callback::{BoundToolCallback, SharedToolCallback};
use crate::cascade::{BoundTool, BuildWarning, ResolvedAgent, ResolvedRouter, ResolvedWorkflow};
use crate::contract::agent::Agent;
use crate::contract::tool::{Tool, ToolMeta};
use crate::contract::workflow::Workflow;
use crate::di::Services;
use crate::engine::{RunContext, RunFailed, RunOutput, RunState, RunStream, Runtime, Target};
use crate::model::SharedChatModel;
use crate::pipeline::Chain;
use crate::store::SharedStore;

/// A built application: services constructed, every chain resolved. Cheap to clone.
#[derive(Clone)]
pub struct App {
    inner: Arc<Runtime>,
}

impl fmt::Debug for App {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("App")
            .field("name", &self.inner.resolved.name)
            .field(
                "tools",
                &self
                    .inner
                    .resolved
                    .tools
                    .iter()
                    .map(|t| &*t.meta().name)
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl App {
    /// Starts an app builder.
    pub fn builder() -> AppBuilder {
        AppBuilder::new()
    }

    /// The app's name.
    pub fn name(&self) -> &'static str {
        self.inner.resolved.name
    }

    /// A handle to call tool `T` directly, through its application → tool chain.
    pub fn tool<T: Tool>(&self) -> ToolHandle<'_, T> {
        ToolHandle::new(self)
    }

    /// A handle to call a tool by its registered name with JSON arguments (direct chain).
    pub fn tool_by_name(&self, name: &str) -> Option<DynToolHandle<'_>> {
        let idx = *self.inner.resolved.by_name.get(name)?;
        Some(DynToolHandle::new(self, &self.inner.resolved.tools[idx]))
    }

    /// The tools of the app.
    pub fn tools(&self) -> impl Iterator<Item = &ToolMeta> + '_ {
        self.inner.resolved.tools.iter().map(BoundTool::meta)
    }

    /// The resolved direct-invoke chain of tool `T`.
    pub fn direct_chain<T: Tool>(&self) -> Option<&Chain> {
        self.bound::<T>().map(BoundTool::chain)
    }

    /// The app's services.
    pub fn services(&self) -> &Services {
        &self.inner.resolved.services
    }

    /// Every agent on every path (an agent under two workflows appears twice).
    pub fn agents(&self) -> impl Iterator<Item = &Arc<ResolvedAgent>> {
        self.inner.resolved.agents.iter()
    }

    /// Agent `A` by type: its path directly under the application if it has one, else its first
    /// path under a workflow.
    pub fn agent<A: Agent>(&self) -> Option<&Arc<ResolvedAgent>> {
        self.agent_by_name(A::META.name)
    }

    /// An agent by name (same preference as [`App::agent`]).
    pub fn agent_by_name(&self, name: &str) -> Option<&Arc<ResolvedAgent>> {
        self.inner.agent_by_name(name)
    }

    /// Agent `A` on its path under workflow `W`.
    pub fn agent_in<W: Workflow, A: Agent>(&self) -> Option<&Arc<ResolvedAgent>> {
        self.agents()
            .find(|a| a.meta.name == A::META.name && a.workflow() == Some(W::META.name))
    }

    /// Every router on every path.
    pub fn routers(&self) -> impl Iterator<Item = &Arc<ResolvedRouter>> {
        self.inner.resolved.routers.iter()
    }

    /// A router by name (its first path).
    pub fn router_by_name(&self, name: &str) -> Option<&Arc<ResolvedRouter>> {
        self.inner.router_by_name(name)
    }

    /// The workflows.
    pub fn workflows(&self) -> impl Iterator<Item = &Arc<ResolvedWorkflow>> {
        self.inner.resolved.workflows.iter()
    }

    /// A workflow by name.
    pub fn workflow_by_name(&self, name: &str) -> Option<&Arc<ResolvedWorkflow>> {
        self.inner.workflow_by_name(name)
    }

    /// The chat model of an agent or router: its own if one was set, else the default.
    pub fn model_for(&self, agent_or_router_name: &str) -> Option<&SharedChatModel> {
        self.inner.model_for(agent_or_router_name)
    }

    /// What the build found suspicious (see [`BuildWarning`]).
    pub fn warnings(&self) -> &[BuildWarning] {
        &self.inner.resolved.warnings
    }

    /// The tool-call listeners of the app (see [`crate::callback::listener`]).
    pub fn tool_call_listeners(&self) -> &ToolCallListenerSet {
        &self.inner.listeners
    }

    /// Every tool of the app, bound on its direct (application → tool) chain.
    pub fn bound_tools(&self) -> impl Iterator<Item = &BoundTool> {
        self.inner.resolved.tools.iter()
    }

    /// The tools of `agent` as callbacks, decorated with the app's and the agent's listeners:
    /// what an agent loop calls (see [`crate::callback`]).
    pub fn agent_callbacks(&self, agent: &ResolvedAgent) -> Vec<SharedToolCallback> {
        agent_stack(
            &self.inner.listeners,
            agent,
            self.inner.base_callbacks(agent),
            &RunLayers::default(),
        )
    }

    /// Every tool of the app on its direct (application → tool) chain as a callback, decorated
    /// with the app-wide listeners.
    pub fn callbacks(&self) -> Vec<SharedToolCallback> {
        let base = self.bound_tools().map(BoundToolCallback::shared).collect();
        stack(
            &self.inner.listeners,
            None,
            &[],
            base,
            &RunLayers::default(),
        )
    }

    /// Serves the app's tools over MCP (feature `mcp`), on the path chosen next: one agent's
    /// ([`McpServePath::agent`](crate::mcp::server::McpServePath::agent)) or the direct chains
    /// ([`McpServePath::direct_chains`](crate::mcp::server::McpServePath::direct_chains)); every
    /// inbound `tools/call` runs that path's whole guarded pipeline. See [`crate::mcp::server`].
    ///
    /// ```
    /// # use agboss_core::{tool, App, ToolError, ToolHandler};
    /// # use agboss_core::dto::Dto;
    /// # #[derive(Dto, Debug, Clone, PartialEq)]
    /// # pub struct EchoDto { #[text(prompt = "Text")] pub text: String }
    /// # #[tool(name = "echo-tool", description = "Echoes", input = EchoDto, output = EchoDto)]
    /// # pub struct EchoTool;
    /// # impl ToolHandler<EchoDto, EchoDto> for EchoTool {
    /// #     async fn run(&self, input: EchoDto) -> Result<EchoDto, ToolError> { Ok(input) }
    /// # }
    /// let app = App::builder().tool::<EchoTool>().build().unwrap();
    /// let server = app.serve_mcp().direct_chains().tenant("acme").handler().unwrap();
    /// assert_eq!(server.tool_names().collect::<Vec<_>>(), ["echo-tool"]);
    /// ```
    #[cfg(feature = "mcp")]
    pub fn serve_mcp(&self) -> crate::mcp::server::McpServePath {
        let app = self.clone();
        crate::mcp::server::McpServePath::new(self.name(), move |path| {
            serve::served_set(&app, path)
        })
    }

    /// Renders the resolved structure: every path, every tool's chain in order, where each
    /// interceptor came from and where one was excluded.
    pub fn describe(&self) -> String {
        crate::cascade::describe(&self.inner.resolved)
    }

    /// Runs `target` on `input` to its final answer. See [`crate::engine`] for the loop. A run
    /// that stops is a [`RunFailed`]: its run id and its [`RunError`](crate::RunError).
    pub async fn execute(
        &self,
        target: impl Into<Target>,
        input: impl Into<String>,
        ctx: RunContext,
    ) -> Result<RunOutput, RunFailed> {
        let target = target.into();
        let state = RunState::new(
            Arc::clone(&self.inner),
            ctx,
            None,
            target.name().to_string(),
        );
        crate::engine::run::run(state, target, input.into()).await
    }

    /// Like [`App::execute`], yielding the run's [`RunEvent`](crate::RunEvent)s as they happen.
    /// The run makes progress only while the stream is polled.
    pub fn stream(
        &self,
        target: impl Into<Target>,
        input: impl Into<String>,
        ctx: RunContext,
    ) -> RunStream {
        RunStream::start(Arc::clone(&self.inner), target.into(), input.into(), ctx)
    }

    /// The app's thread store, if it has one ([`AppBuilder::store`]).
    pub fn store(&self) -> Option<&SharedStore> {
        self.inner.store.as_ref().map(|d| &d.store)
    }

    /// `tenant`'s conversation threads (`""` for runs without tenant).
    pub fn threads(&self, tenant: impl Into<String>) -> Threads<'_> {
        Threads::new(self.store(), tenant.into())
    }

    /// `tenant`'s runs: read one with its journal and tickets, or follow one live as it is
    /// journaled, from any instance on the same store ([`Runs::follow`]).
    pub fn runs(&self, tenant: impl Into<String>) -> Runs<'_> {
        Runs::new(self.store(), tenant.into())
    }

    /// `tenant`'s approval tickets: list (pending first, filtered, paged), get, decide
    /// (`approve` / `reject` / `edit`), and what an inbox shows of each (the masked input, the
    /// input schema an edit form is built from). See [`Tickets`].
    pub fn tickets(&self, tenant: impl Into<String>) -> Tickets<'_> {
        Tickets::new(self, tenant.into())
    }

    /// Tool `T` on its direct chain.
    fn bound<T: Tool>(&self) -> Option<&BoundTool> {
        let idx = *self.inner.resolved.by_type.get(&TypeId::of::<T>())?;
        Some(&self.inner.resolved.tools[idx])
    }
}
