//! A ticket of a one-call run of its own: what a gated direct call waits on
//! ([`super::super::direct`]) and what a missing MCP credential raises
//! ([`super::super::account`]). The run is begun, the ticket opened (through [`Tickets`])
//! and its request journaled under the run's lease, which is then released: deciding the
//! ticket is what takes the run up again.
use super::lifecycle::{ApprovalRequest, Tickets};
use crate::engine::Runtime;
use crate::engine::run_error::RunError;
use crate::store::types::random_id;
use crate::store::{Lease, NewRun, RunEnd, RunStore as _, StepEntry, StoreError, Ticket};

/// Begins a one-call run of `tenant` (its id `<prefix>_…`, its target the request's tool) and
/// stores `request`'s ticket in it, pending. The channel is not told here.
pub(crate) async fn open_one_call(
    rt: &Runtime,
    tenant: &str,
    prefix: &str,
    request: &ApprovalRequest<'_>,
) -> Result<Ticket, RunError> {
    let durability = rt.durability()?;
    let run = NewRun::new(tenant, random_id(prefix), request.tool, request.input);
    let (record, lease) = durability
        .store
        .begin_run(run, &durability.worker, durability.lease_ttl)
        .await?;
    let ticket = request.ticket(tenant, None, &record.run_id);
    let store = &durability.store;
    let written = async {
        Tickets::new(store, &lease, tenant).open(&ticket).await?;
        let entry = StepEntry::ApprovalRequested {
            key: request.key.to_string(),
            call_id: request.call_id.to_string(),
            tool: ticket.tool.clone(),
            ticket_id: ticket.id.clone(),
        };
        store.append(&lease, &entry, &[]).await?;
        Ok::<_, StoreError>(())
    }
    .await;
    let released = store.release(&lease).await;
    written?;
    released?;
    Ok(ticket)
}

/// Takes `ticket`'s one-call run of `tenant` up again under this instance's lease: what
/// claiming, settling, expiring or withdrawing the ticket writes under.
pub(crate) async fn lease_one_call(
    rt: &Runtime,
    tenant: &str,
    ticket: &Ticket,
) -> Result<Lease, RunError> {
    let durability = rt.durability()?;
    let run = NewRun::new(tenant, &ticket.run_id, &ticket.tool, &ticket.input);
    let (_, lease) = durability
        .store
        .begin_run(run, &durability.worker, durability.lease_ttl)
        .await?;
    Ok(lease)
}

/// Journals a claimed one-call ticket's result under its journal key, with the label of how
/// it was decided ([`CallDecision::label`](crate::CallDecision::label), or a refusal's), and
/// completes the ticket and the run.
pub(crate) async fn finish_one_call(
    rt: &Runtime,
    ticket: &Ticket,
    lease: &Lease,
    label: &str,
    result: Result<String, String>,
) -> Result<(), RunError> {
    let store = &rt.durability()?.store;
    let (content, is_error) = match &result {
        Ok(text) => (text.clone(), false),
        Err(text) => (text.clone(), true),
    };
    let entry = StepEntry::ToolFinished {
        key: ticket.step_key.clone(),
        call_id: ticket.call_id.clone(),
        tool: ticket.tool.clone(),
        decision: label.to_string(),
        content,
        is_error,
        truncated: false,
    };
    store.append(lease, &entry, &[]).await?;
    Tickets::new(store, lease, &ticket.tenant)
        .complete(&ticket.id)
        .await?;
    let end = match result {
        Ok(output) => RunEnd::Completed { output },
        Err(error) => RunEnd::Failed { error },
    };
    store.finish_run(lease, &end).await?;
    Ok(())
}
