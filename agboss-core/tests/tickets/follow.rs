//! `app.runs(tenant).follow(run)`: a run followed from another instance on the same store sees
//! what was journaled before it subscribed, then each step as the run goes on, then its end;
//! another tenant's follow sees nothing.
use std::sync::Arc;
use std::time::Duration;

use agboss_core::app::RunUpdate;
use agboss_core::prelude::RunContext;
use agboss_core::store::types::random_id;
use agboss_core::store::{RunStatus, SharedStore, SqliteStore, StepEntry, StoreError};
use futures::StreamExt;

use super::fixture::{IxLog, desk, manager, pending_refund};

#[tokio::test]
async fn a_run_is_followed_from_another_instance_to_its_end() {
    let dir = std::env::temp_dir().join(random_id("agboss-follow"));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("follow.db");
    let log = Arc::new(IxLog::default());
    let runner = desk(
        SharedStore::new(SqliteStore::open(&path).await.unwrap()),
        Arc::clone(&log),
    );
    let watcher = desk(
        SharedStore::new(SqliteStore::open(&path).await.unwrap()),
        Arc::new(IxLog::default()),
    );
    let ticket = pending_refund(&runner, "acme", "A-1 5000 thanks").await;
    let before = watcher.runs("acme").steps(&ticket.run_id).await.unwrap();
    assert!(!before.is_empty(), "the paused run has journaled steps");

    let follow = watcher
        .runs("acme")
        .follow(ticket.run_id.clone())
        .poll_every(Duration::from_millis(10));
    let (first_tx, first_rx) = tokio::sync::oneshot::channel();
    let collector = tokio::spawn(async move {
        let mut updates = std::pin::pin!(follow.into_stream());
        let mut got = vec![updates.next().await.expect("a first update")];
        first_tx.send(()).unwrap();
        while let Some(update) = updates.next().await {
            got.push(update);
        }
        got
    });
    // The follower has read the paused run before the run goes on.
    first_rx.await.unwrap();
    runner
        .tickets("acme")
        .approve(&ticket.id, manager("acme"))
        .await
        .unwrap();
    let out = runner
        .resume_ticket(&ticket.id, RunContext::new().tenant("acme"))
        .await
        .unwrap();
    assert_eq!(out.run_id, ticket.run_id);

    let got = tokio::time::timeout(Duration::from_secs(10), collector)
        .await
        .expect("the follow ends with the run")
        .unwrap();
    let (last, steps) = got.split_last().unwrap();
    let Ok(RunUpdate::Ended(run)) = last else {
        panic!("expected the end, got {last:?}")
    };
    assert_eq!(run.status, RunStatus::Completed);
    assert_eq!(run.output.as_deref(), Some(out.text.as_str()));
    let steps: Vec<_> = steps
        .iter()
        .map(|u| match u {
            Ok(RunUpdate::Step(s)) => s.clone(),
            other => panic!("expected a step, got {other:?}"),
        })
        .collect();
    // Every step once, in order, the same as the journal.
    let journal = watcher.runs("acme").steps(&ticket.run_id).await.unwrap();
    assert_eq!(steps, journal);
    assert!(
        journal.len() > before.len(),
        "the resumed run journaled more"
    );
    assert!(
        journal[before.len()..]
            .iter()
            .any(|s| matches!(s.entry, StepEntry::ToolFinished { .. })),
        "the approved call's end arrived live: {journal:?}"
    );
    assert_eq!(log.refunds().len(), 1);

    // `after` skips what a caller has shown; a finished run's follow ends at once.
    let tail: Vec<_> = watcher
        .runs("acme")
        .follow(ticket.run_id.clone())
        .after(journal.len() - 1)
        .into_stream()
        .collect()
        .await;
    assert_eq!(tail.len(), 2, "{tail:?}");
    assert!(matches!(&tail[0], Ok(RunUpdate::Step(s)) if s == journal.last().unwrap()));

    // Another tenant's follow: not found, and nothing else.
    let foreign: Vec<_> = watcher
        .runs("globex")
        .follow(ticket.run_id.clone())
        .into_stream()
        .collect()
        .await;
    assert!(
        matches!(foreign.as_slice(), [Err(StoreError::RunNotFound { .. })]),
        "{foreign:?}"
    );
}
