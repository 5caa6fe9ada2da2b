//! [`OAuthTokens`] (feature `mcp-oauth`): each tenant's OAuth access token for a remote MCP
//! server that is an OAuth 2.1 resource server, kept with its refresh token in the app's store
//! (a [`SecretStore`]) and refreshed through rmcp's OAuth client
//! ([`AuthorizationManager`]) when it expires: the refreshed tokens are stored back as the
//! tenant's own, and a refresh that fails fails the call ([`OAuthRefreshError`]).
//!
//! rmcp's client fits as it is: its `AuthorizationManager` refreshes a stored token
//! (`refresh_token` grant, the RFC 8707 `resource`, a guard held across the exchange and the
//! save) over a credential store of ours; only the first grant (your app's authorization-code
//! flow, where a user connects the account) is outside it.
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex as StdMutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::transport::auth::{
    AuthError, AuthorizationManager, OAuthClientConfig, OAuthHttpClient, StoredCredentials,
    default_oauth_http_client,
};
use serde_json::{Value, json};

use super::credentials::{CredentialError, CredentialStore, McpCredential};
use crate::di::TenantContext;
use crate::store::{SecretStore, StoreError};

/// The app as an OAuth client of a remote server's authorization server: where tokens are
/// refreshed, as which client, for which resource (the server's URI, RFC 8707).
///
/// ```
/// use agboss_core::mcp::client::OAuthClient;
/// let client = OAuthClient::new("https://auth.example.com/token", "agboss", "https://crm.example.com/mcp")
///     .client_secret("s3cret");
/// assert!(!format!("{client:?}").contains("s3cret"));
/// ```
#[derive(Clone)]
pub struct OAuthClient {
    token_endpoint: String,
    client_id: String,
    client_secret: Option<String>,
    resource: String,
}

impl fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthClient")
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .field("resource", &self.resource)
            .finish_non_exhaustive()
    }
}

impl OAuthClient {
    /// A public client `client_id` of the token endpoint `token_endpoint`, for `resource`.
    pub fn new(
        token_endpoint: impl Into<String>,
        client_id: impl Into<String>,
        resource: impl Into<String>,
    ) -> Self {
        Self {
            token_endpoint: token_endpoint.into(),
            client_id: client_id.into(),
            client_secret: None,
            resource: resource.into(),
        }
    }
    /// A confidential client: its secret.
    #[must_use]
    pub fn client_secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(secret.into());
        self
    }
}

/// The tokens a tenant's connected account was granted (what your authorization-code flow
/// received): an access token, its lifetime and a refresh token.
///
/// ```
/// use std::time::Duration;
/// use agboss_core::mcp::client::OAuthGrant;
/// let grant = OAuthGrant::new("at-1").refresh_token("rt-1").expires_in(Duration::from_secs(300));
/// assert!(!format!("{grant:?}").contains("rt-1"));
/// ```
#[derive(Clone)]
pub struct OAuthGrant {
    access_token: String,
    refresh_token: Option<String>,
    expires_in: Option<Duration>,
}

impl fmt::Debug for OAuthGrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthGrant")
            .field("expires_in", &self.expires_in)
            .finish_non_exhaustive()
    }
}

impl OAuthGrant {
    /// An access token (without lifetime: used until the server refuses it).
    pub fn new(access_token: impl Into<String>) -> Self {
        Self {
            access_token: access_token.into(),
            refresh_token: None,
            expires_in: None,
        }
    }
    /// The refresh token.
    #[must_use]
    pub fn refresh_token(mut self, token: impl Into<String>) -> Self {
        self.refresh_token = Some(token.into());
        self
    }
    /// How long the access token lasts from now.
    #[must_use]
    pub fn expires_in(mut self, lifetime: Duration) -> Self {
        self.expires_in = Some(lifetime);
        self
    }
}

/// A refresh that failed: the call is not sent (it fails with
/// [`McpError::Credentials`](super::McpError::Credentials), this its source).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthRefreshError {
    /// The authorization server refused the refresh token (revoked, expired), or there is
    /// none: the account must be connected again ([`OAuthTokens::set`]).
    #[error(
        "the token of tenant `{tenant}` for MCP server `{server}` cannot be refreshed: the account must be connected again"
    )]
    Rejected {
        /// The server.
        server: String,
        /// The tenant.
        tenant: String,
        /// What rmcp's OAuth client reported.
        #[source]
        source: AuthError,
    },
    /// The refresh did not complete (the token endpoint is down, answered garbage, the store
    /// failed): the next call tries again.
    #[error("the token of tenant `{tenant}` for MCP server `{server}` could not be refreshed")]
    Failed {
        /// The server.
        server: String,
        /// The tenant.
        tenant: String,
        /// What rmcp's OAuth client reported.
        #[source]
        source: AuthError,
    },
}

/// Per-tenant OAuth tokens of remote MCP servers, a [`CredentialStore`] over the app's store
/// (feature `mcp-oauth`): each tenant's tokens for each server are one of the tenant's secrets
/// (`mcp-oauth:<server>`), read per call. An access token about to expire is refreshed first
/// (at most one refresh per server and tenant at a time in this process), and the new tokens
/// replace the tenant's own; a refresh that fails fails the call closed
/// ([`OAuthRefreshError`]). A tenant with no tokens has no credential
/// (`McpError::NoCredential`, and an account request with
/// [`McpServerConfig::account_channel`](super::McpServerConfig::account_channel)).
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use agboss_core::TenantContext;
/// use agboss_core::mcp::client::{CredentialStore, McpCredential, OAuthClient, OAuthGrant, OAuthTokens};
/// use agboss_core::store::MemoryStore;
///
/// let client = OAuthClient::new("https://auth.example.com/token", "agboss", "https://crm.example.com/mcp");
/// let tokens = OAuthTokens::new(Arc::new(MemoryStore::new()), client);
/// # futures::executor::block_on(async {
/// let grant = OAuthGrant::new("at-1").refresh_token("rt-1").expires_in(Duration::from_secs(600));
/// tokens.set("crm", "acme", &grant).await.unwrap();
/// let acme = tokens.credential("crm", &TenantContext::new("acme")).await.unwrap();
/// assert_eq!(acme, Some(McpCredential::bearer("at-1")));
/// assert_eq!(tokens.credential("crm", &TenantContext::new("globex")).await.unwrap(), None);
/// # });
/// ```
pub struct OAuthTokens<S> {
    inner: Arc<Shared<S>>,
}

impl<S> Clone for OAuthTokens<S> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<S> fmt::Debug for OAuthTokens<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthTokens")
            .field("client", &self.inner.client)
            .finish_non_exhaustive()
    }
}

/// A lock per (server, tenant), held across a refresh.
type RefreshLocks = HashMap<(String, String), Arc<tokio::sync::Mutex<()>>>;

struct Shared<S> {
    store: S,
    client: OAuthClient,
    http: OnceLock<Arc<dyn OAuthHttpClient>>,
    /// One refresh per (server, tenant) at a time.
    refreshing: StdMutex<RefreshLocks>,
}

/// The name a server's tokens are kept under, in its tenant's secrets.
fn secret_name(server: &str) -> String {
    format!("mcp-oauth:{server}")
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl<S: SecretStore + Clone> OAuthTokens<S> {
    /// Tokens kept in `store`, refreshed as `client`.
    pub fn new(store: S, client: OAuthClient) -> Self {
        Self {
            inner: Arc::new(Shared {
                store,
                client,
                http: OnceLock::new(),
                refreshing: StdMutex::default(),
            }),
        }
    }

    /// Sets (or replaces) `tenant`'s tokens for `server`: what a user connecting the account
    /// granted.
    pub async fn set(
        &self,
        server: &str,
        tenant: &str,
        grant: &OAuthGrant,
    ) -> Result<(), StoreError> {
        let mut token = json!({ "access_token": grant.access_token, "token_type": "bearer" });
        if let Some(refresh) = &grant.refresh_token {
            token["refresh_token"] = json!(refresh);
        }
        if let Some(lifetime) = grant.expires_in {
            token["expires_in"] = json!(lifetime.as_secs());
        }
        let stored = json!({
            "client_id": self.inner.client.client_id,
            "token_response": token,
            "granted_scopes": [],
            "token_received_at": now_secs(),
        });
        self.inner
            .store
            .put_secret(tenant, &secret_name(server), &stored.to_string())
            .await
    }

    /// Removes `tenant`'s tokens for `server` (the account was disconnected).
    pub async fn remove(&self, server: &str, tenant: &str) -> Result<(), StoreError> {
        self.inner
            .store
            .delete_secret(tenant, &secret_name(server))
            .await
    }

    /// The lock held across a refresh of `tenant`'s tokens for `server`.
    fn refresh_lock(&self, server: &str, tenant: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut refreshing = self
            .inner
            .refreshing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let key = (server.to_owned(), tenant.to_owned());
        Arc::clone(refreshing.entry(key).or_default())
    }

    /// The tokens' rmcp manager for `tenant` on `server`, over the tenant's own secret.
    async fn manager(&self, server: &str, tenant: &str) -> Result<AuthorizationManager, AuthError> {
        let shared = &self.inner;
        let http = match shared.http.get() {
            Some(http) => Arc::clone(http),
            None => {
                let made: Arc<dyn OAuthHttpClient> = Arc::new(default_oauth_http_client()?);
                Arc::clone(shared.http.get_or_init(|| made))
            }
        };
        let client = &shared.client;
        let mut manager =
            AuthorizationManager::new_with_oauth_http_client(client.resource.as_str(), http)
                .await?;
        let metadata = json!({
            "authorization_endpoint": client.token_endpoint,
            "token_endpoint": client.token_endpoint,
        });
        manager.set_metadata(
            serde_json::from_value(metadata)
                .map_err(|e| AuthError::MetadataError(e.to_string()))?,
        );
        let mut config = OAuthClientConfig::new(client.client_id.clone(), "http://localhost");
        if let Some(secret) = &client.client_secret {
            config = config.with_client_secret(secret.clone());
        }
        manager.configure_client(config)?;
        manager.set_credential_store(TenantTokens {
            store: shared.store.clone(),
            tenant: tenant.to_owned(),
            name: secret_name(server),
        });
        Ok(manager)
    }
}

/// Whether a stored token must be refreshed before use: rmcp's rule (within 30 s of its
/// expiry, or half its lifetime when that is shorter).
fn expiring(stored: &Value, now: u64) -> bool {
    let lifetime = stored["token_response"]["expires_in"].as_u64();
    let received = stored["token_received_at"].as_u64();
    let (Some(lifetime), Some(received)) = (lifetime, received) else {
        return false;
    };
    let remaining = lifetime.saturating_sub(now.saturating_sub(received));
    remaining < 30.min(lifetime / 2).max(1)
}

/// The access token of stored tokens (`None`: none stored) and whether it must be refreshed.
fn read_tokens(
    server: &str,
    value: Option<String>,
) -> Result<Option<(String, bool)>, CredentialError> {
    let Some(value) = value else {
        return Ok(None);
    };
    let stored: Value = serde_json::from_str(&value)
        .map_err(|e| format!("the stored tokens of `{server}` cannot be read: {e}"))?;
    let Some(access) = stored["token_response"]["access_token"].as_str() else {
        return Err(format!("the stored tokens of `{server}` have no access token").into());
    };
    Ok(Some((access.to_owned(), expiring(&stored, now_secs()))))
}

impl<S: SecretStore + Clone> CredentialStore for OAuthTokens<S> {
    async fn credential(
        &self,
        server: &str,
        tenant: &TenantContext,
    ) -> Result<Option<McpCredential>, CredentialError> {
        let tenant = tenant.tenant_id();
        let name = secret_name(server);
        let store = &self.inner.store;
        match read_tokens(server, store.secret(tenant, &name).await?)? {
            None => return Ok(None),
            Some((access, false)) => return Ok(Some(McpCredential::bearer(access))),
            Some((_, true)) => {}
        }
        // One refresh per (server, tenant): a call that waited reads what the first stored.
        let lock = self.refresh_lock(server, tenant);
        let _one = lock.lock().await;
        match read_tokens(server, store.secret(tenant, &name).await?)? {
            None => return Ok(None),
            Some((access, false)) => return Ok(Some(McpCredential::bearer(access))),
            Some((_, true)) => {}
        }
        let manager = self
            .manager(server, tenant)
            .await
            .map_err(failed(server, tenant))?;
        // rmcp's manager checks the expiry again, refreshes and saves the new tokens.
        let token = manager
            .get_access_token()
            .await
            .map_err(failed(server, tenant))?;
        Ok(Some(McpCredential::bearer(token)))
    }

    /// The server refused the access token before its expiry: refreshed now (unless another
    /// call of the tenant did meanwhile); a refresh that fails is the call's error.
    async fn refused(
        &self,
        server: &str,
        tenant: &TenantContext,
        credential: &McpCredential,
    ) -> Result<bool, CredentialError> {
        let tenant = tenant.tenant_id();
        let name = secret_name(server);
        let store = &self.inner.store;
        let lock = self.refresh_lock(server, tenant);
        let _one = lock.lock().await;
        match read_tokens(server, store.secret(tenant, &name).await?)? {
            None => return Ok(false),
            Some((access, _)) if McpCredential::bearer(&access) != *credential => return Ok(true),
            Some(_) => {}
        }
        let manager = self
            .manager(server, tenant)
            .await
            .map_err(failed(server, tenant))?;
        manager
            .refresh_token()
            .await
            .map_err(failed(server, tenant))?;
        Ok(true)
    }
}

/// A refresh's failure as the call's error: refused (connect again) or not completed.
fn failed<'a>(server: &'a str, tenant: &'a str) -> impl Fn(AuthError) -> CredentialError + 'a {
    move |source| {
        let (server, tenant) = (server.to_owned(), tenant.to_owned());
        Box::new(match source {
            AuthError::AuthorizationRequired | AuthError::TokenRefreshRejected(_) => {
                OAuthRefreshError::Rejected {
                    server,
                    tenant,
                    source,
                }
            }
            source => OAuthRefreshError::Failed {
                server,
                tenant,
                source,
            },
        })
    }
}

/// One tenant's tokens for one server, as rmcp's manager reads and saves them.
struct TenantTokens<S> {
    store: S,
    tenant: String,
    name: String,
}

fn store_error(e: impl fmt::Display) -> AuthError {
    AuthError::CredentialStoreError(e.to_string())
}

#[async_trait::async_trait]
impl<S: SecretStore + Clone> rmcp::transport::auth::CredentialStore for TenantTokens<S> {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let value = self
            .store
            .secret(&self.tenant, &self.name)
            .await
            .map_err(store_error)?;
        value
            .map(|v| serde_json::from_str(&v).map_err(store_error))
            .transpose()
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let value = serde_json::to_string(&credentials).map_err(store_error)?;
        self.store
            .put_secret(&self.tenant, &self.name, &value)
            .await
            .map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.store
            .delete_secret(&self.tenant, &self.name)
            .await
            .map_err(store_error)
    }
}
