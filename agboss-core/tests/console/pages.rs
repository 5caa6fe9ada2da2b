//! Every page over plain HTTP on the SQLite and PostgreSQL stores (PostgreSQL on
//! `AGBOSS_TEST_POSTGRES_URL`, a schema of its own; in CI a missing server fails the test): the
//! inbox shows the ticket masked with the interceptors that allowed it, only a user allowed to
//! reveal sees the raw input, an approval by form resumes the run (the tool runs once) and the
//! run's page shows it completed, the thread and app pages render, another tenant gets 404.
use std::sync::Arc;
use std::time::{Duration, Instant};

use agboss_core::store::{NewThread, TicketDecision, TicketState};
use agboss_core::{App, RunContext};

use super::browser::serve;
use super::fixture::{IxLog, desk, pending_refund_in, sql_stores};
use super::http::{get, post};
use super::tokens;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pages_work_on_sqlite_and_postgres() {
    for (backend, store) in sql_stores("console").await {
        eprintln!("backend {backend}");
        let log = Arc::new(IxLog::default());
        let app = desk(store, Arc::clone(&log));
        pages_on(&app, &log).await;
    }
}

async fn pages_on(app: &App, log: &IxLog) {
    let thread = app
        .threads("acme")
        .create(NewThread::new().title("Refund A-7"))
        .await
        .unwrap();
    let ctx = RunContext::new().tenant("acme").thread(&thread.id);
    let ticket = pending_refund_in(app, ctx, "A-7 5000 mail jane@example.com").await;
    let base = serve(app, tokens()).await;
    let (manager, auditor) = ("t-acme-manager", "t-acme-auditor");

    // The inbox: the ticket, masked, with the interceptor that allowed it.
    let inbox = get(&base, manager, "/").await;
    assert_eq!(inbox.status, 200, "{}", inbox.text);
    assert!(
        inbox
            .text
            .contains(&format!(r#"data-ticket="{}""#, ticket.id))
    );
    assert!(
        inbox
            .text
            .contains("<code>ix-limit-tool-interceptor</code>"),
        "{}",
        inbox.text
    );
    assert!(!inbox.text.contains("jane@example.com"), "masked");

    // The raw input: never for a user the authenticator does not allow, whatever they ask.
    let page = format!("/tickets/{}", ticket.id);
    let asked = get(&base, manager, &format!("{page}?reveal=1")).await;
    assert_eq!(asked.status, 200);
    assert!(!asked.text.contains("jane@example.com"), "{}", asked.text);
    assert!(!asked.text.contains(r#"id="raw-input""#) && !asked.text.contains(r#"id="reveal""#));
    let offered = get(&base, auditor, &page).await;
    assert!(offered.text.contains(r#"id="reveal""#), "{}", offered.text);
    assert!(
        !offered.text.contains("jane@example.com"),
        "masked until asked"
    );
    let revealed = get(&base, auditor, &format!("{page}?reveal=1")).await;
    assert!(
        revealed.text.contains(r#"id="raw-input""#) && revealed.text.contains("jane@example.com"),
        "{}",
        revealed.text
    );

    // Another tenant: not found, by URL too.
    for path in [
        page.clone(),
        format!("/runs/{}", ticket.run_id),
        format!("/threads/{}", thread.id),
    ] {
        assert_eq!(
            get(&base, "t-globex-manager", &path).await.status,
            404,
            "{path}"
        );
    }

    // The manager approves by the page's form: the browser is sent to the run's page.
    let form = get(&base, manager, &page).await;
    let approved = post(
        &base,
        manager,
        &format!("{page}/approve"),
        &format!("csrf={}", form.csrf()),
    )
    .await;
    assert_eq!(approved.status, 303, "{}", approved.text);
    let run_page = format!("/runs/{}", ticket.run_id);
    assert_eq!(approved.header("location"), Some(run_page.as_str()));
    let started = Instant::now();
    let run = loop {
        let run = get(&base, manager, &run_page).await;
        if run.text.contains(r#"data-status="completed""#) {
            break run;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the run did not complete: {}",
            run.text
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(run.text.contains("refunded 5000 on A-7"), "{}", run.text);
    assert!(
        run.text.contains("approved by acme-manager"),
        "{}",
        run.text
    );
    assert_eq!(log.refunds(), [("A-7".to_string(), 5000)], "ran once");
    let stored = app.tickets("acme").get(&ticket.id).await.unwrap();
    assert_eq!(stored.state, TicketState::Completed);
    assert!(matches!(
        stored.decision,
        Some(TicketDecision::Approved { ref by }) if by == "acme-manager"
    ));

    // The thread and the app.
    let messages = get(&base, manager, &format!("/threads/{}", thread.id)).await;
    assert_eq!(messages.status, 200);
    assert!(
        messages.text.contains("refunded 5000 on A-7"),
        "{}",
        messages.text
    );
    let structure = get(&base, manager, "/app").await;
    assert!(structure.text.contains("ix-limit-tool-interceptor"));
    let empty = get(&base, manager, "/").await;
    assert!(empty.text.contains(r#"id="empty""#), "{}", empty.text);
}
