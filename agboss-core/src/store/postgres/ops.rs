//! The [`ThreadStore`] operations of [`PostgresStore`].
//!
//! Locks are always taken in one order, run before thread: a leased write (`append`) locks its
//! run's row with the fenced update, then its thread's row to number the messages; `begin_run`
//! locks an existing run's row (to take the lease over), or, for a new run, the thread's row only
//! (the run's row does not exist yet); `delete_thread` locks the thread's row and touches only
//! finished runs, which no leased write waits for. The ticket writes (`tickets.rs`) lock run
//! before ticket, and `decide_ticket` the ticket's row only.
use std::time::Duration;

use sqlx::postgres::PgRow;
use sqlx::{Postgres, Row, Transaction};

use super::{PostgresStore, run_row, thread_row};
use crate::model::Message;
use crate::store::sql::{
    backend, journal_step, lease_lost, lease_of, run_columns, run_not_found, sql_limit, sql_u64,
    step_seq, thread_columns, thread_message, thread_not_found,
};
use crate::store::types::{encode_message, random_id};
use crate::store::{
    FORMAT_VERSION, JournalStep, Lease, NewRun, NewThread, RunEnd, RunRecord, RunStatus, StepEntry,
    StoreError, ThreadInfo, ThreadMessage, ThreadStore, Ticket, TicketDecision, TicketState,
};

const SELECT_THREAD: &str = concat!(
    "SELECT ",
    thread_columns!(),
    " FROM threads WHERE tenant = $1 AND id = $2"
);
/// The oldest unfinished run of a thread.
pub(super) const RUNNING_RUN_OF_THREAD: &str = "SELECT run_id FROM runs \
     WHERE tenant = $1 AND thread_id = $2 AND status = 'running' ORDER BY ord LIMIT 1";

/// How often `begin_run` starts over when another worker created or removed the run meanwhile.
const BEGIN_ATTEMPTS: usize = 5;

pub(super) type Tx = Transaction<'static, Postgres>;

impl PostgresStore {
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

    pub(super) async fn begin(&self, op: &'static str) -> Result<Tx, StoreError> {
        self.pool.begin().await.map_err(backend(op))
    }

    /// A fenced `UPDATE runs` of `lease`'s run (with `$5` bound to the lease's ttl when
    /// `with_ttl`): [`StoreError::LeaseLost`] (and nothing written) when the lease is no longer
    /// the run's.
    async fn fenced_update(
        &self,
        op: &'static str,
        sql: &'static str,
        lease: &Lease,
        with_ttl: bool,
    ) -> Result<(), StoreError> {
        let mut q = sqlx::query(sql)
            .bind(&lease.tenant)
            .bind(&lease.run_id)
            .bind(lease.token)
            .bind(&lease.worker);
        if with_ttl {
            q = q.bind(lease.ttl_ms());
        }
        let done = q.execute(&self.pool).await.map_err(backend(op))?;
        if done.rows_affected() == 0 {
            return Err(lease_lost(lease));
        }
        Ok(())
    }
}

impl ThreadStore for PostgresStore {
    async fn create_thread(&self, tenant: &str, new: NewThread) -> Result<ThreadInfo, StoreError> {
        const OP: &str = "create thread";
        let id = new.id.unwrap_or_else(|| random_id("thread"));
        let row = sqlx::query(concat!(
            "INSERT INTO threads (tenant, id, title, created_at_ms, message_count) \
             VALUES ($1, $2, $3, ",
            db_now!(),
            ", 0) ON CONFLICT (tenant, id) DO NOTHING RETURNING ",
            thread_columns!()
        ))
        .bind(tenant)
        .bind(&id)
        .bind(&new.title)
        .fetch_optional(&self.pool)
        .await
        .map_err(backend(OP))?
        .ok_or(StoreError::ThreadExists { thread_id: id })?;
        thread_row(&row).map_err(backend(OP))?.into_info()
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
        let mut tx = self.begin(OP).await?;
        sqlx::query("SELECT 1 FROM threads WHERE tenant = $1 AND id = $2 FOR UPDATE")
            .bind(tenant)
            .bind(thread_id)
            .fetch_optional(&mut *tx)
            .await
            .map_err(backend(OP))?
            .ok_or_else(|| thread_not_found(thread_id))?;
        if let Some(row) = sqlx::query(RUNNING_RUN_OF_THREAD)
            .bind(tenant)
            .bind(thread_id)
            .fetch_optional(&mut *tx)
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
                .execute(&mut *tx)
                .await
                .map_err(backend(OP))?;
        }
        tx.commit().await.map_err(backend(OP))
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
            .map(|row| message_row(row).map_err(backend(OP))?)
            .collect()
    }

    async fn begin_run(
        &self,
        new: NewRun,
        worker: &str,
        ttl: Duration,
    ) -> Result<(RunRecord, Lease), StoreError> {
        for _ in 0..BEGIN_ATTEMPTS {
            if let Some(run) = self.try_begin_run(&new, worker, ttl).await? {
                let lease = lease_of(&run, ttl);
                return Ok((run, lease));
            }
        }
        Err(StoreError::backend(
            "begin run",
            format!(
                "run `{}` kept being created and deleted by other workers",
                new.run_id
            ),
        ))
    }

    async fn run(&self, tenant: &str, run_id: &str) -> Result<RunRecord, StoreError> {
        const OP: &str = "read run";
        let row = sqlx::query(concat!(
            "SELECT ",
            run_columns!(),
            " FROM runs WHERE tenant = $1 AND run_id = $2"
        ))
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
            " FROM runs WHERE status = 'running' AND (lease_expires_at_ms IS NULL \
             OR lease_expires_at_ms <= ",
            db_now!(),
            ") ORDER BY ord LIMIT $1"
        ))
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
        let mut tx = self.begin(OP).await?;
        // The fence, and the run's row lock: concurrent appends to one run queue here and each
        // gets the next position.
        let row = sqlx::query(concat!(
            "UPDATE runs SET steps = steps + 1, lease_expires_at_ms = ",
            expiry!("$5"),
            fenced!(),
            " RETURNING steps - 1, thread_id"
        ))
        .bind(&lease.tenant)
        .bind(&lease.run_id)
        .bind(lease.token)
        .bind(&lease.worker)
        .bind(lease.ttl_ms())
        .fetch_optional(&mut *tx)
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
        .execute(&mut *tx)
        .await
        .map_err(backend(OP))?;
        if let Some(thread_id) = thread_id {
            append_messages(&mut tx, &lease.tenant, &thread_id, &lease.run_id, messages)
                .await
                .map_err(backend(OP))?;
        }
        tx.commit().await.map_err(backend(OP))?;
        step_seq(seq)
    }

    async fn renew(&self, lease: &Lease) -> Result<(), StoreError> {
        self.fenced_update(
            "renew lease",
            concat!(
                "UPDATE runs SET lease_expires_at_ms = ",
                expiry!("$5"),
                fenced!()
            ),
            lease,
            true,
        )
        .await
    }

    async fn finish_run(&self, lease: &Lease, end: &RunEnd) -> Result<(), StoreError> {
        const OP: &str = "finish run";
        let (status, output, error) = match end {
            RunEnd::Completed { output } => (RunStatus::Completed, Some(output), None),
            RunEnd::Failed { error } => (RunStatus::Failed, None, Some(error)),
        };
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
        .execute(&self.pool)
        .await
        .map_err(backend(OP))?;
        if done.rows_affected() == 0 {
            return Err(lease_lost(lease));
        }
        Ok(())
    }

    async fn release(&self, lease: &Lease) -> Result<(), StoreError> {
        self.fenced_update(
            "release lease",
            concat!(
                "UPDATE runs SET lease_worker = NULL, lease_expires_at_ms = NULL",
                fenced!()
            ),
            lease,
            false,
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

fn message_row(row: &PgRow) -> Result<Result<ThreadMessage, StoreError>, sqlx::Error> {
    let body: String = row.try_get(3)?;
    Ok(thread_message(
        row.try_get(0)?,
        row.try_get(1)?,
        row.try_get(2)?,
        &body,
    ))
}

/// Appends `messages` to a thread, at the positions after its last message (the thread's row
/// lock numbers them).
pub(super) async fn append_messages(
    tx: &mut Tx,
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
