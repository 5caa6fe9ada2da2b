//! [`McpServerError`]: why an MCP server could not be built or could not serve.
use std::net::SocketAddr;

use super::McpAuthError;

/// Why an MCP server could not be built or could not serve.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpServerError {
    /// [`McpServePath::agent`](super::McpServePath::agent) names no agent of the app.
    #[error("the app has no agent `{name}` to serve over MCP")]
    UnknownAgent {
        /// The name.
        name: String,
    },
    /// Two served tools have the same name (MCP tools of an agent's servers, say).
    #[error("two served tools are named `{name}`: MCP tool names must be unique")]
    DuplicateTool {
        /// The name.
        name: String,
    },
    /// HTTP without an authenticator, and [`McpServe::allow_unauthenticated`](super::McpServe::allow_unauthenticated) was not called.
    #[error(
        "serving MCP over HTTP needs an authenticator (`McpServe::authenticator`), or `allow_unauthenticated()` to serve without one"
    )]
    NoAuthenticator,
    /// The address is not a loopback address, and [`McpServe::allow_non_loopback`](super::McpServe::allow_non_loopback) was not
    /// called.
    #[error(
        "refusing to serve MCP on {addr}: not a loopback address (call `allow_non_loopback()` to bind it)"
    )]
    NotLoopback {
        /// The address.
        addr: SocketAddr,
    },
    /// The address could not be resolved or bound.
    #[error("could not bind `{addr}` for MCP over HTTP")]
    Bind {
        /// The address as given.
        addr: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// [`OAuthResourceServer::tool_scopes`](super::oauth::OAuthResourceServer::tool_scopes) names a
    /// tool the server does not serve (a typo would leave the real tool unguarded).
    #[error("scopes are given for `{name}`, which this MCP server does not serve")]
    UnknownScopedTool {
        /// The name.
        name: String,
    },
    /// The stdio session's authenticator refused it.
    #[error("the MCP session was refused by its authenticator")]
    Unauthenticated(#[source] McpAuthError),
    /// The session did not start (the client sent no valid `initialize`, or went away).
    #[error("the MCP session did not start")]
    Start(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// An I/O error of the server.
    #[error("MCP server I/O failed")]
    Io(#[source] std::io::Error),
    /// The server's task failed.
    #[error("the MCP server's task failed")]
    Task(#[source] tokio::task::JoinError),
}
