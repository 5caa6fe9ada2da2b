//! Checks of listing tickets (`TicketStore::list_tickets`, what an inbox reads): pending first
//! (oldest first), then the others (newest first), paged, filtered, scoped by tenant.
use agboss_core::store::{NewRun, RunStore, Store, TicketQuery, TicketStore};

use super::tickets::{BEFORE_EXPIRY, approved, create, pending};
use super::{LONG, begin, run_on, thread, why};

async fn listed<S: TicketStore>(
    store: &S,
    tenant: &str,
    query: TicketQuery,
) -> (Vec<String>, Option<u64>) {
    let page = store
        .list_tickets(tenant, &query)
        .await
        .unwrap_or_else(|e| panic!("list tickets of {tenant} ({query:?}): {}", why(&e)));
    assert!(page.unreadable.is_empty(), "no damaged row here");
    assert!(
        page.tickets.iter().all(|t| t.tenant == tenant),
        "only {tenant}'s tickets are listed"
    );
    (
        page.tickets.into_iter().map(|t| t.id).collect(),
        page.next_offset,
    )
}

/// Pending tickets come first, oldest first, then decided ones, newest first; pages of
/// `limit` from `offset` say where the next one starts; another tenant's tickets of the same
/// ids are never listed.
pub async fn list_tickets_pending_first_paged_per_tenant<S: RunStore + TicketStore>(store: &S) {
    let (_, r1) = begin(store, NewRun::new("acme", "r1", "agent", "x"), "w", LONG).await;
    let (_, r2) = begin(store, NewRun::new("acme", "r2", "agent", "x"), "w", LONG).await;
    let (_, g1) = begin(store, NewRun::new("globex", "r1", "agent", "x"), "w", LONG).await;
    for (lease, id, at) in [
        (&r1, "a", 100),
        (&r1, "b", 300),
        (&r1, "c", 200),
        (&r2, "d", 400),
        (&r2, "e", 50),
        (&g1, "a", 10),
        (&g1, "z", 20),
    ] {
        let mut ticket = pending(id);
        ticket.created_at_ms = at;
        create(store, lease, &ticket).await;
    }
    for id in ["d", "e"] {
        store
            .decide_ticket("acme", id, &approved("maria"), BEFORE_EXPIRY)
            .await
            .unwrap_or_else(|e| panic!("decide {id}: {}", why(&e)));
    }
    let all = listed(store, "acme", TicketQuery::new()).await;
    assert_eq!(
        all,
        (
            vec!["a", "c", "b", "d", "e"]
                .into_iter()
                .map(String::from)
                .collect(),
            None
        )
    );
    let only_pending = listed(store, "acme", TicketQuery::new().pending()).await.0;
    assert_eq!(only_pending, ["a", "c", "b"]);
    let pages = [
        (0, ["a", "c"].as_slice(), Some(2)),
        (2, ["b", "d"].as_slice(), Some(4)),
        (4, ["e"].as_slice(), None),
        (10, [].as_slice(), None),
    ];
    for (offset, ids, next) in pages {
        let page = listed(store, "acme", TicketQuery::new().offset(offset).limit(2)).await;
        assert_eq!(page.0, ids, "page at {offset}");
        assert_eq!(page.1, next, "next offset of the page at {offset}");
    }
    assert_eq!(
        listed(store, "globex", TicketQuery::new()).await.0,
        ["a", "z"]
    );
    assert!(
        listed(store, "initech", TicketQuery::new())
            .await
            .0
            .is_empty()
    );
}

/// Filters by channel, run and thread combine; a thread filter never reaches another tenant's
/// thread of the same id.
pub async fn list_tickets_filters_by_channel_run_and_thread<S: Store>(store: &S) {
    thread(store, "acme", "t1").await;
    thread(store, "acme", "t2").await;
    thread(store, "globex", "t1").await;
    let (_, r1) = begin(store, run_on("acme", "r1", "t1", "hi"), "w", LONG).await;
    let (_, r2) = begin(store, run_on("acme", "r2", "t2", "hi"), "w", LONG).await;
    let (_, r3) = begin(store, NewRun::new("acme", "r3", "agent", "x"), "w", LONG).await;
    let (_, g1) = begin(store, run_on("globex", "r1", "t1", "hi"), "w", LONG).await;
    for (lease, id, channel, at) in [
        (&r1, "k1", "ops", 100),
        (&r2, "k2", "finance", 200),
        (&r3, "k3", "ops", 300),
        (&g1, "g1", "ops", 50),
    ] {
        let mut ticket = pending(id);
        ticket.channel = channel.into();
        ticket.created_at_ms = at;
        create(store, lease, &ticket).await;
    }
    let ids = |query| async move { listed(store, "acme", query).await.0 };
    assert_eq!(ids(TicketQuery::new().channel("ops")).await, ["k1", "k3"]);
    assert_eq!(ids(TicketQuery::new().channel("finance")).await, ["k2"]);
    assert_eq!(ids(TicketQuery::new().run("r2")).await, ["k2"]);
    assert_eq!(ids(TicketQuery::new().thread("t1")).await, ["k1"]);
    assert!(
        ids(TicketQuery::new().thread("t2").channel("ops"))
            .await
            .is_empty()
    );
    assert_eq!(ids(TicketQuery::new().run("r1").pending()).await, ["k1"]);
    assert!(ids(TicketQuery::new().channel("nope")).await.is_empty());
    assert_eq!(
        listed(store, "globex", TicketQuery::new().thread("t1"))
            .await
            .0,
        ["g1"]
    );
}
