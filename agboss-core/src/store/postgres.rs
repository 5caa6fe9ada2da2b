//! [`PostgresStore`]: the shared backend for workers in several processes (feature `postgres`):
//! the PostgreSQL [`Dialect`] of the one SQL store, and how it connects and migrates.
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::{AssertSqlSafe, Connection, Executor, PgConnection, Postgres};

use super::error::StoreError;
use super::sql::SqlStore;
use super::sql::db::{backend, schema_error};
use super::sql::dialect::{Dialect, Queries};

/// The schema migrations of `migrations/postgres`.
static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

/// How long `connect` waits for a connection (a server that is down fails after this).
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);

/// PostgreSQL: the server's clock, row locks (`FOR UPDATE` on what a write changes, `FOR SHARE`
/// on the run a ticket write is fenced by), concurrent writers, `ord` an identity column.
impl Dialect for Postgres {
    const NOW: &'static str = "(floor(extract(epoch FROM clock_timestamp()) * 1000))::bigint";
    const LEAST: &'static str = "LEAST";
    const FOR_UPDATE: &'static str = " FOR UPDATE";
    const FOR_SHARE: &'static str = " FOR SHARE";
    const BEGIN_WRITE: Option<&'static str> = None;
    const WRITERS_TAKE_TURNS: bool = false;
    const NUMBERS_ORD: bool = false;
    fn queries() -> &'static Queries {
        static QUERIES: LazyLock<Queries> = LazyLock::new(Queries::build::<Postgres>);
        &QUERIES
    }
}

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
pub type PostgresStore = SqlStore<Postgres>;

impl SqlStore<Postgres> {
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
            Ok(()) => Ok(Self::on_pool(pool)),
            Err(e) => {
                // A failed run may keep the migration lock of its session: close the session.
                conn.close().await.ok();
                pool.close().await;
                Err(schema_error(e))
            }
        }
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
