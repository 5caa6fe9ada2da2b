//! What a run is given: [`RunContext`] (tenant, run id, cancellation, limits, callback
//! wrapping), its [`CancelToken`], and the [`Target`] to run.
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::sync::futures::Notified;

use super::run_error::RunError;
use super::workflow::{Flow, WorkflowFlow};
use crate::callback::SharedToolCallback;
use crate::callback::stack::{CallbackWrapper, RunLayers};
use crate::contract::agent::{Agent, Router, ToolErrorPolicy};
use crate::contract::scope::ScopeRef;
use crate::contract::workflow::Workflow;
use crate::di::TenantContext;

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
    /// A waiter woken by the next [`CancelToken::cancel`] (registered as soon as it exists).
    fn notified(&self) -> Notified<'_> {
        self.inner.notify.notified()
    }
    /// `fut` unless this token is cancelled first (see [`OrCancel`]).
    pub(crate) fn unless_cancelled<F: Future>(&self, fut: F) -> OrCancel<'_, F> {
        OrCancel {
            fut,
            notified: None,
            token: self,
            polled: false,
        }
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

pin_project_lite::pin_project! {
    /// `fut` unless the run is cancelled first: `Err(RunError::Cancelled)` once it is, checked
    /// before `fut` at every poll. A future that is ready at its first poll (a guardrail, a
    /// replayed step) registers no cancellation waiter (that takes the token's lock twice).
    /// A combinator rather than an `async fn`, which would hold `fut` twice.
    pub(crate) struct OrCancel<'a, F> {
        #[pin]
        fut: F,
        #[pin]
        notified: Option<Notified<'a>>,
        token: &'a CancelToken,
        polled: bool,
    }
}

impl<F: Future> Future for OrCancel<'_, F> {
    type Output = Result<F::Output, RunError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        if this.token.is_cancelled() {
            return Poll::Ready(Err(RunError::Cancelled));
        }
        // The first poll polls `fut` before any waiter exists: ready at once, none is registered.
        let first = !std::mem::replace(this.polled, true);
        if first && let Poll::Ready(out) = this.fut.as_mut().poll(cx) {
            return Poll::Ready(Ok(out));
        }
        // Waiting: registered for the cancellation, then the flag looked at again, so that a
        // cancel between the two is not missed. A waiter that fired is replaced.
        loop {
            if this.notified.is_none() {
                this.notified.set(Some(this.token.notified()));
                if this.token.is_cancelled() {
                    return Poll::Ready(Err(RunError::Cancelled));
                }
            }
            match this.notified.as_mut().as_pin_mut().map(|n| n.poll(cx)) {
                Some(Poll::Ready(())) => this.notified.set(None),
                _ => break,
            }
        }
        if first {
            // Polled above, pending: its waker is registered, and so is the cancellation's.
            return Poll::Pending;
        }
        this.fut.poll(cx).map(Ok)
    }
}

/// The per-run settings: tenant, run id, cancellation, limits, callback wrapping.
///
/// ```
/// use agboss_core::engine::RunContext;
/// let ctx = RunContext::new().tenant("acme").run_id("run-42").max_turns(5);
/// assert_eq!(ctx.tenant_id(), Some("acme"));
/// ```
#[derive(Clone, Default)]
pub struct RunContext {
    pub(crate) tenant: Option<TenantContext>,
    pub(crate) run_id: Option<String>,
    pub(crate) cancel: CancelToken,
    pub(crate) layers: RunLayers,
    pub(crate) max_turns: Option<u32>,
    pub(crate) max_handoffs: Option<u32>,
    pub(crate) max_agent_tool_depth: Option<u32>,
    pub(crate) max_parallel: Option<usize>,
    pub(crate) tool_errors: HashMap<String, ToolErrorPolicy>,
    pub(crate) thread: Option<String>,
    pub(crate) output_streaming: Option<crate::contract::guardrail::OutputStreaming>,
    pub(crate) usage_limits: Option<crate::contract::usage_limits::UsageLimits>,
}

impl fmt::Debug for RunContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunContext")
            .field("tenant", &self.tenant)
            .field("run_id", &self.run_id)
            .field("cancel", &self.cancel)
            .field("layers", &self.layers)
            .field("max_turns", &self.max_turns)
            .field("max_handoffs", &self.max_handoffs)
            .field("max_agent_tool_depth", &self.max_agent_tool_depth)
            .field("max_parallel", &self.max_parallel)
            .field("tool_errors", &self.tool_errors)
            .field("thread", &self.thread)
            .field("output_streaming", &self.output_streaming)
            .field("usage_limits", &self.usage_limits)
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
    /// Continues thread `thread_id` (of the run's tenant; create it with
    /// [`App::threads`](crate::App::threads)): the run reads the thread's messages as history
    /// before its first model turn and appends its own (its input, each model turn, each tool
    /// observation) as it goes. Needs a store ([`AppBuilder::store`](crate::AppBuilder::store));
    /// an unknown thread, or another tenant's, fails the run with
    /// [`StoreError::ThreadNotFound`](crate::store::StoreError::ThreadNotFound) before anything
    /// runs.
    ///
    /// ```
    /// use agboss_core::engine::RunContext;
    /// let ctx = RunContext::new().tenant("acme").thread("t-1");
    /// assert_eq!(ctx.thread_id(), Some("t-1"));
    /// ```
    pub fn thread(mut self, thread_id: impl Into<String>) -> Self {
        self.thread = Some(thread_id.into());
        self
    }
    /// The thread the run continues, if any.
    pub fn thread_id(&self) -> Option<&str> {
        self.thread.as_deref()
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
    /// How this run's streamed answers reach the caller where output guardrails guard the
    /// path (overrides [`AppBuilder::output_streaming`](crate::AppBuilder::output_streaming)).
    ///
    /// ```
    /// use agboss_core::{contract::guardrail::OutputStreaming, RunContext};
    /// let ctx = RunContext::new().output_streaming(OutputStreaming::windows(120, 40));
    /// # let _ = ctx;
    /// ```
    pub fn output_streaming(mut self, mode: crate::contract::guardrail::OutputStreaming) -> Self {
        self.output_streaming = Some(mode);
        self
    }
    /// Usage limits of this run: the strictest of these and the application's
    /// ([`AppBuilder::usage_limits`](crate::AppBuilder::usage_limits)) apply, each bound
    /// reserved before a call starts (see [`UsageLimits`](super::UsageLimits)).
    ///
    /// ```
    /// use agboss_core::engine::{RunContext, UsageLimits};
    /// let ctx = RunContext::new().usage_limits(UsageLimits::new().tool_calls(10));
    /// # let _ = ctx;
    /// ```
    pub fn usage_limits(mut self, limits: crate::contract::usage_limits::UsageLimits) -> Self {
        self.usage_limits = Some(limits);
        self
    }
    /// Overrides every agent's `max_turns` for this run.
    pub fn max_turns(mut self, turns: u32) -> Self {
        self.max_turns = Some(turns.max(1));
        self
    }
    /// Bounds the handoffs of this run (`#[agent(handoffs = [..])]`; default
    /// [`DEFAULT_MAX_HANDOFFS`](super::DEFAULT_MAX_HANDOFFS)): the handoff past it fails the
    /// run with [`RunError::MaxHandoffsExceeded`].
    ///
    /// ```
    /// use agboss_core::engine::RunContext;
    ///
    /// let ctx = RunContext::new().max_handoffs(1);
    /// assert!(format!("{ctx:?}").contains("max_handoffs: Some(1)"));
    /// ```
    pub fn max_handoffs(mut self, handoffs: u32) -> Self {
        self.max_handoffs = Some(handoffs);
        self
    }
    /// Bounds how deep agent tools (`#[agent(agent_tools = [..])]`) may nest in this run
    /// (default [`DEFAULT_MAX_AGENT_TOOL_DEPTH`](super::DEFAULT_MAX_AGENT_TOOL_DEPTH)): a run
    /// at this depth that calls an agent tool gets
    /// [`AgentToolError::TooDeep`](super::AgentToolError::TooDeep) for the call instead of a
    /// nested run. Runs nested in this one keep its bound.
    ///
    /// ```
    /// use agboss_core::engine::RunContext;
    ///
    /// let ctx = RunContext::new().max_agent_tool_depth(1);
    /// assert!(format!("{ctx:?}").contains("max_agent_tool_depth: Some(1)"));
    /// ```
    pub fn max_agent_tool_depth(mut self, depth: u32) -> Self {
        self.max_agent_tool_depth = Some(depth);
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
    /// Bounds the tool's own work (`run`) of every tool call of the run, on top of each tool's
    /// own `timeout_ms`. A `run` that goes past it fails with `ToolCallErrorKind::Timeout`, a tool
    /// error. Interceptors are not bounded by it: they have their own limit
    /// (`#[tool_interceptor(timeout_ms = ..)]`, [`AppBuilder::interceptor_timeout`](crate::AppBuilder::interceptor_timeout)),
    /// and one that runs past it fails the step.
    pub fn tool_timeout(mut self, timeout: Duration) -> Self {
        self.layers.tool_timeout = Some(timeout);
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
        let wrap: CallbackWrapper = match self.layers.wrap.take() {
            // Composes with an earlier wrapper: the earlier one is applied first (innermost).
            Some(previous) => Arc::new(move |scopes, cbs| wrap(scopes, previous(scopes, cbs))),
            None => Arc::new(wrap),
        };
        self.layers.wrap = Some(wrap);
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

#[cfg(test)]
mod or_cancel_tests {
    use super::*;

    #[tokio::test]
    async fn a_ready_future_runs_unless_the_token_is_already_cancelled() {
        let token = CancelToken::new();
        assert_eq!(token.unless_cancelled(async { 7 }).await.ok(), Some(7));
        token.cancel();
        let cancelled = token.unless_cancelled(async { 7 }).await;
        assert!(matches!(cancelled, Err(RunError::Cancelled)));
    }

    #[tokio::test]
    async fn a_suspended_future_is_dropped_when_the_token_is_cancelled() {
        let token = CancelToken::new();
        let canceller = token.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            canceller.cancel();
        });
        // Without a waiter registered, the cancel would never wake it: the timeout would.
        let waited = tokio::time::timeout(
            Duration::from_secs(5),
            token.unless_cancelled(std::future::pending::<()>()),
        )
        .await
        .expect("the cancel wakes the waiting call");
        assert!(matches!(waited, Err(RunError::Cancelled)));
    }

    #[tokio::test]
    async fn a_suspended_future_that_finishes_first_wins() {
        let token = CancelToken::new();
        let slow = async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            "done"
        };
        assert_eq!(token.unless_cancelled(slow).await.ok(), Some("done"));
        // Cancelled afterwards: nothing left waiting on it.
        token.cancel();
        assert!(token.is_cancelled());
    }
}
