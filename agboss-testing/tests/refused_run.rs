//! A run refused for a corrupt history, end to end through `App::execute` on SQLite and
//! PostgreSQL (needs `AGBOSS_TEST_POSTGRES_URL`): the run is finished as failed, its thread
//! stays usable, and no takeover retries it.
mod support;

use std::sync::Arc;

use agboss_core::engine::{RunContext, RunError, Target};
use agboss_core::model::SharedChatModel;
use agboss_core::prelude::*;
use agboss_core::store::{NewThread, PostgresStore, RunStatus, SqliteStore, StoreError};
use agboss_testing::scripted::{ScriptedModel, Turn};
use agboss_testing::store::DamageRows;
use support::{pg_fresh, pg_url};

#[agent(
    name = "rr-desk-agent",
    description = "Answers",
    instructions = "Answer briefly."
)]
pub struct RrDeskAgent;

fn ctx(run_id: &str) -> RunContext {
    RunContext::new().tenant("acme").thread("t1").run_id(run_id)
}

#[track_caller]
fn assert_corrupt<T: std::fmt::Debug>(what: &str, result: Result<T, RunError>) {
    match result {
        Err(RunError::Store(
            e @ (StoreError::Corrupt { .. } | StoreError::UnknownFormat { .. }),
        )) => {
            assert!(e.is_permanent(), "{what}: {e}");
        }
        other => panic!("{what}: expected a corrupt-history error, got {other:?}"),
    }
}

async fn a_run_refused_for_a_corrupt_history_frees_its_thread<S: DamageRows + Clone>(store: S) {
    let model = Arc::new(ScriptedModel::new([Turn::text("one"), Turn::text("two")]));
    let app = App::builder()
        .agent::<RrDeskAgent>()
        .shared_model(Arc::clone(&model) as SharedChatModel)
        .store(store.clone())
        .lease_ttl(std::time::Duration::from_millis(30))
        .build()
        .unwrap();
    app.threads("acme")
        .create(NewThread::new().id("t1"))
        .await
        .unwrap();
    let target = Target::agent::<RrDeskAgent>;
    app.execute(target(), "hi", ctx("r1")).await.unwrap();
    store.damage_message("acme", "t1", 1).await;

    assert_corrupt(
        "a run on the damaged history",
        app.execute(target(), "next", ctx("refused"))
            .await
            .map_err(RunError::from),
    );
    let refused = store.run("acme", "refused").await.unwrap();
    assert_eq!(
        refused.status,
        RunStatus::Failed,
        "the refused run is finished"
    );
    assert_corrupt(
        "the next run: refused for the history again, not ThreadBusy",
        app.execute(target(), "next", ctx("refused-2"))
            .await
            .map_err(RunError::from),
    );
    assert_eq!(
        model.request_count(),
        1,
        "no model call on a damaged history"
    );

    store.repair_message("acme", "t1", 1).await;
    tokio::time::sleep(std::time::Duration::from_millis(60)).await;
    let taken = app.take_over_runs(10).await.unwrap();
    let taken: Vec<_> = taken.iter().map(|(id, _)| id.as_str()).collect();
    assert!(
        taken.is_empty(),
        "no takeover retries a refused run: {taken:?}"
    );
    let out = app.execute(target(), "again", ctx("r2")).await.unwrap();
    assert_eq!(out.text, "two");
    app.threads("acme").delete("t1").await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_a_run_refused_for_a_corrupt_history_frees_its_thread() {
    let store = SqliteStore::memory().await.unwrap();
    a_run_refused_for_a_corrupt_history_frees_its_thread(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_run_refused_for_a_corrupt_history_frees_its_thread() {
    let Some(url) = pg_url() else { return };
    let store: PostgresStore = pg_fresh(&url).await;
    a_run_refused_for_a_corrupt_history_frees_its_thread(store).await;
}
