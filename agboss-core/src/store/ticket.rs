//! Approval tickets as the store reads them: the data types live in the contract
//! ([`crate::contract::ticket`]), re-exported here; what reads a stored name or decision (and
//! answers a [`StoreError`]) lives beside the store.
use super::error::StoreError;
pub use crate::contract::ticket::{CONNECT_ACCOUNT_STEP, Ticket, TicketDecision, TicketState};

/// Reading a stored state (beside [`StoreError`], which names states, so this impl lives above
/// it).
impl TicketState {
    /// Parses a stored name.
    pub fn parse(s: &str) -> Result<Self, StoreError> {
        Ok(match s {
            "pending" => Self::Pending,
            "decided" => Self::Decided,
            "executing" => Self::Executing,
            "completed" => Self::Completed,
            "superseded" => Self::Superseded,
            "expired" => Self::Expired,
            other => {
                return Err(StoreError::Corrupt {
                    what: "ticket state".into(),
                    detail: format!("unknown state `{other}`"),
                });
            }
        })
    }
}

/// Reading a stored decision.
impl TicketDecision {
    /// Decodes a stored decision.
    pub fn decode(json: &str) -> Result<Self, StoreError> {
        serde_json::from_str(json).map_err(|e| StoreError::Corrupt {
            what: "ticket decision".into(),
            detail: e.to_string(),
        })
    }
}
