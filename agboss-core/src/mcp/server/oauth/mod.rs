//! The MCP server as an OAuth 2.1 resource server (feature `mcp-oauth`), as the MCP
//! authorization spec (2025-06-18 onwards) asks: every HTTP request carries an access token,
//! a JWT that an authorization server signed with a key of its JWKS; the server checks its
//! signature, issuer, audience (its own canonical URI, RFC 8707) and lifetime, maps its claims
//! to a tenant and scopes ([`OAuthIdentity`]), and checks the scopes each tool needs before
//! rmcp reads the call, so a refused request never reaches a hook. It serves its protected
//! resource metadata (RFC 9728) at `/.well-known/oauth-protected-resource` and answers a
//! refusal with the `WWW-Authenticate` challenge that points clients at it.
//!
//! | the request… | answer |
//! |---|---|
//! | carries no bearer token | `401`, `WWW-Authenticate: Bearer resource_metadata="…"` |
//! | a token that is malformed, badly signed, signed by an unknown key or an algorithm not allowed, expired, not yet valid, of another issuer or audience, or whose claims name no tenant | `401`, the challenge with `error="invalid_token"` |
//! | a token without a scope every request needs ([`OAuthResourceServer::required_scopes`]), or a `tools/call` of a tool whose scopes it lacks ([`OAuthResourceServer::tool_scopes`]) | `403`, the challenge with `error="insufficient_scope", scope="…"` |
//! | arrives while the JWKS cannot be fetched or read | `503` |
//!
//! The answers' bodies are JSON-RPC errors that say no more than the status; the reason is
//! logged (`tracing`, `debug`). See [`McpServe::oauth`](super::McpServe::oauth).
mod cache;
mod gate;
mod jwks;
mod types;

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Map, Value};

pub use jwks::{JwksError, MAX_JWKS_BYTES};
pub use types::{OAuthConfigError, OAuthError, OAuthIdentity, TokenClaims};

pub(crate) use gate::{authenticate as gate_authenticate, metadata_router, scope_layer};

type IdentityFn = dyn Fn(&TokenClaims) -> Result<OAuthIdentity, OAuthError> + Send + Sync;

/// How many validated tokens are remembered by default: 4096.
pub const DEFAULT_TOKEN_CACHE: usize = 4096;

/// The longest access token read: 16 KiB.
const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// An OAuth 2.1 resource server: how [`McpServe::oauth`](super::McpServe::oauth) checks the
/// access tokens of HTTP requests (see the [module](self)).
///
/// ```
/// use std::time::Duration;
/// use agboss_core::mcp::server::oauth::{OAuthIdentity, OAuthResourceServer};
///
/// let oauth = OAuthResourceServer::new(
///     "https://mcp.example.com/mcp",                         // this server: the tokens' `aud`
///     "https://id.example.com",                              // the issuer: their `iss`
///     "https://id.example.com/.well-known/jwks.json",        // its signing keys
/// )?
/// .tenant_claim("org_id")                                    // default: `tenant`
/// .required_scopes(["mcp"])                                  // for every request
/// .tool_scopes("delete-customer-tool", ["crm:delete"])      // for one tool's calls
/// .leeway(Duration::from_secs(30));
/// assert_eq!(
///     oauth.metadata_url(),
///     "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
/// );
/// // Or map the claims yourself:
/// let oauth = oauth.identity(|claims| {
///     let tenant = claims.str("tid").ok_or_else(|| agboss_core::mcp::server::oauth::OAuthError::Claim("tid".into()))?;
///     Ok(OAuthIdentity::new(tenant, claims.str("sub").unwrap_or_default(), claims.scopes()))
/// });
/// # let _ = oauth;
/// # Ok::<(), agboss_core::mcp::server::oauth::OAuthConfigError>(())
/// ```
pub struct OAuthResourceServer {
    resource: String,
    /// The origin and path of the resource, to build the metadata URLs.
    origin: String,
    resource_path: String,
    issuer: String,
    authorization_servers: Vec<String>,
    validation: Validation,
    required: Vec<String>,
    by_tool: HashMap<String, Vec<String>>,
    tenant_claim: String,
    identity: Option<Arc<IdentityFn>>,
    jwks: jwks::Jwks,
    cache: cache::TokenCache,
}

impl fmt::Debug for OAuthResourceServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthResourceServer")
            .field("resource", &self.resource)
            .field("issuer", &self.issuer)
            .field("algorithms", &self.validation.algorithms)
            .finish_non_exhaustive()
    }
}

impl OAuthResourceServer {
    /// A resource server at `resource` (its canonical URI, e.g. `https://mcp.example.com/mcp`:
    /// what the tokens' `aud` must name) for the tokens of `issuer` (their `iss`), signed with
    /// the keys of `jwks_uri`. Each URL must be absolute and https (http on loopback only).
    ///
    /// Defaults: the algorithms RS256, PS256 and ES256; a leeway of 60 s on `exp` and `nbf`;
    /// the tenant from the claim `tenant`, the principal `"<iss> <sub>"`, the scopes from
    /// `scope` / `scp`; no scope needed; the JWKS cached for 10 minutes and fetched again
    /// for an unknown `kid` at most every 30 s.
    pub fn new(
        resource: impl AsRef<str>,
        issuer: impl Into<String>,
        jwks_uri: impl AsRef<str>,
    ) -> Result<Self, OAuthConfigError> {
        let resource = resource.as_ref();
        let issuer = issuer.into();
        let parsed = checked_url("resource", resource)?;
        checked_url("issuer", &issuer)?;
        let jwks_uri = checked_url("jwks_uri", jwks_uri.as_ref())?;
        let origin = parsed.origin().ascii_serialization();
        let resource_path = parsed.path().trim_end_matches('/').to_string();
        let algorithms = vec![Algorithm::RS256, Algorithm::PS256, Algorithm::ES256];
        let mut validation = Validation::new(Algorithm::RS256);
        validation.algorithms = algorithms.clone();
        validation.set_issuer(&[&issuer]);
        validation.set_audience(&[resource]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_nbf = true;
        validation.leeway = 60;
        Ok(Self {
            resource: resource.to_string(),
            origin,
            resource_path,
            authorization_servers: vec![issuer.clone()],
            issuer,
            validation,
            required: Vec::new(),
            by_tool: HashMap::new(),
            tenant_claim: "tenant".to_string(),
            identity: None,
            jwks: jwks::Jwks::new(jwks_uri, algorithms),
            cache: cache::TokenCache::new(DEFAULT_TOKEN_CACHE),
        })
    }

    /// The signature algorithms accepted (default RS256, PS256, ES256; asymmetric ones only:
    /// HS* are never accepted, a JWKS holds no shared secrets).
    #[must_use]
    pub fn algorithms(mut self, algorithms: impl IntoIterator<Item = Algorithm>) -> Self {
        let algorithms: Vec<Algorithm> = algorithms
            .into_iter()
            .filter(|a| !matches!(a, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512))
            .collect();
        self.validation.algorithms = algorithms.clone();
        self.jwks.allowed = algorithms;
        self
    }

    /// How far `exp` and `nbf` may be off (clock skew; default 60 s).
    #[must_use]
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.validation.leeway = leeway.as_secs();
        self
    }

    /// The authorization servers the metadata names (default: the issuer).
    #[must_use]
    pub fn authorization_servers(
        mut self,
        servers: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.authorization_servers = servers.into_iter().map(Into::into).collect();
        self
    }

    /// Scopes every request needs (`403 insufficient_scope` without them).
    #[must_use]
    pub fn required_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.required = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Scopes a `tools/call` of `tool` needs, besides the [required](Self::required_scopes)
    /// ones (`403 insufficient_scope` without them; checked before rmcp reads the call, so no
    /// hook runs). A tool named here that the server does not serve is a build error
    /// ([`McpServerError::UnknownScopedTool`](super::McpServerError::UnknownScopedTool)).
    #[must_use]
    pub fn tool_scopes(
        mut self,
        tool: impl Into<String>,
        scopes: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.by_tool
            .insert(tool.into(), scopes.into_iter().map(Into::into).collect());
        self
    }

    /// The claim that names the tenant, for the default identity mapping (default `tenant`):
    /// a token without it (as a string) is refused.
    #[must_use]
    pub fn tenant_claim(mut self, claim: impl Into<String>) -> Self {
        self.tenant_claim = claim.into();
        self
    }

    /// Maps a verified token's claims to its identity, instead of the default (the tenant
    /// from [`tenant_claim`](Self::tenant_claim), the principal `"<iss> <sub>"`, the scopes
    /// of [`TokenClaims::scopes`]). An `Err` refuses the request (`401`).
    #[must_use]
    pub fn identity(
        mut self,
        map: impl Fn(&TokenClaims) -> Result<OAuthIdentity, OAuthError> + Send + Sync + 'static,
    ) -> Self {
        self.identity = Some(Arc::new(map));
        self
    }

    /// How long a fetched JWKS is used before it is fetched again (default 10 minutes), and
    /// how often at most it is fetched for a token of an unknown `kid` or after a failed fetch
    /// (default 30 s).
    #[must_use]
    pub fn jwks_refresh(mut self, max_age: Duration, min_interval: Duration) -> Self {
        self.jwks.max_age = max_age;
        self.jwks.min_refresh = min_interval;
        self
    }

    /// How many validated tokens are remembered (default [`DEFAULT_TOKEN_CACHE`]; 0: none), so
    /// that a client's next request with the same token skips the signature check: each is
    /// kept until it expires, and no longer than the JWKS's maximum age
    /// ([`jwks_refresh`](Self::jwks_refresh)).
    #[must_use]
    pub fn token_cache(mut self, capacity: usize) -> Self {
        self.cache = cache::TokenCache::new(capacity);
        self
    }

    /// The resource's canonical URI.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// Where its protected resource metadata is served (RFC 9728 §3.1: the well-known path
    /// inserted before the resource's path), as the `WWW-Authenticate` challenge names it.
    pub fn metadata_url(&self) -> String {
        format!("{}{}{}", self.origin, gate::WELL_KNOWN, self.resource_path)
    }

    /// The protected resource metadata document (RFC 9728).
    ///
    /// ```
    /// # use agboss_core::mcp::server::oauth::OAuthResourceServer;
    /// let oauth = OAuthResourceServer::new("https://mcp.example.com/mcp", "https://id.example.com",
    ///     "https://id.example.com/jwks")?.tool_scopes("delete-customer-tool", ["crm:delete"]);
    /// let metadata = oauth.metadata();
    /// assert_eq!(metadata["resource"], "https://mcp.example.com/mcp");
    /// assert_eq!(metadata["authorization_servers"][0], "https://id.example.com");
    /// assert_eq!(metadata["scopes_supported"][0], "crm:delete");
    /// # Ok::<(), agboss_core::mcp::server::oauth::OAuthConfigError>(())
    /// ```
    pub fn metadata(&self) -> Value {
        let scopes: BTreeSet<&str> = self
            .required
            .iter()
            .chain(self.by_tool.values().flatten())
            .map(String::as_str)
            .collect();
        serde_json::json!({
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "scopes_supported": scopes,
            "bearer_methods_supported": ["header"],
        })
    }

    /// Checks `token` and maps its claims to an identity: the signature (with the JWKS key of
    /// its `kid`, fetched or refreshed as needed), the algorithm, `iss`, `aud`, `exp`, `nbf`.
    /// Scopes are not checked here (the HTTP layer checks them per request).
    pub async fn validate(&self, token: &str) -> Result<OAuthIdentity, OAuthError> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(OAuthError::Malformed);
        }
        let now = jsonwebtoken::get_current_timestamp();
        let digest = cache::TokenCache::digest(token);
        if let Some(identity) = self.cache.get(&digest, now) {
            return Ok(identity);
        }
        let header = jsonwebtoken::decode_header(token).map_err(|_| OAuthError::Malformed)?;
        if !self.validation.algorithms.contains(&header.alg) {
            return Err(OAuthError::AlgorithmNotAllowed);
        }
        let key = self
            .jwks
            .key(header.kid.as_deref())
            .await
            .map_err(|e| match e {
                jwks::KeyError::Unknown => OAuthError::UnknownKey,
                jwks::KeyError::Unavailable(e) => OAuthError::KeysUnavailable(e),
            })?;
        if !key.algorithms.contains(&header.alg) {
            return Err(OAuthError::AlgorithmNotAllowed);
        }
        // jsonwebtoken wants every algorithm of the validation in the key's family: only this one.
        let mut validation = self.validation.clone();
        validation.algorithms = vec![header.alg];
        let data = jsonwebtoken::decode::<Map<String, Value>>(token, &key.decoding, &validation)
            .map_err(|e| refused(e.into_kind()))?;
        let claims = TokenClaims(data.claims);
        let identity = match &self.identity {
            Some(map) => map(&claims)?,
            None => self.default_identity(&claims)?,
        };
        // Until it expires (the leeway included), and no longer than the keys are trusted.
        if let Some(exp) = claims.get("exp").and_then(Value::as_u64) {
            let until = exp
                .saturating_add(self.validation.leeway)
                .min(now.saturating_add(self.jwks.max_age.as_secs()));
            self.cache.insert(digest, identity.clone(), until, now);
        }
        Ok(identity)
    }

    fn default_identity(&self, claims: &TokenClaims) -> Result<OAuthIdentity, OAuthError> {
        let tenant = claims
            .str(&self.tenant_claim)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| OAuthError::Claim(self.tenant_claim.clone()))?;
        let principal = format!(
            "{} {}",
            claims.str("iss").unwrap_or_default(),
            claims.str("sub").unwrap_or_default()
        );
        Ok(OAuthIdentity::new(tenant, principal, claims.scopes()))
    }

    /// The scopes a `tools/call` of `tool` needs (the required ones first).
    pub(crate) fn scopes_for(&self, tool: Option<&str>) -> Vec<&str> {
        let mut scopes: Vec<&str> = self.required.iter().map(String::as_str).collect();
        if let Some(extra) = tool.and_then(|t| self.by_tool.get(t)) {
            scopes.extend(extra.iter().map(String::as_str));
        }
        scopes
    }

    /// The tools given scopes, to check against the served ones.
    pub(crate) fn scoped_tools(&self) -> impl Iterator<Item = &str> {
        self.by_tool.keys().map(String::as_str)
    }
}

/// The refusal of a token jsonwebtoken did not accept.
fn refused(kind: ErrorKind) -> OAuthError {
    match kind {
        ErrorKind::InvalidSignature => OAuthError::BadSignature,
        ErrorKind::ExpiredSignature => OAuthError::Expired,
        ErrorKind::ImmatureSignature => OAuthError::NotYetValid,
        ErrorKind::InvalidIssuer => OAuthError::WrongIssuer,
        ErrorKind::InvalidAudience => OAuthError::WrongAudience,
        ErrorKind::InvalidAlgorithm => OAuthError::AlgorithmNotAllowed,
        ErrorKind::MissingRequiredClaim(claim) | ErrorKind::InvalidClaimFormat(claim) => {
            OAuthError::Claim(claim)
        }
        _ => OAuthError::Malformed,
    }
}

/// `url` parsed, absolute, without fragment, and https unless its host is loopback.
fn checked_url(what: &'static str, url: &str) -> Result<reqwest::Url, OAuthConfigError> {
    let invalid = || OAuthConfigError::InvalidUrl {
        what,
        url: url.to_string(),
    };
    let parsed = reqwest::Url::parse(url).map_err(|_| invalid())?;
    if parsed.fragment().is_some() || parsed.host().is_none() {
        return Err(invalid());
    }
    let host = parsed.host_str().unwrap_or_default();
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    match parsed.scheme() {
        "https" => Ok(parsed),
        "http" if loopback => Ok(parsed),
        "http" => Err(OAuthConfigError::Insecure {
            what,
            url: url.to_string(),
        }),
        _ => Err(invalid()),
    }
}

#[cfg(test)]
mod tests;
