//! SqliteStore beyond the conformance suite: the file (WAL, reopened, shared by two stores as by
//! two processes), rows it cannot read, a newer schema, a path it cannot open.
mod support;

use std::time::Duration;

use agboss_core::model::Message;
use agboss_core::store::{
    FORMAT_VERSION, NewRun, NewThread, RunStore, SqliteStore, StepEntry, StoreError, ThreadStore,
};
use futures::future::join_all;
use sqlx::Row;
use support::{TempDir, assert_corrupt_tickets_refused, two_tickets};

const LONG: Duration = Duration::from_secs(600);

fn entry(key: &str) -> StepEntry {
    StepEntry::ToolAbandoned {
        key: key.into(),
        note: "test".into(),
    }
}

/// A thread `t1` with a run `r1` (input "hi") that journaled one step and one message.
async fn seeded(store: &SqliteStore) {
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

async fn rows(store: &SqliteStore, sql: &'static str) -> Vec<(i64, String)> {
    sqlx::query(sql)
        .fetch_all(store.pool())
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
}

#[tokio::test]
async fn the_file_is_created_in_wal_mode_and_reopens_with_its_data() {
    let dir = TempDir::new();
    let path = dir.db();
    assert!(!path.exists());
    let store = SqliteStore::open(&path).await.unwrap();
    assert!(path.exists(), "created on first use");
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(mode, "wal");
    let fk: i64 = sqlx::query_scalar("PRAGMA foreign_keys")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(fk, 1, "foreign keys on");
    seeded(&store).await;
    store.close().await;
    drop(store);

    let store = SqliteStore::open(&path)
        .await
        .expect("reopen (migrations already applied)");
    assert_eq!(store.thread("acme", "t1").await.unwrap().message_count, 2);
    assert_eq!(store.steps("acme", "r1").await.unwrap().len(), 1);
    let run = store.run("acme", "r1").await.unwrap();
    assert_eq!((run.steps, run.lease_token), (1, 1));
}

#[tokio::test]
async fn an_unknown_step_format_is_refused_and_the_row_kept() {
    let store = SqliteStore::memory().await.unwrap();
    seeded(&store).await;
    sqlx::query("UPDATE steps SET format = 99")
        .execute(store.pool())
        .await
        .unwrap();
    let before = rows(&store, "SELECT format, body FROM steps").await;
    match store.steps("acme", "r1").await {
        Err(StoreError::UnknownFormat {
            found, supported, ..
        }) => assert_eq!((found, supported), (99, FORMAT_VERSION)),
        other => panic!("expected UnknownFormat, got {other:?}"),
    }
    assert_eq!(rows(&store, "SELECT format, body FROM steps").await, before);
    assert_eq!(before[0].0, 99, "the row is still there, unchanged");
}

#[tokio::test]
async fn an_unknown_message_format_is_refused_and_the_row_kept() {
    let store = SqliteStore::memory().await.unwrap();
    seeded(&store).await;
    sqlx::query("UPDATE messages SET format = 99 WHERE seq = 1")
        .execute(store.pool())
        .await
        .unwrap();
    let before = rows(&store, "SELECT format, body FROM messages ORDER BY seq").await;
    assert!(matches!(
        store.messages("acme", "t1", None).await,
        Err(StoreError::UnknownFormat { found: 99, .. })
    ));
    // The first message alone is readable.
    assert_eq!(
        store.messages("acme", "t1", Some(1)).await.unwrap().len(),
        1
    );
    assert_eq!(
        rows(&store, "SELECT format, body FROM messages ORDER BY seq").await,
        before
    );
}

#[tokio::test]
async fn a_corrupt_body_is_refused_and_the_row_kept() {
    let store = SqliteStore::memory().await.unwrap();
    seeded(&store).await;
    sqlx::query("UPDATE steps SET body = '{\"kind\":'")
        .execute(store.pool())
        .await
        .unwrap();
    sqlx::query("UPDATE messages SET body = '[]' WHERE seq = 0")
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
        rows(&store, "SELECT format, body FROM messages WHERE seq = 0").await,
        [(FORMAT_VERSION, "[]".to_string())]
    );
}

#[tokio::test]
async fn a_database_migrated_by_a_newer_build_is_refused() {
    let dir = TempDir::new();
    let path = dir.db();
    let store = SqliteStore::open(&path).await.unwrap();
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
         VALUES (99990101, 'from the future', TRUE, x'00', 0)",
    )
    .execute(store.pool())
    .await
    .unwrap();
    store.close().await;
    drop(store);
    match SqliteStore::open(&path).await {
        Err(StoreError::Schema { detail, .. }) => {
            assert!(detail.contains("99990101"), "names the migration: {detail}");
        }
        other => panic!("expected Schema, got {other:?}"),
    }
}

#[tokio::test]
async fn a_path_that_cannot_be_opened_is_a_backend_error() {
    let dir = TempDir::new();
    let missing = dir.0.join("no-such-dir").join("deeper").join("agboss.db");
    match SqliteStore::open(&missing).await {
        Err(e @ StoreError::Backend { .. }) => assert!(e.is_transient()),
        other => panic!("expected Backend, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_stores_on_one_file_share_runs_and_leases() {
    let dir = TempDir::new();
    let path = dir.db();
    let one = SqliteStore::open(&path).await.unwrap();
    let two = SqliteStore::open(&path).await.unwrap();
    one.create_thread("acme", NewThread::new().id("t1"))
        .await
        .unwrap();
    // Two workers in two "processes" race to take one expired run: exactly one wins.
    for round in 0..10 {
        let id = format!("r{round}");
        let (_, lease) = one
            .begin_run(
                NewRun::new("acme", &id, "agent", "x"),
                "first",
                Duration::ZERO,
            )
            .await
            .unwrap();
        let (a, b) = tokio::join!(
            one.begin_run(NewRun::new("acme", &id, "agent", "x"), "a", LONG),
            two.begin_run(NewRun::new("acme", &id, "agent", "x"), "b", LONG),
        );
        let won = usize::from(a.is_ok()) + usize::from(b.is_ok());
        assert_eq!(won, 1, "round {round}: one winner, got {a:?} / {b:?}");
        let lost = if a.is_ok() { &b } else { &a };
        assert!(
            matches!(lost, Err(StoreError::LeaseHeld { .. })),
            "{lost:?}"
        );
        let winner = a.as_ref().or(b.as_ref()).unwrap();
        assert_eq!(winner.1.token, lease.token + 1);
    }
    // Appends from both stores under one lease interleave with distinct positions.
    let (_, lease) = one
        .begin_run(
            NewRun::new("acme", "shared", "agent", "x").thread("t1"),
            "w",
            LONG,
        )
        .await
        .unwrap();
    let entries: Vec<_> = (0..20).map(|i| entry(&format!("tool:0:c{i}"))).collect();
    let msg = [Message::assistant("m")];
    let seqs = join_all(entries.iter().enumerate().map(|(i, e)| {
        let store = if i % 2 == 0 { &one } else { &two };
        store.append(&lease, e, &msg)
    }))
    .await;
    let mut seqs: Vec<u64> = seqs.into_iter().map(Result::unwrap).collect();
    seqs.sort_unstable();
    assert_eq!(seqs, (0..20).collect::<Vec<_>>());
    assert_eq!(two.messages("acme", "t1", None).await.unwrap().len(), 21);
}

async fn ticket_rows(store: &SqliteStore) -> Vec<(String, String, Option<String>)> {
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
    let store = SqliteStore::memory().await.unwrap();
    let lease = two_tickets(&store).await;
    // The schema refuses an unknown state: set one as a damaged file would hold it. (The
    // in-memory store has one connection, so the pragma holds for the next statement.)
    assert!(
        sqlx::query("UPDATE tickets SET state = 'archived' WHERE id = 'k1'")
            .execute(store.pool())
            .await
            .is_err(),
        "the schema checks states"
    );
    for sql in [
        "PRAGMA ignore_check_constraints = ON",
        "UPDATE tickets SET state = 'archived' WHERE id = 'k1'",
        "PRAGMA ignore_check_constraints = OFF",
        "UPDATE tickets SET decision = '{\"kind\":\"maybe\"}' WHERE id = 'k2'",
    ] {
        sqlx::query(sql).execute(store.pool()).await.unwrap();
    }
    let before = ticket_rows(&store).await;
    assert_eq!(
        before,
        [
            ("k1".to_string(), "archived".to_string(), None),
            (
                "k2".into(),
                "pending".into(),
                Some("{\"kind\":\"maybe\"}".into())
            ),
        ]
    );
    assert_corrupt_tickets_refused(&store, &lease).await;
    assert_eq!(
        ticket_rows(&store).await,
        before,
        "the rows are kept as they were"
    );
}

#[tokio::test]
async fn a_thread_row_of_the_wrong_type_is_corrupt_and_listed_by_id() {
    let store = SqliteStore::memory().await.unwrap();
    seeded(&store).await;
    store
        .create_thread("acme", NewThread::new().id("t2"))
        .await
        .unwrap();
    // SQLite keeps a text in an INTEGER column, as a damaged file or a bad repair would.
    sqlx::query("UPDATE threads SET message_count = 'many' WHERE id = 't1'")
        .execute(store.pool())
        .await
        .unwrap();
    match store.thread("acme", "t1").await {
        Err(e @ StoreError::Corrupt { .. }) => {
            assert!(!e.is_transient() && e.is_permanent(), "{e}");
            assert!(e.to_string().contains("stored thread"), "{e}");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    let list = store.list_threads("acme").await.unwrap();
    assert_eq!(list.threads.len(), 1);
    assert_eq!(list.threads[0].id, "t2");
    assert_eq!(list.unreadable.len(), 1);
    assert_eq!(list.unreadable[0].0, "t1");
    assert!(matches!(list.unreadable[0].1, StoreError::Corrupt { .. }));
}
