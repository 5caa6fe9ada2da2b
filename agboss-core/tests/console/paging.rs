//! An inbox of 1,000 pending tickets (SQLite) is read a page at a time: the first page holds
//! [`INBOX_PAGE`] tickets and links to the next, the last one none. No browser: HTTP requests
//! over plain TCP. Its server time is the `console_inbox` bench's (benches/README.md).
use std::time::Duration;

use agboss_core::console::INBOX_PAGE;
use agboss_core::store::{
    NewRun, RunStore as _, SharedStore, SqliteStore, Ticket, TicketStore as _,
};

use super::browser::serve;
use super::fixture::{IxLog, desk};
use super::http::get;
use super::tokens;

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
    let first = get(&base, "t-acme-manager", "/").await;
    assert_eq!(first.status, 200, "{}", first.text);
    assert_eq!(
        first.text.matches("data-ticket=").count(),
        INBOX_PAGE as usize
    );
    assert!(
        first.text.contains(r#"data-ticket="tk-0000""#),
        "oldest first"
    );
    assert!(
        first
            .text
            .contains(&format!(r#"id="next" href="/?offset={INBOX_PAGE}""#)),
        "{}",
        first.text
    );
    let last = get(&base, "t-acme-manager", "/?offset=975").await;
    assert!(last.text.contains(r#"data-ticket="tk-0999""#) && !last.text.contains(r#"id="next""#));
    assert!(
        last.text.contains(r#"href="/?offset=950">Previous"#),
        "{}",
        last.text
    );
    let _ = std::fs::remove_dir_all(dir);
}
