//! Approval tickets: a gated tool call waiting for a human decision, bound to the exact call.
use serde::{Deserialize, Serialize};

use super::error::StoreError;
pub use super::state::TicketState;
use super::types::now_ms;

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

/// What a human decided about a ticket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum TicketDecision {
    /// Run the call as requested.
    Approved {
        /// Who decided.
        by: String,
    },
    /// Do not run it; `message` is the call's observation and the run goes on.
    Rejected {
        /// Who decided.
        by: String,
        /// What the model reads.
        message: String,
    },
    /// Run it with another input (which passes the before chain again).
    Edited {
        /// Who decided.
        by: String,
        /// The new input, as JSON text.
        input: String,
    },
}

impl TicketDecision {
    /// Who decided.
    pub fn approver(&self) -> &str {
        match self {
            Self::Approved { by } | Self::Rejected { by, .. } | Self::Edited { by, .. } => by,
        }
    }
    /// The JSON a backend stores.
    pub fn encode(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| unreachable!("decisions serialize"))
    }
    /// Decodes a stored decision.
    pub fn decode(json: &str) -> Result<Self, StoreError> {
        serde_json::from_str(json).map_err(|e| StoreError::Corrupt {
            what: "ticket decision".into(),
            detail: e.to_string(),
        })
    }
}

/// A gated call waiting for (or past) a human decision. It binds the exact call: its run,
/// journal step and call id, its tool, the canonical JSON of its validated input and that
/// text's SHA-256, and the digest of the call's resolved chain (the policy it was checked
/// under).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Ticket {
    /// The ticket id, unique within its tenant.
    pub id: String,
    /// The requesting tenant.
    pub tenant: String,
    /// The run's thread, if any.
    pub thread_id: Option<String>,
    /// The run.
    pub run_id: String,
    /// The call's journal key.
    pub step_key: String,
    /// The call id.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The approval channel.
    pub channel: String,
    /// Canonical JSON of the validated input.
    pub input: String,
    /// SHA-256 of `input`, hex.
    pub fingerprint: String,
    /// Digest of the call's resolved chain when the ticket was made.
    pub chain_digest: String,
    /// Where it is.
    pub state: TicketState,
    /// The decision, once decided.
    pub decision: Option<TicketDecision>,
    /// Creation time, ms since the epoch.
    pub created_at_ms: i64,
    /// After this, it cannot be decided, ms since the epoch.
    pub expires_at_ms: i64,
}

impl Ticket {
    /// A pending ticket `id` for a call of `tool` on `input` (the canonical JSON of its validated
    /// input), with `fingerprint` the SHA-256 of `input`. Created now, it never expires until
    /// `expires_at_ms` is set; the call (`step_key`, `call_id`), `channel` and `chain_digest`
    /// are empty until set. The tenant and run are the lease's, set by
    /// [`TicketStore::create_ticket`](super::TicketStore::create_ticket).
    ///
    /// ```
    /// use agboss_core::store::{Ticket, TicketState};
    /// let mut ticket = Ticket::pending("tk1", "refund", r#"{"amount":10}"#);
    /// ticket.expires_at_ms = ticket.created_at_ms + 60_000;
    /// assert_eq!(ticket.state, TicketState::Pending);
    /// assert_eq!(ticket.fingerprint.len(), 64);
    /// ```
    pub fn pending(
        id: impl Into<String>,
        tool: impl Into<String>,
        input: impl Into<String>,
    ) -> Self {
        let input = input.into();
        let fingerprint = super::types::sha256_hex(input.as_bytes());
        Self {
            id: id.into(),
            tenant: String::new(),
            thread_id: None,
            run_id: String::new(),
            step_key: String::new(),
            call_id: String::new(),
            tool: tool.into(),
            channel: String::new(),
            input,
            fingerprint,
            chain_digest: String::new(),
            state: TicketState::Pending,
            decision: None,
            created_at_ms: now_ms(),
            expires_at_ms: i64::MAX,
        }
    }

    /// The ticket's state as of `now_ms`, what a reader (an inbox, a console) shows: a pending
    /// ticket past its expiry reads as [`TicketState::Expired`] at once, though the store
    /// records the move only when its run is resumed or a worker's
    /// [`App::take_over_runs`](crate::App::take_over_runs) sweeps it; deciding it already
    /// answers `TicketExpired`.
    ///
    /// ```
    /// use agboss_core::store::{Ticket, TicketState};
    /// let mut ticket = Ticket::pending("tk1", "refund", r#"{"amount":10}"#);
    /// ticket.expires_at_ms = ticket.created_at_ms + 60_000;
    /// assert_eq!(ticket.state_at(ticket.created_at_ms), TicketState::Pending);
    /// assert_eq!(ticket.state_at(ticket.expires_at_ms), TicketState::Expired);
    /// ```
    pub fn state_at(&self, now_ms: i64) -> TicketState {
        match self.state {
            TicketState::Pending if now_ms >= self.expires_at_ms => TicketState::Expired,
            state => state,
        }
    }
}
