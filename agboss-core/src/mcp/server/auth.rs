//! Who is calling: [`McpAuthenticator`] maps an inbound request ([`McpRequestMeta`]: its
//! transport and, over HTTP, its headers) to a [`TenantContext`], or refuses it
//! ([`McpAuthError`]). Over HTTP every request is authenticated before rmcp reads it, so a
//! refused request never reaches a hook; [`BearerTokens`] is the ready-made authenticator of
//! static bearer tokens.
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use axum::http::{HeaderMap, header};
use futures::future::BoxFuture;
use sha2::{Digest as _, Sha256};

use crate::di::TenantContext;

/// How a request reached the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum McpTransportKind {
    /// The standard input and output of this process (one client, the parent process).
    Stdio,
    /// Streamable HTTP.
    Http,
}

/// What an authenticator sees of a request: its transport and, over HTTP, its headers.
///
/// ```
/// use agboss_core::mcp::server::{McpRequestMeta, McpTransportKind};
/// use axum::http::HeaderMap;
///
/// let mut headers = HeaderMap::new();
/// headers.insert("authorization", "Bearer t-acme".parse().unwrap());
/// let meta = McpRequestMeta::http(&headers);
/// assert_eq!(meta.transport(), McpTransportKind::Http);
/// assert_eq!(meta.bearer_token(), Some("t-acme"));
/// assert_eq!(McpRequestMeta::stdio().bearer_token(), None);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct McpRequestMeta<'a> {
    transport: McpTransportKind,
    headers: Option<&'a HeaderMap>,
}

impl<'a> McpRequestMeta<'a> {
    /// A request over stdio (no headers).
    pub fn stdio() -> Self {
        Self {
            transport: McpTransportKind::Stdio,
            headers: None,
        }
    }
    /// An HTTP request with these headers.
    pub fn http(headers: &'a HeaderMap) -> Self {
        Self {
            transport: McpTransportKind::Http,
            headers: Some(headers),
        }
    }
    /// The transport.
    pub fn transport(&self) -> McpTransportKind {
        self.transport
    }
    /// The HTTP headers (`None` over stdio).
    pub fn headers(&self) -> Option<&'a HeaderMap> {
        self.headers
    }
    /// The token of an `Authorization: Bearer <token>` header (the scheme is case-insensitive).
    pub fn bearer_token(&self) -> Option<&'a str> {
        let value = self.headers?.get(header::AUTHORIZATION)?.to_str().ok()?;
        let (scheme, token) = value.trim().split_once(' ')?;
        let token = token.trim();
        (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
    }
}

/// Why a request was refused (the crate's one [`AuthError`](crate::error::AuthError)). Over
/// HTTP, `MissingCredentials` and `InvalidCredentials` are `401 Unauthorized` (with
/// `WWW-Authenticate: Bearer`), `Unavailable` is `503 Service Unavailable`; the response body
/// says only that much.
pub type McpAuthError = crate::contract::handler_error::AuthError;

/// Maps a request to its tenant. `Ok(Some(tenant))`: the request runs as `tenant` (what the
/// `TenantContext` of every interceptor and tool of the call receives); `Ok(None)`: accepted,
/// without a tenant; `Err`: refused before any MCP handling.
///
/// ```
/// use agboss_core::TenantContext;
/// use agboss_core::mcp::server::{McpAuthError, McpAuthenticator, McpRequestMeta};
///
/// /// Tenants sign their tokens as `<tenant>.<secret>`; the secret is checked elsewhere.
/// struct SignedTokens;
///
/// impl McpAuthenticator for SignedTokens {
///     async fn authenticate(&self, request: &McpRequestMeta<'_>) -> Result<Option<TenantContext>, McpAuthError> {
///         let token = request.bearer_token().ok_or(McpAuthError::MissingCredentials)?;
///         match token.split_once('.') {
///             Some((tenant, "let-me-in")) => Ok(Some(TenantContext::new(tenant))),
///             _ => Err(McpAuthError::InvalidCredentials),
///         }
///     }
/// }
///
/// let mut headers = axum::http::HeaderMap::new();
/// headers.insert("authorization", "Bearer acme.let-me-in".parse().unwrap());
/// let tenant = futures::executor::block_on(SignedTokens.authenticate(&McpRequestMeta::http(&headers)));
/// assert_eq!(tenant.unwrap().unwrap().tenant_id(), "acme");
/// ```
pub trait McpAuthenticator: Send + Sync + 'static {
    /// Authenticates one request.
    fn authenticate(
        &self,
        request: &McpRequestMeta<'_>,
    ) -> impl Future<Output = Result<Option<TenantContext>, McpAuthError>> + Send;

    /// Who an accepted request comes from within its tenant (a user, a client): an HTTP
    /// session is bound to the tenant and the principal of the request that opened it, and
    /// every later request on it must have both the same, else it is answered `404` as an
    /// unknown session. Called only for requests [`McpAuthenticator::authenticate`] accepted.
    ///
    /// The default is a digest of the request's bearer token (`None` without one): a session
    /// belongs to the credentials that opened it. Override it to name the user when a
    /// client's tokens change within a session (refreshed OAuth access tokens, say).
    ///
    /// ```
    /// use agboss_core::mcp::server::{BearerTokens, McpAuthenticator, McpRequestMeta};
    ///
    /// let mut headers = axum::http::HeaderMap::new();
    /// headers.insert("authorization", "Bearer t-acme".parse().unwrap());
    /// let tokens = BearerTokens::new().token("t-acme", "acme");
    /// let principal = tokens.principal(&McpRequestMeta::http(&headers)).unwrap();
    /// assert!(!principal.contains("t-acme"), "a digest, not the token");
    /// assert_eq!(tokens.principal(&McpRequestMeta::stdio()), None);
    /// ```
    fn principal(&self, request: &McpRequestMeta<'_>) -> Option<String> {
        let digest = digest(request.bearer_token()?);
        Some(
            digest
                .iter()
                .fold(String::with_capacity(64), |mut hex, byte| {
                    use std::fmt::Write as _;
                    let _ = write!(hex, "{byte:02x}");
                    hex
                }),
        )
    }
}

/// The authenticator behind `dyn`.
pub(crate) trait DynAuthenticator: Send + Sync {
    fn authenticate<'a>(
        &'a self,
        request: &'a McpRequestMeta<'a>,
    ) -> BoxFuture<'a, Result<Option<TenantContext>, McpAuthError>>;

    fn principal(&self, request: &McpRequestMeta<'_>) -> Option<String>;
}

impl<A: McpAuthenticator> DynAuthenticator for A {
    fn authenticate<'a>(
        &'a self,
        request: &'a McpRequestMeta<'a>,
    ) -> BoxFuture<'a, Result<Option<TenantContext>, McpAuthError>> {
        Box::pin(McpAuthenticator::authenticate(self, request))
    }

    fn principal(&self, request: &McpRequestMeta<'_>) -> Option<String> {
        McpAuthenticator::principal(self, request)
    }
}

pub(crate) type SharedAuthenticator = Arc<dyn DynAuthenticator>;

/// Static bearer tokens, each mapped to its tenant. Tokens are kept as SHA-256 digests and
/// looked up by digest, so neither the map nor the lookup's timing holds a token's text.
///
/// ```
/// use agboss_core::mcp::server::{BearerTokens, McpAuthError, McpAuthenticator, McpRequestMeta};
///
/// let tokens = BearerTokens::new().token("t-acme", "acme").token("t-globex", "globex");
/// let mut headers = axum::http::HeaderMap::new();
/// headers.insert("authorization", "Bearer t-globex".parse().unwrap());
/// futures::executor::block_on(async {
///     let tenant = tokens.authenticate(&McpRequestMeta::http(&headers)).await.unwrap();
///     assert_eq!(tenant.unwrap().tenant_id(), "globex");
///     let refused = tokens.authenticate(&McpRequestMeta::stdio()).await;
///     assert!(matches!(refused, Err(McpAuthError::MissingCredentials)));
/// });
/// ```
#[derive(Clone, Default)]
pub struct BearerTokens {
    tenants: HashMap<[u8; 32], TenantContext>,
}

impl fmt::Debug for BearerTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BearerTokens")
            .field("tokens", &self.tenants.len())
            .finish()
    }
}

impl BearerTokens {
    /// No tokens yet (every request is refused).
    pub fn new() -> Self {
        Self::default()
    }
    /// Accepts `token` as tenant `tenant`.
    #[must_use]
    pub fn token(mut self, token: impl AsRef<str>, tenant: impl Into<TenantContext>) -> Self {
        self.tenants.insert(digest(token.as_ref()), tenant.into());
        self
    }
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

impl McpAuthenticator for BearerTokens {
    async fn authenticate(
        &self,
        request: &McpRequestMeta<'_>,
    ) -> Result<Option<TenantContext>, McpAuthError> {
        let token = request
            .bearer_token()
            .ok_or(McpAuthError::MissingCredentials)?;
        self.tenants
            .get(&digest(token))
            .cloned()
            .map(Some)
            .ok_or(McpAuthError::InvalidCredentials)
    }
}

/// The JSON-RPC error code of a refused request (implementation-defined server error range).
pub(crate) const REFUSED: i64 = -32001;

/// Who an authenticated HTTP request runs as: put in the request's extensions by the
/// authentication layer, read by the tool handler; a session is bound to the caller that
/// opened it.
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    pub(crate) tenant: Option<TenantContext>,
    /// [`McpAuthenticator::principal`].
    pub(crate) principal: Option<String>,
    /// The scopes of its access token (OAuth; `None` for other schemes).
    #[cfg_attr(not(feature = "mcp-oauth"), allow(dead_code))]
    pub(crate) scopes: Option<Arc<[String]>>,
}

impl Caller {
    /// Whether `self` and `other` are the same tenant and principal.
    pub(crate) fn is(&self, other: &Caller) -> bool {
        self.principal == other.principal
            && self.tenant.as_ref().map(TenantContext::tenant_id)
                == other.tenant.as_ref().map(TenantContext::tenant_id)
    }
}
