//! The store traits, each small enough to implement alone: [`ThreadStore`] (conversations),
//! [`RunStore`] (runs, their journals and leases), [`TicketStore`] (approval tickets) and
//! [`UsageStore`] (each tenant's usage per time window), and [`Store`], all four, which an app
//! holds behind [`SharedStore`].
use std::sync::Arc;
use std::time::Duration;

use super::error::StoreError;
use super::forward::store_trait;
use super::ticket::{Ticket, TicketDecision};
use super::ticket_query::{TicketPage, TicketQuery};
use super::types::{
    JournalStep, Lease, NewRun, NewThread, RunEnd, RunRecord, StepEntry, ThreadInfo, ThreadList,
    ThreadMessage,
};
use super::usage::UsageKey;
use crate::contract::ticket::TicketState;
use crate::model::Message;

store_trait! {
    /// Conversation threads of each tenant and their messages (the messages themselves are
    /// written by runs: [`RunStore::begin_run`] and [`RunStore::append`]). Checked by
    /// `agboss_testing::store::thread_checks`.
    pub trait ThreadStore, erased as ErasedThreads, 'a {
        /// Creates a thread for `tenant` ([`StoreError::ThreadExists`] if the tenant has one of
        /// that id).
        fn create_thread(&self, tenant: &'a str, new: NewThread) -> Result<ThreadInfo, StoreError>;
        /// One of `tenant`'s threads.
        fn thread(&self, tenant: &'a str, thread_id: &'a str) -> Result<ThreadInfo, StoreError>;
        /// `tenant`'s threads, oldest first: the readable ones, and by id those whose row cannot
        /// be read (one damaged row fails no listing). Fails as a whole only when the backend
        /// cannot list at all.
        fn list_threads(&self, tenant: &'a str) -> Result<ThreadList, StoreError>;
        /// Deletes a thread with its messages, runs, journals and tickets
        /// ([`StoreError::ThreadBusy`] while one of its runs has not finished).
        fn delete_thread(&self, tenant: &'a str, thread_id: &'a str) -> Result<(), StoreError>;
        /// A thread's messages in order; with `limit`, only the first `limit`.
        fn messages(
            &self,
            tenant: &'a str,
            thread_id: &'a str,
            limit: Option<u64>,
        ) -> Result<Vec<ThreadMessage>, StoreError>;
    }
}

store_trait! {
    /// Runs, their journals and their leases: what a durable-execution engine implements.
    /// Checked by `agboss_testing::store::run_checks`.
    ///
    /// A run on a thread reads and writes the thread's messages, so a backend of this trait
    /// holds the messages of the threads its runs continue.
    pub trait RunStore, erased as ErasedRuns, 'a {
        /// Starts a run, or takes up an unfinished one of that id, and leases it to `worker`.
        ///
        /// A new run on a thread records how many messages the thread had (its history) and
        /// appends its input as a user message; it is refused with [`StoreError::ThreadBusy`]
        /// while another run of the thread has not finished. An existing run is refused when
        /// finished ([`StoreError::RunFinished`]) or leased to another worker until later
        /// ([`StoreError::LeaseHeld`]); otherwise the lease passes to `worker` with the next
        /// fencing token.
        fn begin_run(
            &self,
            run: NewRun,
            worker: &'a str,
            ttl: Duration,
        ) -> Result<(RunRecord, Lease), StoreError>;
        /// One of `tenant`'s runs.
        fn run(&self, tenant: &'a str, run_id: &'a str) -> Result<RunRecord, StoreError>;
        /// Unfinished runs whose lease expired or was released, across tenants, oldest first:
        /// what a worker taking over crashed runs scans. At most `limit`. A run waiting on a
        /// pending ticket is not listed until the ticket is decided or its expiry passes (a
        /// paused run is not a crashed one, and never starves the scan).
        fn resumable_runs(&self, limit: usize) -> Result<Vec<RunRecord>, StoreError>;
        /// A run's journal in order.
        fn steps(&self, tenant: &'a str, run_id: &'a str) -> Result<Vec<JournalStep>, StoreError>;
        /// Appends one step, and `messages` to the run's thread, in one transaction, if `lease`
        /// is still the run's ([`StoreError::LeaseLost`] otherwise, and nothing is written).
        /// Extends the lease. Returns the step's position.
        fn append(
            &self,
            lease: &'a Lease,
            entry: &'a StepEntry,
            messages: &'a [Message],
        ) -> Result<u64, StoreError>;
        /// Extends the lease by its ttl, if it is still the run's.
        fn renew(&self, lease: &'a Lease) -> Result<(), StoreError>;
        /// Records how the run ended and frees the lease, if it is still the run's.
        fn finish_run(&self, lease: &'a Lease, end: &'a RunEnd) -> Result<(), StoreError>;
        /// Frees the lease without finishing the run (it stays resumable), if it is still the
        /// run's.
        fn release(&self, lease: &'a Lease) -> Result<(), StoreError>;
    }
}

store_trait! {
    /// Approval tickets: a gated call waiting for a human decision, created under a run's
    /// lease and moved on by compare-and-swap. Checked by
    /// `agboss_testing::store::ticket_checks`.
    pub trait TicketStore, erased as ErasedTickets, 'a {
        /// Records a new ticket of the lease's run ([`StoreError::TicketExists`] for a
        /// duplicate id), if `lease` is still the run's.
        fn create_ticket(&self, lease: &'a Lease, ticket: &'a Ticket) -> Result<(), StoreError>;
        /// One of `tenant`'s tickets ([`StoreError::TicketNotFound`] for another tenant's).
        fn ticket(&self, tenant: &'a str, ticket_id: &'a str) -> Result<Ticket, StoreError>;
        /// A run's tickets, oldest first.
        fn run_tickets(&self, tenant: &'a str, run_id: &'a str) -> Result<Vec<Ticket>, StoreError>;
        /// A page of `tenant`'s tickets passing `query`'s filters, pending first (oldest first),
        /// then the others (newest first), equal times by id: what an inbox reads. Another
        /// tenant's tickets are never listed; a damaged row is listed in
        /// [`TicketPage::unreadable`] and hides no other.
        fn list_tickets(&self, tenant: &'a str, query: &'a TicketQuery) -> Result<TicketPage, StoreError>;
        /// Decides a pending ticket, by compare-and-swap `Pending → Decided`: refused with
        /// [`StoreError::TicketExpired`] once `now_ms` is past its expiry (or the ticket moved to
        /// [`TicketState::Expired`]), with
        /// [`StoreError::TicketState`] when it is not pending (so a ticket is decided once).
        fn decide_ticket(
            &self,
            tenant: &'a str,
            ticket_id: &'a str,
            decision: &'a TicketDecision,
            now_ms: i64,
        ) -> Result<Ticket, StoreError>;
        /// Moves a ticket of the lease's run from `from` to `to` by compare-and-swap
        /// ([`StoreError::TicketState`] when it is not in `from`), if `lease` is still the run's.
        fn advance_ticket(
            &self,
            lease: &'a Lease,
            ticket_id: &'a str,
            from: TicketState,
            to: TicketState,
        ) -> Result<Ticket, StoreError>;
    }
}

store_trait! {
    /// Each tenant's usage counters per time window ([`UsageKey`]), what the tenant windows of
    /// `engine::TenantUsageLimits` are kept in, so that every app instance over the store
    /// counts against the same window. Checked by `agboss_testing::store::usage_checks`.
    ///
    /// A call is **reserved** before it starts ([`UsageStore::reserve_usage`]: one atomic
    /// conditional add, never a read then a write, so concurrent reservations from any number
    /// of instances never pass the bound) and **settled** after it: the unused part of a
    /// reservation is released ([`UsageStore::release_usage`]), usage beyond it added
    /// ([`UsageStore::add_usage`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// use agboss_core::store::{MemoryStore, UsageKey, UsageStore};
    /// # futures::executor::block_on(async {
    /// let store = MemoryStore::new();
    /// let key = UsageKey::at("acme", "tool_calls", Duration::from_secs(3600), 1_000);
    /// assert_eq!(store.reserve_usage(&key, 2, 3).await.unwrap(), Some(2));
    /// assert_eq!(store.reserve_usage(&key, 2, 3).await.unwrap(), None); // would pass 3
    /// store.release_usage(&key, 1).await.unwrap();
    /// assert_eq!(store.reserve_usage(&key, 2, 3).await.unwrap(), Some(3));
    /// # });
    /// ```
    pub trait UsageStore, erased as ErasedUsage, 'a {
        /// Adds `amount` to the counter if the sum stays at most `max`, atomically: the new
        /// total, or `None` (and nothing added) when it would pass `max`. A counter never used
        /// starts at 0.
        fn reserve_usage(&self, key: &'a UsageKey, amount: u64, max: u64) -> Result<Option<u64>, StoreError>;
        /// Adds `amount` whatever the total (what a call used beyond its reservation): the new
        /// total.
        fn add_usage(&self, key: &'a UsageKey, amount: u64) -> Result<u64, StoreError>;
        /// Takes `amount` back (the unused part of a reservation), never below 0.
        fn release_usage(&self, key: &'a UsageKey, amount: u64) -> Result<(), StoreError>;
        /// The counter's total (0 for one never used).
        fn usage(&self, key: &'a UsageKey) -> Result<u64, StoreError>;
        /// Deletes the counters of every tenant whose window started before `before_ms` (windows
        /// long past): how many.
        fn prune_usage(&self, before_ms: i64) -> Result<u64, StoreError>;
    }
}

/// A whole store: threads, runs, tickets and usage windows, what an app needs
/// ([`AppBuilder::store`](crate::AppBuilder::store)). Implemented for every type that
/// implements the four traits; every backend passes the same conformance suite
/// (`agboss_testing::store::conformance`).
pub trait Store: ThreadStore + RunStore + TicketStore + UsageStore {}

impl<S: ThreadStore + RunStore + TicketStore + UsageStore> Store for S {}

/// A whole store behind `dyn`.
trait ErasedStore: ErasedThreads + ErasedRuns + ErasedTickets + ErasedUsage {}

impl<S: Store> ErasedStore for S {}

/// Any [`Store`] behind one cheap-to-clone handle (what an app holds). It is itself a `Store`.
///
/// ```
/// use agboss_core::store::{MemoryStore, SharedStore};
/// let store = SharedStore::new(MemoryStore::new());
/// let same = store.clone();
/// # let _ = same;
/// ```
#[derive(Clone)]
pub struct SharedStore(Arc<dyn ErasedStore>);

impl std::fmt::Debug for SharedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedStore")
    }
}

impl SharedStore {
    /// Wraps a store.
    pub fn new(store: impl Store) -> Self {
        Self(Arc::new(store))
    }
}
