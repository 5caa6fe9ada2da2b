//! [`Threads`]: one tenant's conversation threads in the app's store.
use crate::store::{
    NewThread, SharedStore, StoreError, ThreadInfo, ThreadList, ThreadMessage, ThreadStore,
};

/// One tenant's threads ([`App::threads`](crate::App::threads)). Another tenant's thread reads
/// as not found ([`StoreError::ThreadNotFound`]); without a store every call fails with
/// [`StoreError::NotConfigured`].
///
/// ```
/// use agboss_core::App;
/// use agboss_core::store::{MemoryStore, NewThread};
/// # futures::executor::block_on(async {
/// let app = App::builder().store(MemoryStore::new()).build().unwrap();
/// let thread = app.threads("acme").create(NewThread::new().title("Refund")).await.unwrap();
/// let list = app.threads("acme").list().await.unwrap();
/// assert_eq!(list.threads.len(), 1);
/// assert!(list.unreadable.is_empty());
/// assert!(app.threads("globex").get(&thread.id).await.is_err());
/// app.threads("acme").delete(&thread.id).await.unwrap();
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct Threads<'a> {
    store: Option<&'a SharedStore>,
    tenant: String,
}

impl<'a> Threads<'a> {
    pub(super) fn new(store: Option<&'a SharedStore>, tenant: String) -> Self {
        Self { store, tenant }
    }

    fn store(&self) -> Result<&'a SharedStore, StoreError> {
        self.store.ok_or(StoreError::NotConfigured)
    }

    /// The tenant these threads belong to.
    pub fn tenant(&self) -> &str {
        &self.tenant
    }
    /// Creates a thread.
    pub async fn create(&self, new: NewThread) -> Result<ThreadInfo, StoreError> {
        self.store()?.create_thread(&self.tenant, new).await
    }
    /// One thread.
    pub async fn get(&self, thread_id: &str) -> Result<ThreadInfo, StoreError> {
        self.store()?.thread(&self.tenant, thread_id).await
    }
    /// The tenant's threads, oldest first: [`ThreadList::threads`] the readable ones,
    /// [`ThreadList::unreadable`] the id of each thread whose stored row is damaged, with why
    /// ([`StoreError::Corrupt`], [`StoreError::UnknownFormat`]). One damaged row hides no other
    /// thread; the whole call fails only when the store cannot list at all.
    pub async fn list(&self) -> Result<ThreadList, StoreError> {
        self.store()?.list_threads(&self.tenant).await
    }
    /// A thread's messages in order.
    pub async fn messages(&self, thread_id: &str) -> Result<Vec<ThreadMessage>, StoreError> {
        self.store()?.messages(&self.tenant, thread_id, None).await
    }
    /// Deletes a thread with its messages and runs (refused while one of its runs has not
    /// finished).
    pub async fn delete(&self, thread_id: &str) -> Result<(), StoreError> {
        self.store()?.delete_thread(&self.tenant, thread_id).await
    }
}
