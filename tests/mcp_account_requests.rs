//! A missing credential asks a human to connect the account
//! (`McpServerConfig::account_channel`): the remote is the echo server of `mcp/echo.rs`, which
//! answers the token it saw. A call of a tenant without a credential fails with
//! `McpError::NoCredential` naming a ticket on the named channel, unsent; repeated (also
//! concurrent) calls name the same one ticket; another tenant is unaffected and cannot see it;
//! once the credential is stored and the ticket approved, the next call runs with that
//! tenant's token, and a takeover settles the request through the ticket lifecycle. On memory,
//! SQLite and PostgreSQL (a schema of its own on `AGBOSS_TEST_POSTGRES_URL`; in CI a missing
//! server fails the test). The build refuses an unknown channel, a server without per-tenant
//! credentials and an app without a store.
use std::sync::atomic::{AtomicUsize, Ordering};

use agboss_core::contract::channel::Approver;
use agboss_core::di::BuildError;
use agboss_core::mcp::client::{
    InMemoryCredentials, McpCredential, McpError, McpServer, McpServerConfig, StoreCredentials,
};
use agboss_core::store::types::random_id;
use agboss_core::store::{
    MemoryStore, PostgresStore, RunStatus, SecretStore, SqliteStore, Store, StoreError,
    TicketQuery, TicketState,
};
use agboss_core::{App, ToolCallError};
use agboss_testing::approval::ApprovalInbox;

#[path = "mcp/echo.rs"]
mod echo;

use echo::*;

const CHANNEL: &str = "recording-channel";

/// The ticket a missing credential's error names (and that it is that error).
fn ticket_of(error: &ToolCallError, tenant: &str) -> String {
    match mcp_error(error) {
        McpError::NoCredential {
            server: "echo",
            tenant: Some(t),
            ticket: Some(ticket),
        } if t == tenant => ticket.clone(),
        other => panic!("{other:?}"),
    }
}

async fn app_on<S: Store + SecretStore + Clone>(url: &str, store: &S) -> App {
    let credentials = StoreCredentials::new(store.clone());
    credentials
        .set("echo", "initech", &McpCredential::bearer("tok-initech"))
        .await
        .unwrap();
    let echo = McpServer::connect(
        McpServerConfig::http("echo", url)
            .credentials(credentials)
            .list_tools_as("initech")
            .account_channel(CHANNEL),
    )
    .await
    .expect("connects");
    App::builder()
        .mcp_server(echo)
        .tool::<RemoteWhoamiTool>()
        .store(store.clone())
        .build()
        .expect("client app")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_credential_raises_one_ticket_per_tenant_on_every_backend() {
    check(std::sync::Arc::new(MemoryStore::new())).await;
    let dir = std::env::temp_dir().join(random_id("agboss-accounts"));
    std::fs::create_dir_all(&dir).unwrap();
    let sqlite = SqliteStore::open(dir.join("accounts.db")).await.unwrap();
    check(sqlite).await;
    match std::env::var("AGBOSS_TEST_POSTGRES_URL") {
        Ok(url) if !url.trim().is_empty() => {
            let schema = format!("agboss_accounts_{}", random_id("s"));
            let pg = PostgresStore::connect_with_schema(&url, &schema)
                .await
                .unwrap();
            check(pg).await;
        }
        _ if std::env::var_os("CI").is_some() => panic!("AGBOSS_TEST_POSTGRES_URL is not set"),
        _ => eprintln!("skipped PostgreSQL: AGBOSS_TEST_POSTGRES_URL not set"),
    }
}

/// One backend's check, against an echo server of its own: what the app of the previous
/// backend still sends as it closes (its sessions' end) must not count as this one's.
async fn check<S: Store + SecretStore + Clone>(store: S) {
    let (server, requests) = echo_server().await;
    check_on(&server.url(), &requests, store).await;
    server.shutdown().await.expect("shuts down");
}

async fn check_on<S: Store + SecretStore + Clone>(url: &str, requests: &AtomicUsize, store: S) {
    let credentials = StoreCredentials::new(store.clone());
    credentials
        .set("echo", "globex", &McpCredential::bearer("tok-globex"))
        .await
        .unwrap();
    let app = app_on(url, &store).await;
    let inbox = ApprovalInbox::of(&app);
    let before = requests.load(Ordering::SeqCst);

    // acme has no credential: each call fails unsent, all naming one ticket.
    let first = ticket_of(&seen(&app, "acme", "1").await.unwrap_err(), "acme");
    let calls = (0..6).map(|i| {
        let app = &app;
        async move { seen(app, "acme", &i.to_string()).await }
    });
    for answer in futures::future::join_all(calls).await {
        assert_eq!(ticket_of(&answer.unwrap_err(), "acme"), first);
    }
    assert_eq!(
        requests.load(Ordering::SeqCst),
        before,
        "nothing of acme's reached the server"
    );
    // globex, with its credential, is unaffected meanwhile.
    assert_eq!(seen(&app, "globex", "g").await.unwrap().seen, "tok-globex");

    // Exactly one ticket, told to the named channel, of acme, holding no secret.
    let told = inbox.tickets();
    assert_eq!(told.len(), 1, "{told:?}");
    let ticket = &told[0];
    assert_eq!(ticket.id, first);
    assert!(ticket.is_account_request());
    assert_eq!(
        (ticket.tenant.as_str(), ticket.channel.as_str()),
        ("acme", CHANNEL)
    );
    assert_eq!(ticket.tool, "echo");
    let input: serde_json::Value = serde_json::from_str(&ticket.input).unwrap();
    assert_eq!(
        input,
        serde_json::json!({"server": "echo", "tenant": "acme"})
    );
    let pending = app
        .tickets("acme")
        .list(&TicketQuery::new().pending())
        .await;
    assert_eq!(pending.unwrap().tickets.len(), 1);
    // Another tenant neither lists nor reads it.
    let globex = app.tickets("globex");
    assert!(
        globex
            .list(&TicketQuery::new())
            .await
            .unwrap()
            .tickets
            .is_empty()
    );
    assert!(matches!(
        globex.get(&first).await,
        Err(StoreError::TicketNotFound { .. })
    ));
    // umbrella's missing credential is a request of its own.
    let umbrella = ticket_of(&seen(&app, "umbrella", "u").await.unwrap_err(), "umbrella");
    assert_ne!(umbrella, first);
    assert_eq!(inbox.tickets().len(), 2);

    // Approving without storing the credential lets nothing through: the next call asks
    // again (the first request is no longer pending).
    let admin = Approver::new("admin");
    app.tickets("acme")
        .approve(&first, admin.clone())
        .await
        .unwrap();
    let second = ticket_of(&seen(&app, "acme", "1b").await.unwrap_err(), "acme");
    assert_ne!(second, first);
    assert_eq!(inbox.tickets().len(), 3);
    // The credential stored: the next call runs with acme's own token.
    credentials
        .set("echo", "acme", &McpCredential::bearer("tok-acme"))
        .await
        .unwrap();
    assert_eq!(seen(&app, "acme", "2").await.unwrap().seen, "tok-acme");
    assert_eq!(seen(&app, "globex", "3").await.unwrap().seen, "tok-globex");
    // umbrella's request is rejected.
    app.tickets("umbrella")
        .reject(&umbrella, admin, "umbrella is not a customer of the CRM")
        .await
        .unwrap();

    // A takeover settles both through the lifecycle: completed, their runs finished.
    let taken = app.take_over_runs(50).await.unwrap();
    assert!(taken.is_empty(), "nothing else to resume: {taken:?}");
    let acme = app.tickets("acme").get(&first).await.unwrap();
    assert_eq!(acme.state, TicketState::Completed);
    let run = store.run("acme", &acme.run_id).await.unwrap();
    assert_eq!(run.status, RunStatus::Completed, "{run:?}");
    assert!(run.output.unwrap().contains("connected"));
    let umbrella = app.tickets("umbrella").get(&umbrella).await.unwrap();
    assert_eq!(umbrella.state, TicketState::Completed);
    let run = store.run("umbrella", &umbrella.run_id).await.unwrap();
    assert_eq!(run.status, RunStatus::Failed);
    assert!(run.error.unwrap().contains("not a customer"));
    assert!(app.take_over_runs(50).await.unwrap().is_empty());

    // A credential gone missing again names the request still pending.
    credentials.remove("echo", "acme").await.unwrap();
    let again = ticket_of(&seen(&app, "acme", "4").await.unwrap_err(), "acme");
    assert_eq!(again, second);
    assert_eq!(inbox.tickets().len(), 3);
    let listed = store
        .list_tickets("acme", &TicketQuery::new().pending())
        .await
        .unwrap();
    assert_eq!(listed.tickets.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_build_checks_the_account_channel() {
    let (server, _) = echo_server().await;
    let credentials = InMemoryCredentials::new();
    credentials.set("echo", "initech", McpCredential::bearer("tok-initech"));
    let connect = |config: McpServerConfig| async move {
        McpServer::connect(config.list_tools_as("initech"))
            .await
            .expect("connects")
    };
    let base = McpServerConfig::http("echo", server.url()).credentials(credentials.clone());
    let build = |echo: McpServer, store: bool| {
        let builder = App::builder().mcp_server(echo).tool::<RemoteWhoamiTool>();
        let builder = if store {
            builder.store(MemoryStore::new())
        } else {
            builder
        };
        builder.build()
    };
    let problem = |result: Result<App, BuildError>| match result {
        Err(BuildError::Mcp {
            server: "echo",
            tool: None,
            problem,
        }) => problem,
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("built"),
    };
    let unknown = connect(base.clone().account_channel("nowhere-channel")).await;
    assert!(problem(build(unknown, true)).contains("`nowhere-channel` is not a `#[channel]`"));
    let no_store = connect(base.clone().account_channel(CHANNEL)).await;
    assert!(problem(build(no_store, false)).contains("store"));
    // Without per-tenant credentials there is no tenant to ask for.
    let shared = McpServer::connect(
        McpServerConfig::http("echo", server.url())
            .bearer_token("tok-service")
            .account_channel(CHANNEL),
    )
    .await
    .expect("connects");
    assert!(problem(build(shared, true)).contains("per-tenant credentials"));
    // Without an account channel: a typed error naming no ticket, as before.
    let plain = build(connect(base).await, true).unwrap();
    let err = seen(&plain, "acme", "x").await.unwrap_err();
    assert!(matches!(
        mcp_error(&err),
        McpError::NoCredential { ticket: None, .. }
    ));
    assert!(ApprovalInbox::of(&plain).tickets().is_empty());
    server.shutdown().await.expect("shuts down");
}
