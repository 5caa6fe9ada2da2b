//! Checks of ticket transitions: compare-and-swap moves, forward only, superseded tickets, racing
//! decisions and advances (one winner), and tickets deleted with their thread.
use agboss_core::store::{NewRun, RunEnd, RunStore, Store, StoreError, TicketState, TicketStore};
use futures::future::join_all;

use super::{LONG, begin, run_on, thread, why};

use super::tickets::{
    BEFORE_EXPIRY, advance, approved, assert_not_found, assert_state, create, get, ids, pending,
};

/// `advance_ticket` moves a ticket of the lease's run from one state to the next by
/// compare-and-swap: `Pending → Decided → Executing → Completed`; from a state it is not in,
/// refused with `TicketState` and nothing changes. A decision survives the moves.
pub async fn advance_is_a_compare_and_swap<S: RunStore + TicketStore>(store: &S) {
    use TicketState::{Completed, Decided, Executing, Pending};
    let (_, lease) = begin(store, NewRun::new("acme", "r1", "agent", "x"), "w", LONG).await;
    create(store, &lease, &pending("k1")).await;
    for (from, to) in [
        (Pending, Decided),
        (Decided, Executing),
        (Executing, Completed),
    ] {
        advance(store, &lease, "k1", from, to).await;
        assert_eq!(get(store, "acme", "k1").await.state, to);
    }
    assert_state(
        "advance from a state it left",
        store.advance_ticket(&lease, "k1", Decided, Executing).await,
        Decided,
        Completed,
    );
    assert_eq!(get(store, "acme", "k1").await.state, Completed);

    create(store, &lease, &pending("k2")).await;
    assert_state(
        "advance a pending ticket as if decided",
        store.advance_ticket(&lease, "k2", Decided, Executing).await,
        Decided,
        Pending,
    );
    store
        .decide_ticket("acme", "k2", &approved("alice"), BEFORE_EXPIRY)
        .await
        .unwrap_or_else(|e| panic!("decide: {}", why(&e)));
    let executing = advance(store, &lease, "k2", Decided, Executing).await;
    assert_eq!(executing.decision, Some(approved("alice")));
    let completed = advance(store, &lease, "k2", Executing, Completed).await;
    assert_eq!(get(store, "acme", "k2").await, completed);
}

/// Tickets move forward only and are created pending: a backward or skipping move, or a
/// ticket created already decided, is refused and changes nothing.
pub async fn tickets_move_forward_only<S: RunStore + TicketStore>(store: &S) {
    use TicketState::{Completed, Decided, Executing, Pending};
    let (_, lease) = begin(store, NewRun::new("acme", "r1", "agent", "x"), "w", LONG).await;
    create(store, &lease, &pending("k1")).await;
    for (from, to) in [
        (Pending, Executing),
        (Pending, Completed),
        (Pending, Pending),
    ] {
        let refused = store.advance_ticket(&lease, "k1", from, to).await;
        assert!(
            matches!(refused, Err(StoreError::TicketTransition { .. })),
            "{from:?} -> {to:?} must be refused, got {refused:?}"
        );
    }
    assert_eq!(get(store, "acme", "k1").await.state, Pending);
    advance(store, &lease, "k1", Pending, Decided).await;
    advance(store, &lease, "k1", Decided, Executing).await;
    advance(store, &lease, "k1", Executing, Completed).await;
    let back = store.advance_ticket(&lease, "k1", Completed, Pending).await;
    assert!(
        matches!(back, Err(StoreError::TicketTransition { .. })),
        "{back:?}"
    );
    assert_eq!(get(store, "acme", "k1").await.state, Completed);

    let mut decided = pending("k2");
    decided.state = Decided;
    decided.decision = Some(approved("mallory"));
    let forged = store.create_ticket(&lease, &decided).await;
    assert!(
        matches!(forged, Err(StoreError::TicketTransition { .. })),
        "{forged:?}"
    );
    assert!(matches!(
        store.ticket("acme", "k2").await,
        Err(StoreError::TicketNotFound { .. })
    ));
}

/// A superseded ticket cannot be decided, nor advanced as pending.
pub async fn superseded_ticket_cannot_be_decided<S: RunStore + TicketStore>(store: &S) {
    use TicketState::{Decided, Pending, Superseded};
    let (_, lease) = begin(store, NewRun::new("acme", "r1", "agent", "x"), "w", LONG).await;
    create(store, &lease, &pending("k1")).await;
    advance(store, &lease, "k1", Pending, Superseded).await;
    assert_state(
        "decide",
        store
            .decide_ticket("acme", "k1", &approved("alice"), BEFORE_EXPIRY)
            .await,
        Pending,
        Superseded,
    );
    assert_state(
        "advance",
        store.advance_ticket(&lease, "k1", Pending, Decided).await,
        Pending,
        Superseded,
    );
    let ticket = get(store, "acme", "k1").await;
    assert_eq!((ticket.state, ticket.decision), (Superseded, None));
}

/// How many callers race in the concurrency checks, and how many rounds they race.
const RACERS: usize = 20;
const ROUNDS: usize = 5;

/// Reads ticket `id` [`RACERS`] times at once, so that a pooled backend has a connection open for
/// each racer and the race starts on all of them together.
async fn warm_up<S: RunStore + TicketStore>(store: &S, id: &str) {
    for r in join_all((0..RACERS).map(|_| store.ticket("acme", id))).await {
        r.unwrap_or_else(|e| panic!("read {id}: {}", why(&e)));
    }
}

/// Twenty decisions of one ticket at once (five times over): exactly one wins, the others are
/// refused with `TicketState`, and the winner's decision is the one stored.
pub async fn concurrent_decides_have_one_winner<S: RunStore + TicketStore>(store: &S) {
    let (_, lease) = begin(store, NewRun::new("acme", "r1", "agent", "x"), "w", LONG).await;
    let decisions: Vec<_> = (0..RACERS)
        .map(|i| approved(&format!("approver-{i}")))
        .collect();
    for round in 0..ROUNDS {
        let id = format!("k{round}");
        create(store, &lease, &pending(&id)).await;
        warm_up(store, &id).await;
        let results = join_all(
            decisions
                .iter()
                .map(|d| store.decide_ticket("acme", &id, d, BEFORE_EXPIRY)),
        )
        .await;
        let winners: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
        assert_eq!(
            winners.len(),
            1,
            "round {round}: one decision wins: {results:?}"
        );
        for r in &results {
            assert!(
                matches!(
                    r,
                    Ok(_)
                        | Err(StoreError::TicketState {
                            expected: TicketState::Pending,
                            found: TicketState::Decided,
                            ..
                        })
                ),
                "round {round}: the others find it decided: {r:?}"
            );
        }
        assert_eq!(get(store, "acme", &id).await, *winners[0]);
    }
}

/// Twenty resumes taking one decided ticket to `Executing` at once (five times over): exactly
/// one wins, the others are refused with `TicketState`.
pub async fn concurrent_advances_have_one_winner<S: RunStore + TicketStore>(store: &S) {
    use TicketState::{Decided, Executing};
    let (_, lease) = begin(store, NewRun::new("acme", "r1", "agent", "x"), "w", LONG).await;
    for round in 0..ROUNDS {
        let id = format!("k{round}");
        create(store, &lease, &pending(&id)).await;
        store
            .decide_ticket("acme", &id, &approved("alice"), BEFORE_EXPIRY)
            .await
            .unwrap_or_else(|e| panic!("decide: {}", why(&e)));
        warm_up(store, &id).await;
        let results =
            join_all((0..RACERS).map(|_| store.advance_ticket(&lease, &id, Decided, Executing)))
                .await;
        assert_eq!(
            results.iter().filter(|r| r.is_ok()).count(),
            1,
            "round {round}: one resume consumes the decision: {results:?}"
        );
        for r in &results {
            assert!(
                matches!(
                    r,
                    Ok(_)
                        | Err(StoreError::TicketState {
                            expected: Decided,
                            found: Executing,
                            ..
                        })
                ),
                "round {round}: the others find it executing: {r:?}"
            );
        }
        assert_eq!(get(store, "acme", &id).await.state, Executing);
    }
}

/// Deleting a thread deletes its runs' tickets (their ids are free again), and no other
/// tickets; a busy thread's are kept.
pub async fn delete_thread_removes_tickets<S: Store>(store: &S) {
    thread(store, "acme", "t1").await;
    thread(store, "acme", "t2").await;
    let (_, r1) = begin(store, run_on("acme", "r1", "t1", "hi"), "w", LONG).await;
    let (_, r2) = begin(store, run_on("acme", "r2", "t2", "hi"), "w", LONG).await;
    let (_, r3) = begin(store, NewRun::new("acme", "r3", "agent", "x"), "w", LONG).await;
    let on = |id: &str, thread_id: &str| {
        let mut t = pending(id);
        t.thread_id = Some(thread_id.into());
        t
    };
    create(store, &r1, &on("k1", "t1")).await;
    create(store, &r1, &on("k2", "t1")).await;
    create(store, &r2, &on("k3", "t2")).await;
    create(store, &r3, &pending("k4")).await;
    let end = RunEnd::Completed { output: "x".into() };
    store.finish_run(&r1, &end).await.expect("finish r1");
    assert!(matches!(
        store.delete_thread("acme", "t2").await,
        Err(StoreError::ThreadBusy { .. })
    ));
    store
        .delete_thread("acme", "t1")
        .await
        .unwrap_or_else(|e| panic!("delete t1: {}", why(&e)));
    assert_not_found("k1", store.ticket("acme", "k1").await, "k1");
    assert_not_found("k2", store.ticket("acme", "k2").await, "k2");
    assert!(ids(store, "acme", "r1").await.is_empty());
    assert_eq!(ids(store, "acme", "r2").await, ["k3"]);
    assert_eq!(ids(store, "acme", "r3").await, ["k4"]);
    // The ids are free again: a new run of that id on a new thread of that id reuses them.
    thread(store, "acme", "t1").await;
    let (_, again) = begin(store, run_on("acme", "r1", "t1", "again"), "w", LONG).await;
    create(store, &again, &on("k1", "t1")).await;
    assert_eq!(ids(store, "acme", "r1").await, ["k1"]);
}

/// A ticket's thread is its run's, whatever the ticket said: so deleting the thread deletes it.
pub async fn ticket_thread_is_the_runs<S: Store>(store: &S) {
    thread(store, "acme", "t1").await;
    let (_, on_thread) = begin(store, run_on("acme", "r1", "t1", "hi"), "w", LONG).await;
    let (_, loose) = begin(store, NewRun::new("acme", "r2", "agent", "x"), "w", LONG).await;
    create(store, &on_thread, &pending("k1")).await;
    let mut elsewhere = pending("k2");
    elsewhere.thread_id = Some("t1".into());
    create(store, &loose, &elsewhere).await;
    assert_eq!(
        get(store, "acme", "k1").await.thread_id.as_deref(),
        Some("t1")
    );
    assert_eq!(get(store, "acme", "k2").await.thread_id, None);
    let end = RunEnd::Completed { output: "x".into() };
    store.finish_run(&on_thread, &end).await.expect("finish");
    store
        .delete_thread("acme", "t1")
        .await
        .unwrap_or_else(|e| panic!("delete t1: {}", why(&e)));
    assert_not_found("k1", store.ticket("acme", "k1").await, "k1");
    assert_eq!(
        ids(store, "acme", "r2").await,
        ["k2"],
        "another run's ticket is kept"
    );
}
