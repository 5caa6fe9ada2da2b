//! Streamable HTTP: rmcp's [`StreamableHttpService`] behind an authentication layer, as an
//! axum [`Router`], and the running server ([`McpHttpServer`]).
use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::McpServerError;
use super::auth::{Caller, McpAuthError, McpRequestMeta, REFUSED, SharedAuthenticator};
use super::handler::McpToolServer;
use super::limits::{HttpLimits, serve, with_body_limits};
use super::session::SessionOwners;
use crate::di::TenantContext;

/// Ends every session of a router's rmcp service.
pub(crate) type EndSessions = Box<dyn FnOnce() + Send>;

/// Who authenticates the requests of a router.
#[derive(Clone)]
pub(crate) enum Authn {
    /// An [`McpAuthenticator`](super::McpAuthenticator).
    Custom(SharedAuthenticator),
    /// The OAuth resource server: bearer JWTs, scopes, metadata.
    #[cfg(feature = "mcp-oauth")]
    OAuth(Arc<super::oauth::OAuthResourceServer>),
}

impl Authn {
    /// The caller of a request, or the answer that refuses it.
    async fn caller(&self, meta: &McpRequestMeta<'_>) -> Result<Caller, Response> {
        match self {
            Self::Custom(authenticator) => match authenticator.authenticate(meta).await {
                Ok(tenant) => Ok(Caller {
                    tenant,
                    principal: authenticator.principal(meta),
                    scopes: None,
                }),
                Err(error) => Err(refusal(&error)),
            },
            #[cfg(feature = "mcp-oauth")]
            Self::OAuth(oauth) => super::oauth::gate_authenticate(oauth, meta).await,
        }
    }
}

/// The router of one MCP endpoint at `path`: every request is authenticated first (when an
/// authenticator is set), then handed to rmcp; with the function that ends every session.
/// With OAuth, each `tools/call`'s scopes are checked once the body is read, and the
/// protected resource metadata is served beside the endpoint, without authentication.
pub(crate) fn router(
    handler: McpToolServer,
    authn: Option<Authn>,
    path: &str,
    allowed_hosts: Option<Vec<String>>,
    limits: HttpLimits,
) -> (Router, EndSessions) {
    let mut config =
        StreamableHttpServerConfig::default().with_max_request_body_bytes(limits.max_body_bytes);
    if let Some(hosts) = allowed_hosts {
        config = config.with_allowed_hosts(hosts);
    }
    let token = config.cancellation_token.clone();
    let sessions = Arc::new(LocalSessionManager::default());
    let owners = Arc::new(SessionOwners::new(Arc::clone(&sessions)));
    let service = StreamableHttpService::new(move || Ok(handler.clone()), sessions, config);
    #[cfg_attr(not(feature = "mcp-oauth"), allow(unused_mut))]
    let mut endpoint = Router::new().nest_service(path, service);
    #[cfg(feature = "mcp-oauth")]
    if let Some(Authn::OAuth(oauth)) = &authn {
        endpoint = endpoint.layer(axum::middleware::from_fn_with_state(
            Arc::clone(oauth),
            super::oauth::scope_layer,
        ));
    }
    let mut router = with_body_limits(endpoint, limits);
    if let Some(authn) = authn {
        #[cfg(feature = "mcp-oauth")]
        let metadata = match &authn {
            Authn::OAuth(oauth) => Some(super::oauth::metadata_router(oauth)),
            Authn::Custom(_) => None,
        };
        router = router.layer(axum::middleware::from_fn_with_state(
            Gate { authn, owners },
            authenticate,
        ));
        #[cfg(feature = "mcp-oauth")]
        if let Some(metadata) = metadata {
            router = router.merge(metadata);
        }
    }
    (router, Box::new(move || token.cancel()))
}

/// The state of the authentication layer.
#[derive(Clone)]
struct Gate {
    authn: Authn,
    owners: Arc<SessionOwners>,
}

/// The authentication layer: a request the authenticator refuses is answered here, so rmcp
/// never reads it and no hook runs. A request naming a session (`Mcp-Session-Id`) must come
/// from the tenant and principal that opened it, else it is answered `404` like an unknown
/// session (nothing says the session exists); a session opened here is bound to its caller,
/// and forgotten when its owner ends it.
async fn authenticate(State(gate): State<Gate>, mut request: Request, next: Next) -> Response {
    let meta = McpRequestMeta::http(request.headers());
    let caller = match gate.authn.caller(&meta).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    let session = request
        .headers()
        .get(SESSION_ID)
        .map(|id| id.to_str().map(str::to_owned));
    match session {
        Some(Ok(id)) if gate.owners.owns(&id, &caller) => {
            let ends = request.method() == Method::DELETE;
            request.extensions_mut().insert(caller);
            let response = next.run(request).await;
            if ends && response.status().is_success() {
                gate.owners.unbind(&id);
            }
            response
        }
        Some(_) => {
            tracing::warn!(
                tenant = caller.tenant.as_ref().map(TenantContext::tenant_id),
                "MCP request names a session it did not open: refused as unknown"
            );
            session_not_found()
        }
        None => {
            request.extensions_mut().insert(caller.clone());
            let response = next.run(request).await;
            if let Some(id) = response
                .headers()
                .get(SESSION_ID)
                .and_then(|id| id.to_str().ok())
            {
                gate.owners.bind(id, caller).await;
            }
            response
        }
    }
}

/// The header that names a session.
const SESSION_ID: &str = "mcp-session-id";

/// rmcp's own answer to an unknown session.
fn session_not_found() -> Response {
    (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response()
}

/// The answer to a refused request: `401` (`WWW-Authenticate: Bearer`) or `503`, with a
/// JSON-RPC error body (id `null`: the request was not read) that clients show as such.
fn refusal(error: &McpAuthError) -> Response {
    let status = match error {
        McpAuthError::Unavailable(source) => {
            tracing::warn!(error = %source, "MCP authenticator unavailable");
            StatusCode::SERVICE_UNAVAILABLE
        }
        _ => StatusCode::UNAUTHORIZED,
    };
    let reason = status.canonical_reason().unwrap_or("Refused");
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": REFUSED, "message": format!("{reason}: {error}") },
    });
    let mut response = (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response();
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static("Bearer"),
        );
    }
    response
}

/// An MCP server running over streamable HTTP (see
/// [`McpServe::http`](super::McpServe::http)). Dropping it leaves the server running on its
/// task; [`McpHttpServer::shutdown`] stops it.
pub struct McpHttpServer {
    local_addr: SocketAddr,
    path: String,
    stop: oneshot::Sender<()>,
    end_sessions: EndSessions,
    task: JoinHandle<std::io::Result<()>>,
}

impl fmt::Debug for McpHttpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpHttpServer")
            .field("local_addr", &self.local_addr)
            .field("path", &self.path)
            .finish()
    }
}

impl McpHttpServer {
    pub(crate) async fn start(
        listener: tokio::net::TcpListener,
        router: Router,
        path: String,
        end_sessions: EndSessions,
        limits: HttpLimits,
    ) -> Result<Self, McpServerError> {
        let local_addr = listener.local_addr().map_err(McpServerError::Io)?;
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(serve(listener, router, limits, stopped));
        Ok(Self {
            local_addr,
            path,
            stop,
            end_sessions,
            task,
        })
    }

    /// The address it listens on (with the port the system chose for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The endpoint's URL, e.g. `http://127.0.0.1:8080/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}{}", self.local_addr, self.path)
    }

    /// Stops accepting connections, ends every session and waits for the server's task.
    pub async fn shutdown(self) -> Result<(), McpServerError> {
        (self.end_sessions)();
        let _ = self.stop.send(());
        self.task
            .await
            .map_err(McpServerError::Task)?
            .map_err(McpServerError::Io)
    }

    /// Serves until the server fails (or forever).
    pub async fn wait(self) -> Result<(), McpServerError> {
        self.task
            .await
            .map_err(McpServerError::Task)?
            .map_err(McpServerError::Io)
    }
}
