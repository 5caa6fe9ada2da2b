//! The [`ThreadStore`] operations of [`SqliteStore`]. Writes run in one `BEGIN IMMEDIATE`
//! transaction each: what they check (the lease, a busy thread) cannot change before they write.
use std::time::Duration;

use sqlx::Row;

use super::{SqliteStore, run_row, thread_row};
use crate::model::Message;
use crate::store::sql::{
    backend, journal_step, lease_lost, lease_of, run_columns, run_not_found, sql_limit, sql_u64,
    step_seq, thread_columns, thread_message, thread_not_found, ttl_ms,
};
use crate::store::types::{encode_message, now_ms, random_id};
use crate::store::{
    FORMAT_VERSION, JournalStep, Lease, NewRun, NewThread, RunEnd, RunRecord, RunStatus, StepEntry,
    StoreError, ThreadInfo, ThreadMessage, ThreadStore, Ticket, TicketDecision, TicketState,
};

const SELECT_RUN: &str = concat!(
    "SELECT ",
    run_columns!(),
    " FROM runs WHERE tenant = $1 AND run_id = $2"
);
const SELECT_THREAD: &str = concat!(
    "SELECT ",
    thread_columns!(),
    " FROM threads WHERE tenant = $1 AND id = $2"
);
/// The oldest unfinished run of a thread.
const RUNNING_RUN_OF_THREAD: &str = "SELECT run_id FROM runs \
     WHERE tenant = $1 AND thread_id = $2 AND status = 'running' ORDER BY ord LIMIT 1";

impl SqliteStore {
    async fn thread_exists(&self, tenant: &str, thread_id: &str) -> Result<(), StoreError> {
        sqlx::query("SELECT 1 FROM threads WHERE tenant = $1 AND id = $2")
            .bind(tenant)
            .bind(thread_id)
            .fetch_optional(&self.pool)
            .await
            .map_err(backend("read thread"))?
            .map(|_| ())
            .ok_or_else(|| thread_not_found(thread_id))
    }

    async fn run_exists(&self, tenant: &str, run_id: &str) -> Result<(), StoreError> {
        sqlx::query("SELECT 1 FROM runs WHERE tenant = $1 AND run_id = $2")
            .bind(tenant)
            .bind(run_id)
            .fetch_optional(&self.pool)
            .await
            .map_err(backend("read run"))?
            .map(|_| ())
            .ok_or_else(|| run_not_found(run_id))
    }

    /// A fenced `UPDATE runs SET {set}` of `lease`'s run: [`StoreError::LeaseLost`] (and nothing
    /// written) when the lease is no longer the run's.
    async fn fenced_update(
        &self,
        op: &'static str,
        sql: &'static str,
        lease: &Lease,
        bind5: Option<i64>,
    ) -> Result<(), StoreError> {
        let mut w = self.write(op).await?;
        let mut q = sqlx::query(sql)
            .bind(&lease.tenant)
            .bind(&lease.run_id)
            .bind(lease.token)
            .bind(&lease.worker);
        if let Some(v) = bind5 {
            q = q.bind(v);
        }
        let done = q.execute(&mut *w.tx).await.map_err(backend(op))?;
        if done.rows_affected() == 0 {
            return Err(lease_lost(lease));
        }
        w.tx.commit().await.map_err(backend(op))
    }
}

impl ThreadStore for SqliteStore {
    async fn create_thread(&self, tenant: &str, new: NewThread) -> Result<ThreadInfo, StoreError> {
        const OP: &str = "create thread";
        let id = new.id.unwrap_or_else(|| random_id("thread"));
        let created_at_ms = now_ms();
        let mut w = self.write(OP).await?;
        let done = sqlx::query(
            "INSERT INTO threads (tenant, id, ord, title, created_at_ms, message_count) \
             VALUES ($1, $2, (SELECT COALESCE(MAX(ord), 0) + 1 FROM threads), $3, $4, 0) \
             ON CONFLICT (tenant, id) DO NOTHING",
        )
        .bind(tenant)
        .bind(&id)
        .bind(&new.title)
        .bind(created_at_ms)
        .execute(&mut *w.tx)
        .await
        .map_err(backend(OP))?;
        if done.rows_affected() == 0 {
            return Err(StoreError::ThreadExists { thread_id: id });
        }
        w.tx.commit().await.map_err(backend(OP))?;
        Ok(ThreadInfo {
            id,
            tenant: tenant.to_string(),
            title: new.title,
            message_count: 0,
            created_at_ms,
        })
    }

    async fn thread(&self, tenant: &str, thread_id: &str) -> Result<ThreadInfo, StoreError> {
        const OP: &str = "read thread";
        let row = sqlx::query(SELECT_THREAD)
            .bind(tenant)
            .bind(thread_id)
            .fetch_optional(&self.pool)
            .await
            .map_err(backend(OP))?
            .ok_or_else(|| thread_not_found(thread_id))?;
        thread_row(&row).map_err(backend(OP))?.into_info()
    }

    async fn list_threads(&self, tenant: &str) -> Result<Vec<ThreadInfo>, StoreError> {
        const OP: &str = "list threads";
        let rows = sqlx::query(concat!(
            "SELECT ",
            thread_columns!(),
            " FROM threads WHERE tenant = $1 ORDER BY ord"
        ))
        .bind(tenant)
        .fetch_all(&self.pool)
        .await
        .map_err(backend(OP))?;
        rows.iter()
            .map(|row| thread_row(row).map_err(backend(OP))?.into_info())
            .collect()
    }

    async fn delete_thread(&self, tenant: &str, thread_id: &str) -> Result<(), StoreError> {
        const OP: &str = "delete thread";
        let mut w = self.write(OP).await?;
        sqlx::query("SELECT 1 FROM threads WHERE tenant = $1 AND id = $2")
            .bind(tenant)
            .bind(thread_id)
            .fetch_optional(&mut *w.tx)
            .await
            .map_err(backend(OP))?
            .ok_or_else(|| thread_not_found(thread_id))?;
        if let Some(row) = sqlx::query(RUNNING_RUN_OF_THREAD)
            .bind(tenant)
            .bind(thread_id)
            .fetch_optional(&mut *w.tx)
            .await
            .map_err(backend(OP))?
        {
            return Err(StoreError::ThreadBusy {
                thread_id: thread_id.to_string(),
                run_id: row.try_get(0).map_err(backend(OP))?,
            });
        }
        for sql in [
            "DELETE FROM tickets WHERE tenant = $1 AND run_id IN \
             (SELECT run_id FROM runs WHERE tenant = $1 AND thread_id = $2)",
            "DELETE FROM steps WHERE tenant = $1 AND run_id IN \
             (SELECT run_id FROM runs WHERE tenant = $1 AND thread_id = $2)",
            "DELETE FROM runs WHERE tenant = $1 AND thread_id = $2",
            "DELETE FROM messages WHERE tenant = $1 AND thread_id = $2",
            "DELETE FROM threads WHERE tenant = $1 AND id = $2",
        ] {
            sqlx::query(sql)
                .bind(tenant)
                .bind(thread_id)
                .execute(&mut *w.tx)
                .await
                .map_err(backend(OP))?;
        }
        w.tx.commit().await.map_err(backend(OP))
    }

    async fn messages(
        &self,
        tenant: &str,
        thread_id: &str,
        limit: Option<u64>,
    ) -> Result<Vec<ThreadMessage>, StoreError> {
        const OP: &str = "read messages";
        self.thread_exists(tenant, thread_id).await?;
        let rows = sqlx::query(
            "SELECT seq, run_id, format, body FROM messages \
             WHERE tenant = $1 AND thread_id = $2 ORDER BY seq LIMIT $3",
        )
        .bind(tenant)
        .bind(thread_id)
        .bind(sql_limit(limit))
        .fetch_all(&self.pool)
        .await
        .map_err(backend(OP))?;
        rows.iter()
            .map(|row| {
                let body: String = row.try_get(3).map_err(backend(OP))?;
                thread_message(
                    row.try_get(0).map_err(backend(OP))?,
                    row.try_get(1).map_err(backend(OP))?,
                    row.try_get(2).map_err(backend(OP))?,
                    &body,
                )
            })
            .collect()
    }

    async fn begin_run(
        &self,
        new: NewRun,
        worker: &str,
        ttl: Duration,
    ) -> Result<(RunRecord, Lease), StoreError> {
        const OP: &str = "begin run";
        let now = now_ms();
        let expires = now.saturating_add(ttl_ms(ttl));
        let mut w = self.write(OP).await?;
        let mut history_len = None;
        if let Some(thread_id) = &new.thread_id {
            let row =
                sqlx::query("SELECT message_count FROM threads WHERE tenant = $1 AND id = $2")
                    .bind(&new.tenant)
                    .bind(thread_id)
                    .fetch_optional(&mut *w.tx)
                    .await
                    .map_err(backend(OP))?
                    .ok_or_else(|| thread_not_found(thread_id))?;
            history_len = Some(row.try_get::<i64, _>(0).map_err(backend(OP))?);
        }
        let existing = sqlx::query(SELECT_RUN)
            .bind(&new.tenant)
            .bind(&new.run_id)
            .fetch_optional(&mut *w.tx)
            .await
            .map_err(backend(OP))?;
        if let Some(row) = existing {
            let run = run_row(&row).map_err(backend(OP))?.into_record()?;
            if run.status != RunStatus::Running {
                return Err(StoreError::RunFinished { run_id: new.run_id });
            }
            if let (Some(holder), Some(expires_at_ms)) =
                (&run.lease_worker, run.lease_expires_at_ms)
                && holder != worker
                && expires_at_ms > now
            {
                return Err(StoreError::LeaseHeld {
                    run_id: new.run_id,
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
            .bind(expires)
            .fetch_one(&mut *w.tx)
            .await
            .map_err(backend(OP))?;
            let run = run_row(&row).map_err(backend(OP))?.into_record()?;
            w.tx.commit().await.map_err(backend(OP))?;
            let lease = lease_of(&run, ttl);
            return Ok((run, lease));
        }
        if let Some(thread_id) = &new.thread_id
            && let Some(row) = sqlx::query(RUNNING_RUN_OF_THREAD)
                .bind(&new.tenant)
                .bind(thread_id)
                .fetch_optional(&mut *w.tx)
                .await
                .map_err(backend(OP))?
        {
            return Err(StoreError::ThreadBusy {
                thread_id: thread_id.clone(),
                run_id: row.try_get(0).map_err(backend(OP))?,
            });
        }
        let row = sqlx::query(concat!(
            "INSERT INTO runs (tenant, run_id, ord, thread_id, target, input, status, history_len, \
             steps, lease_worker, lease_expires_at_ms, lease_token, created_at_ms) \
             VALUES ($1, $2, (SELECT COALESCE(MAX(ord), 0) + 1 FROM runs), $3, $4, $5, 'running', \
             $6, 0, $7, $8, 1, $9) RETURNING ",
            run_columns!()
        ))
        .bind(&new.tenant)
        .bind(&new.run_id)
        .bind(&new.thread_id)
        .bind(&new.target)
        .bind(&new.input)
        .bind(history_len.unwrap_or(0))
        .bind(worker)
        .bind(expires)
        .bind(now)
        .fetch_one(&mut *w.tx)
        .await
        .map_err(backend(OP))?;
        let run = run_row(&row).map_err(backend(OP))?.into_record()?;
        if let Some(thread_id) = &new.thread_id {
            let input = [Message::user(new.input.clone())];
            append_messages(&mut w.tx, &new.tenant, thread_id, &new.run_id, &input)
                .await
                .map_err(backend(OP))?;
        }
        w.tx.commit().await.map_err(backend(OP))?;
        let lease = lease_of(&run, ttl);
        Ok((run, lease))
    }

    async fn run(&self, tenant: &str, run_id: &str) -> Result<RunRecord, StoreError> {
        const OP: &str = "read run";
        let row = sqlx::query(SELECT_RUN)
            .bind(tenant)
            .bind(run_id)
            .fetch_optional(&self.pool)
            .await
            .map_err(backend(OP))?
            .ok_or_else(|| run_not_found(run_id))?;
        run_row(&row).map_err(backend(OP))?.into_record()
    }

    async fn resumable_runs(&self, limit: usize) -> Result<Vec<RunRecord>, StoreError> {
        const OP: &str = "list resumable runs";
        let rows = sqlx::query(concat!(
            "SELECT ",
            run_columns!(),
            " FROM runs WHERE status = 'running' \
             AND (lease_expires_at_ms IS NULL OR lease_expires_at_ms <= $1) ORDER BY ord LIMIT $2"
        ))
        .bind(now_ms())
        .bind(sql_u64(limit as u64))
        .fetch_all(&self.pool)
        .await
        .map_err(backend(OP))?;
        rows.iter()
            .map(|row| run_row(row).map_err(backend(OP))?.into_record())
            .collect()
    }

    async fn steps(&self, tenant: &str, run_id: &str) -> Result<Vec<JournalStep>, StoreError> {
        const OP: &str = "read steps";
        self.run_exists(tenant, run_id).await?;
        let rows = sqlx::query(
            "SELECT seq, format, body FROM steps WHERE tenant = $1 AND run_id = $2 ORDER BY seq",
        )
        .bind(tenant)
        .bind(run_id)
        .fetch_all(&self.pool)
        .await
        .map_err(backend(OP))?;
        rows.iter()
            .map(|row| {
                let body: String = row.try_get(2).map_err(backend(OP))?;
                journal_step(
                    row.try_get(0).map_err(backend(OP))?,
                    row.try_get(1).map_err(backend(OP))?,
                    &body,
                )
            })
            .collect()
    }

    async fn append(
        &self,
        lease: &Lease,
        entry: &StepEntry,
        messages: &[Message],
    ) -> Result<u64, StoreError> {
        const OP: &str = "append step";
        let expires = now_ms().saturating_add(lease.ttl_ms());
        let mut w = self.write(OP).await?;
        let row = sqlx::query(concat!(
            "UPDATE runs SET steps = steps + 1, lease_expires_at_ms = $5",
            fenced!(),
            " RETURNING steps - 1, thread_id"
        ))
        .bind(&lease.tenant)
        .bind(&lease.run_id)
        .bind(lease.token)
        .bind(&lease.worker)
        .bind(expires)
        .fetch_optional(&mut *w.tx)
        .await
        .map_err(backend(OP))?
        .ok_or_else(|| lease_lost(lease))?;
        let seq: i64 = row.try_get(0).map_err(backend(OP))?;
        let thread_id: Option<String> = row.try_get(1).map_err(backend(OP))?;
        sqlx::query(
            "INSERT INTO steps (tenant, run_id, seq, kind, key, format, body) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(&lease.tenant)
        .bind(&lease.run_id)
        .bind(seq)
        .bind(entry.kind())
        .bind(entry.key())
        .bind(FORMAT_VERSION)
        .bind(entry.encode())
        .execute(&mut *w.tx)
        .await
        .map_err(backend(OP))?;
        if let Some(thread_id) = thread_id {
            append_messages(
                &mut w.tx,
                &lease.tenant,
                &thread_id,
                &lease.run_id,
                messages,
            )
            .await
            .map_err(backend(OP))?;
        }
        w.tx.commit().await.map_err(backend(OP))?;
        step_seq(seq)
    }

    async fn renew(&self, lease: &Lease) -> Result<(), StoreError> {
        let expires = now_ms().saturating_add(lease.ttl_ms());
        self.fenced_update(
            "renew lease",
            concat!("UPDATE runs SET lease_expires_at_ms = $5", fenced!()),
            lease,
            Some(expires),
        )
        .await
    }

    async fn finish_run(&self, lease: &Lease, end: &RunEnd) -> Result<(), StoreError> {
        const OP: &str = "finish run";
        let (status, output, error) = match end {
            RunEnd::Completed { output } => (RunStatus::Completed, Some(output), None),
            RunEnd::Failed { error } => (RunStatus::Failed, None, Some(error)),
        };
        let mut w = self.write(OP).await?;
        let done = sqlx::query(concat!(
            "UPDATE runs SET status = $5, output = $6, error = $7, lease_worker = NULL, \
             lease_expires_at_ms = NULL",
            fenced!()
        ))
        .bind(&lease.tenant)
        .bind(&lease.run_id)
        .bind(lease.token)
        .bind(&lease.worker)
        .bind(status.as_str())
        .bind(output)
        .bind(error)
        .execute(&mut *w.tx)
        .await
        .map_err(backend(OP))?;
        if done.rows_affected() == 0 {
            return Err(lease_lost(lease));
        }
        w.tx.commit().await.map_err(backend(OP))
    }

    async fn release(&self, lease: &Lease) -> Result<(), StoreError> {
        self.fenced_update(
            "release lease",
            concat!(
                "UPDATE runs SET lease_worker = NULL, lease_expires_at_ms = NULL",
                fenced!()
            ),
            lease,
            None,
        )
        .await
    }

    async fn create_ticket(&self, lease: &Lease, ticket: &Ticket) -> Result<(), StoreError> {
        crate::store::ticket::checks::new_ticket(ticket)?;
        self.insert_ticket(lease, ticket).await
    }

    async fn ticket(&self, tenant: &str, ticket_id: &str) -> Result<Ticket, StoreError> {
        self.read_ticket(tenant, ticket_id).await
    }

    async fn run_tickets(&self, tenant: &str, run_id: &str) -> Result<Vec<Ticket>, StoreError> {
        self.list_run_tickets(tenant, run_id).await
    }

    async fn decide_ticket(
        &self,
        tenant: &str,
        ticket_id: &str,
        decision: &TicketDecision,
        now_ms: i64,
    ) -> Result<Ticket, StoreError> {
        self.cas_decide_ticket(tenant, ticket_id, decision, now_ms)
            .await
    }

    async fn advance_ticket(
        &self,
        lease: &Lease,
        ticket_id: &str,
        from: TicketState,
        to: TicketState,
    ) -> Result<Ticket, StoreError> {
        crate::store::ticket::checks::advance(ticket_id, from, to)?;
        self.cas_advance_ticket(lease, ticket_id, from, to).await
    }
}

/// Appends `messages` to a thread, at the positions after its last message.
async fn append_messages(
    tx: &mut sqlx::Transaction<'static, sqlx::Sqlite>,
    tenant: &str,
    thread_id: &str,
    run_id: &str,
    messages: &[Message],
) -> Result<(), sqlx::Error> {
    if messages.is_empty() {
        return Ok(());
    }
    let Some(row) = sqlx::query(
        "UPDATE threads SET message_count = message_count + $3 \
         WHERE tenant = $1 AND id = $2 RETURNING message_count - $3",
    )
    .bind(tenant)
    .bind(thread_id)
    .bind(sql_u64(messages.len() as u64))
    .fetch_optional(&mut **tx)
    .await?
    else {
        // A running run's thread cannot be deleted: nothing to append to.
        return Ok(());
    };
    let first: i64 = row.try_get(0)?;
    for (i, message) in messages.iter().enumerate() {
        sqlx::query(
            "INSERT INTO messages (tenant, thread_id, seq, run_id, format, body) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(tenant)
        .bind(thread_id)
        .bind(first.saturating_add(sql_u64(i as u64)))
        .bind(run_id)
        .bind(FORMAT_VERSION)
        .bind(encode_message(message))
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}
