//! The run journal: resume without rerun, calls in doubt, idempotent reruns, store failures, thread exclusivity, lease takeover.

use super::*;

#[tokio::test]
async fn a_resumed_run_never_reruns_a_completed_tool_call() {
    let store = SharedStore::new(MemoryStore::new());
    let ledger = Arc::new(JrLedger::default());
    let first = Arc::new(ScriptedModel::new([refund("ACME-7")]).hang_when_exhausted());
    let a = app(&store, &ledger, &first, "worker-a");
    let thread = a.threads("acme").create(NewThread::new()).await.unwrap();
    let ctx = RunContext::new()
        .tenant("acme")
        .thread(&thread.id)
        .run_id("run-7");
    crash_at_stall(&a, "refund ACME-7", ctx.clone()).await;
    assert_eq!(ledger.runs(), 1);

    // Another instance: refused while worker A's lease has not expired, then takes over.
    let second = Arc::new(ScriptedModel::new([Turn::text("Refund done.")]));
    let b = app(&store, &ledger, &second, "worker-b");
    let err = b
        .resume_run("run-7", RunContext::new().tenant("acme"))
        .await
        .unwrap_err();
    assert!(
        matches!(*err, RunError::Store(StoreError::LeaseHeld { .. })),
        "{err}"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (events, out) = b
        .stream(JrDeskAgent::target(), "refund ACME-7", ctx)
        .collect_all()
        .await;
    let out = out.unwrap();
    assert_eq!(out.text, "Refund done.");
    assert_eq!(
        out.replayed_steps, 3,
        "model turn, call started, call finished"
    );
    assert!(events.iter().any(|e| matches!(
        e,
        RunEvent::RunResumed {
            replayed_steps: 3,
            ..
        }
    )));
    assert_eq!(ledger.runs(), 1, "the refund ran exactly once");
    // The resumed model call saw the journaled call and its observation.
    let req = second.last_request().unwrap();
    assert!(
        req.messages
            .iter()
            .any(|m| m.text().is_some_and(|t| t.contains("refunded ACME-7")))
    );
    let run = store.run("acme", "run-7").await.unwrap();
    assert_eq!(run.status, RunStatus::Completed);
    assert_eq!(run.output.as_deref(), Some("Refund done."));
    assert_eq!(
        store
            .messages("acme", &thread.id, None)
            .await
            .unwrap()
            .len(),
        4
    );
    // A finished run is not resumed again.
    let err = b
        .resume_run("run-7", RunContext::new().tenant("acme"))
        .await
        .unwrap_err();
    assert!(
        matches!(*err, RunError::Store(StoreError::RunFinished { .. })),
        "{err}"
    );
}

#[tokio::test]
async fn a_call_in_doubt_stops_the_run_until_it_is_resolved() {
    let store = SharedStore::new(MemoryStore::new());
    let ledger = Arc::new(JrLedger::default());
    ledger.hang_next.store(1, Ordering::SeqCst);
    let first = Arc::new(ScriptedModel::new([refund("ACME-9")]).hang_when_exhausted());
    let a = app(&store, &ledger, &first, "worker-a");
    let ctx = RunContext::new().tenant("acme").run_id("run-9");
    crash_at_stall(&a, "refund ACME-9", ctx.clone()).await;
    assert_eq!(
        ledger.runs(),
        0,
        "the crash came before the refund finished"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;

    let second = Arc::new(ScriptedModel::new([Turn::text("Refund confirmed.")]));
    let b = app(&store, &ledger, &second, "worker-b");
    let (events, out) = b
        .stream(JrDeskAgent::target(), "refund ACME-9", ctx.clone())
        .collect_all()
        .await;
    let err = out.unwrap_err();
    let RunError::InDoubt { call_id, tool, .. } = &*err else {
        panic!("expected a call in doubt, got {err}");
    };
    assert_eq!(tool, "jr-refund-tool");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, RunEvent::ToolCallInDoubt { .. }))
    );
    assert_eq!(ledger.keys().len(), 1, "not run again");
    assert_eq!(second.request_count(), 0);
    // Still resumable, and in doubt until resolved.
    assert_eq!(
        store.run("acme", "run-9").await.unwrap().status,
        RunStatus::Running
    );
    let again = b
        .resume_run("run-9", RunContext::new().tenant("acme"))
        .await
        .unwrap_err();
    assert!(matches!(*again, RunError::InDoubt { .. }), "{again}");

    // Someone checked the payment system: the refund did happen.
    let wrong = b
        .resolve_in_doubt("acme", "run-9", "call_nope", InDoubtResolution::NotDone)
        .await
        .unwrap_err();
    assert!(matches!(wrong, RunError::NotInDoubt { .. }), "{wrong}");
    let foreign = b
        .resolve_in_doubt("globex", "run-9", call_id, InDoubtResolution::NotDone)
        .await
        .unwrap_err();
    assert!(
        matches!(foreign, RunError::Store(StoreError::RunNotFound { .. })),
        "{foreign}"
    );
    b.resolve_in_doubt(
        "acme",
        "run-9",
        call_id,
        InDoubtResolution::Completed {
            observation: "refund ACME-9 confirmed by the payment system".into(),
            is_error: false,
        },
    )
    .await
    .unwrap();
    let out = b
        .resume_run("run-9", RunContext::new().tenant("acme"))
        .await
        .unwrap();
    assert_eq!(out.text, "Refund confirmed.");
    assert_eq!(ledger.runs(), 0, "the tool never ran again");
    let req = second.last_request().unwrap();
    assert!(
        req.messages
            .iter()
            .any(|m| m.text() == Some("refund ACME-9 confirmed by the payment system"))
    );
}

#[tokio::test]
async fn a_call_resolved_as_not_done_runs_on_resume() {
    let store = SharedStore::new(MemoryStore::new());
    let ledger = Arc::new(JrLedger::default());
    ledger.hang_next.store(1, Ordering::SeqCst);
    let first = Arc::new(ScriptedModel::new([refund("ACME-3")]).hang_when_exhausted());
    let a = app(&store, &ledger, &first, "worker-a");
    crash_at_stall(&a, "refund ACME-3", RunContext::new().run_id("run-3")).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let second = Arc::new(ScriptedModel::new([Turn::text("Refunded.")]));
    let b = app(&store, &ledger, &second, "worker-b");
    let steps = store.steps("", "run-3").await.unwrap();
    let call_id = match &steps[1].entry {
        agboss_core::store::StepEntry::ToolStarted { call_id, .. } => call_id.clone(),
        other => panic!("{other:?}"),
    };
    b.resolve_in_doubt("", "run-3", &call_id, InDoubtResolution::NotDone)
        .await
        .unwrap();
    let out = b.resume_run("run-3", RunContext::new()).await.unwrap();
    assert_eq!(out.text, "Refunded.");
    assert_eq!(ledger.runs(), 1);
}

#[tokio::test]
async fn an_idempotent_call_in_doubt_reruns_with_the_same_key() {
    let store = SharedStore::new(MemoryStore::new());
    let ledger = Arc::new(JrLedger::default());
    ledger.hang_next.store(1, Ordering::SeqCst);
    let first = Arc::new(
        ScriptedModel::new([Turn::tool_call(
            "jr-charge-tool",
            json!({ "orderId": "ACME-5" }),
        )])
        .hang_when_exhausted(),
    );
    let a = app(&store, &ledger, &first, "worker-a");
    crash_at_stall(
        &a,
        "charge ACME-5",
        RunContext::new().tenant("acme").run_id("run-5"),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let second = Arc::new(ScriptedModel::new([Turn::text("Charged.")]));
    let b = app(&store, &ledger, &second, "worker-b");
    let out = b
        .resume_run("run-5", RunContext::new().tenant("acme"))
        .await
        .unwrap();
    assert_eq!(out.text, "Charged.");
    let keys = ledger.keys();
    assert_eq!(keys.len(), 2, "the first attempt and the rerun");
    assert_eq!(
        keys[0], keys[1],
        "the idempotency key is stable across attempts"
    );
    assert!(keys[0].starts_with("idem_"), "{}", keys[0]);
    assert_eq!(ledger.runs(), 1);
}

#[tokio::test]
async fn a_store_down_at_the_start_fails_the_run_before_any_tool() {
    let flaky = Arc::new(FlakyStore::new(MemoryStore::new()));
    let store = SharedStore::new(Arc::clone(&flaky));
    let ledger = Arc::new(JrLedger::default());
    let model = Arc::new(ScriptedModel::new([refund("ACME-1"), Turn::text("done")]));
    let app = app(&store, &ledger, &model, "w1");
    flaky.fail_all(true);
    let err = app
        .execute(JrDeskAgent::target(), "refund", RunContext::new())
        .await
        .unwrap_err();
    assert!(
        matches!(*err, RunError::Store(StoreError::Backend { .. })),
        "{err}"
    );
    assert!(std::error::Error::source(&err).is_some());
    assert_eq!(model.request_count(), 0);
    assert_eq!(ledger.runs(), 0);
}

#[tokio::test]
async fn a_store_failing_mid_run_stops_it_and_the_journal_resumes_later() {
    let flaky = Arc::new(FlakyStore::new(MemoryStore::new()));
    let store = SharedStore::new(Arc::clone(&flaky));
    let ledger = Arc::new(JrLedger::default());
    let model = Arc::new(ScriptedModel::new([
        refund("ACME-1"),
        Turn::text("lost answer"),
    ]));
    let a = app(&store, &ledger, &model, "w1");
    // Appends: 1 model turn, 2 call started, 3 call finished, 4 the final turn: fails.
    flaky.fail_append_at(4);
    let err = a
        .execute(
            JrDeskAgent::target(),
            "refund",
            RunContext::new().run_id("run-1"),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(*err, RunError::Store(StoreError::Backend { .. })),
        "{err}"
    );
    assert_eq!(ledger.runs(), 1);
    flaky.fail_all(false);
    let steps = store.steps("", "run-1").await.unwrap();
    assert_eq!(steps.len(), 3, "every completed step, nothing half-written");
    assert_eq!(
        store.run("", "run-1").await.unwrap().status,
        RunStatus::Running
    );

    // The store is back; the same instance resumes (its own lease) without rerunning the call.
    model.push(Turn::text("Refunded after the outage."));
    let out = a.resume_run("run-1", RunContext::new()).await.unwrap();
    assert_eq!(out.text, "Refunded after the outage.");
    assert_eq!(ledger.runs(), 1);
}

#[tokio::test]
async fn a_resume_that_does_not_match_its_journal_is_refused() {
    let store = SharedStore::new(MemoryStore::new());
    let ledger = Arc::new(JrLedger::default());
    let model = Arc::new(ScriptedModel::new([refund("ACME-1")]).hang_when_exhausted());
    let a = app(&store, &ledger, &model, "w1");
    crash_at_stall(&a, "refund ACME-1", RunContext::new().run_id("run-m")).await;
    let err = a
        .execute(
            JrDeskAgent::target(),
            "refund ACME-2",
            RunContext::new().run_id("run-m"),
        )
        .await
        .unwrap_err();
    assert!(matches!(*err, RunError::JournalMismatch { .. }), "{err}");
    assert!(err.leaves_run_resumable());
    assert_eq!(ledger.runs(), 1);
}

#[tokio::test]
async fn one_run_at_a_time_writes_a_thread() {
    let store = SharedStore::new(MemoryStore::new());
    let ledger = Arc::new(JrLedger::default());
    let model = Arc::new(ScriptedModel::new([refund("ACME-1")]).hang_when_exhausted());
    let a = app(&store, &ledger, &model, "w1");
    let thread = a.threads("acme").create(NewThread::new()).await.unwrap();
    let ctx = RunContext::new().tenant("acme").thread(&thread.id);
    crash_at_stall(&a, "refund", ctx.clone().run_id("run-a")).await;
    let err = a
        .execute(
            JrDeskAgent::target(),
            "another question",
            ctx.run_id("run-b"),
        )
        .await
        .unwrap_err();
    let RunError::Store(StoreError::ThreadBusy { run_id, .. }) = &*err else {
        panic!("{err}");
    };
    assert_eq!(run_id, "run-a");
    assert!(matches!(
        a.threads("acme").delete(&thread.id).await,
        Err(StoreError::ThreadBusy { .. })
    ));
}

#[tokio::test]
async fn a_failed_run_frees_its_thread_and_leaves_its_input_in_the_history() {
    let store = SharedStore::new(MemoryStore::new());
    let ledger = Arc::new(JrLedger::default());
    let model = Arc::new(ScriptedModel::new([
        Turn::error(agboss_core::model::ModelError::StreamTruncated {
            detail: "cut".into(),
        }),
        Turn::text("Hello again."),
    ]));
    let app = app(&store, &ledger, &model, "w1");
    let thread = app.threads("acme").create(NewThread::new()).await.unwrap();
    let ctx = || RunContext::new().tenant("acme").thread(&thread.id);
    let err = app
        .execute(JrDeskAgent::target(), "hi", ctx())
        .await
        .unwrap_err();
    assert!(matches!(*err, RunError::Model { .. }), "{err}");
    // A model failure finishes the run: the thread is free for the next one.
    let out = app
        .execute(JrDeskAgent::target(), "hi again", ctx())
        .await
        .unwrap();
    assert_eq!(out.text, "Hello again.");
    let req = model.last_request().unwrap();
    let roles: Vec<_> = req.messages.iter().map(|m| m.role().as_str()).collect();
    assert_eq!(roles, ["system", "user", "user"]);
}

#[tokio::test]
async fn a_worker_that_cannot_renew_its_lease_stops_and_a_standby_takes_over() {
    let shared = Arc::new(MemoryStore::new());
    let flaky = Arc::new(FlakyStore::new(Arc::clone(&shared)));
    let ledger = Arc::new(JrLedger::default());
    ledger.hang_next.store(1, Ordering::SeqCst);
    let model_a = Arc::new(ScriptedModel::new([Turn::tool_call(
        "jr-charge-tool",
        json!({ "orderId": "ACME-8" }),
    )]));
    let a = app(
        &SharedStore::new(Arc::clone(&flaky)),
        &ledger,
        &model_a,
        "worker-a",
    );
    let run = a.execute(
        JrDeskAgent::target(),
        "charge ACME-8",
        RunContext::new().tenant("acme").run_id("run-8"),
    );
    let cut = async {
        // The charge hangs; then worker A loses its store: its next renewal fails.
        tokio::time::sleep(Duration::from_millis(40)).await;
        flaky.fail_all(true);
    };
    let (result, ()) = tokio::join!(run, cut);
    let err = result.unwrap_err();
    assert!(
        matches!(
            *err,
            RunError::Store(StoreError::Backend {
                operation: "renew",
                ..
            })
        ),
        "{err}"
    );

    // A standby instance on the same database takes the run over once A's lease expired.
    let model_b = Arc::new(ScriptedModel::new([Turn::text("Charged.")]));
    let b = app(
        &SharedStore::new(Arc::clone(&shared)),
        &ledger,
        &model_b,
        "worker-b",
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    let taken = b.take_over_runs(10).await.unwrap();
    assert_eq!(taken.len(), 1);
    assert_eq!(taken[0].0, "run-8");
    assert_eq!(taken[0].1.as_ref().unwrap().text, "Charged.");
    assert_eq!(
        ledger.runs(),
        1,
        "the idempotent charge reran once, with its key"
    );
    assert!(b.take_over_runs(10).await.unwrap().is_empty());
}
