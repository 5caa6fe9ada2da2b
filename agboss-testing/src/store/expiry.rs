//! Checks of expiry: a ticket nobody decided in time moves to `Expired` and stays undecidable,
//! and a run waiting on a pending ticket is no crashed run until the ticket is decided or
//! expires (a takeover's scan skips it).
use agboss_core::store::{NewRun, RunStore, StoreError, TicketState, TicketStore};

use super::tickets::{advance, approved, assert_expired, create, get, pending};
use super::{EXPIRED, LONG, begin, why};

/// An expired ticket: a pending one past its expiry moves `Pending → Expired` (under its run's
/// lease); expired, it cannot be decided ([`StoreError::TicketExpired`]) nor moved on, and reads
/// back as `Expired`. A run waiting on it is listed by `resumable_runs` again.
pub async fn an_expired_ticket<S: RunStore + TicketStore>(store: &S) {
    let (_, lease) = begin(store, NewRun::new("acme", "r1", "agent", "x"), "w", LONG).await;
    let now = agboss_core::store::types::now_ms();
    let mut past = pending("k1");
    past.created_at_ms = now - 120_000;
    past.expires_at_ms = now - 60_000;
    create(store, &lease, &past).await;
    store.release(&lease).await.expect("release");
    let listed = store.resumable_runs(10).await.expect("resumable");
    assert_eq!(
        listed.iter().map(|r| r.run_id.as_str()).collect::<Vec<_>>(),
        ["r1"],
        "a run whose ticket expired is resumable"
    );
    let (_, lease) = begin(store, NewRun::new("acme", "r1", "agent", "x"), "w", LONG).await;
    advance(
        store,
        &lease,
        "k1",
        TicketState::Pending,
        TicketState::Expired,
    )
    .await;
    assert_eq!(get(store, "acme", "k1").await.state, TicketState::Expired);
    let decided = store.decide_ticket("acme", "k1", &approved("a"), now).await;
    assert_expired("decide an expired ticket", decided, &past);
    for to in [
        TicketState::Decided,
        TicketState::Executing,
        TicketState::Completed,
        TicketState::Superseded,
    ] {
        match store
            .advance_ticket(&lease, "k1", TicketState::Expired, to)
            .await
        {
            Err(StoreError::TicketTransition { .. }) => {}
            other => panic!("advance Expired -> {to:?}: expected TicketTransition, got {other:?}"),
        }
    }
    assert_eq!(get(store, "acme", "k1").await.state, TicketState::Expired);
}

/// A takeover's scan skips runs waiting for a ticket: a released run with a pending ticket
/// before its expiry is not listed by `resumable_runs` (nor does it count against `limit`);
/// once the ticket is decided it is, and every run with an expired lease is reached, oldest
/// first.
pub async fn resumable_runs_skip_runs_waiting_for_a_ticket<S: RunStore + TicketStore>(store: &S) {
    let now = agboss_core::store::types::now_ms();
    for i in 0..3 {
        let run = NewRun::new("acme", format!("paused{i}"), "agent", "x");
        let (_, lease) = begin(store, run, "w", LONG).await;
        let mut waiting = pending(&format!("k{i}"));
        waiting.created_at_ms = now;
        waiting.expires_at_ms = now + 600_000;
        create(store, &lease, &waiting).await;
        store.release(&lease).await.expect("release");
    }
    begin(
        store,
        NewRun::new("globex", "crashed", "agent", "x"),
        "w",
        EXPIRED,
    )
    .await;
    let ids = |limit| async move {
        let runs = store
            .resumable_runs(limit)
            .await
            .unwrap_or_else(|e| panic!("resumable: {}", why(&e)));
        runs.into_iter().map(|r| r.run_id).collect::<Vec<_>>()
    };
    assert_eq!(ids(3).await, ["crashed"], "paused runs are skipped");
    assert_eq!(
        ids(1).await,
        ["crashed"],
        "and do not count against the limit"
    );
    store
        .decide_ticket("acme", "k1", &approved("a"), now)
        .await
        .unwrap_or_else(|e| panic!("decide: {}", why(&e)));
    assert_eq!(
        ids(10).await,
        ["paused1", "crashed"],
        "a decided ticket's run is resumable again, oldest first"
    );
}
