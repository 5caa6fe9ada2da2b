//! Gated tools called directly (`app.tool::<T>().invoke(..)`): the call that needs approval
//! gets a ticket of its own one-call run (`direct_…`), returned in
//! `ToolCallErrorKind::ApprovalRequired { ticket_id }`; deciding it later runs the call once, through
//! the same chain, and returns its output ([`ToolHandle::resume`](crate::ToolHandle::resume)).

use super::Runtime;
use super::account;
use super::run_error::RunError;
use super::ticket::{
    ApprovalRequest, Claim, Decision, Policy, Refusal, Tickets, decide, lease_one_call,
    open_one_call, tell_channel,
};
use crate::cascade::BoundTool;
use crate::contract::channel::ApprovalGrant;
use crate::contract::outcome::{ToolCallError, ToolCallErrorKind};
use crate::engine::run_error::StepFailedError;
use crate::store::{
    Lease, RunEnd, RunStore as _, StepEntry, StoreError, Ticket, TicketState, TicketStore as _,
};

/// The key of a direct call's only step.
const DIRECT_KEY: &str = "direct";

/// Makes the ticket of a gated direct call (when the app has a store) and tells its channel;
/// returns the error with the ticket's id. Without a store, or if the ticket cannot be stored,
/// the error is returned as it is: the call did not run either way.
pub(crate) async fn ticket_direct_call(
    rt: &Runtime,
    bound: &BoundTool,
    tenant: &str,
    call_id: &str,
    error: ToolCallError,
) -> ToolCallError {
    let (tool_name, kind) = error.into_parts();
    let ToolCallErrorKind::ApprovalRequired {
        channel,
        input,
        fingerprint,
        ..
    } = kind
    else {
        return ToolCallError::new(tool_name, kind);
    };
    let made = make_ticket(rt, bound, tenant, call_id, &input).await;
    let ticket_id = match made {
        Ok(ticket) => {
            let _ = tell_channel(rt, &ticket).await;
            Some(ticket.id)
        }
        Err(err) => {
            tracing::error!(tool = %tool_name, error = %err, "no ticket for a direct call that needs approval");
            None
        }
    };
    ToolCallError::new(
        tool_name,
        ToolCallErrorKind::ApprovalRequired {
            channel,
            input,
            fingerprint,
            ticket_id,
        },
    )
}

async fn make_ticket(
    rt: &Runtime,
    bound: &BoundTool,
    tenant: &str,
    call_id: &str,
    input: &str,
) -> Result<Ticket, RunError> {
    let channel = bound.meta().approval.ok_or(StoreError::Unsupported {
        operation: "a ticket for a tool without approval channel",
    })?;
    let request = ApprovalRequest {
        key: DIRECT_KEY,
        call_id,
        tool: &bound.meta().name,
        channel,
        input,
        chain_digest: &bound.policy_digest(),
    };
    open_one_call(rt, tenant, "direct", &request).await
}

/// What a decided direct ticket lets run.
pub(crate) struct Claimed {
    pub(crate) ticket: Ticket,
    pub(crate) lease: Lease,
    /// The input to run (the requested one, or the approver's edit).
    pub(crate) input: String,
    pub(crate) grant: ApprovalGrant,
}

/// Decides a direct call's ticket and claims it for running, exactly once. A rejection, or a
/// ticket made under another policy (then a new ticket is requested), is an error.
pub(crate) async fn claim_direct(
    rt: &Runtime,
    bound: &BoundTool,
    tenant: &str,
    decision: Decision,
) -> Result<Claimed, RunError> {
    let durability = rt.durability()?;
    let store = &durability.store;
    let pending = store.ticket(tenant, decision.ticket_id()).await?;
    if !is_direct_ticket(&pending, bound) {
        return Err(StoreError::TicketNotFound {
            ticket_id: pending.id,
        }
        .into());
    }
    let ticket = decide(rt, tenant, decision).await?;
    claim_decided(rt, bound, tenant, ticket).await
}

/// Whether `ticket` is the ticket of a direct call of `bound` (not of an agent's or a
/// workflow's run).
pub(crate) fn is_direct_ticket(ticket: &Ticket, bound: &BoundTool) -> bool {
    ticket.step_key == DIRECT_KEY && ticket.tool == bound.meta().name
}

/// Claims a direct call's ticket decided earlier (by [`decide`], from any instance) for
/// running, exactly once: what [`claim_direct`] does after deciding. A rejection (the run is
/// then finished failed) or a ticket made under another policy (a new one is requested) is an
/// error; another claim in progress is [`StoreError::LeaseHeld`].
pub(crate) async fn claim_decided(
    rt: &Runtime,
    bound: &BoundTool,
    tenant: &str,
    ticket: Ticket,
) -> Result<Claimed, RunError> {
    let durability = rt.durability()?;
    let store = &durability.store;
    let lease = lease_one_call(rt, tenant, &ticket).await?;
    let step =
        |error: ToolCallError| RunError::Step(StepFailedError::from_tool_call(&ticket.tool, error));
    let tickets = Tickets::new(store, &lease, tenant);
    let channel = bound.meta().approval;
    let digest = bound.policy_digest();
    let policy = Policy {
        digest: &digest,
        channel,
    };
    let (ticket, input, grant) = match tickets
        .claim(ticket.clone(), Some(policy), DIRECT_KEY)
        .await?
    {
        Claim::Run {
            ticket,
            grant,
            arguments,
        } => {
            // The requested input, or the approver's edit.
            let input = arguments.unwrap_or_else(|| ticket.input.clone());
            (*ticket, input, grant)
        }
        Claim::Superseded(_) => {
            // Asked again under the policy in force now, never applied under the old one.
            store.release(&lease).await?;
            let again = make_ticket(rt, bound, tenant, &ticket.call_id, &ticket.input).await?;
            let _ = tell_channel(rt, &again).await;
            return Err(step(ToolCallError::new(
                ticket.tool.clone(),
                ToolCallErrorKind::ApprovalRequired {
                    channel: channel.map_or("", |c| c.name),
                    input: again.input,
                    fingerprint: again.fingerprint,
                    ticket_id: Some(again.id),
                },
            )));
        }
        Claim::Refused(refusal) => {
            // Decided just now: a rejection (the ticket is claimed) fails the call.
            let channel = channel.map_or("approval", |c| c.name);
            let label = refusal.label();
            let blocked = refusal.into_block(&ticket.tool, &ticket.call_id, channel);
            finish_direct(rt, &ticket, &lease, label, Err(blocked.to_string())).await?;
            return Err(step(blocked.into()));
        }
        Claim::Pending(_) => {
            store.release(&lease).await?;
            return Err(StoreError::TicketState {
                ticket_id: ticket.id.clone(),
                expected: TicketState::Decided,
                found: TicketState::Pending,
            }
            .into());
        }
    };
    Ok(Claimed {
        ticket,
        lease,
        input,
        grant,
    })
}

/// Journals a claimed direct call's result, with the label of how it was decided
/// ([`CallDecision::label`](crate::CallDecision::label), or a refusal's), and completes its
/// ticket and run.
pub(crate) use super::ticket::finish_one_call as finish_direct;

/// What a takeover does with run `run_id` of `tenant` if it is a direct call's or an account
/// request's (`None` when it is neither); a decided account request is settled
/// ([`account::settle`]). A direct call's run waits on its ticket: once nobody decided it before its expiry,
/// the ticket moves to `Expired`, the call's outcome is a [`ToolBlockedError`] from its channel
/// (journaled as the call's result, the run finished as failed) and returned; the call never
/// runs. A direct run whose ticket is still pending or decided is left to its caller
/// (`Some(Ok(()))`): deciding it claims and runs it.
pub(crate) async fn take_over_direct(
    rt: &Runtime,
    tenant: &str,
    run_id: &str,
) -> Result<Option<Result<(), RunError>>, RunError> {
    let durability = rt.durability()?;
    let store = &durability.store;
    let tickets = store.run_tickets(tenant, run_id).await?;
    let one_call = |t: &Ticket| t.step_key == DIRECT_KEY || t.is_account_request();
    let Some(ticket) = tickets.into_iter().find(one_call) else {
        return Ok(None);
    };
    let now = crate::store::types::now_ms();
    match ticket.state_at(now) {
        TicketState::Expired => {}
        // Nobody else claims an account request: the takeover settles it once decided.
        TicketState::Pending => return Ok(Some(Ok(()))),
        _ if ticket.is_account_request() => {
            return Ok(Some(account::settle(rt, tenant, ticket).await));
        }
        _ => return Ok(Some(Ok(()))),
    }
    let lease = lease_one_call(rt, tenant, &ticket).await?;
    let ticket = Tickets::new(store, &lease, tenant).expire(ticket).await?;
    let channel = rt
        .channels
        .get_key_value(ticket.channel.as_str())
        .map_or("approval", |(name, _)| *name);
    let refusal = Refusal::expired(&ticket);
    let label = refusal.label();
    let blocked = refusal.into_block(&ticket.tool, &ticket.call_id, channel);
    let entry = StepEntry::ToolFinished {
        key: ticket.step_key.clone(),
        call_id: ticket.call_id.clone(),
        tool: ticket.tool.clone(),
        decision: label.to_string(),
        content: blocked.to_string(),
        is_error: true,
        truncated: false,
    };
    store.append(&lease, &entry, &[]).await?;
    let end = RunEnd::Failed {
        error: blocked.to_string(),
    };
    store.finish_run(&lease, &end).await?;
    let error = StepFailedError::from_tool_call(&ticket.tool, blocked.into());
    Ok(Some(Err(RunError::Step(error))))
}

/// Withdraws `tenant`'s pending direct ticket (its caller gave up waiting): the ticket moves to
/// `Expired` before its expiry, so it can no longer be decided, the call's end is journaled as
/// `withdrawn` and its run finished failed. The call never runs.
#[cfg(feature = "mcp")]
pub(crate) async fn withdraw_direct(
    rt: &Runtime,
    tenant: &str,
    ticket: Ticket,
) -> Result<(), RunError> {
    let durability = rt.durability()?;
    let store = &durability.store;
    let lease = lease_one_call(rt, tenant, &ticket).await?;
    let ticket = Tickets::new(store, &lease, tenant).expire(ticket).await?;
    let text = format!(
        "The call of `{}` was withdrawn by its caller before a decision; it did not run.",
        ticket.tool
    );
    let entry = StepEntry::ToolFinished {
        key: DIRECT_KEY.to_string(),
        call_id: ticket.call_id.clone(),
        tool: ticket.tool.clone(),
        decision: "withdrawn".to_string(),
        content: text.clone(),
        is_error: true,
        truncated: false,
    };
    store.append(&lease, &entry, &[]).await?;
    store
        .finish_run(&lease, &RunEnd::Failed { error: text })
        .await?;
    Ok(())
}
