//! What checking an OAuth access token adds to an inbound MCP call (`McpServe::oauth`): one
//! `OAuthResourceServer::validate` of a valid ES256 token whose key is cached (goal ≤ 10 µs),
//! with the validated-token cache (a client's next request with the same token) and without
//! it (a new token: the signature checked), against the static `BearerTokens` authenticator.
//! The issuer is the tests' local one (`tests/mcp/issuer.rs`): a JWKS on loopback, fetched
//! once before measuring.
//!
//! Run with `cargo bench -p agboss-e2e --bench mcp_oauth`.
#[path = "../tests/mcp/issuer.rs"]
#[allow(dead_code)]
mod issuer;

use std::time::Instant;

use agboss_core::mcp::server::oauth::OAuthResourceServer;
use agboss_core::mcp::server::{BearerTokens, McpAuthenticator, McpRequestMeta};
use criterion::{Criterion, criterion_group, criterion_main};
use issuer::{Issuer, Jwks, Key, now};
use serde_json::json;

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let key = Key::generate("k1");
    let issuer = rt.block_on(Issuer::start(Jwks::Keys(vec![key.jwk()])));
    let resource = "https://mcp.example.com/mcp";
    let config = || OAuthResourceServer::new(resource, &issuer.url, issuer.jwks_uri()).unwrap();
    let (cached, uncached) = (config(), config().token_cache(0));
    let token = key.sign(&json!({ "iss": issuer.url, "aud": resource, "sub": "u1",
        "tenant": "acme", "scope": "crm:read", "exp": now() + 3600 }));
    // Warm: the JWKS fetched, the token validated once.
    rt.block_on(async {
        cached.validate(&token).await.unwrap();
        uncached.validate(&token).await.unwrap();
    });
    let tokens = BearerTokens::new().token("t-acme", "acme");
    let mut headers = axum::http::HeaderMap::new();
    headers.insert("authorization", "Bearer t-acme".parse().unwrap());

    let mut group = c.benchmark_group("mcp_oauth");
    group.bench_function("validate_cached_token", |b| {
        b.iter(|| futures::executor::block_on(cached.validate(&token)).unwrap())
    });
    group.bench_function("validate_signature", |b| {
        b.iter(|| futures::executor::block_on(uncached.validate(&token)).unwrap())
    });
    group.bench_function("bearer_tokens", |b| {
        b.iter(|| {
            futures::executor::block_on(tokens.authenticate(&McpRequestMeta::http(&headers)))
                .unwrap()
        })
    });
    group.finish();

    // Interleaved means (the machine's load hits the variants alike).
    let rounds = 2_000;
    let (mut t_cached, mut t_sig, mut t_static) = (0u128, 0u128, 0u128);
    for _ in 0..rounds {
        let t = Instant::now();
        futures::executor::block_on(cached.validate(&token)).unwrap();
        t_cached += t.elapsed().as_nanos();
        let t = Instant::now();
        futures::executor::block_on(uncached.validate(&token)).unwrap();
        t_sig += t.elapsed().as_nanos();
        let t = Instant::now();
        futures::executor::block_on(tokens.authenticate(&McpRequestMeta::http(&headers))).unwrap();
        t_static += t.elapsed().as_nanos();
    }
    let us = |ns: u128| ns as f64 / rounds as f64 / 1000.0;
    println!(
        "interleaved means: validate (cached token) {:.2} µs, validate (signature checked) {:.2} µs, BearerTokens {:.2} µs",
        us(t_cached),
        us(t_sig),
        us(t_static)
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
