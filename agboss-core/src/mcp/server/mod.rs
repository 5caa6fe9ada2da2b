//! The app served as an MCP server: [`App::serve_mcp`](crate::App::serve_mcp) exposes the app's
//! tools over stdio or streamable HTTP, on rmcp, on the path chosen with [`McpServePath`]: one
//! agent's path ([`McpServePath::agent`]) or the direct application → tool chains
//! ([`McpServePath::direct_chains`]); no default. [`McpServe::describe`] shows the served
//! path; a served tool lacking an agent path's interceptors is a build warning
//! ([`McpServe::warnings`]).
//!
//! Every inbound `tools/call` runs the tool's whole guarded pipeline through its callback
//! (input validation, the interceptors, the approval point, `run`, the after-hooks, masking
//! and truncation, the app's listeners), and its outcome is read through the one observation
//! policy ([`crate::pipeline::observe`]):
//!
//! | outcome | MCP result |
//! |---|---|
//! | ran | the rendered JSON as text, and as `structuredContent` when it is an object |
//! | `reply_to_model(message)` | `isError: true` with the message (the tool did not run) |
//! | `block(reason)` | `isError: true` with the reason (the tool did not run) |
//! | rejected input | `isError: true`: what was wrong, field by field |
//! | the tool failed | `isError: true`: a safe text naming the error class (the error is logged) |
//! | a guard failed, the call awaits approval | `isError: true`: a fixed text, nothing of the error |
//! | unknown tool | a JSON-RPC error (`-32602`) |
//!
//! Texts built for the caller are masked by the PII policies of the tool's path, like the
//! results. To a client that declares the tasks extension, a call that waits for approval is
//! a task whose id is its approval ticket's, and a `#[tool(long_running)]` call a task too
//! (see the guide's MCP page). `tools/list` gives each tool's name, description and input schema; a native tool
//! whose path neither masks nor truncates its results also declares its output DTO's schema.
//!
//! **Tenants.** Over HTTP every request goes through the [`McpAuthenticator`] first (an axum
//! layer in front of rmcp): a refused request is answered `401` (or `503`) before rmcp reads
//! it, so no hook runs; an accepted one runs as the tenant the authenticator returned. HTTP
//! needs an authenticator unless [`McpServe::allow_unauthenticated`] says otherwise. Over stdio
//! the tenant is [`McpServe::tenant`], or what the authenticator returns once for the session
//! ([`McpRequestMeta::stdio`]: no headers; read the environment, say). With the feature
//! `mcp-oauth`, [`McpServe::oauth`] makes the server an OAuth 2.1 resource server instead
//! (bearer JWTs checked against the issuer's JWKS, scopes per tool, RFC 9728 metadata): see
//! `oauth`.
//!
//! **Sessions.** Over HTTP with the pre-2026 `initialize` handshake, rmcp keeps a session per
//! client (`Mcp-Session-Id`). A session is bound to the tenant and the principal
//! ([`McpAuthenticator::principal`]; by default the bearer token's digest) of the request that
//! opened it: a request naming it (`POST`, the `GET` event stream, the `DELETE` that ends it)
//! with any other tenant or principal, valid credentials or not, is answered `404 Not Found`
//! as an unknown session, before rmcp reads it.
//!
//! **Limits.** Against slow and greedy clients, [`McpServe::http`] serves at most
//! [`max_connections`](McpServe::max_connections) connections at once (256; the next wait
//! unaccepted in the listen backlog) and closes a connection that takes longer than the
//! [`header_timeout`](McpServe::header_timeout) (10 s) to send a request's headers, or stays
//! idle that long between two requests; every router reads a request's body whole within the
//! [`body_timeout`](McpServe::body_timeout) (30 s, else `408`) and the
//! [`max_body_bytes`](McpServe::max_body_bytes) (4 MiB, else `413`) before rmcp sees it. A call
//! that runs long, or an event stream that stays open, is not cut by these.
//!
//! **Duplicate keys.** A tool's input with a key twice in one object is refused with a
//! `duplicate` error at the key's path (rejected input, no hook runs), as
//! [`Dto::from_json_str`](crate::dto::Dto::from_json_str) refuses it for every caller. Over
//! HTTP the body is screened before rmcp parses it into maps (which keep one of the two): the
//! raw text of a `tools/call`'s `arguments` is what the tool's decoder reads, and a key twice
//! elsewhere in a request is answered `400` (JSON-RPC `-32600`). Over stdio each line is
//! screened the same way: the raw arguments are decoded, and a request with a key twice
//! elsewhere is answered with a JSON-RPC error (`-32601`, a method no server has).
//!
//! **Binding.** [`McpServe::http`] binds loopback addresses only, unless
//! [`McpServe::allow_non_loopback`]; rmcp also checks the `Host` header against loopback names
//! unless [`McpServe::allowed_hosts`] lists yours.
//!
//! ```no_run
//! # use agboss_core::{tool, App, ToolError, ToolHandler};
//! # use agboss_core::dto::Dto;
//! # #[derive(Dto, Debug, Clone, PartialEq)]
//! # pub struct EchoDto { #[text(prompt = "Text")] pub text: String }
//! # #[tool(name = "echo-tool", description = "Echoes", input = EchoDto, output = EchoDto)]
//! # pub struct EchoTool;
//! # impl ToolHandler<EchoDto, EchoDto> for EchoTool {
//! #     async fn run(&self, input: EchoDto) -> Result<EchoDto, ToolError> { Ok(input) }
//! # }
//! use agboss_core::mcp::server::BearerTokens;
//!
//! # async fn serve() -> Result<(), Box<dyn std::error::Error>> {
//! let app = App::builder().tool::<EchoTool>().build()?;
//! // Over stdio, as one tenant (an MCP client starts this process):
//! app.serve_mcp().direct_chains().tenant("acme").stdio().await?;
//! // Over streamable HTTP, each request as the tenant of its bearer token:
//! let server = app
//!     .serve_mcp()
//!     .direct_chains()
//!     .authenticator(BearerTokens::new().token("t-acme", "acme"))
//!     .http("127.0.0.1:8080")
//!     .await?;
//! println!("serving {}", server.url()); // http://127.0.0.1:8080/mcp
//! server.wait().await?;
//! # Ok(()) }
//! ```
mod arguments;
mod auth;
mod choice;
mod error;
mod handler;
mod http;
mod limits;
#[cfg(feature = "mcp-oauth")]
pub mod oauth;
mod session;
mod tasks;
mod tools;

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt as _;
use rmcp::model::Implementation;

pub use auth::{BearerTokens, McpAuthError, McpAuthenticator, McpRequestMeta, McpTransportKind};
pub use choice::McpServePath;
pub use error::McpServerError;
pub use handler::McpToolServer;
pub use http::McpHttpServer;
pub use limits::{
    DEFAULT_BODY_TIMEOUT, DEFAULT_HEADER_TIMEOUT, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_CONNECTIONS,
};

use self::auth::SharedAuthenticator;
use self::choice::Resolve;
pub(crate) use self::choice::{ServedPath, ServedSet};
use self::handler::TenantSource;
use self::limits::HttpLimits;
pub(crate) use self::tasks::{ApprovalState, ApprovalTasks, ClaimedCall};
use self::tools::ServedTools;
use crate::di::TenantContext;

/// How an app is served over MCP: which tools, as which tenant, over which transport. Made by
/// [`App::serve_mcp`](crate::App::serve_mcp) and a choice of path ([`McpServePath`]); ends with [`McpServe::stdio`],
/// [`McpServe::http`], [`McpServe::router`] (to mount in an axum app of your own) or
/// [`McpServe::handler`] (for any rmcp transport).
#[must_use = "an McpServe serves nothing until `stdio`, `http`, `router` or `handler` is called"]
pub struct McpServe {
    resolve: Arc<Resolve>,
    served: ServedPath,
    tenant: Option<TenantContext>,
    authenticator: Option<SharedAuthenticator>,
    #[cfg(feature = "mcp-oauth")]
    oauth: Option<Arc<oauth::OAuthResourceServer>>,
    unauthenticated: bool,
    non_loopback: bool,
    allowed_hosts: Option<Vec<String>>,
    path: String,
    implementation: Implementation,
    instructions: Option<String>,
    limits: HttpLimits,
}

impl fmt::Debug for McpServe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServe")
            .field("served", &self.served)
            .field("tenant", &self.tenant)
            .field("authenticator", &self.authenticator.is_some())
            .field("oauth", &self.oauth_resource())
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl McpServe {
    /// A server of `app_name`'s tools on `path`, which `resolve` hands over.
    pub(crate) fn new(app_name: &str, resolve: Arc<Resolve>, path: ServedPath) -> Self {
        let name = if app_name.is_empty() {
            "agboss"
        } else {
            app_name
        };
        Self {
            resolve,
            served: path,
            tenant: None,
            authenticator: None,
            #[cfg(feature = "mcp-oauth")]
            oauth: None,
            unauthenticated: false,
            non_loopback: false,
            allowed_hosts: None,
            path: "/mcp".to_string(),
            implementation: Implementation::new(name, env!("CARGO_PKG_VERSION")),
            instructions: None,
            limits: HttpLimits::default(),
        }
    }

    /// Every call runs as this tenant (stdio; or HTTP with
    /// [`McpServe::allow_unauthenticated`]). An authenticator's tenant wins over it.
    pub fn tenant(mut self, tenant: impl Into<TenantContext>) -> Self {
        self.tenant = Some(tenant.into());
        self
    }

    /// Who may call, and as which tenant (see [`McpAuthenticator`]).
    pub fn authenticator(mut self, authenticator: impl McpAuthenticator) -> Self {
        self.authenticator = Some(Arc::new(authenticator));
        self
    }

    /// Serves HTTP as an OAuth 2.1 resource server (feature `mcp-oauth`): each request's
    /// bearer JWT is checked by `oauth` and runs as the tenant of its claims, each
    /// `tools/call` needs its tool's scopes, and the protected resource metadata is served at
    /// `/.well-known/oauth-protected-resource` (see [`oauth`]). Over HTTP it takes the place
    /// of an [`authenticator`](Self::authenticator); stdio has no tokens (its tenant is
    /// [`McpServe::tenant`] or the authenticator's).
    ///
    /// ```
    /// # use agboss_core::{tool, App, ToolError, ToolHandler};
    /// # use agboss_core::dto::Dto;
    /// # #[derive(Dto, Debug, Clone, PartialEq)]
    /// # pub struct EchoDto { #[text(prompt = "Text")] pub text: String }
    /// # #[tool(name = "echo-tool", description = "Echoes", input = EchoDto, output = EchoDto)]
    /// # pub struct EchoTool;
    /// # impl ToolHandler<EchoDto, EchoDto> for EchoTool {
    /// #     async fn run(&self, input: EchoDto) -> Result<EchoDto, ToolError> { Ok(input) }
    /// # }
    /// use agboss_core::mcp::server::McpServerError;
    /// use agboss_core::mcp::server::oauth::OAuthResourceServer;
    ///
    /// let app = App::builder().tool::<EchoTool>().build()?;
    /// let oauth = || OAuthResourceServer::new("https://mcp.example.com/mcp",
    ///     "https://id.example.com", "https://id.example.com/jwks");
    /// let router = app.serve_mcp().direct_chains().oauth(oauth()?.tool_scopes("echo-tool", ["echo"])).router()?;
    /// let typo = app.serve_mcp().direct_chains().oauth(oauth()?.tool_scopes("echo-tool2", ["echo"])).router();
    /// assert!(matches!(typo, Err(McpServerError::UnknownScopedTool { .. })));
    /// # let _ = router;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "mcp-oauth")]
    pub fn oauth(mut self, oauth: oauth::OAuthResourceServer) -> Self {
        self.oauth = Some(Arc::new(oauth));
        self
    }

    /// Serves HTTP without an authenticator: every request is accepted, as the fixed
    /// [`McpServe::tenant`] if any. Only for a trusted network.
    pub fn allow_unauthenticated(mut self) -> Self {
        self.unauthenticated = true;
        self
    }

    /// Lets [`McpServe::http`] bind an address that is not loopback.
    pub fn allow_non_loopback(mut self) -> Self {
        self.non_loopback = true;
        self
    }

    /// The `Host` names (or `host:port`) HTTP requests may carry; rmcp's default is
    /// `localhost`, `127.0.0.1` and `::1` (against DNS rebinding).
    pub fn allowed_hosts(mut self, hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_hosts = Some(hosts.into_iter().map(Into::into).collect());
        self
    }

    /// The HTTP path of the endpoint (default `/mcp`).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        let path = path.into();
        self.path = if path.starts_with('/') {
            path
        } else {
            format!("/{path}")
        };
        self
    }

    /// How long an HTTP connection may take to send a request's headers, and stay idle
    /// between two requests, before it is closed (default [`DEFAULT_HEADER_TIMEOUT`], 10 s):
    /// a client that connects and sends nothing holds no connection slot longer. Applies to
    /// [`McpServe::http`] (mount [`McpServe::router`] in a server of your own with its own).
    pub fn header_timeout(mut self, timeout: Duration) -> Self {
        self.limits.header_timeout = timeout;
        self
    }

    /// How long a request's body may take to arrive once its headers have (default
    /// [`DEFAULT_BODY_TIMEOUT`], 30 s); a slower one is answered `408 Request Timeout` and its
    /// connection closed. The body is read whole before rmcp sees the request; the time of the
    /// call itself is not bounded here.
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.limits.body_timeout = timeout;
        self
    }

    /// The largest request body in bytes (default [`DEFAULT_MAX_BODY_BYTES`], 4 MiB); a larger
    /// one is answered `413 Payload Too Large` (at once when its `Content-Length` says so).
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.limits.max_body_bytes = bytes;
        self
    }

    /// How many connections [`McpServe::http`] serves at once (default
    /// [`DEFAULT_MAX_CONNECTIONS`], 256): the next ones wait, unaccepted, in the system's
    /// listen backlog until a connection ends (an idle one ends after the
    /// [header timeout](McpServe::header_timeout)), so a flood of idle connections cannot
    /// exhaust the process's file descriptors.
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.limits.max_connections = connections;
        self
    }

    /// The name and version the server gives in `initialize` (default: the app's name and
    /// agboss-core's version).
    pub fn server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.implementation = Implementation::new(name, version);
        self
    }

    /// Instructions for the client's model, given in `initialize`.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// The OAuth resource URI served, if any.
    fn oauth_resource(&self) -> Option<&str> {
        #[cfg(feature = "mcp-oauth")]
        return self.oauth.as_ref().map(|o| o.resource());
        #[cfg(not(feature = "mcp-oauth"))]
        None
    }

    /// The rmcp handler, serving every call as the fixed [`McpServe::tenant`] (no
    /// authenticator is consulted): serve it over any rmcp transport with
    /// `rmcp::ServiceExt::serve`.
    ///
    /// ```
    /// # use agboss_core::{tool, App, ToolError, ToolHandler};
    /// # use agboss_core::dto::Dto;
    /// # #[derive(Dto, Debug, Clone, PartialEq)]
    /// # pub struct EchoDto { #[text(prompt = "Text")] pub text: String }
    /// # #[tool(name = "echo-tool", description = "Echoes", input = EchoDto, output = EchoDto)]
    /// # pub struct EchoTool;
    /// # impl ToolHandler<EchoDto, EchoDto> for EchoTool {
    /// #     async fn run(&self, input: EchoDto) -> Result<EchoDto, ToolError> { Ok(input) }
    /// # }
    /// use agboss_core::mcp::server::McpServerError;
    ///
    /// let app = App::builder().tool::<EchoTool>().build().unwrap();
    /// assert!(app.serve_mcp().direct_chains().tenant("acme").handler().is_ok());
    /// let err = app.serve_mcp().agent("no-such-agent").handler().unwrap_err();
    /// assert!(matches!(err, McpServerError::UnknownAgent { .. }));
    /// ```
    pub fn handler(&self) -> Result<McpToolServer, McpServerError> {
        self.build(TenantSource::Fixed(self.tenant.clone()))
    }

    fn build(&self, tenant: TenantSource) -> Result<McpToolServer, McpServerError> {
        let ServedSet {
            callbacks,
            bound,
            warnings,
            approvals,
        } = self.served_set()?;
        for warning in &warnings {
            tracing::warn!(server = %self.implementation.name, "{warning}");
        }
        let tools = ServedTools::new(callbacks, bound.iter())
            .map_err(|name| McpServerError::DuplicateTool { name })?;
        Ok(McpToolServer::new(
            Arc::new(tools),
            tenant,
            self.implementation.clone(),
            self.instructions.clone(),
            tasks::ServedTasks::new(approvals),
        ))
    }

    /// Serves one client on this process's standard input and output, until it closes them.
    /// The tenant is what the authenticator returns for the session (asked once, without
    /// headers), else [`McpServe::tenant`]. Nothing else may write to stdout meanwhile.
    pub async fn stdio(self) -> Result<(), McpServerError> {
        let mut tenant = self.tenant.clone();
        if let Some(authenticator) = &self.authenticator {
            let meta = McpRequestMeta::stdio();
            if let Some(t) = authenticator
                .authenticate(&meta)
                .await
                .map_err(McpServerError::Unauthenticated)?
            {
                tenant = Some(t);
            }
        }
        let raw = Arc::new(arguments::RawByRequest::default());
        let handler = self
            .build(TenantSource::Fixed(tenant))?
            .with_raw_arguments(Arc::clone(&raw));
        let (stdin, stdout) = rmcp::transport::stdio_pipes();
        let running = handler
            .serve((arguments::ScreenedLines::new(stdin, raw), stdout))
            .await
            .map_err(|e| McpServerError::Start(Box::new(e)))?;
        running.waiting().await.map_err(McpServerError::Task)?;
        Ok(())
    }

    /// The HTTP endpoint as an axum router (at [`McpServe::path`]), to serve or mount in an
    /// app of your own: every request passes the authenticator first.
    ///
    /// ```
    /// # use agboss_core::{tool, App, ToolError, ToolHandler};
    /// # use agboss_core::dto::Dto;
    /// # #[derive(Dto, Debug, Clone, PartialEq)]
    /// # pub struct EchoDto { #[text(prompt = "Text")] pub text: String }
    /// # #[tool(name = "echo-tool", description = "Echoes", input = EchoDto, output = EchoDto)]
    /// # pub struct EchoTool;
    /// # impl ToolHandler<EchoDto, EchoDto> for EchoTool {
    /// #     async fn run(&self, input: EchoDto) -> Result<EchoDto, ToolError> { Ok(input) }
    /// # }
    /// use agboss_core::mcp::server::{BearerTokens, McpServerError};
    ///
    /// let app = App::builder().tool::<EchoTool>().build().unwrap();
    /// let tokens = BearerTokens::new().token("t-acme", "acme");
    /// let router: axum::Router = app.serve_mcp().direct_chains().authenticator(tokens).router().unwrap();
    /// // Without an authenticator, HTTP must be asked for explicitly:
    /// assert!(matches!(app.serve_mcp().direct_chains().router(), Err(McpServerError::NoAuthenticator)));
    /// # let _ = router;
    /// ```
    pub fn router(&self) -> Result<axum::Router, McpServerError> {
        self.http_router().map(|(router, _)| router)
    }

    fn http_router(&self) -> Result<(axum::Router, http::EndSessions), McpServerError> {
        let authn = self.authenticator.clone().map(http::Authn::Custom);
        #[cfg(feature = "mcp-oauth")]
        let authn = self.oauth.clone().map(http::Authn::OAuth).or(authn);
        let tenant = match (&authn, self.unauthenticated) {
            (Some(_), _) => TenantSource::PerRequest,
            (None, true) => TenantSource::Fixed(self.tenant.clone()),
            (None, false) => return Err(McpServerError::NoAuthenticator),
        };
        let handler = self.build(tenant)?;
        #[cfg(feature = "mcp-oauth")]
        if let Some(oauth) = &self.oauth
            && let Some(name) = oauth
                .scoped_tools()
                .find(|name| !handler.tool_names().any(|served| served == *name))
        {
            return Err(McpServerError::UnknownScopedTool {
                name: name.to_string(),
            });
        }
        Ok(http::router(
            handler,
            authn,
            &self.path,
            self.allowed_hosts.clone(),
            self.limits,
        ))
    }

    /// Binds `addr` (a loopback address unless [`McpServe::allow_non_loopback`]; port 0 picks
    /// a free one) and serves streamable HTTP on a task of the current runtime.
    pub async fn http(self, addr: impl AsRef<str>) -> Result<McpHttpServer, McpServerError> {
        let addr = addr.as_ref();
        let bind_error = |source| McpServerError::Bind {
            addr: addr.to_string(),
            source,
        };
        let addrs: Vec<SocketAddr> = tokio::net::lookup_host(addr)
            .await
            .map_err(bind_error)?
            .collect();
        if !self.non_loopback
            && let Some(&remote) = addrs.iter().find(|a| !a.ip().is_loopback())
        {
            return Err(McpServerError::NotLoopback { addr: remote });
        }
        let (router, end_sessions) = self.http_router()?;
        let listener = tokio::net::TcpListener::bind(addrs.as_slice())
            .await
            .map_err(bind_error)?;
        McpHttpServer::start(
            listener,
            router,
            self.path.clone(),
            end_sessions,
            self.limits,
        )
        .await
    }
}
