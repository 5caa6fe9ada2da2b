//! The one place that builds callback stacks. Every tool call an agent loop, a workflow step or
//! `App::callbacks` makes goes through a stack built by [`stack`], innermost first:
//!
//! 1. the base callback (a [`BoundToolCallback`]: the guarded pipeline
//!    of the tool's path, or an MCP / custom callback);
//! 2. the agent's listeners, then the app-wide listeners ([`ToolCallListenerSet`]);
//! 3. the run's own wrapper ([`CallbackWrapper`], `RunContext::wrap_callbacks`);
//! 4. the run's tool time limit ([`TimeoutLayer`], `RunContext::tool_timeout`), outermost, so it
//!    bounds the tool's own work under every other layer.
//!
//! Error texts for the model are masked by the observation policy
//! ([`crate::pipeline::observe`]) with the stack's [`ToolCallback::mask_for_model`].
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;

use super::listener::{ListenedToolCallback, ToolCallListener};
use super::{
    BoundToolCallback, SharedToolCallback, ToolCallback, ToolInvocation, ToolMetadata, ToolSource,
};
use crate::cascade::ResolvedAgent;
use crate::contract::outcome::{CallOutcome, FailureKind, Rendered};
use crate::contract::outcome::{ToolCallError, ToolCallErrorKind};
use crate::contract::scope::ScopeRef;
use crate::model::ToolDefinition;

/// A transformation of the tool callbacks of a scope, applied before a run uses them (see
/// `RunContext::wrap_callbacks`).
pub type CallbackWrapper =
    Arc<dyn Fn(&[ScopeRef], Vec<SharedToolCallback>) -> Vec<SharedToolCallback> + Send + Sync>;

/// The per-run layers of a stack.
#[derive(Clone, Default)]
pub struct RunLayers {
    /// The run's wrapper.
    pub wrap: Option<CallbackWrapper>,
    /// The run's bound of every tool's own work.
    pub tool_timeout: Option<Duration>,
}

impl fmt::Debug for RunLayers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunLayers")
            .field("wraps_callbacks", &self.wrap.is_some())
            .field("tool_timeout", &self.tool_timeout)
            .finish()
    }
}

/// Builds the stack of `base` callbacks for `agent` (or for a workflow step, `None`) on the
/// path `scopes`.
pub fn stack(
    listeners: &ToolCallListenerSet,
    agent: Option<&str>,
    scopes: &[ScopeRef],
    base: Vec<SharedToolCallback>,
    run: &RunLayers,
) -> Vec<SharedToolCallback> {
    let mut callbacks = listeners.decorate(agent, base);
    if let Some(wrap) = &run.wrap {
        callbacks = wrap(scopes, callbacks);
    }
    if let Some(limit) = run.tool_timeout {
        callbacks = callbacks
            .into_iter()
            .map(|inner| Arc::new(TimeoutLayer { inner, limit }) as SharedToolCallback)
            .collect();
    }
    callbacks
}

/// The stack of `agent`'s tools on its path: what its tool loop calls. `base` are the
/// callbacks of its tools ([`base_callbacks`], or a cached copy of them).
pub fn agent_stack(
    listeners: &ToolCallListenerSet,
    agent: &ResolvedAgent,
    base: Vec<SharedToolCallback>,
    run: &RunLayers,
) -> Vec<SharedToolCallback> {
    stack(listeners, Some(agent.meta.name), &agent.scopes, base, run)
}

/// The undecorated callbacks of `agent`'s tools on its path.
pub fn base_callbacks(agent: &ResolvedAgent) -> Vec<SharedToolCallback> {
    agent.tools.iter().map(BoundToolCallback::shared).collect()
}

/// Bounds the tool's own work of every call: passes the limit down with the invocation (a
/// native tool's pipeline applies it to `run`, never to the interceptors, which have their own
/// bound and fail closed); a callback of another source is bounded as a whole.
pub struct TimeoutLayer {
    inner: SharedToolCallback,
    limit: Duration,
}

impl ToolCallback for TimeoutLayer {
    fn definition(&self) -> &ToolDefinition {
        self.inner.definition()
    }
    fn shared_definition(&self) -> Arc<ToolDefinition> {
        self.inner.shared_definition()
    }
    fn metadata(&self) -> &ToolMetadata {
        self.inner.metadata()
    }
    fn mask_for_model<'t>(&self, text: &'t str) -> std::borrow::Cow<'t, str> {
        self.inner.mask_for_model(text)
    }
    fn call<'a>(&'a self, invocation: ToolInvocation<'a>) -> BoxFuture<'a, CallOutcome<Rendered>> {
        let invocation = invocation.with_run_timeout(self.limit);
        if self.inner.metadata().source == ToolSource::Native {
            return self.inner.call(invocation);
        }
        Box::pin(async move {
            match crate::pipeline::bounded(self.inner.call(invocation), self.limit).await {
                Some(outcome) => outcome,
                None => CallOutcome::failed(
                    FailureKind::Tool,
                    ToolCallError::new(
                        self.inner.definition().name.clone(),
                        ToolCallErrorKind::Timeout {
                            timeout_ms: u64::try_from(self.limit.as_millis()).unwrap_or(u64::MAX),
                        },
                    ),
                ),
            }
        })
    }
}

/// Something that decorates a callback (a listener with its context type erased).
trait Decorate: Send + Sync {
    fn decorate(&self, callback: SharedToolCallback) -> SharedToolCallback;
}

struct ListenerDecorator<L>(Arc<L>);

impl<L: ToolCallListener> Decorate for ListenerDecorator<L> {
    fn decorate(&self, callback: SharedToolCallback) -> SharedToolCallback {
        Arc::new(ListenedToolCallback::new(callback, Arc::clone(&self.0)))
    }
}

/// The listeners of an app: app-wide ones and per-agent ones. Built with
/// [`AppBuilder::tool_call_listener`](crate::AppBuilder::tool_call_listener) / [`AppBuilder::agent_tool_call_listener`](crate::AppBuilder::agent_tool_call_listener).
#[derive(Clone, Default)]
pub struct ToolCallListenerSet {
    app: Vec<Arc<dyn Decorate>>,
    agents: Vec<(String, Arc<dyn Decorate>)>,
}

impl fmt::Debug for ToolCallListenerSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolCallListenerSet")
            .field("app", &self.app.len())
            .field(
                "agents",
                &self
                    .agents
                    .iter()
                    .map(|(a, _)| a.as_str())
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl ToolCallListenerSet {
    /// Adds a listener of every tool call of the app.
    pub fn add<L: ToolCallListener>(&mut self, listener: L) {
        self.app
            .push(Arc::new(ListenerDecorator(Arc::new(listener))));
    }
    /// Adds a listener of the tool calls of one agent (by name).
    pub fn add_for_agent<L: ToolCallListener>(&mut self, agent: impl Into<String>, listener: L) {
        self.agents.push((
            agent.into(),
            Arc::new(ListenerDecorator(Arc::new(listener))),
        ));
    }
    /// True when no listener is registered.
    pub fn is_empty(&self) -> bool {
        self.app.is_empty() && self.agents.is_empty()
    }
    /// Decorates callbacks with the app-wide listeners, and with the listeners of `agent` (inside
    /// the app-wide ones) when given. The first registered listener of a level is its outermost.
    fn decorate(
        &self,
        agent: Option<&str>,
        callbacks: impl IntoIterator<Item = SharedToolCallback>,
    ) -> Vec<SharedToolCallback> {
        let agent_level = self
            .agents
            .iter()
            .filter(|(name, _)| Some(name.as_str()) == agent)
            .map(|(_, d)| d);
        // Innermost first: the agent's listeners (last registered first), then the app's.
        let layers: Vec<&Arc<dyn Decorate>> =
            agent_level.rev().chain(self.app.iter().rev()).collect();
        callbacks
            .into_iter()
            .map(|cb| layers.iter().fold(cb, |cb, layer| layer.decorate(cb)))
            .collect()
    }
}
