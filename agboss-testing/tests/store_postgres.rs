//! PostgresStore beyond the conformance suite: races between workers of separate pools (as of
//! separate processes), rows it cannot read, a newer schema, schemas side by side, a server it
//! cannot reach. Needs `AGBOSS_TEST_POSTGRES_URL` (`bash scripts/test.sh` starts a server); each
//! test works in a schema of its own.
mod support;

use std::time::Duration;

use agboss_core::model::Message;
use agboss_core::store::{
    FORMAT_VERSION, NewRun, NewThread, PostgresStore, RunStore, StepEntry, StoreError, ThreadStore,
    TicketDecision, TicketState, TicketStore,
};
use futures::future::join_all;
use sqlx::Row;
use sqlx::postgres::PgPoolOptions;
use support::{assert_corrupt_tickets_refused, pg_url, ticket, two_tickets, unique};

const LONG: Duration = Duration::from_secs(600);

fn entry(key: &str) -> StepEntry {
    StepEntry::ToolAbandoned {
        key: key.into(),
        note: "test".into(),
    }
}

/// Two stores (two pools, as two processes would have) on one new schema.
async fn two_stores(url: &str) -> (PostgresStore, PostgresStore, String) {
    let schema = unique("agboss_test");
    let one = PostgresStore::connect_with_schema(url, &schema)
        .await
        .expect("connect");
    let two = PostgresStore::connect_with_schema(url, &schema)
        .await
        .expect("connect again");
    (one, two, schema)
}

/// A thread `t1` with a run `r1` (input "hi") that journaled one step and one message.
async fn seeded(store: &PostgresStore) {
    store
        .create_thread("acme", NewThread::new().id("t1"))
        .await
        .unwrap();
    let (_, lease) = store
        .begin_run(
            NewRun::new("acme", "r1", "agent", "hi").thread("t1"),
            "w",
            LONG,
        )
        .await
        .unwrap();
    store
        .append(&lease, &entry("model:0"), &[Message::assistant("hello")])
        .await
        .unwrap();
}

async fn rows(store: &PostgresStore, sql: &'static str) -> Vec<(i64, String)> {
    sqlx::query(sql)
        .fetch_all(store.pool())
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_racing_for_an_expired_lease_have_one_winner() {
    let Some(url) = pg_url() else { return };
    let (one, two, _) = two_stores(&url).await;
    for round in 0..20 {
        let id = format!("r{round}");
        let new = || NewRun::new("acme", &id, "agent", "x");
        let (_, first) = one.begin_run(new(), "first", Duration::ZERO).await.unwrap();
        let attempts = join_all((0..6).map(|w| {
            let store = if w % 2 == 0 { &one } else { &two };
            store.begin_run(new(), ["a", "b", "c", "d", "e", "f"][w], LONG)
        }))
        .await;
        let winners: Vec<_> = attempts.iter().filter_map(|r| r.as_ref().ok()).collect();
        assert_eq!(winners.len(), 1, "round {round}: one winner: {attempts:?}");
        assert_eq!(
            winners[0].1.token,
            first.token + 1,
            "the winner's token is the next"
        );
        for r in &attempts {
            assert!(
                matches!(r, Ok(_) | Err(StoreError::LeaseHeld { .. })),
                "the others see the winner's lease: {r:?}"
            );
        }
        let stored = two.run("acme", &id).await.unwrap();
        assert_eq!(stored.lease_token, first.token + 1);
        assert_eq!(
            stored.lease_worker.as_deref(),
            Some(winners[0].1.worker.as_str())
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_racing_to_start_runs_of_one_thread_have_one_winner() {
    let Some(url) = pg_url() else { return };
    let (one, two, _) = two_stores(&url).await;
    for round in 0..10 {
        let thread_id = format!("t{round}");
        one.create_thread("acme", NewThread::new().id(&thread_id))
            .await
            .unwrap();
        // The same new run, started by six workers at once.
        let same = join_all((0..6).map(|w| {
            let store = if w % 2 == 0 { &one } else { &two };
            let run = NewRun::new("acme", format!("same{round}"), "agent", "hi").thread(&thread_id);
            store.begin_run(run, ["a", "b", "c", "d", "e", "f"][w], LONG)
        }))
        .await;
        let won = same.iter().filter(|r| r.is_ok()).count();
        assert_eq!(won, 1, "round {round}: one run, one lease: {same:?}");
        for r in &same {
            assert!(
                matches!(r, Ok(_) | Err(StoreError::LeaseHeld { .. })),
                "{r:?}"
            );
        }
        assert_eq!(
            one.messages("acme", &thread_id, None).await.unwrap().len(),
            1,
            "the input is appended once"
        );
        let (_, lease) = same.into_iter().find_map(Result::ok).unwrap();
        one.finish_run(
            &lease,
            &agboss_core::store::RunEnd::Completed { output: "x".into() },
        )
        .await
        .unwrap();
        // Six different new runs of the thread at once: one starts, five find it busy.
        let many = join_all((0..6).map(|w| {
            let store = if w % 2 == 0 { &one } else { &two };
            let run =
                NewRun::new("acme", format!("r{round}_{w}"), "agent", "hi").thread(&thread_id);
            store.begin_run(run, "w", LONG)
        }))
        .await;
        assert_eq!(many.iter().filter(|r| r.is_ok()).count(), 1, "{many:?}");
        for r in &many {
            assert!(
                matches!(r, Ok(_) | Err(StoreError::ThreadBusy { .. })),
                "{r:?}"
            );
        }
        let (winner, _) = many.iter().find_map(|r| r.as_ref().ok()).unwrap();
        assert_eq!(
            winner.history_len, 1,
            "the winner read the first run's input"
        );
        assert_eq!(
            two.messages("acme", &thread_id, None).await.unwrap().len(),
            2
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn appends_from_two_pools_under_one_lease_get_distinct_positions() {
    let Some(url) = pg_url() else { return };
    let (one, two, _) = two_stores(&url).await;
    one.create_thread("acme", NewThread::new().id("t1"))
        .await
        .unwrap();
    let (_, lease) = one
        .begin_run(
            NewRun::new("acme", "r1", "agent", "x").thread("t1"),
            "w",
            LONG,
        )
        .await
        .unwrap();
    let entries: Vec<_> = (0..40).map(|i| entry(&format!("tool:0:c{i}"))).collect();
    let msg = [Message::assistant("m")];
    let seqs = join_all(entries.iter().enumerate().map(|(i, e)| {
        let store = if i % 2 == 0 { &one } else { &two };
        store.append(&lease, e, &msg)
    }))
    .await;
    let mut seqs: Vec<u64> = seqs.into_iter().map(Result::unwrap).collect();
    seqs.sort_unstable();
    assert_eq!(seqs, (0..40).collect::<Vec<_>>());
    let msgs = two.messages("acme", "t1", None).await.unwrap();
    assert_eq!(msgs.len(), 41);
    assert!(msgs.iter().enumerate().all(|(i, m)| m.seq == i as u64));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tickets_decided_and_advanced_from_two_pools_have_one_winner() {
    let Some(url) = pg_url() else { return };
    let (one, two, _) = two_stores(&url).await;
    let (_, lease) = one
        .begin_run(NewRun::new("acme", "r1", "agent", "x"), "w", LONG)
        .await
        .unwrap();
    let store = |i: usize| if i.is_multiple_of(2) { &one } else { &two };
    for round in 0..10 {
        let id = format!("k{round}");
        one.create_ticket(&lease, &ticket(&id)).await.unwrap();
        // A connection open for each racer, in both pools: the race starts on all of them.
        for r in join_all((0..12).map(|i| store(i).ticket("acme", &id))).await {
            r.unwrap();
        }
        let now = agboss_core::store::types::now_ms();
        let decisions: Vec<_> = (0..12)
            .map(|i| TicketDecision::Approved {
                by: format!("approver-{i}"),
            })
            .collect();
        let decided = join_all(
            decisions
                .iter()
                .enumerate()
                .map(|(i, d)| store(i).decide_ticket("acme", &id, d, now)),
        )
        .await;
        let winners: Vec<_> = decided.iter().filter_map(|r| r.as_ref().ok()).collect();
        assert_eq!(winners.len(), 1, "round {round}: one decision: {decided:?}");
        for r in &decided {
            assert!(
                matches!(
                    r,
                    Ok(_)
                        | Err(StoreError::TicketState {
                            expected: TicketState::Pending,
                            found: TicketState::Decided,
                            ..
                        })
                ),
                "{r:?}"
            );
        }
        assert_eq!(two.ticket("acme", &id).await.unwrap(), *winners[0]);

        let (d, e) = (TicketState::Decided, TicketState::Executing);
        let advanced = join_all((0..12).map(|i| store(i).advance_ticket(&lease, &id, d, e))).await;
        assert_eq!(
            advanced.iter().filter(|r| r.is_ok()).count(),
            1,
            "round {round}: one resume: {advanced:?}"
        );
        for r in &advanced {
            assert!(
                matches!(
                    r,
                    Ok(_)
                        | Err(StoreError::TicketState {
                            expected: TicketState::Decided,
                            found: TicketState::Executing,
                            ..
                        })
                ),
                "{r:?}"
            );
        }
        let stored = one.ticket("acme", &id).await.unwrap();
        assert_eq!(stored.state, e);
        assert_eq!(stored.decision, winners[0].decision, "the decision is kept");
    }
}

async fn ticket_rows(store: &PostgresStore) -> Vec<(String, String, Option<String>)> {
    sqlx::query("SELECT id, state, decision FROM tickets ORDER BY id")
        .fetch_all(store.pool())
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect()
}

#[tokio::test]
async fn a_corrupt_ticket_is_refused_and_the_row_kept() {
    let Some(url) = pg_url() else { return };
    let (store, _, _) = two_stores(&url).await;
    let lease = two_tickets(&store).await;
    assert!(
        sqlx::query("UPDATE tickets SET state = 'archived' WHERE id = 'k1'")
            .execute(store.pool())
            .await
            .is_err(),
        "the schema checks states"
    );
    // As a damaged database would hold it (this schema is the test's own).
    for sql in [
        "ALTER TABLE tickets DROP CONSTRAINT tickets_state_check",
        "UPDATE tickets SET state = 'archived' WHERE id = 'k1'",
        "UPDATE tickets SET decision = '{\"kind\":' WHERE id = 'k2'",
    ] {
        sqlx::query(sql).execute(store.pool()).await.unwrap();
    }
    let before = ticket_rows(&store).await;
    assert_eq!(before[0].1, "archived");
    assert_eq!(before[1].2.as_deref(), Some("{\"kind\":"));
    assert_corrupt_tickets_refused(&store, &lease).await;
    assert_eq!(
        ticket_rows(&store).await,
        before,
        "the rows are kept as they were"
    );
}

#[tokio::test]
async fn unknown_formats_and_corrupt_bodies_are_refused_and_the_rows_kept() {
    let Some(url) = pg_url() else { return };
    let (store, _, _) = two_stores(&url).await;
    seeded(&store).await;
    sqlx::query("UPDATE steps SET format = 99")
        .execute(store.pool())
        .await
        .unwrap();
    sqlx::query("UPDATE messages SET format = 99 WHERE seq = 1")
        .execute(store.pool())
        .await
        .unwrap();
    let steps_before = rows(&store, "SELECT format, body FROM steps").await;
    let messages_before = rows(&store, "SELECT format, body FROM messages ORDER BY seq").await;
    match store.steps("acme", "r1").await {
        Err(StoreError::UnknownFormat {
            found, supported, ..
        }) => assert_eq!((found, supported), (99, FORMAT_VERSION)),
        other => panic!("expected UnknownFormat, got {other:?}"),
    }
    assert!(matches!(
        store.messages("acme", "t1", None).await,
        Err(StoreError::UnknownFormat { found: 99, .. })
    ));
    assert_eq!(
        rows(&store, "SELECT format, body FROM steps").await,
        steps_before
    );
    assert_eq!(
        rows(&store, "SELECT format, body FROM messages ORDER BY seq").await,
        messages_before
    );
    assert_eq!(steps_before[0].0, 99);

    sqlx::query("UPDATE steps SET format = 1, body = '{\"kind\":'")
        .execute(store.pool())
        .await
        .unwrap();
    sqlx::query("UPDATE messages SET format = 1, body = '[]' WHERE seq = 1")
        .execute(store.pool())
        .await
        .unwrap();
    assert!(matches!(
        store.steps("acme", "r1").await,
        Err(StoreError::Corrupt { .. })
    ));
    assert!(matches!(
        store.messages("acme", "t1", None).await,
        Err(StoreError::Corrupt { .. })
    ));
    assert_eq!(
        rows(&store, "SELECT format, body FROM steps").await,
        [(FORMAT_VERSION, "{\"kind\":".to_string())]
    );
    assert_eq!(
        store.messages("acme", "t1", Some(1)).await.unwrap().len(),
        1
    );
}

#[tokio::test]
async fn a_schema_migrated_by_a_newer_build_is_refused() {
    let Some(url) = pg_url() else { return };
    let (store, _, schema) = two_stores(&url).await;
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
         VALUES (99990101, 'from the future', TRUE, '\\x00', 0)",
    )
    .execute(store.pool())
    .await
    .unwrap();
    store.close().await;
    match PostgresStore::connect_with_schema(&url, &schema).await {
        Err(StoreError::Schema { detail, .. }) => {
            assert!(detail.contains("99990101"), "names the migration: {detail}");
        }
        other => panic!("expected Schema, got {other:?}"),
    }
    // The refused migration left no lock behind: other schemas still migrate.
    let other = tokio::time::timeout(
        Duration::from_secs(20),
        PostgresStore::connect_with_schema(&url, &unique("agboss_test")),
    )
    .await
    .expect("the migration lock was released")
    .expect("connect");
    other.close().await;
}

#[tokio::test]
async fn schemas_keep_stores_apart() {
    let Some(url) = pg_url() else { return };
    let (a, _, _) = two_stores(&url).await;
    let (b, _, _) = two_stores(&url).await;
    a.create_thread("acme", NewThread::new().id("t1"))
        .await
        .unwrap();
    assert!(matches!(
        b.thread("acme", "t1").await,
        Err(StoreError::ThreadNotFound { .. })
    ));
    b.create_thread("acme", NewThread::new().id("t1"))
        .await
        .expect("the same id in another schema");
    match PostgresStore::connect_with_schema(&url, "bad\"; DROP SCHEMA public; --").await {
        Err(StoreError::Schema { .. }) => {}
        other => panic!("a schema name that is no plain identifier: {other:?}"),
    }
}

#[tokio::test]
async fn a_server_that_cannot_be_reached_is_a_backend_error() {
    // Any PostgreSQL URL works here: this test needs no server, so it runs everywhere.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    // (The listener is dropped: nothing listens on the port any more.)
    let url = format!("postgres://postgres@127.0.0.1:{port}/agboss_test");
    match PostgresStore::connect_with_schema(&url, "agboss_unreachable").await {
        Err(e @ StoreError::Backend { .. }) => assert!(e.is_transient()),
        other => panic!("expected Backend, got {other:?}"),
    }
    let pool = PgPoolOptions::new()
        .acquire_timeout(Duration::from_millis(300))
        .connect_lazy(&url)
        .unwrap();
    match PostgresStore::from_pool(pool).await {
        Err(StoreError::Backend { operation, .. }) => assert_eq!(operation, "migrate"),
        other => panic!("expected Backend, got {other:?}"),
    }
    match PostgresStore::connect("postgres://[not a url").await {
        Err(StoreError::Backend { operation, .. }) => assert_eq!(operation, "connect"),
        other => panic!("expected Backend, got {other:?}"),
    }
}
