//! The transitions of a ticket, each one compare-and-set through the store's
//! [`TicketStore`](crate::store::TicketStore) (see the state machine in [`super`]).
use super::rejection::Refusal;
use crate::contract::channel::{ApprovalGrant, ChannelMeta};
use crate::engine::run_error::RunError;
use crate::store::types::{now_ms, random_id};
use crate::store::{
    Lease, SharedStore, StoreError, Ticket, TicketDecision, TicketState, TicketStore as _,
};

/// What a gated call's ticket is made of.
pub(crate) struct ApprovalRequest<'a> {
    pub(crate) key: &'a str,
    pub(crate) call_id: &'a str,
    pub(crate) tool: &'a str,
    pub(crate) channel: &'static ChannelMeta,
    /// Canonical JSON of the validated input (its SHA-256 is the ticket's fingerprint).
    pub(crate) input: &'a str,
    pub(crate) chain_digest: &'a str,
}

impl ApprovalRequest<'_> {
    /// A new pending ticket for the call, of `tenant`'s run `run_id`, expiring after its
    /// channel's `ttl_ms`.
    pub(crate) fn ticket(&self, tenant: &str, thread_id: Option<String>, run_id: &str) -> Ticket {
        // `pending` fingerprints the input: the SHA-256 the approval point computed.
        let mut ticket = Ticket::pending(random_id("ticket"), self.tool, self.input);
        ticket.tenant = tenant.to_string();
        ticket.thread_id = thread_id;
        ticket.run_id = run_id.to_string();
        ticket.step_key = self.key.to_string();
        ticket.call_id = self.call_id.to_string();
        ticket.channel = self.channel.name.to_string();
        ticket.chain_digest = self.chain_digest.to_string();
        let ttl = i64::try_from(self.channel.ttl_ms()).unwrap_or(i64::MAX);
        ticket.expires_at_ms = ticket.created_at_ms.saturating_add(ttl);
        ticket
    }
}

/// The policy a gated call runs under now: a decided ticket is applied only if it was made
/// under the same one.
#[derive(Clone, Copy)]
pub(crate) struct Policy<'a> {
    /// The digest of the call's resolved chain.
    pub(crate) digest: &'a str,
    /// The tool's approval channel now.
    pub(crate) channel: Option<&'static ChannelMeta>,
}

/// What a call waiting on a ticket may do now (the result of [`Tickets::claim`]).
pub(crate) enum Claim {
    /// Nothing yet: the ticket is pending.
    Pending(Box<Ticket>),
    /// Not run: rejected (the ticket is claimed) or expired undecided.
    Refused(Refusal),
    /// The ticket was made under another policy and is superseded now: ask again, for its input.
    Superseded(Box<Ticket>),
    /// Run it (the ticket is claimed), with this grant and, for an edit, these arguments.
    Run {
        ticket: Box<Ticket>,
        grant: ApprovalGrant,
        arguments: Option<String>,
    },
}

/// Records a human decision: `pending → approved | rejected | edited`, by compare-and-set
/// (refused once the ticket expired, or when it is not pending: a ticket is decided once).
pub(crate) async fn decide_ticket(
    store: &SharedStore,
    tenant: &str,
    ticket_id: &str,
    decision: &TicketDecision,
) -> Result<Ticket, StoreError> {
    store
        .decide_ticket(tenant, ticket_id, decision, now_ms())
        .await
}

/// The tickets of one run, under the run's lease: every transition but the decision.
#[derive(Clone, Copy)]
pub(crate) struct Tickets<'a> {
    store: &'a SharedStore,
    lease: &'a Lease,
    tenant: &'a str,
}

impl<'a> Tickets<'a> {
    /// The tickets of `tenant`'s run held by `lease`.
    pub(crate) fn new(store: &'a SharedStore, lease: &'a Lease, tenant: &'a str) -> Self {
        Self {
            store,
            lease,
            tenant,
        }
    }

    /// `→ pending`: stores a new ticket (before anyone is told of it).
    pub(crate) async fn open(&self, ticket: &Ticket) -> Result<(), StoreError> {
        self.store.create_ticket(self.lease, ticket).await
    }

    /// A ticket of the run's tenant.
    pub(crate) async fn read(&self, ticket_id: &str) -> Result<Ticket, StoreError> {
        self.store.ticket(self.tenant, ticket_id).await
    }

    /// `pending → expired` for a ticket nobody decided in time (one already expired is
    /// returned as it is).
    pub(crate) async fn expire(&self, ticket: Ticket) -> Result<Ticket, StoreError> {
        if ticket.state != TicketState::Pending {
            return Ok(ticket);
        }
        self.advance(&ticket.id, TicketState::Pending, TicketState::Expired)
            .await
    }

    /// `claimed → completed`, once the call's outcome is journaled.
    pub(crate) async fn complete(&self, ticket_id: &str) -> Result<Ticket, StoreError> {
        self.advance(ticket_id, TicketState::Executing, TicketState::Completed)
            .await
    }

    /// Reads what a call waiting on `ticket` (its journal step `key`) may do now and, once the
    /// ticket is decided, consumes the decision exactly once (`decided → claimed`, so a second
    /// resume finds it claimed, under its own lease). A pending ticket past its expiry expires
    /// (the call does not run: fail closed); a decided one made under another policy than
    /// `policy` (or with no channel now) is superseded. `policy` is `None` when the call's tool
    /// is not on its path any more (an error once the ticket is decided).
    pub(crate) async fn claim(
        &self,
        ticket: Ticket,
        policy: Option<Policy<'_>>,
        key: &str,
    ) -> Result<Claim, RunError> {
        let run_id = ticket.run_id.clone();
        let mismatch = |detail: String| RunError::JournalMismatch {
            run_id: run_id.clone(),
            key: key.to_string(),
            detail,
        };
        match ticket.state {
            TicketState::Pending if now_ms() >= ticket.expires_at_ms => {
                // Nobody decided in time: the call does not run (fail closed), the run goes on.
                let ticket = self.expire(ticket).await?;
                return Ok(Claim::Refused(Refusal::expired(&ticket)));
            }
            TicketState::Pending => return Ok(Claim::Pending(Box::new(ticket))),
            // Expired by an earlier resume that stopped before the call's outcome was journaled.
            TicketState::Expired => return Ok(Claim::Refused(Refusal::expired(&ticket))),
            TicketState::Decided | TicketState::Executing => {}
            other => {
                return Err(mismatch(format!(
                    "its ticket `{}` is {other:?} but the call has no recorded end",
                    ticket.id
                )));
            }
        }
        let Some(policy) = policy else {
            return Err(mismatch(format!(
                "the tool `{}` is not on this path",
                ticket.tool
            )));
        };
        let ticket = if ticket.state == TicketState::Decided {
            if *ticket.chain_digest != *policy.digest || policy.channel.is_none() {
                // The policy changed since the ticket was made: ask again instead of applying it.
                let ticket = self
                    .advance(&ticket.id, TicketState::Decided, TicketState::Superseded)
                    .await?;
                return Ok(Claim::Superseded(Box::new(ticket)));
            }
            // Consumed exactly once: a second resume finds it executing (under its own lease).
            self.advance(&ticket.id, TicketState::Decided, TicketState::Executing)
                .await?
        } else {
            ticket
        };
        let (grant, arguments) = match ticket.decision.clone() {
            None => {
                return Err(mismatch(format!("ticket `{}` has no decision", ticket.id)));
            }
            Some(TicketDecision::Rejected { by, message }) => {
                return Ok(Claim::Refused(Refusal::Rejected { by, message }));
            }
            Some(TicketDecision::Edited { input, .. }) => {
                (ApprovalGrant::ApproverInput, Some(input))
            }
            Some(TicketDecision::Approved { .. }) => (
                ApprovalGrant::Approved {
                    fingerprint: ticket.fingerprint.clone(),
                },
                None,
            ),
        };
        Ok(Claim::Run {
            ticket: Box::new(ticket),
            grant,
            arguments,
        })
    }

    /// Moves a ticket of the run from `from` to `to`, by compare-and-set.
    async fn advance(
        &self,
        ticket_id: &str,
        from: TicketState,
        to: TicketState,
    ) -> Result<Ticket, StoreError> {
        self.store
            .advance_ticket(self.lease, ticket_id, from, to)
            .await
    }
}
