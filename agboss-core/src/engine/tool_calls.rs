//! The tool calls of one model turn: run concurrently through the agent's callback stack,
//! journaled one by one, each outcome read by the one observation policy
//! ([`crate::pipeline::observe`]); a gated call waits on its ticket.
use futures::StreamExt as _;

use super::admit::admit_tool;
use super::approval::{
    Attempt, Called, Settle, Slot, approval_without_store, claim_ticket, open_ticket, refuse,
};
use super::events::RunEvent;
use super::replay::{ToolReplay, tool_key};
use super::run_error::RunError;
use super::state::RunState;
use super::ticket::OnRejection;
use crate::callback::{SharedToolCallback, ToolInvocation};
use crate::contract::agent::ToolErrorPolicy;
use crate::contract::outcome::ToolCallError;
use crate::contract::outcome::{CallOutcome, FailureKind, Rendered, ToolCallErrorKind};
use crate::engine::run_error::StepFailedError;
use crate::model::ToolCallRequest;
use crate::pipeline::observe::{Observation, Reader, observe};

/// Runs one turn's calls, at most `parallel` at once; observations in the model's order. The
/// first call that fails the step drops the others still in flight.
pub(super) async fn run_calls(
    run: &RunState,
    step: &str,
    policy: ToolErrorPolicy,
    callbacks: &[SharedToolCallback],
    calls: &[ToolCallRequest],
    parallel: usize,
    turn: u32,
) -> Result<Vec<Observation>, RunError> {
    // A call in doubt stops the run before any call of its turn runs.
    check_in_doubt(run, calls, turn)?;
    let mut slots: Vec<Option<Observation>> = calls.iter().map(|_| None).collect();
    // Gated calls waiting for a decision; the turn goes on once every one is decided.
    let mut tickets = Vec::new();
    // Collected first: a lazy iterator of borrowing closures trips the `Send` check of the
    // boxed stream future (higher-ranked lifetime inference).
    let mut calls_futures = Vec::with_capacity(calls.len());
    for (i, call) in calls.iter().enumerate() {
        calls_futures.push(async move {
            // Reserved before anything of the call runs: a refused call never starts.
            if let Err(refused) = admit_tool(run, step, &call.name).await {
                return (i, Err(refused));
            }
            (i, run_one(run, step, policy, callbacks, call, turn).await)
        });
    }
    let mut pending = futures::stream::iter(calls_futures).buffer_unordered(parallel);
    // A call refused by a usage limit: the calls reserved before it finish (they were
    // admitted), then the step fails with it.
    let mut refused: Option<(usize, RunError)> = None;
    loop {
        let next = match run.or_cancel(pending.next()).await {
            Ok(next) => next,
            Err(cancelled) => {
                drop(pending);
                emit_cancelled(run, step, calls, &slots, None);
                return Err(cancelled);
            }
        };
        match next {
            None => break,
            Some((i, Ok(Slot::Done(obs)))) => slots[i] = Some(obs),
            Some((_, Ok(Slot::Pending(ticket)))) => tickets.push(*ticket),
            Some((i, Err(err @ RunError::UsageLimit(_)))) => {
                refused.get_or_insert((i, err));
            }
            Some((i, Err(err))) => {
                // Dropping the stream drops (cancels) every sibling still running or queued.
                drop(pending);
                emit_cancelled(run, step, calls, &slots, Some(i));
                return Err(err);
            }
        }
    }
    if let Some((i, err)) = refused {
        emit_cancelled(run, step, calls, &slots, Some(i));
        return Err(err);
    }
    if !tickets.is_empty() {
        // Every call that needed no approval ran and is journaled: a resume reads it back.
        let run_id = run
            .journal()
            .map(|j| j.record.run_id.clone())
            .unwrap_or_default();
        tickets.sort_by_key(|t| {
            calls
                .iter()
                .position(|c| c.id == t.call_id)
                .unwrap_or(usize::MAX)
        });
        return Err(RunError::AwaitingApproval { run_id, tickets });
    }
    Ok(slots
        .into_iter()
        .map(|s| s.expect("every call of the turn finished"))
        .collect())
}

fn emit_cancelled(
    run: &RunState,
    step: &str,
    calls: &[ToolCallRequest],
    slots: &[Option<Observation>],
    failed: Option<usize>,
) {
    for (j, call) in calls.iter().enumerate() {
        if slots[j].is_none() && Some(j) != failed {
            tracing::debug!(step, call_id = %call.id, tool = %call.name, "tool call cancelled");
            run.emit(|| RunEvent::ToolCallCancelled {
                step: step.to_string(),
                call_id: call.id.clone(),
                tool: call.name.clone(),
            });
        }
    }
}

/// [`RunError::InDoubt`] for the first call of the turn that started, has no recorded end
/// and may not run again.
fn check_in_doubt(run: &RunState, calls: &[ToolCallRequest], turn: u32) -> Result<(), RunError> {
    let Some(journal) = run.journal() else {
        return Ok(());
    };
    for call in calls {
        let key = tool_key(turn, &call.id);
        if let ToolReplay::Started {
            idempotent: false,
            call_id,
            tool,
            ..
        } = journal.tool_state(&key)
        {
            run.emit(|| RunEvent::ToolCallInDoubt {
                step: journal.record.target.clone(),
                call_id: call_id.clone(),
                tool: tool.clone(),
            });
            return Err(RunError::InDoubt {
                run_id: journal.record.run_id.clone(),
                call_id,
                tool,
                key,
            });
        }
    }
    Ok(())
}

/// One call, journaled: a finished call of a resumed run is read back; otherwise its start
/// is recorded before it runs and its observation before the run goes on.
async fn run_one(
    run: &RunState,
    step: &str,
    policy: ToolErrorPolicy,
    callbacks: &[SharedToolCallback],
    call: &ToolCallRequest,
    turn: u32,
) -> Result<Slot, RunError> {
    let Some(journal) = run.journal() else {
        return match call_tool(run, step, policy, callbacks, call, Attempt::first(None)).await? {
            Called::Observed(obs, _) => Ok(Slot::Done(obs)),
            Called::NeedsApproval(error) => Err(approval_without_store(step, error)),
        };
    };
    let key = tool_key(turn, &call.id);
    let idempotency_key = match journal.tool_state(&key) {
        ToolReplay::Finished(obs) => return Ok(Slot::Done(obs)),
        // Boxed: a resumed gated call is the rare path, and its ticket's claim held inline
        // would make every call's future larger.
        ToolReplay::Awaiting { ticket_id } => {
            let settled = settle_ticket(run, step, policy, callbacks, call, &key, &ticket_id);
            return Box::pin(settled).await;
        }
        // Checked before the turn ran: only idempotent calls are left here.
        ToolReplay::Started {
            idempotency_key, ..
        } => idempotency_key,
        ToolReplay::Fresh => {
            let idempotency_key = journal.idempotency_key(&key);
            let idempotent = callbacks
                .iter()
                .find(|c| c.definition().name == call.name)
                .is_some_and(|c| c.metadata().idempotent);
            journal
                .record_tool_started(&key, &call.id, &call.name, &idempotency_key, idempotent)
                .await?;
            idempotency_key
        }
    };
    match call_tool(
        run,
        step,
        policy,
        callbacks,
        call,
        Attempt::first(Some(&idempotency_key)),
    )
    .await?
    {
        Called::Observed(obs, decision) => {
            journal
                .record_tool_finished(&key, &call.id, &call.name, decision, &obs, true)
                .await?;
            Ok(Slot::Done(obs))
        }
        Called::NeedsApproval(error) => {
            let ticket = Box::pin(open_ticket(run, journal, &key, callbacks, call, error)).await?;
            Ok(Slot::Pending(Box::new(ticket)))
        }
    }
}

/// One call: its observation (with its decision's label), a gated call's need for approval
/// (journaled runs only), or the error that fails the step.
pub(super) async fn call_tool(
    run: &RunState,
    step: &str,
    policy: ToolErrorPolicy,
    callbacks: &[SharedToolCallback],
    call: &ToolCallRequest,
    attempt: Attempt<'_>,
) -> Result<Called, RunError> {
    let policy = run
        .ctx()
        .tool_errors
        .get(call.name.as_str())
        .copied()
        .unwrap_or(policy);
    let Some(callback) = callbacks.iter().find(|c| c.definition().name == call.name) else {
        let known: Vec<&str> = callbacks
            .iter()
            .map(|c| c.definition().name.as_str())
            .collect();
        // The name is the model's text: quoted bounded, like every error text.
        let name = crate::dto::bounded(call.name.clone());
        let reason = if known.is_empty() {
            format!("Unknown tool `{name}`: no tools are available.")
        } else {
            format!(
                "Unknown tool `{name}`. The tools you can call are: {}.",
                known.join(", ")
            )
        };
        let mut outcome = CallOutcome::failed(
            FailureKind::Rejected,
            ToolCallError::new(name, ToolCallErrorKind::NotInApp),
        );
        if let CallOutcome::Failed(failure) = &mut outcome {
            failure.set_report(reason);
        }
        let (obs, label) = observed(run, step, call, outcome, policy, &|t| t.into())?;
        return Ok(Called::Observed(obs, label));
    };
    // An empty argument text is an empty object; anything else goes to the input DTO as is
    // (text that is not JSON is one of its errors).
    let arguments = attempt.arguments.unwrap_or(call.arguments.as_str());
    let arguments = if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    };
    let invocation = ToolInvocation::new(&call.id, arguments)
        .with_tenant(run.ctx().tenant.as_ref())
        .with_idempotency_key(attempt.idempotency_key)
        .with_approval(attempt.grant);
    // Runs started inside the call (a tool that runs an agent) nest in this run's budget.
    let outcome = match super::nesting::calling(run.lent(), callback.call(invocation)).await {
        // A journaled run makes a ticket of it; any other run fails the step (below).
        CallOutcome::Failed(failure)
            if failure.kind() == FailureKind::Approval && run.journal().is_some() =>
        {
            let outcome: CallOutcome<Rendered> = CallOutcome::Failed(failure);
            let decision = outcome.decision();
            run.emit(|| RunEvent::ToolCallDecision {
                step: step.to_string(),
                call_id: call.id.clone(),
                tool: call.name.clone(),
                decision,
            });
            let CallOutcome::Failed(failure) = outcome else {
                unreachable!("matched above")
            };
            return Ok(Called::NeedsApproval(failure.into_error()));
        }
        outcome => outcome,
    };
    let (obs, label) = observed(run, step, call, outcome, policy, &|t| {
        callback.mask_for_model(t)
    })?;
    Ok(Called::Observed(obs, label))
}

/// Reads an outcome with the observation policy and reports it as events; returns the
/// observation with the decision's label.
fn observed(
    run: &RunState,
    step: &str,
    call: &ToolCallRequest,
    outcome: CallOutcome,
    policy: ToolErrorPolicy,
    mask: &dyn Fn(&str) -> std::borrow::Cow<'_, str>,
) -> Result<(Observation, &'static str), RunError> {
    let observed = observe(&call.name, &call.id, outcome, Reader::Model(policy), mask);
    match &observed.verdict {
        Ok(obs) if obs.is_error => {
            tracing::debug!(step, call_id = %call.id, tool = %call.name, decision = ?observed.decision, "tool call refused or failed; reported to the model")
        }
        Ok(_) => {}
        Err(err) if err.is_guard_failure() => {
            tracing::error!(step, call_id = %call.id, tool = %call.name, error = %err, "tool call guard failed or blocked: the step fails")
        }
        Err(err) => {
            tracing::warn!(step, call_id = %call.id, tool = %call.name, error = %err, "tool call failed: the step fails")
        }
    }
    let decision = observed.decision;
    let label = decision.label();
    run.emit(|| RunEvent::ToolCallDecision {
        step: step.to_string(),
        call_id: call.id.clone(),
        tool: call.name.clone(),
        decision,
    });
    if let Some(error) = observed.tool_error {
        tracing::warn!(step, call_id = %call.id, tool = %call.name, %error, ?policy, "tool failed");
        run.emit(|| RunEvent::ToolError {
            step: step.to_string(),
            call_id: call.id.clone(),
            tool: call.name.clone(),
            error,
        });
    }
    match observed.verdict {
        Ok(obs) => {
            run.emit(|| RunEvent::ToolResult {
                step: step.to_string(),
                call_id: call.id.clone(),
                tool: call.name.clone(),
                content: obs.content.clone(),
                is_error: obs.is_error,
                truncated: obs.truncated,
            });
            Ok((obs, label))
        }
        Err(err) => Err(StepFailedError::from_tool_call(step, err).into()),
    }
}

/// A call of a resumed agent run that waits on `ticket_id`: still pending, or settled once.
pub(super) async fn settle_ticket(
    run: &RunState,
    step: &str,
    policy: ToolErrorPolicy,
    callbacks: &[SharedToolCallback],
    call: &ToolCallRequest,
    key: &str,
    ticket_id: &str,
) -> Result<Slot, RunError> {
    let journal = run.journal().expect("a ticket is journaled");
    let (obs, label) = match claim_ticket(run, callbacks, call, key, ticket_id).await? {
        Settle::Wait(ticket) => return Ok(Slot::Pending(ticket)),
        Settle::Refused { refusal, channel } => {
            // The model reads why the call did not run; the loop goes on.
            let on = OnRejection::Observation;
            let obs = refuse(
                journal, on, step, call, key, ticket_id, refusal, channel, true,
            )
            .await?;
            return Ok(Slot::Done(obs));
        }
        Settle::Run {
            grant,
            arguments,
            idempotency_key,
        } => {
            let attempt = Attempt {
                idempotency_key: Some(&idempotency_key),
                arguments: arguments.as_deref(),
                grant: Some(&grant),
            };
            match call_tool(run, step, policy, callbacks, call, attempt).await? {
                Called::Observed(obs, label) => (obs, label),
                // An approval binds the input it was given for: nothing else runs on it.
                Called::NeedsApproval(error) => {
                    return Err(approval_without_store(step, error));
                }
            }
        }
    };
    journal
        .record_tool_finished(key, &call.id, &call.name, label, &obs, true)
        .await?;
    journal.tickets().complete(ticket_id).await?;
    Ok(Slot::Done(obs))
}
