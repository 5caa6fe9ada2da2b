//! [`SqliteStore`]: the embedded backend, one SQLite file in WAL mode (feature `sqlite`).
use std::path::Path;
use std::time::Duration;

use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteRow,
};
use sqlx::{Row, Sqlite, Transaction};
use tokio::sync::{Mutex, MutexGuard};

use super::StoreError;
use super::sql::{RunRow, ThreadRow, backend, schema_error};

/// The fence of every leased write: the run is still running and leased to this token and worker.
macro_rules! fenced {
    () => {
        " WHERE tenant = $1 AND run_id = $2 AND status = 'running' AND lease_token = $3 \
         AND lease_worker = $4"
    };
}

mod ops;
mod tickets;

/// The schema migrations of `migrations/sqlite`.
static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");

/// How long a statement waits for another connection's (or process's) write lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Threads, runs and journals in one SQLite file: the durable default of a single host.
///
/// The file is created on first use and migrated to this build's schema on open. It runs in WAL
/// mode (readers never wait for the writer), with foreign keys on. Every write is one
/// `BEGIN IMMEDIATE` transaction, so writers queue for the file's write lock instead of
/// deadlocking, and the lease check of a write sits in the same transaction as the write. Several
/// processes may open the same file; a database migrated by a newer build is refused with
/// [`StoreError::Schema`].
///
/// ```
/// use agboss_core::store::{NewRun, NewThread, SqliteStore, ThreadStore, DEFAULT_LEASE_TTL};
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), agboss_core::store::StoreError> {
/// let dir = std::env::temp_dir().join(format!("agboss-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let store = SqliteStore::open(dir.join("agboss.db")).await?;
///
/// store.create_thread("acme", NewThread::new().id("t1")).await?;
/// let run = NewRun::new("acme", "r1", "support-agent", "Where is my order?").thread("t1");
/// let (record, lease) = store.begin_run(run, "worker-a", DEFAULT_LEASE_TTL).await?;
/// assert_eq!(record.history_len, 0);
/// assert_eq!(lease.token, 1);
/// // The run's input is the thread's first message.
/// assert_eq!(store.messages("acme", "t1", None).await?.len(), 1);
/// # store.close().await;
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct SqliteStore {
    pool: SqlitePool,
    /// Writers of this process queue here rather than in SQLite's busy handler.
    write: Mutex<()>,
}

/// A write transaction: the process's write turn and SQLite's write lock. Dropped without
/// commit, it rolls back.
struct Write<'a> {
    tx: Transaction<'static, Sqlite>,
    _turn: MutexGuard<'a, ()>,
}

impl SqliteStore {
    /// Opens (creating it if missing) the database file at `path` and migrates it.
    ///
    /// A file that cannot be opened or created is a [`StoreError::Backend`]; a database this
    /// build cannot migrate (one migrated by a newer build) is a [`StoreError::Schema`].
    pub async fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let options = SqliteConnectOptions::new()
            .filename(path.as_ref())
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .busy_timeout(BUSY_TIMEOUT)
            .foreign_keys(true);
        let pool = SqlitePoolOptions::new()
            .max_connections(8)
            .connect_with(options)
            .await
            .map_err(backend("open"))?;
        Self::from_pool(pool).await
    }

    /// A private in-memory database (tests): gone when the store is dropped.
    pub async fn memory() -> Result<Self, StoreError> {
        let options = SqliteConnectOptions::new()
            .in_memory(true)
            .foreign_keys(true);
        // Every connection to `:memory:` is a database of its own: keep exactly one, forever.
        let pool = SqlitePoolOptions::new()
            .min_connections(1)
            .max_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            .connect_with(options)
            .await
            .map_err(backend("open"))?;
        Self::from_pool(pool).await
    }

    /// A store on a pool of your own, migrated. The pool's connections should have foreign keys
    /// on, a busy timeout, and (for a file shared by several processes) WAL journal mode, as
    /// [`open`](Self::open) sets them.
    pub async fn from_pool(pool: SqlitePool) -> Result<Self, StoreError> {
        let mut conn = pool.acquire().await.map_err(backend("migrate"))?;
        let migrated = MIGRATOR.run(&mut *conn).await;
        drop(conn);
        if let Err(e) = migrated {
            pool.close().await;
            return Err(schema_error(e));
        }
        Ok(Self {
            pool,
            write: Mutex::new(()),
        })
    }

    /// The connection pool (to inspect the database, or share it).
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// Closes the pool, waiting for connections in use to be returned.
    pub async fn close(&self) {
        self.pool.close().await;
    }

    async fn write(&self, op: &'static str) -> Result<Write<'_>, StoreError> {
        let turn = self.write.lock().await;
        let tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(backend(op))?;
        Ok(Write { tx, _turn: turn })
    }
}

fn run_row(row: &SqliteRow) -> Result<RunRow, sqlx::Error> {
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

fn thread_row(row: &SqliteRow) -> Result<ThreadRow, sqlx::Error> {
    Ok(ThreadRow {
        tenant: row.try_get(0)?,
        id: row.try_get(1)?,
        title: row.try_get(2)?,
        message_count: row.try_get(3)?,
        created_at_ms: row.try_get(4)?,
    })
}
