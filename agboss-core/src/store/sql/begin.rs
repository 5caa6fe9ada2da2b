//! `begin_run` of [`SqlStore`]: a new run, or a lease taken over, race-free between workers of
//! any number of processes. It locks an existing run's row (to take the lease over), or, for a
//! new run, the thread's row only (the run's row does not exist yet).
use std::time::Duration;

use super::db::{Bind, backend, ttl_ms};
use super::dialect::Dialect;
use super::queries::{RUN_EXISTS, RUNNING_RUN_OF_THREAD, TAKE_OVER, THREAD_EXISTS};
use super::rows::run_record;
use super::store::SqlStore;
use crate::model::Message;
use crate::store::checks::thread_not_found;
use crate::store::error::StoreError;
use crate::store::types::{NewRun, RunRecord, RunStatus};

/// One attempt at `begin_run`: `None` when the run appeared or vanished under it (another
/// worker created or deleted it meanwhile), to start over.
pub(super) async fn try_begin_run<D: Dialect>(
    store: &SqlStore<D>,
    new: &NewRun,
    worker: &str,
    ttl: Duration,
) -> Result<Option<RunRecord>, StoreError> {
    const OP: &str = "begin run";
    let mut w = store.write(OP).await?;
    let queries = D::queries();
    // The run's row, locked: of two workers taking over a run, the second waits here and
    // then sees the first one's lease.
    let lock = sqlx::query(queries.lock_run.as_str())
        .text(&new.tenant)
        .text(&new.run_id);
    if let Some(row) = w.optional(OP, lock).await? {
        if let Some(thread_id) = &new.thread_id {
            let q = sqlx::query(THREAD_EXISTS).text(&new.tenant).text(thread_id);
            w.optional(OP, q)
                .await?
                .ok_or_else(|| thread_not_found(thread_id))?;
        }
        let now = D::get_int(&row, 13).map_err(backend(OP))?;
        let run = run_record::<D>(&row, OP)?;
        if run.status != RunStatus::Running {
            return Err(StoreError::RunFinished {
                run_id: new.run_id.clone(),
            });
        }
        if let (Some(holder), Some(expires_at_ms)) = (&run.lease_worker, run.lease_expires_at_ms)
            && holder != worker
            && expires_at_ms > now
        {
            return Err(StoreError::LeaseHeld {
                run_id: new.run_id.clone(),
                expires_at_ms,
            });
        }
        let take = sqlx::query(TAKE_OVER)
            .text(&new.tenant)
            .text(&new.run_id)
            .text(worker)
            .int(now.saturating_add(ttl_ms(ttl)));
        let row = w
            .optional(OP, take)
            .await?
            .ok_or_else(|| StoreError::backend(OP, format!("run `{}` vanished", new.run_id)))?;
        let run = run_record::<D>(&row, OP)?;
        w.commit(OP).await?;
        return Ok(Some(run));
    }
    let mut history_len: i64 = 0;
    if let Some(thread_id) = &new.thread_id {
        // The thread's row, locked: one new run of a thread at a time.
        let lock = sqlx::query(queries.lock_thread_history.as_str())
            .text(&new.tenant)
            .text(thread_id);
        let row = w
            .optional(OP, lock)
            .await?
            .ok_or_else(|| thread_not_found(thread_id))?;
        history_len = D::get_int(&row, 0).map_err(backend(OP))?;
        // Created by another worker while this one waited for the thread: start over.
        let exists = sqlx::query(RUN_EXISTS).text(&new.tenant).text(&new.run_id);
        if w.optional(OP, exists).await?.is_some() {
            return Ok(None);
        }
        let running = sqlx::query(RUNNING_RUN_OF_THREAD)
            .text(&new.tenant)
            .text(thread_id);
        if let Some(row) = w.optional(OP, running).await? {
            return Err(StoreError::ThreadBusy {
                thread_id: thread_id.clone(),
                run_id: D::get_text(&row, 0).map_err(backend(OP))?,
            });
        }
    }
    let insert = sqlx::query(queries.insert_run.as_str())
        .text(&new.tenant)
        .text(&new.run_id)
        .opt_text(new.thread_id.as_deref())
        .text(&new.target)
        .text(&new.input)
        .int(history_len)
        .text(worker)
        .int(ttl_ms(ttl));
    let Some(row) = w.optional(OP, insert).await? else {
        // Created by another worker meanwhile: start over.
        return Ok(None);
    };
    let run = run_record::<D>(&row, OP)?;
    if let Some(thread_id) = &new.thread_id {
        let input = [Message::user(new.input.clone())];
        let to = (new.tenant.as_str(), thread_id.as_str(), new.run_id.as_str());
        w.append_messages(OP, to, &input).await?;
    }
    w.commit(OP).await?;
    Ok(Some(run))
}
