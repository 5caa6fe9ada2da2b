//! The integrity checks: what a backend does with rows damaged behind its back (a broken disk,
//! a bad manual repair). They need a store whose rows a test can damage ([`DamageRows`]), so
//! they are a group of their own ([`integrity_checks`], run by [`integrity_conformance`]).
use agboss_core::model::Message;
use agboss_core::store::{PostgresStore, RunEnd, RunStatus, SqliteStore, Store, StoreError};
use futures::future::BoxFuture;

use super::{LONG, append, begin, run, run_on, step, texts, thread, why};

/// A store whose rows a test can damage and repair, as a broken disk or a bad manual repair
/// would: what the [`integrity_conformance`](super::integrity_conformance) checks need. Implemented for the SQL stores (raw SQL through
/// their pool).
pub trait DamageRows: Store {
    /// Makes message `seq` of a thread unreadable (its body is no longer a message).
    fn damage_message<'a>(
        &'a self,
        tenant: &'a str,
        thread_id: &'a str,
        seq: u64,
    ) -> BoxFuture<'a, ()>;
    /// Undoes [`DamageRows::damage_message`].
    fn repair_message<'a>(
        &'a self,
        tenant: &'a str,
        thread_id: &'a str,
        seq: u64,
    ) -> BoxFuture<'a, ()>;
    /// Overwrites a thread's stored message count.
    fn set_message_count<'a>(
        &'a self,
        tenant: &'a str,
        thread_id: &'a str,
        count: i64,
    ) -> BoxFuture<'a, ()>;
}

/// A body prefix no message decodes with; taken off again by the repair.
const DAMAGE: &str = "[]";

macro_rules! damage_rows_by_sql {
    ($($store:ty),*) => {$(
        impl DamageRows for $store {
            fn damage_message<'a>(&'a self, tenant: &'a str, thread_id: &'a str, seq: u64)
                -> BoxFuture<'a, ()> {
                let sql = "UPDATE messages SET body = $4 || body \
                           WHERE tenant = $1 AND thread_id = $2 AND seq = $3";
                Box::pin(async move {
                    let q = sqlx::query(sql).bind(tenant).bind(thread_id);
                    let q = q.bind(i64::try_from(seq).unwrap_or(i64::MAX)).bind(DAMAGE);
                    let done = q.execute(self.pool()).await.expect("damage a message");
                    assert_eq!(done.rows_affected(), 1, "message {seq} damaged");
                })
            }
            fn repair_message<'a>(&'a self, tenant: &'a str, thread_id: &'a str, seq: u64)
                -> BoxFuture<'a, ()> {
                let sql = "UPDATE messages SET body = substr(body, 3) \
                           WHERE tenant = $1 AND thread_id = $2 AND seq = $3";
                Box::pin(async move {
                    let q = sqlx::query(sql).bind(tenant).bind(thread_id);
                    let q = q.bind(i64::try_from(seq).unwrap_or(i64::MAX));
                    let done = q.execute(self.pool()).await.expect("repair a message");
                    assert_eq!(done.rows_affected(), 1, "message {seq} repaired");
                })
            }
            fn set_message_count<'a>(&'a self, tenant: &'a str, thread_id: &'a str, count: i64)
                -> BoxFuture<'a, ()> {
                let sql = "UPDATE threads SET message_count = $3 WHERE tenant = $1 AND id = $2";
                Box::pin(async move {
                    let q = sqlx::query(sql).bind(tenant).bind(thread_id).bind(count);
                    let done = q.execute(self.pool()).await.expect("set a message count");
                    assert_eq!(done.rows_affected(), 1, "thread {thread_id} updated");
                })
            }
        }
    )*};
}

damage_rows_by_sql!(SqliteStore, PostgresStore);

/// Asserts `result` failed with a permanent integrity error (never transient) naming `what`.
#[track_caller]
fn assert_integrity<T: std::fmt::Debug>(what: &str, result: Result<T, StoreError>, kind: &str) {
    match result {
        Err(e @ (StoreError::Corrupt { .. } | StoreError::UnknownFormat { .. })) => {
            assert!(
                e.is_permanent() && !e.is_transient(),
                "{what}: {e} is permanent"
            );
            assert!(
                e.to_string().contains(kind),
                "{what}: the error names a {kind}: {e}"
            );
        }
        other => panic!("{what}: expected Corrupt or UnknownFormat, got {other:?}"),
    }
}

/// A corrupt history row: a damaged message is refused by `messages` (the messages before it
/// still read); a thread whose message count is below its stored messages refuses new messages
/// as [`StoreError::Corrupt`] (never a transient `Backend`) and writes none; a thread row with
/// an impossible count is reported by id by `list_threads`, which still lists every other thread.
pub async fn a_corrupt_history_row<S: DamageRows>(store: &S) {
    for id in ["t1", "t2", "t3"] {
        thread(store, "acme", id).await;
    }
    let (_, lease) = begin(store, run_on("acme", "r1", "t1", "hi"), "w", LONG).await;
    append(
        store,
        &lease,
        &step("model:0"),
        &[Message::assistant("hello")],
    )
    .await;
    store.damage_message("acme", "t1", 1).await;
    assert_integrity(
        "messages() over a damaged row",
        store.messages("acme", "t1", None).await,
        "message",
    );
    let first = store
        .messages("acme", "t1", Some(1))
        .await
        .unwrap_or_else(|e| panic!("the message before the damaged one: {}", why(&e)));
    assert_eq!(texts(&first), ["hi"]);
    store.repair_message("acme", "t1", 1).await;

    // A count below the stored messages: the next append would overwrite one.
    store.set_message_count("acme", "t1", 1).await;
    assert_integrity(
        "append to a thread counting fewer messages than it holds",
        store
            .append(&lease, &step("model:1"), &[Message::assistant("again")])
            .await,
        "thread",
    );
    assert_eq!(run(store, "acme", "r1").await.steps, 1, "nothing written");
    store.set_message_count("acme", "t1", 2).await;
    let texts_t1 = texts(&super::messages(store, "acme", "t1").await);
    assert_eq!(texts_t1, ["hi", "hello"], "no message overwritten");

    // An impossible count: the thread is reported by id, the others still listed.
    store.set_message_count("acme", "t2", -5).await;
    assert_integrity(
        "thread() with a negative count",
        store.thread("acme", "t2").await,
        "thread",
    );
    let list = store
        .list_threads("acme")
        .await
        .unwrap_or_else(|e| panic!("list over one damaged thread row: {}", why(&e)));
    let ids: Vec<_> = list.threads.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["t1", "t3"], "the readable threads, oldest first");
    assert_eq!(list.unreadable.len(), 1, "the damaged one, by id");
    let (id, error) = &list.unreadable[0];
    assert_eq!(id, "t2");
    assert!(error.is_permanent(), "{error}");
    assert!(error.to_string().contains("thread"), "{error}");
}

/// A thread after a refused run: a run begun on a thread whose history cannot be read, then
/// finished as failed (what the engine does with a permanent error at a run's start), leaves
/// the thread usable: once repaired, a new run begins on it, no takeover lists the refused run,
/// and the thread can be deleted.
pub async fn a_thread_after_a_refused_run<S: DamageRows>(store: &S) {
    thread(store, "acme", "t1").await;
    let (_, lease) = begin(store, run_on("acme", "r1", "t1", "hi"), "w", LONG).await;
    store
        .finish_run(
            &lease,
            &RunEnd::Completed {
                output: "ok".into(),
            },
        )
        .await
        .unwrap_or_else(|e| panic!("finish r1: {}", why(&e)));
    store.damage_message("acme", "t1", 0).await;
    let (refused, lease) = begin(store, run_on("acme", "r2", "t1", "next"), "w", LONG).await;
    assert_integrity(
        "the refused run's history",
        store
            .messages("acme", "t1", Some(refused.history_len))
            .await,
        "message",
    );
    let end = RunEnd::Failed {
        error: "corrupt history".into(),
    };
    store
        .finish_run(&lease, &end)
        .await
        .unwrap_or_else(|e| panic!("finish the refused run: {}", why(&e)));
    assert_eq!(run(store, "acme", "r2").await.status, RunStatus::Failed);
    let resumable = store
        .resumable_runs(100)
        .await
        .unwrap_or_else(|e| panic!("resumable runs: {}", why(&e)));
    assert!(
        resumable.iter().all(|r| r.run_id != "r2"),
        "a takeover never retries the refused run"
    );
    store.repair_message("acme", "t1", 0).await;
    let (_, lease) = begin(store, run_on("acme", "r3", "t1", "again"), "w", LONG).await;
    store
        .finish_run(
            &lease,
            &RunEnd::Completed {
                output: "ok".into(),
            },
        )
        .await
        .unwrap_or_else(|e| panic!("finish r3: {}", why(&e)));
    store
        .delete_thread("acme", "t1")
        .await
        .unwrap_or_else(|e| panic!("delete the thread after a refused run: {}", why(&e)));
}
