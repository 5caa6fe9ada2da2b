//! Layer 6, the app: [`App`] (built once by [`AppBuilder`], cheap to clone), the typed and
//! by-name handles of its tools, its decorated callbacks, and its runs
//! ([`App::execute`], [`App::stream`]).
//!
//! Uses every layer below: [`crate::engine`], [`crate::callback`], [`crate::cascade`],
//! [`crate::pipeline`], [`crate::contract`].
mod builder;
mod handle;
mod runs;
mod threads;
mod tickets;

use std::any::TypeId;
use std::fmt;
use std::sync::Arc;

pub use builder::AppBuilder;
pub use handle::{DynToolHandle, ToolHandle};
pub use runs::{RunFollow, RunUpdate, Runs};
pub use threads::Threads;
pub use tickets::{INPUT_HIDDEN, Tickets, invalid_edit};

use crate::callback::stack::{RunLayers, ToolCallListenerSet, agent_stack, stack};
use crate::callback::{BoundToolCallback, SharedToolCallback};
use crate::cascade::{BoundTool, BuildWarning, ResolvedAgent, ResolvedRouter, ResolvedWorkflow};
use crate::contract::agent::Agent;
use crate::contract::tool::{Tool, ToolMeta};
use crate::contract::workflow::Workflow;
use crate::di::Services;
use crate::engine::in_doubt::resolve_in_doubt;
use crate::engine::{
    Decision, InDoubtResolution, RunContext, RunError, RunOutput, RunState, RunStream, Runtime,
    Target,
};
use crate::engine::{direct, ticket};
use crate::model::SharedChatModel;
use crate::pipeline::Chain;
use crate::store::{RunStore as _, SharedStore, StoreError, Ticket, TicketStore as _};

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

    /// Serves the app's tools over MCP (feature `mcp`): their direct chains, or
    /// [`McpServe::agent`](crate::mcp::server::McpServe::agent)'s path; every inbound
    /// `tools/call` runs the whole guarded pipeline. See [`crate::mcp::server`].
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
    /// let server = app.serve_mcp().tenant("acme").handler().unwrap();
    /// assert_eq!(server.tool_names().collect::<Vec<_>>(), ["echo-tool"]);
    /// ```
    #[cfg(feature = "mcp")]
    pub fn serve_mcp(&self) -> crate::mcp::server::McpServe {
        let app = self.clone();
        crate::mcp::server::McpServe::new(self.name(), move |agent| match agent {
            None => Some((app.callbacks(), app.bound_tools().cloned().collect())),
            Some(name) => {
                let agent = app.agent_by_name(name)?;
                Some((app.agent_callbacks(agent), agent.tools.clone()))
            }
        })
    }

    /// Renders the resolved structure: every path, every tool's chain in order, where each
    /// interceptor came from and where one was excluded.
    pub fn describe(&self) -> String {
        crate::cascade::describe(&self.inner.resolved)
    }

    /// Runs `target` on `input` to its final answer. See [`crate::engine`] for the loop.
    pub async fn execute(
        &self,
        target: impl Into<Target>,
        input: impl Into<String>,
        ctx: RunContext,
    ) -> Result<RunOutput, RunError> {
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

    /// Takes up an unfinished run of `ctx`'s tenant from its journal, on this instance: its
    /// target, input and thread are read from the store; completed steps are read back, not
    /// done again. Refused while another instance holds the run's unexpired lease
    /// ([`StoreError::LeaseHeld`]), and for a finished run ([`StoreError::RunFinished`]). A run
    /// whose journal or thread history cannot be read fails with [`RunError::Store`] of a
    /// permanent error (`Corrupt`, `UnknownFormat`, `Schema`) and is finished as failed.
    /// A run of a workflow with a custom flow is resumed with [`App::execute`] and the same
    /// target, input and run id.
    pub async fn resume_run(&self, run_id: &str, ctx: RunContext) -> Result<RunOutput, RunError> {
        let store = self.store().ok_or(StoreError::NotConfigured)?;
        let record = store
            .run(ctx.tenant_id().unwrap_or_default(), run_id)
            .await?;
        let mut ctx = ctx.run_id(run_id);
        ctx.thread = record.thread_id;
        self.execute(Target::named(record.target), record.input, ctx)
            .await
    }

    /// [`App::resume_run`], waiting for another worker's lease to expire: while the run is
    /// leased ([`StoreError::LeaseHeld`], which says until when), it sleeps until that expiry
    /// (not polling) and tries again; it gives up with that `LeaseHeld` once the lease would
    /// outlast `deadline`. What a caller does after a crash, when the dead worker's lease
    /// (30 s by default) still holds. Every other result is [`App::resume_run`]'s.
    ///
    /// ```no_run
    /// # async fn f(app: agboss_core::App) -> Result<(), agboss_core::RunError> {
    /// use std::time::{Duration, Instant};
    /// use agboss_core::RunContext;
    /// let deadline = Instant::now() + Duration::from_secs(60);
    /// let output = app
    ///     .resume_run_when_free("run_1", RunContext::new().tenant("acme"), deadline)
    ///     .await?;
    /// # let _ = output; Ok(()) }
    /// ```
    pub async fn resume_run_when_free(
        &self,
        run_id: &str,
        ctx: RunContext,
        deadline: std::time::Instant,
    ) -> Result<RunOutput, RunError> {
        loop {
            let held = match self.resume_run(run_id, ctx.clone()).await {
                Err(RunError::Store(StoreError::LeaseHeld { expires_at_ms, .. })) => expires_at_ms,
                other => return other,
            };
            let wait = u64::try_from(held.saturating_sub(crate::store::types::now_ms()))
                .unwrap_or(0)
                // The store's clock may be a little ahead of ours: try just after the expiry.
                .saturating_add(5);
            let wake = std::time::Instant::now() + std::time::Duration::from_millis(wait);
            if wake > deadline {
                return Err(StoreError::LeaseHeld {
                    run_id: run_id.to_string(),
                    expires_at_ms: held,
                }
                .into());
            }
            tokio::time::sleep_until(wake.into()).await;
        }
    }

    /// Takes over up to `limit` unfinished runs whose lease expired or was given back (their
    /// worker crashed, or stopped on a store failure), across tenants, oldest first, and
    /// resumes each one on this instance under its own tenant: the loop a standby worker runs.
    /// Returns each run's id with its result; a run another instance took first is reported
    /// with [`StoreError::LeaseHeld`].
    ///
    /// A run paused for approval is not a crashed run: it is skipped while one of its tickets
    /// is pending and before its expiry, so paused runs never starve a takeover. Once the
    /// ticket is decided, or its expiry passed, the run is taken over like any other: this
    /// loop is also the sweeper of expired tickets. A resumed run moves its expired ticket to
    /// [`TicketState::Expired`](crate::store::TicketState::Expired) and gives the call its
    /// channel's expiry outcome (an error observation for the model, and the agent goes on;
    /// a failed step in a workflow); a direct call's run
    /// ([`ToolHandle::invoke`](crate::ToolHandle::invoke)) ends failed with a
    /// [`ToolBlockedError`](crate::contract::outcome::ToolBlockedError), its result here. The call never
    /// runs, and the run's thread is free again.
    ///
    /// A run whose journal or history cannot be read (a damaged row:
    /// [`StoreError::is_permanent`]) is reported with that error and finished as failed, so no
    /// later takeover picks it up again and its thread is free.
    pub async fn take_over_runs(
        &self,
        limit: usize,
    ) -> Result<Vec<(String, Result<RunOutput, RunError>)>, RunError> {
        let store = self.store().ok_or(StoreError::NotConfigured)?;
        let mut results = Vec::new();
        for record in store.resumable_runs(limit).await? {
            let direct = direct::take_over_direct(&self.inner, &record.tenant, &record.run_id);
            match direct.await {
                Ok(None) => {}
                // Still the caller's to decide.
                Ok(Some(Ok(()))) => continue,
                Ok(Some(Err(e))) | Err(e) => {
                    results.push((record.run_id, Err(e)));
                    continue;
                }
            }
            let mut ctx = RunContext::new();
            if !record.tenant.is_empty() {
                ctx = ctx.tenant(record.tenant.as_str());
            }
            let result = self.resume_run(&record.run_id, ctx).await;
            results.push((record.run_id, result));
        }
        Ok(results)
    }

    /// Records a human decision on one of `tenant`'s tickets: the approver must be authorized
    /// by the ticket's channel, the ticket pending and not expired; a ticket is decided once
    /// ([`StoreError::TicketState`] after that). Once the approver is authorized, an edit's
    /// input is decoded and validated against the tool's input DTO: an invalid one is refused
    /// with [`RunError::Step`] of a
    /// [`ToolCallErrorKind::InvalidInput`](crate::error::ToolCallErrorKind::InvalidInput)
    /// (its field errors: [`invalid_edit`]), nothing is recorded and the ticket stays pending.
    /// Resume the run afterwards with [`App::resume_ticket`] or [`App::resume_run`].
    /// Every decision path ([`App::tickets`], [`App::resume`], the console) passes here.
    pub async fn decide(&self, tenant: &str, decision: Decision) -> Result<Ticket, RunError> {
        ticket::decide(&self.inner, tenant, decision).await
    }

    /// Resumes the run of one of `ctx`'s tenant's tickets once it is decided (by
    /// [`App::decide`] or [`App::tickets`]): the ticket records its run and thread, so nothing
    /// else is needed. The turn goes on once every ticket of it is decided; with tickets still
    /// pending the run stops again with [`RunError::AwaitingApproval`]. Another tenant's ticket
    /// reads as not found.
    pub async fn resume_ticket(
        &self,
        ticket_id: &str,
        ctx: RunContext,
    ) -> Result<RunOutput, RunError> {
        let store = self.store().ok_or(StoreError::NotConfigured)?;
        let ticket = store
            .ticket(ctx.tenant_id().unwrap_or_default(), ticket_id)
            .await?;
        self.resume_run(&ticket.run_id, ctx).await
    }

    /// Decides and resumes in one call: [`App::decide`], then [`App::resume_ticket`].
    pub async fn decide_and_resume(
        &self,
        decision: Decision,
        ctx: RunContext,
    ) -> Result<RunOutput, RunError> {
        let tenant = ctx.tenant_id().unwrap_or_default().to_string();
        let decided = self.decide(&tenant, decision).await?;
        self.resume_run(&decided.run_id, ctx).await
    }

    /// Decides a ticket of thread `thread_id` (of `ctx`'s tenant) and resumes its run, from any
    /// app instance over the same store: once every ticket of the paused turn is decided the
    /// turn goes on (an approved call runs once, through its whole chain; a rejected one reads
    /// the approver's message; an edited one runs the approver's input through the before chain
    /// again); with tickets still pending it stops again with
    /// [`RunError::AwaitingApproval`]. A ticket of another thread or tenant reads as not found;
    /// a finished run is not resumed.
    ///
    /// The ticket records its thread, so the thread id is only a check here: the variant
    /// without it is [`App::decide_and_resume`] (or [`App::decide`] then
    /// [`App::resume_ticket`]).
    pub async fn resume(
        &self,
        thread_id: &str,
        decision: Decision,
        ctx: RunContext,
    ) -> Result<RunOutput, RunError> {
        let tenant = ctx.tenant_id().unwrap_or_default().to_string();
        let store = self.store().ok_or(StoreError::NotConfigured)?;
        let ticket = store.ticket(&tenant, decision.ticket_id()).await?;
        if ticket.thread_id.as_deref() != Some(thread_id) {
            return Err(StoreError::TicketNotFound {
                ticket_id: ticket.id,
            }
            .into());
        }
        self.decide_and_resume(decision, ctx).await
    }

    /// Settles a call in doubt ([`RunError::InDoubt`]) of `tenant`'s run: the work was done,
    /// with this observation, or it was not, and the call runs again on resume. Then resume
    /// the run with [`App::resume_run`].
    pub async fn resolve_in_doubt(
        &self,
        tenant: &str,
        run_id: &str,
        call_id: &str,
        resolution: InDoubtResolution,
    ) -> Result<(), RunError> {
        let durability = self.inner.store.as_ref().ok_or(StoreError::NotConfigured)?;
        resolve_in_doubt(durability, tenant, run_id, call_id, resolution).await
    }

    /// Tool `T` on its direct chain.
    fn bound<T: Tool>(&self) -> Option<&BoundTool> {
        let idx = *self.inner.resolved.by_type.get(&TypeId::of::<T>())?;
        Some(&self.inner.resolved.tools[idx])
    }
}
