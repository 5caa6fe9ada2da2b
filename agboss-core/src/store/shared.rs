//! [`SharedStore`], any store behind one handle (the `dyn` boundary, where the boxed futures
//! live), and `Arc<S>` as a store.
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;

use super::{
    JournalStep, Lease, NewRun, NewThread, RunEnd, RunRecord, StepEntry, StoreError, ThreadInfo,
    ThreadMessage, ThreadStore, Ticket, TicketDecision, TicketState,
};
use crate::model::Message;

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
    fn create_ticket(
        &self,
        lease: &Lease,
        ticket: &Ticket,
    ) -> impl Future<Output = Result<(), StoreError>> + Send {
        S::create_ticket(self, lease, ticket)
    }
    fn ticket(
        &self,
        tenant: &str,
        ticket_id: &str,
    ) -> impl Future<Output = Result<Ticket, StoreError>> + Send {
        S::ticket(self, tenant, ticket_id)
    }
    fn run_tickets(
        &self,
        tenant: &str,
        run_id: &str,
    ) -> impl Future<Output = Result<Vec<Ticket>, StoreError>> + Send {
        S::run_tickets(self, tenant, run_id)
    }
    fn decide_ticket(
        &self,
        tenant: &str,
        ticket_id: &str,
        decision: &TicketDecision,
        now_ms: i64,
    ) -> impl Future<Output = Result<Ticket, StoreError>> + Send {
        S::decide_ticket(self, tenant, ticket_id, decision, now_ms)
    }
    fn advance_ticket(
        &self,
        lease: &Lease,
        ticket_id: &str,
        from: TicketState,
        to: TicketState,
    ) -> impl Future<Output = Result<Ticket, StoreError>> + Send {
        S::advance_ticket(self, lease, ticket_id, from, to)
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
    fn create_ticket<'a>(
        &'a self,
        lease: &'a Lease,
        ticket: &'a Ticket,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    fn ticket<'a>(
        &'a self,
        tenant: &'a str,
        ticket_id: &'a str,
    ) -> BoxFuture<'a, Result<Ticket, StoreError>>;
    fn run_tickets<'a>(
        &'a self,
        tenant: &'a str,
        run_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<Ticket>, StoreError>>;
    fn decide_ticket<'a>(
        &'a self,
        tenant: &'a str,
        ticket_id: &'a str,
        decision: &'a TicketDecision,
        now_ms: i64,
    ) -> BoxFuture<'a, Result<Ticket, StoreError>>;
    fn advance_ticket<'a>(
        &'a self,
        lease: &'a Lease,
        ticket_id: &'a str,
        from: TicketState,
        to: TicketState,
    ) -> BoxFuture<'a, Result<Ticket, StoreError>>;
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
    fn create_ticket<'a>(
        &'a self,
        lease: &'a Lease,
        ticket: &'a Ticket,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(ThreadStore::create_ticket(self, lease, ticket))
    }
    fn ticket<'a>(
        &'a self,
        tenant: &'a str,
        ticket_id: &'a str,
    ) -> BoxFuture<'a, Result<Ticket, StoreError>> {
        Box::pin(ThreadStore::ticket(self, tenant, ticket_id))
    }
    fn run_tickets<'a>(
        &'a self,
        tenant: &'a str,
        run_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<Ticket>, StoreError>> {
        Box::pin(ThreadStore::run_tickets(self, tenant, run_id))
    }
    fn decide_ticket<'a>(
        &'a self,
        tenant: &'a str,
        ticket_id: &'a str,
        decision: &'a TicketDecision,
        now_ms: i64,
    ) -> BoxFuture<'a, Result<Ticket, StoreError>> {
        Box::pin(ThreadStore::decide_ticket(
            self, tenant, ticket_id, decision, now_ms,
        ))
    }
    fn advance_ticket<'a>(
        &'a self,
        lease: &'a Lease,
        ticket_id: &'a str,
        from: TicketState,
        to: TicketState,
    ) -> BoxFuture<'a, Result<Ticket, StoreError>> {
        Box::pin(ThreadStore::advance_ticket(
            self, lease, ticket_id, from, to,
        ))
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
    async fn create_ticket(&self, lease: &Lease, ticket: &Ticket) -> Result<(), StoreError> {
        self.0.create_ticket(lease, ticket).await
    }
    async fn ticket(&self, tenant: &str, ticket_id: &str) -> Result<Ticket, StoreError> {
        self.0.ticket(tenant, ticket_id).await
    }
    async fn run_tickets(&self, tenant: &str, run_id: &str) -> Result<Vec<Ticket>, StoreError> {
        self.0.run_tickets(tenant, run_id).await
    }
    async fn decide_ticket(
        &self,
        tenant: &str,
        ticket_id: &str,
        decision: &TicketDecision,
        now_ms: i64,
    ) -> Result<Ticket, StoreError> {
        self.0
            .decide_ticket(tenant, ticket_id, decision, now_ms)
            .await
    }
    async fn advance_ticket(
        &self,
        lease: &Lease,
        ticket_id: &str,
        from: TicketState,
        to: TicketState,
    ) -> Result<Ticket, StoreError> {
        self.0.advance_ticket(lease, ticket_id, from, to).await
    }
}
