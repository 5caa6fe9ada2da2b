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
use std::sync::Arc;
use std::time::Duration;

use agboss_core::App;
use agboss_core::engine::{RunContext, RunError, Target};
use agboss_core::store::{
    NewThread, RunStatus, RunStore as _, StoreError, TicketState, TicketStore as _,
};
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

/// The virtual object of every thread, over one app (its engine, its store).
pub struct AgbossThread {
    app: Arc<App>,
}

impl AgbossThread {
    /// The object over `app`.
    pub fn new(app: Arc<App>) -> Self {
        Self { app }
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
        let mut n = 0u32;
        loop {
            let app = Arc::clone(&self.app);
            let (tenant_c, thread_c, req) = (tenant.clone(), thread.clone(), request.clone());
            let attempt = ctx
                .run(|| async move { attempt(&app, &tenant_c, &thread_c, &req).await.map(Json) })
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
    app: &App,
    tenant: &str,
    thread: &str,
    req: &RunRequest,
) -> Result<Attempt, HandlerError> {
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
        Ok(_) => app.resume_run(&req.run_id, ctx).await,
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
            app.execute(
                Target::named(req.target.as_str()),
                req.input.as_str(),
                ctx.thread(thread).run_id(req.run_id.as_str()),
            )
            .await
        }
        Err(err) if retryable(&err) => return Err(err.into()),
        Err(err) => return Err(terminal(err)),
    };
    let run_id = req.run_id.clone();
    match result.map_err(agboss_core::RunFailed::into_error) {
        Ok(out) => Ok(Attempt::Done(RunReply::Completed {
            run_id,
            text: out.text,
            replayed_steps: out.replayed_steps,
        })),
        Err(RunError::AwaitingApproval { tickets, .. }) => Ok(Attempt::Awaiting {
            tickets: tickets.into_iter().map(|t| t.id).collect(),
        }),
        Err(RunError::InDoubt { call_id, .. }) => {
            Ok(Attempt::Done(RunReply::InDoubt { run_id, call_id }))
        }
        // Another worker's lease (a dead worker's, until it expires), a store that is down:
        // the run is resumable, Restate tries the attempt again.
        Err(RunError::Store(err)) if retryable(&err) => Err(err.into()),
        Err(err) => Ok(Attempt::Done(RunReply::Failed {
            run_id,
            error: err.to_string(),
        })),
    }
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
