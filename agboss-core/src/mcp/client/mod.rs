//! MCP servers as connections of an app (feature `mcp`).
//!
//! Connect each server once ([`McpServer::connect`] with a [`McpServerConfig`]: a child
//! process over stdio, or streamable HTTP) and give it to the builder
//! ([`AppBuilder::mcp_server`](crate::AppBuilder::mcp_server)). Its tools then are tools of
//! the app in two ways, both under the same cascade, pipeline, listeners and events as a
//! `#[tool]`:
//!
//! - one remote tool declared as a first-class tool with `#[mcp_tool(server = .., remote = ..)]`
//!   (with input/output DTOs, or the remote schemas);
//! - every tool of a server, taken by an agent or the application (`mcp_servers = [..]`, or
//!   [`AppBuilder::mcp_server_tools`](crate::AppBuilder::mcp_server_tools)), named
//!   [`server_tool_name`] (`<server>__<remote>`).
//!
//! A server that dies mid-call is noticed within seconds over both transports: over stdio
//! its process ends; over streamable HTTP the call's response stream breaks and is resumed
//! only within a bounded reconnection ([`McpServerConfig::reconnect`]: 3 attempts within
//! 5 s by default). Either way the call fails with [`McpError::ConnectionLost`], not at its
//! time limit, and the next call connects again.
//!
//! With [`McpServerConfig::credentials`] (HTTP), each call carries its tenant's own credential
//! from a [`CredentialStore`], on a session pooled per tenant and credential; with
//! [`McpServerConfig::account_channel`] too, a call whose tenant has none asks a human to
//! connect the account (a ticket on that channel).
mod accounts;
mod config;
mod connection;
mod credentials;
mod dto;
mod error;
#[cfg(feature = "mcp-oauth")]
mod oauth;
mod pool;
mod reconnect;
mod registry;
mod remote;
mod store_credentials;
mod tool_meta;

pub(crate) use accounts::{AccountDesk, AccountRequests};
pub use config::{
    DEFAULT_CALL_TIMEOUT, DEFAULT_CONNECT_TIMEOUT, DEFAULT_RECONNECT_ATTEMPTS,
    DEFAULT_RECONNECT_WINDOW, McpServerConfig, McpTransport,
};
pub use connection::{McpRemoteTool, McpServer};
pub use credentials::{
    CredentialError, CredentialStore, DEFAULT_MAX_TENANT_CONNECTIONS, InMemoryCredentials,
    McpCredential,
};
pub use dto::{McpArguments, McpResult};
pub use error::{McpError, StderrTail};
#[cfg(feature = "mcp-oauth")]
pub use oauth::{OAuthClient, OAuthGrant, OAuthRefreshError, OAuthTokens};
pub use registry::server_tool_name;
#[doc(hidden)]
pub use remote::McpRemote;
pub use store_credentials::StoreCredentials;
pub use tool_meta::McpToolMeta;
