//! The virtual object `AgbossThread`: one per tenant's thread, a run is an invocation of its
//! exclusive handler `run`, so the runs of a thread are serialized by Restate.
//!
//! Each attempt of a run is one journaled `ctx.run` (`attempt-{n}`) that executes or resumes the
//! run on the app's engine and store: the engine journals each model turn and each guarded call
//! in the store (a `ToolStarted` before the tool runs, a `ToolFinished` after), so when Restate
//! runs an unfinished attempt again on another worker (it executes a `ctx.run` at least once),
//! the engine reads back every completed step and applies the in-doubt rule to a call that
//! started and has no recorded end: a retry is never a blind rerun. A run paused for approval
//! waits on one awakeable per pending ticket (its id kept in the object's state under
//! `awakeable:{ticket}`), completed by [`RestateClient::decide`](crate::RestateClient::decide),
//! or until the ticket's expiry (a durable timer); the next attempt resumes the run (and
//! expires a ticket past its expiry, as a takeover does on the SQL stores).
//!
//! A run request names its target; [`AgbossThread::target`] gives a name its own [`Target`] (a
//! workflow with a custom flow), and [`AgbossThread::events`] hands each attempt's events to the
//! process that serves the object (what [`RunStream`](agboss_core::engine::RunStream) yields in-process).
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use agboss_core::App;
use agboss_core::engine::RunStream;
use agboss_core::engine::{RunContext, RunError, RunEvent, RunFailed, RunOutput, Target};
use agboss_core::store::{
    NewThread, RunStatus, RunStore as _, StoreError, TicketState, TicketStore as _,
};
use futures::StreamExt as _;
use restate_sdk::prelude::*;
use serde::{Deserialize, Serialize};

use crate::key::parse_object_key;

/// The name of the virtual object (the first segment of its ingress path).
pub const OBJECT_NAME: &str = "AgbossThread";

/// What a run invocation is given: its id (also the ingress idempotency key the client sends),
/// the target's name and the input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunRequest {
    /// The run id, unique within the tenant.
    pub run_id: String,
    /// The agent, router or workflow to run.
    pub target: String,
    /// The user's message.
    pub input: String,
}

impl RunRequest {
    /// A run `run_id` of `target` on `input`.
    ///
    /// ```
    /// let req = agboss_restate::RunRequest::new("run-1", "desk-agent", "Hello");
    /// assert_eq!(req.target, "desk-agent");
    /// ```
    pub fn new(
        run_id: impl Into<String>,
        target: impl Into<String>,
        input: impl Into<String>,
    ) -> Self {
        Self {
            run_id: run_id.into(),
            target: target.into(),
            input: input.into(),
        }
    }
}

/// How a run invocation ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunReply {
    /// With a final answer.
    Completed {
        /// The run.
        run_id: String,
        /// The answer.
        text: String,
        /// Journal steps read back instead of done again by the attempt that finished it.
        replayed_steps: u64,
    },
    /// A call of a tool that is not idempotent started and has no recorded end: settle it with
    /// [`App::resolve_in_doubt`], then invoke the run again (a new idempotency key).
    InDoubt {
        /// The run.
        run_id: String,
        /// The call.
        call_id: String,
    },
    /// With an error (the run's [`RunError`] as text).
    Failed {
        /// The run.
        run_id: String,
        /// Why.
        error: String,
    },
}

/// What one attempt ended with (journaled as the `ctx.run`'s result).
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "attempt", rename_all = "snake_case")]
enum Attempt {
    Done(RunReply),
    Awaiting { tickets: Vec<String> },
}

/// Where [`AgbossThread::events`] sends a run's events: each [`RunEvent`] of an attempt as it
/// happens, then how the attempt ended (`Ok(RunEvent::Completed(..))` or `Err(failed)`, as
/// [`RunStream`] ends). An attempt that Restate runs again (a store that was down, a lease still
/// held) sends its events again and no end; a worker that dies mid-attempt sends no end either.
pub type EventSink = tokio::sync::mpsc::UnboundedSender<Result<RunEvent, RunFailed>>;

/// The virtual object of every thread, over one app (its engine, its store).
///
/// ```
/// use std::sync::Arc;
/// use agboss_core::{App, Target};
/// use agboss_restate::AgbossThread;
/// let (events, _rx) = tokio::sync::mpsc::unbounded_channel();
/// let object = AgbossThread::new(Arc::new(App::builder().build().unwrap()))
///     .target(Target::workflow_named("desk-workflow"))
///     .events(events);
/// let _endpoint = agboss_restate::endpoint(object);
/// ```
pub struct AgbossThread {
    app: Arc<App>,
    targets: Arc<HashMap<String, Target>>,
    events: Option<EventSink>,
}

impl AgbossThread {
    /// The object over `app`: a request's target is looked up by name
    /// ([`Target::named`]).
    pub fn new(app: Arc<App>) -> Self {
        Self {
            app,
            targets: Arc::default(),
            events: None,
        }
    }

    /// Runs the requests naming `target` (its [`Target::name`]) with `target` itself: how a
    /// workflow with a custom flow ([`Target::workflow_with`]) runs through Restate. Every
    /// worker of the deployment must give it (the flow is code, not data).
    #[must_use]
    pub fn target(mut self, target: Target) -> Self {
        Arc::make_mut(&mut self.targets).insert(target.name().to_string(), target);
        self
    }

    /// Sends each attempt's events to `sink` (see [`EventSink`]): how the process serving the
    /// object shows a run as it happens, as [`App::stream`] does in-process.
    #[must_use]
    pub fn events(mut self, sink: EventSink) -> Self {
        self.events = Some(sink);
        self
    }
}

impl From<Arc<App>> for AgbossThread {
    fn from(app: Arc<App>) -> Self {
        Self::new(app)
    }
}

/// What an attempt needs of its object (cloned into each journaled step).
#[derive(Clone)]
struct Runner {
    app: Arc<App>,
    targets: Arc<HashMap<String, Target>>,
    events: Option<EventSink>,
}

impl Runner {
    fn target(&self, name: &str) -> Target {
        self.targets
            .get(name)
            .cloned()
            .unwrap_or_else(|| Target::named(name))
    }

    /// Runs (or resumes, with the same run id) `target` on `input`, streaming its events to the
    /// sink when there is one.
    async fn run(
        &self,
        target: &str,
        input: &str,
        ctx: RunContext,
    ) -> Result<RunOutput, RunFailed> {
        let target = self.target(target);
        let Some(sink) = &self.events else {
            return self.app.execute(target, input, ctx).await;
        };
        let mut stream: RunStream = self.app.stream(target, input, ctx);
        let run_id = stream.run_id().to_string();
        while let Some(item) = stream.next().await {
            match item {
                Ok(RunEvent::Completed(out)) => return Ok(out),
                Ok(event) => {
                    // A gone receiver is no reason to stop the run.
                    let _ = sink.send(Ok(event));
                }
                Err(failed) => return Err(failed),
            }
        }
        Err(RunFailed::new(run_id, RunError::Cancelled))
    }

    /// Sends how an attempt ended to the sink.
    fn ended(&self, result: Result<RunOutput, RunFailed>) {
        if let Some(sink) = &self.events {
            let _ = sink.send(result.map(RunEvent::Completed));
        }
    }
}

/// The state key of a pending ticket's awakeable id.
pub(crate) fn awakeable_key(ticket_id: &str) -> String {
    format!("awakeable:{ticket_id}")
}

#[restate_sdk::object(name = "AgbossThread")]
impl AgbossThread {
    /// Runs (or goes on with) one run of the thread to its end: completed, failed or in doubt.
    #[handler]
    async fn run(
        &self,
        ctx: ObjectContext<'_>,
        request: Json<RunRequest>,
    ) -> Result<Json<RunReply>, HandlerError> {
        let request = request.into_inner();
        let Some((tenant, thread)) = parse_object_key(ctx.key()) else {
            return Err(TerminalError::new(format!("not a thread key: `{}`", ctx.key())).into());
        };
        let runner = Runner {
            app: Arc::clone(&self.app),
            targets: Arc::clone(&self.targets),
            events: self.events.clone(),
        };
        let mut n = 0u32;
        loop {
            let runner = runner.clone();
            let (tenant_c, thread_c, req) = (tenant.clone(), thread.clone(), request.clone());
            let attempt = ctx
                .run(|| async move { attempt(&runner, &tenant_c, &thread_c, &req).await.map(Json) })
                .name(format!("attempt-{n}"))
                // A dead worker's lease expires within its ttl: try again soon, and keep trying.
                .retry_policy(
                    RunRetryPolicy::new()
                        .initial_delay(Duration::from_millis(50))
                        .exponentiation_factor(2.0)
                        .max_delay(Duration::from_secs(2)),
                )
                .await?
                .into_inner();
            match attempt {
                Attempt::Done(reply) => return Ok(Json(reply)),
                Attempt::Awaiting { tickets } => {
                    let mut waits = Vec::with_capacity(tickets.len());
                    for ticket in &tickets {
                        let (id, decided) = ctx.awakeable::<String>();
                        ctx.set(&awakeable_key(ticket), id);
                        waits.push(decided);
                    }
                    // A ticket decided before its awakeable id was readable is not waited on; a
                    // pending one until its expiry at most (the next attempt expires it).
                    let (app, tenant_c, ids) =
                        (Arc::clone(&self.app), tenant.clone(), tickets.clone());
                    let pending = ctx
                        .run(|| async move { still_pending(&app, &tenant_c, &ids).await.map(Json) })
                        .name(format!("pending-{n}"))
                        .await?
                        .into_inner();
                    for (decided, left_ms) in waits.into_iter().zip(pending) {
                        let Some(left_ms) = left_ms else { continue };
                        let expired = restate_sdk::select! {
                            _ = decided => false,
                            _ = ctx.sleep(Duration::from_millis(left_ms)) => true,
                            else => false,
                        };
                        if expired {
                            break;
                        }
                    }
                    for ticket in &tickets {
                        ctx.clear(&awakeable_key(ticket));
                    }
                }
            }
            n += 1;
        }
    }

    /// The awakeable id a pending ticket of the thread waits on, if any.
    #[handler]
    async fn awakeable(
        &self,
        ctx: SharedObjectContext<'_>,
        ticket_id: String,
    ) -> Result<Option<String>, HandlerError> {
        Ok(ctx.get::<String>(&awakeable_key(&ticket_id)).await?)
    }
}

/// One attempt: starts the run, or takes it up from its journal; a run found finished (the
/// attempt that finished it died before Restate journaled its result) answers from its record.
/// A lease still held by a dead worker, or a store that is down, is a retryable error: Restate
/// runs the attempt again later.
async fn attempt(
    runner: &Runner,
    tenant: &str,
    thread: &str,
    req: &RunRequest,
) -> Result<Attempt, HandlerError> {
    let app = &*runner.app;
    let store = app
        .store()
        .ok_or(StoreError::NotConfigured)
        .map_err(terminal)?;
    let mut ctx = RunContext::new();
    if !tenant.is_empty() {
        ctx = ctx.tenant(tenant);
    }
    let result = match store.run(tenant, &req.run_id).await {
        Ok(record) if record.status != RunStatus::Running => {
            if record.thread_id.as_deref() != Some(thread) {
                return Err(terminal(StoreError::RunNotFound {
                    run_id: req.run_id.clone(),
                }));
            }
            return Ok(Attempt::Done(match record.status {
                RunStatus::Completed => RunReply::Completed {
                    run_id: record.run_id,
                    text: record.output.unwrap_or_default(),
                    replayed_steps: record.steps,
                },
                _ => RunReply::Failed {
                    run_id: record.run_id,
                    error: record.error.unwrap_or_default(),
                },
            }));
        }
        Ok(record) if record.thread_id.as_deref() != Some(thread) => {
            return Err(terminal(StoreError::RunNotFound {
                run_id: req.run_id.clone(),
            }));
        }
        // What `App::resume_run` does, with this object's target of that name.
        Ok(record) => {
            let ctx = ctx.thread(thread).run_id(req.run_id.as_str());
            runner.run(&record.target, &record.input, ctx).await
        }
        Err(StoreError::RunNotFound { .. }) => {
            // The object is the thread: its first run creates it (under the key's tenant).
            match app
                .threads(tenant)
                .create(NewThread::new().id(thread))
                .await
            {
                Ok(_) | Err(StoreError::ThreadExists { .. }) => {}
                Err(err) if retryable(&err) => return Err(err.into()),
                Err(err) => return Err(terminal(err)),
            }
            let ctx = ctx.thread(thread).run_id(req.run_id.as_str());
            runner.run(&req.target, &req.input, ctx).await
        }
        Err(err) if retryable(&err) => return Err(err.into()),
        Err(err) => return Err(terminal(err)),
    };
    let run_id = req.run_id.clone();
    let failed = match result {
        Ok(out) => {
            let done = Attempt::Done(RunReply::Completed {
                run_id,
                text: out.text.clone(),
                replayed_steps: out.replayed_steps,
            });
            runner.ended(Ok(out));
            return Ok(done);
        }
        Err(failed) => failed,
    };
    let attempt = match &*failed {
        RunError::AwaitingApproval { tickets, .. } => Attempt::Awaiting {
            tickets: tickets.iter().map(|t| t.id.clone()).collect(),
        },
        RunError::InDoubt { call_id, .. } => Attempt::Done(RunReply::InDoubt {
            run_id,
            call_id: call_id.clone(),
        }),
        // Another worker's lease (a dead worker's, until it expires), a store that is down:
        // the run is resumable, Restate tries the attempt again (no end to the sink).
        RunError::Store(err) if retryable(err) => match failed.into_error() {
            RunError::Store(err) => return Err(err.into()),
            other => return Err(terminal(other)),
        },
        err => Attempt::Done(RunReply::Failed {
            run_id,
            error: err.to_string(),
        }),
    };
    runner.ended(Err(failed));
    Ok(attempt)
}

/// For each ticket, how long it stays pending (ms until its expiry, at most a year), or `None`
/// when it is not pending (a missing one is not: nothing will decide it).
async fn still_pending(
    app: &App,
    tenant: &str,
    tickets: &[String],
) -> Result<Vec<Option<u64>>, HandlerError> {
    const YEAR_MS: i64 = 365 * 24 * 3600 * 1000;
    let store = app
        .store()
        .ok_or(StoreError::NotConfigured)
        .map_err(terminal)?;
    let now = agboss_core::store::types::now_ms();
    let mut pending = Vec::with_capacity(tickets.len());
    for id in tickets {
        pending.push(match store.ticket(tenant, id).await {
            Ok(ticket) if ticket.state == TicketState::Pending => {
                let left = ticket.expires_at_ms.saturating_sub(now).clamp(0, YEAR_MS);
                Some(u64::try_from(left).unwrap_or(0))
            }
            Ok(_) | Err(StoreError::TicketNotFound { .. }) => None,
            Err(err) if retryable(&err) => return Err(err.into()),
            Err(err) => return Err(terminal(err)),
        });
    }
    Ok(pending)
}

/// Store errors after which the same attempt may succeed later: another worker's lease (a dead
/// worker's, until it expires; or lost to a worker that took over), a backend that is down.
fn retryable(err: &StoreError) -> bool {
    err.is_transient() || matches!(err, StoreError::LeaseLost { .. })
}

fn terminal(err: impl std::fmt::Display) -> HandlerError {
    TerminalError::new(err.to_string()).into()
}
