//! Who is looking: [`ConsoleAuthenticator`] maps a request ([`ConsoleRequest`]: its headers) to
//! a [`ConsoleUser`] (a tenant and the [`Approver`] who decides), or refuses it
//! ([`ConsoleAuthError`]). Every page and every decision is authenticated first, and an error is
//! a refusal (fail closed). [`ConsoleTokens`] is the ready-made authenticator of static tokens,
//! read from `Authorization: Bearer` or the `agboss_console` cookie.
use std::collections::HashMap;
use std::fmt;
use std::future::Future;

use axum::http::{HeaderMap, header};
use futures::future::BoxFuture;

use crate::contract::channel::Approver;
use crate::store::types::sha256_hex;

/// The cookie [`ConsoleRequest::token`] reads when there is no `Authorization` header.
pub const TOKEN_COOKIE: &str = "agboss_console";

/// What an authenticator sees of a request: its headers.
///
/// ```
/// use agboss_core::console::ConsoleRequest;
/// use axum::http::HeaderMap;
///
/// let mut headers = HeaderMap::new();
/// headers.insert("cookie", "theme=dark; agboss_console=t-acme".parse().unwrap());
/// assert_eq!(ConsoleRequest::new(&headers).token(), Some("t-acme"));
/// headers.insert("authorization", "Bearer t-globex".parse().unwrap());
/// assert_eq!(ConsoleRequest::new(&headers).token(), Some("t-globex"));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct ConsoleRequest<'a> {
    headers: &'a HeaderMap,
}

impl<'a> ConsoleRequest<'a> {
    /// A request with these headers.
    pub fn new(headers: &'a HeaderMap) -> Self {
        Self { headers }
    }
    /// The headers.
    pub fn headers(&self) -> &'a HeaderMap {
        self.headers
    }
    /// The value of cookie `name`, if the request carries it.
    pub fn cookie(&self, name: &str) -> Option<&'a str> {
        self.headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.trim())
            .filter(|v| !v.is_empty())
    }
    /// The token of an `Authorization: Bearer <token>` header, else of the [`TOKEN_COOKIE`]
    /// cookie.
    pub fn token(&self) -> Option<&'a str> {
        let bearer = self
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, t)| t.trim())
            .filter(|t| !t.is_empty());
        bearer.or_else(|| self.cookie(TOKEN_COOKIE))
    }
}

/// Who a console request is: the tenant whose tickets, runs and threads it sees (nothing of any
/// other tenant), the approver who decides (the ticket's channel authorizes them), a session
/// key the CSRF token of their forms is bound to, and whether they may reveal a ticket's raw
/// input.
///
/// Every page shows a ticket's input masked, as the call's path masks it for the model. A user
/// the authenticator marks with [`ConsoleUser::reveal_input`] gets a "Reveal the raw input"
/// button on a ticket's page, which shows the input as the tool would receive it (and logs
/// who revealed what); nobody else can, whatever they ask for. Off by default.
///
/// ```
/// use agboss_core::Approver;
/// use agboss_core::console::ConsoleUser;
/// let user = ConsoleUser::new("acme", Approver::new("maria").role("manager")).session("s-1");
/// assert_eq!(user.approver.tenant.as_deref(), Some("acme"));
/// assert!(!user.reveal_input, "masked input only, by default");
/// // A role the user's authenticator allows to see raw input:
/// let auditor = ConsoleUser::new("acme", Approver::new("ana").role("auditor")).reveal_input(true);
/// assert!(auditor.reveal_input);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConsoleUser {
    /// The tenant (`""` for an app without tenants).
    pub tenant: String,
    /// Who decides; its tenant is [`ConsoleUser::tenant`].
    pub approver: Approver,
    /// What the CSRF token of this user's forms is bound to (a session id, a token's digest):
    /// a form of another session does not pass.
    pub session: String,
    /// Whether this user may reveal a ticket's raw (unmasked) input (`false` by default).
    pub reveal_input: bool,
}

impl ConsoleUser {
    /// `approver` of `tenant` (the approver's tenant is set to it), session `""`.
    pub fn new(tenant: impl Into<String>, approver: Approver) -> Self {
        let tenant = tenant.into();
        Self {
            approver: Approver {
                tenant: Some(tenant.clone()),
                ..approver
            },
            tenant,
            session: String::new(),
            reveal_input: false,
        }
    }
    /// With this session key.
    pub fn session(mut self, session: impl Into<String>) -> Self {
        self.session = session.into();
        self
    }
    /// Whether this user may reveal a ticket's raw input (decide it from the user's role:
    /// `ConsoleUser::new(..).reveal_input(roles.contains("auditor"))`).
    pub fn reveal_input(mut self, allowed: bool) -> Self {
        self.reveal_input = allowed;
        self
    }
}

/// Why a request was refused (the crate's one [`AuthError`](crate::error::AuthError), shared
/// with the MCP server): `401 Unauthorized` for missing or invalid credentials, `503 Service
/// Unavailable` when the authenticator could not decide; the page says only that much.
pub type ConsoleAuthError = crate::contract::handler_error::AuthError;

/// Maps a console request to its user, or refuses it. Called for every page, stream and
/// decision; an error (or a panic) refuses the request.
///
/// ```
/// use agboss_core::Approver;
/// use agboss_core::console::{ConsoleAuthError, ConsoleAuthenticator, ConsoleRequest, ConsoleUser};
///
/// /// Users sign in elsewhere; the proxy in front sets `x-user` and `x-tenant`.
/// struct ProxyHeaders;
///
/// impl ConsoleAuthenticator for ProxyHeaders {
///     async fn authenticate(&self, request: &ConsoleRequest<'_>) -> Result<ConsoleUser, ConsoleAuthError> {
///         let header = |name| request.headers().get(name).and_then(|v| v.to_str().ok());
///         match (header("x-user"), header("x-tenant")) {
///             (Some(user), Some(tenant)) => Ok(ConsoleUser::new(tenant, Approver::new(user).role("manager"))
///                 .session(user)),
///             _ => Err(ConsoleAuthError::MissingCredentials),
///         }
///     }
/// }
/// # let headers = axum::http::HeaderMap::new();
/// # let refused = futures::executor::block_on(ProxyHeaders.authenticate(&ConsoleRequest::new(&headers)));
/// # assert!(refused.is_err());
/// ```
pub trait ConsoleAuthenticator: Send + Sync + 'static {
    /// The user of `request`, or why it is refused.
    fn authenticate(
        &self,
        request: &ConsoleRequest<'_>,
    ) -> impl Future<Output = Result<ConsoleUser, ConsoleAuthError>> + Send;
}

/// [`ConsoleAuthenticator`] behind `dyn`.
pub(super) trait DynAuthenticator: Send + Sync {
    fn authenticate<'a>(
        &'a self,
        request: &'a ConsoleRequest<'a>,
    ) -> BoxFuture<'a, Result<ConsoleUser, ConsoleAuthError>>;
}

impl<A: ConsoleAuthenticator> DynAuthenticator for A {
    fn authenticate<'a>(
        &'a self,
        request: &'a ConsoleRequest<'a>,
    ) -> BoxFuture<'a, Result<ConsoleUser, ConsoleAuthError>> {
        Box::pin(ConsoleAuthenticator::authenticate(self, request))
    }
}

/// Static tokens, each for one user (kept by their SHA-256 only), read by
/// [`ConsoleRequest::token`]: a bearer header or the [`TOKEN_COOKIE`] cookie. The session a
/// user's CSRF tokens are bound to is their token's digest.
///
/// ```
/// use agboss_core::Approver;
/// use agboss_core::console::{ConsoleAuthenticator, ConsoleRequest, ConsoleTokens, ConsoleUser};
///
/// let tokens = ConsoleTokens::new()
///     .token("t-maria", ConsoleUser::new("acme", Approver::new("maria").role("manager")));
/// let mut headers = axum::http::HeaderMap::new();
/// headers.insert("cookie", "agboss_console=t-maria".parse().unwrap());
/// let user = futures::executor::block_on(tokens.authenticate(&ConsoleRequest::new(&headers))).unwrap();
/// assert_eq!((user.tenant.as_str(), user.approver.id.as_str()), ("acme", "maria"));
/// ```
#[derive(Default)]
pub struct ConsoleTokens {
    users: HashMap<String, ConsoleUser>,
}

impl fmt::Debug for ConsoleTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConsoleTokens")
            .field("tokens", &self.users.len())
            .finish()
    }
}

impl ConsoleTokens {
    /// No token (every request is refused).
    pub fn new() -> Self {
        Self::default()
    }
    /// Accepts `token` as `user` (its session becomes the token's digest).
    pub fn token(mut self, token: impl AsRef<str>, user: ConsoleUser) -> Self {
        let digest = sha256_hex(token.as_ref().as_bytes());
        let user = user.session(digest.clone());
        self.users.insert(digest, user);
        self
    }
}

impl ConsoleAuthenticator for ConsoleTokens {
    async fn authenticate(
        &self,
        request: &ConsoleRequest<'_>,
    ) -> Result<ConsoleUser, ConsoleAuthError> {
        let token = request
            .token()
            .ok_or(ConsoleAuthError::MissingCredentials)?;
        self.users
            .get(&sha256_hex(token.as_bytes()))
            .cloned()
            .ok_or(ConsoleAuthError::InvalidCredentials)
    }
}
