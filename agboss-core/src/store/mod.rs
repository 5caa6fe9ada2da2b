//! Leaf: conversation threads and the durable run journal behind one [`ThreadStore`] trait.
//!
//! A **thread** is a conversation owned by one tenant: its messages in order. A **run** (one
//! `execute` / `stream`) may continue a thread: it reads the thread's messages as history and
//! appends its own as it goes. Every step of a run is written to the run's **journal** before
//! the next one starts: a model turn with the digest of its request and the response, a tool
//! call's start (with the idempotency key the tool reads) and its end (the observation). A run
//! resumed in another process replays its journal: completed steps are read back, never done
//! again.
//!
//! One worker writes a run at a time: [`ThreadStore::begin_run`] grants a [`Lease`] with an
//! expiry and a fencing token, every write carries it, and a write whose token is no longer the
//! run's is refused ([`StoreError::LeaseLost`]): a worker that lost its run cannot corrupt it.
//!
//! Every operation is scoped by tenant: thread and run ids are unique within a tenant, and
//! another tenant's thread or run reads as not found.
//!
//! Backends: [`MemoryStore`] (tests), `SqliteStore` (the embedded default, feature `sqlite`)
//! and `PostgresStore` (feature `postgres`). A durable-execution engine fits the same contract: a
//! journal append is a journaled step (`ctx.run`), a lease is the engine's own invocation
//! ownership.
//!
//! ```
//! use agboss_core::store::{MemoryStore, NewThread, ThreadStore};
//! # futures::executor::block_on(async {
//! let store = MemoryStore::new();
//! let thread = store.create_thread("acme", NewThread::new().id("t1")).await.unwrap();
//! assert_eq!(thread.id, "t1");
//! assert!(store.thread("globex", "t1").await.is_err()); // another tenant's thread
//! # });
//! ```
use std::future::Future;
use std::time::Duration;

use crate::model::Message;

pub mod error;
mod memory;
#[cfg(feature = "postgres")]
mod postgres;
mod shared;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod sql;
#[cfg(feature = "sqlite")]
mod sqlite;
pub mod ticket;
pub mod types;

pub use error::StoreError;
pub use memory::MemoryStore;
#[cfg(feature = "postgres")]
pub use postgres::PostgresStore;
pub use shared::SharedStore;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteStore;
pub use ticket::{Ticket, TicketDecision, TicketState};
pub use types::{
    DEFAULT_LEASE_TTL, FORMAT_VERSION, JournalStep, Lease, NewRun, NewThread, RunEnd, RunRecord,
    RunStatus, StepEntry, ThreadInfo, ThreadMessage,
};

/// Threads, runs, their journals and leases. Every backend passes the same conformance suite
/// (`agboss_testing::store::conformance`).
pub trait ThreadStore: Send + Sync + 'static {
    /// Creates a thread for `tenant` ([`StoreError::ThreadExists`] if the tenant has one of
    /// that id).
    fn create_thread(
        &self,
        tenant: &str,
        new: NewThread,
    ) -> impl Future<Output = Result<ThreadInfo, StoreError>> + Send;
    /// One of `tenant`'s threads.
    fn thread(
        &self,
        tenant: &str,
        thread_id: &str,
    ) -> impl Future<Output = Result<ThreadInfo, StoreError>> + Send;
    /// `tenant`'s threads, oldest first.
    fn list_threads(
        &self,
        tenant: &str,
    ) -> impl Future<Output = Result<Vec<ThreadInfo>, StoreError>> + Send;
    /// Deletes a thread with its messages, runs and journals ([`StoreError::ThreadBusy`] while
    /// one of its runs has not finished).
    fn delete_thread(
        &self,
        tenant: &str,
        thread_id: &str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
    /// A thread's messages in order; with `limit`, only the first `limit`.
    fn messages(
        &self,
        tenant: &str,
        thread_id: &str,
        limit: Option<u64>,
    ) -> impl Future<Output = Result<Vec<ThreadMessage>, StoreError>> + Send;

    /// Starts a run, or takes up an unfinished one of that id, and leases it to `worker`.
    ///
    /// A new run on a thread records how many messages the thread had (its history) and
    /// appends its input as a user message; it is refused with [`StoreError::ThreadBusy`] while
    /// another run of the thread has not finished. An existing run is refused when finished
    /// ([`StoreError::RunFinished`]) or leased to another worker until later
    /// ([`StoreError::LeaseHeld`]); otherwise the lease passes to `worker` with the next
    /// fencing token.
    fn begin_run(
        &self,
        run: NewRun,
        worker: &str,
        ttl: Duration,
    ) -> impl Future<Output = Result<(RunRecord, Lease), StoreError>> + Send;
    /// One of `tenant`'s runs.
    fn run(
        &self,
        tenant: &str,
        run_id: &str,
    ) -> impl Future<Output = Result<RunRecord, StoreError>> + Send;
    /// Unfinished runs whose lease expired or was released, across tenants, oldest first: what
    /// a worker taking over crashed runs scans. At most `limit`.
    fn resumable_runs(
        &self,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<RunRecord>, StoreError>> + Send;
    /// A run's journal in order.
    fn steps(
        &self,
        tenant: &str,
        run_id: &str,
    ) -> impl Future<Output = Result<Vec<JournalStep>, StoreError>> + Send;
    /// Appends one step, and `messages` to the run's thread, in one transaction, if `lease` is
    /// still the run's ([`StoreError::LeaseLost`] otherwise, and nothing is written). Extends
    /// the lease. Returns the step's position.
    fn append(
        &self,
        lease: &Lease,
        entry: &StepEntry,
        messages: &[Message],
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;
    /// Extends the lease by its ttl, if it is still the run's.
    fn renew(&self, lease: &Lease) -> impl Future<Output = Result<(), StoreError>> + Send;
    /// Records how the run ended and frees the lease, if it is still the run's.
    fn finish_run(
        &self,
        lease: &Lease,
        end: &RunEnd,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
    /// Frees the lease without finishing the run (it stays resumable), if it is still the
    /// run's.
    fn release(&self, lease: &Lease) -> impl Future<Output = Result<(), StoreError>> + Send;

    // The ticket operations default to `StoreError::Unsupported` for stores without approval
    // tickets; the three backends of this crate implement them.

    /// Records a new ticket of the lease's run ([`StoreError::TicketExists`] for a duplicate
    /// id), if `lease` is still the run's.
    fn create_ticket(
        &self,
        _lease: &Lease,
        _ticket: &Ticket,
    ) -> impl Future<Output = Result<(), StoreError>> + Send {
        async {
            Err(StoreError::Unsupported {
                operation: "create_ticket",
            })
        }
    }
    /// One of `tenant`'s tickets ([`StoreError::TicketNotFound`] for another tenant's).
    fn ticket(
        &self,
        _tenant: &str,
        _ticket_id: &str,
    ) -> impl Future<Output = Result<Ticket, StoreError>> + Send {
        async {
            Err(StoreError::Unsupported {
                operation: "ticket",
            })
        }
    }
    /// A run's tickets, oldest first.
    fn run_tickets(
        &self,
        _tenant: &str,
        _run_id: &str,
    ) -> impl Future<Output = Result<Vec<Ticket>, StoreError>> + Send {
        async {
            Err(StoreError::Unsupported {
                operation: "run_tickets",
            })
        }
    }
    /// Decides a pending ticket, by compare-and-swap `Pending → Decided`: refused with
    /// [`StoreError::TicketExpired`] once `now_ms` is past its expiry, with
    /// [`StoreError::TicketState`] when it is not pending (so a ticket is decided once).
    fn decide_ticket(
        &self,
        _tenant: &str,
        _ticket_id: &str,
        _decision: &TicketDecision,
        _now_ms: i64,
    ) -> impl Future<Output = Result<Ticket, StoreError>> + Send {
        async {
            Err(StoreError::Unsupported {
                operation: "decide_ticket",
            })
        }
    }
    /// Moves a ticket of the lease's run from `from` to `to` by compare-and-swap
    /// ([`StoreError::TicketState`] when it is not in `from`), if `lease` is still the run's.
    fn advance_ticket(
        &self,
        _lease: &Lease,
        _ticket_id: &str,
        _from: TicketState,
        _to: TicketState,
    ) -> impl Future<Output = Result<Ticket, StoreError>> + Send {
        async {
            Err(StoreError::Unsupported {
                operation: "advance_ticket",
            })
        }
    }
}
