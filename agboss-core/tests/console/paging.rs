//! An inbox of 1,000 pending tickets (SQLite) is read a page at a time: the first page holds
//! [`INBOX_PAGE`] tickets and links to the next, and its server time stays small. No browser:
//! one HTTP request over a plain TCP connection.
use std::time::{Duration, Instant};

use agboss_core::console::INBOX_PAGE;
use agboss_core::store::{
    NewRun, RunStore as _, SharedStore, SqliteStore, Ticket, TicketStore as _,
};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use super::browser::serve;
use super::fixture::{IxLog, desk};
use super::tokens;

/// `GET path` with the acme manager's cookie: the status line and the body.
async fn get(base: &str, path: &str) -> String {
    let addr = base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nCookie: agboss_console=t-acme-manager\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    response
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_inbox_of_a_thousand_pending_tickets_is_paged() {
    let dir = std::env::temp_dir().join(agboss_core::store::types::random_id("console-paging"));
    std::fs::create_dir_all(&dir).unwrap();
    let store = SharedStore::new(SqliteStore::open(dir.join("paging.db")).await.unwrap());
    let run = NewRun::new("acme", "r-many", "ix-desk-agent", "many refunds");
    let (_, lease) = store
        .begin_run(run, "w", Duration::from_secs(600))
        .await
        .unwrap();
    for i in 0..1000 {
        let mut ticket = Ticket::pending(format!("tk-{i:04}"), "ix-refund-tool", "{}");
        ticket.channel = "ix-manager-channel".into();
        ticket.created_at_ms += i;
        ticket.expires_at_ms = ticket.created_at_ms + 3_600_000;
        store.create_ticket(&lease, &ticket).await.unwrap();
    }
    let app = desk(store, std::sync::Arc::new(IxLog::default()));
    let base = serve(&app, tokens()).await;
    get(&base, "/").await; // warm up: the connection pool, the statement cache
    let started = Instant::now();
    let first = get(&base, "/").await;
    let took = started.elapsed();
    eprintln!("inbox of 1,000 pending tickets, first page: {took:?}");
    assert!(first.starts_with("HTTP/1.1 200"), "{first}");
    assert_eq!(first.matches("data-ticket=").count(), INBOX_PAGE as usize);
    assert!(first.contains(r#"data-ticket="tk-0000""#), "oldest first");
    assert!(
        first.contains(&format!(r#"id="next" href="/?offset={INBOX_PAGE}""#)),
        "{first}"
    );
    assert!(
        took < Duration::from_secs(2),
        "a page is read, not the whole inbox: {took:?}"
    );
    let last = get(&base, "/?offset=975").await;
    assert!(last.contains(r#"data-ticket="tk-0999""#) && !last.contains(r#"id="next""#));
    let _ = std::fs::remove_dir_all(dir);
}
