//! The statements every dialect shares, as constants (the others are built from the dialect in
//! `dialect.rs`), and the column lists they read.
/// The columns of `runs` that make a [`RunRecord`](crate::store::RunRecord), in the order
/// `rows::run_record` reads them.
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

/// The columns of `tickets` that make a [`Ticket`](crate::store::Ticket), in the order
/// `rows::ticket` reads them.
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
/// Inserts a message at a reserved position: no row when one is there already (the thread's
/// `message_count` is lower than its stored messages).
pub(super) const INSERT_MESSAGE: &str = "INSERT INTO messages \
     (tenant, thread_id, seq, run_id, format, body) VALUES ($1, $2, $3, $4, $5, $6) \
     ON CONFLICT DO NOTHING RETURNING seq";

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
/// A page of a tenant's tickets (`$2` channel, `$3` run, `$4` thread, each `NULL` for any;
/// `$5` 1 for pending only; `$6` limit, `$7` offset) in the order of
/// [`TicketQuery::order_key`](crate::store::TicketQuery::order_key).
pub(super) const LIST_TICKETS: &str = concat!(
    "SELECT ",
    ticket_columns!(),
    " FROM tickets WHERE tenant = $1 AND ($2 IS NULL OR channel = $2) \
     AND ($3 IS NULL OR run_id = $3) AND ($4 IS NULL OR thread_id = $4) \
     AND ($5 = 0 OR state = 'pending') \
     ORDER BY CASE WHEN state = 'pending' THEN 0 ELSE 1 END, \
     CASE WHEN state = 'pending' THEN created_at_ms ELSE -created_at_ms END, id \
     LIMIT $6 OFFSET $7"
);
pub(super) const DECIDE_TICKET: &str =
    "UPDATE tickets SET state = $3, decision = $4 WHERE tenant = $1 AND id = $2";
pub(super) const ADVANCE_TICKET: &str =
    "UPDATE tickets SET state = $3 WHERE tenant = $1 AND id = $2";

pub(super) use {fenced, run_columns, thread_columns, ticket_columns};
