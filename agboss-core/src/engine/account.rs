//! Account requests: a call to a remote MCP server that found no credential of its tenant asks
//! a human, on the channel the server's config names, to connect the tenant's account. The
//! request is a ticket ([`CONNECT_ACCOUNT_STEP`]) of a one-call run of its own, made and
//! settled through the one lifecycle ([`super::ticket`]) like a gated direct call's
//! ([`super::direct`]); no call waits on it and approving it runs nothing.
//!
//! - [`request`]: the pending request of a (server, tenant), or a new one: at most one is
//!   pending per (server, tenant).
//! - [`settle`]: a decided request, taken up by [`App::take_over_runs`](crate::App::take_over_runs):
//!   claimed, its outcome journaled (`connected` for an approval or an edit, the approver's
//!   message for a rejection), the ticket completed and its run finished.
use super::Runtime;
use super::run_error::RunError;
use super::ticket::{
    ApprovalRequest, Claim, Policy, Refusal, Tickets, finish_one_call, lease_one_call,
    open_one_call,
};
use crate::contract::channel::ChannelMeta;
use crate::stamp::sha256_hex;
use crate::store::types::{now_ms, random_id};
use crate::store::{
    CONNECT_ACCOUNT_STEP, MAX_TICKET_PAGE, RunEnd, RunStore as _, Ticket, TicketQuery, TicketState,
    TicketStore as _,
};

/// `tenant`'s pending request to connect its account on `server` (on `channel`), or a new one
/// when it has none: `(ticket, true)` when it was made now (its channel is not told yet).
/// Callers serialize their requests (one per app at a time), so repeated calls of one
/// instance raise one; two instances racing may each raise one.
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub(crate) async fn request(
    rt: &Runtime,
    server: &str,
    channel: &'static ChannelMeta,
    tenant: &str,
) -> Result<(Ticket, bool), RunError> {
    let store = &rt.durability()?.store;
    let mut query = TicketQuery::new()
        .pending()
        .channel(channel.name)
        .limit(MAX_TICKET_PAGE);
    let now = now_ms();
    loop {
        let page = store.list_tickets(tenant, &query).await?;
        let pending = page.tickets.into_iter().find(|t| {
            t.is_account_request() && t.tool == server && t.state_at(now) == TicketState::Pending
        });
        if let Some(ticket) = pending {
            return Ok((ticket, false));
        }
        match page.next_offset {
            Some(offset) => query = query.offset(offset),
            None => break,
        }
    }
    let input = serde_json::json!({ "server": server, "tenant": tenant }).to_string();
    let request = ApprovalRequest {
        key: CONNECT_ACCOUNT_STEP,
        call_id: &random_id("connect"),
        tool: server,
        channel,
        input: &input,
        chain_digest: &policy_digest(server),
    };
    Ok((open_one_call(rt, tenant, "account", &request).await?, true))
}

/// The digest an account request is made under: the server's (the request has no chain).
fn policy_digest(server: &str) -> String {
    sha256_hex(format!("{CONNECT_ACCOUNT_STEP}:{server}").as_bytes())
}

/// Settles a decided (or claimed) account request of `tenant`: claimed once through the
/// lifecycle, its outcome journaled, the ticket completed and the run finished. An approval
/// (or an edit: the request has no input to change) is recorded as `connected`; it grants
/// nothing, the credential store stays the only source of credentials. A rejection finishes
/// the run failed with the approver's message. A request whose channel is gone from the
/// program is superseded (the next call without a credential asks again).
pub(crate) async fn settle(rt: &Runtime, tenant: &str, ticket: Ticket) -> Result<(), RunError> {
    let durability = rt.durability()?;
    let store = &durability.store;
    let lease = lease_one_call(rt, tenant, &ticket).await?;
    let channel = channel_meta(&ticket.channel);
    let policy = Policy {
        digest: &policy_digest(&ticket.tool),
        channel,
    };
    let key = ticket.step_key.clone();
    let finished = match ticket.state {
        TicketState::Decided | TicketState::Executing => {
            let requested = ticket.clone();
            match Tickets::new(store, &lease, tenant)
                .claim(ticket, Some(policy), &key)
                .await?
            {
                Claim::Run { ticket, .. } => {
                    let by = ticket.decision.as_ref().map_or("", |d| d.approver());
                    let text = format!(
                        "The account of tenant `{tenant}` on MCP server `{}` was connected (approved by {by}).",
                        ticket.tool
                    );
                    return finish_one_call(rt, &ticket, &lease, "approved", Ok(text)).await;
                }
                Claim::Refused(refusal) => {
                    let label = refusal.label();
                    let claimed = refusal.claimed();
                    let why = match refusal {
                        Refusal::Rejected { by, message } => format!(
                            "{by} refused to connect the account of tenant `{tenant}` on MCP server `{}`: {message}",
                            requested.tool
                        ),
                        Refusal::Expired { reason } => reason,
                    };
                    if claimed {
                        return finish_one_call(rt, &requested, &lease, label, Err(why)).await;
                    }
                    why
                }
                Claim::Superseded(ticket) => format!(
                    "The request to connect the account on `{}` was superseded; the next call without a credential asks again.",
                    ticket.tool
                ),
                Claim::Pending(_) => return Ok(store.release(&lease).await?),
            }
        }
        // Settled before a crash, its run not finished yet.
        _ => format!(
            "The request to connect the account on `{}` ended {}.",
            ticket.tool,
            ticket.state.as_str()
        ),
    };
    store
        .finish_run(&lease, &RunEnd::Failed { error: finished })
        .await?;
    Ok(())
}

/// A registered `#[channel]` by name.
pub(crate) fn channel_meta(name: &str) -> Option<&'static ChannelMeta> {
    crate::contract::registry::all().find_map(|r| match r {
        crate::contract::registry::Registration::Channel(m) if m.name == name => Some(*m),
        _ => None,
    })
}
