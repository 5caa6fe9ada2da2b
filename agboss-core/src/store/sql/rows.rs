//! Rows as read, on any driver: each is read column by column into a plain struct, which turns
//! it into the store's record (an unknown status or state, a negative count or an unreadable
//! body is [`StoreError::Corrupt`] or [`StoreError::UnknownFormat`]).
use super::db::{Db, backend, stored_u64};
use crate::store::error::StoreError;
use crate::store::state::TicketState;
use crate::store::ticket::{Ticket, TicketDecision};
use crate::store::types::{
    JournalStep, RunRecord, RunStatus, StepEntry, ThreadInfo, ThreadMessage, decode_message,
};

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
    fn read<D: Db>(row: &D::Row) -> Result<Self, sqlx::Error> {
        Ok(Self {
            tenant: D::get_text(row, 0)?,
            run_id: D::get_text(row, 1)?,
            thread_id: D::get_opt_text(row, 2)?,
            target: D::get_text(row, 3)?,
            input: D::get_text(row, 4)?,
            status: D::get_text(row, 5)?,
            history_len: D::get_int(row, 6)?,
            output: D::get_opt_text(row, 7)?,
            error: D::get_opt_text(row, 8)?,
            steps: D::get_int(row, 9)?,
            lease_worker: D::get_opt_text(row, 10)?,
            lease_expires_at_ms: D::get_opt_int(row, 11)?,
            lease_token: D::get_int(row, 12)?,
        })
    }

    fn into_record(self) -> Result<RunRecord, StoreError> {
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

/// A `runs` row (the run columns first), decoded.
pub(super) fn run_record<D: Db>(row: &D::Row, op: &'static str) -> Result<RunRecord, StoreError> {
    RunRow::read::<D>(row).map_err(backend(op))?.into_record()
}

/// A `threads` row, decoded.
pub(super) fn thread_info<D: Db>(row: &D::Row, op: &'static str) -> Result<ThreadInfo, StoreError> {
    let read = || -> Result<_, sqlx::Error> {
        Ok((
            D::get_text(row, 0)?,
            D::get_text(row, 1)?,
            D::get_opt_text(row, 2)?,
            D::get_int(row, 3)?,
            D::get_int(row, 4)?,
        ))
    };
    let (tenant, id, title, message_count, created_at_ms) = read().map_err(backend(op))?;
    Ok(ThreadInfo {
        message_count: stored_u64("thread", message_count)?,
        id,
        tenant,
        title,
        created_at_ms,
    })
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
    fn read<D: Db>(row: &D::Row) -> Result<Self, sqlx::Error> {
        Ok(Self {
            tenant: D::get_text(row, 0)?,
            id: D::get_text(row, 1)?,
            thread_id: D::get_opt_text(row, 2)?,
            run_id: D::get_text(row, 3)?,
            step_key: D::get_text(row, 4)?,
            call_id: D::get_text(row, 5)?,
            tool: D::get_text(row, 6)?,
            channel: D::get_text(row, 7)?,
            input: D::get_text(row, 8)?,
            fingerprint: D::get_text(row, 9)?,
            chain_digest: D::get_text(row, 10)?,
            state: D::get_text(row, 11)?,
            decision: D::get_opt_text(row, 12)?,
            created_at_ms: D::get_int(row, 13)?,
            expires_at_ms: D::get_int(row, 14)?,
        })
    }

    /// The ticket: an unknown state or an unreadable decision is [`StoreError::Corrupt`].
    fn into_ticket(self) -> Result<Ticket, StoreError> {
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

/// A `tickets` row, decoded.
pub(super) fn ticket<D: Db>(row: &D::Row, op: &'static str) -> Result<Ticket, StoreError> {
    TicketRow::read::<D>(row)
        .map_err(backend(op))?
        .into_ticket()
}

/// A `messages` row (`seq, run_id, format, body`), decoded.
pub(super) fn thread_message<D: Db>(
    row: &D::Row,
    op: &'static str,
) -> Result<ThreadMessage, StoreError> {
    let read = || -> Result<_, sqlx::Error> {
        Ok((
            D::get_int(row, 0)?,
            D::get_text(row, 1)?,
            D::get_int(row, 2)?,
            D::get_text(row, 3)?,
        ))
    };
    let (seq, run_id, format, body) = read().map_err(backend(op))?;
    Ok(ThreadMessage {
        seq: stored_u64("thread message", seq)?,
        run_id,
        message: decode_message(format, &body)?,
    })
}

/// A `steps` row (`seq, format, body`), decoded.
pub(super) fn journal_step<D: Db>(
    row: &D::Row,
    op: &'static str,
) -> Result<JournalStep, StoreError> {
    let read = || -> Result<_, sqlx::Error> {
        Ok((
            D::get_int(row, 0)?,
            D::get_int(row, 1)?,
            D::get_text(row, 2)?,
        ))
    };
    let (seq, format, body) = read().map_err(backend(op))?;
    Ok(JournalStep {
        seq: stored_u64("journal step", seq)?,
        entry: StepEntry::decode(format, &body)?,
    })
}
