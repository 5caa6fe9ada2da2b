//! Checks of approval tickets: scoped by tenant and run, fenced by the lease, decided once, moved
//! on by compare-and-swap, deleted with their thread.
use agboss_core::store::{
    Lease, NewRun, RunEnd, RunStore, Store, StoreError, Ticket, TicketDecision, TicketState,
    TicketStore,
};

use super::{EXPIRED, LONG, assert_lease_lost, begin, run_on, thread, why};

/// When the tickets of these checks are created, when they expire, and a time in between (the
/// checks pass `now_ms` to `decide_ticket` themselves).
pub(super) const CREATED: i64 = 1_000;
pub(super) const EXPIRES: i64 = 10_000;
pub(super) const BEFORE_EXPIRY: i64 = 5_000;

/// A pending ticket `id`, created at [`CREATED`], expiring at [`EXPIRES`].
pub(super) fn pending(id: &str) -> Ticket {
    let mut ticket = Ticket::pending(id, "refund", format!(r#"{{"order":"{id}"}}"#));
    ticket.step_key = format!("tool:0:{id}");
    ticket.call_id = format!("call-{id}");
    ticket.channel = "ops".into();
    ticket.chain_digest = format!("chain-{id}");
    ticket.created_at_ms = CREATED;
    ticket.expires_at_ms = EXPIRES;
    ticket
}

/// `ticket` as the store keeps it when `lease` creates it.
pub(super) fn stored(ticket: &Ticket, lease: &Lease) -> Ticket {
    let mut ticket = ticket.clone();
    ticket.tenant = lease.tenant.clone();
    ticket.run_id = lease.run_id.clone();
    ticket
}

pub(super) fn approved(by: &str) -> TicketDecision {
    TicketDecision::Approved { by: by.into() }
}

pub(super) async fn create<S: RunStore + TicketStore>(store: &S, lease: &Lease, ticket: &Ticket) {
    store
        .create_ticket(lease, ticket)
        .await
        .unwrap_or_else(|e| {
            panic!(
                "create ticket {} on {}: {}",
                ticket.id,
                lease.run_id,
                why(&e)
            )
        });
}

pub(super) async fn get<S: RunStore + TicketStore>(store: &S, tenant: &str, id: &str) -> Ticket {
    store
        .ticket(tenant, id)
        .await
        .unwrap_or_else(|e| panic!("ticket {tenant}/{id}: {}", why(&e)))
}

pub(super) async fn ids<S: RunStore + TicketStore>(
    store: &S,
    tenant: &str,
    run_id: &str,
) -> Vec<String> {
    store
        .run_tickets(tenant, run_id)
        .await
        .unwrap_or_else(|e| panic!("tickets of {tenant}/{run_id}: {}", why(&e)))
        .into_iter()
        .map(|t| t.id)
        .collect()
}

pub(super) async fn advance<S: RunStore + TicketStore>(
    store: &S,
    lease: &Lease,
    id: &str,
    from: TicketState,
    to: TicketState,
) -> Ticket {
    let ticket = store
        .advance_ticket(lease, id, from, to)
        .await
        .unwrap_or_else(|e| panic!("advance {id} {from:?} -> {to:?}: {}", why(&e)));
    assert_eq!(
        ticket.state, to,
        "advance returns the ticket in its new state"
    );
    ticket
}

#[track_caller]
pub(super) fn assert_not_found<T: std::fmt::Debug>(
    what: &str,
    result: Result<T, StoreError>,
    id: &str,
) {
    match result {
        Err(StoreError::TicketNotFound { ticket_id }) => assert_eq!(ticket_id, id, "{what}"),
        other => panic!("{what}: expected TicketNotFound, got {other:?}"),
    }
}

/// `result` is [`StoreError::TicketExpired`] naming `ticket` and its expiry.
#[track_caller]
pub(super) fn assert_expired<T: std::fmt::Debug>(
    what: &str,
    result: Result<T, StoreError>,
    ticket: &Ticket,
) {
    match result {
        Err(StoreError::TicketExpired {
            ticket_id,
            expires_at_ms,
        }) => assert_eq!(
            (ticket_id.as_str(), expires_at_ms),
            (ticket.id.as_str(), ticket.expires_at_ms),
            "{what}"
        ),
        other => panic!("{what}: expected TicketExpired, got {other:?}"),
    }
}

#[track_caller]
pub(super) fn assert_state<T: std::fmt::Debug>(
    what: &str,
    result: Result<T, StoreError>,
    expected: TicketState,
    found: TicketState,
) {
    match result {
        Err(StoreError::TicketState {
            expected: e,
            found: f,
            ..
        }) => assert_eq!((e, f), (expected, found), "{what}"),
        other => {
            panic!("{what}: expected TicketState {{ {expected:?}, {found:?} }}, got {other:?}")
        }
    }
}

/// A ticket reads back as created, with the lease's tenant and run (whatever the ticket said);
/// a decision given at creation reads back too.
pub async fn tickets_round_trip_with_the_leases_tenant_and_run<S: Store>(store: &S) {
    thread(store, "acme", "t1").await;
    let (_, lease) = begin(store, run_on("acme", "r1", "t1", "hi"), "w", LONG).await;
    let mut k1 = pending("k1");
    k1.tenant = "globex".into();
    k1.run_id = "elsewhere".into();
    k1.thread_id = Some("t1".into());
    create(store, &lease, &k1).await;
    let got = get(store, "acme", "k1").await;
    assert_eq!(got, stored(&k1, &lease), "the ticket reads back as created");
    assert_eq!((got.tenant.as_str(), got.run_id.as_str()), ("acme", "r1"));
    assert_eq!(got.state, TicketState::Pending);
    assert_eq!(got.decision, None);

    // A decision round-trips too (tickets are created pending, then decided).
    let mut k2 = pending("k2");
    k2.thread_id = Some("t1".into());
    create(store, &lease, &k2).await;
    let decision = TicketDecision::Edited {
        by: "alice".into(),
        input: r#"{"order":"k2","amount":5}"#.into(),
    };
    store
        .decide_ticket("acme", "k2", &decision, BEFORE_EXPIRY)
        .await
        .unwrap_or_else(|e| panic!("decide k2: {}", why(&e)));
    k2.state = TicketState::Decided;
    k2.decision = Some(decision);
    assert_eq!(get(store, "acme", "k2").await, stored(&k2, &lease));

    let (_, loose) = begin(store, NewRun::new("acme", "r2", "agent", "x"), "w", LONG).await;
    create(store, &loose, &pending("k3")).await;
    let k3 = get(store, "acme", "k3").await;
    assert_eq!((k3.run_id.as_str(), k3.thread_id), ("r2", None));
}

/// `run_tickets` lists one run's tickets of one tenant, in creation order (not id order); ticket
/// ids are unique per tenant only.
pub async fn run_tickets_oldest_first_per_tenant_and_run<S: RunStore + TicketStore>(store: &S) {
    let (_, r1) = begin(store, NewRun::new("acme", "r1", "agent", "x"), "w", LONG).await;
    let (_, r2) = begin(store, NewRun::new("acme", "r2", "agent", "x"), "w", LONG).await;
    let (_, g1) = begin(store, NewRun::new("globex", "r1", "agent", "x"), "w", LONG).await;
    for (lease, id) in [(&r1, "b"), (&r2, "d"), (&r1, "a"), (&g1, "a"), (&r1, "c")] {
        create(store, lease, &pending(id)).await;
    }
    create(store, &g1, &pending("z")).await;
    assert_eq!(ids(store, "acme", "r1").await, ["b", "a", "c"]);
    assert_eq!(ids(store, "acme", "r2").await, ["d"]);
    assert_eq!(ids(store, "globex", "r1").await, ["a", "z"]);
    assert!(ids(store, "globex", "r2").await.is_empty());
    assert!(ids(store, "acme", "no-such-run").await.is_empty());
    assert_eq!(get(store, "globex", "a").await.tenant, "globex");
    assert_eq!(get(store, "acme", "a").await, stored(&pending("a"), &r1));
}

/// Another tenant's ticket (or one of another run, for a leased write) is not found, by every
/// operation, and stays untouched.
pub async fn foreign_ticket_not_found<S: RunStore + TicketStore>(store: &S) {
    let (_, acme) = begin(store, NewRun::new("acme", "r1", "agent", "x"), "w", LONG).await;
    let (_, globex) = begin(store, NewRun::new("globex", "r1", "agent", "x"), "w", LONG).await;
    let (_, other_run) = begin(store, NewRun::new("acme", "r2", "agent", "x"), "w", LONG).await;
    create(store, &acme, &pending("k1")).await;
    assert_not_found("get", store.ticket("globex", "k1").await, "k1");
    assert_not_found(
        "get a missing one",
        store.ticket("acme", "nope").await,
        "nope",
    );
    assert_not_found(
        "decide",
        store
            .decide_ticket("globex", "k1", &approved("eve"), BEFORE_EXPIRY)
            .await,
        "k1",
    );
    let (p, d) = (TicketState::Pending, TicketState::Decided);
    for (what, lease) in [("another tenant", &globex), ("another run", &other_run)] {
        assert_not_found(what, store.advance_ticket(lease, "k1", p, d).await, "k1");
    }
    assert_not_found(
        "advance a missing one",
        store.advance_ticket(&acme, "nope", p, d).await,
        "nope",
    );
    assert_eq!(
        get(store, "acme", "k1").await,
        stored(&pending("k1"), &acme)
    );
}

/// A ticket write with a stale lease (taken over, another worker's, a finished run) is refused
/// with `LeaseLost` and writes nothing; the checks of the lease come before the duplicate check.
pub async fn stale_lease_creates_or_advances_nothing<S: RunStore + TicketStore>(store: &S) {
    let (_, a) = begin(store, NewRun::new("acme", "r1", "agent", "x"), "a", EXPIRED).await;
    let (_, b) = begin(store, NewRun::new("acme", "r1", "agent", "x"), "b", LONG).await;
    assert_lease_lost("create", store.create_ticket(&a, &pending("k1")).await, &a);
    assert_not_found("nothing created", store.ticket("acme", "k1").await, "k1");
    create(store, &b, &pending("k2")).await;
    assert_lease_lost(
        "a duplicate with a stale lease",
        store.create_ticket(&a, &pending("k2")).await,
        &a,
    );
    let (p, s) = (TicketState::Pending, TicketState::Superseded);
    assert_lease_lost("advance", store.advance_ticket(&a, "k2", p, s).await, &a);
    let mut impostor = b.clone();
    impostor.worker = "a".into();
    assert_lease_lost(
        "create by another worker",
        store.create_ticket(&impostor, &pending("k3")).await,
        &impostor,
    );
    assert_lease_lost(
        "advance by another worker",
        store.advance_ticket(&impostor, "k2", p, s).await,
        &impostor,
    );
    let end = RunEnd::Completed { output: "x".into() };
    store.finish_run(&b, &end).await.expect("finish");
    assert_lease_lost(
        "create on a finished run",
        store.create_ticket(&b, &pending("k4")).await,
        &b,
    );
    assert_lease_lost(
        "advance on a finished run",
        store.advance_ticket(&b, "k2", p, s).await,
        &b,
    );
    assert_eq!(ids(store, "acme", "r1").await, ["k2"], "nothing created");
    assert_eq!(get(store, "acme", "k2").await, stored(&pending("k2"), &b));
}

/// A ticket id already used by the tenant (on any of its runs) is refused with `TicketExists`,
/// and the first ticket is unchanged; another tenant may use it.
pub async fn duplicate_ticket_refused<S: RunStore + TicketStore>(store: &S) {
    let (_, r1) = begin(store, NewRun::new("acme", "r1", "agent", "x"), "w", LONG).await;
    let (_, r2) = begin(store, NewRun::new("acme", "r2", "agent", "x"), "w", LONG).await;
    let (_, g1) = begin(store, NewRun::new("globex", "r1", "agent", "x"), "w", LONG).await;
    create(store, &r1, &pending("k1")).await;
    let mut again = pending("k1");
    again.tool = "delete_account".into();
    for (what, lease) in [("the same run", &r1), ("another run", &r2)] {
        match store.create_ticket(lease, &again).await {
            Err(StoreError::TicketExists { ticket_id }) => assert_eq!(ticket_id, "k1"),
            other => panic!("a duplicate on {what}: expected TicketExists, got {other:?}"),
        }
    }
    assert_eq!(get(store, "acme", "k1").await, stored(&pending("k1"), &r1));
    assert_eq!(ids(store, "acme", "r1").await, ["k1"]);
    assert!(ids(store, "acme", "r2").await.is_empty());
    create(store, &g1, &again).await;
    assert_eq!(get(store, "globex", "k1").await.tool, "delete_account");
}

/// `decide_ticket` moves a pending ticket to `Decided` with the decision, once: a second
/// decision is refused with `TicketState` and changes nothing.
pub async fn ticket_decided_once<S: RunStore + TicketStore>(store: &S) {
    let (_, lease) = begin(store, NewRun::new("acme", "r1", "agent", "x"), "w", LONG).await;
    create(store, &lease, &pending("k1")).await;
    let decided = store
        .decide_ticket("acme", "k1", &approved("alice"), BEFORE_EXPIRY)
        .await
        .unwrap_or_else(|e| panic!("decide: {}", why(&e)));
    let mut expected = stored(&pending("k1"), &lease);
    expected.state = TicketState::Decided;
    expected.decision = Some(approved("alice"));
    assert_eq!(decided, expected, "decide returns the decided ticket");
    assert_eq!(get(store, "acme", "k1").await, expected);
    let reject = TicketDecision::Rejected {
        by: "bob".into(),
        message: "no".into(),
    };
    assert_state(
        "a second decision",
        store
            .decide_ticket("acme", "k1", &reject, BEFORE_EXPIRY)
            .await,
        TicketState::Pending,
        TicketState::Decided,
    );
    assert_state(
        "a decided ticket past its expiry is refused as decided",
        store
            .decide_ticket("acme", "k1", &reject, EXPIRES + 1)
            .await,
        TicketState::Pending,
        TicketState::Decided,
    );
    assert_eq!(get(store, "acme", "k1").await, expected, "unchanged");

    create(store, &lease, &pending("k2")).await;
    let edit = TicketDecision::Edited {
        by: "carol".into(),
        input: r#"{"order":"k2","amount":1}"#.into(),
    };
    store
        .decide_ticket("acme", "k2", &edit, BEFORE_EXPIRY)
        .await
        .unwrap_or_else(|e| panic!("decide k2: {}", why(&e)));
    assert_eq!(get(store, "acme", "k2").await.decision, Some(edit));
    assert_not_found(
        "decide a missing one",
        store
            .decide_ticket("acme", "k3", &reject, BEFORE_EXPIRY)
            .await,
        "k3",
    );
}

/// A ticket cannot be decided once `now_ms` reaches its expiry (`TicketExpired`, nothing
/// changes); the instant before, it can.
pub async fn expired_ticket_cannot_be_decided<S: RunStore + TicketStore>(store: &S) {
    let (_, lease) = begin(store, NewRun::new("acme", "r1", "agent", "x"), "w", LONG).await;
    let now = agboss_core::store::types::now_ms();
    let mut past = pending("k1");
    past.created_at_ms = now - 120_000;
    past.expires_at_ms = now - 60_000;
    create(store, &lease, &past).await;
    for (what, at) in [("now", now), ("at its expiry", past.expires_at_ms)] {
        let decided = store.decide_ticket("acme", "k1", &approved("a"), at).await;
        assert_expired(&format!("decided {what}"), decided, &past);
    }
    assert_eq!(
        get(store, "acme", "k1").await,
        stored(&past, &lease),
        "unchanged"
    );
    create(store, &lease, &pending("k2")).await;
    let decided = store
        .decide_ticket("acme", "k2", &approved("a"), EXPIRES - 1)
        .await
        .unwrap_or_else(|e| panic!("decide just before expiry: {}", why(&e)));
    assert_eq!(decided.state, TicketState::Decided);
}
