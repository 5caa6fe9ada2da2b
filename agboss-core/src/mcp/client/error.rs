//! What can go wrong talking to an MCP server.
use std::fmt;

/// The last lines a stdio server wrote to its stderr, shown in start and initialize errors.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StderrTail(pub Vec<String>);

impl fmt::Display for StderrTail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return Ok(());
        }
        f.write_str("; its stderr ends with:")?;
        for line in &self.0 {
            write!(f, "\n    {line}")?;
        }
        Ok(())
    }
}

/// An error of an MCP connection or call. A tool call that fails with one is a tool error
/// (`ToolCallErrorKind::ToolFailed`, this error its source), reported per the agent's tool error
/// policy; none of them is a panic.
///
/// ```
/// use agboss_core::mcp::client::McpError;
/// let err = McpError::TimedOut { server: "everything", during: "tools/call `echo`".into(), after_ms: 50 };
/// assert_eq!(err.to_string(), "MCP server `everything` did not answer tools/call `echo` within 50 ms");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The child process could not be started, or the HTTP client not be made.
    #[error("MCP server `{server}` could not be started: {source}{stderr}")]
    Start {
        /// The server.
        server: &'static str,
        /// Why.
        #[source]
        source: std::io::Error,
        /// Its stderr so far.
        stderr: StderrTail,
    },
    /// The MCP session could not be initialized (the server exited, spoke no MCP, refused).
    #[error("MCP server `{server}` did not initialize: {message}{stderr}")]
    Initialize {
        /// The server.
        server: &'static str,
        /// What the SDK reported.
        message: String,
        /// Its stderr so far.
        stderr: StderrTail,
    },
    /// No answer in time.
    #[error("MCP server `{server}` did not answer {during} within {after_ms} ms")]
    TimedOut {
        /// The server.
        server: &'static str,
        /// The request (`initialize`, `tools/list`, ``tools/call `x` ``).
        during: String,
        /// The bound.
        after_ms: u64,
    },
    /// The connection ended (the process died, the stream closed, the peer sent what is not
    /// JSON-RPC; over HTTP, a broken response stream could not be resumed within
    /// [`McpServerConfig::reconnect`](super::McpServerConfig::reconnect)). It is
    /// re-established for the next call.
    #[error("the connection to MCP server `{server}` was lost during {during}: {message}")]
    ConnectionLost {
        /// The server.
        server: &'static str,
        /// The request.
        during: String,
        /// What the SDK reported.
        message: String,
    },
    /// The server answered with a JSON-RPC error (e.g. an unknown tool, invalid params).
    #[error("MCP server `{server}` refused {during}: {message} (code {code})")]
    Refused {
        /// The server.
        server: &'static str,
        /// The request.
        during: String,
        /// The JSON-RPC error code.
        code: i32,
        /// Its message.
        message: String,
    },
    /// The tool ran and reported an error (`isError: true`); the message is the result's text.
    #[error("`{tool}` on MCP server `{server}` failed: {message}")]
    ToolFailed {
        /// The server.
        server: &'static str,
        /// The remote tool.
        tool: String,
        /// The text the tool returned.
        message: String,
    },
    /// A result that does not fit the tool's output: no structured content or JSON text for
    /// an output DTO, or structured content that fails the remote output schema.
    #[error("`{tool}` on MCP server `{server}` returned an invalid result: {message}")]
    InvalidResult {
        /// The server.
        server: &'static str,
        /// The remote tool.
        tool: String,
        /// What is wrong.
        message: String,
    },
    /// The server takes per-tenant credentials
    /// ([`McpServerConfig::credentials`](super::McpServerConfig::credentials)) and the call has
    /// no tenant, or its tenant has no credential for it: the call was not sent. With
    /// [`McpServerConfig::account_channel`](super::McpServerConfig::account_channel), `ticket`
    /// names the request to connect the tenant's account (new, or the one still pending).
    #[error("no credential of {} for MCP server `{server}`{}", match tenant { Some(t) => format!("tenant `{t}`"), None => "a call without tenant".to_string() }, match ticket { Some(t) => format!("; ticket `{t}` asks to connect the account"), None => String::new() })]
    NoCredential {
        /// The server.
        server: &'static str,
        /// The call's tenant (`None`: it had none).
        tenant: Option<String>,
        /// The pending ticket asking a human to connect the account, if one was raised.
        ticket: Option<String>,
    },
    /// The server refused the credential a session was opened with (HTTP 401), and the
    /// credential store could not renew it
    /// ([`CredentialStore::refused`](super::CredentialStore::refused)): the call was not sent.
    #[error("MCP server `{server}` refused the credential: {message}")]
    Unauthorized {
        /// The server.
        server: &'static str,
        /// What the server answered.
        message: String,
    },
    /// The credential store failed: the call was not sent.
    #[error("the credential store failed for tenant `{tenant}` of MCP server `{server}`")]
    Credentials {
        /// The server.
        server: &'static str,
        /// The tenant.
        tenant: String,
        /// Why.
        #[source]
        source: super::CredentialError,
    },
}
