//! Runs of agboss-rs on [Restate](https://restate.dev), a durable-execution engine: a thread is a
//! virtual object (`AgbossThread`, keyed by tenant and thread id), a run is an invocation of its
//! exclusive handler `run`, so Restate owns the invocation (it retries it on another worker when
//! one dies), serializes the runs of a thread, starts a run once per idempotency key, and keeps
//! a run paused for approval as an awakeable. The app's engine stays in charge of every step:
//! each attempt is one journaled `ctx.run` that executes or resumes the run on the app's store,
//! whose journal and in-doubt rule make a retried attempt read back completed steps and never
//! rerun a non-idempotent call blindly. When to pick it over SQLite or PostgreSQL alone, a
//! deployment sketch and what happens on each failure: the guide page
//! [`agboss_core::guide::deployment`].
//!
//! ```no_run
//! # async fn f(app: agboss_core::App) -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use agboss_restate::{RestateClient, RunRequest};
//! // A worker: the app served as a Restate deployment.
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:9080").await?;
//! tokio::spawn(agboss_restate::serve(Arc::new(app), listener, std::future::pending::<()>()));
//! // Once: register the workers (or their load balancer), then run through the ingress.
//! let client = RestateClient::new("http://127.0.0.1:8080", "http://127.0.0.1:9070");
//! client.register("http://127.0.0.1:9080").await?;
//! let reply = client
//!     .run("acme", "t1", &RunRequest::new("run-1", "desk-agent", "Refund ACME-7"))
//!     .await?;
//! # let _ = reply; Ok(()) }
//! ```
mod client;
mod key;
mod object;

use restate_sdk::prelude::{Endpoint, HttpServer};

pub use client::{AWAKEABLE_WAIT, RestateClient, RestateError};
pub use key::{object_key, parse_object_key};
pub use object::{AgbossThread, EventSink, OBJECT_NAME, RunReply, RunRequest};

/// The Restate endpoint of an app (`Arc<App>`) or of an [`AgbossThread`] built over one: the
/// `AgbossThread` object over its engine and store. Serve it with the SDK's [`HttpServer`] (or
/// [`serve`]).
pub fn endpoint(object: impl Into<AgbossThread>) -> Endpoint {
    Endpoint::builder().bind(object.into()).build()
}

/// Serves the [`endpoint`] of an app (`Arc<App>`) or of an [`AgbossThread`] on `listener`
/// (HTTP/2 without TLS, what Restate speaks to a deployment) until `shutdown` completes.
///
/// The listener is set to `TCP_NODELAY` first (its connections inherit it): Restate and the
/// endpoint exchange small HTTP/2 frames, and with Nagle's algorithm on, a frame waits for
/// the previous one's ACK, which the server delays (40 ms on Linux) — a floor under every run.
pub async fn serve(
    object: impl Into<AgbossThread>,
    listener: tokio::net::TcpListener,
    shutdown: impl Future,
) {
    // The SDK's server does not set it on the connections it accepts. Failing to set it
    // costs latency only.
    let _ = socket2::SockRef::from(&listener).set_tcp_nodelay(true);
    HttpServer::new(endpoint(object))
        .serve_with_cancel(listener, shutdown)
        .await;
}
