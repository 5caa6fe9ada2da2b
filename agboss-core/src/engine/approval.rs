//! Gated calls in a run: a call that waits for a human decision gets a ticket (written to the
//! store before its channel is told), the run stops with [`RunError::AwaitingApproval`], and a
//! resumed run settles each decided ticket exactly once: an approval runs the call (through the
//! whole chain again, bound to the approved input's fingerprint), a rejection makes the
//! approver's message the call's observation, an edit runs the approver's input (through the
//! before chain again). A ticket made under another policy (the call's resolved chain changed)
//! is not applied: a new ticket is requested.
use futures::FutureExt as _;

use super::events::RunEvent;
use super::journal::{ApprovalRequest, RunJournal};
use super::run::{Engine, RunError};
use crate::callback::SharedToolCallback;
use crate::contract::agent::ToolErrorPolicy;
use crate::contract::channel::{ApprovalGrant, Approver};
use crate::contract::outcome::{ToolCallError, ToolCallErrorKind};
use crate::engine::run_error::StepFailedError;
use crate::model::ToolCallRequest;
use crate::pipeline::observe::Observation;
use crate::store::{Ticket, TicketDecision, TicketState};

/// How a call is attempted.
#[derive(Clone, Copy, Default)]
pub(super) struct Attempt<'a> {
    /// The idempotency key (journaled runs).
    pub(super) idempotency_key: Option<&'a str>,
    /// Arguments other than the model's (an approver's edit).
    pub(super) arguments: Option<&'a str>,
    /// A human decision for this call.
    pub(super) grant: Option<&'a ApprovalGrant>,
}

impl<'a> Attempt<'a> {
    /// A call as the model asked for it.
    pub(super) fn first(idempotency_key: Option<&'a str>) -> Self {
        Self {
            idempotency_key,
            ..Self::default()
        }
    }
}

/// What an attempt gave.
pub(super) enum Called {
    /// The observation and its decision's label.
    Observed(Observation, &'static str),
    /// The call waits for a human decision (`ToolCallErrorKind::ApprovalRequired`).
    NeedsApproval(ToolCallError),
}

/// A call of a turn: done, or waiting on its ticket.
pub(super) enum Slot {
    Done(Observation),
    Pending(Box<Ticket>),
}

impl Engine {
    /// Without a store a gated call cannot wait: the step fails (the tool did not run).
    pub(super) fn approval_without_store(&self, step: &str, error: ToolCallError) -> RunError {
        StepFailedError::from_tool_call(step, error).into()
    }

    /// Makes the ticket of a gated call, then tells its channel.
    pub(super) async fn open_ticket(
        &self,
        journal: &RunJournal,
        key: &str,
        callbacks: &[SharedToolCallback],
        call: &ToolCallRequest,
        error: ToolCallError,
    ) -> Result<Ticket, RunError> {
        let ToolCallErrorKind::ApprovalRequired { input, .. } = error.kind() else {
            return Err(self.approval_without_store(&call.name, error));
        };
        let callback = callbacks.iter().find(|c| c.definition().name == call.name);
        let Some((callback, channel)) =
            callback.and_then(|c| c.metadata().tool.and_then(|m| m.approval).map(|ch| (c, ch)))
        else {
            return Err(self.approval_without_store(&call.name, error));
        };
        let ticket = journal
            .request_approval(ApprovalRequest {
                key,
                call_id: &call.id,
                tool: &call.name,
                channel,
                input,
                chain_digest: &callback.metadata().policy_digest,
            })
            .await?;
        self.notify(&ticket).await;
        Ok(ticket)
    }

    /// Tells the ticket's channel, after the ticket is stored. A failure leaves it pending.
    pub(super) async fn notify(&self, ticket: &Ticket) {
        let notified = tell_channel(&self.rt, ticket).await;
        self.emit(|| RunEvent::ApprovalRequested {
            ticket: Box::new(ticket.clone()),
            notified: notified.clone(),
        });
    }

    /// A call of a resumed agent run that waits on `ticket_id`: still pending, or settled once.
    pub(super) async fn settle_ticket(
        &self,
        step: &str,
        policy: ToolErrorPolicy,
        callbacks: &[SharedToolCallback],
        call: &ToolCallRequest,
        key: &str,
        ticket_id: &str,
    ) -> Result<Slot, RunError> {
        let journal = self.journal.as_ref().expect("a ticket is journaled");
        let (obs, label) = match self.claim_ticket(callbacks, call, key, ticket_id).await? {
            Claim::Pending(ticket) => return Ok(Slot::Pending(ticket)),
            Claim::Expired { reason, .. } => {
                // Like a rejection: the model reads why the call did not run.
                let obs = Observation {
                    content: reason,
                    is_error: true,
                    truncated: false,
                };
                journal
                    .record_tool_finished(key, &call.id, &call.name, "approval_expired", &obs, true)
                    .await?;
                return Ok(Slot::Done(obs));
            }
            Claim::Rejected { message, .. } => (
                Observation {
                    content: message,
                    is_error: true,
                    truncated: false,
                },
                "rejected_by_approver",
            ),
            Claim::Run {
                grant,
                arguments,
                idempotency_key,
            } => {
                let attempt = Attempt {
                    idempotency_key: Some(&idempotency_key),
                    arguments: arguments.as_deref(),
                    grant: Some(&grant),
                };
                match self
                    .call_tool(step, policy, callbacks, call, attempt)
                    .await?
                {
                    Called::Observed(obs, label) => (obs, label),
                    // An approval binds the input it was given for: nothing else runs on it.
                    Called::NeedsApproval(error) => {
                        return Err(self.approval_without_store(step, error));
                    }
                }
            }
        };
        journal
            .record_tool_finished(key, &call.id, &call.name, label, &obs, true)
            .await?;
        journal
            .advance_ticket(ticket_id, TicketState::Executing, TicketState::Completed)
            .await?;
        Ok(Slot::Done(obs))
    }

    /// Reads the ticket a journaled call waits on and, once decided, consumes its decision
    /// exactly once (`Decided → Executing`): what the call may do now. A ticket made under
    /// another policy is superseded and a new one requested (the call is pending again).
    pub(super) async fn claim_ticket(
        &self,
        callbacks: &[SharedToolCallback],
        call: &ToolCallRequest,
        key: &str,
        ticket_id: &str,
    ) -> Result<Claim, RunError> {
        let journal = self.journal.as_ref().expect("a ticket is journaled");
        let ticket = journal.ticket(ticket_id).await?;
        let mismatch = |detail: String| RunError::JournalMismatch {
            run_id: journal.record.run_id.clone(),
            key: key.to_string(),
            detail,
        };
        let expired = |ticket: &Ticket| {
            let channel = callbacks
                .iter()
                .find(|c| c.definition().name == call.name)
                .and_then(|c| c.metadata().tool.and_then(|m| m.approval));
            Claim::Expired {
                reason: expiry_reason(ticket),
                channel: channel.map_or("approval", |c| c.name),
            }
        };
        match ticket.state {
            TicketState::Pending if crate::store::types::now_ms() >= ticket.expires_at_ms => {
                // Nobody decided in time: the call does not run (fail closed), the run goes on.
                let ticket = journal
                    .advance_ticket(ticket_id, TicketState::Pending, TicketState::Expired)
                    .await?;
                return Ok(expired(&ticket));
            }
            TicketState::Pending => return Ok(Claim::Pending(Box::new(ticket))),
            // Expired by an earlier resume that stopped before the call's outcome was journaled.
            TicketState::Expired => return Ok(expired(&ticket)),
            TicketState::Decided | TicketState::Executing => {}
            other => {
                return Err(mismatch(format!(
                    "its ticket `{ticket_id}` is {other:?} but the call has no recorded end"
                )));
            }
        }
        let callback = callbacks
            .iter()
            .find(|c| c.definition().name == call.name)
            .ok_or_else(|| mismatch(format!("the tool `{}` is not on this path", call.name)))?;
        let channel = callback.metadata().tool.and_then(|m| m.approval);
        let digest = &callback.metadata().policy_digest;
        if ticket.state == TicketState::Decided
            && (*ticket.chain_digest != **digest || channel.is_none())
        {
            // The policy changed since the ticket was made: ask again instead of applying it.
            journal
                .advance_ticket(ticket_id, TicketState::Decided, TicketState::Superseded)
                .await?;
            let Some(channel) = channel else {
                return Err(mismatch(
                    "the tool no longer has an approval channel".into(),
                ));
            };
            let renewed = journal
                .request_approval(ApprovalRequest {
                    key,
                    call_id: &call.id,
                    tool: &call.name,
                    channel,
                    input: &ticket.input,
                    chain_digest: digest,
                })
                .await?;
            self.notify(&renewed).await;
            return Ok(Claim::Pending(Box::new(renewed)));
        }
        if ticket.state == TicketState::Decided {
            // Consumed exactly once: a second resume finds it executing (under its own lease).
            journal
                .advance_ticket(ticket_id, TicketState::Decided, TicketState::Executing)
                .await?;
        }
        let decision = ticket
            .decision
            .clone()
            .ok_or_else(|| mismatch(format!("ticket `{ticket_id}` has no decision")))?;
        let (grant, arguments) = match decision {
            TicketDecision::Rejected { by, message } => {
                return Ok(Claim::Rejected {
                    by,
                    message,
                    channel: channel.map_or("approval", |c| c.name),
                });
            }
            TicketDecision::Edited { input, .. } => (ApprovalGrant::ApproverInput, Some(input)),
            TicketDecision::Approved { .. } => (
                ApprovalGrant::Approved {
                    fingerprint: ticket.fingerprint.clone(),
                },
                None,
            ),
        };
        let idempotency_key = journal.idempotency_key(key);
        journal
            .record_tool_started(
                key,
                &call.id,
                &call.name,
                &idempotency_key,
                callback.metadata().idempotent,
            )
            .await?;
        Ok(Claim::Run {
            grant,
            arguments,
            idempotency_key,
        })
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

/// What a journaled call waiting on a ticket may do now.
pub(super) enum Claim {
    /// Nothing yet: the ticket is pending.
    Pending(Box<Ticket>),
    /// Not run: nobody decided the ticket before its expiry (it is `Expired`).
    Expired {
        reason: String,
        channel: &'static str,
    },
    /// Not run: the approver rejected it.
    Rejected {
        by: String,
        message: String,
        channel: &'static str,
    },
    /// Run it (its start is journaled), with this grant and, for an edit, these arguments.
    Run {
        grant: ApprovalGrant,
        arguments: Option<String>,
        idempotency_key: String,
    },
}

/// Tells a stored ticket's channel (errors and panics caught: the ticket stays pending either
/// way, the failure is logged and returned).
pub(crate) async fn tell_channel(rt: &super::Runtime, ticket: &Ticket) -> Result<(), String> {
    let told = match rt.channels.get(ticket.channel.as_str()) {
        None => Err(format!(
            "channel `{}` is not part of this app",
            ticket.channel
        )),
        Some(channel) => match std::panic::AssertUnwindSafe(channel.notify(ticket))
            .catch_unwind()
            .await
        {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err("the channel panicked".to_string()),
        },
    };
    if let Err(error) = &told {
        tracing::error!(ticket = %ticket.id, channel = %ticket.channel, %error, "approval channel was not told of a ticket; it stays pending");
    }
    told
}

/// A human decision on a ticket, for [`App::decide`](crate::App::decide) and
/// [`App::resume`](crate::App::resume).
///
/// ```
/// use agboss_core::Approver;
/// use agboss_core::engine::Decision;
/// let d = Decision::approve("ticket_1").by(Approver::new("maria").role("manager"));
/// assert_eq!(d.ticket_id(), "ticket_1");
/// let r = Decision::reject("ticket_2", "Refunds above 100 need a receipt.").by(Approver::new("maria"));
/// let e = Decision::edit("ticket_3", r#"{"orderId":"ACME-42","amountCents":9000}"#).by(Approver::new("maria"));
/// # let _ = (r, e);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use = "a Decision does nothing until given to App::decide or App::resume"]
pub struct Decision {
    ticket_id: String,
    kind: DecisionKind,
    approver: Option<Approver>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum DecisionKind {
    Approve,
    Reject(String),
    Edit(String),
}

impl Decision {
    /// Run the call as requested.
    pub fn approve(ticket_id: impl Into<String>) -> Self {
        Self::new(ticket_id, DecisionKind::Approve)
    }
    /// Do not run it; `message` becomes the call's observation and the run goes on.
    pub fn reject(ticket_id: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(ticket_id, DecisionKind::Reject(message.into()))
    }
    /// Run it with `new_input` (JSON text) instead: it passes the tool's input DTO and its
    /// before chain again.
    pub fn edit(ticket_id: impl Into<String>, new_input: impl Into<String>) -> Self {
        Self::new(ticket_id, DecisionKind::Edit(new_input.into()))
    }
    /// Who decides (required: the channel authorizes them).
    pub fn by(mut self, approver: Approver) -> Self {
        self.approver = Some(approver);
        self
    }
    /// The ticket decided.
    pub fn ticket_id(&self) -> &str {
        &self.ticket_id
    }
    fn new(ticket_id: impl Into<String>, kind: DecisionKind) -> Self {
        Self {
            ticket_id: ticket_id.into(),
            kind,
            approver: None,
        }
    }
}

/// Records a decision: the ticket must be `tenant`'s, the approver authorized by its channel,
/// the ticket pending and not expired. Decided exactly once.
pub(crate) async fn decide(
    rt: &super::Runtime,
    tenant: &str,
    decision: Decision,
) -> Result<Ticket, RunError> {
    use crate::store::TicketStore as _;
    let store = &rt
        .store
        .as_ref()
        .ok_or(crate::store::StoreError::NotConfigured)?
        .store;
    let ticket = store.ticket(tenant, &decision.ticket_id).await?;
    let refuse = |approver: &str, reason: String| RunError::Unauthorized {
        approver: approver.to_string(),
        ticket_id: ticket.id.clone(),
        reason,
    };
    let Some(approver) = &decision.approver else {
        return Err(refuse(
            "",
            "the decision names no approver (`.by(..)`)".into(),
        ));
    };
    if approver
        .tenant
        .as_deref()
        .is_some_and(|t| t != ticket.tenant)
    {
        return Err(refuse(
            &approver.id,
            "the approver belongs to another tenant".into(),
        ));
    }
    let Some(channel) = rt.channels.get(ticket.channel.as_str()) else {
        return Err(refuse(
            &approver.id,
            format!("channel `{}` is not part of this app", ticket.channel),
        ));
    };
    let allowed = std::panic::AssertUnwindSafe(channel.authorize(approver, &ticket))
        .catch_unwind()
        .await;
    match allowed {
        Ok(Ok(true)) => {}
        Ok(Ok(false)) => return Err(refuse(&approver.id, "the channel refused them".into())),
        Ok(Err(e)) => return Err(refuse(&approver.id, format!("the channel failed: {e}"))),
        Err(_) => return Err(refuse(&approver.id, "the channel panicked".into())),
    }
    let by = approver.id.clone();
    let recorded = match decision.kind {
        DecisionKind::Approve => TicketDecision::Approved { by },
        DecisionKind::Reject(message) => TicketDecision::Rejected { by, message },
        DecisionKind::Edit(input) => TicketDecision::Edited { by, input },
    };
    Ok(store
        .decide_ticket(tenant, &ticket.id, &recorded, crate::store::types::now_ms())
        .await?)
}
