//! How to reach an MCP server: a child process over stdio, or streamable HTTP.
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use super::credentials::{CredentialStore, PerTenant};
use crate::di::TenantContext;

/// The default bound of one `tools/call`: 60 s.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// The default bound of starting and initializing a server and listing its tools: 30 s.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// The default count of reconnections of a broken HTTP response stream: 3.
pub const DEFAULT_RECONNECT_ATTEMPTS: usize = 3;
/// The default window of those reconnections: 5 s.
pub const DEFAULT_RECONNECT_WINDOW: Duration = Duration::from_secs(5);

/// One MCP server an app uses: its name (what `#[mcp_tool(server = ..)]` and
/// `mcp_servers = [..]` refer to), how to reach it and its time limits.
///
/// ```
/// use std::time::Duration;
/// use agboss_core::mcp::client::McpServerConfig;
///
/// let everything = McpServerConfig::stdio("everything", "node")
///     .args(["node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"])
///     .env("NODE_ENV", "production")
///     .call_timeout(Duration::from_secs(10));
/// assert_eq!(everything.name(), "everything");
///
/// let remote = McpServerConfig::http("crm", "http://127.0.0.1:8931/mcp").bearer_token("s3cret");
/// assert_eq!(remote.name(), "crm");
/// ```
#[derive(Debug, Clone)]
pub struct McpServerConfig {
    pub(crate) name: &'static str,
    pub(crate) transport: McpTransport,
    pub(crate) call_timeout: Duration,
    pub(crate) connect_timeout: Duration,
    pub(crate) reconnect_attempts: usize,
    pub(crate) reconnect_window: Duration,
    /// Per-tenant credentials (HTTP only).
    pub(crate) per_tenant: Option<PerTenant>,
    /// The channel a missing credential raises an account request on.
    pub(crate) account_channel: Option<&'static str>,
}

/// How the client reaches the server.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum McpTransport {
    /// A child process spoken to over its stdin and stdout. Its stderr is captured (logged
    /// at `debug` and kept for error messages), never inherited.
    Stdio {
        /// The program.
        command: OsString,
        /// Its arguments.
        args: Vec<OsString>,
        /// Environment variables set for it (on top of the inherited environment).
        env: Vec<(OsString, OsString)>,
        /// Its working directory (default: the current one).
        current_dir: Option<PathBuf>,
    },
    /// Streamable HTTP.
    Http {
        /// The endpoint, e.g. `http://127.0.0.1:8931/mcp`.
        url: String,
        /// Headers sent with every request (e.g. `authorization`).
        headers: Vec<(String, String)>,
    },
}

impl McpServerConfig {
    fn new(name: &'static str, transport: McpTransport) -> Self {
        Self {
            name,
            transport,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            reconnect_attempts: DEFAULT_RECONNECT_ATTEMPTS,
            reconnect_window: DEFAULT_RECONNECT_WINDOW,
            per_tenant: None,
            account_channel: None,
        }
    }

    /// A server started as a child process, spoken to over stdio.
    pub fn stdio(name: &'static str, command: impl Into<OsString>) -> Self {
        Self::new(
            name,
            McpTransport::Stdio {
                command: command.into(),
                args: Vec::new(),
                env: Vec::new(),
                current_dir: None,
            },
        )
    }

    /// A server reached over streamable HTTP at `url`.
    pub fn http(name: &'static str, url: impl Into<String>) -> Self {
        Self::new(
            name,
            McpTransport::Http {
                url: url.into(),
                headers: Vec::new(),
            },
        )
    }

    /// One more argument of the child process (stdio only; ignored for HTTP).
    #[must_use]
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        if let McpTransport::Stdio { args, .. } = &mut self.transport {
            args.push(arg.into());
        }
        self
    }

    /// More arguments of the child process (stdio only).
    #[must_use]
    pub fn args(mut self, more: impl IntoIterator<Item = impl Into<OsString>>) -> Self {
        if let McpTransport::Stdio { args, .. } = &mut self.transport {
            args.extend(more.into_iter().map(Into::into));
        }
        self
    }

    /// An environment variable of the child process (stdio only).
    #[must_use]
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        if let McpTransport::Stdio { env, .. } = &mut self.transport {
            env.push((key.into(), value.into()));
        }
        self
    }

    /// The working directory of the child process (stdio only).
    #[must_use]
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        if let McpTransport::Stdio { current_dir, .. } = &mut self.transport {
            *current_dir = Some(dir.into());
        }
        self
    }

    /// A header sent with every HTTP request (HTTP only).
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let McpTransport::Http { headers, .. } = &mut self.transport {
            headers.push((name.into(), value.into()));
        }
        self
    }

    /// `authorization: Bearer <token>` on every HTTP request (HTTP only).
    #[must_use]
    pub fn bearer_token(self, token: impl AsRef<str>) -> Self {
        let value = format!("Bearer {}", token.as_ref());
        self.header("authorization", value)
    }

    /// The bound of one `tools/call` (default [`DEFAULT_CALL_TIMEOUT`]; a `#[mcp_tool]`'s own
    /// `timeout_ms` bounds it further). A call past it fails with
    /// [`McpError::TimedOut`](super::McpError::TimedOut) and the connection is re-established
    /// for the next call.
    #[must_use]
    pub fn call_timeout(mut self, limit: Duration) -> Self {
        self.call_timeout = limit;
        self
    }

    /// The bound of starting the server, initializing the session and listing its tools
    /// (default [`DEFAULT_CONNECT_TIMEOUT`]).
    #[must_use]
    pub fn connect_timeout(mut self, limit: Duration) -> Self {
        self.connect_timeout = limit;
        self
    }

    /// How a broken response stream of an HTTP server is reconnected (HTTP only): a call's
    /// answer comes on a stream that rmcp resumes when it breaks, with at most `attempts`
    /// reconnections (the first at once, then after 250 ms, 500 ms, 1 s, ...) whose waits add
    /// up to no more than `window`; each attempt's TCP connect is bounded by `window` too.
    /// When they fail (the server was killed, say), the call fails with
    /// [`McpError::ConnectionLost`](super::McpError::ConnectionLost) and the next call
    /// connects again, instead of the call waiting for its whole time limit. Defaults:
    /// [`DEFAULT_RECONNECT_ATTEMPTS`] (3) within [`DEFAULT_RECONNECT_WINDOW`] (5 s), so a
    /// refused server is noticed within about 2 s.
    ///
    /// ```
    /// use std::time::Duration;
    /// use agboss_core::mcp::client::McpServerConfig;
    ///
    /// let patient = McpServerConfig::http("crm", "http://127.0.0.1:8931/mcp")
    ///     .reconnect(6, Duration::from_secs(30));
    /// # let _ = patient;
    /// ```
    #[must_use]
    pub fn reconnect(mut self, attempts: usize, window: Duration) -> Self {
        self.reconnect_attempts = attempts;
        self.reconnect_window = window;
        self
    }

    /// Each call runs with its tenant's own credential from `store` (HTTP only): the run's
    /// tenant is looked up per call, the call is sent on a session opened with that credential
    /// (pooled per tenant and credential, at most
    /// [`max_tenant_connections`](Self::max_tenant_connections)), and a call without a tenant
    /// or whose tenant has no credential fails with
    /// [`McpError::NoCredential`](super::McpError::NoCredential) without being sent. The
    /// static [`header`](Self::header)s still go with every request. [`McpServer::connect`]
    /// lists the tools as [`list_tools_as`](Self::list_tools_as), else with the static headers
    /// alone (a service account's token, say). A stdio server has one process for the whole
    /// app, so it cannot take them: `connect` refuses it
    /// ([`McpError::Start`](super::McpError::Start)) rather than share one session.
    ///
    /// [`McpServer::connect`]: super::McpServer::connect
    ///
    /// ```
    /// use agboss_core::mcp::client::{InMemoryCredentials, McpCredential, McpServerConfig};
    ///
    /// let store = InMemoryCredentials::new();
    /// store.set("crm", "acme", McpCredential::bearer("t-acme"));
    /// store.set("crm", "globex", McpCredential::bearer("t-globex"));
    /// let crm = McpServerConfig::http("crm", "https://crm.example.com/mcp")
    ///     .credentials(store.clone())
    ///     .list_tools_as("acme")
    ///     .max_tenant_connections(16);
    /// # let _ = crm;
    /// ```
    #[must_use]
    pub fn credentials(mut self, store: impl CredentialStore) -> Self {
        let old = self.per_tenant.take();
        let mut per_tenant = PerTenant::new(store);
        if let Some(old) = old {
            per_tenant.max_connections = old.max_connections;
            per_tenant.list_as = old.list_as;
        }
        self.per_tenant = Some(per_tenant);
        self
    }

    /// The tenant whose credential [`McpServer::connect`](super::McpServer::connect) lists
    /// the tools with (with [`credentials`](Self::credentials)).
    #[must_use]
    pub fn list_tools_as(mut self, tenant: impl Into<TenantContext>) -> Self {
        if let Some(per_tenant) = &mut self.per_tenant {
            per_tenant.list_as = Some(tenant.into());
        }
        self
    }

    /// The bound of pooled per-tenant sessions (default
    /// [`DEFAULT_MAX_TENANT_CONNECTIONS`](super::DEFAULT_MAX_TENANT_CONNECTIONS)); past it
    /// the least recently used is closed.
    #[must_use]
    pub fn max_tenant_connections(mut self, max: usize) -> Self {
        if let Some(per_tenant) = &mut self.per_tenant {
            per_tenant.max_connections = max.max(1);
        }
        self
    }

    /// A call whose tenant has no credential (with [`credentials`](Self::credentials)) also
    /// asks a human to connect the tenant's account: a ticket on the `#[channel]` named
    /// `channel` (checked when the app is built: an unknown channel, a server without
    /// per-tenant credentials, or an app without a store is a
    /// [`BuildError::Mcp`](crate::di::BuildError::Mcp)). The call still fails, with
    /// [`McpError::NoCredential`](super::McpError::NoCredential) naming the ticket; while that
    /// ticket is pending, further calls of the tenant name it again instead of raising
    /// another (one per server and tenant). The ticket is the tenant's (another tenant
    /// neither sees it nor is affected): its `tool` is the server's name, its input
    /// `{"server": .., "tenant": ..}`, its `step_key`
    /// [`CONNECT_ACCOUNT_STEP`](crate::store::CONNECT_ACCOUNT_STEP); it never holds a secret.
    ///
    /// Approving it records that the account is connected: the approver stores the tenant's
    /// credential in the server's [`CredentialStore`] first. The approval grants nothing by
    /// itself: only a stored credential lets a call through, from the next call on (a
    /// credential stored without any decision too). See the MCP guide for the whole flow.
    ///
    /// ```
    /// use agboss_core::mcp::client::{InMemoryCredentials, McpServerConfig};
    ///
    /// let crm = McpServerConfig::http("crm", "https://crm.example.com/mcp")
    ///     .credentials(InMemoryCredentials::new())
    ///     .account_channel("accounts-channel");
    /// assert_eq!(crm.account_channel_name(), Some("accounts-channel"));
    /// ```
    #[must_use]
    pub fn account_channel(mut self, channel: &'static str) -> Self {
        self.account_channel = Some(channel);
        self
    }

    /// The channel of [`account_channel`](Self::account_channel), if one is named.
    pub fn account_channel_name(&self) -> Option<&'static str> {
        self.account_channel
    }

    /// The server's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// How it is reached.
    pub fn transport(&self) -> &McpTransport {
        &self.transport
    }
}
