//! An approval ticket's data: a gated tool call waiting for a human decision, bound to the exact
//! call, where it is ([`TicketState`]) and what was decided ([`TicketDecision`]). An approval
//! channel reads it; the store keeps it (and re-exports these types as
//! `agboss_core::store::{Ticket, TicketState, TicketDecision}`).
use serde::{Deserialize, Serialize};

use crate::stamp::{now_ms, sha256_hex};

/// Where a ticket is. Moves only forward, by compare-and-swap:
/// `Pending → Decided → Executing → Completed`, or `Pending → Superseded` when the call's
/// policy changed before anyone decided (a new ticket is requested instead), or
/// `Pending → Expired` when nobody decided before its expiry (the call is not run).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TicketState {
    /// Waiting for a decision.
    Pending,
    /// Decided; the decision is not consumed yet.
    Decided,
    /// A resumed run consumed the decision and is executing the call.
    Executing,
    /// The call's outcome is journaled.
    Completed,
    /// Replaced by a new ticket (the call's resolved chain changed); cannot be decided.
    Superseded,
    /// Not decided before its expiry: the call did not run and gets its channel's expiry
    /// outcome; deciding it is refused with
    /// [`StoreError::TicketExpired`](crate::store::StoreError::TicketExpired).
    Expired,
}

impl TicketState {
    /// Whether a ticket may move from `self` to `to`: forward only, `Pending → Decided →
    /// Executing → Completed`, `Pending | Decided → Superseded`, and `Pending → Expired`.
    ///
    /// ```
    /// use agboss_core::store::TicketState::*;
    /// assert!(Decided.may_become(Executing));
    /// assert!(!Completed.may_become(Pending));
    /// assert!(!Pending.may_become(Executing));
    /// assert!(Pending.may_become(Expired));
    /// assert!(!Expired.may_become(Decided));
    /// ```
    pub fn may_become(self, to: TicketState) -> bool {
        matches!(
            (self, to),
            (
                Self::Pending,
                Self::Decided | Self::Superseded | Self::Expired
            ) | (Self::Decided, Self::Executing | Self::Superseded)
                | (Self::Executing, Self::Completed)
        )
    }

    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Decided => "decided",
            Self::Executing => "executing",
            Self::Completed => "completed",
            Self::Superseded => "superseded",
            Self::Expired => "expired",
        }
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
}

/// The `step_key` of a ticket that asks a human to connect a tenant's account on a remote MCP
/// server (raised by a call that found no credential, with
/// `McpServerConfig::account_channel`): its `tool` is the server's name, its `input` the JSON
/// `{"server": .., "tenant": ..}` (never a secret), and no call waits on it. A channel tells
/// it from a gated call's ticket with [`Ticket::is_account_request`].
pub const CONNECT_ACCOUNT_STEP: &str = "connect-account";

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
    /// [`TicketStore::create_ticket`](crate::store::TicketStore::create_ticket).
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
        let fingerprint = sha256_hex(input.as_bytes());
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

    /// Whether the ticket asks a human to connect the tenant's account on a remote MCP
    /// server (its `step_key` is [`CONNECT_ACCOUNT_STEP`]) rather than to approve a call.
    ///
    /// ```
    /// use agboss_core::store::{CONNECT_ACCOUNT_STEP, Ticket};
    /// let mut ticket = Ticket::pending("tk1", "crm", r#"{"server":"crm","tenant":"acme"}"#);
    /// assert!(!ticket.is_account_request());
    /// ticket.step_key = CONNECT_ACCOUNT_STEP.to_string();
    /// assert!(ticket.is_account_request());
    /// ```
    pub fn is_account_request(&self) -> bool {
        self.step_key == CONNECT_ACCOUNT_STEP
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
