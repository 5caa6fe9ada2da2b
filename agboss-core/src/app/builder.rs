//! [`AppBuilder`]: the one builder that owns every setting of an app.
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::App;
use crate::callback::listener::ToolCallListener;
use crate::callback::stack::ToolCallListenerSet;
use crate::cascade::{Blueprint, RemoteServer, RemoteServers};
use crate::contract::agent::{Agent, Router};
use crate::contract::guardrail::{
    InputGuardrailComponent, OutputGuardrailComponent, OutputStreaming,
};
use crate::contract::interceptor::ToolInterceptor;
use crate::contract::pii_policy::PiiPolicy;
use crate::contract::tool::{Tool, ToolMeta};
use crate::contract::workflow::{Application, Workflow};
use crate::di::BuildError;
use crate::di::Injectable;
use crate::engine::{Durability, Runtime};
use crate::model::{ChatModel, SharedChatModel};
use crate::store::types::random_id;
use crate::store::{DEFAULT_LEASE_TTL, SharedStore, Store};

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
    bp: Blueprint,
    model: Option<SharedChatModel>,
    agent_models: HashMap<&'static str, SharedChatModel>,
    listeners: ToolCallListenerSet,
    store: Option<SharedStore>,
    worker: Option<String>,
    lease_ttl: Duration,
    output_streaming: OutputStreaming,
    usage_limits: crate::engine::UsageLimits,
    tenant_usage_limits: Vec<crate::engine::TenantUsageLimits>,
    prices: crate::engine::PriceTable,
    remote: Vec<Arc<dyn RemoteServer>>,
}

impl fmt::Debug for AppBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AppBuilder")
            .field("name", &self.bp.name)
            .field("listeners", &self.listeners)
            .finish_non_exhaustive()
    }
}

impl AppBuilder {
    pub(super) fn new() -> Self {
        Self {
            bp: Blueprint {
                // Agents as tools: the engine's tool type (the cascade sits below it).
                agent_tool: Some(crate::engine::agent_tool::meta),
                ..Blueprint::new()
            },
            model: None,
            agent_models: HashMap::new(),
            listeners: ToolCallListenerSet::default(),
            store: None,
            worker: None,
            lease_ttl: DEFAULT_LEASE_TTL,
            output_streaming: OutputStreaming::default(),
            usage_limits: crate::engine::UsageLimits::default(),
            tenant_usage_limits: Vec::new(),
            prices: crate::engine::PriceTable::default(),
            remote: Vec::new(),
        }
    }
    /// Builds the app of an `#[application]`: its name, interceptors, workflows, agents,
    /// routers and tools.
    pub fn application<A: Application>(mut self) -> Self {
        let meta = A::META;
        self.bp.name = meta.name;
        self.bp.application = Some(meta);
        self.bp.attach.extend_from_slice(meta.tool_interceptors);
        self.bp.pii_policies.extend_from_slice(meta.pii_policies);
        self.bp
            .input_guardrails
            .extend_from_slice(meta.guardrails.input);
        self.bp
            .output_guardrails
            .extend_from_slice(meta.guardrails.output);
        self.bp.mask_answer |= meta.guardrails.mask_answer;
        self.bp.workflows.extend_from_slice(meta.workflows);
        self.bp.agents.extend_from_slice(meta.agents);
        self.bp.routers.extend_from_slice(meta.routers);
        self.bp.tools.extend_from_slice(meta.tools);
        self.bp.max_result_size = meta.max_result_size;
        self
    }
    /// Names the app (the application scope in chains and errors).
    pub fn name(mut self, name: &'static str) -> Self {
        self.bp.name = name;
        self
    }
    /// Attaches an interceptor at application level (outermost).
    pub fn tool_interceptor<I: ToolInterceptor>(mut self) -> Self {
        self.bp.attach.push(I::META);
        self
    }
    /// Adds a tool (its tool-level interceptors come with it), callable directly.
    pub fn tool<T: Tool>(mut self) -> Self {
        self.bp.tools.push(T::META);
        self
    }
    /// Adds a tool by its registration data.
    pub fn tool_meta(mut self, meta: &'static ToolMeta) -> Self {
        self.bp.tools.push(meta);
        self
    }
    /// Adds an agent directly under the application.
    pub fn agent<A: Agent>(mut self) -> Self {
        self.bp.agents.push(A::META);
        self
    }
    /// Adds a router directly under the application.
    pub fn router<R: Router>(mut self) -> Self {
        self.bp.routers.push(R::META);
        self
    }
    /// Adds a workflow.
    pub fn workflow<W: Workflow>(mut self) -> Self {
        self.bp.workflows.push(W::META);
        self
    }
    /// Application-wide default `max_result_size`.
    pub fn max_result_size(mut self, bytes: usize) -> Self {
        self.bp.max_result_size = Some(bytes);
        self
    }
    /// Provides a service instance (required for `#[injectable(provided)]`, and replaces the
    /// default construction of any other service: the way to plug in a fake in tests).
    pub fn provide<S: Injectable>(mut self, service: S) -> Self {
        self.bp.services.insert(Arc::new(service));
        self
    }
    /// Like [`AppBuilder::provide`], with a shared instance.
    pub fn provide_arc<S: Injectable>(mut self, service: Arc<S>) -> Self {
        self.bp.services.insert(service);
        self
    }
    /// The default chat model of every agent and router.
    pub fn model(mut self, model: impl ChatModel + 'static) -> Self {
        self.model = Some(Arc::new(model));
        self
    }
    /// The default chat model, already shared.
    pub fn shared_model(mut self, model: SharedChatModel) -> Self {
        self.model = Some(model);
        self
    }
    /// A chat model for one agent (or router), overriding the default.
    pub fn agent_model(
        mut self,
        agent_or_router_name: &'static str,
        model: SharedChatModel,
    ) -> Self {
        self.agent_models.insert(agent_or_router_name, model);
        self
    }
    /// Makes every [`BuildWarning`](crate::cascade::BuildWarning) a build error.
    pub fn deny_warnings(mut self) -> Self {
        self.bp.deny_warnings = true;
        self
    }

    /// Attaches a PII policy at application level (outermost).
    pub fn pii_policy<P: PiiPolicy>(mut self) -> Self {
        self.bp.pii_policies.push(P::META);
        self
    }
    /// The time limit of the hooks of every interceptor that sets none itself
    /// (`#[tool_interceptor(timeout_ms = ..)]`). Default
    /// [`DEFAULT_HOOK_TIMEOUT`](crate::contract::interceptor::DEFAULT_HOOK_TIMEOUT) (10 s). A
    /// hook that runs past it fails the call closed, like an interceptor that errors.
    pub fn interceptor_timeout(mut self, limit: Duration) -> Self {
        self.bp.hook_timeout = limit;
        self
    }
    /// Attaches an input guardrail at application level (outermost): it checks the input of
    /// every agent and router before its model is called.
    ///
    /// ```
    /// # use agboss_core::{App, contract::guardrail::GuardrailContext, GuardrailError, contract::guardrail::GuardrailVerdict, contract::guardrail::InputGuardrail, input_guardrail};
    /// #[input_guardrail(name = "length-input-guardrail", description = "Refuses huge inputs")]
    /// pub struct LengthInputGuardrail;
    /// impl InputGuardrail for LengthInputGuardrail {
    ///     async fn check_input(&self, input: &GuardrailContext<'_>) -> Result<GuardrailVerdict, GuardrailError> {
    ///         Ok(if input.text().len() > 10_000 { GuardrailVerdict::block("too long") } else { GuardrailVerdict::pass() })
    ///     }
    /// }
    /// let app = App::builder().input_guardrail::<LengthInputGuardrail>().build().unwrap();
    /// assert!(app.describe().contains("input guardrails: length-input-guardrail"));
    /// ```
    pub fn input_guardrail<G: InputGuardrailComponent>(mut self) -> Self {
        self.bp.input_guardrails.push(G::META);
        self
    }
    /// Attaches an output guardrail at application level (outermost): it checks the answer of
    /// every agent before the caller reads it.
    pub fn output_guardrail<G: OutputGuardrailComponent>(mut self) -> Self {
        self.bp.output_guardrails.push(G::META);
        self
    }
    /// Masks every final answer with the path's PII policies (after its output guardrails),
    /// like `mask_answer` on `#[application]`.
    pub fn mask_answer(mut self) -> Self {
        self.bp.mask_answer = true;
        self
    }
    /// The time limit of every guardrail check that sets none itself (`timeout_ms`). Default
    /// [`DEFAULT_GUARDRAIL_TIMEOUT`](crate::contract::guardrail::DEFAULT_GUARDRAIL_TIMEOUT)
    /// (10 s). A check that runs past it fails the step closed.
    pub fn guardrail_timeout(mut self, limit: Duration) -> Self {
        self.bp.guardrail_timeout = limit;
        self
    }
    /// How streamed answers of paths with output guardrails reach the caller (default
    /// [`OutputStreaming::Hold`]); a run can override it with
    /// [`RunContext::output_streaming`](crate::RunContext::output_streaming).
    pub fn output_streaming(mut self, mode: OutputStreaming) -> Self {
        self.output_streaming = mode;
        self
    }
    /// Usage limits of every run of the app (model requests, tokens, tool calls in all and per
    /// tool), reserved before each call; a run's own
    /// ([`RunContext::usage_limits`](crate::RunContext::usage_limits)) can only tighten them
    /// (strictest wins). See [`UsageLimits`](crate::engine::UsageLimits).
    pub fn usage_limits(mut self, limits: crate::engine::UsageLimits) -> Self {
        self.usage_limits = limits;
        self
    }
    /// Adds usage limits of each tenant over a time window
    /// ([`UsageLimits::per_tenant`](crate::engine::UsageLimits::per_tenant)), counted across
    /// the tenant's runs in the app's store (a store is required: the build fails without one),
    /// so they hold across every app instance over that store. Call it once per window (an
    /// hourly and a daily one, say); every window applies, with the run's limits.
    ///
    /// ```
    /// use std::time::Duration;
    /// use agboss_core::prelude::*;
    /// use agboss_core::engine::UsageLimits;
    /// use agboss_core::store::MemoryStore;
    ///
    /// let app = App::builder()
    ///     .store(MemoryStore::new())
    ///     .tenant_usage_limits(UsageLimits::new().tool_calls(100).per_tenant(Duration::from_secs(60)))
    ///     .tenant_usage_limits(UsageLimits::new().model_requests(5_000).per_tenant(Duration::from_secs(86_400)))
    ///     .build()
    ///     .unwrap();
    /// # let _ = app;
    /// assert!(App::builder()
    ///     .tenant_usage_limits(UsageLimits::new().tool_calls(1).per_tenant(Duration::from_secs(60)))
    ///     .build()
    ///     .is_err()); // no store to keep the windows in
    /// ```
    pub fn tenant_usage_limits(mut self, limits: crate::engine::TenantUsageLimits) -> Self {
        self.tenant_usage_limits.push(limits);
        self
    }
    /// What each model's tokens cost, by model name: what a cost bound
    /// ([`UsageLimits::cost_micros`](crate::engine::UsageLimits::cost_micros)) counts with.
    pub fn prices(mut self, prices: crate::engine::PriceTable) -> Self {
        self.prices = prices;
        self
    }
    /// Adds a listener of every tool call the app's agents make through
    /// [`App::agent_callbacks`] / [`App::callbacks`] (and every workflow tool step).
    pub fn tool_call_listener<L: ToolCallListener>(mut self, listener: L) -> Self {
        self.listeners.add(listener);
        self
    }
    /// Adds a listener of the tool calls of one agent (on every path it is on).
    pub fn agent_tool_call_listener<L: ToolCallListener>(
        mut self,
        agent_name: &'static str,
        listener: L,
    ) -> Self {
        self.listeners.add_for_agent(agent_name, listener);
        self
    }

    /// Keeps threads and run journals in `store` (see [`crate::store`]): every run is then
    /// journaled step by step and resumable from any app instance over the same store, and
    /// [`RunContext::thread`](crate::RunContext::thread) continues a conversation. Without a
    /// store, runs live in memory only and threads are refused.
    ///
    /// ```
    /// use agboss_core::App;
    /// use agboss_core::store::MemoryStore;
    /// let app = App::builder().store(MemoryStore::new()).build().unwrap();
    /// assert!(app.store().is_some());
    /// ```
    pub fn store(mut self, store: impl Store) -> Self {
        self.store = Some(SharedStore::new(store));
        self
    }
    /// This app instance's worker id, the holder of the leases of the runs it executes
    /// (default: a random id per build). Two instances must not share one.
    pub fn worker_id(mut self, worker: impl Into<String>) -> Self {
        self.worker = Some(worker.into());
        self
    }
    /// How long a run's lease lasts without renewal (default
    /// [`DEFAULT_LEASE_TTL`](crate::store::DEFAULT_LEASE_TTL), 30 s): a running run renews it
    /// every third of it; another instance may take over a run whose lease expired.
    pub fn lease_ttl(mut self, ttl: Duration) -> Self {
        self.lease_ttl = ttl.max(Duration::from_millis(30));
        self
    }

    /// A connected MCP server (an `McpServer`, feature `mcp`) the app's `#[mcp_tool]`s and
    /// `mcp_servers = [..]` name. At build, every `#[mcp_tool]` of the app must find its remote
    /// tool on its server, with an input schema its DTO fits; a server named but not given is a
    /// build error naming it.
    ///
    #[cfg_attr(feature = "mcp", doc = "```no_run")]
    #[cfg_attr(not(feature = "mcp"), doc = "```ignore")]
    /// use agboss_core::App;
    /// use agboss_core::mcp::client::{McpServer, McpServerConfig};
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// let everything = McpServer::connect(
    ///     McpServerConfig::stdio("everything", "npx").args(["-y", "@modelcontextprotocol/server-everything", "stdio"]),
    /// )
    /// .await?;
    /// let app = App::builder().mcp_server(everything).mcp_server_tools("everything").build()?;
    /// assert!(app.tool_by_name("everything__echo").is_some());
    /// # Ok(()) }
    /// ```
    pub fn mcp_server(mut self, server: impl RemoteServer) -> Self {
        self.remote.push(Arc::new(server));
        self
    }

    /// Every tool of the MCP server `name` as a tool of the application (callable directly,
    /// on the application's chain), named `<server>__<remote>`
    /// (see `agboss_core::mcp::client::server_tool_name`). The same as
    /// `#[application(mcp_servers = ["name"])]`.
    pub fn mcp_server_tools(mut self, name: &'static str) -> Self {
        self.bp.mcp_server_tools.push(name);
        self
    }

    /// Checks names, builds services, resolves every chain of every path.
    pub fn build(mut self) -> Result<App, BuildError> {
        #[cfg(feature = "mcp")]
        let mut accounts = None;
        if !self.remote.is_empty() {
            let servers = Arc::new(RemoteServers::new(std::mem::take(&mut self.remote))?);
            #[cfg(feature = "mcp")]
            {
                let has_store = self.store.is_some();
                accounts = Some(super::accounts::prepare(&mut self.bp, &servers, has_store)?);
            }
            self.bp.services.insert(Arc::clone(&servers));
            self.bp.remote = Some(servers);
        }
        self.bp.usage_limits = self.usage_limits.clone();
        let resolved = self.bp.resolve()?;
        #[cfg(feature = "mcp")]
        let account_channels = accounts.iter().flat_map(|a| a.channels.iter().copied());
        #[cfg(not(feature = "mcp"))]
        let account_channels = std::iter::empty();
        // The approval channels of the app's gated tools (and of its account requests),
        // built once.
        let mut channels = HashMap::new();
        let approvals = resolved.tools.iter().filter_map(|t| t.meta().approval);
        for meta in approvals.chain(account_channels) {
            if channels.contains_key(meta.name) {
                continue;
            }
            let channel = (meta.build)(&resolved.services)
                .and_then(crate::pipeline::channel_of)
                .map_err(|e| BuildError::ServiceConstruction {
                    service: meta.type_name,
                    message: e.to_string(),
                })?;
            channels.insert(meta.name, channel);
        }
        let prices = Arc::new(self.prices);
        let tenant_gate = match (&self.store, self.tenant_usage_limits.is_empty()) {
            (_, true) => None,
            (None, false) => {
                return Err(BuildError::Invalid(
                    "tenant usage limits are kept in the app's store: set one with \
                     `AppBuilder::store`"
                        .into(),
                ));
            }
            (Some(store), false) => crate::engine::TenantGate::new(
                self.tenant_usage_limits,
                store.clone(),
                Arc::clone(&prices),
            ),
        };
        let agent_callbacks = (0..resolved.agents.len())
            .map(|_| std::sync::OnceLock::new())
            .collect();
        let inner = Arc::new(Runtime {
            resolved,
            model: self.model,
            agent_models: self.agent_models,
            listeners: self.listeners,
            channels,
            output_streaming: self.output_streaming,
            usage_limits: self.usage_limits,
            prices,
            tenant_gate,
            agent_callbacks,
            store: self.store.map(|store| Durability {
                store,
                worker: self.worker.unwrap_or_else(|| random_id("worker")),
                lease_ttl: self.lease_ttl,
            }),
        });
        #[cfg(feature = "mcp")]
        if let Some(accounts) = &accounts {
            accounts.install(&inner);
        }
        Ok(App { inner })
    }
}
