//! The rules every backend applies the same way: the errors of a missing record or a lost lease,
//! the lease a grant gives, and the checks of a ticket write (a new ticket is pending and
//! undecided, an advance moves forward, a decision needs a pending unexpired ticket).
use std::time::Duration;

use super::error::StoreError;
use super::ticket::Ticket;
use super::types::{Lease, RunRecord};
use crate::contract::ticket::TicketState;

/// No thread of that id for the tenant.
pub(crate) fn thread_not_found(thread_id: &str) -> StoreError {
    StoreError::ThreadNotFound {
        thread_id: thread_id.to_string(),
    }
}

/// No run of that id for the tenant.
pub(crate) fn run_not_found(run_id: &str) -> StoreError {
    StoreError::RunNotFound {
        run_id: run_id.to_string(),
    }
}

/// No ticket of that id for the tenant (or, for a leased write, of the lease's run).
pub(crate) fn ticket_not_found(ticket_id: &str) -> StoreError {
    StoreError::TicketNotFound {
        ticket_id: ticket_id.to_string(),
    }
}

/// The error of a write whose lease is no longer the run's.
pub(crate) fn lease_lost(lease: &Lease) -> StoreError {
    StoreError::LeaseLost {
        run_id: lease.run_id.clone(),
        token: lease.token,
    }
}

/// The lease a grant of `record` to its worker gives.
pub(crate) fn lease_of(record: &RunRecord, ttl: Duration) -> Lease {
    Lease {
        tenant: record.tenant.clone(),
        run_id: record.run_id.clone(),
        worker: record.lease_worker.clone().unwrap_or_default(),
        token: record.lease_token,
        ttl,
    }
}

/// A ticket about to be created is pending and undecided.
pub(crate) fn new_ticket(ticket: &Ticket) -> Result<(), StoreError> {
    if ticket.state == TicketState::Pending && ticket.decision.is_none() {
        Ok(())
    } else {
        Err(StoreError::TicketTransition {
            ticket_id: ticket.id.clone(),
            from: TicketState::Pending,
            to: ticket.state,
        })
    }
}

/// An advance from `from` to `to` moves forward ([`TicketState::may_become`]).
pub(crate) fn advance(
    ticket_id: &str,
    from: TicketState,
    to: TicketState,
) -> Result<(), StoreError> {
    if from.may_become(to) {
        Ok(())
    } else {
        Err(StoreError::TicketTransition {
            ticket_id: ticket_id.to_string(),
            from,
            to,
        })
    }
}

/// Why `ticket` cannot be decided at `now_ms`: it expired (moved to
/// [`TicketState::Expired`], or pending with `now_ms >= expires_at_ms`), or it is not pending.
pub(crate) fn decidable(ticket: &Ticket, now_ms: i64) -> Result<(), StoreError> {
    if ticket.state != TicketState::Expired {
        in_state(ticket, TicketState::Pending)?;
    }
    if ticket.state == TicketState::Expired || now_ms >= ticket.expires_at_ms {
        return Err(StoreError::TicketExpired {
            ticket_id: ticket.id.clone(),
            expires_at_ms: ticket.expires_at_ms,
        });
    }
    Ok(())
}

/// Why `ticket` cannot move from `from`: it is in another state.
pub(crate) fn in_state(ticket: &Ticket, from: TicketState) -> Result<(), StoreError> {
    if ticket.state == from {
        Ok(())
    } else {
        Err(StoreError::TicketState {
            ticket_id: ticket.id.clone(),
            expected: from,
            found: ticket.state,
        })
    }
}
