//! One run: [`RunOutput`], [`RunError`], the [`RunStream`] of its events, and the engine that
//! dispatches a target and calls models.
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use futures::{FutureExt as _, Stream, StreamExt as _};
use tokio::sync::mpsc;
use tracing::Instrument as _;

use super::context::{OrCancel, RunContext, Target, TargetKind};
use super::events::RunEvent;
use super::guardrails::OutputGate;
use super::journal::{RunJournal, request_digest};
pub use super::run_error::RunError;
use super::telemetry::{self, ContentMask};
use super::workflow::Flow;
use super::{Durability, Runtime};
use crate::callback::SharedToolCallback;
use crate::callback::stack::stack;
use crate::contract::scope::ScopeRef;
use crate::di::CallId;
use crate::model::{
    FinishReason, ModelError, ModelRequest, ModelResponse, ModelStreamEvent, SharedChatModel, Usage,
};
use crate::store::types::random_id;
use crate::store::{NewRun, StoreError};

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
    /// The thread the run continued.
    pub thread_id: Option<String>,
    /// Journal steps read back instead of done again (0 unless the run was resumed).
    pub replayed_steps: u64,
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
            run: Some(Box::pin(engine.run(target, input))),
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
    /// The run's journal, when the app has a store.
    pub(crate) journal: Option<RunJournal>,
    /// The blocking input guardrails of the run's target already ran (before the run was
    /// stored, see [`Engine::precheck_input`]).
    pub(crate) input_checked: bool,
    /// The run's target (its agent has no step span of its own: the run's span is its).
    pub(crate) target_name: String,
}

impl Engine {
    pub(crate) fn new(
        rt: Arc<Runtime>,
        ctx: RunContext,
        sink: Option<mpsc::UnboundedSender<RunEvent>>,
    ) -> Self {
        let run_id = ctx.run_id.clone().unwrap_or_else(|| {
            if rt.store.is_some() {
                // Unique across processes: a stored run must never be mistaken for another's.
                random_id("run")
            } else {
                format!("run_{}", CallId::generate().as_str())
            }
        });
        Self {
            rt,
            ctx,
            sink,
            run_id,
            journal: None,
            input_checked: false,
            target_name: String::new(),
        }
    }

    /// Sends an event when someone listens (the event is not even built otherwise).
    pub(crate) fn emit(&self, event: impl FnOnce() -> RunEvent) {
        if let Some(sink) = &self.sink {
            // A dropped stream only means nobody listens any more.
            let _ = sink.send(event());
        }
    }

    /// The decorated callbacks of `base` tools (see [`crate::callback`]).
    pub(crate) fn callbacks(
        &self,
        agent: Option<&str>,
        scopes: &[ScopeRef],
        base: Vec<SharedToolCallback>,
    ) -> Vec<SharedToolCallback> {
        stack(&self.rt.listeners, agent, scopes, base, &self.ctx.layers)
    }

    /// Runs `target` in its run span (see [`telemetry`]).
    pub(crate) async fn run(
        mut self,
        target: Target,
        input: String,
    ) -> Result<RunOutput, RunError> {
        let workflow = match &target.0 {
            TargetKind::Workflow { .. } | TargetKind::WorkflowDefault(_) => true,
            TargetKind::Named(name) => {
                self.rt.agent_by_name(name).is_none()
                    && self.rt.router_by_name(name).is_none()
                    && self.rt.workflow_by_name(name).is_some()
            }
            TargetKind::Agent(_) | TargetKind::Router(_) => false,
        };
        self.target_name = target.name().to_string();
        let span = telemetry::run_span(
            workflow,
            &self.target_name,
            &self.run_id,
            self.ctx.thread.as_deref(),
        );
        let result = self
            .run_untraced(target, input)
            .instrument(span.clone())
            .await;
        telemetry::finish_run(&span, &result);
        result
    }

    async fn run_untraced(&mut self, target: Target, input: String) -> Result<RunOutput, RunError> {
        let target_name = target.name().to_string();
        self.emit(|| RunEvent::RunStarted {
            run_id: self.run_id.clone(),
            target: target_name.clone(),
        });
        let mut stats = Stats::default();
        let text = match self.rt.store.clone() {
            None => {
                if self.ctx.thread.is_some() {
                    return Err(StoreError::NotConfigured.into());
                }
                self.run_target(target, input, &mut stats).await?
            }
            // Boxed: the journal's store round trips make a large future, which a run without
            // a store need not carry (nor copy at every level above it).
            Some(durability) => {
                Box::pin(self.run_journaled(durability, target, input, target_name, &mut stats))
                    .await?
            }
        };
        Ok(self.output(text, stats))
    }

    /// A run of an app with a store: opened in (or resumed from) its journal, heartbeated
    /// while it runs, closed with its result.
    async fn run_journaled(
        &mut self,
        durability: Durability,
        target: Target,
        input: String,
        target_name: String,
        stats: &mut Stats,
    ) -> Result<String, RunError> {
        // A blocked input is refused before anything is stored; a rewritten one is stored
        // rewritten.
        let input = match self.precheck_input(&target, &input).await? {
            Some(checked) => {
                self.input_checked = true;
                checked
            }
            None => input,
        };
        let mut new = NewRun::new(
            self.ctx.tenant_id().unwrap_or_default(),
            self.run_id.clone(),
            target_name,
            input.clone(),
        );
        new.thread_id = self.ctx.thread.clone();
        // The store is read before anything runs: unavailable, it fails the run here.
        let journal = RunJournal::open(
            durability.store,
            new,
            &durability.worker,
            durability.lease_ttl,
        )
        .await?;
        if journal.replayed_steps > 0 {
            self.emit(|| RunEvent::RunResumed {
                run_id: self.run_id.clone(),
                replayed_steps: journal.replayed_steps,
            });
        }
        self.journal = Some(journal);
        let journal = self.journal.as_ref().expect("set above");
        let result = tokio::select! {
            biased;
            result = self.run_target(target, input, stats) => result,
            lost = journal.heartbeat() => Err(RunError::Store(lost)),
        };
        if let Err(err) = journal.close(&result).await {
            tracing::warn!(run_id = %self.run_id, error = %err, "could not record the end of the run");
            if result.is_ok() {
                // The answer is not durable: the caller learns it, and a resume finishes it.
                return Err(err.into());
            }
        }
        result
    }

    fn output(&self, text: String, stats: Stats) -> RunOutput {
        RunOutput {
            run_id: self.run_id.clone(),
            text,
            usage: stats.usage,
            model_turns: stats.model_turns,
            tool_calls: stats.tool_calls,
            routes: stats.routes,
            thread_id: self.ctx.thread.clone(),
            replayed_steps: self.journal.as_ref().map_or(0, |j| j.replayed_steps),
        }
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
                Box::pin(self.run_router(router, input, stats)).await
            }
            TargetKind::Workflow { name, flow } => {
                let wf = rt
                    .workflow_by_name(&name)
                    .ok_or_else(|| unknown("workflow", &name))?;
                Box::pin(self.run_workflow(wf, &flow, input, stats)).await
            }
            TargetKind::WorkflowDefault(name) => {
                let wf = rt
                    .workflow_by_name(&name)
                    .ok_or_else(|| unknown("workflow", &name))?;
                let flow = Flow::default_for(wf);
                Box::pin(self.run_workflow(wf, &flow, input, stats)).await
            }
            TargetKind::Named(name) => {
                if let Some(agent) = rt.agent_by_name(&name) {
                    self.run_agent(agent, input, stats).await
                } else if let Some(router) = rt.router_by_name(&name) {
                    Box::pin(self.run_router(router, input, stats)).await
                } else if let Some(wf) = rt.workflow_by_name(&name) {
                    let flow = Flow::default_for(wf);
                    Box::pin(self.run_workflow(wf, &flow, input, stats)).await
                } else {
                    Err(unknown("agent, router or workflow", &name))
                }
            }
        }
    }

    /// Awaits `fut` unless the run is cancelled first (see [`OrCancel`]).
    pub(crate) fn or_cancel<F: Future>(&self, fut: F) -> OrCancel<'_, F> {
        self.ctx.cancel.unless_cancelled(fut)
    }

    /// One model call, journaled: read back from the journal of a resumed run, else made and
    /// recorded before the run goes on (`visible` turns are appended to the run's thread; with
    /// a closed `gate`, a final answer is not: the run appends the answer its output guardrails
    /// let through). Text deltas go through `gate`; `mask` masks the content a `chat` span
    /// records (none without it). Returns the turn number (what the turn's tool call keys use)
    /// and the response.
    #[expect(
        clippy::too_many_arguments,
        reason = "the turn's inputs, its span's mask and its output gate; one private call site shape"
    )]
    pub(crate) async fn call_model(
        &self,
        step: &str,
        model: &SharedChatModel,
        req: &ModelRequest,
        stats: &mut Stats,
        visible: bool,
        mask: Option<ContentMask<'_>>,
        gate: &mut OutputGate,
    ) -> Result<(u32, ModelResponse), RunError> {
        // Journaled: the turn's number, its request digest and whether its final answer is
        // hidden; a turn the journal holds is read back instead of made.
        let journaled = match &self.journal {
            None => None,
            Some(journal) => {
                let turn = journal.next_model_turn();
                let digest = request_digest(req);
                let hide_final = gate.is_closed();
                // A hidden final answer is not the thread's last visible text either.
                if let Some(replayed) =
                    journal.replayed_model(turn, &digest, visible && !hide_final)?
                {
                    stats.model_turns += 1;
                    stats.usage += replayed.usage;
                    let finish_reason = if replayed.message.tool_calls.is_empty() {
                        FinishReason::Stop
                    } else {
                        FinishReason::ToolCalls
                    };
                    let response = ModelResponse {
                        message: replayed.message,
                        finish_reason,
                        usage: replayed.usage,
                    };
                    return Ok((turn, response));
                }
                Some((turn, digest, hide_final))
            }
        };
        let turn = journaled.as_ref().map_or(stats.model_turns, |j| j.0);
        // One live call site: the future is held once.
        let response = self
            .call_model_live(step, model, req, stats, mask, gate)
            .await?;
        if let Some((turn, digest, hide_final)) = journaled {
            // Boxed: a store write is a large future, which an app without a store need not
            // carry.
            Box::pin(self.record_model(step, turn, digest, &response, visible, hide_final)).await?;
        }
        Ok((turn, response))
    }

    /// Journals model turn `turn` (see [`Engine::call_model`] for `visible` and `hide_final`).
    pub(crate) async fn record_model(
        &self,
        step: &str,
        turn: u32,
        digest: String,
        response: &ModelResponse,
        visible: bool,
        hide_final: bool,
    ) -> Result<(), RunError> {
        let Some(journal) = &self.journal else {
            return Ok(());
        };
        let visible = visible && !(hide_final && response.message.tool_calls.is_empty());
        journal
            .record_model(
                turn,
                step,
                digest,
                &response.message,
                response.usage,
                visible,
            )
            .await
    }

    /// One model call, streamed, in its `chat` span: text deltas go through `gate`; returns
    /// the assembled response.
    pub(crate) async fn call_model_live(
        &self,
        step: &str,
        model: &SharedChatModel,
        req: &ModelRequest,
        stats: &mut Stats,
        mask: Option<ContentMask<'_>>,
        gate: &mut OutputGate,
    ) -> Result<ModelResponse, RunError> {
        let span = telemetry::chat_span(step, model, req, mask);
        let model_err = |source: ModelError| RunError::Model {
            step: step.to_string(),
            source,
        };
        let response = self
            .or_cancel(
                async {
                    let response = self.stream_turn(step, model, req, gate).await?;
                    telemetry::finish_chat(&span, &response, mask);
                    Ok::<_, RunError>(response)
                }
                .instrument(span.clone()),
            )
            .await??
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

    /// True when someone reads the run's events (`stream`), false for `execute`.
    pub(crate) fn listening(&self) -> bool {
        self.sink.is_some()
    }

    /// Reads one streamed model answer: text deltas go through `gate`. The outer error is the
    /// gate's (a window an output guardrail stopped), the inner one the model's.
    async fn stream_turn(
        &self,
        step: &str,
        model: &SharedChatModel,
        req: &ModelRequest,
        gate: &mut OutputGate,
    ) -> Result<Result<ModelResponse, ModelError>, RunError> {
        // A model that does not stream: its whole answer, its text one delta (what the default
        // `stream` would replay, without the events).
        if !model.dyn_streams() {
            let response = match model.complete_boxed(req).await {
                Ok(response) => response,
                Err(err) => return Ok(Err(err)),
            };
            if let Some(text) = response
                .message
                .content
                .as_deref()
                .filter(|t| !t.is_empty())
            {
                self.gate_delta(step, gate, text.to_string()).await?;
            }
            return Ok(Ok(response));
        }
        let mut stream = match model.stream_boxed(req).await {
            Ok(stream) => stream,
            Err(err) => return Ok(Err(err)),
        };
        let mut response = None;
        while let Some(event) = stream.next().await {
            match event {
                Ok(ModelStreamEvent::TextDelta { delta }) => {
                    self.gate_delta(step, gate, delta).await?;
                }
                Ok(ModelStreamEvent::Finished(r)) => response = Some(r),
                Ok(_) => {}
                Err(err) => return Ok(Err(err)),
            }
        }
        Ok(response.ok_or_else(|| ModelError::StreamTruncated {
            detail: "stream ended without a Finished event".to_string(),
        }))
    }
}
