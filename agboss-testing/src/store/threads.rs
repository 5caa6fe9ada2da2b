//! Checks of threads, tenants, and what a new run writes to its thread.
use agboss_core::model::Message;
use agboss_core::store::{NewRun, NewThread, RunEnd, RunStatus, RunStore, StoreError, ThreadStore};

use super::{LONG, append, begin, messages, run, run_on, step, step_keys, texts, thread};

/// Threads are created, read, listed (oldest first) and deleted per tenant.
pub async fn threads_per_tenant<S: ThreadStore + RunStore>(store: &S) {
    let t1 = store
        .create_thread("acme", NewThread::new().id("t1").title("Refund"))
        .await
        .expect("create acme/t1");
    assert_eq!(
        (t1.id.as_str(), t1.tenant.as_str()),
        ("t1", "acme"),
        "create_thread returns the thread"
    );
    assert_eq!(t1.title.as_deref(), Some("Refund"));
    assert_eq!(t1.message_count, 0);
    thread(store, "acme", "t2").await;
    thread(store, "globex", "t1").await;
    let generated = store
        .create_thread("acme", NewThread::new())
        .await
        .expect("create with a generated id");
    let other = store
        .create_thread("acme", NewThread::new())
        .await
        .expect("create with a generated id");
    assert!(!generated.id.is_empty(), "a generated id is not empty");
    assert_ne!(generated.id, other.id, "generated ids differ");

    let got = store.thread("acme", "t1").await.expect("read acme/t1");
    assert_eq!(got, t1, "thread() reads what create_thread returned");
    let listed: Vec<_> = store
        .list_threads("acme")
        .await
        .expect("list acme")
        .threads
        .into_iter()
        .map(|t| t.id)
        .collect();
    assert_eq!(
        listed,
        ["t1", "t2", generated.id.as_str(), other.id.as_str()],
        "acme's threads, oldest first"
    );
    let globex = store
        .list_threads("globex")
        .await
        .expect("list globex")
        .threads;
    assert_eq!(globex.len(), 1, "globex has its own t1 only");
    assert_eq!(globex[0].tenant, "globex");
    assert!(
        store
            .list_threads("initech")
            .await
            .expect("list")
            .threads
            .is_empty(),
        "a tenant without threads lists none"
    );

    store
        .delete_thread("acme", "t1")
        .await
        .expect("delete acme/t1");
    assert!(
        matches!(store.thread("acme", "t1").await, Err(StoreError::ThreadNotFound { thread_id }) if thread_id == "t1"),
        "a deleted thread is not found"
    );
    assert!(
        matches!(
            store.delete_thread("acme", "t1").await,
            Err(StoreError::ThreadNotFound { .. })
        ),
        "deleting it again: not found"
    );
    store
        .thread("globex", "t1")
        .await
        .expect("globex/t1 survives acme's delete of its t1");
    assert_eq!(
        store
            .list_threads("acme")
            .await
            .expect("list")
            .threads
            .len(),
        3
    );
}

/// A thread id is unique within its tenant, not across tenants.
pub async fn thread_exists<S: ThreadStore + RunStore>(store: &S) {
    thread(store, "acme", "t1").await;
    let again = store
        .create_thread("acme", NewThread::new().id("t1").title("other"))
        .await;
    assert!(
        matches!(&again, Err(StoreError::ThreadExists { thread_id }) if thread_id == "t1"),
        "a second acme/t1: ThreadExists, got {again:?}"
    );
    assert_eq!(
        store.thread("acme", "t1").await.expect("read").title,
        None,
        "the refused create changed nothing"
    );
    thread(store, "globex", "t1").await;
}

/// Another tenant's threads and runs read as not found, and it cannot delete, run on or write
/// them.
pub async fn foreign_tenant_sees_nothing<S: ThreadStore + RunStore>(store: &S) {
    thread(store, "acme", "t1").await;
    let (_, lease) = begin(store, run_on("acme", "r1", "t1", "hi"), "w", LONG).await;
    append(
        store,
        &lease,
        &step("tool:0:a"),
        &[Message::assistant("ok")],
    )
    .await;

    let nf = |r: Result<_, StoreError>| matches!(r, Err(StoreError::ThreadNotFound { .. }));
    assert!(
        nf(store.thread("globex", "t1").await.map(|_| ())),
        "thread()"
    );
    assert!(
        nf(store.messages("globex", "t1", None).await.map(|_| ())),
        "messages()"
    );
    assert!(
        nf(store.delete_thread("globex", "t1").await),
        "delete_thread()"
    );
    assert!(
        nf(store
            .begin_run(run_on("globex", "r9", "t1", "x"), "w", LONG)
            .await
            .map(|_| ())),
        "begin_run on another tenant's thread"
    );
    assert!(
        store
            .list_threads("globex")
            .await
            .expect("list")
            .threads
            .is_empty(),
        "list_threads()"
    );
    assert!(
        matches!(store.run("globex", "r1").await, Err(StoreError::RunNotFound { run_id }) if run_id == "r1"),
        "run()"
    );
    assert!(
        matches!(
            store.steps("globex", "r1").await,
            Err(StoreError::RunNotFound { .. })
        ),
        "steps()"
    );
    assert!(
        matches!(
            store.run("globex", "r9").await,
            Err(StoreError::RunNotFound { .. })
        ),
        "the refused begin_run created no run"
    );
    // The same run id in another tenant is another run: it takes nothing over.
    let (theirs, their_lease) = begin(
        store,
        NewRun::new("globex", "r1", "agent", "mine"),
        "w2",
        LONG,
    )
    .await;
    assert_eq!((theirs.tenant.as_str(), theirs.lease_token), ("globex", 1));
    assert_eq!(theirs.input, "mine");
    assert_eq!(theirs.steps, 0, "globex/r1 has a journal of its own");
    // Each lease writes its own tenant's run of that id, and only that one.
    append(store, &their_lease, &step("theirs"), &[]).await;
    append(store, &lease, &step("tool:1:b"), &[]).await;
    assert_eq!(step_keys(store, "globex", "r1").await, ["theirs"]);
    assert_eq!(
        step_keys(store, "acme", "r1").await,
        ["tool:0:a", "tool:1:b"]
    );

    let mine = run(store, "acme", "r1").await;
    assert_eq!(
        (mine.steps, mine.lease_token, mine.lease_worker.as_deref()),
        (2, 1, Some("w")),
        "acme's run is untouched by globex"
    );
    assert_eq!(texts(&messages(store, "acme", "t1").await), ["hi", "ok"]);
}

/// A run on a missing thread, and a missing run, are not found.
pub async fn missing_thread_or_run<S: ThreadStore + RunStore>(store: &S) {
    let r = store
        .begin_run(run_on("acme", "r1", "nope", "hi"), "w", LONG)
        .await;
    assert!(
        matches!(&r, Err(StoreError::ThreadNotFound { thread_id }) if thread_id == "nope"),
        "begin_run on a missing thread: got {r:?}"
    );
    assert!(
        matches!(
            store.run("acme", "r1").await,
            Err(StoreError::RunNotFound { .. })
        ),
        "the refused begin_run created no run"
    );
    assert!(matches!(
        store.steps("acme", "r1").await,
        Err(StoreError::RunNotFound { .. })
    ));
    assert!(matches!(
        store.messages("acme", "nope", Some(3)).await,
        Err(StoreError::ThreadNotFound { .. })
    ));
    assert!(
        store
            .resumable_runs(10)
            .await
            .expect("resumable")
            .is_empty(),
        "an empty store has nothing to resume"
    );
}

/// A new run records the thread's length as its history and appends its input as a user
/// message; a run without a thread has neither.
pub async fn new_run_appends_input_and_records_history<S: ThreadStore + RunStore>(store: &S) {
    thread(store, "acme", "t1").await;
    let (r1, lease) = begin(store, run_on("acme", "r1", "t1", "hello"), "w", LONG).await;
    assert_eq!(r1.history_len, 0, "the first run reads no history");
    assert_eq!(
        (
            r1.tenant.as_str(),
            r1.run_id.as_str(),
            r1.thread_id.as_deref()
        ),
        ("acme", "r1", Some("t1"))
    );
    assert_eq!((r1.target.as_str(), r1.input.as_str()), ("agent", "hello"));
    assert_eq!(r1.status, RunStatus::Running);
    assert_eq!((r1.steps, r1.lease_token), (0, 1));
    assert_eq!(r1.lease_worker.as_deref(), Some("w"));
    assert!(
        r1.lease_expires_at_ms.is_some(),
        "a granted lease has an expiry"
    );
    assert_eq!((r1.output.as_deref(), r1.error.as_deref()), (None, None));
    assert_eq!(
        (
            lease.tenant.as_str(),
            lease.run_id.as_str(),
            lease.worker.as_str(),
            lease.token
        ),
        ("acme", "r1", "w", 1)
    );
    assert_eq!(lease.ttl, LONG);
    assert_eq!(
        run(store, "acme", "r1").await,
        r1,
        "run() reads what begin_run returned"
    );

    let msgs = messages(store, "acme", "t1").await;
    assert_eq!(msgs.len(), 1, "the input is appended");
    assert_eq!(msgs[0].message, Message::user("hello"));
    assert_eq!((msgs[0].seq, msgs[0].run_id.as_str()), (0, "r1"));

    append(
        store,
        &lease,
        &step("model:0"),
        &[Message::assistant("hi!")],
    )
    .await;
    store
        .finish_run(
            &lease,
            &RunEnd::Completed {
                output: "hi!".into(),
            },
        )
        .await
        .expect("finish r1");
    let (r2, _) = begin(store, run_on("acme", "r2", "t1", "again"), "w", LONG).await;
    assert_eq!(r2.history_len, 2, "r2 reads r1's two messages as history");
    let msgs = messages(store, "acme", "t1").await;
    assert_eq!(texts(&msgs), ["hello", "hi!", "again"]);
    assert_eq!(
        msgs.iter().map(|m| m.run_id.as_str()).collect::<Vec<_>>(),
        ["r1", "r1", "r2"],
        "each message names the run that wrote it"
    );
    assert_eq!(
        store
            .thread("acme", "t1")
            .await
            .expect("read")
            .message_count,
        3
    );

    let (lone, lone_lease) =
        begin(store, NewRun::new("acme", "solo", "agent", "x"), "w", LONG).await;
    assert_eq!((lone.thread_id, lone.history_len), (None, 0));
    assert_eq!(
        append(
            store,
            &lone_lease,
            &step("model:0"),
            &[Message::assistant("ignored")]
        )
        .await,
        0,
        "a run without a thread journals its steps"
    );
    assert_eq!(
        messages(store, "acme", "t1").await.len(),
        3,
        "a run without a thread writes no thread"
    );
}

/// One unfinished run per thread: a second one, and deleting the thread, are refused with
/// `ThreadBusy` until it finishes (released or not).
pub async fn thread_busy<S: ThreadStore + RunStore>(store: &S) {
    thread(store, "acme", "t1").await;
    let (_, lease) = begin(store, run_on("acme", "r1", "t1", "one"), "w", LONG).await;
    let busy = |r: Result<(), StoreError>, what: &str| match r {
        Err(StoreError::ThreadBusy { thread_id, run_id }) => {
            assert_eq!(
                (thread_id.as_str(), run_id.as_str()),
                ("t1", "r1"),
                "{what}"
            );
        }
        other => panic!("{what}: expected ThreadBusy, got {other:?}"),
    };
    busy(
        store
            .begin_run(run_on("acme", "r2", "t1", "two"), "w2", LONG)
            .await
            .map(|_| ()),
        "a second run of the thread",
    );
    busy(
        store.delete_thread("acme", "t1").await,
        "delete while running",
    );
    assert!(
        matches!(
            store.run("acme", "r2").await,
            Err(StoreError::RunNotFound { .. })
        ),
        "the refused run was not created"
    );
    assert_eq!(
        texts(&messages(store, "acme", "t1").await),
        ["one"],
        "the refused run appended nothing"
    );
    store.release(&lease).await.expect("release r1");
    busy(
        store
            .begin_run(run_on("acme", "r2", "t1", "two"), "w2", LONG)
            .await
            .map(|_| ()),
        "a released run is still unfinished",
    );
    busy(
        store.delete_thread("acme", "t1").await,
        "delete while released",
    );
    // Another thread of the tenant is not busy.
    thread(store, "acme", "t2").await;
    begin(store, run_on("acme", "r3", "t2", "other"), "w", LONG).await;

    let (_, lease) = begin(store, NewRun::new("acme", "r1", "agent", "one"), "w", LONG).await;
    store
        .finish_run(
            &lease,
            &RunEnd::Failed {
                error: "boom".into(),
            },
        )
        .await
        .expect("finish r1");
    let (r2, _) = begin(store, run_on("acme", "r2", "t1", "two"), "w2", LONG).await;
    assert_eq!(r2.history_len, 1);
}

/// Deleting a thread deletes its messages, its runs and their journals, and no other's.
pub async fn delete_thread_removes_messages_runs_and_steps<S: ThreadStore + RunStore>(store: &S) {
    thread(store, "acme", "t1").await;
    thread(store, "acme", "t2").await;
    for (run_id, thread_id) in [("r1", "t1"), ("r2", "t2")] {
        let (_, lease) = begin(store, run_on("acme", run_id, thread_id, "q"), "w", LONG).await;
        append(store, &lease, &step("model:0"), &[Message::assistant("a")]).await;
        store
            .finish_run(&lease, &RunEnd::Completed { output: "a".into() })
            .await
            .expect("finish");
    }
    store.delete_thread("acme", "t1").await.expect("delete t1");
    assert!(matches!(
        store.run("acme", "r1").await,
        Err(StoreError::RunNotFound { .. })
    ));
    assert!(matches!(
        store.steps("acme", "r1").await,
        Err(StoreError::RunNotFound { .. })
    ));
    // A new thread of the same id starts empty, and the run id is free again.
    thread(store, "acme", "t1").await;
    assert!(
        messages(store, "acme", "t1").await.is_empty(),
        "messages deleted"
    );
    let (again, _) = begin(store, run_on("acme", "r1", "t1", "new"), "w", LONG).await;
    assert_eq!(
        (again.lease_token, again.steps, again.history_len),
        (1, 0, 0)
    );
    assert!(
        step_keys(store, "acme", "r1").await.is_empty(),
        "steps deleted"
    );
    // The other thread keeps everything.
    assert_eq!(texts(&messages(store, "acme", "t2").await), ["q", "a"]);
    assert_eq!(step_keys(store, "acme", "r2").await, ["model:0"]);
    assert_eq!(run(store, "acme", "r2").await.status, RunStatus::Completed);
}

/// `messages` with a limit reads the first messages only.
pub async fn messages_limit<S: ThreadStore + RunStore>(store: &S) {
    thread(store, "acme", "t1").await;
    let (_, lease) = begin(store, run_on("acme", "r1", "t1", "m0"), "w", LONG).await;
    let more: Vec<_> = (1..5)
        .map(|i| Message::assistant(format!("m{i}")))
        .collect();
    append(store, &lease, &step("model:0"), &more).await;
    let read = |limit| store.messages("acme", "t1", limit);
    assert_eq!(texts(&read(Some(2)).await.expect("limit 2")), ["m0", "m1"]);
    assert!(read(Some(0)).await.expect("limit 0").is_empty());
    assert_eq!(read(Some(100)).await.expect("limit 100").len(), 5);
    assert_eq!(read(Some(u64::MAX)).await.expect("limit max").len(), 5);
    assert_eq!(
        texts(&read(None).await.expect("no limit")),
        ["m0", "m1", "m2", "m3", "m4"]
    );
}
