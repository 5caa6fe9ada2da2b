//! One run: its [`RunStream`] of events, and the driver that sets up a run's state (its
//! input precheck, its journal) and dispatches its target to the unit that runs it.
use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use futures::{FutureExt as _, Stream, StreamExt as _};
use tokio::sync::mpsc;
use tracing::Instrument as _;

use super::agent_loop::run_agent;
use super::context::{RunContext, Target, TargetKind};
use super::events::RunEvent;
use super::flow::run_workflow;
use super::guardrails::precheck_input;
use super::journal::RunJournal;
use super::output::Stats;
pub use super::output::{DEFAULT_MAX_PARALLEL_TOOL_CALLS, DEFAULT_MAX_TURNS, RunOutput};
use super::router::run_router;
pub use super::run_error::{RunError, RunFailed};
use super::state::RunState;
use super::telemetry;
use super::workflow::Flow;
use super::{Durability, Runtime};
use crate::store::{NewRun, StoreError};

/// The events of a run as they happen (`Ok(event)`), ending with `Ok(RunEvent::Completed(..))`
/// or with `Err(failed)` (a [`RunFailed`]: the run's id and its [`RunError`]): exactly what
/// [`App::execute`](crate::App::execute) returns.
#[must_use = "a RunStream does nothing unless polled"]
pub struct RunStream {
    run_id: String,
    rx: mpsc::UnboundedReceiver<RunEvent>,
    run: Option<BoxFuture<'static, Result<RunOutput, RunFailed>>>,
    result: Option<Result<RunOutput, RunFailed>>,
}

impl RunStream {
    /// Starts the stream of a run (it makes progress only while polled).
    pub(crate) fn start(rt: Arc<Runtime>, target: Target, input: String, ctx: RunContext) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let state = RunState::new(rt, ctx, Some(tx), target.name().to_string());
        Self {
            run_id: state.run_id().to_string(),
            rx,
            run: Some(Box::pin(run(state, target, input))),
            result: None,
        }
    }
}

impl fmt::Debug for RunStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunStream")
            .field("run_id", &self.run_id)
            .field("running", &self.run.is_some())
            .finish()
    }
}

impl RunStream {
    /// The run's id, known before the first poll: a run that stops (blocked, failed, waiting
    /// for approval) is found by it ([`App::runs`](crate::App::runs),
    /// [`App::resume_run`](crate::App::resume_run)) without reading its `RunStarted` event.
    /// It is the context's ([`RunContext::run_id`]) when one was given.
    ///
    /// ```
    /// use agboss_core::{App, RunContext, Target};
    /// let app = App::builder().build().unwrap();
    /// let stream = app.stream(Target::named("nobody"), "hi", RunContext::new().run_id("run-7"));
    /// assert_eq!(stream.run_id(), "run-7");
    /// ```
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Drains the stream and returns the run's result, with every event before it.
    pub async fn collect_all(mut self) -> (Vec<RunEvent>, Result<RunOutput, RunFailed>) {
        let mut events = Vec::new();
        while let Some(item) = self.next().await {
            match item {
                Ok(RunEvent::Completed(out)) => return (events, Ok(out)),
                Ok(ev) => events.push(ev),
                Err(e) => return (events, Err(e)),
            }
        }
        // Unreachable in practice: the stream always ends with `Completed` or an error.
        (
            events,
            Err(RunFailed::new(self.run_id, RunError::Cancelled)),
        )
    }
}

impl Stream for RunStream {
    type Item = Result<RunEvent, RunFailed>;

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

/// Runs `target` on `input` with the run's state `run` (made by
/// [`RunState::new`](super::state::RunState::new) for this target), in its run span (see
/// [`telemetry`]): what [`App::execute`](crate::App::execute) awaits (a state without a sink)
/// and a [`RunStream`] polls (with one).
pub(crate) async fn run(
    mut run: RunState,
    target: Target,
    input: String,
) -> Result<RunOutput, RunFailed> {
    let rt = run.rt();
    let workflow = match &target.0 {
        TargetKind::Workflow { .. } | TargetKind::WorkflowDefault(_) => true,
        TargetKind::Named(name) => {
            rt.agent_by_name(name).is_none()
                && rt.router_by_name(name).is_none()
                && rt.workflow_by_name(name).is_some()
        }
        TargetKind::Agent(_) | TargetKind::Router(_) => false,
    };
    let span = telemetry::run_span(
        workflow,
        run.target_name(),
        run.run_id(),
        run.ctx().thread.as_deref(),
    );
    let result = run_untraced(&mut run, target, input)
        .instrument(span.clone())
        .await;
    telemetry::finish_run(&span, &result);
    result.map_err(|error| RunFailed::new(run.run_id(), error))
}

async fn run_untraced(
    run: &mut RunState,
    target: Target,
    input: String,
) -> Result<RunOutput, RunError> {
    let target_name = target.name().to_string();
    run.emit(|| RunEvent::RunStarted {
        run_id: run.run_id().to_string(),
        target: target_name.clone(),
    });
    let mut stats = Stats::default();
    let store = run.rt().store.clone().filter(|_| run.journaled());
    let text = match store {
        None => {
            if run.ctx().thread.is_some() {
                return Err(StoreError::NotConfigured.into());
            }
            run_target(run, target, input, &mut stats).await?
        }
        // Boxed: the journal's store round trips make a large future, which a run without
        // a store need not carry (nor copy at every level above it).
        Some(durability) => {
            Box::pin(run_journaled(
                run,
                durability,
                target,
                input,
                target_name,
                &mut stats,
            ))
            .await?
        }
    };
    Ok(output(run, text, stats))
}

/// A run of an app with a store: opened in (or resumed from) its journal, heartbeated
/// while it runs, closed with its result.
async fn run_journaled(
    run: &mut RunState,
    durability: Durability,
    target: Target,
    input: String,
    target_name: String,
    stats: &mut Stats,
) -> Result<String, RunError> {
    // A blocked input is refused before anything is stored; a rewritten one is stored
    // rewritten.
    let input = match precheck_input(run, &target, &input).await? {
        Some(checked) => {
            run.mark_input_checked();
            checked
        }
        None => input,
    };
    let mut new = NewRun::new(
        run.ctx().tenant_id().unwrap_or_default(),
        run.run_id().to_string(),
        target_name,
        input.clone(),
    );
    new.thread_id = run.ctx().thread.clone();
    // The store is read before anything runs: unavailable, it fails the run here.
    let journal = RunJournal::open(
        durability.store,
        new,
        &durability.worker,
        durability.lease_ttl,
    )
    .await?;
    if journal.replayed_steps > 0 {
        run.emit(|| RunEvent::RunResumed {
            run_id: run.run_id().to_string(),
            replayed_steps: journal.replayed_steps,
        });
    }
    run.attach_journal(journal);
    let run = &*run;
    let journal = run.journal().expect("attached above");
    let result = tokio::select! {
        biased;
        result = run_target(run, target, input, stats) => result,
        lost = journal.heartbeat() => Err(RunError::Store(lost)),
    };
    if let Err(err) = journal.close(&result).await {
        tracing::warn!(run_id = %run.run_id(), error = %err, "could not record the end of the run");
        if result.is_ok() {
            // The answer is not durable: the caller learns it, and a resume finishes it.
            return Err(err.into());
        }
    }
    result
}

fn output(run: &RunState, text: String, stats: Stats) -> RunOutput {
    RunOutput {
        run_id: run.run_id().to_string(),
        text,
        usage: stats.usage,
        model_turns: stats.model_turns,
        tool_calls: stats.tool_calls,
        routes: stats.routes,
        thread_id: run.ctx().thread.clone(),
        replayed_steps: run.journal().map_or(0, |j| j.replayed_steps),
        output: stats.output,
        reserved: run.budget().count(),
    }
}

/// Dispatches `target` to its unit: the agent loop, the router or the workflow flow.
async fn run_target(
    run: &RunState,
    target: Target,
    input: String,
    stats: &mut Stats,
) -> Result<String, RunError> {
    let rt = Arc::clone(run.rt());
    let unknown = |kind: &str, name: &str| RunError::UnknownTarget {
        kind: kind.to_string(),
        name: name.to_string(),
    };
    match target.0 {
        TargetKind::Agent(name) => {
            let agent = rt
                .agent_by_name(&name)
                .ok_or_else(|| unknown("agent", &name))?;
            run_agent(run, agent, input, stats).await
        }
        TargetKind::Router(name) => {
            let router = rt
                .router_by_name(&name)
                .ok_or_else(|| unknown("router", &name))?;
            Box::pin(run_router(run, router, input, stats)).await
        }
        TargetKind::Workflow { name, flow } => {
            let wf = rt
                .workflow_by_name(&name)
                .ok_or_else(|| unknown("workflow", &name))?;
            Box::pin(run_workflow(run, wf, &flow, input, stats)).await
        }
        TargetKind::WorkflowDefault(name) => {
            let wf = rt
                .workflow_by_name(&name)
                .ok_or_else(|| unknown("workflow", &name))?;
            let flow = Flow::default_for(wf);
            Box::pin(run_workflow(run, wf, &flow, input, stats)).await
        }
        TargetKind::Named(name) => {
            if let Some(agent) = rt.agent_by_name(&name) {
                run_agent(run, agent, input, stats).await
            } else if let Some(router) = rt.router_by_name(&name) {
                Box::pin(run_router(run, router, input, stats)).await
            } else if let Some(wf) = rt.workflow_by_name(&name) {
                let flow = Flow::default_for(wf);
                Box::pin(run_workflow(run, wf, &flow, input, stats)).await
            } else {
                Err(unknown("agent, router or workflow", &name))
            }
        }
    }
}
