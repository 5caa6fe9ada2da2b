//! [`FlakyStore`]: a store that fails on demand, to test what a run does when its
//! store is unavailable at the start or fails in the middle.
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use agboss_core::model::Message;
use agboss_core::store::{
    JournalStep, Lease, NewRun, NewThread, RunEnd, RunRecord, RunStore, StepEntry, StoreError,
    ThreadInfo, ThreadList, ThreadMessage, ThreadStore, Ticket, TicketDecision, TicketPage,
    TicketQuery, TicketState, TicketStore, UsageKey, UsageStore,
};

/// Wraps a store; [`FlakyStore::fail_all`] makes every operation fail with a backend error,
/// [`FlakyStore::fail_usage`] the usage operations only, [`FlakyStore::fail_append_at`] makes the n-th journal append (from 1) and every later one
/// fail. A failed operation does nothing.
///
/// ```
/// use agboss_core::store::{MemoryStore, NewThread, StoreError, ThreadStore};
/// use agboss_testing::flaky::FlakyStore;
/// # futures::executor::block_on(async {
/// let store = FlakyStore::new(MemoryStore::new());
/// store.fail_all(true);
/// let err = store.create_thread("acme", NewThread::new()).await.unwrap_err();
/// assert!(matches!(err, StoreError::Backend { .. }));
/// store.fail_all(false);
/// assert!(store.create_thread("acme", NewThread::new()).await.is_ok());
/// # });
/// ```
#[derive(Debug)]
pub struct FlakyStore<S> {
    inner: S,
    down: AtomicBool,
    usage_down: AtomicBool,
    fail_append_at: AtomicUsize,
    appends: AtomicUsize,
}

impl<S> FlakyStore<S> {
    /// Wraps `inner`, failing nothing yet.
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            down: AtomicBool::new(false),
            usage_down: AtomicBool::new(false),
            fail_append_at: AtomicUsize::new(0),
            appends: AtomicUsize::new(0),
        }
    }
    /// Every operation fails (`true`) or none does (`false`; also clears `fail_append_at`).
    pub fn fail_all(&self, down: bool) {
        self.down.store(down, Ordering::SeqCst);
        if !down {
            self.fail_append_at.store(0, Ordering::SeqCst);
        }
    }
    /// The `n`-th append from now (1 = the next one) and every one after it fail, with every
    /// other write (renew, finish, release): the store went down mid-run.
    pub fn fail_append_at(&self, n: usize) {
        self.appends.store(0, Ordering::SeqCst);
        self.fail_append_at.store(n, Ordering::SeqCst);
    }
    /// The usage operations ([`UsageStore`]) fail (`true`) or not (`false`), every other one
    /// goes on: the tenant windows cannot be counted while runs can be journaled.
    pub fn fail_usage(&self, down: bool) {
        self.usage_down.store(down, Ordering::SeqCst);
    }
    /// Appends that went through since the last `fail_append_at`.
    pub fn appends(&self) -> usize {
        self.appends.load(Ordering::SeqCst)
    }
    /// The wrapped store.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    fn check(&self, operation: &'static str) -> Result<(), StoreError> {
        if self.down.load(Ordering::SeqCst) {
            return Err(StoreError::backend(
                operation,
                std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "store is down"),
            ));
        }
        Ok(())
    }

    fn check_usage(&self, operation: &'static str) -> Result<(), StoreError> {
        if self.usage_down.load(Ordering::SeqCst) {
            return Err(StoreError::backend(
                operation,
                std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "usage table is down"),
            ));
        }
        self.check(operation)
    }

    fn check_write(&self, operation: &'static str, counts: bool) -> Result<(), StoreError> {
        self.check(operation)?;
        let at = self.fail_append_at.load(Ordering::SeqCst);
        if at == 0 {
            return Ok(());
        }
        let done = self.appends.load(Ordering::SeqCst);
        if done + 1 >= at {
            self.down.store(true, Ordering::SeqCst);
            return self.check(operation);
        }
        if counts {
            self.appends.fetch_add(1, Ordering::SeqCst);
        }
        Ok(())
    }
}

impl<S: ThreadStore> ThreadStore for FlakyStore<S> {
    async fn create_thread(&self, tenant: &str, new: NewThread) -> Result<ThreadInfo, StoreError> {
        self.check("create_thread")?;
        self.inner.create_thread(tenant, new).await
    }
    async fn thread(&self, tenant: &str, thread_id: &str) -> Result<ThreadInfo, StoreError> {
        self.check("thread")?;
        self.inner.thread(tenant, thread_id).await
    }
    async fn list_threads(&self, tenant: &str) -> Result<ThreadList, StoreError> {
        self.check("list_threads")?;
        self.inner.list_threads(tenant).await
    }
    async fn delete_thread(&self, tenant: &str, thread_id: &str) -> Result<(), StoreError> {
        self.check("delete_thread")?;
        self.inner.delete_thread(tenant, thread_id).await
    }
    async fn messages(
        &self,
        tenant: &str,
        thread_id: &str,
        limit: Option<u64>,
    ) -> Result<Vec<ThreadMessage>, StoreError> {
        self.check("messages")?;
        self.inner.messages(tenant, thread_id, limit).await
    }
}

impl<S: RunStore> RunStore for FlakyStore<S> {
    async fn begin_run(
        &self,
        run: NewRun,
        worker: &str,
        ttl: Duration,
    ) -> Result<(RunRecord, Lease), StoreError> {
        self.check("begin_run")?;
        self.inner.begin_run(run, worker, ttl).await
    }
    async fn run(&self, tenant: &str, run_id: &str) -> Result<RunRecord, StoreError> {
        self.check("run")?;
        self.inner.run(tenant, run_id).await
    }
    async fn resumable_runs(&self, limit: usize) -> Result<Vec<RunRecord>, StoreError> {
        self.check("resumable_runs")?;
        self.inner.resumable_runs(limit).await
    }
    async fn steps(&self, tenant: &str, run_id: &str) -> Result<Vec<JournalStep>, StoreError> {
        self.check("steps")?;
        self.inner.steps(tenant, run_id).await
    }
    async fn append(
        &self,
        lease: &Lease,
        entry: &StepEntry,
        messages: &[Message],
    ) -> Result<u64, StoreError> {
        self.check_write("append", true)?;
        self.inner.append(lease, entry, messages).await
    }
    async fn renew(&self, lease: &Lease) -> Result<(), StoreError> {
        self.check("renew")?;
        self.inner.renew(lease).await
    }
    async fn finish_run(&self, lease: &Lease, end: &RunEnd) -> Result<(), StoreError> {
        self.check("finish_run")?;
        self.inner.finish_run(lease, end).await
    }
    async fn release(&self, lease: &Lease) -> Result<(), StoreError> {
        self.check("release")?;
        self.inner.release(lease).await
    }
}

impl<S: TicketStore> TicketStore for FlakyStore<S> {
    async fn create_ticket(&self, lease: &Lease, ticket: &Ticket) -> Result<(), StoreError> {
        self.check_write("create_ticket", false)?;
        self.inner.create_ticket(lease, ticket).await
    }
    async fn ticket(&self, tenant: &str, ticket_id: &str) -> Result<Ticket, StoreError> {
        self.check("ticket")?;
        self.inner.ticket(tenant, ticket_id).await
    }
    async fn run_tickets(&self, tenant: &str, run_id: &str) -> Result<Vec<Ticket>, StoreError> {
        self.check("run_tickets")?;
        self.inner.run_tickets(tenant, run_id).await
    }
    async fn list_tickets(
        &self,
        tenant: &str,
        query: &TicketQuery,
    ) -> Result<TicketPage, StoreError> {
        self.check("list_tickets")?;
        self.inner.list_tickets(tenant, query).await
    }
    async fn decide_ticket(
        &self,
        tenant: &str,
        ticket_id: &str,
        decision: &TicketDecision,
        now_ms: i64,
    ) -> Result<Ticket, StoreError> {
        self.check("decide_ticket")?;
        self.inner
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
        self.check_write("advance_ticket", false)?;
        self.inner.advance_ticket(lease, ticket_id, from, to).await
    }
}

impl<S: UsageStore> UsageStore for FlakyStore<S> {
    async fn reserve_usage(
        &self,
        key: &UsageKey,
        amount: u64,
        max: u64,
    ) -> Result<Option<u64>, StoreError> {
        self.check_usage("reserve_usage")?;
        self.inner.reserve_usage(key, amount, max).await
    }
    async fn add_usage(&self, key: &UsageKey, amount: u64) -> Result<u64, StoreError> {
        self.check_usage("add_usage")?;
        self.inner.add_usage(key, amount).await
    }
    async fn release_usage(&self, key: &UsageKey, amount: u64) -> Result<(), StoreError> {
        self.check_usage("release_usage")?;
        self.inner.release_usage(key, amount).await
    }
    async fn usage(&self, key: &UsageKey) -> Result<u64, StoreError> {
        self.check_usage("usage")?;
        self.inner.usage(key).await
    }
    async fn prune_usage(&self, before_ms: i64) -> Result<u64, StoreError> {
        self.check_usage("prune_usage")?;
        self.inner.prune_usage(before_ms).await
    }
}
