//! The HTTP server's limits against slow and greedy clients ([`HttpLimits`]): the accept loop
//! of [`McpServe::http`](super::McpServe::http) (a connection limit, a header-read timeout on
//! hyper's HTTP/1 connections) and the body layer of every router (a body timeout and size
//! limit, read before rmcp sees the request).
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};
use futures::StreamExt as _;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, oneshot, watch};

use super::arguments::{Screened, screen};

/// The limits of an HTTP MCP server (set on [`McpServe`](super::McpServe); the defaults are
/// the `DEFAULT_*` constants).
#[derive(Debug, Clone, Copy)]
pub(crate) struct HttpLimits {
    pub(crate) header_timeout: Duration,
    pub(crate) body_timeout: Duration,
    pub(crate) max_body_bytes: usize,
    pub(crate) max_connections: usize,
}

/// How long a connection may take to send a request's headers, and stay idle between two
/// requests: 10 s.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a request's body may take to arrive, from its headers on: 30 s.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// The largest request body: 4 MiB (rmcp's own limit).
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// How many connections are served at once: 256.
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;

impl Default for HttpLimits {
    fn default() -> Self {
        Self {
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_connections: DEFAULT_MAX_CONNECTIONS,
        }
    }
}

/// Adds the body layer to `router`: every request's body is read whole, within the body
/// timeout (else `408`) and the size limit (else `413`), and screened for keys twice in one
/// object (see [`screen`]), before the inner service sees it.
pub(crate) fn with_body_limits(router: Router, limits: HttpLimits) -> Router {
    router.layer(axum::middleware::from_fn_with_state(limits, read_body))
}

async fn read_body(State(limits): State<HttpLimits>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limits.max_body_bytes as u64) {
        return closing(StatusCode::PAYLOAD_TOO_LARGE);
    }
    let read = async {
        let mut stream = body.into_data_stream();
        let mut bytes = Vec::new();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|_| StatusCode::BAD_REQUEST)?;
            if chunk.len() > limits.max_body_bytes - bytes.len() {
                return Err(StatusCode::PAYLOAD_TOO_LARGE);
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(bytes)
    };
    match tokio::time::timeout(limits.body_timeout, read).await {
        Ok(Ok(bytes)) => {
            let mut parts = parts;
            match screen(&bytes) {
                Screened::Faithful => {}
                Screened::Raw(raw) => {
                    parts.extensions.insert(raw);
                }
                Screened::Refused => return duplicate_refused(),
            }
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
        Ok(Err(status)) => closing(status),
        Err(_) => closing(StatusCode::REQUEST_TIMEOUT),
    }
}

/// The answer to a request with a key twice outside its arguments: `400` with a JSON-RPC
/// error (id `null`: the request was not read).
fn duplicate_refused() -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": -32600,
            "message": "Invalid Request: a key appears more than once in one object; send each key once",
        },
    });
    (
        StatusCode::BAD_REQUEST,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// An error answer after which the connection is closed (its body may be half read).
fn closing(status: StatusCode) -> Response {
    let text = status.canonical_reason().unwrap_or("Refused");
    (status, [(header::CONNECTION, "close")], text).into_response()
}

/// Serves `router` on `listener` until `stop` resolves (or its sender is dropped): at most
/// `max_connections` connections at once (the next wait in the listen backlog, unaccepted),
/// each an HTTP/1 connection that must send a request's headers within the header timeout,
/// also between two requests. On stop, accepts no more and waits for every connection to end
/// gracefully.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    limits: HttpLimits,
    mut stop: oneshot::Receiver<()>,
) -> std::io::Result<()> {
    let max = u32::try_from(limits.max_connections)
        .unwrap_or(u32::MAX)
        .max(1);
    let slots = Arc::new(Semaphore::new(max as usize));
    let (closing_tx, closing_rx) = watch::channel(false);
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    loop {
        let slot = tokio::select! {
            slot = Arc::clone(&slots).acquire_owned() => match slot {
                Ok(slot) => slot,
                Err(_) => break, // never closed
            },
            _ = &mut stop => break,
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    // Out of file descriptors, say: wait a little rather than spin.
                    tracing::warn!(%error, "MCP server: accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut stop => break,
        };
        let connection = builder.serve_connection(
            TokioIo::new(stream),
            TowerToHyperService::new(router.clone()),
        );
        let mut closing = closing_rx.clone();
        tokio::spawn(async move {
            let _slot = slot;
            let mut connection = std::pin::pin!(connection);
            let stopping = async move {
                let _ = closing.wait_for(|closing| *closing).await;
            };
            tokio::select! {
                _ = connection.as_mut() => {}
                () = stopping => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.as_mut().await;
                }
            }
        });
    }
    drop(listener);
    let _ = closing_tx.send(true);
    // Every connection has ended when every slot is back.
    let _ = slots.acquire_many(max).await;
    Ok(())
}
