//! Threads: history across runs, tenant isolation, a store required.

use super::*;

#[tokio::test]
async fn a_thread_carries_history_across_runs_and_records_every_message() {
    let store = SharedStore::new(MemoryStore::new());
    let ledger = Arc::new(JrLedger::default());
    let model = Arc::new(ScriptedModel::new([
        refund("ACME-1"),
        Turn::text("Refunded ACME-1."),
        Turn::text("You asked about ACME-1."),
    ]));
    let app = app(&store, &ledger, &model, "w1");
    let thread = app.threads("acme").create(NewThread::new()).await.unwrap();
    let ctx = || RunContext::new().tenant("acme").thread(&thread.id);
    let first = app
        .execute(JrDeskAgent::target(), "refund ACME-1", ctx())
        .await
        .unwrap();
    assert_eq!(first.text, "Refunded ACME-1.");
    assert_eq!(first.thread_id.as_deref(), Some(thread.id.as_str()));
    let second = app
        .execute(JrDeskAgent::target(), "what did you do?", ctx())
        .await
        .unwrap();
    assert_eq!(second.text, "You asked about ACME-1.");

    // The second run's model saw the whole first run before its own input.
    let req = model.last_request().unwrap();
    let roles: Vec<_> = req.messages.iter().map(|m| m.role().as_str()).collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "assistant", "user"]
    );
    assert_eq!(req.messages[1], Message::user("refund ACME-1"));
    assert!(req.messages[3].text().unwrap().contains("refunded ACME-1"));
    assert_eq!(req.messages[5], Message::user("what did you do?"));

    let stored = app.threads("acme").messages(&thread.id).await.unwrap();
    assert_eq!(
        stored.len(),
        6,
        "two inputs, three model turns, one observation"
    );
    assert_eq!(stored[4].message, Message::user("what did you do?"));
    assert_eq!(stored[5].run_id, second.run_id);
    assert_eq!(ledger.runs(), 1);

    // The first run's journal: each step in order, the call with its decision and output.
    let steps = store.steps("acme", &first.run_id).await.unwrap();
    let kinds: Vec<&str> = steps.iter().map(|s| s.entry.kind()).collect();
    assert_eq!(
        kinds,
        ["model_turn", "tool_started", "tool_finished", "model_turn"]
    );
    match &steps[2].entry {
        agboss_core::store::StepEntry::ToolFinished {
            key,
            decision,
            content,
            is_error,
            ..
        } => {
            assert_eq!(key, "tool:0:call_1");
            assert_eq!(decision, "allowed");
            assert!(content.contains("refunded ACME-1"));
            assert!(!is_error);
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn another_tenants_thread_is_refused_and_never_leaks() {
    let store = SharedStore::new(MemoryStore::new());
    let ledger = Arc::new(JrLedger::default());
    let model = Arc::new(ScriptedModel::new([refund("ACME-1"), Turn::text("done")]));
    let app = app(&store, &ledger, &model, "w1");
    let thread = app.threads("acme").create(NewThread::new()).await.unwrap();
    app.execute(
        JrDeskAgent::target(),
        "secret: my card is 4111",
        RunContext::new().tenant("acme").thread(&thread.id),
    )
    .await
    .unwrap();

    let globex = app.threads("globex");
    assert!(matches!(
        globex.get(&thread.id).await,
        Err(StoreError::ThreadNotFound { .. })
    ));
    assert!(matches!(
        globex.messages(&thread.id).await,
        Err(StoreError::ThreadNotFound { .. })
    ));
    assert!(matches!(
        globex.delete(&thread.id).await,
        Err(StoreError::ThreadNotFound { .. })
    ));
    assert!(globex.list().await.unwrap().threads.is_empty());
    let requests_before = model.request_count();
    let err = app
        .execute(
            JrDeskAgent::target(),
            "continue",
            RunContext::new().tenant("globex").thread(&thread.id),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(*err, RunError::Store(StoreError::ThreadNotFound { .. })),
        "{err}"
    );
    assert_eq!(
        model.request_count(),
        requests_before,
        "no model call for a refused run"
    );
    // Acme's thread is untouched, and still deletable by acme.
    assert_eq!(
        app.threads("acme")
            .messages(&thread.id)
            .await
            .unwrap()
            .len(),
        4
    );
    app.threads("acme").delete(&thread.id).await.unwrap();
    assert!(app.threads("acme").list().await.unwrap().threads.is_empty());
}

#[tokio::test]
async fn threads_need_a_store() {
    let model = Arc::new(ScriptedModel::new([Turn::text("hi")]));
    let app = App::builder()
        .agent::<JrDeskAgent>()
        .provide(JrLedger::default())
        .shared_model(Arc::clone(&model) as SharedChatModel)
        .build()
        .unwrap();
    let err = app
        .execute(JrDeskAgent::target(), "hi", RunContext::new().thread("t"))
        .await
        .unwrap_err();
    assert!(
        matches!(*err, RunError::Store(StoreError::NotConfigured)),
        "{err}"
    );
    assert!(matches!(
        app.threads("acme").list().await,
        Err(StoreError::NotConfigured)
    ));
    assert_eq!(model.request_count(), 0);
}
