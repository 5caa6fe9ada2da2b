//! Fresh stores for the store tests: SQLite files in a temporary directory, PostgreSQL schemas
//! of their own on the server of `AGBOSS_TEST_POSTGRES_URL`.
#![allow(dead_code)] // each test crate uses its part

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use agboss_core::store::{
    Lease, NewRun, PostgresStore, RunStore, SqliteStore, StoreError, Ticket, TicketDecision,
    TicketState, TicketStore,
};

/// The variable naming the PostgreSQL server of the tests.
pub const PG_URL_VAR: &str = "AGBOSS_TEST_POSTGRES_URL";

/// A name no other test (of this run or an earlier one) uses.
pub fn unique(prefix: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "{prefix}_{}_{}_{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// A temporary directory, removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new() -> Self {
        let dir = std::env::temp_dir().join(unique("agboss-store-test"));
        std::fs::create_dir_all(&dir).expect("create a temporary directory");
        Self(dir)
    }
    /// A fresh database path in it.
    pub fn db(&self) -> PathBuf {
        self.0.join(format!("{}.db", unique("store")))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A store on a new file.
pub async fn sqlite_file(dir: &TempDir) -> SqliteStore {
    SqliteStore::open(dir.db())
        .await
        .expect("open a SQLite file")
}

/// The PostgreSQL server's URL, or `None` (the test is skipped) when it is not set outside CI.
/// In CI (`CI` set) a missing URL fails the test: the PostgreSQL backend must be tested there.
pub fn pg_url() -> Option<String> {
    match std::env::var(PG_URL_VAR) {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ if std::env::var_os("CI").is_some() => panic!(
            "{PG_URL_VAR} is not set, and CI is: the PostgreSQL store tests must run in CI. \
             Run the tests with `bash scripts/test.sh`, which starts a throwaway PostgreSQL."
        ),
        _ => {
            println!("skipped: {PG_URL_VAR} not set (run scripts/test.sh)");
            None
        }
    }
}

/// A store in a new schema of its own.
pub async fn pg_fresh(url: &str) -> PostgresStore {
    let schema = unique("agboss_test");
    PostgresStore::connect_with_schema(url, &schema)
        .await
        .unwrap_or_else(|e| panic!("connect to {url} in schema {schema}: {e:?}"))
}

/// A pending ticket `id` expiring in an hour.
pub fn ticket(id: &str) -> Ticket {
    let mut ticket = Ticket::pending(id, "refund", r#"{"amount":10}"#);
    ticket.expires_at_ms = ticket.created_at_ms + 3_600_000;
    ticket
}

/// A run `acme/r1` with the pending tickets `k1` and `k2`; its lease.
pub async fn two_tickets<S: RunStore + TicketStore>(store: &S) -> Lease {
    let (_, lease) = store
        .begin_run(
            NewRun::new("acme", "r1", "agent", "x"),
            "w",
            std::time::Duration::from_secs(600),
        )
        .await
        .expect("begin run");
    for id in ["k1", "k2"] {
        store
            .create_ticket(&lease, &ticket(id))
            .await
            .expect("create ticket");
    }
    lease
}

/// With `k1`'s state an unknown name and `k2`'s decision unreadable (as the caller stored
/// them): every ticket operation that reads them is refused with `Corrupt` naming what is
/// wrong, and none panics. (The caller checks the rows are unchanged.)
pub async fn assert_corrupt_tickets_refused<S: TicketStore>(store: &S, lease: &Lease) {
    #[track_caller]
    fn corrupt<T: std::fmt::Debug>(what: &str, expected: &str, result: Result<T, StoreError>) {
        match result {
            Err(StoreError::Corrupt { what: w, .. }) => assert_eq!(w, expected, "{what}"),
            other => panic!("{what}: expected Corrupt, got {other:?}"),
        }
    }
    let approve = TicketDecision::Approved { by: "a".into() };
    let now = agboss_core::store::types::now_ms();
    let (p, s) = (TicketState::Pending, TicketState::Superseded);
    for (id, what) in [("k1", "ticket state"), ("k2", "ticket decision")] {
        corrupt(id, what, store.ticket("acme", id).await);
        corrupt(
            id,
            what,
            store.decide_ticket("acme", id, &approve, now).await,
        );
        corrupt(id, what, store.advance_ticket(lease, id, p, s).await);
    }
    corrupt(
        "list",
        "ticket state",
        store.run_tickets("acme", "r1").await,
    );
}
