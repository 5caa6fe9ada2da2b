//! The issuer's signing keys: its JWKS (RFC 7517) fetched over HTTPS, cached, and fetched
//! again when the cache is older than its maximum age or a token names a key it lacks (a
//! rotation) — at most once per minimum interval, one fetch at a time, whatever the traffic.
//! A JWKS that cannot be fetched or read is a [`JwksError`]: the request is refused (`503`),
//! never let through on a stale or partial key set.
use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};

/// Why the issuer's JWKS could not be had: the request is refused with `503 Service
/// Unavailable`, and the next fetch waits for the minimum refresh interval.
///
/// ```
/// use agboss_core::mcp::server::oauth::JwksError;
///
/// let error = JwksError::Status { status: 500 };
/// assert_eq!(error.to_string(), "the JWKS endpoint answered HTTP 500");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JwksError {
    /// The request failed (connection refused, timeout, TLS).
    #[error("the JWKS endpoint could not be reached")]
    Request(#[source] reqwest::Error),
    /// The endpoint answered with a status other than success.
    #[error("the JWKS endpoint answered HTTP {status}")]
    Status {
        /// The HTTP status.
        status: u16,
    },
    /// The document is larger than [`MAX_JWKS_BYTES`].
    #[error("the JWKS document is larger than {MAX_JWKS_BYTES} bytes")]
    TooLarge,
    /// The document is not a JWK set (`{"keys": [..]}`).
    #[error("the JWKS document is not a JWK set")]
    Invalid(#[source] serde_json::Error),
    /// A previous fetch failed less than the minimum refresh interval ago: not tried again yet.
    #[error("the JWKS endpoint failed recently; not asked again yet")]
    RecentlyFailed,
}

/// The largest JWKS document read: 256 KiB.
pub const MAX_JWKS_BYTES: usize = 256 * 1024;

/// How long one JWKS fetch may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// A verification key of the set, with the algorithms it may verify.
pub(crate) struct Key {
    pub(crate) decoding: DecodingKey,
    pub(crate) algorithms: Vec<Algorithm>,
}

/// Why no key was found for a token.
#[derive(Debug)]
pub(crate) enum KeyError {
    /// The set (fresh) has no key of that id (or several and the token names none).
    Unknown,
    /// The set could not be had.
    Unavailable(JwksError),
}

/// One fetched key set.
#[derive(Default)]
struct KeySet {
    by_kid: HashMap<String, Arc<Key>>,
    /// When it was fetched (`None`: never).
    fetched: Option<Instant>,
}

impl KeySet {
    fn find(&self, kid: Option<&str>) -> Option<Arc<Key>> {
        match kid {
            Some(kid) => self.by_kid.get(kid).cloned(),
            // No `kid`: only a set of one key says which.
            None if self.by_kid.len() == 1 => self.by_kid.values().next().cloned(),
            None => None,
        }
    }
}

/// The cache of one issuer's JWKS.
pub(crate) struct Jwks {
    uri: reqwest::Url,
    client: reqwest::Client,
    pub(crate) allowed: Vec<Algorithm>,
    pub(crate) min_refresh: Duration,
    pub(crate) max_age: Duration,
    set: RwLock<Arc<KeySet>>,
    /// One fetch at a time; holds when the last fetch failed.
    fetching: tokio::sync::Mutex<Option<Instant>>,
}

impl Jwks {
    pub(crate) fn new(uri: reqwest::Url, allowed: Vec<Algorithm>) -> Self {
        crate::tls::ensure_provider();
        let client = reqwest::Client::builder()
            .timeout(FETCH_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default();
        Self {
            uri,
            client,
            allowed,
            min_refresh: Duration::from_secs(30),
            max_age: Duration::from_secs(600),
            set: RwLock::new(Arc::default()),
            fetching: tokio::sync::Mutex::new(None),
        }
    }

    fn snapshot(&self) -> Arc<KeySet> {
        Arc::clone(
            &self
                .set
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// The key of id `kid` (or the only key, for a token without `kid`).
    pub(crate) async fn key(&self, kid: Option<&str>) -> Result<Arc<Key>, KeyError> {
        let seen = self.snapshot();
        let fresh = |set: &KeySet| set.fetched.is_some_and(|at| at.elapsed() < self.max_age);
        if fresh(&seen)
            && let Some(key) = seen.find(kid)
        {
            return Ok(key);
        }
        // Unknown in a fresh set: fetched again only if the set is older than the interval.
        if fresh(&seen)
            && seen
                .fetched
                .is_some_and(|at| at.elapsed() < self.min_refresh)
        {
            return Err(KeyError::Unknown);
        }
        let mut failed = self.fetching.lock().await;
        let now = self.snapshot();
        if now.fetched != seen.fetched {
            // Another request fetched it meanwhile.
            return now.find(kid).ok_or(KeyError::Unknown);
        }
        if failed.is_some_and(|at| at.elapsed() < self.min_refresh) {
            return Err(KeyError::Unavailable(JwksError::RecentlyFailed));
        }
        match self.fetch().await {
            Ok(set) => {
                *failed = None;
                let set = Arc::new(set);
                *self
                    .set
                    .write()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::clone(&set);
                set.find(kid).ok_or(KeyError::Unknown)
            }
            Err(error) => {
                tracing::warn!(uri = %self.uri, %error, "JWKS fetch failed: requests refused (503)");
                *failed = Some(Instant::now());
                Err(KeyError::Unavailable(error))
            }
        }
    }

    async fn fetch(&self) -> Result<KeySet, JwksError> {
        let mut response = self
            .client
            .get(self.uri.clone())
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(JwksError::Request)?;
        let status = response.status();
        if !status.is_success() {
            return Err(JwksError::Status {
                status: status.as_u16(),
            });
        }
        if response
            .content_length()
            .is_some_and(|n| n > MAX_JWKS_BYTES as u64)
        {
            return Err(JwksError::TooLarge);
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(JwksError::Request)? {
            if chunk.len() > MAX_JWKS_BYTES - body.len() {
                return Err(JwksError::TooLarge);
            }
            body.extend_from_slice(&chunk);
        }
        Ok(KeySet {
            by_kid: parse(&body, &self.allowed)?,
            fetched: Some(Instant::now()),
        })
    }
}

#[derive(serde::Deserialize)]
struct RawSet {
    keys: Vec<serde_json::Value>,
}

/// The usable verification keys of a JWKS document, by `kid` (`""` for a key without one).
/// Keys that cannot verify an allowed algorithm (symmetric keys, encryption keys, unknown key
/// types, malformed ones) are left out; a document that is not a set is an error.
fn parse(body: &[u8], allowed: &[Algorithm]) -> Result<HashMap<String, Arc<Key>>, JwksError> {
    let raw: RawSet = serde_json::from_slice(body).map_err(JwksError::Invalid)?;
    let mut keys = HashMap::new();
    for value in raw.keys {
        let Ok(jwk) = serde_json::from_value::<Jwk>(value) else {
            continue;
        };
        if matches!(jwk.common.public_key_use, Some(ref u) if *u != PublicKeyUse::Signature) {
            continue;
        }
        let algorithms: Vec<Algorithm> = algorithms_of(&jwk)
            .into_iter()
            .filter(|a| allowed.contains(a))
            .collect();
        if algorithms.is_empty() {
            continue;
        }
        let Ok(decoding) = DecodingKey::from_jwk(&jwk) else {
            continue;
        };
        let kid = jwk.common.key_id.clone().unwrap_or_default();
        keys.insert(
            kid,
            Arc::new(Key {
                decoding,
                algorithms,
            }),
        );
    }
    Ok(keys)
}

/// The asymmetric algorithms a JWK may verify: its `alg` if it names one, else every
/// algorithm of its key type (and curve).
fn algorithms_of(jwk: &Jwk) -> Vec<Algorithm> {
    use Algorithm::{ES256, ES384, EdDSA, PS256, PS384, PS512, RS256, RS384, RS512};
    let of_type = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => vec![RS256, RS384, RS512, PS256, PS384, PS512],
        AlgorithmParameters::EllipticCurve(ec) => match ec.curve {
            EllipticCurve::P256 => vec![ES256],
            EllipticCurve::P384 => vec![ES384],
            _ => vec![],
        },
        AlgorithmParameters::OctetKeyPair(okp) if okp.curve == EllipticCurve::Ed25519 => {
            vec![EdDSA]
        }
        // Symmetric (`oct`) keys never verify here: a public JWKS holds none.
        _ => vec![],
    };
    match jwk.common.key_algorithm {
        None => of_type,
        Some(KeyAlgorithm::UNKNOWN_ALGORITHM) => vec![],
        Some(named) => Algorithm::try_from(named)
            .ok()
            .filter(|a| of_type.contains(a))
            .into_iter()
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EC_KEY: &str = r#"{"kty":"EC","crv":"P-256","kid":"k1","alg":"ES256","use":"sig",
        "x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}"#;

    #[test]
    fn a_set_keeps_its_signature_keys_and_leaves_out_the_rest() {
        let body = format!(
            r#"{{"keys":[{EC_KEY},
                {{"kty":"oct","kid":"hmac","k":"c2VjcmV0"}},
                {{"kty":"EC","crv":"P-256","kid":"enc","use":"enc","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}},
                {{"kty":"EC","crv":"P-256","kid":"rs-named","alg":"RS256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}},
                {{"kty":"weird"}}, 7, "garbage"]}}"#
        );
        let keys = parse(body.as_bytes(), &[Algorithm::ES256, Algorithm::RS256]).unwrap();
        assert_eq!(keys.keys().collect::<Vec<_>>(), ["k1"]);
        assert_eq!(keys["k1"].algorithms, [Algorithm::ES256]);
        // Not allowed: left out.
        assert!(
            parse(body.as_bytes(), &[Algorithm::RS256])
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for body in [
            &b"not json"[..],
            b"{}",
            b"[]",
            b"{\"keys\": 3}",
            &[0xff, 0xfe],
        ] {
            assert!(
                matches!(parse(body, &[Algorithm::ES256]), Err(JwksError::Invalid(_))),
                "{body:?}"
            );
        }
    }

    #[test]
    fn a_token_without_kid_needs_a_set_of_one_key() {
        let one = parse(
            format!(r#"{{"keys":[{EC_KEY}]}}"#).as_bytes(),
            &[Algorithm::ES256],
        );
        let set = KeySet {
            by_kid: one.unwrap(),
            fetched: None,
        };
        assert!(set.find(None).is_some());
        assert!(set.find(Some("k1")).is_some());
        assert!(set.find(Some("k2")).is_none());
    }
}
