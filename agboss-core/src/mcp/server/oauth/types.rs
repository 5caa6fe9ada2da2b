//! The data of the resource server: why a token was refused ([`OAuthError`]) or a
//! configuration is wrong ([`OAuthConfigError`]), a token's verified claims
//! ([`TokenClaims`]) and who it speaks for ([`OAuthIdentity`]).
use serde_json::{Map, Value};

use super::JwksError;
#[cfg(doc)]
use super::OAuthResourceServer;
use crate::di::TenantContext;

/// Why an access token was refused ([`OAuthResourceServer::validate`]). Over HTTP every
/// variant but [`OAuthError::KeysUnavailable`] is `401` with `error="invalid_token"`;
/// that one is `503`. The caller is told no more; the variant is logged.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    /// Not a JWT (three base64url parts, a JSON header), or longer than 16 KiB.
    #[error("the access token is not a well-formed JWT")]
    Malformed,
    /// Its `alg` is not one [`OAuthResourceServer::algorithms`] allows, or not one of its key.
    #[error("the access token's algorithm is not allowed")]
    AlgorithmNotAllowed,
    /// The JWKS (fetched again if it was time) has no key of the token's `kid`.
    #[error("the access token names a key the issuer's JWKS does not have")]
    UnknownKey,
    /// The signature does not verify.
    #[error("the access token's signature does not verify")]
    BadSignature,
    /// `exp` is past (beyond the leeway).
    #[error("the access token has expired")]
    Expired,
    /// `nbf` is still to come (beyond the leeway).
    #[error("the access token is not valid yet")]
    NotYetValid,
    /// `iss` is not the issuer.
    #[error("the access token is of another issuer")]
    WrongIssuer,
    /// `aud` does not name this resource (RFC 8707).
    #[error("the access token is meant for another resource")]
    WrongAudience,
    /// A claim is missing or of the wrong type (`exp`, `iss`, `aud`; or one the identity
    /// mapping needs).
    #[error("the access token's claim `{0}` is missing or invalid")]
    Claim(String),
    /// The issuer's JWKS could not be had.
    #[error("the issuer's keys are unavailable")]
    KeysUnavailable(#[source] JwksError),
}

/// Why an [`OAuthResourceServer`] could not be configured.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthConfigError {
    /// A URL that does not parse, or has a fragment.
    #[error("the {what} `{url}` is not an absolute URL without fragment")]
    InvalidUrl {
        /// Which URL (`resource`, `issuer`, `jwks_uri`).
        what: &'static str,
        /// The URL as given.
        url: String,
    },
    /// A URL over plain `http` that is not loopback: keys and tokens need TLS.
    #[error("the {what} `{url}` must be https (plain http is for loopback only)")]
    Insecure {
        /// Which URL.
        what: &'static str,
        /// The URL as given.
        url: String,
    },
}

/// The verified claims of an access token (its payload, as JSON), given to the identity
/// mapping ([`OAuthResourceServer::identity`]).
///
/// ```
/// use agboss_core::mcp::server::oauth::TokenClaims;
///
/// let claims = TokenClaims::from_json(serde_json::json!({
///     "sub": "user-1", "org": "acme", "scope": "crm:read crm:write" }));
/// assert_eq!(claims.str("org"), Some("acme"));
/// assert_eq!(claims.scopes(), ["crm:read", "crm:write"]);
/// ```
#[derive(Debug, Clone, Default)]
pub struct TokenClaims(pub(super) Map<String, Value>);

impl TokenClaims {
    /// Claims from a JSON object (anything else is no claims): for tests of a mapping.
    pub fn from_json(value: Value) -> Self {
        match value {
            Value::Object(map) => Self(map),
            _ => Self::default(),
        }
    }
    /// A claim.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0.get(name)
    }
    /// A claim that is a string.
    pub fn str(&self, name: &str) -> Option<&str> {
        self.0.get(name)?.as_str()
    }
    /// The token's scopes: `scope` (a space-separated string, RFC 9068), else `scp` (an array
    /// of strings, or one string), else none.
    pub fn scopes(&self) -> Vec<String> {
        let split = |s: &str| s.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
        match (self.get("scope"), self.get("scp")) {
            (Some(Value::String(s)), _) | (None, Some(Value::String(s))) => split(s),
            (None, Some(Value::Array(items))) => items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// Who a valid access token speaks for: the tenant every hook and tool of its calls sees, the
/// principal an HTTP session is bound to (stable across refreshed tokens), and its scopes.
///
/// ```
/// use agboss_core::mcp::server::oauth::OAuthIdentity;
///
/// let who = OAuthIdentity::new("acme", "https://id.example.com user-1", ["crm:read"]);
/// assert_eq!(who.tenant().tenant_id(), "acme");
/// assert!(who.has_scope("crm:read") && !who.has_scope("crm:delete"));
/// ```
#[derive(Debug, Clone)]
pub struct OAuthIdentity {
    pub(super) tenant: TenantContext,
    pub(super) principal: String,
    pub(super) scopes: Vec<String>,
}

impl OAuthIdentity {
    /// An identity.
    pub fn new(
        tenant: impl Into<TenantContext>,
        principal: impl Into<String>,
        scopes: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Self {
            tenant: tenant.into(),
            principal: principal.into(),
            scopes: scopes.into_iter().map(Into::into).collect(),
        }
    }
    /// The tenant.
    pub fn tenant(&self) -> &TenantContext {
        &self.tenant
    }
    /// The principal (by default `"<iss> <sub>"`).
    pub fn principal(&self) -> &str {
        &self.principal
    }
    /// The scopes.
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }
    /// Whether it has `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_come_from_scope_else_scp() {
        let scopes = |v| TokenClaims::from_json(v).scopes();
        assert_eq!(scopes(serde_json::json!({ "scope": " a  b " })), ["a", "b"]);
        assert_eq!(
            scopes(serde_json::json!({ "scp": ["a", 7, "b"] })),
            ["a", "b"]
        );
        assert_eq!(scopes(serde_json::json!({ "scp": "a b" })), ["a", "b"]);
        // `scope` of another type is no scopes, not a fallback to `scp`.
        assert!(scopes(serde_json::json!({ "scope": 3, "scp": ["a"] })).is_empty());
        assert!(scopes(serde_json::json!([1, 2])).is_empty());
    }
}
