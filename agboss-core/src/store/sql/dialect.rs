//! What differs between the SQL databases the store runs on ([`Dialect`]: the clock, row locks,
//! how writers queue, how rows are numbered), and [`Queries`], the statements that name those,
//! built once per dialect. SQLite and PostgreSQL implement [`Dialect`] in `store/sqlite.rs` and
//! `store/postgres.rs`.
use super::db::Db;
use super::queries::{
    SELECT_TICKET, THREAD_EXISTS, fenced, run_columns, thread_columns, ticket_columns,
};

/// What differs between the SQL databases the store runs on; everything else is written once.
pub trait Dialect: Db {
    /// The database's clock, ms since the epoch (an SQL expression): lease times come from it,
    /// so workers whose clocks differ agree on when a lease expires.
    const NOW: &'static str;
    /// The smaller of two integers (`LEAST` in PostgreSQL, `MIN` in SQLite).
    const LEAST: &'static str;
    /// Appended to a read in a write transaction that locks the rows it reads for writing
    /// (empty where a write transaction holds the whole database's write lock).
    const FOR_UPDATE: &'static str;
    /// The same for rows a write reads and must not change under it.
    const FOR_SHARE: &'static str;
    /// The statement that starts a write transaction (`None`: the driver's plain `BEGIN`).
    const BEGIN_WRITE: Option<&'static str>;
    /// Whether the writers of one process take turns (and single statements run in a write
    /// transaction too), for a database with one write lock.
    const WRITERS_TAKE_TURNS: bool;
    /// Whether an insert numbers the creation order (`ord`) itself (no identity column).
    const NUMBERS_ORD: bool;
    /// The dialect's statements, built once.
    fn queries() -> &'static Queries;
}

/// The statements that differ by dialect.
#[derive(Debug)]
pub struct Queries {
    pub(super) create_thread: String,
    /// A thread's row, locked (`delete_thread`).
    pub(super) lock_thread: String,
    /// A run's row, locked, with the database's clock as the last column (`begin_run`).
    pub(super) lock_run: String,
    /// A thread's message count, its row locked (a new run).
    pub(super) lock_thread_history: String,
    pub(super) insert_run: String,
    /// Unfinished runs with no lease in force, but none waiting on a pending ticket before its
    /// expiry, oldest first.
    pub(super) resumable_runs: String,
    /// The fence of an append, which extends the lease by `$5` ms: the step's position and the
    /// run's thread.
    pub(super) append: String,
    pub(super) renew: String,
    /// The fenced run's thread, its row held for the transaction (ticket writes).
    pub(super) fenced_run: String,
    pub(super) insert_ticket: String,
    /// A ticket's row, locked (`decide_ticket`).
    pub(super) lock_ticket: String,
    /// A ticket of a run, its row locked (`advance_ticket`).
    pub(super) lock_run_ticket: String,
}

impl Queries {
    /// The statements of dialect `D`.
    pub fn build<D: Dialect>() -> Self {
        let now = D::NOW;
        let expiry =
            |ttl: &str| format!("({}({now}, 9223372036854775807 - {ttl}) + {ttl})", D::LEAST);
        // Where the dialect numbers rows itself: the column, and the next number.
        let ord = |next: &str| {
            if D::NUMBERS_ORD {
                (
                    ", ord",
                    format!(", (SELECT COALESCE(MAX(ord), 0) + 1 FROM {next})"),
                )
            } else {
                ("", String::new())
            }
        };
        let (lock, share) = (D::FOR_UPDATE, D::FOR_SHARE);
        let (thread_ord, thread_next) = ord("threads");
        let (run_ord, run_next) = ord("runs");
        let (ticket_ord, ticket_next) = ord("tickets WHERE tenant = $1 AND run_id = $4");
        Self {
            create_thread: format!(
                "INSERT INTO threads (tenant, id, title, created_at_ms, message_count{thread_ord}) \
                 VALUES ($1, $2, $3, {now}, 0{thread_next}) ON CONFLICT (tenant, id) DO NOTHING \
                 RETURNING {}",
                thread_columns!()
            ),
            lock_thread: format!("{THREAD_EXISTS}{lock}"),
            lock_run: format!(
                "SELECT {}, {now} FROM runs WHERE tenant = $1 AND run_id = $2{lock}",
                run_columns!()
            ),
            lock_thread_history: format!(
                "SELECT message_count FROM threads WHERE tenant = $1 AND id = $2{lock}"
            ),
            insert_run: format!(
                "INSERT INTO runs (tenant, run_id, thread_id, target, input, status, history_len, \
                 steps, lease_worker, lease_expires_at_ms, lease_token, created_at_ms{run_ord}) \
                 VALUES ($1, $2, $3, $4, $5, 'running', $6, 0, $7, {}, 1, {now}{run_next}) \
                 ON CONFLICT (tenant, run_id) DO NOTHING RETURNING {}",
                expiry("$8"),
                run_columns!()
            ),
            resumable_runs: format!(
                "SELECT {} FROM runs WHERE status = 'running' AND (lease_expires_at_ms IS NULL \
                 OR lease_expires_at_ms <= {now}) AND NOT EXISTS (SELECT 1 FROM tickets t \
                 WHERE t.tenant = runs.tenant AND t.run_id = runs.run_id \
                 AND t.state = 'pending' AND t.expires_at_ms > {now}) ORDER BY ord LIMIT $1",
                run_columns!()
            ),
            append: format!(
                "UPDATE runs SET steps = steps + 1, lease_expires_at_ms = {}{} \
                 RETURNING steps - 1, thread_id",
                expiry("$5"),
                fenced!()
            ),
            renew: format!(
                "UPDATE runs SET lease_expires_at_ms = {}{} RETURNING 1",
                expiry("$5"),
                fenced!()
            ),
            fenced_run: format!("SELECT thread_id FROM runs{}{share}", fenced!()),
            insert_ticket: format!(
                "INSERT INTO tickets ({}{ticket_ord}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, \
                 $10, $11, $12, $13, $14, $15{ticket_next}) ON CONFLICT (tenant, id) DO NOTHING \
                 RETURNING 1",
                ticket_columns!()
            ),
            lock_ticket: format!("{SELECT_TICKET}{lock}"),
            lock_run_ticket: format!("{SELECT_TICKET} AND run_id = $3{lock}"),
        }
    }
}
