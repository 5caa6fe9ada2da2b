//! Credentials per tenant for a remote MCP server: a multi-tenant app calls one server with
//! each tenant's own token, resolved per call from the run's tenant through a
//! [`CredentialStore`] ([`InMemoryCredentials`] is the ready-made one). A call whose tenant has
//! no credential fails with [`McpError::NoCredential`](super::McpError::NoCredential): it is
//! never sent with another tenant's token, nor with none.
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::{Arc, RwLock};

use futures::future::BoxFuture;
use sha2::{Digest as _, Sha256};

use crate::di::TenantContext;

/// One tenant's credential for one server: the HTTP headers its requests carry.
///
/// ```
/// use agboss_core::mcp::client::McpCredential;
///
/// let token = McpCredential::bearer("t-acme");
/// assert_eq!(token.headers(), [("authorization".to_string(), "Bearer t-acme".to_string())]);
/// assert!(!format!("{token:?}").contains("t-acme"), "Debug hides the secret");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct McpCredential {
    headers: Vec<(String, String)>,
}

impl fmt::Debug for McpCredential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpCredential")
            .field(
                "headers",
                &self.headers.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl McpCredential {
    /// `authorization: Bearer <token>`.
    pub fn bearer(token: impl AsRef<str>) -> Self {
        Self::header("authorization", format!("Bearer {}", token.as_ref()))
    }
    /// One header (an API key header, say).
    pub fn header(name: impl Into<String>, value: impl Into<String>) -> Self {
        Self {
            headers: vec![(name.into(), value.into())],
        }
    }
    /// One more header.
    #[must_use]
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
    /// The headers.
    pub fn headers(&self) -> &[(String, String)] {
        &self.headers
    }
    /// A digest of the headers: pooled connections are keyed by it, so a changed credential
    /// (a refreshed token) opens a new connection.
    pub(crate) fn digest(&self) -> [u8; 32] {
        let mut hash = Sha256::new();
        for (name, value) in &self.headers {
            hash.update(name.len().to_le_bytes());
            hash.update(name.as_bytes());
            hash.update(value.len().to_le_bytes());
            hash.update(value.as_bytes());
        }
        hash.finalize().into()
    }
}

/// Why a credential store could not answer (its database is down, say): the call fails with
/// [`McpError::Credentials`](super::McpError::Credentials), it is not sent.
pub type CredentialError = Box<dyn std::error::Error + Send + Sync>;

/// Where the per-tenant credentials of remote MCP servers come from. `Ok(None)`: the tenant
/// has none for that server (the call fails with `McpError::NoCredential`).
///
/// ```
/// use agboss_core::TenantContext;
/// use agboss_core::mcp::client::{CredentialError, CredentialStore, McpCredential};
///
/// /// Tokens kept by the app's own secrets service, say.
/// struct FromEnv;
///
/// impl CredentialStore for FromEnv {
///     async fn credential(&self, server: &str, tenant: &TenantContext)
///         -> Result<Option<McpCredential>, CredentialError> {
///         let var = format!("{}_{}_TOKEN", server.to_uppercase(), tenant.tenant_id().to_uppercase());
///         Ok(std::env::var(var).ok().map(McpCredential::bearer))
///     }
/// }
/// ```
pub trait CredentialStore: Send + Sync + 'static {
    /// The credential of `tenant` for `server`.
    fn credential(
        &self,
        server: &str,
        tenant: &TenantContext,
    ) -> impl Future<Output = Result<Option<McpCredential>, CredentialError>> + Send;

    /// The server refused `credential` when a session was opened with it (HTTP 401): a store
    /// that can renew it (an OAuth refresh) does and answers `true`, and the session is opened
    /// once more with the credential it then gives; `false` (the default) fails the call with
    /// [`McpError::Unauthorized`](super::McpError::Unauthorized). Nothing had been sent.
    fn refused(
        &self,
        server: &str,
        tenant: &TenantContext,
        credential: &McpCredential,
    ) -> impl Future<Output = Result<bool, CredentialError>> + Send {
        let _ = (server, tenant, credential);
        async { Ok(false) }
    }
}

/// The store behind `dyn`.
pub(crate) trait DynCredentialStore: Send + Sync {
    fn credential<'a>(
        &'a self,
        server: &'a str,
        tenant: &'a TenantContext,
    ) -> BoxFuture<'a, Result<Option<McpCredential>, CredentialError>>;
    fn refused<'a>(
        &'a self,
        server: &'a str,
        tenant: &'a TenantContext,
        credential: &'a McpCredential,
    ) -> BoxFuture<'a, Result<bool, CredentialError>>;
}

impl<S: CredentialStore> DynCredentialStore for S {
    fn credential<'a>(
        &'a self,
        server: &'a str,
        tenant: &'a TenantContext,
    ) -> BoxFuture<'a, Result<Option<McpCredential>, CredentialError>> {
        Box::pin(CredentialStore::credential(self, server, tenant))
    }
    fn refused<'a>(
        &'a self,
        server: &'a str,
        tenant: &'a TenantContext,
        credential: &'a McpCredential,
    ) -> BoxFuture<'a, Result<bool, CredentialError>> {
        Box::pin(CredentialStore::refused(self, server, tenant, credential))
    }
}

pub(crate) type SharedCredentialStore = Arc<dyn DynCredentialStore>;

/// Credentials kept in memory, by server and tenant; cheap to clone (the clones share them),
/// so the app can set and replace them while it runs (a refreshed token, a tenant that
/// connected its account).
///
/// ```
/// use agboss_core::TenantContext;
/// use agboss_core::mcp::client::{CredentialStore, InMemoryCredentials, McpCredential};
///
/// let store = InMemoryCredentials::new();
/// store.set("crm", "acme", McpCredential::bearer("t-acme"));
/// futures::executor::block_on(async {
///     let acme = store.credential("crm", &TenantContext::new("acme")).await.unwrap();
///     assert_eq!(acme, Some(McpCredential::bearer("t-acme")));
///     let globex = store.credential("crm", &TenantContext::new("globex")).await.unwrap();
///     assert_eq!(globex, None);
/// });
/// store.remove("crm", "acme");
/// ```
#[derive(Clone, Default)]
pub struct InMemoryCredentials {
    by_key: Arc<RwLock<HashMap<(String, String), McpCredential>>>,
}

impl fmt::Debug for InMemoryCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InMemoryCredentials")
            .field("credentials", &self.read().len())
            .finish()
    }
}

impl InMemoryCredentials {
    /// No credentials yet.
    pub fn new() -> Self {
        Self::default()
    }
    /// Sets (or replaces) `tenant`'s credential for `server`.
    pub fn set(
        &self,
        server: impl Into<String>,
        tenant: impl Into<String>,
        credential: McpCredential,
    ) {
        self.by_key
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert((server.into(), tenant.into()), credential);
    }
    /// Removes `tenant`'s credential for `server`.
    pub fn remove(&self, server: &str, tenant: &str) {
        self.by_key
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&(server.to_owned(), tenant.to_owned()));
    }
    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<(String, String), McpCredential>> {
        self.by_key
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl CredentialStore for InMemoryCredentials {
    async fn credential(
        &self,
        server: &str,
        tenant: &TenantContext,
    ) -> Result<Option<McpCredential>, CredentialError> {
        Ok(self
            .read()
            .get(&(server.to_owned(), tenant.tenant_id().to_owned()))
            .cloned())
    }
}

/// The default bound of a server's pooled per-tenant sessions: 64.
pub const DEFAULT_MAX_TENANT_CONNECTIONS: usize = 64;

/// A server's per-tenant credentials, as its config holds them.
#[derive(Clone)]
pub(crate) struct PerTenant {
    pub(crate) store: SharedCredentialStore,
    pub(crate) max_connections: usize,
    pub(crate) list_as: Option<TenantContext>,
}

impl PerTenant {
    pub(crate) fn new(store: impl CredentialStore) -> Self {
        Self {
            store: Arc::new(store),
            max_connections: DEFAULT_MAX_TENANT_CONNECTIONS,
            list_as: None,
        }
    }
}

impl fmt::Debug for PerTenant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PerTenant")
            .field("max_connections", &self.max_connections)
            .field("list_as", &self.list_as)
            .finish_non_exhaustive()
    }
}
