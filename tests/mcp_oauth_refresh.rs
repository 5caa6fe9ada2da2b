//! Per-tenant OAuth tokens of a remote MCP server refreshed through rmcp's OAuth client
//! (`OAuthTokens`, feature `mcp-oauth`). The remote is the echo app of `mcp/echo.rs` served as
//! an OAuth 2.1 resource server (no leeway: an expired token is refused) over the local issuer
//! of `mcp/issuer.rs`, whose `whoami-tool` answers the tenant of the token it verified; the
//! token endpoint is run here and issues access tokens that last 2 s, rotating the refresh
//! token. A call after expiry refreshes once (also for concurrent calls) and succeeds with the
//! new token, stored back as that tenant's own; another tenant refreshes with its own refresh
//! token only; a refused refresh, or a token endpoint that is down, fails the call closed with
//! a typed error while the other tenant goes on. A token the server refuses (401) before its
//! expiry is refreshed once and the call made with the new one.
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agboss_core::App;
use agboss_core::mcp::client::{
    InMemoryCredentials, McpCredential, McpError, McpServer, McpServerConfig, OAuthClient,
    OAuthGrant, OAuthRefreshError, OAuthTokens,
};
use agboss_core::mcp::server::oauth::OAuthResourceServer;
use agboss_core::store::{MemoryStore, SecretStore};
use issuer::{Issuer, Jwks, Key, free_port, now};
use serde_json::{Value, json};

#[allow(dead_code)]
#[path = "mcp/echo.rs"]
mod echo;
#[allow(dead_code)]
#[path = "mcp/issuer.rs"]
mod issuer;

use echo::*;

/// How long an access token lasts, in seconds.
const LIFETIME: u64 = 2;

/// The token endpoint: which refresh token is whose, what it was asked.
#[derive(Default)]
struct Tokens {
    valid: HashMap<String, String>,
    issued: HashMap<String, u32>,
    /// Each refresh asked: (refresh token, its tenant, the `resource` sent).
    asked: Vec<(String, String, String)>,
    down: bool,
}

struct Endpoint {
    url: String,
    state: Arc<Mutex<Tokens>>,
}

fn access_token(key: &Key, issuer: &str, resource: &str, tenant: &str) -> String {
    key.sign(
        &json!({ "iss": issuer, "aud": resource, "sub": format!("user-of-{tenant}"),
        "tenant": tenant, "scope": "", "exp": now() + LIFETIME, "iat": now() }),
    )
}

async fn token_endpoint(key: Arc<Key>, issuer: String, resource: String) -> Endpoint {
    let state = Arc::new(Mutex::new(Tokens::default()));
    let shared = Arc::clone(&state);
    let router = axum::Router::new().route(
        "/token",
        axum::routing::post(move |body: String| {
            let (state, key) = (Arc::clone(&shared), Arc::clone(&key));
            let (issuer, resource) = (issuer.clone(), resource.clone());
            async move {
                use axum::http::{StatusCode, header};
                let json = [(header::CONTENT_TYPE, "application/json")];
                let form: HashMap<&str, &str> =
                    body.split('&').filter_map(|p| p.split_once('=')).collect();
                let mut tokens = state.lock().unwrap();
                if tokens.down {
                    return (StatusCode::SERVICE_UNAVAILABLE, json, "{}".to_owned());
                }
                let refresh = form.get("refresh_token").copied().unwrap_or_default();
                let sent = form.get("resource").copied().unwrap_or_default().to_owned();
                let Some(tenant) = tokens.valid.remove(refresh) else {
                    let refused = json!({ "error": "invalid_grant" }).to_string();
                    return (StatusCode::BAD_REQUEST, json, refused);
                };
                tokens
                    .asked
                    .push((refresh.to_owned(), tenant.clone(), sent));
                let n = tokens.issued.entry(tenant.clone()).or_insert(1);
                *n += 1;
                let rotated = format!("rt-{tenant}-{n}");
                tokens.valid.insert(rotated.clone(), tenant.clone());
                let answer = json!({
                    "access_token": access_token(&key, &issuer, &resource, &tenant),
                    "token_type": "Bearer", "expires_in": LIFETIME, "refresh_token": rotated });
                (StatusCode::OK, json, answer.to_string())
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/token", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    Endpoint { url, state }
}

fn refresh_error(error: &agboss_core::ToolCallError) -> &OAuthRefreshError {
    let McpError::Credentials { source, .. } = mcp_error(error) else {
        panic!("{error:?}")
    };
    source
        .downcast_ref::<OAuthRefreshError>()
        .unwrap_or_else(|| panic!("{source:?}"))
}

async fn stored(store: &MemoryStore, tenant: &str) -> Value {
    let value = store
        .secret(tenant, "mcp-oauth:echo")
        .await
        .unwrap()
        .unwrap();
    serde_json::from_str(&value).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_tokens_are_refreshed_once_per_tenant_and_a_failed_refresh_fails_closed() {
    let key = Arc::new(Key::generate("k1"));
    let issuer = Issuer::start(Jwks::Keys(vec![key.jwk()])).await;
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let oauth = OAuthResourceServer::new(&resource, &issuer.url, issuer.jwks_uri())
        .expect("config")
        .leeway(Duration::ZERO);
    let remote = App::builder().tool::<WhoamiTool>().build().unwrap();
    let server = remote
        .serve_mcp()
        .direct_chains()
        .oauth(oauth)
        .http(format!("127.0.0.1:{port}"))
        .await
        .expect("serves");
    let endpoint = token_endpoint(Arc::clone(&key), issuer.url.clone(), resource.clone()).await;

    let store = Arc::new(MemoryStore::new());
    let tokens = OAuthTokens::new(
        Arc::clone(&store),
        OAuthClient::new(&endpoint.url, "agboss", &resource),
    );
    for tenant in ["acme", "globex"] {
        let refresh = format!("rt-{tenant}-1");
        let grant = OAuthGrant::new(access_token(&key, &issuer.url, &resource, tenant))
            .refresh_token(&refresh)
            .expires_in(Duration::from_secs(LIFETIME));
        tokens.set("echo", tenant, &grant).await.unwrap();
        endpoint
            .state
            .lock()
            .unwrap()
            .valid
            .insert(refresh, tenant.to_owned());
    }
    let echo = McpServer::connect(
        McpServerConfig::http("echo", server.url())
            .credentials(tokens.clone())
            .list_tools_as("acme"),
    )
    .await
    .expect("connects");
    let app = App::builder()
        .mcp_server(echo)
        .tool::<RemoteWhoamiTool>()
        .build()
        .unwrap();
    let asked = || endpoint.state.lock().unwrap().asked.clone();
    let past_expiry = || tokio::time::sleep(Duration::from_millis(LIFETIME * 1000 + 1200));

    // Fresh tokens: used as they are.
    assert_eq!(seen(&app, "acme", "1").await.unwrap().seen, "acme");
    assert_eq!(seen(&app, "globex", "1").await.unwrap().seen, "globex");
    assert!(asked().is_empty());

    // Past expiry (the server refuses the old tokens now): concurrent calls refresh once.
    past_expiry().await;
    let first_acme = stored(&store, "acme").await;
    let calls = (0..4).map(|i| {
        let app = &app;
        async move { seen(app, "acme", &i.to_string()).await }
    });
    for answer in futures::future::join_all(calls).await {
        assert_eq!(answer.unwrap().seen, "acme");
    }
    assert_eq!(
        asked(),
        [(
            "rt-acme-1".to_owned(),
            "acme".to_owned(),
            resource.replace(':', "%3A").replace('/', "%2F")
        )]
    );
    let acme = stored(&store, "acme").await;
    assert_eq!(acme["token_response"]["refresh_token"], "rt-acme-2");
    assert_ne!(
        acme["token_response"]["access_token"],
        first_acme["token_response"]["access_token"]
    );
    assert_eq!(seen(&app, "acme", "again").await.unwrap().seen, "acme");
    assert_eq!(asked().len(), 1, "no second refresh");

    // globex refreshes with its own refresh token; acme's tokens are untouched.
    assert_eq!(seen(&app, "globex", "2").await.unwrap().seen, "globex");
    let globex = asked()[1].clone();
    assert_eq!(
        (globex.0.as_str(), globex.1.as_str()),
        ("rt-globex-1", "globex")
    );
    assert_eq!(stored(&store, "acme").await, acme);
    assert_eq!(
        stored(&store, "globex").await["token_response"]["refresh_token"],
        "rt-globex-2"
    );

    // acme's refresh token is revoked: its next call past expiry fails closed, typed; globex
    // goes on.
    endpoint.state.lock().unwrap().valid.remove("rt-acme-2");
    past_expiry().await;
    let err = seen(&app, "acme", "3").await.unwrap_err();
    assert!(
        matches!(refresh_error(&err), OAuthRefreshError::Rejected { tenant, .. } if tenant == "acme"),
        "{err:?}"
    );
    assert_eq!(seen(&app, "globex", "3").await.unwrap().seen, "globex");

    // The token endpoint is down: a refresh that does not complete fails the call too.
    endpoint.state.lock().unwrap().down = true;
    past_expiry().await;
    let err = seen(&app, "globex", "4").await.unwrap_err();
    assert!(
        matches!(refresh_error(&err), OAuthRefreshError::Failed { tenant, .. } if tenant == "globex"),
        "{err:?}"
    );
    endpoint.state.lock().unwrap().down = false;

    // A token the server refuses before its expiry (signed by a key it does not trust): the
    // session is refused (401) before anything is sent, the token refreshed once, the call
    // made with the new one.
    let untrusted = Key::generate("k-old");
    for tenant in ["initech", "umbrella"] {
        let grant = OAuthGrant::new(access_token(&untrusted, &issuer.url, &resource, tenant))
            .refresh_token(format!("rt-{tenant}-1"))
            .expires_in(Duration::from_secs(600));
        tokens.set("echo", tenant, &grant).await.unwrap();
    }
    let initech = ("rt-initech-1".to_owned(), "initech".to_owned());
    endpoint
        .state
        .lock()
        .unwrap()
        .valid
        .insert(initech.0, initech.1);
    let before = asked().len();
    assert_eq!(seen(&app, "initech", "5").await.unwrap().seen, "initech");
    assert_eq!(asked().len(), before + 1);
    assert_eq!(asked()[before].0, "rt-initech-1");
    assert_eq!(seen(&app, "initech", "6").await.unwrap().seen, "initech");
    assert_eq!(asked().len(), before + 1, "refreshed once");
    // Refused, and its refresh token refused too: typed, unsent.
    let err = seen(&app, "umbrella", "7").await.unwrap_err();
    assert!(
        matches!(refresh_error(&err), OAuthRefreshError::Rejected { tenant, .. } if tenant == "umbrella"),
        "{err:?}"
    );
    // A store that cannot renew a refused credential: `McpError::Unauthorized`.
    let fixed = InMemoryCredentials::new();
    fixed.set(
        "echo",
        "acme",
        McpCredential::bearer(access_token(&key, &issuer.url, &resource, "acme")),
    );
    let echo = McpServer::connect(
        McpServerConfig::http("echo", server.url())
            .credentials(fixed.clone())
            .list_tools_as("acme"),
    )
    .await
    .expect("connects");
    let plain = App::builder()
        .mcp_server(echo)
        .tool::<RemoteWhoamiTool>()
        .build()
        .unwrap();
    fixed.set(
        "echo",
        "globex",
        McpCredential::bearer(access_token(&untrusted, &issuer.url, &resource, "globex")),
    );
    let err = seen(&plain, "globex", "8").await.unwrap_err();
    assert!(
        matches!(
            mcp_error(&err),
            McpError::Unauthorized { server: "echo", .. }
        ),
        "{err:?}"
    );
    server.shutdown().await.expect("shuts down");
}
