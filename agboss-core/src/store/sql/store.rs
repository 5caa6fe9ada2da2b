//! [`SqlStore`]: the one SQL implementation of the store traits, generic over a [`Dialect`], and
//! the few primitives its operations are written with (a read on a pooled connection, a write
//! transaction, a single fenced write).
use std::sync::Arc;

use sqlx::{Pool, Transaction};
use tokio::sync::{Mutex, MutexGuard};

use super::db::{Bind, Q, backend, sql_u64};
use super::dialect::Dialect;
use super::queries::{INSERT_MESSAGE, RESERVE_MESSAGES};
use crate::model::Message;
use crate::store::checks::lease_lost;
use crate::store::error::StoreError;
use crate::store::types::{FORMAT_VERSION, Lease, encode_message};

/// Threads, runs, journals and tickets in an SQL database: one implementation of
/// [`ThreadStore`](crate::store::ThreadStore), [`RunStore`](crate::store::RunStore) and
/// [`TicketStore`](crate::store::TicketStore) over a dialect. Use it as
/// [`SqliteStore`](crate::store::SqliteStore) or [`PostgresStore`](crate::store::PostgresStore)
/// (features `sqlite`, `postgres`).
///
/// Every write that checks something (a lease, a busy thread, a ticket's state) checks it in the
/// transaction that writes, with the rows it checks locked (PostgreSQL) or the database's write
/// lock held (SQLite), so the check cannot be stale when the write lands. Lease times come from
/// the database's clock.
pub struct SqlStore<D: sqlx::Database> {
    pub(crate) pool: Pool<D>,
    /// Writers of this process queue here where the database has one write lock.
    turn: Option<Arc<Mutex<()>>>,
}

impl<D: sqlx::Database> std::fmt::Debug for SqlStore<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlStore")
            .field("database", &D::NAME)
            .field("pool", &self.pool)
            .finish()
    }
}

/// A clone shares the pool (and the write turn).
impl<D: sqlx::Database> Clone for SqlStore<D> {
    fn clone(&self) -> Self {
        Self {
            pool: self.pool.clone(),
            turn: self.turn.clone(),
        }
    }
}

/// A write transaction (and, where writers take turns, this process's turn). Dropped without
/// commit, it rolls back.
pub(super) struct Write<'a, D: sqlx::Database> {
    tx: Transaction<'static, D>,
    _turn: Option<MutexGuard<'a, ()>>,
}

impl<D: Dialect> Write<'_, D> {
    /// The row `q` returns, if any.
    pub(super) async fn optional(
        &mut self,
        op: &'static str,
        q: Q<D>,
    ) -> Result<Option<D::Row>, StoreError> {
        q.fetch_optional(D::exec(&mut *self.tx))
            .await
            .map_err(backend(op))
    }

    /// The rows `q` returns.
    pub(super) async fn all(
        &mut self,
        op: &'static str,
        q: Q<D>,
    ) -> Result<Vec<D::Row>, StoreError> {
        q.fetch_all(D::exec(&mut *self.tx))
            .await
            .map_err(backend(op))
    }

    /// Runs `q`.
    pub(super) async fn execute(&mut self, op: &'static str, q: Q<D>) -> Result<(), StoreError> {
        q.execute(D::exec(&mut *self.tx))
            .await
            .map(drop)
            .map_err(backend(op))
    }

    /// Commits.
    pub(super) async fn commit(self, op: &'static str) -> Result<(), StoreError> {
        self.tx.commit().await.map_err(backend(op))
    }

    /// Appends `messages` to a thread, at the positions after its last message (the thread's
    /// row, updated first, numbers them). A position already taken (the thread's count is lower
    /// than its stored messages) is [`StoreError::Corrupt`], and the transaction writes nothing.
    pub(super) async fn append_messages(
        &mut self,
        op: &'static str,
        (tenant, thread_id, run_id): (&str, &str, &str),
        messages: &[Message],
    ) -> Result<(), StoreError> {
        if messages.is_empty() {
            return Ok(());
        }
        let count = sql_u64(messages.len() as u64);
        let reserve = sqlx::query(RESERVE_MESSAGES)
            .text(tenant)
            .text(thread_id)
            .int(count);
        let Some(row) = self.optional(op, reserve).await? else {
            // A running run's thread cannot be deleted: nothing to append to.
            return Ok(());
        };
        let first = D::get_int(&row, 0).map_err(backend(op))?;
        for (i, message) in messages.iter().enumerate() {
            let seq = first.saturating_add(sql_u64(i as u64));
            let insert = sqlx::query(INSERT_MESSAGE)
                .text(tenant)
                .text(thread_id)
                .int(seq)
                .text(run_id)
                .int(FORMAT_VERSION)
                .text(&encode_message(message));
            if self.optional(op, insert).await?.is_none() {
                // Rolled back with the transaction: nothing is overwritten.
                return Err(StoreError::Corrupt {
                    what: "thread".into(),
                    detail: format!(
                        "thread `{thread_id}` counts {first} messages, but it holds message {seq} \
                         already"
                    ),
                });
            }
        }
        Ok(())
    }
}

impl<D: Dialect> SqlStore<D> {
    /// A store on a migrated pool.
    pub(crate) fn on_pool(pool: Pool<D>) -> Self {
        Self {
            pool,
            turn: D::WRITERS_TAKE_TURNS.then(|| Arc::new(Mutex::new(()))),
        }
    }

    /// The connection pool (to inspect the database, or share it).
    pub fn pool(&self) -> &Pool<D> {
        &self.pool
    }

    /// Closes the pool, waiting for connections in use to be returned.
    pub async fn close(&self) {
        self.pool.close().await;
    }

    /// Starts a write transaction.
    pub(super) async fn write(&self, op: &'static str) -> Result<Write<'_, D>, StoreError> {
        let turn = match &self.turn {
            Some(turn) => Some(turn.lock().await),
            None => None,
        };
        let tx = match D::BEGIN_WRITE {
            Some(begin) => self.pool.begin_with(begin).await,
            None => self.pool.begin().await,
        }
        .map_err(backend(op))?;
        Ok(Write { tx, _turn: turn })
    }

    /// The row `q` returns, if any, read on a pooled connection.
    pub(super) async fn optional(
        &self,
        op: &'static str,
        q: Q<D>,
    ) -> Result<Option<D::Row>, StoreError> {
        let mut conn = self.pool.acquire().await.map_err(backend(op))?;
        q.fetch_optional(D::exec(&mut *conn))
            .await
            .map_err(backend(op))
    }

    /// The rows `q` returns, read on a pooled connection.
    pub(super) async fn all(&self, op: &'static str, q: Q<D>) -> Result<Vec<D::Row>, StoreError> {
        let mut conn = self.pool.acquire().await.map_err(backend(op))?;
        q.fetch_all(D::exec(&mut *conn)).await.map_err(backend(op))
    }

    /// `Ok` when `q` returns a row, `missing()` otherwise.
    pub(super) async fn exists(
        &self,
        op: &'static str,
        q: Q<D>,
        missing: impl FnOnce() -> StoreError,
    ) -> Result<(), StoreError> {
        self.optional(op, q).await?.map(drop).ok_or_else(missing)
    }

    /// A fenced write of one statement on `lease`'s run, `more` binding what follows the fence's
    /// four parameters: [`StoreError::LeaseLost`] (and nothing written) when the lease is no
    /// longer the run's.
    pub(super) async fn fenced(
        &self,
        op: &'static str,
        sql: &'static str,
        lease: &Lease,
        more: impl FnOnce(Q<D>) -> Q<D>,
    ) -> Result<(), StoreError> {
        let q = sqlx::query(sql)
            .text(&lease.tenant)
            .text(&lease.run_id)
            .int(lease.token)
            .text(&lease.worker);
        self.write_one(op, more(q))
            .await?
            .map(drop)
            .ok_or_else(|| lease_lost(lease))
    }

    /// A write of one statement: its row, if any. In a write transaction where writers take
    /// turns (a single statement upgrading its read lock could fail at once); on its own
    /// otherwise.
    pub(super) async fn write_one(
        &self,
        op: &'static str,
        q: Q<D>,
    ) -> Result<Option<D::Row>, StoreError> {
        if !D::WRITERS_TAKE_TURNS {
            return self.optional(op, q).await;
        }
        let mut w = self.write(op).await?;
        let row = w.optional(op, q).await?;
        w.commit(op).await?;
        Ok(row)
    }
}
