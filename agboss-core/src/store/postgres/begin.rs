//! `begin_run` of [`PostgresStore`]: a new run, or a lease taken over, race-free between
//! workers of any number of processes.
use std::time::Duration;

use sqlx::Row;

use super::ops::{RUNNING_RUN_OF_THREAD, append_messages};
use super::{PostgresStore, run_row};
use crate::model::Message;
use crate::store::sql::{backend, run_columns, thread_not_found, ttl_ms};
use crate::store::{NewRun, RunRecord, RunStatus, StoreError};

impl PostgresStore {
    /// One attempt at `begin_run`: `None` when the run appeared or vanished under it (another
    /// worker created or deleted it meanwhile), to start over.
    pub(super) async fn try_begin_run(
        &self,
        new: &NewRun,
        worker: &str,
        ttl: Duration,
    ) -> Result<Option<RunRecord>, StoreError> {
        const OP: &str = "begin run";
        let mut tx = self.begin(OP).await?;
        // The run's row, locked: of two workers taking over a run, the second waits here and
        // then sees the first one's lease.
        let existing = sqlx::query(concat!(
            "SELECT ",
            run_columns!(),
            ", ",
            db_now!(),
            " FROM runs WHERE tenant = $1 AND run_id = $2 FOR UPDATE"
        ))
        .bind(&new.tenant)
        .bind(&new.run_id)
        .fetch_optional(&mut *tx)
        .await
        .map_err(backend(OP))?;
        if let Some(row) = existing {
            if let Some(thread_id) = &new.thread_id {
                sqlx::query("SELECT 1 FROM threads WHERE tenant = $1 AND id = $2")
                    .bind(&new.tenant)
                    .bind(thread_id)
                    .fetch_optional(&mut *tx)
                    .await
                    .map_err(backend(OP))?
                    .ok_or_else(|| thread_not_found(thread_id))?;
            }
            let now: i64 = row.try_get(13).map_err(backend(OP))?;
            let run = run_row(&row).map_err(backend(OP))?.into_record()?;
            if run.status != RunStatus::Running {
                return Err(StoreError::RunFinished {
                    run_id: new.run_id.clone(),
                });
            }
            if let (Some(holder), Some(expires_at_ms)) =
                (&run.lease_worker, run.lease_expires_at_ms)
                && holder != worker
                && expires_at_ms > now
            {
                return Err(StoreError::LeaseHeld {
                    run_id: new.run_id.clone(),
                    expires_at_ms,
                });
            }
            let row = sqlx::query(concat!(
                "UPDATE runs SET lease_token = lease_token + 1, lease_worker = $3, \
                 lease_expires_at_ms = $4 WHERE tenant = $1 AND run_id = $2 RETURNING ",
                run_columns!()
            ))
            .bind(&new.tenant)
            .bind(&new.run_id)
            .bind(worker)
            .bind(now.saturating_add(ttl_ms(ttl)))
            .fetch_one(&mut *tx)
            .await
            .map_err(backend(OP))?;
            let run = run_row(&row).map_err(backend(OP))?.into_record()?;
            tx.commit().await.map_err(backend(OP))?;
            return Ok(Some(run));
        }
        let mut history_len: i64 = 0;
        if let Some(thread_id) = &new.thread_id {
            // The thread's row, locked: one new run of a thread at a time.
            let row = sqlx::query(
                "SELECT message_count FROM threads WHERE tenant = $1 AND id = $2 FOR UPDATE",
            )
            .bind(&new.tenant)
            .bind(thread_id)
            .fetch_optional(&mut *tx)
            .await
            .map_err(backend(OP))?
            .ok_or_else(|| thread_not_found(thread_id))?;
            history_len = row.try_get(0).map_err(backend(OP))?;
            // Created by another worker while this one waited for the thread: start over.
            if sqlx::query("SELECT 1 FROM runs WHERE tenant = $1 AND run_id = $2")
                .bind(&new.tenant)
                .bind(&new.run_id)
                .fetch_optional(&mut *tx)
                .await
                .map_err(backend(OP))?
                .is_some()
            {
                return Ok(None);
            }
            if let Some(row) = sqlx::query(RUNNING_RUN_OF_THREAD)
                .bind(&new.tenant)
                .bind(thread_id)
                .fetch_optional(&mut *tx)
                .await
                .map_err(backend(OP))?
            {
                return Err(StoreError::ThreadBusy {
                    thread_id: thread_id.clone(),
                    run_id: row.try_get(0).map_err(backend(OP))?,
                });
            }
        }
        let Some(row) = sqlx::query(concat!(
            "INSERT INTO runs (tenant, run_id, thread_id, target, input, status, history_len, \
             steps, lease_worker, lease_expires_at_ms, lease_token, created_at_ms) \
             VALUES ($1, $2, $3, $4, $5, 'running', $6, 0, $7, ",
            expiry!("$8"),
            ", 1, ",
            db_now!(),
            ") ON CONFLICT (tenant, run_id) DO NOTHING RETURNING ",
            run_columns!()
        ))
        .bind(&new.tenant)
        .bind(&new.run_id)
        .bind(&new.thread_id)
        .bind(&new.target)
        .bind(&new.input)
        .bind(history_len)
        .bind(worker)
        .bind(ttl_ms(ttl))
        .fetch_optional(&mut *tx)
        .await
        .map_err(backend(OP))?
        else {
            // Created by another worker meanwhile: start over.
            return Ok(None);
        };
        let run = run_row(&row).map_err(backend(OP))?.into_record()?;
        if let Some(thread_id) = &new.thread_id {
            let input = [Message::user(new.input.clone())];
            append_messages(&mut tx, &new.tenant, thread_id, &new.run_id, &input)
                .await
                .map_err(backend(OP))?;
        }
        tx.commit().await.map_err(backend(OP))?;
        Ok(Some(run))
    }
}
