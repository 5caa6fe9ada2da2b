//! What the SQL backends share: column lists, row conversions and error mapping. Each backend
//! reads its own rows into the plain structs here, which turn them into the store's records.
use std::time::Duration;

use super::types::decode_message;
use super::{
    JournalStep, Lease, RunRecord, RunStatus, StepEntry, StoreError, ThreadMessage, Ticket,
    TicketDecision, TicketState,
};

/// The columns of `runs` that make a [`RunRecord`], in [`RunRow`] order.
macro_rules! run_columns {
    () => {
        "tenant, run_id, thread_id, target, input, status, history_len, output, error, steps, \
         lease_worker, lease_expires_at_ms, lease_token"
    };
}
pub(super) use run_columns;

/// The columns of `threads` that make a [`ThreadInfo`](super::ThreadInfo).
macro_rules! thread_columns {
    () => {
        "tenant, id, title, message_count, created_at_ms"
    };
}
pub(super) use thread_columns;

/// The columns of `tickets` that make a [`Ticket`], in [`TicketRow`] order.
macro_rules! ticket_columns {
    () => {
        "tenant, id, thread_id, run_id, step_key, call_id, tool, channel, input, fingerprint, \
         chain_digest, state, decision, created_at_ms, expires_at_ms"
    };
}
pub(super) use ticket_columns;

/// The most rows a `LIMIT` reads (SQL limits are signed).
pub(super) fn sql_limit(limit: Option<u64>) -> i64 {
    limit.map_or(i64::MAX, |l| i64::try_from(l).unwrap_or(i64::MAX))
}

/// A count or position as stored (SQL integers are signed).
pub(super) fn sql_u64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// A stored count or position, refused when negative.
pub(super) fn stored_u64(what: &str, n: i64) -> Result<u64, StoreError> {
    u64::try_from(n).map_err(|_| StoreError::Corrupt {
        what: what.into(),
        detail: format!("negative count {n}"),
    })
}

/// Maps a driver error of `operation` to [`StoreError::Backend`].
pub(super) fn backend(operation: &'static str) -> impl FnOnce(sqlx::Error) -> StoreError {
    move |e| StoreError::backend(operation, e)
}

/// Maps a migration failure: the database could not be brought to this build's schema.
pub(super) fn schema_error(e: sqlx::migrate::MigrateError) -> StoreError {
    let detail = match &e {
        sqlx::migrate::MigrateError::VersionMissing(v) => format!(
            "the database has migration {v}, which this build does not know (it was migrated by \
             a newer build)"
        ),
        other => other.to_string(),
    };
    StoreError::Schema {
        detail,
        source: Some(Box::new(e)),
    }
}

/// A `runs` row as read.
pub(super) struct RunRow {
    pub tenant: String,
    pub run_id: String,
    pub thread_id: Option<String>,
    pub target: String,
    pub input: String,
    pub status: String,
    pub history_len: i64,
    pub output: Option<String>,
    pub error: Option<String>,
    pub steps: i64,
    pub lease_worker: Option<String>,
    pub lease_expires_at_ms: Option<i64>,
    pub lease_token: i64,
}

impl RunRow {
    pub fn into_record(self) -> Result<RunRecord, StoreError> {
        Ok(RunRecord {
            status: RunStatus::parse(&self.status)?,
            history_len: stored_u64("run", self.history_len)?,
            steps: stored_u64("run", self.steps)?,
            tenant: self.tenant,
            run_id: self.run_id,
            thread_id: self.thread_id,
            target: self.target,
            input: self.input,
            output: self.output,
            error: self.error,
            lease_worker: self.lease_worker,
            lease_expires_at_ms: self.lease_expires_at_ms,
            lease_token: self.lease_token,
        })
    }
}

/// A `threads` row as read.
pub(super) struct ThreadRow {
    pub tenant: String,
    pub id: String,
    pub title: Option<String>,
    pub message_count: i64,
    pub created_at_ms: i64,
}

impl ThreadRow {
    pub fn into_info(self) -> Result<super::ThreadInfo, StoreError> {
        Ok(super::ThreadInfo {
            message_count: stored_u64("thread", self.message_count)?,
            id: self.id,
            tenant: self.tenant,
            title: self.title,
            created_at_ms: self.created_at_ms,
        })
    }
}

/// A `tickets` row as read.
pub(super) struct TicketRow {
    pub tenant: String,
    pub id: String,
    pub thread_id: Option<String>,
    pub run_id: String,
    pub step_key: String,
    pub call_id: String,
    pub tool: String,
    pub channel: String,
    pub input: String,
    pub fingerprint: String,
    pub chain_digest: String,
    pub state: String,
    pub decision: Option<String>,
    pub created_at_ms: i64,
    pub expires_at_ms: i64,
}

impl TicketRow {
    /// The ticket: an unknown state or an unreadable decision is [`StoreError::Corrupt`].
    pub fn into_ticket(self) -> Result<Ticket, StoreError> {
        Ok(Ticket {
            state: TicketState::parse(&self.state)?,
            decision: self
                .decision
                .as_deref()
                .map(TicketDecision::decode)
                .transpose()?,
            id: self.id,
            tenant: self.tenant,
            thread_id: self.thread_id,
            run_id: self.run_id,
            step_key: self.step_key,
            call_id: self.call_id,
            tool: self.tool,
            channel: self.channel,
            input: self.input,
            fingerprint: self.fingerprint,
            chain_digest: self.chain_digest,
            created_at_ms: self.created_at_ms,
            expires_at_ms: self.expires_at_ms,
        })
    }
}

/// No ticket of that id for the tenant (or, for a leased write, of the lease's run).
pub(super) fn ticket_not_found(ticket_id: &str) -> StoreError {
    StoreError::TicketNotFound {
        ticket_id: ticket_id.to_string(),
    }
}

/// Why `ticket` cannot be decided at `now_ms`: it is not pending (checked first, as
/// [`MemoryStore`](super::MemoryStore) does), or it expired (`now_ms >= expires_at_ms`).
pub(super) fn undecidable(ticket: &Ticket, now_ms: i64) -> Option<StoreError> {
    if ticket.state != TicketState::Pending {
        return Some(StoreError::TicketState {
            ticket_id: ticket.id.clone(),
            expected: TicketState::Pending,
            found: ticket.state,
        });
    }
    (now_ms >= ticket.expires_at_ms).then(|| StoreError::TicketExpired {
        ticket_id: ticket.id.clone(),
        expires_at_ms: ticket.expires_at_ms,
    })
}

/// Why `ticket` cannot move from `from`: it is in another state.
pub(super) fn not_in_state(ticket: &Ticket, from: TicketState) -> Option<StoreError> {
    (ticket.state != from).then(|| StoreError::TicketState {
        ticket_id: ticket.id.clone(),
        expected: from,
        found: ticket.state,
    })
}

/// A `messages` row, decoded.
pub(super) fn thread_message(
    seq: i64,
    run_id: String,
    format: i64,
    body: &str,
) -> Result<ThreadMessage, StoreError> {
    Ok(ThreadMessage {
        seq: stored_u64("thread message", seq)?,
        run_id,
        message: decode_message(format, body)?,
    })
}

/// A `steps` row, decoded.
pub(super) fn journal_step(seq: i64, format: i64, body: &str) -> Result<JournalStep, StoreError> {
    Ok(JournalStep {
        seq: stored_u64("journal step", seq)?,
        entry: StepEntry::decode(format, body)?,
    })
}

/// The lease a grant of `record` to its worker gives.
pub(super) fn lease_of(record: &RunRecord, ttl: Duration) -> Lease {
    Lease {
        tenant: record.tenant.clone(),
        run_id: record.run_id.clone(),
        worker: record.lease_worker.clone().unwrap_or_default(),
        token: record.lease_token,
        ttl,
    }
}

/// No thread of that id for the tenant.
pub(super) fn thread_not_found(thread_id: &str) -> StoreError {
    StoreError::ThreadNotFound {
        thread_id: thread_id.to_string(),
    }
}

/// No run of that id for the tenant.
pub(super) fn run_not_found(run_id: &str) -> StoreError {
    StoreError::RunNotFound {
        run_id: run_id.to_string(),
    }
}

/// A step position as returned (stored positions are never negative).
pub(super) fn step_seq(seq: i64) -> Result<u64, StoreError> {
    stored_u64("run", seq)
}

/// The error of a write whose lease is no longer the run's.
pub(super) fn lease_lost(lease: &Lease) -> StoreError {
    StoreError::LeaseLost {
        run_id: lease.run_id.clone(),
        token: lease.token,
    }
}

/// `ttl` in ms, saturating.
pub(super) fn ttl_ms(ttl: Duration) -> i64 {
    i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX)
}
