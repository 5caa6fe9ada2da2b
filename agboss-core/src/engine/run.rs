//! One run: [`RunOutput`], [`RunError`], the [`RunStream`] of its events, and the engine that
//! dispatches a target and calls models.
use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use futures::{FutureExt as _, Stream, StreamExt as _};
use tokio::sync::mpsc;

use super::Runtime;
use super::context::{RunContext, Target, TargetKind};
use super::events::RunEvent;
use super::workflow::Flow;
use crate::callback::SharedToolCallback;
use crate::callback::stack::stack;
use crate::contract::scope::ScopeRef;
use crate::di::CallId;
use crate::error::StepFailedError;
use crate::model::{
    ModelError, ModelRequest, ModelResponse, ModelStreamEvent, SharedChatModel, Usage,
};

/// Model turns an agent may take when it sets no `max_turns`.
pub const DEFAULT_MAX_TURNS: u32 = 10;
/// Tool calls of one turn running at once when the agent sets no `max_parallel_tool_calls`.
pub const DEFAULT_MAX_PARALLEL_TOOL_CALLS: usize = 4;

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
    /// The run's [`CancelToken`](super::CancelToken) was cancelled.
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
/// or with `Err(error)`: exactly what [`App::execute`](crate::App::execute) returns.
#[must_use = "a RunStream does nothing unless polled"]
pub struct RunStream {
    rx: mpsc::UnboundedReceiver<RunEvent>,
    run: Option<BoxFuture<'static, Result<RunOutput, RunError>>>,
    result: Option<Result<RunOutput, RunError>>,
}

impl RunStream {
    /// Starts the stream of a run (it makes progress only while polled).
    pub(crate) fn start(rt: Arc<Runtime>, target: Target, input: String, ctx: RunContext) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let engine = Engine::new(rt, ctx, Some(tx));
        Self {
            rx,
            run: Some(Box::pin(async move { engine.run(target, input).await })),
            result: None,
        }
    }
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

#[derive(Default)]
pub(crate) struct Stats {
    pub(crate) usage: Usage,
    pub(crate) model_turns: u32,
    pub(crate) tool_calls: u32,
    pub(crate) routes: Vec<(String, String)>,
}

/// The engine of one run.
pub(crate) struct Engine {
    pub(crate) rt: Arc<Runtime>,
    pub(crate) ctx: RunContext,
    sink: Option<mpsc::UnboundedSender<RunEvent>>,
    run_id: String,
}

impl Engine {
    pub(crate) fn new(
        rt: Arc<Runtime>,
        ctx: RunContext,
        sink: Option<mpsc::UnboundedSender<RunEvent>>,
    ) -> Self {
        let run_id = ctx
            .run_id
            .clone()
            .unwrap_or_else(|| format!("run_{}", CallId::generate().as_str()));
        Self {
            rt,
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

    /// The decorated callbacks of `base` tools (see [`crate::callback::stack`]).
    pub(crate) fn callbacks(
        &self,
        agent: Option<&str>,
        scopes: &[ScopeRef],
        base: Vec<SharedToolCallback>,
    ) -> Vec<SharedToolCallback> {
        stack(&self.rt.listeners, agent, scopes, base, &self.ctx.layers)
    }

    pub(crate) async fn run(self, target: Target, input: String) -> Result<RunOutput, RunError> {
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
        let rt = Arc::clone(&self.rt);
        let unknown = |kind: &str, name: &str| RunError::UnknownTarget {
            kind: kind.to_string(),
            name: name.to_string(),
        };
        match target.0 {
            TargetKind::Agent(name) => {
                let agent = rt
                    .agent_by_name(&name)
                    .ok_or_else(|| unknown("agent", &name))?;
                self.run_agent(agent, input, stats).await
            }
            TargetKind::Router(name) => {
                let router = rt
                    .router_by_name(&name)
                    .ok_or_else(|| unknown("router", &name))?;
                self.run_router(router, input, stats).await
            }
            TargetKind::Workflow { name, flow } => {
                let wf = rt
                    .workflow_by_name(&name)
                    .ok_or_else(|| unknown("workflow", &name))?;
                self.run_workflow(wf, &flow, input, stats).await
            }
            TargetKind::WorkflowDefault(name) => {
                let wf = rt
                    .workflow_by_name(&name)
                    .ok_or_else(|| unknown("workflow", &name))?;
                let flow = Flow::default_for(wf);
                self.run_workflow(wf, &flow, input, stats).await
            }
            TargetKind::Named(name) => {
                if let Some(agent) = rt.agent_by_name(&name) {
                    self.run_agent(agent, input, stats).await
                } else if let Some(router) = rt.router_by_name(&name) {
                    self.run_router(router, input, stats).await
                } else if let Some(wf) = rt.workflow_by_name(&name) {
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
}
