//! How an example drives its runs: in-process ([`RunDriver::local`], what `App::stream` and
//! `App::resume` do), or through a Restate server ([`RunDriver::restate`]): the app serves its
//! Restate endpoint on a free port of this process, registers it as the deployment, starts each
//! run through the ingress with its run id as idempotency key, and approves a ticket through
//! [`RestateClient::decide`] (the channel's checks, then the awakeable the run waits on). A
//! sequence of turns is written once and runs on either driver with the same printed events.
use std::sync::Arc;
use std::time::Duration;

use agboss_core::App;
use agboss_core::engine::{Decision, RunContext, RunError, RunEvent, RunFailed, RunOutput, Target};
use agboss_restate::{AgbossThread, RestateClient, RestateError, RunReply, RunRequest};
use tokio::sync::{Mutex, mpsc, oneshot};
use tokio::task::JoinHandle;

/// Why a driven run did not end with an answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DriveError {
    /// The run stopped (waiting for approval, blocked, failed): the error `App::execute` returns.
    #[error(transparent)]
    Run(#[from] RunError),
    /// The Restate server could not be reached, or refused a call.
    #[error(
        "{0} (is a Restate server running? `bash scripts/restate.sh start` starts the pinned one)"
    )]
    Restate(#[from] RestateError),
    /// This process's endpoint could not serve the runs.
    #[error("the Restate endpoint of this process: {0}")]
    Endpoint(String),
}

impl DriveError {
    /// The run's error, if the run stopped.
    pub fn as_run(&self) -> Option<&RunError> {
        match self {
            Self::Run(err) => Some(err),
            Self::Restate(_) | Self::Endpoint(_) => None,
        }
    }
}

impl From<RunFailed> for DriveError {
    fn from(failed: RunFailed) -> Self {
        Self::Run(failed.into_error())
    }
}

/// The Restate server's URLs of [`RunDriver::restate_from_env`]: `AGBOSS_RESTATE_INGRESS`
/// (default `http://127.0.0.1:8080`) and `AGBOSS_RESTATE_ADMIN` (default
/// `http://127.0.0.1:9070`), Restate's default ports.
pub fn restate_urls_from_env() -> (String, String) {
    let var = |name: &str, default: &str| {
        std::env::var(name)
            .ok()
            .filter(|v| !v.trim().is_empty())
            .unwrap_or_else(|| default.to_string())
    };
    (
        var("AGBOSS_RESTATE_INGRESS", "http://127.0.0.1:8080"),
        var("AGBOSS_RESTATE_ADMIN", "http://127.0.0.1:9070"),
    )
}

/// Runs an app's turns in-process or through Restate, printing each run's events as
/// [`RunStream::print`](agboss_core::engine::RunStream::print) does.
pub enum RunDriver {
    /// In-process: `App::stream`, `App::resume`.
    Local(App),
    /// Through a Restate server.
    Restate(RestateDriver),
}

/// The Restate side of [`RunDriver`].
pub struct RestateDriver {
    app: App,
    client: RestateClient,
    events: Mutex<mpsc::UnboundedReceiver<Result<RunEvent, RunFailed>>>,
    /// The invocation of a run that stopped for approval: its reply comes once it ends.
    paused: Mutex<Option<JoinHandle<Result<RunReply, RestateError>>>>,
    _stop: oneshot::Sender<()>,
}

impl RunDriver {
    /// Runs in-process.
    pub fn local(app: &App) -> Self {
        Self::Local(app.clone())
    }

    /// Runs through the Restate server at `ingress` / `admin`: checks that it answers (within
    /// 5 s), serves the app's endpoint (with `targets`, the workflows with a custom flow this
    /// process runs, see [`AgbossThread::target`]) on a free port of 127.0.0.1 until the driver
    /// is dropped, and registers it as the deployment.
    pub async fn restate(
        app: &App,
        ingress: &str,
        admin: &str,
        targets: impl IntoIterator<Item = Target>,
    ) -> Result<Self, DriveError> {
        let client = RestateClient::new(ingress, admin);
        client.wait_ready(Duration::from_secs(5)).await?;
        let (tx, rx) = mpsc::unbounded_channel();
        let mut object = AgbossThread::new(Arc::new(app.clone())).events(tx);
        for target in targets {
            object = object.target(target);
        }
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| DriveError::Endpoint(e.to_string()))?;
        let port = listener
            .local_addr()
            .map_err(|e| DriveError::Endpoint(e.to_string()))?
            .port();
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(agboss_restate::serve(object, listener, stopped));
        client.register(&format!("http://127.0.0.1:{port}")).await?;
        eprintln!(
            "== Restate: ingress {ingress}, admin {admin}; this process serves the deployment http://127.0.0.1:{port}"
        );
        Ok(Self::Restate(RestateDriver {
            app: app.clone(),
            client,
            events: Mutex::new(rx),
            paused: Mutex::new(None),
            _stop: stop,
        }))
    }

    /// [`RunDriver::restate`] at the URLs of [`restate_urls_from_env`].
    pub async fn restate_from_env(
        app: &App,
        targets: impl IntoIterator<Item = Target>,
    ) -> Result<Self, DriveError> {
        let (ingress, admin) = restate_urls_from_env();
        Self::restate(app, &ingress, &admin, targets).await
    }

    /// Runs `target` on `input` (`ctx` gives the tenant and the thread), printing its events;
    /// returns how it ended. Through Restate the run id is new and is the idempotency key; a run
    /// that stops for approval keeps its invocation open until [`RunDriver::approve`].
    pub async fn run(
        &self,
        target: Target,
        input: &str,
        ctx: RunContext,
    ) -> Result<RunOutput, DriveError> {
        match self {
            Self::Local(app) => Ok(app.stream(target, input, ctx).print().await?),
            Self::Restate(r) => r.run(target, input, ctx).await,
        }
    }

    /// Approves (or rejects, or edits) a ticket of thread `thread_id` and waits for its run to
    /// end; the resumed run's events are not printed (as `App::resume` shows none).
    pub async fn approve(
        &self,
        thread_id: &str,
        decision: Decision,
        ctx: RunContext,
    ) -> Result<RunOutput, DriveError> {
        match self {
            Self::Local(app) => Ok(app.resume(thread_id, decision, ctx).await?),
            Self::Restate(r) => r.approve(decision, ctx).await,
        }
    }
}

impl RestateDriver {
    async fn run(
        &self,
        target: Target,
        input: &str,
        ctx: RunContext,
    ) -> Result<RunOutput, DriveError> {
        let tenant = ctx.tenant_id().unwrap_or_default().to_string();
        let thread = ctx.thread_id().unwrap_or_default().to_string();
        let run_id = format!("run_{}", uuid::Uuid::new_v4().simple());
        let request = RunRequest::new(run_id, target.name(), input);
        let client = self.client.clone();
        let mut call = tokio::spawn(async move { client.run(&tenant, &thread, &request).await });
        let mut events = self.events.lock().await;
        loop {
            tokio::select! {
                biased;
                item = events.recv() => match item {
                    Some(Ok(RunEvent::Completed(out))) => {
                        call.await.map_err(join)??;
                        print_event(&RunEvent::Completed(out.clone()));
                        return Ok(out);
                    }
                    Some(Ok(event)) => print_event(&event),
                    Some(Err(failed)) => {
                        if matches!(*failed, RunError::AwaitingApproval { .. }) {
                            *self.paused.lock().await = Some(call);
                        } else {
                            call.await.map_err(join)??;
                        }
                        return Err(failed.into());
                    }
                    None => return Err(DriveError::Endpoint("it stopped".into())),
                },
                reply = &mut call => return reply_only(reply.map_err(join)??),
            }
        }
    }

    async fn approve(&self, decision: Decision, ctx: RunContext) -> Result<RunOutput, DriveError> {
        let tenant = ctx.tenant_id().unwrap_or_default();
        self.client.decide(&self.app, tenant, decision).await?;
        let call = self.paused.lock().await.take();
        let mut events = self.events.lock().await;
        // The resumed attempt's events, to its end.
        let ended = loop {
            match events.recv().await {
                Some(Ok(RunEvent::Completed(out))) => break Ok(out),
                Some(Ok(_)) => {}
                Some(Err(failed)) if matches!(*failed, RunError::AwaitingApproval { .. }) => {
                    return Err(failed.into());
                }
                Some(Err(failed)) => break Err(failed),
                None => return Err(DriveError::Endpoint("it stopped".into())),
            }
        };
        if let Some(call) = call {
            call.await.map_err(join)??;
        }
        Ok(ended?)
    }
}

/// A run whose invocation answered without this process seeing its end (another worker ran it).
fn reply_only(reply: RunReply) -> Result<RunOutput, DriveError> {
    Err(DriveError::Endpoint(format!(
        "the run ended without this process seeing its end: {reply:?}"
    )))
}

fn join(err: tokio::task::JoinError) -> DriveError {
    DriveError::Endpoint(format!("the invocation's task: {err}"))
}

/// One event as [`RunStream::print`](agboss_core::engine::RunStream::print) prints it: every
/// event but text deltas and passing guardrail verdicts, one indented line each.
fn print_event(event: &RunEvent) {
    use std::io::Write as _;
    let quiet = matches!(event, RunEvent::TextDelta { .. })
        || matches!(event, RunEvent::GuardrailVerdict { verdict, .. } if *verdict == "pass");
    if !quiet {
        let _ = writeln!(std::io::stdout(), "{event:#}");
    }
}
