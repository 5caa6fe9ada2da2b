//! `App::serve_mcp().oauth(..)`: the CRM desk served as an OAuth 2.1 resource server, against
//! a local issuer (`tests/mcp/issuer.rs`: P-256 keys generated here, a JWKS endpoint, ES256
//! tokens signed with jsonwebtoken) and the real Python `mcp` client sending the tokens
//! (`tests/mcp/client.py`), plus raw HTTP for the exact answers: valid tokens run as the
//! tenant of their claims; a wrong audience, an expired token, an unknown key, a bad
//! signature, another issuer, a missing tenant or scope are refused before any hook with the
//! challenge the MCP authorization spec asks for; the metadata (RFC 9728) is served; a JWKS
//! that is down or garbage refuses (`503`), and rotated keys are fetched, boundedly.
#[path = "mcp/env.rs"]
mod env;
#[path = "mcp/issuer.rs"]
mod issuer;
#[path = "mcp/peer.rs"]
mod peer;
#[path = "mcp/raw_http.rs"]
#[allow(dead_code)]
mod raw_http;

use std::sync::Arc;
use std::time::Duration;

use agboss_core::mcp::server::McpHttpServer;
use agboss_core::mcp::server::oauth::OAuthResourceServer;
use agboss_e2e::mcp_desk::{CrmRunLog, crm_app};
use issuer::{Issuer, Jwks, Key, free_port, now};
use peer::{python, results, run_client, text};
use serde_json::{Value, json};

/// The CRM desk as a resource server of `issuer`: every request needs `crm:read`, a deletion
/// `crm:delete`.
async fn crm_resource_server(issuer: &Issuer) -> (Arc<CrmRunLog>, McpHttpServer, String) {
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let oauth = OAuthResourceServer::new(&resource, &issuer.url, issuer.jwks_uri())
        .expect("config")
        .required_scopes(["crm:read"])
        .tool_scopes("delete-customer-tool", ["crm:delete"])
        .jwks_refresh(Duration::from_secs(600), Duration::from_secs(2));
    let log = Arc::new(CrmRunLog::new());
    let server = crm_app(Arc::clone(&log))
        .expect("app")
        .serve_mcp()
        .direct_chains()
        .oauth(oauth)
        .http(format!("127.0.0.1:{port}"))
        .await
        .expect("serves");
    (log, server, resource)
}

/// Claims of a valid token of `tenant` for `resource`.
fn claims(issuer: &Issuer, resource: &str, tenant: &str, scope: &str) -> Value {
    json!({ "iss": issuer.url, "aud": resource, "sub": format!("user-of-{tenant}"),
            "tenant": tenant, "scope": scope, "exp": now() + 300, "iat": now() })
}

fn call(name: &str, arguments: Value) -> Value {
    json!({ "op": "call", "name": name, "arguments": arguments })
}

async fn client(url: &str, token: Option<&str>, mode: &str, ops: Vec<Value>) -> Value {
    let Some(python) = python() else {
        unreachable!("checked by the test")
    };
    let spec = json!({ "http": { "url": url, "token": token }, "mode": mode, "ops": ops });
    tokio::task::spawn_blocking(move || run_client(&python, &spec))
        .await
        .expect("client thread")
}

/// A raw `tools/call` of `tool` with `token`: the answer.
async fn raw_call(server: &McpHttpServer, token: Option<&str>, tool: &str) -> raw_http::Answer {
    let addr = server.local_addr();
    // A stateless 2026-07-28 request: no session.
    let mut headers = vec![
        ("MCP-Protocol-Version", "2026-07-28".to_owned()),
        ("Mcp-Method", "tools/call".to_owned()),
        ("Mcp-Name", tool.to_owned()),
    ];
    headers.extend(token.map(|t| ("Authorization", format!("Bearer {t}"))));
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": { "name": tool, "arguments": { "customerId": "ACME-7" },
            "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                       "io.modelcontextprotocol/clientCapabilities": {} } } })
    .to_string();
    tokio::task::spawn_blocking(move || raw_http::request(addr, "POST", &headers, Some(&body)))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn valid_tokens_run_as_the_tenant_of_their_claims() {
    if python().is_none() {
        return;
    }
    let key = Key::generate("k1");
    let issuer = Issuer::start(Jwks::Keys(vec![key.jwk()])).await;
    let (log, server, resource) = crm_resource_server(&issuer).await;
    let url = server.url();
    let acme = key.sign(&claims(&issuer, &resource, "acme", "crm:read crm:delete"));
    let globex = key.sign(&claims(&issuer, &resource, "globex", "crm:read"));

    for mode in ["auto", "legacy"] {
        let out = client(
            &url,
            Some(&acme),
            mode,
            vec![
                json!({ "op": "list" }),
                call("get-customer-tool", json!({ "customerId": "ACME-7" })),
                call("delete-customer-tool", json!({ "customerId": "ACME-7" })),
            ],
        )
        .await;
        let r = results(&out);
        assert_eq!(r[0]["tools"].as_array().unwrap().len(), 3, "{out}");
        assert_eq!(r[1]["structured"]["customerId"], "ACME-7", "{out}");
        assert_eq!(r[2]["structured"]["deleted"], true, "{out}");
    }
    assert_eq!(log.runs_of("delete-customer-tool"), 2);

    // Tenant globex's token on tenant acme's data: the call runs as globex (the tenant comes
    // from the verified claims, nothing the client says), so the ownership ACL refuses it,
    // the tool does not run and nothing of acme's record is answered.
    let before = log.runs_of("get-customer-tool");
    let out = client(
        &url,
        Some(&globex),
        "auto",
        vec![
            call("get-customer-tool", json!({ "customerId": "GLOBEX-7" })),
            call("get-customer-tool", json!({ "customerId": "ACME-7" })),
        ],
    )
    .await;
    let r = results(&out);
    assert_eq!(r[0]["structured"]["customerId"], "GLOBEX-7", "{out}");
    assert_eq!(
        text(&r[1]),
        "Customer ACME-7 does not belong to tenant globex. Ask the user to confirm the customer ID."
    );
    assert!(r[1]["structured"].is_null(), "{out}");
    assert_eq!(log.runs_of("get-customer-tool"), before + 1);

    // A session that acme's token opened is unknown to globex's token (`404`), before rmcp.
    let addr = server.local_addr();
    let (a, g) = (acme.clone(), globex.clone());
    let answer = tokio::task::spawn_blocking(move || {
        let session = raw_http::initialize(addr, &a);
        let list = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" }).to_string();
        raw_http::request(
            addr,
            "POST",
            &[
                ("Authorization", format!("Bearer {g}")),
                ("Mcp-Session-Id", session),
                ("MCP-Protocol-Version", "2025-06-18".to_owned()),
            ],
            Some(&list),
        )
    })
    .await
    .unwrap();
    assert_eq!(answer.status, 404, "{answer:?}");
    // One fetch of the JWKS served every one of those requests.
    assert_eq!(issuer.fetches(), 1);
    server.shutdown().await.expect("shuts down");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_tokens_are_refused_before_any_hook_with_the_challenge() {
    if python().is_none() {
        return;
    }
    let key = Key::generate("k1");
    let stranger = Key::generate("k-stranger");
    let issuer = Issuer::start(Jwks::Keys(vec![key.jwk()])).await;
    let (log, server, resource) = crm_resource_server(&issuer).await;
    let good = claims(&issuer, &resource, "acme", "crm:read crm:delete");
    let with = |patch: Value| {
        let mut c = good.clone();
        for (k, v) in patch.as_object().unwrap() {
            if v.is_null() {
                c.as_object_mut().unwrap().remove(k);
            } else {
                c[k] = v.clone();
            }
        }
        c
    };
    let hs256 = jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &good,
        &jsonwebtoken::EncodingKey::from_secret(b"k1").unwrap(),
    )
    .unwrap();
    let invalid = [
        (
            "wrong audience",
            key.sign(&with(json!({ "aud": "https://other.example.com/mcp" }))),
        ),
        ("expired", key.sign(&with(json!({ "exp": now() - 3600 })))),
        (
            "not yet valid",
            key.sign(&with(json!({ "nbf": now() + 3600 }))),
        ),
        (
            "another issuer",
            key.sign(&with(json!({ "iss": "https://evil.example.com" }))),
        ),
        ("no tenant", key.sign(&with(json!({ "tenant": null })))),
        ("no exp", key.sign(&with(json!({ "exp": null })))),
        ("unknown key", stranger.sign(&good)),
        ("bad signature", stranger.sign_as("k1", &good)),
        ("hs256", hs256),
        ("garbage", "not-a-jwt".to_owned()),
        ("garbage parts", "e30.e30.e30".to_owned()),
    ];
    let metadata = format!(
        "resource_metadata=\"http://{}/.well-known/oauth-protected-resource/mcp\"",
        server.local_addr()
    );
    for (case, token) in &invalid {
        let answer = raw_call(&server, Some(token), "get-customer-tool").await;
        assert_eq!(answer.status, 401, "{case}: {answer:?}");
        let challenge = answer.header("www-authenticate").unwrap_or_default();
        assert!(challenge.starts_with("Bearer "), "{case}: {challenge}");
        assert!(
            challenge.contains("error=\"invalid_token\""),
            "{case}: {challenge}"
        );
        assert!(challenge.contains(&metadata), "{case}: {challenge}");
        assert!(!answer.body.contains("ACME-7"), "{case}: {answer:?}");
    }
    // No token: the challenge without an error (RFC 6750 §3.1).
    let answer = raw_call(&server, None, "get-customer-tool").await;
    assert_eq!(answer.status, 401);
    assert_eq!(
        answer.header("www-authenticate").unwrap(),
        format!("Bearer {metadata}")
    );
    // The real client, for a few of them: every request it made was answered 401.
    for (case, token) in [&invalid[0], &invalid[1], &invalid[6]] {
        let out = client(
            &server.url(),
            Some(token),
            "auto",
            vec![json!({ "op": "list" })],
        )
        .await;
        let statuses = out["statuses"].as_array().expect("statuses");
        assert!(
            !statuses.is_empty() && statuses.iter().all(|s| s == 401),
            "{case}: {out}"
        );
        assert!(out["refused"].is_object(), "{case}: {out}");
    }

    // Missing scopes: 403 with the scopes the call needs.
    let read_only = key.sign(&with(json!({ "scope": "crm:read" })));
    let answer = raw_call(&server, Some(&read_only), "delete-customer-tool").await;
    assert_eq!(answer.status, 403, "{answer:?}");
    let challenge = answer.header("www-authenticate").unwrap();
    assert!(
        challenge.contains("error=\"insufficient_scope\", scope=\"crm:read crm:delete\""),
        "{challenge}"
    );
    let out = client(
        &server.url(),
        Some(&read_only),
        "auto",
        vec![call(
            "delete-customer-tool",
            json!({ "customerId": "ACME-7" }),
        )],
    )
    .await;
    // The client shows the 403 as a refusal or as the call's JSON-RPC error (whichever of its
    // tasks reads the answer first); either way the call was answered 403.
    assert!(
        out["statuses"].as_array().unwrap().contains(&json!(403)),
        "{out}"
    );
    let message = out["results"][0]["jsonrpcError"]["message"]
        .as_str()
        .or(out["refused"]["error"].as_str())
        .unwrap_or_default();
    assert!(message.contains("Forbidden"), "{out}");
    let no_scope = key.sign(&with(json!({ "scope": null })));
    let answer = raw_call(&server, Some(&no_scope), "get-customer-tool").await;
    assert_eq!(answer.status, 403, "{answer:?}");

    assert!(log.entries().is_empty(), "a hook ran: {:?}", log.entries());
    // The unknown key made the JWKS be fetched again at most once more.
    assert!(issuer.fetches() <= 2, "{} fetches", issuer.fetches());

    // The same client with a valid token gets through.
    let token = key.sign(&good);
    let out = client(
        &server.url(),
        Some(&token),
        "auto",
        vec![call(
            "delete-customer-tool",
            json!({ "customerId": "ACME-7" }),
        )],
    )
    .await;
    assert_eq!(results(&out)[0]["isError"], false, "{out}");
    server.shutdown().await.expect("shuts down");
}

/// A raw `GET` of `path`: the answer.
async fn raw_get(server: &McpHttpServer, path: &str) -> raw_http::Answer {
    use std::io::Write as _;
    let (addr, path) = (server.local_addr(), path.to_owned());
    tokio::task::spawn_blocking(move || {
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        raw_http::read_answer(&mut stream)
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_protected_resource_metadata_is_served_without_credentials() {
    let issuer = Issuer::start(Jwks::Keys(vec![])).await;
    let (_log, server, resource) = crm_resource_server(&issuer).await;
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let answer = raw_get(&server, path).await;
        assert_eq!(answer.status, 200, "{path}: {answer:?}");
        assert_eq!(answer.header("content-type"), Some("application/json"));
        let metadata: Value = serde_json::from_str(&answer.body).expect("JSON");
        assert_eq!(
            metadata,
            json!({ "resource": resource, "authorization_servers": [issuer.url],
                    "scopes_supported": ["crm:delete", "crm:read"],
                    "bearer_methods_supported": ["header"] })
        );
    }
    // Nothing else is served.
    assert_eq!(raw_get(&server, "/.well-known/other").await.status, 404);
    server.shutdown().await.expect("shuts down");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jwks_that_is_down_or_garbage_refuses_and_rotated_keys_are_fetched() {
    let key = Key::generate("k1");
    let issuer = Issuer::start(Jwks::Status(500)).await;
    let (log, server, resource) = crm_resource_server(&issuer).await;
    let token = key.sign(&claims(&issuer, &resource, "acme", "crm:read"));

    // Down: 503, and the endpoint is not asked again within the interval, however many calls.
    for _ in 0..5 {
        let answer = raw_call(&server, Some(&token), "get-customer-tool").await;
        assert_eq!(answer.status, 503, "{answer:?}");
        assert!(answer.header("www-authenticate").is_none());
    }
    assert_eq!(issuer.fetches(), 1);
    for garbage in [
        Jwks::Body("<html>oops</html>".into()),
        Jwks::Body("{\"keys\": 7}".into()),
    ] {
        issuer.answer(garbage);
        tokio::time::sleep(Duration::from_millis(2100)).await;
        let answer = raw_call(&server, Some(&token), "get-customer-tool").await;
        assert_eq!(answer.status, 503, "{answer:?}");
    }
    assert_eq!(issuer.fetches(), 3);

    // Up, with the key: accepted.
    issuer.answer(Jwks::Keys(vec![key.jwk()]));
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let answer = raw_call(&server, Some(&token), "get-customer-tool").await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(issuer.fetches(), 4);

    // Rotated: a token of the new key is refused until the interval has passed (one fetch,
    // however many tokens name the new kid), then accepted.
    let next = Key::generate("k2");
    issuer.answer(Jwks::Keys(vec![key.jwk(), next.jwk()]));
    let rotated = next.sign(&claims(&issuer, &resource, "acme", "crm:read"));
    for _ in 0..3 {
        let answer = raw_call(&server, Some(&rotated), "get-customer-tool").await;
        assert_eq!(answer.status, 401, "{answer:?}");
    }
    assert_eq!(issuer.fetches(), 4, "not fetched again within the interval");
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let answer = raw_call(&server, Some(&rotated), "get-customer-tool").await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(issuer.fetches(), 5);
    assert_eq!(log.runs_of("get-customer-tool"), 2);
    server.shutdown().await.expect("shuts down");
}
