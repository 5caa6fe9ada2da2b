//! Checks of leases, fencing, the journal and resumption.
use agboss_core::model::Message;
use agboss_core::store::{NewRun, RunEnd, RunStatus, RunStore, StoreError, ThreadStore};
use futures::future::join_all;

use super::{
    EXPIRED, LONG, append, assert_lease_lost, begin, messages, run, run_on, step, step_keys, texts,
    thread, why,
};

/// The lease's worker takes its own run up again before expiry: the next token, and the
/// previous lease is stale. Resuming appends no second input.
pub async fn resume_by_same_worker<S: ThreadStore + RunStore>(store: &S) {
    thread(store, "acme", "t1").await;
    let (_, first) = begin(store, run_on("acme", "r1", "t1", "hi"), "w", LONG).await;
    append(store, &first, &step("model:0"), &[]).await;
    let (again, second) = begin(store, run_on("acme", "r1", "t1", "hi"), "w", LONG).await;
    assert_eq!(
        second.token,
        first.token + 1,
        "a resume grants the next token"
    );
    assert_eq!(
        (again.lease_token, again.steps, again.history_len),
        (2, 1, 0),
        "the resumed run keeps its journal and history"
    );
    assert_eq!(again.status, RunStatus::Running);
    assert_lease_lost(
        "append with the previous lease",
        store.append(&first, &step("model:1"), &[]).await,
        &first,
    );
    assert_eq!(append(store, &second, &step("model:1"), &[]).await, 1);
    assert_eq!(step_keys(store, "acme", "r1").await, ["model:0", "model:1"]);
    assert_eq!(
        texts(&messages(store, "acme", "t1").await),
        ["hi"],
        "a resumed run does not append its input again"
    );
}

/// Another worker takes an expired lease over with the next token; the old holder is fenced
/// out.
pub async fn takeover_after_expiry<S: RunStore>(store: &S) {
    let (_, a) = begin(store, NewRun::new("acme", "r1", "agent", "x"), "a", EXPIRED).await;
    let (record, b) = begin(store, NewRun::new("acme", "r1", "agent", "x"), "b", LONG).await;
    assert_eq!(b.token, 2, "the takeover gets the next token");
    assert_eq!(b.worker, "b");
    assert_eq!(
        (record.lease_worker.as_deref(), record.lease_token),
        (Some("b"), 2)
    );
    assert_lease_lost(
        "the previous holder's append",
        store.append(&a, &step("a"), &[]).await,
        &a,
    );
    assert_eq!(append(store, &b, &step("b"), &[]).await, 0);
    assert_eq!(step_keys(store, "acme", "r1").await, ["b"]);
    // And back: b's lease has not expired, so a is refused.
    assert!(matches!(
        store
            .begin_run(NewRun::new("acme", "r1", "agent", "x"), "a", LONG)
            .await,
        Err(StoreError::LeaseHeld { .. })
    ));
}

/// An unexpired lease of another worker is refused with `LeaseHeld` (transient), and nothing
/// changes.
pub async fn lease_held_while_unexpired<S: RunStore>(store: &S) {
    let (before, _) = begin(store, NewRun::new("acme", "r1", "agent", "x"), "a", LONG).await;
    let err = store
        .begin_run(NewRun::new("acme", "r1", "agent", "x"), "b", LONG)
        .await
        .expect_err("a held lease is refused");
    match &err {
        StoreError::LeaseHeld {
            run_id,
            expires_at_ms,
        } => {
            assert_eq!(run_id, "r1");
            assert_eq!(
                Some(*expires_at_ms),
                before.lease_expires_at_ms,
                "LeaseHeld tells when the lease expires"
            );
        }
        other => panic!("expected LeaseHeld, got {other:?}"),
    }
    assert!(err.is_transient(), "LeaseHeld is worth retrying later");
    assert_eq!(run(store, "acme", "r1").await, before, "nothing changed");
}

/// Every write with a stale lease (taken over, wrong worker) is refused with `LeaseLost` and
/// writes nothing: no step, no message, no change to the run.
pub async fn stale_lease_writes_nothing<S: ThreadStore + RunStore>(store: &S) {
    thread(store, "acme", "t1").await;
    let (_, a) = begin(store, run_on("acme", "r1", "t1", "hi"), "a", EXPIRED).await;
    append(store, &a, &step("model:0"), &[Message::assistant("one")]).await;
    let (_, b) = begin(store, run_on("acme", "r1", "t1", "hi"), "b", LONG).await;
    let before = run(store, "acme", "r1").await;

    let extra = [Message::assistant("stale")];
    assert_lease_lost(
        "append",
        store.append(&a, &step("model:1"), &extra).await,
        &a,
    );
    assert_lease_lost("renew", store.renew(&a).await, &a);
    assert_lease_lost(
        "finish_run",
        store
            .finish_run(
                &a,
                &RunEnd::Completed {
                    output: "stale".into(),
                },
            )
            .await,
        &a,
    );
    assert_lease_lost("release", store.release(&a).await, &a);
    // The right token with another worker's name is not the lease either.
    let mut impostor = b.clone();
    impostor.worker = "a".into();
    assert_lease_lost(
        "append by another worker",
        store.append(&impostor, &step("model:1"), &extra).await,
        &impostor,
    );
    assert_lease_lost(
        "release by another worker",
        store.release(&impostor).await,
        &impostor,
    );
    let mut future = b.clone();
    future.token += 1;
    assert_lease_lost(
        "a token not granted yet",
        store.append(&future, &step("model:1"), &extra).await,
        &future,
    );

    assert_eq!(
        step_keys(store, "acme", "r1").await,
        ["model:0"],
        "no step written"
    );
    assert_eq!(
        texts(&messages(store, "acme", "t1").await),
        ["hi", "one"],
        "no message written"
    );
    assert_eq!(
        run(store, "acme", "r1").await,
        before,
        "the run is unchanged"
    );
    assert_eq!(
        append(store, &b, &step("model:1"), &[]).await,
        1,
        "b still writes"
    );
}

/// One append writes the step and the messages together, at the next positions, and extends
/// the lease.
pub async fn append_is_atomic<S: ThreadStore + RunStore>(store: &S) {
    thread(store, "acme", "t1").await;
    let (started, lease) = begin(store, run_on("acme", "r1", "t1", "q"), "w", EXPIRED).await;
    let mut lease = lease;
    lease.ttl = LONG;
    let entry = step("tool:0:c1");
    let turn = [
        Message::assistant("calling"),
        Message::tool_result("c1", "42"),
    ];
    assert_eq!(append(store, &lease, &entry, &turn).await, 0);
    let steps = store.steps("acme", "r1").await.expect("steps");
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0].entry, entry, "the step reads back as written");
    let msgs = messages(store, "acme", "t1").await;
    assert_eq!(texts(&msgs), ["q", "calling", "42"]);
    assert_eq!(msgs[2].message, turn[1], "messages read back as written");
    assert!(msgs.iter().all(|m| m.run_id == "r1"));

    let after = run(store, "acme", "r1").await;
    assert_eq!(after.steps, 1);
    assert!(
        after.lease_expires_at_ms > started.lease_expires_at_ms,
        "an append extends the lease by its ttl"
    );
    assert!(
        matches!(
            store
                .begin_run(run_on("acme", "r1", "t1", "q"), "other", LONG)
                .await,
            Err(StoreError::LeaseHeld { .. })
        ),
        "the extended lease is held"
    );
    assert_eq!(append(store, &lease, &step("model:1"), &[]).await, 1);
    assert_eq!(
        messages(store, "acme", "t1").await.len(),
        3,
        "no messages, none added"
    );
    assert_eq!(
        store
            .thread("acme", "t1")
            .await
            .expect("thread")
            .message_count,
        3
    );
}

/// 50 concurrent appends under one lease (parallel tool calls) get the positions 0..49, each
/// once, with their own steps and messages.
pub async fn concurrent_appends_get_distinct_seqs<S: ThreadStore + RunStore>(store: &S) {
    const N: usize = 50;
    thread(store, "acme", "t1").await;
    let (_, lease) = begin(store, run_on("acme", "r1", "t1", "go"), "w", LONG).await;
    let entries: Vec<_> = (0..N).map(|i| step(&format!("tool:0:c{i}"))).collect();
    let msgs: Vec<_> = (0..N)
        .map(|i| [Message::tool_result(format!("c{i}"), format!("r{i}"))])
        .collect();
    let seqs = join_all(
        entries
            .iter()
            .zip(&msgs)
            .map(|(entry, m)| store.append(&lease, entry, m)),
    )
    .await;
    let mut got = Vec::new();
    for (i, seq) in seqs.into_iter().enumerate() {
        let seq = seq.unwrap_or_else(|e| panic!("concurrent append {i}: {}", why(&e)));
        got.push((seq, entries[i].key().to_string()));
    }
    got.sort();
    let positions: Vec<u64> = got.iter().map(|(s, _)| *s).collect();
    assert_eq!(
        positions,
        (0..N as u64).collect::<Vec<_>>(),
        "distinct, consecutive positions"
    );
    let keys: Vec<String> = got.into_iter().map(|(_, k)| k).collect();
    assert_eq!(
        step_keys(store, "acme", "r1").await,
        keys,
        "each step is stored at the position its append returned"
    );
    let thread_msgs = messages(store, "acme", "t1").await;
    assert_eq!(
        thread_msgs.len(),
        N + 1,
        "every message once, numbered 0..=N"
    );
    let mut texts: Vec<_> = texts(&thread_msgs)[1..].to_vec();
    texts.sort();
    let mut want: Vec<_> = (0..N).map(|i| format!("r{i}")).collect();
    want.sort();
    assert_eq!(texts, want);
    assert_eq!(run(store, "acme", "r1").await.steps, N as u64);
}

/// `renew` extends the lease by its ttl.
pub async fn renew_extends_the_lease<S: RunStore>(store: &S) {
    let (_, lease) = begin(store, NewRun::new("acme", "r1", "agent", "x"), "a", EXPIRED).await;
    let mut lease = lease;
    lease.ttl = LONG;
    store.renew(&lease).await.expect("renew");
    assert!(
        matches!(
            store
                .begin_run(NewRun::new("acme", "r1", "agent", "x"), "b", LONG)
                .await,
            Err(StoreError::LeaseHeld { .. })
        ),
        "the renewed lease is held"
    );
    assert!(
        store
            .resumable_runs(10)
            .await
            .expect("resumable")
            .is_empty(),
        "a renewed run is not resumable"
    );
    assert_eq!(
        run(store, "acme", "r1").await.lease_token,
        1,
        "renew grants no token"
    );
}

/// `release` frees the lease (the run stays unfinished) for anyone to take at once.
pub async fn release_frees_the_lease<S: RunStore>(store: &S) {
    let (_, a) = begin(store, NewRun::new("acme", "r1", "agent", "x"), "a", LONG).await;
    store.release(&a).await.expect("release");
    let released = run(store, "acme", "r1").await;
    assert_eq!(
        released.status,
        RunStatus::Running,
        "a released run is unfinished"
    );
    assert_eq!(
        (released.lease_worker, released.lease_expires_at_ms),
        (None, None)
    );
    assert_lease_lost("release again", store.release(&a).await, &a);
    assert_lease_lost(
        "append after release",
        store.append(&a, &step("x"), &[]).await,
        &a,
    );
    let (_, b) = begin(store, NewRun::new("acme", "r1", "agent", "x"), "b", LONG).await;
    assert_eq!(b.token, 2);
    assert!(step_keys(store, "acme", "r1").await.is_empty());
}

/// A finished run records its end, frees its lease, and cannot be resumed or written.
pub async fn finished_run_cannot_resume<S: ThreadStore + RunStore>(store: &S) {
    thread(store, "acme", "t1").await;
    let (_, lease) = begin(store, run_on("acme", "r1", "t1", "q"), "w", LONG).await;
    append(
        store,
        &lease,
        &step("model:0"),
        &[Message::assistant("done")],
    )
    .await;
    store
        .finish_run(
            &lease,
            &RunEnd::Completed {
                output: "done".into(),
            },
        )
        .await
        .expect("finish");
    let done = run(store, "acme", "r1").await;
    assert_eq!(done.status, RunStatus::Completed);
    assert_eq!(
        (done.output.as_deref(), done.error.as_deref()),
        (Some("done"), None)
    );
    assert_eq!(
        (done.lease_worker.as_deref(), done.lease_expires_at_ms),
        (None, None)
    );
    assert_eq!(done.steps, 1);
    for worker in ["w", "other"] {
        let r = store
            .begin_run(run_on("acme", "r1", "t1", "q"), worker, LONG)
            .await;
        assert!(
            matches!(&r, Err(StoreError::RunFinished { run_id }) if run_id == "r1"),
            "begin_run of a finished run by {worker}: got {r:?}"
        );
    }
    assert_lease_lost(
        "append",
        store.append(&lease, &step("model:1"), &[]).await,
        &lease,
    );
    assert_lease_lost(
        "finish twice",
        store
            .finish_run(
                &lease,
                &RunEnd::Failed {
                    error: "late".into(),
                },
            )
            .await,
        &lease,
    );
    assert_eq!(run(store, "acme", "r1").await, done, "nothing changed");

    let (_, lease) = begin(store, NewRun::new("acme", "r2", "agent", "q"), "w", LONG).await;
    store
        .finish_run(
            &lease,
            &RunEnd::Failed {
                error: "boom".into(),
            },
        )
        .await
        .expect("fail r2");
    let failed = run(store, "acme", "r2").await;
    assert_eq!(failed.status, RunStatus::Failed);
    assert_eq!(
        (failed.output.as_deref(), failed.error.as_deref()),
        (None, Some("boom"))
    );
    assert!(matches!(
        store
            .begin_run(NewRun::new("acme", "r2", "agent", "q"), "w", LONG)
            .await,
        Err(StoreError::RunFinished { .. })
    ));
}

/// `resumable_runs` lists unfinished runs whose lease expired or was released, across tenants,
/// oldest first, at most `limit`.
pub async fn resumable_runs_lists_expired_or_released_only<S: RunStore>(store: &S) {
    let new = |tenant: &str, id: &str| NewRun::new(tenant, id, "agent", "x");
    begin(store, new("acme", "expired"), "w", EXPIRED).await;
    begin(store, new("acme", "held"), "w", LONG).await;
    let (_, released) = begin(store, new("globex", "released"), "w", LONG).await;
    store.release(&released).await.expect("release");
    let (_, finished) = begin(store, new("acme", "finished"), "w", EXPIRED).await;
    store
        .finish_run(&finished, &RunEnd::Completed { output: "x".into() })
        .await
        .expect("finish");
    let (_, failed) = begin(store, new("acme", "failed"), "w", LONG).await;
    store
        .finish_run(&failed, &RunEnd::Failed { error: "x".into() })
        .await
        .expect("fail");
    begin(store, new("initech", "expired-too"), "w", EXPIRED).await;

    let ids = |runs: Vec<agboss_core::store::RunRecord>| {
        runs.into_iter()
            .map(|r| format!("{}/{}", r.tenant, r.run_id))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        ids(store.resumable_runs(10).await.expect("resumable")),
        ["acme/expired", "globex/released", "initech/expired-too"],
        "expired or released unfinished runs, oldest first"
    );
    assert_eq!(
        ids(store.resumable_runs(2).await.expect("resumable")),
        ["acme/expired", "globex/released"],
        "at most `limit`"
    );
    assert!(store.resumable_runs(0).await.expect("resumable").is_empty());
    // Taken over, a run is no longer resumable.
    begin(store, new("acme", "expired"), "w2", LONG).await;
    assert_eq!(
        ids(store.resumable_runs(10).await.expect("resumable")),
        ["globex/released", "initech/expired-too"]
    );
}
