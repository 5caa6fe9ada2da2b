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
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;

use crate::model::Message;

pub mod error;
mod memory;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod sql;
#[cfg(feature = "sqlite")]
mod sqlite;
pub mod types;

pub use error::StoreError;
pub use memory::MemoryStore;
#[cfg(feature = "postgres")]
pub use postgres::PostgresStore;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteStore;
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
}

/// A shared store is a store (keep a handle to a store you also give to an app).
impl<S: ThreadStore> ThreadStore for Arc<S> {
    fn create_thread(
        &self,
        tenant: &str,
        new: NewThread,
    ) -> impl Future<Output = Result<ThreadInfo, StoreError>> + Send {
        S::create_thread(self, tenant, new)
    }
    fn thread(
        &self,
        tenant: &str,
        thread_id: &str,
    ) -> impl Future<Output = Result<ThreadInfo, StoreError>> + Send {
        S::thread(self, tenant, thread_id)
    }
    fn list_threads(
        &self,
        tenant: &str,
    ) -> impl Future<Output = Result<Vec<ThreadInfo>, StoreError>> + Send {
        S::list_threads(self, tenant)
    }
    fn delete_thread(
        &self,
        tenant: &str,
        thread_id: &str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send {
        S::delete_thread(self, tenant, thread_id)
    }
    fn messages(
        &self,
        tenant: &str,
        thread_id: &str,
        limit: Option<u64>,
    ) -> impl Future<Output = Result<Vec<ThreadMessage>, StoreError>> + Send {
        S::messages(self, tenant, thread_id, limit)
    }
    fn begin_run(
        &self,
        run: NewRun,
        worker: &str,
        ttl: Duration,
    ) -> impl Future<Output = Result<(RunRecord, Lease), StoreError>> + Send {
        S::begin_run(self, run, worker, ttl)
    }
    fn run(
        &self,
        tenant: &str,
        run_id: &str,
    ) -> impl Future<Output = Result<RunRecord, StoreError>> + Send {
        S::run(self, tenant, run_id)
    }
    fn resumable_runs(
        &self,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<RunRecord>, StoreError>> + Send {
        S::resumable_runs(self, limit)
    }
    fn steps(
        &self,
        tenant: &str,
        run_id: &str,
    ) -> impl Future<Output = Result<Vec<JournalStep>, StoreError>> + Send {
        S::steps(self, tenant, run_id)
    }
    fn append(
        &self,
        lease: &Lease,
        entry: &StepEntry,
        messages: &[Message],
    ) -> impl Future<Output = Result<u64, StoreError>> + Send {
        S::append(self, lease, entry, messages)
    }
    fn renew(&self, lease: &Lease) -> impl Future<Output = Result<(), StoreError>> + Send {
        S::renew(self, lease)
    }
    fn finish_run(
        &self,
        lease: &Lease,
        end: &RunEnd,
    ) -> impl Future<Output = Result<(), StoreError>> + Send {
        S::finish_run(self, lease, end)
    }
    fn release(&self, lease: &Lease) -> impl Future<Output = Result<(), StoreError>> + Send {
        S::release(self, lease)
    }
}

/// [`ThreadStore`] behind `dyn`: the boxed futures live only here.
trait ErasedStore: Send + Sync {
    fn create_thread<'a>(
        &'a self,
        tenant: &'a str,
        new: NewThread,
    ) -> BoxFuture<'a, Result<ThreadInfo, StoreError>>;
    fn thread<'a>(
        &'a self,
        tenant: &'a str,
        thread_id: &'a str,
    ) -> BoxFuture<'a, Result<ThreadInfo, StoreError>>;
    fn list_threads<'a>(
        &'a self,
        tenant: &'a str,
    ) -> BoxFuture<'a, Result<Vec<ThreadInfo>, StoreError>>;
    fn delete_thread<'a>(
        &'a self,
        tenant: &'a str,
        thread_id: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    fn messages<'a>(
        &'a self,
        tenant: &'a str,
        thread_id: &'a str,
        limit: Option<u64>,
    ) -> BoxFuture<'a, Result<Vec<ThreadMessage>, StoreError>>;
    fn begin_run<'a>(
        &'a self,
        run: NewRun,
        worker: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(RunRecord, Lease), StoreError>>;
    fn run<'a>(
        &'a self,
        tenant: &'a str,
        run_id: &'a str,
    ) -> BoxFuture<'a, Result<RunRecord, StoreError>>;
    fn resumable_runs(&self, limit: usize) -> BoxFuture<'_, Result<Vec<RunRecord>, StoreError>>;
    fn steps<'a>(
        &'a self,
        tenant: &'a str,
        run_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<JournalStep>, StoreError>>;
    fn append<'a>(
        &'a self,
        lease: &'a Lease,
        entry: &'a StepEntry,
        messages: &'a [Message],
    ) -> BoxFuture<'a, Result<u64, StoreError>>;
    fn renew<'a>(&'a self, lease: &'a Lease) -> BoxFuture<'a, Result<(), StoreError>>;
    fn finish_run<'a>(
        &'a self,
        lease: &'a Lease,
        end: &'a RunEnd,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    fn release<'a>(&'a self, lease: &'a Lease) -> BoxFuture<'a, Result<(), StoreError>>;
}

impl<S: ThreadStore> ErasedStore for S {
    fn create_thread<'a>(
        &'a self,
        tenant: &'a str,
        new: NewThread,
    ) -> BoxFuture<'a, Result<ThreadInfo, StoreError>> {
        Box::pin(ThreadStore::create_thread(self, tenant, new))
    }
    fn thread<'a>(
        &'a self,
        tenant: &'a str,
        thread_id: &'a str,
    ) -> BoxFuture<'a, Result<ThreadInfo, StoreError>> {
        Box::pin(ThreadStore::thread(self, tenant, thread_id))
    }
    fn list_threads<'a>(
        &'a self,
        tenant: &'a str,
    ) -> BoxFuture<'a, Result<Vec<ThreadInfo>, StoreError>> {
        Box::pin(ThreadStore::list_threads(self, tenant))
    }
    fn delete_thread<'a>(
        &'a self,
        tenant: &'a str,
        thread_id: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(ThreadStore::delete_thread(self, tenant, thread_id))
    }
    fn messages<'a>(
        &'a self,
        tenant: &'a str,
        thread_id: &'a str,
        limit: Option<u64>,
    ) -> BoxFuture<'a, Result<Vec<ThreadMessage>, StoreError>> {
        Box::pin(ThreadStore::messages(self, tenant, thread_id, limit))
    }
    fn begin_run<'a>(
        &'a self,
        run: NewRun,
        worker: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(RunRecord, Lease), StoreError>> {
        Box::pin(ThreadStore::begin_run(self, run, worker, ttl))
    }
    fn run<'a>(
        &'a self,
        tenant: &'a str,
        run_id: &'a str,
    ) -> BoxFuture<'a, Result<RunRecord, StoreError>> {
        Box::pin(ThreadStore::run(self, tenant, run_id))
    }
    fn resumable_runs(&self, limit: usize) -> BoxFuture<'_, Result<Vec<RunRecord>, StoreError>> {
        Box::pin(ThreadStore::resumable_runs(self, limit))
    }
    fn steps<'a>(
        &'a self,
        tenant: &'a str,
        run_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<JournalStep>, StoreError>> {
        Box::pin(ThreadStore::steps(self, tenant, run_id))
    }
    fn append<'a>(
        &'a self,
        lease: &'a Lease,
        entry: &'a StepEntry,
        messages: &'a [Message],
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        Box::pin(ThreadStore::append(self, lease, entry, messages))
    }
    fn renew<'a>(&'a self, lease: &'a Lease) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(ThreadStore::renew(self, lease))
    }
    fn finish_run<'a>(
        &'a self,
        lease: &'a Lease,
        end: &'a RunEnd,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(ThreadStore::finish_run(self, lease, end))
    }
    fn release<'a>(&'a self, lease: &'a Lease) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(ThreadStore::release(self, lease))
    }
}

/// Any [`ThreadStore`] behind one cheap-to-clone handle (what an app holds). It is itself a
/// `ThreadStore`.
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
    pub fn new(store: impl ThreadStore) -> Self {
        Self(Arc::new(store))
    }
}

impl ThreadStore for SharedStore {
    async fn create_thread(&self, tenant: &str, new: NewThread) -> Result<ThreadInfo, StoreError> {
        self.0.create_thread(tenant, new).await
    }
    async fn thread(&self, tenant: &str, thread_id: &str) -> Result<ThreadInfo, StoreError> {
        self.0.thread(tenant, thread_id).await
    }
    async fn list_threads(&self, tenant: &str) -> Result<Vec<ThreadInfo>, StoreError> {
        self.0.list_threads(tenant).await
    }
    async fn delete_thread(&self, tenant: &str, thread_id: &str) -> Result<(), StoreError> {
        self.0.delete_thread(tenant, thread_id).await
    }
    async fn messages(
        &self,
        tenant: &str,
        thread_id: &str,
        limit: Option<u64>,
    ) -> Result<Vec<ThreadMessage>, StoreError> {
        self.0.messages(tenant, thread_id, limit).await
    }
    async fn begin_run(
        &self,
        run: NewRun,
        worker: &str,
        ttl: Duration,
    ) -> Result<(RunRecord, Lease), StoreError> {
        self.0.begin_run(run, worker, ttl).await
    }
    async fn run(&self, tenant: &str, run_id: &str) -> Result<RunRecord, StoreError> {
        self.0.run(tenant, run_id).await
    }
    async fn resumable_runs(&self, limit: usize) -> Result<Vec<RunRecord>, StoreError> {
        self.0.resumable_runs(limit).await
    }
    async fn steps(&self, tenant: &str, run_id: &str) -> Result<Vec<JournalStep>, StoreError> {
        self.0.steps(tenant, run_id).await
    }
    async fn append(
        &self,
        lease: &Lease,
        entry: &StepEntry,
        messages: &[Message],
    ) -> Result<u64, StoreError> {
        self.0.append(lease, entry, messages).await
    }
    async fn renew(&self, lease: &Lease) -> Result<(), StoreError> {
        self.0.renew(lease).await
    }
    async fn finish_run(&self, lease: &Lease, end: &RunEnd) -> Result<(), StoreError> {
        self.0.finish_run(lease, end).await
    }
    async fn release(&self, lease: &Lease) -> Result<(), StoreError> {
        self.0.release(lease).await
    }
}
