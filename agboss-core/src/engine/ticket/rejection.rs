//! What a refused call (rejected, or expired undecided) is on each path: the one parameter of
//! the lifecycle ([`OnRejection`]; the table is in [`super`]).
use crate::contract::outcome::{ToolBlockedError, ToolCallDecision};
use crate::pipeline::observe::Observation;
use crate::store::Ticket;

/// What a rejection (or an expiry) means on a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnRejection {
    /// The agent loop: the call's observation says why it did not run; the loop goes on.
    Observation,
    /// A workflow tool step or a direct call: no model reads its outcome, the step (or the
    /// call, whose one-call run ends failed) fails with a [`ToolBlockedError`] naming the
    /// channel ([`Refusal::into_block`]).
    Failure,
}

/// Why a gated call does not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The approver rejected it (the ticket is claimed: complete it once the outcome is
    /// journaled).
    Rejected {
        /// Who rejected it.
        by: String,
        /// Their message.
        message: String,
    },
    /// Nobody decided before the ticket's expiry (the ticket is `Expired`, terminal).
    Expired {
        /// What the call's outcome says (see [`expiry_reason`]).
        reason: String,
    },
}

impl Refusal {
    /// The refusal of a ticket nobody decided in time.
    pub(crate) fn expired(ticket: &Ticket) -> Self {
        Self::Expired {
            reason: expiry_reason(ticket),
        }
    }

    /// Whether the ticket was claimed for it (a rejection: `Executing`, to be completed), rather
    /// than expired.
    pub(crate) fn claimed(&self) -> bool {
        matches!(self, Self::Rejected { .. })
    }

    /// The journal's label of the refused call's outcome.
    pub(crate) fn label(&self) -> &'static str {
        match self {
            Self::Rejected { .. } => "rejected_by_approver",
            Self::Expired { .. } => "approval_expired",
        }
    }
}

impl OnRejection {
    /// The outcome of a refused call of `tool` (`call_id`) gated by `channel` on this path: the
    /// call's observation (with its journal label) when the path goes on, else the block that
    /// fails it.
    pub(crate) fn refuse(
        self,
        refusal: Refusal,
        tool: &str,
        call_id: &str,
        channel: &'static str,
    ) -> Result<(Observation, &'static str), ToolBlockedError> {
        let label = refusal.label();
        let reason = match (self, refusal) {
            // Like a rejection: the model reads why the call did not run.
            (Self::Observation, Refusal::Expired { reason }) => {
                let obs = Observation {
                    content: reason,
                    is_error: true,
                    truncated: false,
                };
                return Ok((obs, label));
            }
            (Self::Observation, Refusal::Rejected { message, .. }) => {
                let obs = Observation {
                    content: message,
                    is_error: true,
                    truncated: false,
                };
                return Ok((obs, label));
            }
            (Self::Failure, refusal) => refusal,
        };
        // No model reads the outcome: the refusal fails the step (or the call).
        Err(reason.into_block(tool, call_id, channel))
    }
}

impl Refusal {
    /// The block that fails a refused call of `tool` (`call_id`) gated by `channel`: what
    /// [`OnRejection::Failure`] makes of a refusal (a direct call, which always fails, calls it
    /// directly).
    pub(crate) fn into_block(
        self,
        tool: &str,
        call_id: &str,
        channel: &'static str,
    ) -> ToolBlockedError {
        let reason = match self {
            Self::Expired { reason } => reason,
            Self::Rejected { by, message } => format!("rejected by {by}: {message}"),
        };
        ToolBlockedError {
            tool_name: tool.to_string(),
            call_id: call_id.to_string(),
            interceptor: channel,
            kind: ToolCallDecision::Block { reason },
        }
    }
}

/// Why a call whose ticket expired did not run (its observation, or its step's block reason).
pub(crate) fn expiry_reason(ticket: &Ticket) -> String {
    format!(
        "approval ticket `{}` expired before anyone decided it (at {} ms since the epoch): the \
         call was not run",
        ticket.id, ticket.expires_at_ms
    )
}
