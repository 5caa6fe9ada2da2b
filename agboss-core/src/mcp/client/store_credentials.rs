//! [`StoreCredentials`]: the per-tenant credentials of remote MCP servers kept in the app's
//! store (a [`SecretStore`]: `MemoryStore`, `SqliteStore`, `PostgresStore`), tenant-scoped.
use std::fmt;

use super::credentials::{CredentialError, CredentialStore, McpCredential};
use crate::di::TenantContext;
use crate::store::{SecretStore, StoreError};

/// The name a server's credential is kept under, in its tenant's secrets.
fn secret_name(server: &str) -> String {
    format!("mcp-server:{server}")
}

/// A [`CredentialStore`] over the app's store: each tenant's credential for each server is
/// one of the tenant's secrets ([`SecretStore`]), so every instance of the app over the same
/// database reads the same credentials, and a credential set (a tenant that connected its
/// account, a refreshed token) is used by the next call of every instance. A tenant reads only
/// its own; a row that cannot be decoded fails the call (`McpError::Credentials`), it is never
/// sent without its credential.
///
/// ```
/// use agboss_core::TenantContext;
/// use agboss_core::mcp::client::{CredentialStore, McpCredential, StoreCredentials};
/// use agboss_core::store::MemoryStore;
///
/// let credentials = StoreCredentials::new(MemoryStore::new());
/// futures::executor::block_on(async {
///     credentials.set("crm", "acme", &McpCredential::bearer("t-acme")).await.unwrap();
///     let acme = credentials.credential("crm", &TenantContext::new("acme")).await.unwrap();
///     assert_eq!(acme, Some(McpCredential::bearer("t-acme")));
///     let globex = credentials.credential("crm", &TenantContext::new("globex")).await.unwrap();
///     assert_eq!(globex, None);
/// });
/// ```
///
/// With the app's SQL store (`SqliteStore` and `PostgresStore` are cheap to clone: the clones
/// share one pool):
///
/// ```no_run
/// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
/// use agboss_core::App;
/// use agboss_core::mcp::client::{McpServer, McpServerConfig, StoreCredentials};
/// use agboss_core::store::SqliteStore;
///
/// let store = SqliteStore::open("agboss.db").await?;
/// let crm = McpServerConfig::http("crm", "https://crm.example.com/mcp")
///     .credentials(StoreCredentials::new(store.clone()))
///     .list_tools_as("acme");
/// let crm = McpServer::connect(crm).await?;
/// let app = App::builder().store(store).mcp_server(crm).mcp_server_tools("crm").build()?;
/// # let _ = app; Ok(()) }
/// ```
#[derive(Clone)]
pub struct StoreCredentials<S> {
    store: S,
}

impl<S> fmt::Debug for StoreCredentials<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreCredentials").finish_non_exhaustive()
    }
}

impl<S: SecretStore> StoreCredentials<S> {
    /// Credentials kept in `store`.
    pub fn new(store: S) -> Self {
        Self { store }
    }

    /// Sets (or replaces) `tenant`'s credential for `server`.
    pub async fn set(
        &self,
        server: &str,
        tenant: &str,
        credential: &McpCredential,
    ) -> Result<(), StoreError> {
        let value = serde_json::to_string(credential.headers()).unwrap_or_default();
        self.store
            .put_secret(tenant, &secret_name(server), &value)
            .await
    }

    /// Removes `tenant`'s credential for `server` (the account was disconnected).
    pub async fn remove(&self, server: &str, tenant: &str) -> Result<(), StoreError> {
        self.store.delete_secret(tenant, &secret_name(server)).await
    }
}

impl<S: SecretStore> CredentialStore for StoreCredentials<S> {
    async fn credential(
        &self,
        server: &str,
        tenant: &TenantContext,
    ) -> Result<Option<McpCredential>, CredentialError> {
        let Some(value) = self
            .store
            .secret(tenant.tenant_id(), &secret_name(server))
            .await?
        else {
            return Ok(None);
        };
        let headers: Vec<(String, String)> = serde_json::from_str(&value)
            .map_err(|e| format!("the stored credential of `{server}` cannot be read: {e}"))?;
        let mut headers = headers.into_iter();
        let Some((name, value)) = headers.next() else {
            return Err(format!("the stored credential of `{server}` has no header").into());
        };
        Ok(Some(headers.fold(
            McpCredential::header(name, value),
            |credential, (name, value)| credential.with_header(name, value),
        )))
    }
}
