//! Checks of the journal of runs without a thread: what a backend of runs alone keeps.
use agboss_core::model::Message;
use agboss_core::store::{NewRun, RunEnd, RunStatus, RunStore, StoreError};

use super::{LONG, append, begin, run, step, step_keys};

/// A run without a thread journals its steps at 0, 1, 2, ... and reads them back as written;
/// messages given with a step have no thread to go to; the run finishes with its answer.
pub async fn journal_without_a_thread<S: RunStore>(store: &S) {
    let (record, lease) = begin(store, NewRun::new("acme", "r1", "agent", "q"), "w", LONG).await;
    assert_eq!(record.thread_id, None);
    assert_eq!(
        (record.status, record.history_len, record.steps, lease.token),
        (RunStatus::Running, 0, 0, 1),
        "a new run: running, no history, no steps, the first token"
    );
    assert!(step_keys(store, "acme", "r1").await.is_empty());
    let entries = [step("model:0"), step("tool:0:c1"), step("model:1")];
    let said = [Message::assistant("no thread to append to")];
    for (i, entry) in entries.iter().enumerate() {
        assert_eq!(append(store, &lease, entry, &said).await, i as u64);
    }
    let steps = store.steps("acme", "r1").await.expect("steps");
    let read: Vec<_> = steps.iter().map(|s| (s.seq, s.entry.clone())).collect();
    let written: Vec<_> = (0..).zip(entries.iter().cloned()).collect();
    assert_eq!(read, written, "the journal reads back as written, in order");
    assert_eq!(run(store, "acme", "r1").await.steps, 3);
    let end = RunEnd::Completed {
        output: "done".into(),
    };
    store.finish_run(&lease, &end).await.expect("finish");
    let done = run(store, "acme", "r1").await;
    assert_eq!(
        (done.status, done.output.as_deref()),
        (RunStatus::Completed, Some("done"))
    );
}

/// Run ids are unique within a tenant: another tenant's run reads as not found, and the same
/// id in another tenant is a run of its own with a journal of its own.
pub async fn runs_are_scoped_by_tenant<S: RunStore>(store: &S) {
    let (_, acme) = begin(store, NewRun::new("acme", "r1", "agent", "a"), "w", LONG).await;
    append(store, &acme, &step("model:0"), &[]).await;
    for (what, id, result) in [
        ("run", "r1", store.run("globex", "r1").await.map(drop)),
        ("steps", "r1", store.steps("globex", "r1").await.map(drop)),
        (
            "a missing run",
            "r2",
            store.run("acme", "r2").await.map(drop),
        ),
        ("its steps", "r2", store.steps("acme", "r2").await.map(drop)),
    ] {
        assert!(
            matches!(&result, Err(StoreError::RunNotFound { run_id }) if run_id == id),
            "{what}: expected RunNotFound naming {id}, got {result:?}"
        );
    }
    let (record, globex) = begin(store, NewRun::new("globex", "r1", "agent", "g"), "w", LONG).await;
    assert_eq!(
        (record.tenant.as_str(), record.input.as_str(), globex.token),
        ("globex", "g", 1),
        "the same id in another tenant is a new run"
    );
    append(store, &globex, &step("model:0"), &[]).await;
    append(store, &globex, &step("model:1"), &[]).await;
    assert_eq!(step_keys(store, "acme", "r1").await, ["model:0"]);
    assert_eq!(
        step_keys(store, "globex", "r1").await,
        ["model:0", "model:1"]
    );
    assert_eq!(run(store, "acme", "r1").await.input, "a");
}
