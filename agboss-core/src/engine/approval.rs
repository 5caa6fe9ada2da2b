//! The engine's side of gated calls in a journaled run (the agent loop's calls and workflow tool
//! steps): a call that waits for a human decision gets a ticket (written to the store before
//! its channel is told), the run stops with [`RunError::AwaitingApproval`], and a resumed run
//! claims each decided ticket through the one lifecycle ([`super::ticket`]) exactly once: an
//! approval runs the call (through the whole chain again, bound to the approved input's
//! fingerprint), an edit runs the approver's input (through the before chain again), a
//! rejection is what [`OnRejection`](super::ticket::OnRejection) makes of it on the path. A
//! ticket made under another policy (the call's resolved chain changed) is not applied: a new
//! ticket is requested.
use super::events::RunEvent;
use super::journal::RunJournal;
use super::run_error::RunError;
use super::state::RunState;
use super::ticket::{ApprovalRequest, Claim, OnRejection, Policy, Refusal, tell_channel};
use crate::callback::SharedToolCallback;
use crate::contract::channel::ApprovalGrant;
use crate::contract::outcome::{ToolCallError, ToolCallErrorKind};
use crate::engine::run_error::StepFailedError;
use crate::model::ToolCallRequest;
use crate::pipeline::observe::Observation;
use crate::store::Ticket;

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

/// Without a store a gated call cannot wait: the step fails (the tool did not run).
pub(super) fn approval_without_store(step: &str, error: ToolCallError) -> RunError {
    StepFailedError::from_tool_call(step, error).into()
}

/// Makes the ticket of a gated call, then tells its channel.
pub(super) async fn open_ticket(
    run: &RunState,
    journal: &RunJournal,
    key: &str,
    callbacks: &[SharedToolCallback],
    call: &ToolCallRequest,
    error: ToolCallError,
) -> Result<Ticket, RunError> {
    let ToolCallErrorKind::ApprovalRequired { input, .. } = error.kind() else {
        return Err(approval_without_store(&call.name, error));
    };
    let callback = callbacks.iter().find(|c| c.definition().name == call.name);
    let Some((callback, channel)) = callback.and_then(|c| {
        c.metadata()
            .tool
            .as_ref()
            .and_then(|m| m.approval)
            .map(|ch| (c, ch))
    }) else {
        return Err(approval_without_store(&call.name, error));
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
    notify(run, &ticket).await;
    Ok(ticket)
}

/// Tells the ticket's channel, after the ticket is stored. A failure leaves it pending.
pub(super) async fn notify(run: &RunState, ticket: &Ticket) {
    let notified = tell_channel(run.rt(), ticket).await;
    run.emit(|| RunEvent::ApprovalRequested {
        ticket: Box::new(ticket.clone()),
        notified: notified.clone(),
    });
}
/// What a journaled call waiting on a ticket may do now (see [`Tickets::claim`]).
pub(super) enum Settle {
    /// Nothing yet: the ticket is pending (again, if it was superseded).
    Wait(Box<Ticket>),
    /// Not run: rejected or expired; `channel` names the tool's channel.
    Refused {
        refusal: Refusal,
        channel: &'static str,
    },
    /// Run it (its start is journaled), with this grant and, for an edit, these arguments.
    Run {
        grant: ApprovalGrant,
        arguments: Option<String>,
        idempotency_key: String,
    },
}

/// Reads the ticket a journaled call waits on and claims it through the lifecycle
/// ([`Tickets::claim`]): what the call may do now. A ticket made under another policy is
/// superseded and a new one requested (the call is pending again); a call about to run has its
/// start journaled.
pub(super) async fn claim_ticket(
    run: &RunState,
    callbacks: &[SharedToolCallback],
    call: &ToolCallRequest,
    key: &str,
    ticket_id: &str,
) -> Result<Settle, RunError> {
    let journal = run.journal().expect("a ticket is journaled");
    let tickets = journal.tickets();
    let ticket = tickets.read(ticket_id).await?;
    let callback = callbacks.iter().find(|c| c.definition().name == call.name);
    let policy = callback.map(|c| Policy {
        digest: &c.metadata().policy_digest,
        channel: c.metadata().tool.as_ref().and_then(|m| m.approval),
    });
    let channel = policy.and_then(|p| p.channel);
    match tickets.claim(ticket, policy, key).await? {
        Claim::Pending(ticket) => Ok(Settle::Wait(ticket)),
        Claim::Refused(refusal) => Ok(Settle::Refused {
            refusal,
            channel: channel.map_or("approval", |c| c.name),
        }),
        Claim::Superseded(ticket) => {
            let (Some(channel), Some(policy)) = (channel, policy) else {
                return Err(RunError::JournalMismatch {
                    run_id: journal.record.run_id.clone(),
                    key: key.to_string(),
                    detail: "the tool no longer has an approval channel".into(),
                });
            };
            let renewed = journal
                .request_approval(ApprovalRequest {
                    key,
                    call_id: &call.id,
                    tool: &call.name,
                    channel,
                    input: &ticket.input,
                    chain_digest: policy.digest,
                })
                .await?;
            notify(run, &renewed).await;
            Ok(Settle::Wait(Box::new(renewed)))
        }
        Claim::Run {
            grant, arguments, ..
        } => {
            let idempotency_key = journal.idempotency_key(key);
            let idempotent = callback.is_some_and(|c| c.metadata().idempotent);
            journal
                .record_tool_started(key, &call.id, &call.name, &idempotency_key, idempotent)
                .await?;
            Ok(Settle::Run {
                grant,
                arguments,
                idempotency_key,
            })
        }
    }
}

/// A refused call of a journaled run (`call`, journal step `key`, waiting on `ticket_id`), as
/// `on` makes it on its path: its observation, journaled (in the thread when `visible`), or the
/// block that fails `step`. A rejected ticket is completed once that outcome is journaled.
#[expect(
    clippy::too_many_arguments,
    reason = "the call, its place in the journal and its ticket, and the path's meaning"
)]
pub(super) async fn refuse(
    journal: &RunJournal,
    on: OnRejection,
    step: &str,
    call: &ToolCallRequest,
    key: &str,
    ticket_id: &str,
    refusal: Refusal,
    channel: &'static str,
    visible: bool,
) -> Result<Observation, RunError> {
    let claimed = refusal.claimed();
    let refused = on.refuse(refusal, &call.name, &call.id, channel);
    if let Ok((obs, label)) = &refused {
        journal
            .record_tool_finished(key, &call.id, &call.name, label, obs, visible)
            .await?;
    }
    if claimed {
        journal.tickets().complete(ticket_id).await?;
    }
    match refused {
        Ok((obs, _)) => Ok(obs),
        Err(blocked) => Err(StepFailedError::from_tool_call(step, blocked.into()).into()),
    }
}
