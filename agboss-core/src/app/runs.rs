//! [`Runs`]: one tenant's runs in the app's store, and [`RunFollow`], a subscription to one
//! run's journal as it grows, from any instance that shares the store.
use std::time::Duration;

use futures::Stream;

use crate::store::{
    JournalStep, RunRecord, RunStatus, RunStore as _, SharedStore, StoreError, Ticket,
    TicketStore as _,
};

/// One tenant's runs ([`App::runs`](crate::App::runs)). Another tenant's run reads as not
/// found ([`StoreError::RunNotFound`]); without a store every call fails with
/// [`StoreError::NotConfigured`].
///
/// ```
/// use agboss_core::{App, RunContext};
/// use agboss_core::store::MemoryStore;
/// # futures::executor::block_on(async {
/// let app = App::builder().store(MemoryStore::new()).build().unwrap();
/// assert!(app.runs("acme").get("run-1").await.is_err());
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct Runs<'a> {
    store: Option<&'a SharedStore>,
    tenant: String,
}

impl<'a> Runs<'a> {
    pub(super) fn new(store: Option<&'a SharedStore>, tenant: String) -> Self {
        Self { store, tenant }
    }

    fn store(&self) -> Result<&'a SharedStore, StoreError> {
        self.store.ok_or(StoreError::NotConfigured)
    }

    /// The tenant these runs belong to.
    pub fn tenant(&self) -> &str {
        &self.tenant
    }
    /// One run: its target, input, thread and status, with the answer or error once finished.
    pub async fn get(&self, run_id: &str) -> Result<RunRecord, StoreError> {
        self.store()?.run(&self.tenant, run_id).await
    }
    /// A run's journal, in order.
    pub async fn steps(&self, run_id: &str) -> Result<Vec<JournalStep>, StoreError> {
        self.store()?.steps(&self.tenant, run_id).await
    }
    /// The approval tickets a run raised.
    pub async fn tickets(&self, run_id: &str) -> Result<Vec<Ticket>, StoreError> {
        self.store()?.run_tickets(&self.tenant, run_id).await
    }
    /// Follows `run_id`: what is journaled already first, then each step as it is journaled
    /// (by this instance or any other on the same store), then the finished run. See
    /// [`RunFollow`].
    pub fn follow(&self, run_id: impl Into<String>) -> RunFollow {
        RunFollow {
            store: self.store.cloned(),
            tenant: self.tenant.clone(),
            run_id: run_id.into(),
            after: 0,
            poll: RunFollow::DEFAULT_POLL,
        }
    }
}

/// What following a run yields ([`RunFollow`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum RunUpdate {
    /// A journal step, in order.
    Step(JournalStep),
    /// The run finished ([`RunStatus::Completed`] or [`RunStatus::Failed`]): the last item.
    Ended(RunRecord),
}

/// A subscription to one run's journal ([`Runs::follow`]), read from the store: it works for a
/// run of any instance sharing the store, and for a run that finished long ago (its whole
/// journal, then [`RunUpdate::Ended`]). A run waiting for approval is still running: the
/// stream goes on until it is resumed and finishes, or until it is dropped.
///
/// The store is read again every [`RunFollow::poll_every`] (250 ms by default) while nothing
/// new is journaled; that interval is the latency. On the instance that runs it, a run's
/// in-process events are [`App::stream`](crate::App::stream)'s. A run of another tenant, or
/// none, yields one [`StoreError::RunNotFound`] and ends; so does any store error.
///
/// ```
/// use agboss_core::app::RunUpdate;
/// use agboss_core::store::MemoryStore;
/// use agboss_core::App;
/// use futures::StreamExt;
/// # futures::executor::block_on(async {
/// let app = App::builder().store(MemoryStore::new()).build().unwrap();
/// let mut updates = std::pin::pin!(app.runs("acme").follow("run-1").into_stream());
/// assert!(updates.next().await.unwrap().is_err()); // no such run
/// assert!(updates.next().await.is_none());
/// # });
/// ```
#[derive(Debug, Clone)]
#[must_use = "a RunFollow does nothing until it is turned into a stream and polled"]
pub struct RunFollow {
    store: Option<SharedStore>,
    tenant: String,
    run_id: String,
    after: usize,
    poll: Duration,
}

impl RunFollow {
    const DEFAULT_POLL: Duration = Duration::from_millis(250);

    /// Skips the first `n` journal steps (those a caller has shown already).
    pub fn after(mut self, n: usize) -> Self {
        self.after = n;
        self
    }
    /// How often the store is read again while nothing new is journaled.
    pub fn poll_every(mut self, interval: Duration) -> Self {
        self.poll = interval;
        self
    }
    /// The updates: each new step, then [`RunUpdate::Ended`]; an error is the last item.
    pub fn into_stream(self) -> impl Stream<Item = Result<RunUpdate, StoreError>> + Send + 'static {
        enum At {
            Reading(usize),
            Done,
        }
        let Self {
            store,
            tenant,
            run_id,
            after,
            poll,
        } = self;
        let batches = futures::stream::unfold(At::Reading(after), move |at| {
            let (store, tenant, run_id) = (store.clone(), tenant.clone(), run_id.clone());
            async move {
                let At::Reading(sent) = at else {
                    return None;
                };
                let Some(store) = store else {
                    return Some((vec![Err(StoreError::NotConfigured)], At::Done));
                };
                loop {
                    let read = futures::try_join!(
                        store.steps(&tenant, &run_id),
                        store.run(&tenant, &run_id)
                    );
                    let (steps, run) = match read {
                        Ok(read) => read,
                        Err(e) => return Some((vec![Err(e)], At::Done)),
                    };
                    let next = steps.len().max(sent);
                    let mut batch: Vec<_> = steps
                        .into_iter()
                        .skip(sent)
                        .map(|s| Ok(RunUpdate::Step(s)))
                        .collect();
                    if run.status != RunStatus::Running {
                        batch.push(Ok(RunUpdate::Ended(run)));
                        return Some((batch, At::Done));
                    }
                    if !batch.is_empty() {
                        return Some((batch, At::Reading(next)));
                    }
                    tokio::time::sleep(poll).await;
                }
            }
        });
        futures::StreamExt::flat_map(batches, futures::stream::iter)
    }
}
