//! The HTTP side of the resource server: the authentication of a request's bearer token
//! ([`authenticate`]), the scope check of each `tools/call` once the body is read
//! ([`scope_layer`]), the challenges of a refusal (`401`/`403` with `WWW-Authenticate`,
//! `503`) and the protected resource metadata routes ([`metadata_router`]).
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};
use serde::Deserialize;

use super::{OAuthError, OAuthResourceServer};
use crate::mcp::server::auth::{Caller, McpRequestMeta, REFUSED};

/// The well-known path of protected resource metadata (RFC 9728 §3).
pub(crate) const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The metadata, at the well-known path and at it with the resource's path appended (where
/// the challenge points), for `GET` without credentials.
pub(crate) fn metadata_router(oauth: &OAuthResourceServer) -> Router {
    let body = oauth.metadata().to_string();
    let serve = move || {
        let body = body.clone();
        async move {
            (
                [
                    (header::CONTENT_TYPE, "application/json"),
                    (header::CACHE_CONTROL, "max-age=3600"),
                ],
                body,
            )
                .into_response()
        }
    };
    let mut router = Router::new().route(WELL_KNOWN, axum::routing::get(serve.clone()));
    if !oauth.resource_path.is_empty() {
        router = router.route(
            &format!("{WELL_KNOWN}{}", oauth.resource_path),
            axum::routing::get(serve),
        );
    }
    router
}

/// Why a request is refused here.
enum Refusal {
    /// No bearer token.
    Missing,
    /// The token is not valid.
    Invalid(OAuthError),
    /// It lacks these scopes (the whole set needed is named).
    Scope(Vec<String>),
}

/// The caller of a request, from its bearer token: or the answer that refuses it.
pub(crate) async fn authenticate(
    oauth: &OAuthResourceServer,
    meta: &McpRequestMeta<'_>,
) -> Result<Caller, Response> {
    let Some(token) = meta.bearer_token() else {
        return Err(refusal(oauth, Refusal::Missing));
    };
    let identity = match oauth.validate(token).await {
        Ok(identity) => identity,
        Err(error) => return Err(refusal(oauth, Refusal::Invalid(error))),
    };
    let needed = oauth.scopes_for(None);
    if needed.iter().any(|s| !identity.has_scope(s)) {
        return Err(refusal(
            oauth,
            Refusal::Scope(needed.into_iter().map(str::to_owned).collect()),
        ));
    }
    Ok(Caller {
        tenant: Some(identity.tenant),
        principal: Some(identity.principal),
        scopes: Some(identity.scopes.into()),
    })
}

/// One JSON-RPC message, as far as the scope check reads it.
#[derive(Deserialize)]
struct Peek {
    method: Option<String>,
    params: Option<PeekParams>,
}

#[derive(Deserialize)]
struct PeekParams {
    name: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Messages {
    One(Peek),
    Batch(Vec<Peek>),
}

/// The scope check, inside the body layer (the body is read and in memory): a `tools/call`
/// (alone or in a batch) of a tool whose scopes the caller lacks is answered `403` before
/// rmcp reads it. A body that is not JSON-RPC as this reads it is answered `400` (rmcp would
/// refuse it too; nothing is let through unread).
pub(crate) async fn scope_layer(
    State(oauth): State<Arc<OAuthResourceServer>>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let scopes = request
        .extensions()
        .get::<Caller>()
        .and_then(|c| c.scopes.clone())
        .unwrap_or_default();
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let messages = match serde_json::from_slice::<Messages>(&bytes) {
        Ok(Messages::One(one)) => vec![one],
        Ok(Messages::Batch(many)) => many,
        Err(_) => return bad_request(),
    };
    for message in &messages {
        if message.method.as_deref() != Some("tools/call") {
            continue;
        }
        let tool = message.params.as_ref().and_then(|p| p.name.as_deref());
        let needed = oauth.scopes_for(tool);
        if needed.iter().any(|s| !scopes.iter().any(|have| have == s)) {
            tracing::debug!(tool, "MCP call refused: insufficient scope");
            return refusal(
                &oauth,
                Refusal::Scope(needed.into_iter().map(str::to_owned).collect()),
            );
        }
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

fn bad_request() -> Response {
    json_error(
        StatusCode::BAD_REQUEST,
        -32600,
        "Invalid Request: not a JSON-RPC message",
    )
}

/// The answer to a refusal, with its challenge.
fn refusal(oauth: &OAuthResourceServer, refusal: Refusal) -> Response {
    let metadata = oauth.metadata_url();
    let (status, challenge, message) = match refusal {
        Refusal::Missing => (
            StatusCode::UNAUTHORIZED,
            format!("Bearer resource_metadata=\"{metadata}\""),
            "Unauthorized: the request carries no access token",
        ),
        Refusal::Invalid(OAuthError::KeysUnavailable(error)) => {
            tracing::warn!(%error, "MCP request refused: the issuer's keys are unavailable");
            return json_error(
                StatusCode::SERVICE_UNAVAILABLE,
                REFUSED,
                "Service Unavailable: the access token cannot be checked now",
            );
        }
        Refusal::Invalid(error) => {
            tracing::debug!(%error, "MCP request refused: invalid access token");
            (
                StatusCode::UNAUTHORIZED,
                format!("Bearer error=\"invalid_token\", resource_metadata=\"{metadata}\""),
                "Unauthorized: the access token is not valid",
            )
        }
        Refusal::Scope(needed) => (
            StatusCode::FORBIDDEN,
            format!(
                "Bearer error=\"insufficient_scope\", scope=\"{}\", resource_metadata=\"{metadata}\"",
                needed.join(" ")
            ),
            "Forbidden: the access token lacks a scope this request needs",
        ),
    };
    let mut response = json_error(status, REFUSED, message);
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// A JSON-RPC error answer (id `null`: the request was not read).
fn json_error(status: StatusCode, code: i64, message: &str) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": code, "message": message },
    });
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}
