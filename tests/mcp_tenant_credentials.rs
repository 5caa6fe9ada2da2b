//! Per-tenant credentials of a remote MCP server (`McpServerConfig::credentials`): the remote
//! is a small streamable-HTTP MCP server started here (`mcp/echo.rs`) whose authenticator
//! takes any bearer token and whose `whoami-tool` answers the token it saw. A call of tenant A never uses tenant B's token (also concurrently, also with a
//! pool of one session), a refreshed token is used from the next call on, and a tenant without
//! a credential (or a call without a tenant) fails with `McpError::NoCredential` unsent. The
//! credentials kept in the app's store (`StoreCredentials`, on memory, SQLite and PostgreSQL)
//! do the same, and are shared by every instance over the same database.
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agboss_core::App;
use agboss_core::mcp::client::{
    CredentialStore, InMemoryCredentials, McpCredential, McpError, McpServer, McpServerConfig,
    StoreCredentials,
};
use agboss_core::store::types::random_id;
use agboss_core::store::{MemoryStore, PostgresStore, SecretStore, SqliteStore};

#[path = "mcp/echo.rs"]
mod echo;

use echo::*;

async fn client_app(url: &str, store: &(impl CredentialStore + Clone), max: usize) -> App {
    client_app_as(url, store, max, "acme").await
}

/// The client app, listing the server's tools as `list_as`.
async fn client_app_as(
    url: &str,
    store: &(impl CredentialStore + Clone),
    max: usize,
    list_as: &str,
) -> App {
    let echo = McpServer::connect(
        McpServerConfig::http("echo", url)
            .credentials(store.clone())
            .list_tools_as(list_as)
            .max_tenant_connections(max),
    )
    .await
    .expect("connects");
    App::builder()
        .mcp_server(echo)
        .tool::<RemoteWhoamiTool>()
        .mcp_server_tools("echo")
        .build()
        .expect("client app")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_tenants_calls_carry_its_own_token_and_never_another() {
    let (server, _) = echo_server().await;
    let store = InMemoryCredentials::new();
    store.set("echo", "acme", McpCredential::bearer("tok-acme"));
    store.set("echo", "globex", McpCredential::bearer("tok-globex"));
    let app = client_app(&server.url(), &store, 8).await;

    assert_eq!(seen(&app, "acme", "1").await.unwrap().seen, "tok-acme");
    assert_eq!(seen(&app, "globex", "2").await.unwrap().seen, "tok-globex");
    // Interleaved and concurrent: every answer is its own tenant's.
    let calls = (0..24).map(|i| {
        let (app, tenant) = (&app, if i % 2 == 0 { "acme" } else { "globex" });
        async move { (tenant, seen(app, tenant, &i.to_string()).await) }
    });
    for (tenant, answer) in futures::future::join_all(calls).await {
        let answer = answer.unwrap();
        assert_eq!(answer.seen, format!("tok-{tenant}"), "{answer:?}");
    }
    // A whole server's tool resolves the credential the same way.
    let whole = app
        .tool_by_name("echo__whoami-tool")
        .expect("listed")
        .tenant("globex")
        .invoke_json(r#"{"note": "w"}"#)
        .await
        .unwrap();
    assert!(
        whole.contains("tok-globex") && !whole.contains("tok-acme"),
        "{whole}"
    );

    // A refreshed token is used from the next call on.
    store.set("echo", "acme", McpCredential::bearer("tok-acme-2"));
    assert_eq!(seen(&app, "acme", "3").await.unwrap().seen, "tok-acme-2");
    server.shutdown().await.expect("shuts down");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pool_of_one_session_still_keeps_tenants_apart() {
    let (server, _) = echo_server().await;
    let store = InMemoryCredentials::new();
    store.set("echo", "acme", McpCredential::bearer("tok-acme"));
    store.set("echo", "globex", McpCredential::bearer("tok-globex"));
    let app = client_app(&server.url(), &store, 1).await;
    for round in 0..4 {
        for tenant in ["acme", "globex"] {
            let answer = seen(&app, tenant, &round.to_string()).await.unwrap();
            assert_eq!(answer.seen, format!("tok-{tenant}"));
        }
    }
    let calls = (0..10).map(|i| {
        let (app, tenant) = (&app, if i % 2 == 0 { "acme" } else { "globex" });
        async move { (tenant, seen(app, tenant, "c").await) }
    });
    for (tenant, answer) in futures::future::join_all(calls).await {
        assert_eq!(answer.unwrap().seen, format!("tok-{tenant}"));
    }
    server.shutdown().await.expect("shuts down");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_credential_is_a_typed_error_and_nothing_is_sent() {
    let (server, requests) = echo_server().await;
    let store = InMemoryCredentials::new();
    store.set("echo", "acme", McpCredential::bearer("tok-acme"));
    let app = client_app(&server.url(), &store, 8).await;
    let before = requests.load(Ordering::SeqCst);

    let err = seen(&app, "initech", "x").await.unwrap_err();
    assert!(
        matches!(mcp_error(&err), McpError::NoCredential { server: "echo", tenant: Some(t), ticket: None } if t == "initech"),
        "{err:?}"
    );
    // No tenant at all: refused the same way, not sent with anyone's token.
    let err = app
        .tool::<RemoteWhoamiTool>()
        .invoke(NoteDto { note: "x".into() })
        .await
        .unwrap_err();
    assert!(
        matches!(mcp_error(&err), McpError::NoCredential { tenant: None, .. }),
        "{err:?}"
    );
    // A credential removed is missing from the next call on.
    store.remove("echo", "acme");
    let err = seen(&app, "acme", "x").await.unwrap_err();
    assert!(
        matches!(mcp_error(&err), McpError::NoCredential { .. }),
        "{err:?}"
    );
    assert_eq!(
        requests.load(Ordering::SeqCst),
        before,
        "nothing reached the server"
    );

    // Listing as a tenant without a credential: `connect` fails, typed.
    let err = McpServer::connect(
        McpServerConfig::http("echo", server.url())
            .credentials(InMemoryCredentials::new())
            .list_tools_as("acme"),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, McpError::NoCredential { .. }), "{err}");
    // A stdio server is one process for every tenant: refused, not shared.
    let err = McpServer::connect(
        McpServerConfig::stdio("echo", "true").credentials(InMemoryCredentials::new()),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, McpError::Start { .. }), "{err}");
    server.shutdown().await.expect("shuts down");
}

/// `StoreCredentials` over every backend: memory, SQLite (two stores on one file: two
/// instances of the app) and PostgreSQL (a schema of its own on `AGBOSS_TEST_POSTGRES_URL`; in
/// CI a missing server fails the test).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_kept_in_the_apps_store_are_each_tenants_own() {
    let (server, requests) = echo_server().await;
    let dir = std::env::temp_dir().join(random_id("agboss-credentials"));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("credentials.db");
    let sqlite = SqliteStore::open(&file).await.unwrap();
    let memory = MemoryStore::new();
    memory
        .put_secret("acme", "mcp-server:echo", "not json")
        .await
        .unwrap();
    check_store(&server.url(), &requests, Arc::new(memory)).await;
    // Written through one instance's store, read through another's over the same file.
    let other = SqliteStore::open(&file).await.unwrap();
    StoreCredentials::new(other)
        .set("echo", "acme", &McpCredential::bearer("tok-acme"))
        .await
        .unwrap();
    sqlite
        .put_secret("globex", "mcp-server:echo", "[]")
        .await
        .unwrap();
    check_store(&server.url(), &requests, sqlite).await;
    match std::env::var("AGBOSS_TEST_POSTGRES_URL") {
        Ok(url) if !url.trim().is_empty() => {
            let schema = format!("agboss_credentials_{}", random_id("s"));
            let pg = PostgresStore::connect_with_schema(&url, &schema)
                .await
                .unwrap();
            pg.put_secret("acme", "mcp-server:echo", "{").await.unwrap();
            check_store(&server.url(), &requests, pg).await;
        }
        _ if std::env::var_os("CI").is_some() => panic!("AGBOSS_TEST_POSTGRES_URL is not set"),
        _ => eprintln!("skipped PostgreSQL: AGBOSS_TEST_POSTGRES_URL not set"),
    }
    server.shutdown().await.expect("shuts down");
}

/// On `store`, whose credential of acme or globex for `echo` is unreadable (or acme's already
/// set): an unreadable one fails the call unsent; each tenant's calls carry its own token; a
/// refreshed one is used next; a removed one is missing.
async fn check_store<S: SecretStore + Clone>(url: &str, requests: &AtomicUsize, store: S) {
    let credentials = StoreCredentials::new(store.clone());
    let unreadable = match store.secret("acme", "mcp-server:echo").await.unwrap() {
        Some(value) if value.starts_with("[[") => "globex",
        _ => "acme",
    };
    // initech has no credential yet: listing as it fails, typed.
    let echo = McpServer::connect(
        McpServerConfig::http("echo", url)
            .credentials(credentials.clone())
            .list_tools_as("initech"),
    )
    .await;
    assert!(
        matches!(echo, Err(McpError::NoCredential { .. })),
        "{echo:?}"
    );
    credentials
        .set("echo", "initech", &McpCredential::bearer("tok-initech"))
        .await
        .unwrap();
    let app = client_app_as(url, &credentials, 8, "initech").await;
    let listed = requests.load(Ordering::SeqCst);
    let err = seen(&app, unreadable, "x").await.unwrap_err();
    assert!(
        matches!(mcp_error(&err), McpError::Credentials { .. }),
        "{err:?}"
    );
    assert_eq!(requests.load(Ordering::SeqCst), listed, "nothing was sent");
    assert_eq!(
        seen(&app, "initech", "0").await.unwrap().seen,
        "tok-initech"
    );

    for tenant in ["acme", "globex"] {
        let token = format!("tok-{tenant}");
        credentials
            .set("echo", tenant, &McpCredential::bearer(&token))
            .await
            .unwrap();
    }
    assert_eq!(seen(&app, "acme", "1").await.unwrap().seen, "tok-acme");
    assert_eq!(seen(&app, "globex", "2").await.unwrap().seen, "tok-globex");
    credentials
        .set("echo", "acme", &McpCredential::bearer("tok-acme-2"))
        .await
        .unwrap();
    assert_eq!(seen(&app, "acme", "3").await.unwrap().seen, "tok-acme-2");
    credentials.remove("echo", "acme").await.unwrap();
    let err = seen(&app, "acme", "4").await.unwrap_err();
    assert!(
        matches!(mcp_error(&err), McpError::NoCredential { .. }),
        "{err:?}"
    );
    assert_eq!(seen(&app, "globex", "5").await.unwrap().seen, "tok-globex");
}
