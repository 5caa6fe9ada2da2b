//! Rows into records, on any driver, column by column: a column whose value its type cannot
//! hold, an unknown status or state, a negative count or an unreadable body is
//! [`StoreError::Corrupt`] or [`StoreError::UnknownFormat`] (never retried); a driver failure
//! is [`StoreError::Backend`].
use super::db::{Db, column, stored_u64};
use crate::contract::ticket::TicketState;
use crate::store::error::StoreError;
use crate::store::ticket::{Ticket, TicketDecision};
use crate::store::types::{
    JournalStep, RunRecord, RunStatus, StepEntry, ThreadInfo, ThreadMessage, decode_message,
};

/// A `runs` row (the run columns first), decoded.
pub(super) fn run_record<D: Db>(row: &D::Row, op: &'static str) -> Result<RunRecord, StoreError> {
    let text = |i| D::get_text(row, i).map_err(column("run", op));
    let opt = |i| D::get_opt_text(row, i).map_err(column("run", op));
    let int = |i| D::get_int(row, i).map_err(column("run", op));
    Ok(RunRecord {
        tenant: text(0)?,
        run_id: text(1)?,
        thread_id: opt(2)?,
        target: text(3)?,
        input: text(4)?,
        status: RunStatus::parse(&text(5)?)?,
        history_len: stored_u64("run", int(6)?)?,
        output: opt(7)?,
        error: opt(8)?,
        steps: stored_u64("run", int(9)?)?,
        lease_worker: opt(10)?,
        lease_expires_at_ms: D::get_opt_int(row, 11).map_err(column("run", op))?,
        lease_token: int(12)?,
    })
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
    let (tenant, id, title, message_count, created_at_ms) = read().map_err(column("thread", op))?;
    Ok(ThreadInfo {
        message_count: stored_u64("thread", message_count)?,
        id,
        tenant,
        title,
        created_at_ms,
    })
}

/// A `tickets` row (in `ticket_columns!` order), decoded: an unknown state or an unreadable
/// decision is [`StoreError::Corrupt`].
pub(super) fn ticket<D: Db>(row: &D::Row, op: &'static str) -> Result<Ticket, StoreError> {
    let text = |i| D::get_text(row, i).map_err(column("ticket", op));
    let opt = |i| D::get_opt_text(row, i).map_err(column("ticket", op));
    let int = |i| D::get_int(row, i).map_err(column("ticket", op));
    Ok(Ticket {
        tenant: text(0)?,
        id: text(1)?,
        thread_id: opt(2)?,
        run_id: text(3)?,
        step_key: text(4)?,
        call_id: text(5)?,
        tool: text(6)?,
        channel: text(7)?,
        input: text(8)?,
        fingerprint: text(9)?,
        chain_digest: text(10)?,
        state: TicketState::parse(&text(11)?)?,
        decision: opt(12)?
            .as_deref()
            .map(TicketDecision::decode)
            .transpose()?,
        created_at_ms: int(13)?,
        expires_at_ms: int(14)?,
    })
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
    let (seq, run_id, format, body) = read().map_err(column("thread message", op))?;
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
    let (seq, format, body) = read().map_err(column("journal step", op))?;
    Ok(JournalStep {
        seq: stored_u64("journal step", seq)?,
        entry: StepEntry::decode(format, &body)?,
    })
}
