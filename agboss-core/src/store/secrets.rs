//! [`SecretStore`]: each tenant's secrets by name, in the app's store (the credentials of the
//! remote MCP servers a tenant connected: `mcp::client::StoreCredentials` reads them).
use std::future::Future;

use super::error::StoreError;

/// Each tenant's secrets, by name: set, read, removed. A tenant reads only its own: another
/// tenant's secret of the same name is not there. Implemented by [`MemoryStore`] and the SQL
/// stores (`SqliteStore`, `PostgresStore`; table `tenant_secrets`).
///
/// The values are stored as given: a deployment that must not keep tokens in clear in its
/// database encrypts them before [`SecretStore::put_secret`] (or keeps them in a secrets
/// service of its own behind `mcp::client::CredentialStore`).
///
/// [`MemoryStore`]: super::MemoryStore
///
/// ```
/// use agboss_core::store::{MemoryStore, SecretStore};
/// # futures::executor::block_on(async {
/// let store = MemoryStore::new();
/// store.put_secret("acme", "crm", "t-acme").await.unwrap();
/// assert_eq!(store.secret("acme", "crm").await.unwrap().as_deref(), Some("t-acme"));
/// assert_eq!(store.secret("globex", "crm").await.unwrap(), None);
/// store.delete_secret("acme", "crm").await.unwrap();
/// assert_eq!(store.secret("acme", "crm").await.unwrap(), None);
/// # });
/// ```
pub trait SecretStore: Send + Sync + 'static {
    /// `tenant`'s secret `name`, if it has one.
    fn secret(
        &self,
        tenant: &str,
        name: &str,
    ) -> impl Future<Output = Result<Option<String>, StoreError>> + Send;
    /// Sets (or replaces) `tenant`'s secret `name`.
    fn put_secret(
        &self,
        tenant: &str,
        name: &str,
        value: &str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
    /// Removes `tenant`'s secret `name` (none is not an error).
    fn delete_secret(
        &self,
        tenant: &str,
        name: &str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
}

impl<S: SecretStore> SecretStore for std::sync::Arc<S> {
    fn secret(
        &self,
        tenant: &str,
        name: &str,
    ) -> impl Future<Output = Result<Option<String>, StoreError>> + Send {
        (**self).secret(tenant, name)
    }
    fn put_secret(
        &self,
        tenant: &str,
        name: &str,
        value: &str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send {
        (**self).put_secret(tenant, name, value)
    }
    fn delete_secret(
        &self,
        tenant: &str,
        name: &str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send {
        (**self).delete_secret(tenant, name)
    }
}
