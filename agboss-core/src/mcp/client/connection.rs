//! A connected MCP server: the session (re-established after a fault), its tool listing and
//! the captured stderr of a stdio server.
use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;

use rmcp::ServiceExt as _;
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::{Peer, RoleClient, RunningService, ServiceError};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use tokio::io::AsyncBufReadExt as _;

use super::config::{McpServerConfig, McpTransport};
use super::credentials::McpCredential;
use super::error::{McpError, StderrTail};
use super::pool::{Slot, TenantPool, lock};
use super::reconnect::{BoundedReconnect, http_client, refusal};
use crate::di::TenantContext;

/// How many lines of a stdio server's stderr are kept for error messages.
const STDERR_LINES: usize = 20;

/// One tool of a connected server, as `tools/list` gave it when the server was connected.
#[derive(Debug, Clone)]
pub struct McpRemoteTool {
    /// Its name on the server.
    pub name: String,
    /// Its description (empty when it has none).
    pub description: String,
    /// Its input JSON Schema.
    pub input_schema: serde_json::Value,
    /// Its output JSON Schema, if it declares one.
    pub output_schema: Option<serde_json::Value>,
}

/// A connected MCP server, cheap to clone (one session shared by every clone).
///
/// [`McpServer::connect`] starts (or reaches) the server, initializes the MCP session and lists
/// its tools once; give it to [`AppBuilder::mcp_server`](crate::AppBuilder::mcp_server). A call
/// that finds the connection lost (the process died, the stream closed, a timeout) fails with a
/// typed [`McpError`], and the next call connects again.
///
/// ```no_run
/// use agboss_core::mcp::client::{McpServer, McpServerConfig};
/// # async fn demo() -> Result<(), agboss_core::mcp::client::McpError> {
/// let server = McpServer::connect(
///     McpServerConfig::stdio("everything", "npx").args(["-y", "@modelcontextprotocol/server-everything", "stdio"]),
/// )
/// .await?;
/// assert!(server.tools().any(|t| t.name == "echo"));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct McpServer {
    inner: Arc<Inner>,
}

struct Inner {
    config: McpServerConfig,
    tools: Vec<McpRemoteTool>,
    /// The app's session (never used for calls when the server takes per-tenant credentials).
    shared: Arc<Slot>,
    /// The per-tenant sessions, with per-tenant credentials.
    tenants: Option<TenantPool>,
    stderr: Arc<StdMutex<VecDeque<String>>>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.inner.config.name)
            .field("tools", &self.inner.tools.len())
            .finish()
    }
}

impl McpServer {
    /// Starts or reaches the server, initializes the session and lists its tools, within the
    /// config's connect timeout.
    pub async fn connect(config: McpServerConfig) -> Result<Self, McpError> {
        let stderr = Arc::new(StdMutex::new(VecDeque::new()));
        let limit = config.connect_timeout;
        let server = config.name;
        if config.per_tenant.is_some() && matches!(config.transport, McpTransport::Stdio { .. }) {
            return Err(McpError::Start {
                server,
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "per-tenant credentials need a server over HTTP (a stdio server is one process for every tenant)",
                ),
                stderr: StderrTail::default(),
            });
        }
        let tenants = config.per_tenant.as_ref().map(TenantPool::new);
        let listing = match tenants
            .as_ref()
            .and_then(|p| Some((p, p.list_as.as_ref()?)))
        {
            Some((pool, tenant)) => {
                Some((tenant.clone(), credential_of(pool, &config, tenant).await?))
            }
            None => None,
        };
        let extra = listing
            .as_ref()
            .map(|(_, c)| c.headers())
            .unwrap_or_default();
        let connected = tokio::time::timeout(limit, async {
            let running = open(&config, &stderr, extra).await?;
            let listed = running
                .peer()
                .list_all_tools()
                .await
                .map_err(|e| service_error(server, "tools/list", e))?;
            Ok::<_, McpError>((running, listed))
        })
        .await;
        let (running, listed) = match connected {
            Ok(result) => result?,
            Err(_) => {
                return Err(McpError::TimedOut {
                    server,
                    during: "initialize and tools/list".into(),
                    after_ms: millis(limit),
                });
            }
        };
        let tools = listed
            .into_iter()
            .map(|t| McpRemoteTool {
                name: t.name.into_owned(),
                description: t.description.map(|d| d.into_owned()).unwrap_or_default(),
                input_schema: serde_json::Value::Object((*t.input_schema).clone()),
                output_schema: t
                    .output_schema
                    .map(|s| serde_json::Value::Object((*s).clone())),
            })
            .collect();
        let shared = match (&tenants, listing) {
            (None, _) => Slot::open(running),
            // The listing session is the listing tenant's first.
            (Some(pool), Some((tenant, credential))) => {
                pool.slot(tenant.tenant_id(), credential.digest())
                    .install(running);
                Slot::default()
            }
            // Listed with the static headers alone: not a session any call may use.
            (Some(_), None) => {
                drop(running);
                Slot::default()
            }
        };
        Ok(Self {
            inner: Arc::new(Inner {
                config,
                tools,
                shared: Arc::new(shared),
                tenants,
                stderr,
            }),
        })
    }

    /// The server's name.
    pub fn name(&self) -> &'static str {
        self.inner.config.name
    }

    /// Its config.
    pub fn config(&self) -> &McpServerConfig {
        &self.inner.config
    }

    /// Its tools, as listed when it was connected.
    pub fn tools(&self) -> impl Iterator<Item = &McpRemoteTool> {
        self.inner.tools.iter()
    }

    /// One tool of the listing.
    pub fn tool(&self, name: &str) -> Option<&McpRemoteTool> {
        self.inner.tools.iter().find(|t| t.name == name)
    }

    /// The last lines the (stdio) server wrote to its stderr.
    pub fn stderr_tail(&self) -> Vec<String> {
        lock(&self.inner.stderr).iter().cloned().collect()
    }

    /// Whether a session is open now (false after a fault, until the next call reconnects).
    pub fn is_connected(&self) -> bool {
        self.inner.shared.current().is_some()
            || self.inner.tenants.as_ref().is_some_and(|p| p.len() > 0)
    }

    /// One `tools/call`, bounded by `limit` (or the config's call timeout). An `isError`
    /// result is returned as it is: the caller decides what it means. Crate-private: every
    /// call of a remote tool goes through its tool's guarded pipeline (`McpRemote::call`).
    pub(crate) async fn call_tool(
        &self,
        tool: &str,
        arguments: JsonObject,
        limit: Option<Duration>,
    ) -> Result<CallToolResult, McpError> {
        let server = self.name();
        let during = || format!("tools/call `{tool}`");
        let (mut slot, mut extra) = self.slot_for_call().await?;
        let (peer, generation) = match self.peer(&slot, &extra).await {
            Err(McpError::Unauthorized { server, message }) => {
                // Refused before anything was sent: renewed once (an OAuth refresh), or not.
                if !self.renewed(&extra).await? {
                    return Err(McpError::Unauthorized { server, message });
                }
                (slot, extra) = self.slot_for_call().await?;
                self.peer(&slot, &extra).await?
            }
            opened => opened?,
        };
        let limit = limit.map_or(self.inner.config.call_timeout, |l| {
            l.min(self.inner.config.call_timeout)
        });
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        match tokio::time::timeout(limit, peer.call_tool(params)).await {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(ServiceError::McpError(e))) => Err(McpError::Refused {
                server,
                during: during(),
                code: e.code.0,
                message: e.message.into_owned(),
            }),
            Ok(Err(e)) => {
                slot.reset(generation);
                Err(service_error(server, &during(), e))
            }
            Err(_) => {
                // A server that does not answer in time is not trusted with the next call.
                slot.reset(generation);
                Err(McpError::TimedOut {
                    server,
                    during: during(),
                    after_ms: millis(limit),
                })
            }
        }
    }

    /// The session a call runs on, and the headers it is opened with beyond the static ones:
    /// the app's, or the one of the call's tenant and its credential.
    async fn slot_for_call(&self) -> Result<(Arc<Slot>, Vec<(String, String)>), McpError> {
        let Some(pool) = &self.inner.tenants else {
            return Ok((Arc::clone(&self.inner.shared), Vec::new()));
        };
        let tenant = crate::di::call_tenant().ok_or(McpError::NoCredential {
            server: self.name(),
            tenant: None,
            ticket: None,
        })?;
        let credential = credential_of(pool, &self.inner.config, &tenant).await?;
        let slot = pool.slot(tenant.tenant_id(), credential.digest());
        Ok((slot, credential.headers().to_vec()))
    }

    /// Whether the call's tenant's store renewed the credential the server refused.
    async fn renewed(&self, refused: &[(String, String)]) -> Result<bool, McpError> {
        let (Some(pool), Some(tenant)) = (&self.inner.tenants, crate::di::call_tenant()) else {
            return Ok(false);
        };
        let Some(((name, value), rest)) = refused.split_first() else {
            return Ok(false);
        };
        let credential = rest
            .iter()
            .fold(McpCredential::header(name, value), |c, (n, v)| {
                c.with_header(n, v)
            });
        let server = self.name();
        let renewed = pool.store.refused(server, &tenant, &credential);
        renewed.await.map_err(|source| McpError::Credentials {
            server,
            tenant: tenant.tenant_id().to_owned(),
            source,
        })
    }

    /// The peer of `slot`'s session, opening one first when there is none.
    async fn peer(
        &self,
        slot: &Slot,
        extra: &[(String, String)],
    ) -> Result<(Peer<RoleClient>, u64), McpError> {
        if let Some(open) = slot.current() {
            return Ok(open);
        }
        let _connecting = slot.connecting.lock().await;
        // Another call may have reconnected meanwhile.
        if let Some(open) = slot.current() {
            return Ok(open);
        }
        let config = &self.inner.config;
        let running = match tokio::time::timeout(
            config.connect_timeout,
            open(config, &self.inner.stderr, extra),
        )
        .await
        {
            Ok(running) => running?,
            Err(_) => {
                return Err(McpError::TimedOut {
                    server: config.name,
                    during: "initialize".into(),
                    after_ms: millis(config.connect_timeout),
                });
            }
        };
        tracing::debug!(server = config.name, "MCP session (re-)established");
        Ok(slot.install(running))
    }
}

/// `tenant`'s credential for the server, within the call timeout.
async fn credential_of(
    pool: &TenantPool,
    config: &McpServerConfig,
    tenant: &TenantContext,
) -> Result<McpCredential, McpError> {
    let server = config.name;
    let lookup = pool.store.credential(server, tenant);
    match tokio::time::timeout(config.call_timeout, lookup).await {
        Ok(Ok(Some(credential))) => Ok(credential),
        Ok(Ok(None)) => Err(McpError::NoCredential {
            server,
            tenant: Some(tenant.tenant_id().to_owned()),
            ticket: None,
        }),
        Ok(Err(source)) => Err(McpError::Credentials {
            server,
            tenant: tenant.tenant_id().to_owned(),
            source,
        }),
        Err(_) => Err(McpError::TimedOut {
            server,
            during: format!("the credential lookup of tenant `{}`", tenant.tenant_id()),
            after_ms: millis(config.call_timeout),
        }),
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // rmcp kills a child process from a spawned task: without a runtime, drop it in one.
        let mut running: Vec<_> = self.shared.take().into_iter().collect();
        if let Some(pool) = &self.tenants {
            running.extend(pool.drain());
        }
        if !running.is_empty()
            && tokio::runtime::Handle::try_current().is_err()
            && let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
        {
            rt.block_on(async move { drop(running) });
        }
    }
}

/// Starts (or reaches) the server and initializes a session; over HTTP with `extra` headers
/// besides the config's (a tenant's credential).
async fn open(
    config: &McpServerConfig,
    stderr: &Arc<StdMutex<VecDeque<String>>>,
    extra: &[(String, String)],
) -> Result<RunningService<RoleClient, ()>, McpError> {
    let server = config.name;
    match &config.transport {
        McpTransport::Stdio {
            command,
            args,
            env,
            current_dir,
        } => {
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(args).kill_on_drop(true);
            for (k, v) in env {
                cmd.env(k, v);
            }
            if let Some(dir) = current_dir {
                cmd.current_dir(dir);
            }
            let (process, err) = TokioChildProcess::builder(cmd)
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|source| McpError::Start {
                    server,
                    source,
                    stderr: StderrTail::default(),
                })?;
            let reader = err.map(|err| tokio::spawn(capture(server, err, Arc::clone(stderr))));
            match ().serve(process).await {
                Ok(running) => Ok(running),
                Err(e) => {
                    // The process has exited or spoke no MCP: what it wrote explains why.
                    if let Some(reader) = reader {
                        let _ = tokio::time::timeout(Duration::from_millis(500), reader).await;
                    }
                    Err(McpError::Initialize {
                        server,
                        message: e.to_string(),
                        stderr: StderrTail(lock(stderr).iter().cloned().collect()),
                    })
                }
            }
        }
        McpTransport::Http { url, headers } => {
            use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
            let mut custom = std::collections::HashMap::new();
            for (name, value) in headers.iter().chain(extra) {
                let bad = |what: &str| McpError::Start {
                    server,
                    source: std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        format!("invalid header {what} `{name}`"),
                    ),
                    stderr: StderrTail::default(),
                };
                let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                    .map_err(|_| bad("name"))?;
                let value =
                    reqwest::header::HeaderValue::from_str(value).map_err(|_| bad("value"))?;
                custom.insert(name, value);
            }
            let client = http_client(config.reconnect_window).map_err(|e| McpError::Start {
                server,
                source: std::io::Error::other(e),
                stderr: StderrTail::default(),
            })?;
            let mut transport_config =
                StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(custom);
            transport_config.retry_config = Arc::new(BoundedReconnect {
                attempts: config.reconnect_attempts,
                window: config.reconnect_window,
            });
            let transport = StreamableHttpClientTransport::with_client(client, transport_config);
            ().serve(transport).await.map_err(|e| match refusal(&e) {
                Some(message) => McpError::Unauthorized { server, message },
                None => McpError::Initialize {
                    server,
                    message: e.to_string(),
                    stderr: StderrTail::default(),
                },
            })
        }
    }
}

/// Reads a stdio server's stderr line by line: logged at `debug`, the last lines kept.
async fn capture(
    server: &'static str,
    err: tokio::process::ChildStderr,
    tail: Arc<StdMutex<VecDeque<String>>>,
) {
    let mut lines = tokio::io::BufReader::new(err).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        tracing::debug!(server, "mcp stderr: {line}");
        let mut tail = lock(&tail);
        if tail.len() == STDERR_LINES {
            tail.pop_front();
        }
        tail.push_back(line);
    }
}

fn service_error(server: &'static str, during: &str, e: ServiceError) -> McpError {
    match e {
        ServiceError::McpError(e) => McpError::Refused {
            server,
            during: during.into(),
            code: e.code.0,
            message: e.message.into_owned(),
        },
        ServiceError::Timeout { timeout } => McpError::TimedOut {
            server,
            during: during.into(),
            after_ms: millis(timeout),
        },
        other => McpError::ConnectionLost {
            server,
            during: during.into(),
            message: other.to_string(),
        },
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
