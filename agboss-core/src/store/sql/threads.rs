//! [`ThreadStore`] on [`SqlStore`].
//!
//! `delete_thread` locks the thread's row and touches only finished runs, which no leased write
//! waits for (the lock order of every write is run before thread before ticket).
use super::db::{Bind, backend, sql_limit};
use super::dialect::Dialect;
use super::queries::{
    DELETE_THREAD, LIST_THREADS, MESSAGES, RUNNING_RUN_OF_THREAD, SELECT_THREAD, THREAD_EXISTS,
};
use super::rows::{thread_info, thread_message};
use super::store::SqlStore;
use crate::store::checks::thread_not_found;
use crate::store::error::StoreError;
use crate::store::traits::ThreadStore;
use crate::store::types::{NewThread, ThreadInfo, ThreadList, ThreadMessage, random_id};

impl<D: Dialect> ThreadStore for SqlStore<D> {
    async fn create_thread(&self, tenant: &str, new: NewThread) -> Result<ThreadInfo, StoreError> {
        const OP: &str = "create thread";
        let id = new.id.unwrap_or_else(|| random_id("thread"));
        let q = sqlx::query(D::queries().create_thread.as_str())
            .text(tenant)
            .text(&id)
            .opt_text(new.title.as_deref());
        let row = self
            .write_one(OP, q)
            .await?
            .ok_or(StoreError::ThreadExists { thread_id: id })?;
        thread_info::<D>(&row, OP)
    }

    async fn thread(&self, tenant: &str, thread_id: &str) -> Result<ThreadInfo, StoreError> {
        const OP: &str = "read thread";
        let q = sqlx::query(SELECT_THREAD).text(tenant).text(thread_id);
        let row = self
            .optional(OP, q)
            .await?
            .ok_or_else(|| thread_not_found(thread_id))?;
        thread_info::<D>(&row, OP)
    }

    async fn list_threads(&self, tenant: &str) -> Result<ThreadList, StoreError> {
        const OP: &str = "list threads";
        let rows = self.all(OP, sqlx::query(LIST_THREADS).text(tenant)).await?;
        let mut list = ThreadList::default();
        for row in &rows {
            match thread_info::<D>(row, OP) {
                Ok(thread) => list.threads.push(thread),
                Err(e) if e.is_permanent() => {
                    let id = D::get_text(row, 1).map_err(backend(OP))?;
                    list.unreadable.push((id, e));
                }
                Err(e) => return Err(e),
            }
        }
        Ok(list)
    }

    async fn delete_thread(&self, tenant: &str, thread_id: &str) -> Result<(), StoreError> {
        const OP: &str = "delete thread";
        let mut w = self.write(OP).await?;
        let lock = sqlx::query(D::queries().lock_thread.as_str())
            .text(tenant)
            .text(thread_id);
        w.optional(OP, lock)
            .await?
            .ok_or_else(|| thread_not_found(thread_id))?;
        let running = sqlx::query(RUNNING_RUN_OF_THREAD)
            .text(tenant)
            .text(thread_id);
        if let Some(row) = w.optional(OP, running).await? {
            return Err(StoreError::ThreadBusy {
                thread_id: thread_id.to_string(),
                run_id: D::get_text(&row, 0).map_err(backend(OP))?,
            });
        }
        for sql in DELETE_THREAD {
            w.execute(OP, sqlx::query(sql).text(tenant).text(thread_id))
                .await?;
        }
        w.commit(OP).await
    }

    async fn messages(
        &self,
        tenant: &str,
        thread_id: &str,
        limit: Option<u64>,
    ) -> Result<Vec<ThreadMessage>, StoreError> {
        const OP: &str = "read messages";
        let exists = sqlx::query(THREAD_EXISTS).text(tenant).text(thread_id);
        self.exists(OP, exists, || thread_not_found(thread_id))
            .await?;
        let q = sqlx::query(MESSAGES)
            .text(tenant)
            .text(thread_id)
            .int(sql_limit(limit));
        let rows = self.all(OP, q).await?;
        rows.iter()
            .map(|row| thread_message::<D>(row, OP))
            .collect()
    }
}
