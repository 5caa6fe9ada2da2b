//! A local OAuth issuer for the resource server tests: EC P-256 keys generated here (ring),
//! a JWKS endpoint on an ephemeral loopback port (axum) whose answer a test can change (a
//! rotated key, an outage, garbage) and which counts its fetches, and real ES256 JWTs signed
//! with jsonwebtoken.
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
use serde_json::{Value, json};

/// A signing key of the issuer.
pub struct Key {
    pub kid: String,
    encoding: EncodingKey,
}

impl Key {
    /// A new P-256 key.
    pub fn generate(kid: &str) -> Self {
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
                .expect("a P-256 key");
        Self {
            kid: kid.to_owned(),
            encoding: EncodingKey::from_ec_der(pkcs8.as_ref()),
        }
    }

    /// Its public JWK.
    pub fn jwk(&self) -> Value {
        let mut jwk = Jwk::from_encoding_key(&self.encoding, Algorithm::ES256).expect("jwk");
        jwk.common.key_id = Some(self.kid.clone());
        jwk.common.public_key_use = Some(jsonwebtoken::jwk::PublicKeyUse::Signature);
        serde_json::to_value(jwk).expect("jwk json")
    }

    /// A JWT of `claims`, signed by this key under `kid` (which may lie).
    pub fn sign_as(&self, kid: &str, claims: &Value) -> String {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(kid.to_owned());
        jsonwebtoken::encode(&header, claims, &self.encoding).expect("signs")
    }

    /// A JWT of `claims`, signed by this key.
    pub fn sign(&self, claims: &Value) -> String {
        self.sign_as(&self.kid, claims)
    }
}

/// What the JWKS endpoint answers.
#[derive(Clone)]
pub enum Jwks {
    Keys(Vec<Value>),
    Status(u16),
    Body(String),
}

/// The issuer: its URL, its JWKS endpoint's answer and fetch count.
pub struct Issuer {
    pub url: String,
    answer: Arc<std::sync::Mutex<Jwks>>,
    fetches: Arc<AtomicUsize>,
    _task: tokio::task::JoinHandle<()>,
}

impl Issuer {
    /// Serves `answer` at `<url>/jwks.json`.
    pub async fn start(answer: Jwks) -> Self {
        let answer = Arc::new(std::sync::Mutex::new(answer));
        let fetches = Arc::new(AtomicUsize::new(0));
        let (a, f) = (Arc::clone(&answer), Arc::clone(&fetches));
        let router = axum::Router::new().route(
            "/jwks.json",
            axum::routing::get(move || {
                let (a, f) = (Arc::clone(&a), Arc::clone(&f));
                async move {
                    use axum::response::IntoResponse as _;
                    f.fetch_add(1, Ordering::SeqCst);
                    let answer = a.lock().unwrap().clone();
                    match answer {
                        Jwks::Keys(keys) => json!({ "keys": keys }).to_string().into_response(),
                        Jwks::Status(status) => axum::http::StatusCode::from_u16(status)
                            .unwrap()
                            .into_response(),
                        Jwks::Body(body) => body.into_response(),
                    }
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            axum::serve(listener, router).await.unwrap();
        });
        Self {
            url,
            answer,
            fetches,
            _task: task,
        }
    }

    pub fn jwks_uri(&self) -> String {
        format!("{}/jwks.json", self.url)
    }

    /// Changes what the JWKS endpoint answers.
    pub fn answer(&self, answer: Jwks) {
        *self.answer.lock().unwrap() = answer;
    }

    /// How often the JWKS was fetched.
    pub fn fetches(&self) -> usize {
        self.fetches.load(Ordering::SeqCst)
    }
}

/// Seconds since the epoch.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A free loopback port (bound and released: the server binds it next).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
