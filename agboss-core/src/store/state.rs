//! [`TicketState`]: where an approval ticket is (the lowest file of the store: it imports nothing
//! of it, so [`StoreError`](super::StoreError) can name a state).
use serde::{Deserialize, Serialize};

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
    /// [`StoreError::TicketExpired`](super::StoreError::TicketExpired).
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
