//! [`RestateClient`]: what an app or a test says to the Restate server: register a worker's
//! deployment (admin API), invoke a run through the ingress with its run id as idempotency key,
//! and complete a decided ticket's awakeable.
use std::time::Duration;

use agboss_core::App;
use agboss_core::engine::{Decision, RunError};
use agboss_core::store::{Ticket, TicketState};

use crate::key::{object_key, url_segment};
use crate::object::{OBJECT_NAME, RunReply, RunRequest};

/// Why a call to the Restate server failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RestateError {
    /// The server could not be reached, or its answer could not be read.
    #[error("{what}: {source}")]
    Http {
        /// The call.
        what: String,
        /// The cause.
        #[source]
        source: reqwest::Error,
    },
    /// The server answered with an error status.
    #[error("{what}: HTTP {status}: {body}")]
    Status {
        /// The call.
        what: String,
        /// The status.
        status: u16,
        /// The body of the answer.
        body: String,
    },
    /// The answer was not what the call returns.
    #[error("{what}: unexpected answer: {source}")]
    Decode {
        /// The call.
        what: String,
        /// The cause.
        #[source]
        source: serde_json::Error,
    },
    /// The ticket was decided, and no run waited on it through Restate within
    /// [`AWAKEABLE_WAIT`]. The run goes on when it is invoked again.
    #[error("ticket `{ticket_id}` was decided, and no run waits on it through Restate")]
    NotWaiting {
        /// The ticket.
        ticket_id: String,
    },
    /// The decision was refused (see [`App::decide`]).
    #[error(transparent)]
    Decide(#[from] RunError),
}

/// How long [`RestateClient::decide`] looks for the awakeable of a decided ticket.
pub const AWAKEABLE_WAIT: Duration = Duration::from_secs(30);

/// A client of one Restate server: its ingress and its admin API.
///
/// ```
/// let client = agboss_restate::RestateClient::new("http://127.0.0.1:8080", "http://127.0.0.1:9070");
/// # let _ = client;
/// ```
#[derive(Debug, Clone)]
pub struct RestateClient {
    http: reqwest::Client,
    ingress: String,
    admin: String,
}

impl RestateClient {
    /// A client of the server whose ingress and admin API are at these URLs.
    pub fn new(ingress: impl Into<String>, admin: impl Into<String>) -> Self {
        // reqwest is built with `rustls-no-provider` in this workspace: even plain HTTP needs
        // a process-wide crypto provider.
        agboss_core::__private::ensure_tls_provider();
        Self {
            http: reqwest::Client::new(),
            ingress: ingress.into().trim_end_matches('/').to_string(),
            admin: admin.into().trim_end_matches('/').to_string(),
        }
    }

    /// Registers (or registers again, with `force`) the deployment of workers serving
    /// [`endpoint`](crate::endpoint) at `uri` (one worker, or a load balancer in front of
    /// several): Restate discovers the `AgbossThread` object there and invokes it.
    pub async fn register(&self, uri: &str) -> Result<(), RestateError> {
        let what = format!("register the deployment {uri}");
        let body = serde_json::json!({ "uri": uri, "force": true });
        let response = self
            .http
            .post(format!("{}/deployments", self.admin))
            .json(&body)
            .send()
            .await
            .map_err(|source| http(&what, source))?;
        check(&what, response).await.map(drop)
    }

    /// Runs `request` on `tenant`'s thread `thread_id` and waits for its end. The run id is the
    /// idempotency key: the same request sent again (a retry after a timeout, a second client)
    /// attaches to the one invocation and gets its reply; the run is started once.
    pub async fn run(
        &self,
        tenant: &str,
        thread_id: &str,
        request: &RunRequest,
    ) -> Result<RunReply, RestateError> {
        self.run_keyed(tenant, thread_id, request, &request.run_id)
            .await
    }

    /// [`RestateClient::run`] with another idempotency key: how a run goes on after its
    /// invocation ended ([`RunReply::InDoubt`], once the call is settled with
    /// [`App::resolve_in_doubt`]), since the run id's invocation keeps its reply.
    pub async fn run_keyed(
        &self,
        tenant: &str,
        thread_id: &str,
        request: &RunRequest,
        idempotency_key: &str,
    ) -> Result<RunReply, RestateError> {
        let what = format!("run `{}` on thread `{thread_id}`", request.run_id);
        let response = self
            .http
            .post(self.handler_url(tenant, thread_id, "run"))
            .header("idempotency-key", idempotency_key)
            .json(request)
            .send()
            .await
            .map_err(|source| http(&what, source))?;
        let body = check(&what, response).await?;
        serde_json::from_str(&body).map_err(|source| RestateError::Decode { what, source })
    }

    /// Decides one of `tenant`'s tickets with [`App::decide`] (the channel's authorization, the
    /// edit's validation, once only), then completes the awakeable its run waits on, so the run
    /// goes on, on whichever worker Restate invokes. The run stores the awakeable's id once its
    /// attempt stopped on the ticket, a moment after the ticket was created (later when that
    /// attempt's worker died and another one runs it again, and then that attempt may find the
    /// ticket decided and go on without waiting): the id is looked for until the run took the
    /// ticket up, [`AWAKEABLE_WAIT`] at most. Returns the decided ticket.
    pub async fn decide(
        &self,
        app: &App,
        tenant: &str,
        decision: Decision,
    ) -> Result<Ticket, RestateError> {
        let ticket = app.decide(tenant, decision).await?;
        let thread = ticket.thread_id.clone().unwrap_or_default();
        let deadline = tokio::time::Instant::now() + AWAKEABLE_WAIT;
        let id = loop {
            if let Some(id) = self.waiting_on(tenant, &thread, &ticket.id).await? {
                break id;
            }
            // The run went on without waiting: it took the decided ticket up.
            let now = app.tickets(tenant).get(&ticket.id).await;
            if now.is_ok_and(|t| t.state != TicketState::Decided) {
                return Ok(ticket);
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(RestateError::NotWaiting {
                    ticket_id: ticket.id.clone(),
                });
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let what = format!("the awakeable of ticket `{}`", ticket.id);
        let response = self
            .http
            .post(format!(
                "{}/restate/awakeables/{}/resolve",
                self.ingress,
                url_segment(&id)
            ))
            .json(&ticket.state.as_str())
            .send()
            .await
            .map_err(|source| http(&what, source))?;
        check(&what, response).await?;
        Ok(ticket)
    }

    /// The awakeable id the run of `tenant`'s ticket `ticket_id` (on thread `thread_id`) waits
    /// on, if it waits: the run is suspended on it, no worker holds it.
    pub async fn waiting_on(
        &self,
        tenant: &str,
        thread_id: &str,
        ticket_id: &str,
    ) -> Result<Option<String>, RestateError> {
        let what = format!("the awakeable of ticket `{ticket_id}`");
        let response = self
            .http
            .post(self.handler_url(tenant, thread_id, "awakeable"))
            .json(&ticket_id)
            .send()
            .await
            .map_err(|source| http(&what, source))?;
        let body = check(&what, response).await?;
        // `None` is an empty answer.
        if body.trim().is_empty() {
            return Ok(None);
        }
        serde_json::from_str(&body).map_err(|source| RestateError::Decode { what, source })
    }

    /// Waits (until `timeout`) for the server's ingress to answer.
    pub async fn wait_ready(&self, timeout: Duration) -> Result<(), RestateError> {
        let what = "the ingress health check".to_string();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let result = self
                .http
                .get(format!("{}/restate/health", self.ingress))
                .send()
                .await;
            match result {
                Ok(r) if r.status().is_success() => return Ok(()),
                Ok(r) if tokio::time::Instant::now() >= deadline => {
                    return check(&what, r).await.map(drop);
                }
                Err(source) if tokio::time::Instant::now() >= deadline => {
                    return Err(http(&what, source));
                }
                _ => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    }

    fn handler_url(&self, tenant: &str, thread_id: &str, handler: &str) -> String {
        format!(
            "{}/{OBJECT_NAME}/{}/{handler}",
            self.ingress,
            url_segment(&object_key(tenant, thread_id))
        )
    }
}

fn http(what: &str, source: reqwest::Error) -> RestateError {
    RestateError::Http {
        what: what.to_string(),
        source,
    }
}

/// The body of a successful answer, or the error status with its body.
async fn check(what: &str, response: reqwest::Response) -> Result<String, RestateError> {
    let status = response.status();
    let body = response.text().await.map_err(|source| http(what, source))?;
    if status.is_success() {
        Ok(body)
    } else {
        Err(RestateError::Status {
            what: what.to_string(),
            status: status.as_u16(),
            body,
        })
    }
}
