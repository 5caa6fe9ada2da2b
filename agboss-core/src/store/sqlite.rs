//! [`SqliteStore`]: the embedded backend, one SQLite file in WAL mode (feature `sqlite`): the
//! SQLite [`Dialect`] of the one SQL store, and how a file is opened and migrated.
use std::path::Path;
use std::sync::LazyLock;
use std::time::Duration;

use sqlx::Sqlite;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};

use super::error::StoreError;
use super::sql::SqlStore;
use super::sql::db::{backend, schema_error};
use super::sql::dialect::{Dialect, Queries};

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
/// use agboss_core::store::{
///     NewRun, NewThread, RunStore, SqliteStore, ThreadStore, DEFAULT_LEASE_TTL,
/// };
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
pub type SqliteStore = SqlStore<Sqlite>;

/// The schema migrations of `migrations/sqlite`.
static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");

/// How long a statement waits for another connection's (or process's) write lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// SQLite: one write lock for the whole file, taken by `BEGIN IMMEDIATE` (so no row locks), the
/// writers of a process queued before it, and `ord` numbered by the insert.
impl Dialect for Sqlite {
    // The clock in whole ms (julianday's 'now' has ms precision; rounding undoes the float).
    const NOW: &'static str = "CAST(ROUND((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER)";
    const LEAST: &'static str = "MIN";
    const FOR_UPDATE: &'static str = "";
    const FOR_SHARE: &'static str = "";
    const BEGIN_WRITE: Option<&'static str> = Some("BEGIN IMMEDIATE");
    const WRITERS_TAKE_TURNS: bool = true;
    const NUMBERS_ORD: bool = true;
    fn queries() -> &'static Queries {
        static QUERIES: LazyLock<Queries> = LazyLock::new(Queries::build::<Sqlite>);
        &QUERIES
    }
}

impl SqlStore<Sqlite> {
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
        Ok(Self::on_pool(pool))
    }
}
