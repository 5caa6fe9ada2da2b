//! [`PostgresStore`]: the shared backend for workers in several processes (feature `postgres`).
use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions, PgRow};
use sqlx::{AssertSqlSafe, Connection, Executor, PgConnection, Row};

use super::StoreError;
use super::sql::{RunRow, ThreadRow, backend, schema_error};

/// The server's clock, ms since the epoch.
macro_rules! db_now {
    () => {
        "(floor(extract(epoch FROM clock_timestamp()) * 1000))::bigint"
    };
}
/// The server's clock plus the ttl (ms) in parameter `$p`, saturating.
macro_rules! expiry {
    ($p:literal) => {
        concat!(
            "(LEAST(",
            db_now!(),
            ", 9223372036854775807 - ",
            $p,
            ") + ",
            $p,
            ")"
        )
    };
}
/// The fence of every leased write: the run is still running and leased to this token and worker.
macro_rules! fenced {
    () => {
        " WHERE tenant = $1 AND run_id = $2 AND status = 'running' AND lease_token = $3 \
         AND lease_worker = $4"
    };
}

mod begin;
mod ops;
mod tickets;

/// The schema migrations of `migrations/postgres`.
static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

/// How long `connect` waits for a connection (a server that is down fails after this).
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);

/// Threads, runs and journals in PostgreSQL, shared by every worker that connects.
///
/// Migrated to this build's schema on connect (a database migrated by a newer build is refused
/// with [`StoreError::Schema`]). Lease times come from the server's clock, so workers on hosts
/// whose clocks differ still agree on when a lease expires. Every leased write is fenced in its
/// own transaction: the run's row is updated only if it is still running under the lease's token
/// and worker, and that row lock orders concurrent appends to one run. Two workers racing to take
/// over a run lock its row (`SELECT ... FOR UPDATE`): exactly one gets the lease.
///
/// ```no_run
/// use agboss_core::store::{NewThread, PostgresStore, ThreadStore};
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), agboss_core::store::StoreError> {
/// let store = PostgresStore::connect("postgres://agboss@localhost/agboss").await?;
/// store.create_thread("acme", NewThread::new().id("t1")).await?;
/// // Or in a schema of its own (created if missing):
/// let other = PostgresStore::connect_with_schema("postgres://agboss@localhost/agboss", "tenant_a")
///     .await?;
/// # let _ = other;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct PostgresStore {
    pool: PgPool,
}

impl PostgresStore {
    /// Connects to the database at `url` (`postgres://user:password@host:port/database`) and
    /// migrates it. A server that cannot be reached is a [`StoreError::Backend`] (after 10 s).
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let options: PgConnectOptions = url.parse().map_err(backend("connect"))?;
        let pool = PgPoolOptions::new()
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect_with(options)
            .await
            .map_err(backend("connect"))?;
        Self::from_pool(pool).await
    }

    /// Like [`connect`](Self::connect), with every table in `schema` (created if missing): each
    /// connection's `search_path` is set to it. Several stores (apps, tests) can so share one
    /// database. `schema` is a plain identifier: ASCII letters, digits and `_`, not starting with
    /// a digit, at most 63 bytes ([`StoreError::Schema`] otherwise).
    pub async fn connect_with_schema(url: &str, schema: &str) -> Result<Self, StoreError> {
        if !valid_schema_name(schema) {
            return Err(StoreError::Schema {
                detail: format!(
                    "`{schema}` is not a plain schema name (ASCII letters, digits and `_`, at \
                     most 63 bytes)"
                ),
                source: None,
            });
        }
        let options: PgConnectOptions = url.parse().map_err(backend("connect"))?;
        let mut conn = tokio::time::timeout(ACQUIRE_TIMEOUT, PgConnection::connect_with(&options))
            .await
            .map_err(|_| StoreError::backend("connect", sqlx::Error::PoolTimedOut))?
            .map_err(backend("connect"))?;
        let created = conn
            .execute(AssertSqlSafe(format!(
                "CREATE SCHEMA IF NOT EXISTS \"{schema}\""
            )))
            .await
            .map_err(backend("create schema"));
        conn.close().await.ok();
        created?;
        let set_path: Arc<str> = format!("SET search_path TO \"{schema}\"").into();
        let pool = PgPoolOptions::new()
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .after_connect(move |conn, _meta| {
                let set_path = set_path.clone();
                Box::pin(async move {
                    conn.execute(AssertSqlSafe(set_path)).await?;
                    Ok(())
                })
            })
            .connect_with(options)
            .await
            .map_err(backend("connect"))?;
        Self::from_pool(pool).await
    }

    /// A store on a pool of your own, migrated (into the first schema of the connections'
    /// `search_path`).
    pub async fn from_pool(pool: PgPool) -> Result<Self, StoreError> {
        let mut conn = pool.acquire().await.map_err(backend("migrate"))?;
        match MIGRATOR.run(&mut *conn).await {
            Ok(()) => Ok(Self { pool }),
            Err(e) => {
                // A failed run may keep the migration lock of its session: close the session.
                conn.close().await.ok();
                pool.close().await;
                Err(schema_error(e))
            }
        }
    }

    /// The connection pool (to inspect the database, or share it).
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Closes the pool, waiting for connections in use to be returned.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

fn valid_schema_name(name: &str) -> bool {
    let mut chars = name.chars();
    name.len() <= 63
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn run_row(row: &PgRow) -> Result<RunRow, sqlx::Error> {
    Ok(RunRow {
        tenant: row.try_get(0)?,
        run_id: row.try_get(1)?,
        thread_id: row.try_get(2)?,
        target: row.try_get(3)?,
        input: row.try_get(4)?,
        status: row.try_get(5)?,
        history_len: row.try_get(6)?,
        output: row.try_get(7)?,
        error: row.try_get(8)?,
        steps: row.try_get(9)?,
        lease_worker: row.try_get(10)?,
        lease_expires_at_ms: row.try_get(11)?,
        lease_token: row.try_get(12)?,
    })
}

fn thread_row(row: &PgRow) -> Result<ThreadRow, sqlx::Error> {
    Ok(ThreadRow {
        tenant: row.try_get(0)?,
        id: row.try_get(1)?,
        title: row.try_get(2)?,
        message_count: row.try_get(3)?,
        created_at_ms: row.try_get(4)?,
    })
}

#[cfg(test)]
mod tests {
    use super::valid_schema_name;

    #[test]
    fn schema_names_are_plain_identifiers() {
        assert!(valid_schema_name("agboss_test_1"));
        assert!(valid_schema_name("_x"));
        assert!(!valid_schema_name(""));
        assert!(!valid_schema_name("1abc"));
        assert!(!valid_schema_name("a\"; DROP TABLE x; --"));
        assert!(!valid_schema_name("a,public"));
        assert!(!valid_schema_name(&"a".repeat(64)));
    }
}
