//! The agent runtime: [`App::execute`] and [`App::stream`] run an agent, a router or a workflow
//! (the [`Target`]) to its final answer, under a [`RunContext`] (tenant, run id, cancellation,
//! limits, a hook to wrap tool callbacks).
//!
//! One engine serves both entry points: `execute` runs it without an event sink, `stream` runs
//! it with one and yields its [`RunEvent`]s, then ends with `RunEvent::Completed(output)` (the
//! value `execute` returns) or with the error `execute` returns.
//!
//! # The tool loop of an agent
//! Each model turn's tool calls go through the agent's tool callbacks (by default its
//! [`BoundTool`](crate::BoundTool)s on their path, each running the whole guarded pipeline):
//!
//! 1. Unknown tool, arguments that are not JSON, arguments that fail the input DTO: the model
//!    gets an error observation saying exactly what was wrong (field paths for the DTO), and the
//!    loop goes on.
//! 2. `before_tool_call` chain → approval hook point → `run` → `after_tool_call` chain → output
//!    re-validation → truncation → observation.
//! 3. `reply_to_model(message)`: the tool does not run; `message` is the call's observation.
//! 4. `block(reason)`: the tool does not run and the step fails at once with
//!    [`ToolBlockedError`](crate::ToolBlockedError) (as a [`StepFailedError`]); sibling calls of
//!    the same turn still in flight are dropped (cancelled). An interceptor that errors or
//!    panics fails the step the same way (fail closed; never a soft observation).
//! 5. A tool's own error (failure, panic, timeout, invalid output) is reported to the model as a
//!    safe observation (generic text and the error class); the full error goes to `tracing` and
//!    to the event stream ([`RunEvent::ToolError`]). With [`ToolErrorPolicy::FailStep`] (on the
//!    agent, or per tool with [`RunContext::tool_error_policy`]) it fails the step instead.
//! 6. The calls of one turn run concurrently, at most `max_parallel_tool_calls` at once (default
//!    [`DEFAULT_MAX_PARALLEL_TOOL_CALLS`]); observations go back in the model's order. At most
//!    `max_turns` model turns (default [`DEFAULT_MAX_TURNS`]), else
//!    [`RunError::MaxTurnsExceeded`]. Per-tool timeouts come from `#[tool(timeout_ms = ..)]`;
//!    [`RunContext::tool_timeout`] bounds every call of a run.
//! 7. `after_tool_call` hooks run only for calls whose tool ran and succeeded: a reply, a block,
//!    a guard failure or a tool error skips them (and their output never reaches the model).
use std::collections::HashMap;
use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::{FutureExt as _, Stream, StreamExt as _};
use tokio::sync::{Notify, mpsc};

use super::events::{CallDecision, RunEvent, StepKind, StepOutcome};
use super::{Agent, Router, ToolErrorPolicy};
use crate::callback::{SharedToolCallback, ToolInvocation, ToolResult};
use crate::cascade::{App, ResolvedAgent, ScopeRef, Workflow};
use crate::di::{CallId, TenantContext};
use crate::error::{StepFailedError, ToolCallError};
use crate::model::{
    Message, ModelError, ModelRequest, ModelResponse, ModelStreamEvent, SharedChatModel,
    ToolCallRequest, Usage,
};
use crate::workflow::{Flow, WorkflowFlow};

/// Model turns an agent may take when it sets no `max_turns`.
pub const DEFAULT_MAX_TURNS: u32 = 10;
/// Tool calls of one turn running at once when the agent sets no `max_parallel_tool_calls`.
pub const DEFAULT_MAX_PARALLEL_TOOL_CALLS: usize = 4;

/// A cancellation handle shared by a run and whoever may stop it. Cloning shares it.
#[derive(Clone, Default)]
pub struct CancelToken {
    inner: Arc<CancelInner>,
}

#[derive(Default)]
struct CancelInner {
    cancelled: AtomicBool,
    notify: Notify,
}

impl fmt::Debug for CancelToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CancelToken")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

impl CancelToken {
    /// A token not cancelled yet.
    pub fn new() -> Self {
        Self::default()
    }
    /// Cancels every run holding this token: model calls and tool calls in flight are dropped and
    /// the run ends with [`RunError::Cancelled`].
    pub fn cancel(&self) {
        self.inner.cancelled.store(true, Ordering::SeqCst);
        self.inner.notify.notify_waiters();
    }
    /// Whether [`CancelToken::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::SeqCst)
    }
    /// Resolves once the token is cancelled.
    pub async fn cancelled(&self) {
        loop {
            let notified = self.inner.notify.notified();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}

/// A transformation of the tool callbacks of a scope, applied before a run uses them (see
/// [`RunContext::wrap_callbacks`]).
pub type CallbackWrapper =
    Arc<dyn Fn(&[ScopeRef], Vec<SharedToolCallback>) -> Vec<SharedToolCallback> + Send + Sync>;

/// The per-run settings: tenant, run id, cancellation, limits, callback wrapping.
///
/// ```
/// use agboss_core::agent::RunContext;
/// let ctx = RunContext::new().tenant("acme").run_id("run-42").max_turns(5);
/// assert_eq!(ctx.tenant_id(), Some("acme"));
/// ```
#[derive(Clone, Default)]
pub struct RunContext {
    pub(crate) tenant: Option<TenantContext>,
    run_id: Option<String>,
    cancel: CancelToken,
    wrap: Option<CallbackWrapper>,
    max_turns: Option<u32>,
    max_parallel: Option<usize>,
    tool_errors: HashMap<String, ToolErrorPolicy>,
    tool_timeout: Option<Duration>,
}

impl fmt::Debug for RunContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunContext")
            .field("tenant", &self.tenant)
            .field("run_id", &self.run_id)
            .field("cancel", &self.cancel)
            .field("wraps_callbacks", &self.wrap.is_some())
            .field("max_turns", &self.max_turns)
            .field("max_parallel", &self.max_parallel)
            .field("tool_errors", &self.tool_errors)
            .field("tool_timeout", &self.tool_timeout)
            .finish()
    }
}

impl RunContext {
    /// A context without tenant, with a generated run id.
    pub fn new() -> Self {
        Self::default()
    }
    /// Runs for a tenant (what `TenantContext` deps of tools and interceptors receive).
    pub fn tenant(mut self, tenant: impl Into<TenantContext>) -> Self {
        self.tenant = Some(tenant.into());
        self
    }
    /// The tenant's id, if any.
    pub fn tenant_id(&self) -> Option<&str> {
        self.tenant.as_ref().map(TenantContext::tenant_id)
    }
    /// Sets the run id (generated otherwise).
    pub fn run_id(mut self, run_id: impl Into<String>) -> Self {
        self.run_id = Some(run_id.into());
        self
    }
    /// Uses this cancellation token (keep a clone to cancel the run).
    pub fn cancel_token(mut self, token: CancelToken) -> Self {
        self.cancel = token;
        self
    }
    /// The run's cancellation token.
    pub fn token(&self) -> &CancelToken {
        &self.cancel
    }
    /// Overrides every agent's `max_turns` for this run.
    pub fn max_turns(mut self, turns: u32) -> Self {
        self.max_turns = Some(turns.max(1));
        self
    }
    /// Overrides every agent's `max_parallel_tool_calls` for this run.
    pub fn max_parallel_tool_calls(mut self, n: usize) -> Self {
        self.max_parallel = Some(n.max(1));
        self
    }
    /// Sets what a tool's own error does for one tool (by name), overriding its agent's policy.
    pub fn tool_error_policy(mut self, tool: impl Into<String>, policy: ToolErrorPolicy) -> Self {
        self.tool_errors.insert(tool.into(), policy);
        self
    }
    /// Bounds every tool call of the run (on top of each tool's own `timeout_ms`). A call that
    /// runs past it fails with `ToolCallError::Timeout`, a tool error.
    pub fn tool_timeout(mut self, timeout: Duration) -> Self {
        self.tool_timeout = Some(timeout);
        self
    }
    /// Transforms the tool callbacks of every agent (and of every workflow tool step) before the
    /// run uses them: the place to decorate tools, e.g. with listeners
    /// (`|scopes, callbacks| listeners.wrap_all(callbacks)`). `scopes` is the path of the agent
    /// (application, workflow?, agent), or of the workflow for a workflow tool step. The loop
    /// calls tools only through these callbacks.
    pub fn wrap_callbacks(
        mut self,
        wrap: impl Fn(&[ScopeRef], Vec<SharedToolCallback>) -> Vec<SharedToolCallback>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        let wrap: CallbackWrapper = match self.wrap.take() {
            // Composes with an earlier wrapper: the earlier one is applied first (innermost).
            Some(previous) => Arc::new(move |scopes, cbs| wrap(scopes, previous(scopes, cbs))),
            None => Arc::new(wrap),
        };
        self.wrap = Some(wrap);
        self
    }
}

/// What to run: an agent, a router or a workflow.
#[derive(Clone)]
pub struct Target(pub(crate) TargetKind);

#[derive(Clone)]
pub(crate) enum TargetKind {
    Agent(String),
    Router(String),
    Workflow { name: String, flow: Arc<Flow> },
    WorkflowDefault(String),
    Named(String),
}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Target({})", self.name())
    }
}

impl Target {
    /// Agent `A` (its path directly under the application if it has one).
    pub fn agent<A: Agent>() -> Self {
        Self(TargetKind::Agent(A::META.name.to_string()))
    }
    /// Router `R`.
    pub fn router<R: Router>() -> Self {
        Self(TargetKind::Router(R::META.name.to_string()))
    }
    /// Workflow `W` with its flow ([`WorkflowFlow::flow`]).
    pub fn workflow<W: WorkflowFlow>() -> Self {
        Self(TargetKind::Workflow {
            name: W::META.name.to_string(),
            flow: Arc::new(W::flow()),
        })
    }
    /// Workflow `W` with an explicit flow.
    pub fn workflow_with<W: Workflow>(flow: Flow) -> Self {
        Self(TargetKind::Workflow {
            name: W::META.name.to_string(),
            flow: Arc::new(flow),
        })
    }
    /// An agent by name.
    pub fn agent_named(name: impl Into<String>) -> Self {
        Self(TargetKind::Agent(name.into()))
    }
    /// A router by name.
    pub fn router_named(name: impl Into<String>) -> Self {
        Self(TargetKind::Router(name.into()))
    }
    /// A workflow by name, run with its default flow: its agents, then its routers, in
    /// declaration order, each one's output the next one's input.
    pub fn workflow_named(name: impl Into<String>) -> Self {
        Self(TargetKind::WorkflowDefault(name.into()))
    }
    /// Any agent, router or workflow by name (looked up in that order).
    pub fn named(name: impl Into<String>) -> Self {
        Self(TargetKind::Named(name.into()))
    }
    /// The target's name.
    pub fn name(&self) -> &str {
        match &self.0 {
            TargetKind::Agent(n)
            | TargetKind::Router(n)
            | TargetKind::WorkflowDefault(n)
            | TargetKind::Named(n)
            | TargetKind::Workflow { name: n, .. } => n,
        }
    }
}

impl From<&str> for Target {
    fn from(name: &str) -> Self {
        Self::named(name)
    }
}

/// The result of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunOutput {
    /// The run id.
    pub run_id: String,
    /// The final answer (of the last step, for a workflow).
    pub text: String,
    /// Tokens used by every model call of the run.
    pub usage: Usage,
    /// Model calls made (routers' included).
    pub model_turns: u32,
    /// Tool calls the models requested (rejected ones included).
    pub tool_calls: u32,
    /// `(router, chosen agent)` for each router step.
    pub routes: Vec<(String, String)>,
}

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// No agent, router or workflow of that name (or a flow step that is not part of its
    /// workflow).
    #[error("unknown target: no {kind} named `{name}` in this app")]
    UnknownTarget {
        /// What was looked for.
        kind: String,
        /// The name.
        name: String,
    },
    /// No chat model for an agent or router.
    #[error(
        "no chat model for `{step}`: set one with `AppBuilder::model` or `AppBuilder::agent_model`"
    )]
    NoModel {
        /// The agent or router.
        step: String,
    },
    /// A model call failed.
    #[error("the model call of `{step}` failed: {source}")]
    Model {
        /// The agent or router.
        step: String,
        /// The model's error.
        #[source]
        source: ModelError,
    },
    /// An agent took `max_turns` model turns without a final answer.
    #[error("agent `{agent}` reached max_turns ({max_turns}) without a final answer")]
    MaxTurnsExceeded {
        /// The agent.
        agent: String,
        /// The limit.
        max_turns: u32,
    },
    /// A step failed: a blocked tool (`as_blocked()`), a failing guard, a tool error under
    /// `FailStep`, or an error an `on_error` handler re-raised.
    #[error(transparent)]
    Step(#[from] StepFailedError),
    /// The run's [`CancelToken`] was cancelled.
    #[error("the run was cancelled")]
    Cancelled,
}

impl RunError {
    /// The block, when the run failed because an interceptor blocked a tool.
    pub fn as_blocked(&self) -> Option<&crate::ToolBlockedError> {
        match self {
            Self::Step(s) => s.as_blocked(),
            _ => None,
        }
    }
    /// The step failure, if that is what ended the run.
    pub fn as_step_failed(&self) -> Option<&StepFailedError> {
        match self {
            Self::Step(s) => Some(s),
            _ => None,
        }
    }
}

/// The events of a run as they happen (`Ok(event)`), ending with `Ok(RunEvent::Completed(..))`
/// or with `Err(error)`: exactly what [`App::execute`] returns.
#[must_use = "a RunStream does nothing unless polled"]
pub struct RunStream {
    rx: mpsc::UnboundedReceiver<RunEvent>,
    run: Option<BoxFuture<'static, Result<RunOutput, RunError>>>,
    result: Option<Result<RunOutput, RunError>>,
}

impl fmt::Debug for RunStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunStream")
            .field("running", &self.run.is_some())
            .finish()
    }
}

impl RunStream {
    /// Drains the stream and returns the run's result, with every event before it.
    pub async fn collect_all(mut self) -> (Vec<RunEvent>, Result<RunOutput, RunError>) {
        let mut events = Vec::new();
        while let Some(item) = self.next().await {
            match item {
                Ok(RunEvent::Completed(out)) => return (events, Ok(out)),
                Ok(ev) => events.push(ev),
                Err(e) => return (events, Err(e)),
            }
        }
        // Unreachable in practice: the stream always ends with `Completed` or an error.
        (events, Err(RunError::Cancelled))
    }
}

impl Stream for RunStream {
    type Item = Result<RunEvent, RunError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if let Poll::Ready(Some(event)) = this.rx.poll_recv(cx) {
                return Poll::Ready(Some(Ok(event)));
            }
            match &mut this.run {
                Some(run) => match run.poll_unpin(cx) {
                    Poll::Ready(result) => {
                        // Dropping the future drops the sender: the receiver drains, then ends.
                        this.run = None;
                        this.result = Some(result);
                    }
                    Poll::Pending => return Poll::Pending,
                },
                None => {
                    return Poll::Ready(this.result.take().map(|r| r.map(RunEvent::Completed)));
                }
            }
        }
    }
}

impl App {
    /// Runs `target` on `input` to its final answer. See the [module docs](self) for the loop.
    pub async fn execute(
        &self,
        target: impl Into<Target>,
        input: impl Into<String>,
        ctx: RunContext,
    ) -> Result<RunOutput, RunError> {
        Engine::new(self.clone(), ctx, None)
            .run(target.into(), input.into())
            .await
    }

    /// Like [`App::execute`], yielding the run's [`RunEvent`]s as they happen. The run makes
    /// progress only while the stream is polled.
    pub fn stream(
        &self,
        target: impl Into<Target>,
        input: impl Into<String>,
        ctx: RunContext,
    ) -> RunStream {
        let (tx, rx) = mpsc::unbounded_channel();
        let engine = Engine::new(self.clone(), ctx, Some(tx));
        let (target, input) = (target.into(), input.into());
        RunStream {
            rx,
            run: Some(Box::pin(async move { engine.run(target, input).await })),
            result: None,
        }
    }
}

/// One call's observation.
pub(crate) struct Observation {
    content: String,
    is_error: bool,
}

#[derive(Default)]
pub(crate) struct Stats {
    pub(crate) usage: Usage,
    pub(crate) model_turns: u32,
    pub(crate) tool_calls: u32,
    pub(crate) routes: Vec<(String, String)>,
}

/// The engine of one run.
pub(crate) struct Engine {
    pub(crate) app: App,
    pub(crate) ctx: RunContext,
    sink: Option<mpsc::UnboundedSender<RunEvent>>,
    run_id: String,
}

impl Engine {
    fn new(app: App, ctx: RunContext, sink: Option<mpsc::UnboundedSender<RunEvent>>) -> Self {
        let run_id = ctx
            .run_id
            .clone()
            .unwrap_or_else(|| format!("run_{}", CallId::generate().as_str()));
        Self {
            app,
            ctx,
            sink,
            run_id,
        }
    }

    /// Sends an event when someone listens (the event is not even built otherwise).
    pub(crate) fn emit(&self, event: impl FnOnce() -> RunEvent) {
        if let Some(sink) = &self.sink {
            // A dropped stream only means nobody listens any more.
            let _ = sink.send(event());
        }
    }

    pub(crate) fn callbacks(
        &self,
        scopes: &[ScopeRef],
        callbacks: Vec<SharedToolCallback>,
    ) -> Vec<SharedToolCallback> {
        match &self.ctx.wrap {
            Some(wrap) => wrap(scopes, callbacks),
            None => callbacks,
        }
    }

    async fn run(self, target: Target, input: String) -> Result<RunOutput, RunError> {
        let target_name = target.name().to_string();
        self.emit(|| RunEvent::RunStarted {
            run_id: self.run_id.clone(),
            target: target_name.clone(),
        });
        let mut stats = Stats::default();
        let text = self.run_target(target, input, &mut stats).await?;
        Ok(RunOutput {
            run_id: self.run_id.clone(),
            text,
            usage: stats.usage,
            model_turns: stats.model_turns,
            tool_calls: stats.tool_calls,
            routes: stats.routes,
        })
    }

    async fn run_target(
        &self,
        target: Target,
        input: String,
        stats: &mut Stats,
    ) -> Result<String, RunError> {
        let app = self.app.clone();
        let unknown = |kind: &str, name: &str| RunError::UnknownTarget {
            kind: kind.to_string(),
            name: name.to_string(),
        };
        match target.0 {
            TargetKind::Agent(name) => {
                let agent = app
                    .agent_by_name(&name)
                    .ok_or_else(|| unknown("agent", &name))?;
                self.run_agent(agent, input, stats).await
            }
            TargetKind::Router(name) => {
                let router = app
                    .router_by_name(&name)
                    .ok_or_else(|| unknown("router", &name))?;
                self.run_router(router, input, stats).await
            }
            TargetKind::Workflow { name, flow } => {
                let wf = app
                    .workflow_by_name(&name)
                    .ok_or_else(|| unknown("workflow", &name))?;
                self.run_workflow(wf, &flow, input, stats).await
            }
            TargetKind::WorkflowDefault(name) => {
                let wf = app
                    .workflow_by_name(&name)
                    .ok_or_else(|| unknown("workflow", &name))?;
                let flow = Flow::default_for(wf);
                self.run_workflow(wf, &flow, input, stats).await
            }
            TargetKind::Named(name) => {
                if let Some(agent) = app.agent_by_name(&name) {
                    self.run_agent(agent, input, stats).await
                } else if let Some(router) = app.router_by_name(&name) {
                    self.run_router(router, input, stats).await
                } else if let Some(wf) = app.workflow_by_name(&name) {
                    let flow = Flow::default_for(wf);
                    self.run_workflow(wf, &flow, input, stats).await
                } else {
                    Err(unknown("agent, router or workflow", &name))
                }
            }
        }
    }

    /// Awaits `fut` unless the run is cancelled first.
    pub(crate) async fn or_cancel<T>(
        &self,
        fut: impl std::future::Future<Output = T>,
    ) -> Result<T, RunError> {
        if self.ctx.cancel.is_cancelled() {
            return Err(RunError::Cancelled);
        }
        tokio::select! {
            biased;
            () = self.ctx.cancel.cancelled() => Err(RunError::Cancelled),
            out = fut => Ok(out),
        }
    }

    /// One model call, streamed: text deltas become events; returns the assembled response.
    pub(crate) async fn call_model(
        &self,
        step: &str,
        model: &SharedChatModel,
        req: &ModelRequest,
        stats: &mut Stats,
    ) -> Result<ModelResponse, RunError> {
        let model_err = |source: ModelError| RunError::Model {
            step: step.to_string(),
            source,
        };
        let response = self
            .or_cancel(async {
                let mut stream = model.stream_boxed(req).await?;
                let mut response = None;
                while let Some(event) = stream.next().await {
                    match event? {
                        ModelStreamEvent::TextDelta { delta } => {
                            self.emit(|| RunEvent::TextDelta {
                                step: step.to_string(),
                                delta,
                            })
                        }
                        ModelStreamEvent::Finished(r) => response = Some(r),
                        _ => {}
                    }
                }
                response.ok_or_else(|| ModelError::StreamTruncated {
                    detail: "stream ended without a Finished event".to_string(),
                })
            })
            .await?
            .map_err(model_err)?;
        stats.model_turns += 1;
        stats.usage += response.usage;
        if response.usage != Usage::default() {
            self.emit(|| RunEvent::Usage {
                step: step.to_string(),
                usage: response.usage,
            });
        }
        Ok(response)
    }

    /// Runs an agent's tool loop to its final answer.
    pub(crate) async fn run_agent(
        &self,
        agent: &ResolvedAgent,
        input: String,
        stats: &mut Stats,
    ) -> Result<String, RunError> {
        let name = agent.meta.name;
        self.emit(|| RunEvent::StepStarted {
            step: name.to_string(),
            kind: StepKind::Agent,
            input: input.clone(),
        });
        let result = self.agent_loop(agent, input, stats).await;
        self.emit(|| RunEvent::StepFinished {
            step: name.to_string(),
            kind: StepKind::Agent,
            outcome: match &result {
                Ok(_) => StepOutcome::Succeeded,
                Err(e) => StepOutcome::Failed {
                    error: e.to_string(),
                },
            },
        });
        result
    }

    async fn agent_loop(
        &self,
        agent: &ResolvedAgent,
        input: String,
        stats: &mut Stats,
    ) -> Result<String, RunError> {
        let meta = agent.meta;
        let model = self
            .app
            .model_for(meta.name)
            .cloned()
            .ok_or_else(|| RunError::NoModel {
                step: meta.name.to_string(),
            })?;
        // The app's and the agent's listeners decorate the agent's tools.
        let callbacks = self.callbacks(&agent.scopes, self.app.agent_callbacks(agent));
        let mut req =
            ModelRequest::default().with_tools(callbacks.iter().map(|c| c.definition().clone()));
        if !meta.instructions.is_empty() {
            req.messages.push(Message::system(meta.instructions));
        }
        req.messages.push(Message::user(input));
        let max_turns = self
            .ctx
            .max_turns
            .or(meta.max_turns)
            .unwrap_or(DEFAULT_MAX_TURNS);
        let parallel = self
            .ctx
            .max_parallel
            .or(meta.max_parallel_tool_calls)
            .unwrap_or(DEFAULT_MAX_PARALLEL_TOOL_CALLS)
            .max(1);
        for _ in 0..max_turns {
            let response = self.call_model(meta.name, &model, &req, stats).await?;
            let message = response.message;
            if message.tool_calls.is_empty() {
                let text = message.content.unwrap_or_default();
                self.emit(|| RunEvent::FinalAnswer {
                    step: meta.name.to_string(),
                    text: text.clone(),
                });
                return Ok(text);
            }
            let calls = message.tool_calls.clone();
            req.messages.push(Message::Assistant(message));
            stats.tool_calls += u32::try_from(calls.len()).unwrap_or(u32::MAX);
            for call in &calls {
                self.emit(|| RunEvent::ToolCallRequested {
                    step: meta.name.to_string(),
                    call_id: call.id.clone(),
                    tool: call.name.clone(),
                    arguments: call.arguments.clone(),
                });
            }
            let observations = self
                .run_calls(meta.name, meta.tool_errors, &callbacks, &calls, parallel)
                .await?;
            for (call, obs) in calls.iter().zip(observations) {
                req.messages.push(Message::Tool {
                    call_id: call.id.clone(),
                    content: obs.content,
                    is_error: obs.is_error,
                });
            }
        }
        Err(RunError::MaxTurnsExceeded {
            agent: meta.name.to_string(),
            max_turns,
        })
    }

    /// Runs one turn's calls, at most `parallel` at once; observations in the model's order. The
    /// first call that fails the step drops the others still in flight.
    async fn run_calls(
        &self,
        step: &str,
        policy: ToolErrorPolicy,
        callbacks: &[SharedToolCallback],
        calls: &[ToolCallRequest],
        parallel: usize,
    ) -> Result<Vec<Observation>, RunError> {
        let mut slots: Vec<Option<Observation>> = calls.iter().map(|_| None).collect();
        // Collected first: a lazy iterator of borrowing closures trips the `Send` check of the
        // boxed stream future (higher-ranked lifetime inference).
        let mut calls_futures = Vec::with_capacity(calls.len());
        for (i, call) in calls.iter().enumerate() {
            calls_futures
                .push(async move { (i, self.run_one(step, policy, callbacks, call).await) });
        }
        let mut pending = futures::stream::iter(calls_futures).buffer_unordered(parallel);
        loop {
            let next = match self.or_cancel(pending.next()).await {
                Ok(next) => next,
                Err(cancelled) => {
                    drop(pending);
                    self.emit_cancelled(step, calls, &slots, None);
                    return Err(cancelled);
                }
            };
            match next {
                None => break,
                Some((i, Ok(obs))) => slots[i] = Some(obs),
                Some((i, Err(err))) => {
                    // Dropping the stream drops (cancels) every sibling still running or queued.
                    drop(pending);
                    self.emit_cancelled(step, calls, &slots, Some(i));
                    return Err(err);
                }
            }
        }
        Ok(slots
            .into_iter()
            .map(|s| s.expect("every call of the turn finished"))
            .collect())
    }

    fn emit_cancelled(
        &self,
        step: &str,
        calls: &[ToolCallRequest],
        slots: &[Option<Observation>],
        failed: Option<usize>,
    ) {
        for (j, call) in calls.iter().enumerate() {
            if slots[j].is_none() && Some(j) != failed {
                tracing::debug!(step, call_id = %call.id, tool = %call.name, "tool call cancelled");
                self.emit(|| RunEvent::ToolCallCancelled {
                    step: step.to_string(),
                    call_id: call.id.clone(),
                    tool: call.name.clone(),
                });
            }
        }
    }

    fn decide(&self, step: &str, call: &ToolCallRequest, decision: impl FnOnce() -> CallDecision) {
        self.emit(|| RunEvent::ToolCallDecision {
            step: step.to_string(),
            call_id: call.id.clone(),
            tool: call.name.clone(),
            decision: decision(),
        });
    }

    fn observe(
        &self,
        step: &str,
        call: &ToolCallRequest,
        obs: Observation,
        truncated: bool,
    ) -> Observation {
        self.emit(|| RunEvent::ToolResult {
            step: step.to_string(),
            call_id: call.id.clone(),
            tool: call.name.clone(),
            content: obs.content.clone(),
            is_error: obs.is_error,
            truncated,
        });
        obs
    }

    fn reject(&self, step: &str, call: &ToolCallRequest, reason: String) -> Observation {
        tracing::debug!(step, call_id = %call.id, tool = %call.name, %reason, "tool call rejected");
        self.decide(step, call, || CallDecision::Rejected {
            reason: reason.clone(),
        });
        self.observe(
            step,
            call,
            Observation {
                content: reason,
                is_error: true,
            },
            false,
        )
    }

    /// One call: a soft observation, or the error that fails the step.
    async fn run_one(
        &self,
        step: &str,
        policy: ToolErrorPolicy,
        callbacks: &[SharedToolCallback],
        call: &ToolCallRequest,
    ) -> Result<Observation, RunError> {
        let Some(callback) = callbacks.iter().find(|c| c.definition().name == call.name) else {
            let known: Vec<&str> = callbacks
                .iter()
                .map(|c| c.definition().name.as_str())
                .collect();
            let reason = if known.is_empty() {
                format!("Unknown tool `{}`: no tools are available.", call.name)
            } else {
                format!(
                    "Unknown tool `{}`. The tools you can call are: {}.",
                    call.name,
                    known.join(", ")
                )
            };
            return Ok(self.reject(step, call, reason));
        };
        let arguments = if call.arguments.trim().is_empty() {
            "{}"
        } else {
            call.arguments.as_str()
        };
        if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(arguments) {
            let reason = format!(
                "The arguments of tool `{}` are not valid JSON ({e}). Send one JSON object that matches the tool's parameters schema.",
                call.name
            );
            return Ok(self.reject(step, call, reason));
        }
        let invocation = ToolInvocation {
            call_id: &call.id,
            arguments,
            tenant: self.ctx.tenant.as_ref(),
        };
        let result = match self.ctx.tool_timeout {
            None => callback.call(invocation).await,
            Some(limit) => match tokio::time::timeout(limit, callback.call(invocation)).await {
                Ok(r) => r,
                Err(_) => Err(ToolCallError::Timeout {
                    tool_name: call.name.clone(),
                    timeout_ms: u64::try_from(limit.as_millis()).unwrap_or(u64::MAX),
                }),
            },
        };
        match result {
            Ok(ToolResult::Output { content, truncated }) => {
                self.decide(step, call, || CallDecision::Allowed);
                Ok(self.observe(
                    step,
                    call,
                    Observation {
                        content,
                        is_error: false,
                    },
                    truncated,
                ))
            }
            Ok(ToolResult::ReplyToModel {
                message,
                interceptor,
            }) => {
                self.decide(step, call, || CallDecision::RepliedToModel {
                    interceptor: interceptor.to_string(),
                    message: message.clone(),
                });
                Ok(self.observe(
                    step,
                    call,
                    Observation {
                        content: message,
                        is_error: true,
                    },
                    false,
                ))
            }
            Ok(ToolResult::ReportedError { message }) => {
                self.decide(step, call, || CallDecision::Allowed);
                Ok(self.observe(
                    step,
                    call,
                    Observation {
                        content: message,
                        is_error: true,
                    },
                    false,
                ))
            }
            // Error texts for the model go through the path's PII policies too.
            Err(err) => self.on_call_error(step, policy, call, err).map(|mut obs| {
                obs.content = callback.mask_for_model(&obs.content).into_owned();
                obs
            }),
        }
    }

    fn on_call_error(
        &self,
        step: &str,
        policy: ToolErrorPolicy,
        call: &ToolCallRequest,
        err: ToolCallError,
    ) -> Result<Observation, RunError> {
        let class = match &err {
            ToolCallError::InvalidInput { source, .. } => {
                let reason = format!(
                    "Invalid arguments for tool `{}`: {source}\nFix these fields and call the tool again.",
                    call.name
                );
                return Ok(self.reject(step, call, reason));
            }
            ToolCallError::NotInApp { .. } => {
                let reason = format!("Unknown tool `{}`.", call.name);
                return Ok(self.reject(step, call, reason));
            }
            ToolCallError::Blocked(b) => {
                tracing::warn!(step, call_id = %call.id, tool = %call.name, interceptor = b.interceptor, reason = b.text(), "tool call blocked: the step fails");
                self.decide(step, call, || CallDecision::Blocked {
                    interceptor: b.interceptor.to_string(),
                    reason: b.text().to_string(),
                });
                return Err(StepFailedError::from_tool_call(step, err).into());
            }
            ToolCallError::ToolFailed { .. } => "tool error",
            ToolCallError::ToolPanicked { .. } => "tool panic",
            ToolCallError::Timeout { .. } => "timeout",
            ToolCallError::InvalidOutput { .. } => "invalid tool output",
            ToolCallError::Serialize { .. } => "output serialization error",
            // Interceptor failures, missing dependencies and anything unforeseen fail closed.
            _ => {
                tracing::error!(step, call_id = %call.id, tool = %call.name, error = %err, "tool call guard failed: the step fails");
                self.decide(step, call, || CallDecision::GuardFailed {
                    error: err.to_string(),
                });
                return Err(StepFailedError::from_tool_call(step, err).into());
            }
        };
        let policy = self
            .ctx
            .tool_errors
            .get(call.name.as_str())
            .copied()
            .unwrap_or(policy);
        tracing::warn!(step, call_id = %call.id, tool = %call.name, error = %err, ?policy, "tool failed");
        self.decide(step, call, || CallDecision::Allowed);
        self.emit(|| RunEvent::ToolError {
            step: step.to_string(),
            call_id: call.id.clone(),
            tool: call.name.clone(),
            error: err.to_string(),
        });
        match policy {
            ToolErrorPolicy::FailStep => Err(StepFailedError::from_tool_call(step, err).into()),
            ToolErrorPolicy::Report => {
                let content = format!(
                    "The tool `{}` failed ({class}). The details were logged for the operator. Try different arguments or another approach.",
                    call.name
                );
                Ok(self.observe(
                    step,
                    call,
                    Observation {
                        content,
                        is_error: true,
                    },
                    false,
                ))
            }
        }
    }
}
