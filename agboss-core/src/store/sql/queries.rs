//! The statements of the SQL store: those every dialect shares as constants, and [`Queries`],
//! the few that name the dialect's clock, row locks or row numbering, built once per dialect.
use super::db::Dialect;

/// The columns of `runs` that make a [`RunRecord`](crate::store::RunRecord), in
/// [`RunRow`](super::rows::RunRow) order.
macro_rules! run_columns {
    () => {
        "tenant, run_id, thread_id, target, input, status, history_len, output, error, steps, \
         lease_worker, lease_expires_at_ms, lease_token"
    };
}

/// The columns of `threads` that make a [`ThreadInfo`](crate::store::ThreadInfo).
macro_rules! thread_columns {
    () => {
        "tenant, id, title, message_count, created_at_ms"
    };
}

/// The columns of `tickets` that make a [`Ticket`](crate::store::Ticket), in
/// [`TicketRow`](super::rows::TicketRow) order.
macro_rules! ticket_columns {
    () => {
        "tenant, id, thread_id, run_id, step_key, call_id, tool, channel, input, fingerprint, \
         chain_digest, state, decision, created_at_ms, expires_at_ms"
    };
}

/// The fence of every leased write: the run is still running and leased to this token and
/// worker (`$1` tenant, `$2` run, `$3` token, `$4` worker).
macro_rules! fenced {
    () => {
        " WHERE tenant = $1 AND run_id = $2 AND status = 'running' AND lease_token = $3 \
         AND lease_worker = $4"
    };
}

pub(super) const THREAD_EXISTS: &str = "SELECT 1 FROM threads WHERE tenant = $1 AND id = $2";
pub(super) const SELECT_THREAD: &str = concat!(
    "SELECT ",
    thread_columns!(),
    " FROM threads WHERE tenant = $1 AND id = $2"
);
pub(super) const LIST_THREADS: &str = concat!(
    "SELECT ",
    thread_columns!(),
    " FROM threads WHERE tenant = $1 ORDER BY ord"
);
/// The oldest unfinished run of a thread.
pub(super) const RUNNING_RUN_OF_THREAD: &str = "SELECT run_id FROM runs \
     WHERE tenant = $1 AND thread_id = $2 AND status = 'running' ORDER BY ord LIMIT 1";
/// What `delete_thread` removes, children first.
pub(super) const DELETE_THREAD: [&str; 5] = [
    "DELETE FROM tickets WHERE tenant = $1 AND run_id IN \
     (SELECT run_id FROM runs WHERE tenant = $1 AND thread_id = $2)",
    "DELETE FROM steps WHERE tenant = $1 AND run_id IN \
     (SELECT run_id FROM runs WHERE tenant = $1 AND thread_id = $2)",
    "DELETE FROM runs WHERE tenant = $1 AND thread_id = $2",
    "DELETE FROM messages WHERE tenant = $1 AND thread_id = $2",
    "DELETE FROM threads WHERE tenant = $1 AND id = $2",
];
pub(super) const MESSAGES: &str = "SELECT seq, run_id, format, body FROM messages \
     WHERE tenant = $1 AND thread_id = $2 ORDER BY seq LIMIT $3";
/// Reserves the positions of `$3` new messages: returns the first.
pub(super) const RESERVE_MESSAGES: &str = "UPDATE threads SET message_count = message_count + $3 \
     WHERE tenant = $1 AND id = $2 RETURNING message_count - $3";
pub(super) const INSERT_MESSAGE: &str = "INSERT INTO messages \
     (tenant, thread_id, seq, run_id, format, body) VALUES ($1, $2, $3, $4, $5, $6)";

pub(super) const RUN_EXISTS: &str = "SELECT 1 FROM runs WHERE tenant = $1 AND run_id = $2";
pub(super) const SELECT_RUN: &str = concat!(
    "SELECT ",
    run_columns!(),
    " FROM runs WHERE tenant = $1 AND run_id = $2"
);
/// A run's lease passes to `$3` until `$4`, with the next token.
pub(super) const TAKE_OVER: &str = concat!(
    "UPDATE runs SET lease_token = lease_token + 1, lease_worker = $3, \
     lease_expires_at_ms = $4 WHERE tenant = $1 AND run_id = $2 RETURNING ",
    run_columns!()
);
pub(super) const STEPS: &str =
    "SELECT seq, format, body FROM steps WHERE tenant = $1 AND run_id = $2 ORDER BY seq";
pub(super) const INSERT_STEP: &str = "INSERT INTO steps \
     (tenant, run_id, seq, kind, key, format, body) VALUES ($1, $2, $3, $4, $5, $6, $7)";
pub(super) const FINISH_RUN: &str = concat!(
    "UPDATE runs SET status = $5, output = $6, error = $7, lease_worker = NULL, \
     lease_expires_at_ms = NULL",
    fenced!(),
    " RETURNING 1"
);
pub(super) const RELEASE: &str = concat!(
    "UPDATE runs SET lease_worker = NULL, lease_expires_at_ms = NULL",
    fenced!(),
    " RETURNING 1"
);

pub(super) const SELECT_TICKET: &str = concat!(
    "SELECT ",
    ticket_columns!(),
    " FROM tickets WHERE tenant = $1 AND id = $2"
);
pub(super) const RUN_TICKETS: &str = concat!(
    "SELECT ",
    ticket_columns!(),
    " FROM tickets WHERE tenant = $1 AND run_id = $2 ORDER BY ord"
);
pub(super) const DECIDE_TICKET: &str =
    "UPDATE tickets SET state = $3, decision = $4 WHERE tenant = $1 AND id = $2";
pub(super) const ADVANCE_TICKET: &str =
    "UPDATE tickets SET state = $3 WHERE tenant = $1 AND id = $2";

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
                 OR lease_expires_at_ms <= {now}) ORDER BY ord LIMIT $1",
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
