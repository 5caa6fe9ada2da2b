//! The ticket API an inbox needs, without a page: `app.tickets(tenant)` lists (pending first,
//! filtered, paged), gets and decides; an edit is validated against the tool's input DTO when
//! it is decided; `app.resume_ticket` needs no thread id; another tenant sees nothing.
mod fixture;
mod follow;

use std::sync::Arc;

use agboss_core::engine::Decision;
use agboss_core::prelude::{Approver, RunContext, RunError};
use agboss_core::store::{MemoryStore, SharedStore, StoreError, TicketQuery, TicketState};
use fixture::{IxLog, desk, manager, pending_refund, sql_stores};

fn app() -> (agboss_core::App, Arc<IxLog>) {
    let log = Arc::new(IxLog::default());
    (
        desk(SharedStore::new(MemoryStore::new()), Arc::clone(&log)),
        log,
    )
}

/// The desk on every backend: memory and the SQL stores ([`sql_stores`]).
async fn apps() -> Vec<(&'static str, agboss_core::App, Arc<IxLog>)> {
    let mut stores = vec![("memory", SharedStore::new(MemoryStore::new()))];
    stores.extend(sql_stores("tickets").await);
    stores
        .into_iter()
        .map(|(name, store)| {
            let log = Arc::new(IxLog::default());
            (name, desk(store, Arc::clone(&log)), log)
        })
        .collect()
}

fn ctx() -> RunContext {
    RunContext::new().tenant("acme")
}

#[tokio::test]
async fn another_tenant_lists_gets_and_decides_nothing() {
    for (backend, app, log) in apps().await {
        eprintln!("backend {backend}");
        another_tenant_sees_nothing_on(&app, &log).await;
    }
}

async fn another_tenant_sees_nothing_on(app: &agboss_core::App, log: &IxLog) {
    let app = app.clone();
    let ticket = pending_refund(&app, "acme", "A-1 5000 thanks").await;
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
        globex.get(&ticket.id).await,
        Err(StoreError::TicketNotFound { .. })
    ));
    for decided in [
        globex.approve(&ticket.id, manager("globex")).await,
        globex.reject(&ticket.id, manager("globex"), "no").await,
        globex.edit(&ticket.id, manager("globex"), "{}").await,
        // A manager of acme deciding through globex's handle finds nothing either.
        globex.approve(&ticket.id, manager("acme")).await,
    ] {
        assert!(
            matches!(
                decided,
                Err(RunError::Store(StoreError::TicketNotFound { .. }))
            ),
            "{decided:?}"
        );
    }
    let resumed = app
        .resume_ticket(&ticket.id, RunContext::new().tenant("globex"))
        .await;
    assert!(matches!(
        resumed.map_err(RunError::from),
        Err(RunError::Store(StoreError::TicketNotFound { .. }))
    ));
    let still = app.tickets("acme").get(&ticket.id).await.unwrap();
    assert_eq!(still.state, TicketState::Pending);
    assert!(log.refunds().is_empty());
}

#[tokio::test]
async fn lists_pending_first_filtered_and_paged() {
    for (backend, app, _log) in apps().await {
        eprintln!("backend {backend}");
        lists_on(&app).await;
    }
}

async fn lists_on(app: &agboss_core::App) {
    let app = app.clone();
    // Tickets of one millisecond are ordered by id (random here): a millisecond apart each.
    let tick = || tokio::time::sleep(std::time::Duration::from_millis(3));
    let first = pending_refund(&app, "acme", "A-1 100 one").await;
    tick().await;
    let second = pending_refund(&app, "acme", "A-2 200 two").await;
    tick().await;
    let third = pending_refund(&app, "acme", "A-3 300 three").await;
    pending_refund(&app, "globex", "G-1 100 other").await;
    let acme = app.tickets("acme");
    acme.approve(&first.id, manager("acme")).await.unwrap();
    let ids = |page: agboss_core::store::TicketPage| {
        page.tickets.into_iter().map(|t| t.id).collect::<Vec<_>>()
    };
    let all = acme.list(&TicketQuery::new()).await.unwrap();
    assert_eq!(ids(all), [&*second.id, &third.id, &first.id]);
    let pending = acme.list(&TicketQuery::new().pending()).await.unwrap();
    assert_eq!(ids(pending), [&*second.id, &third.id]);
    let of_run = acme
        .list(&TicketQuery::new().run(&third.run_id))
        .await
        .unwrap();
    assert_eq!(ids(of_run), [&*third.id]);
    let of_channel = TicketQuery::new().channel("ix-manager-channel").pending();
    assert_eq!(acme.list(&of_channel).await.unwrap().tickets.len(), 2);
    let other_channel = TicketQuery::new().channel("another-channel");
    assert!(acme.list(&other_channel).await.unwrap().tickets.is_empty());
    let page = acme.list(&TicketQuery::new().limit(2)).await.unwrap();
    assert_eq!(page.next_offset, Some(2));
    let rest = acme
        .list(&TicketQuery::new().limit(2).offset(2))
        .await
        .unwrap();
    assert_eq!((ids(rest), page.tickets.len()), (vec![first.id.clone()], 2));
}

#[tokio::test]
async fn an_invalid_edit_is_refused_at_decide_time_and_the_ticket_stays_pending() {
    let (app, log) = app();
    let ticket = pending_refund(&app, "acme", "A-1 5000 thanks").await;
    let acme = app.tickets("acme");
    let bad = r#"{"orderId":"A-1","amountCents":0,"note":"x"}"#;
    let refused = acme
        .edit(&ticket.id, manager("acme"), bad)
        .await
        .unwrap_err();
    let RunError::InvalidEdit {
        ticket_id,
        source: fields,
        ..
    } = &refused
    else {
        panic!("expected an invalid edit, got {refused}")
    };
    assert_eq!(ticket_id, &ticket.id);
    assert_eq!(fields.errors[0].path, "$.amountCents", "{fields}");
    // Not JSON at all, and through App::decide directly: the same refusal.
    let not_json = app
        .decide("acme", Decision::edit(&ticket.id, "{").by(manager("acme")))
        .await
        .unwrap_err();
    assert!(
        matches!(not_json, RunError::InvalidEdit { .. }),
        "{not_json}"
    );
    assert_eq!(
        acme.get(&ticket.id).await.unwrap().state,
        TicketState::Pending
    );

    let good = r#"{"orderId":"A-1","amountCents":4000,"note":"x"}"#;
    let decided = acme.edit(&ticket.id, manager("acme"), good).await.unwrap();
    assert_eq!(decided.state, TicketState::Decided);
    let out = app.resume_ticket(&ticket.id, ctx()).await.unwrap();
    assert!(out.text.contains("refunded 4000 on A-1"), "{}", out.text);
    assert_eq!(log.refunds(), [("A-1".to_string(), 4000)]);
}

#[tokio::test]
async fn approve_then_resume_by_ticket_runs_the_call_once() {
    let (app, log) = app();
    let ticket = pending_refund(&app, "acme", "A-1 5000 thanks").await;
    let acme = app.tickets("acme");
    let clerk = Approver::new("sam").tenant("acme").role("clerk");
    let refused = acme.approve(&ticket.id, clerk).await.unwrap_err();
    assert!(
        matches!(refused, RunError::Unauthorized { .. }),
        "{refused}"
    );
    acme.approve(&ticket.id, manager("acme")).await.unwrap();
    let out = app.resume_ticket(&ticket.id, ctx()).await.unwrap();
    assert!(out.text.contains("refunded 5000"), "{}", out.text);
    assert_eq!(log.refunds().len(), 1);
    let again = acme.approve(&ticket.id, manager("acme")).await.unwrap_err();
    assert!(
        matches!(again, RunError::Store(StoreError::TicketState { .. })),
        "{again}"
    );
    assert!(
        app.resume_ticket(&ticket.id, ctx()).await.is_err(),
        "a finished run"
    );
    assert_eq!(log.refunds().len(), 1);
}

#[tokio::test]
async fn decide_and_resume_rejects_with_the_approvers_message() {
    let (app, log) = app();
    let ticket = pending_refund(&app, "acme", "A-1 5000 thanks").await;
    let reject = Decision::reject(&ticket.id, "no receipt attached").by(manager("acme"));
    let out = app.decide_and_resume(reject, ctx()).await.unwrap();
    assert!(out.text.contains("no receipt attached"), "{}", out.text);
    assert!(log.refunds().is_empty());
    let stored = app.tickets("acme").get(&ticket.id).await.unwrap();
    assert_eq!(stored.state, TicketState::Completed);
}

#[tokio::test]
async fn an_inbox_shows_the_input_masked_by_the_paths_policies() {
    let (app, _log) = app();
    let ticket = pending_refund(&app, "acme", "A-1 5000 write to jane@example.com").await;
    assert!(
        ticket.input.contains("jane@example.com"),
        "the ticket binds the raw input"
    );
    let acme = app.tickets("acme");
    let shown = acme.masked_input(&ticket);
    assert!(!shown.contains("jane@example.com"), "{shown}");
    assert!(shown.contains("A-1"), "{shown}");
    let schema = acme.input_schema(&ticket).unwrap();
    assert!(schema["properties"]["amountCents"].is_object(), "{schema}");
    // A ticket made under a policy this app no longer has shows nothing of its input.
    let mut changed = ticket.clone();
    changed.chain_digest = "another policy".into();
    assert_eq!(acme.masked_input(&changed), agboss_core::app::INPUT_HIDDEN);
}
