//! A workflow's tool step: one call of a tool on the workflow's path (no model reads its
//! outcome: a reply fails the step), journaled like an agent's call. A gated tool's step waits
//! for its ticket like an agent's call does; a rejection fails the step as a block naming the
//! channel.
use super::admit::admit_tool;
use super::approval::{Settle, approval_without_store, claim_ticket, open_ticket, refuse};
use super::events::{RunEvent, StepKind, StepOutcome};
use super::replay::{ToolReplay, step_key};
use super::run_error::RunError;
use super::state::RunState;
use super::ticket::OnRejection;
use crate::callback::{BoundToolCallback, SharedToolCallback, ToolInvocation};
use crate::cascade::ResolvedWorkflow;
use crate::contract::channel::ApprovalGrant;
use crate::contract::outcome::{ToolCallError, ToolCallErrorKind};
use crate::contract::scope::{ScopeKind, ScopeRef};
use crate::di::CallId;
use crate::engine::run_error::StepFailedError;
use crate::model::ToolCallRequest;
use crate::pipeline::observe::{Observation, Reader, observe};

/// How one attempt of a tool step ended.
enum StepCall {
    Done(Observation, &'static str),
    NeedsApproval(ToolCallError),
}

pub(super) async fn run_tool_step(
    run: &RunState,
    workflow: &ResolvedWorkflow,
    name: &'static str,
    input: String,
) -> Result<String, RunError> {
    run.emit(|| RunEvent::StepStarted {
        step: name.to_string(),
        kind: StepKind::Tool,
        input: input.clone(),
    });
    let result = tool_step(run, workflow, name, &input).await;
    run.emit(|| RunEvent::StepFinished {
        step: name.to_string(),
        kind: StepKind::Tool,
        outcome: StepOutcome::of(&result),
    });
    result
}

async fn tool_step(
    run: &RunState,
    workflow: &ResolvedWorkflow,
    name: &'static str,
    input: &str,
) -> Result<String, RunError> {
    let bound = workflow
        .tools
        .iter()
        .find(|t| t.meta().name == name)
        .expect("checked before the run");
    let scopes = [
        ScopeRef {
            kind: ScopeKind::Application,
            name: run.rt().resolved.name,
        },
        ScopeRef {
            kind: ScopeKind::Workflow,
            name: workflow.meta.name,
        },
    ];
    let callbacks = run.callbacks(None, &scopes, vec![BoundToolCallback::shared(bound)]);
    let Some(callback) = callbacks
        .iter()
        .find(|c| c.definition().name == name)
        .or(callbacks.first())
    else {
        return Err(StepFailedError::Other {
            step: name.to_string(),
            message: "the callback wrapper removed the tool".to_string(),
        }
        .into());
    };
    let Some(journal) = run.journal() else {
        let call_id = CallId::generate();
        return match step_call(run, name, callback, call_id.as_str(), input, None, None).await? {
            StepCall::Done(obs, _) => Ok(obs.content),
            StepCall::NeedsApproval(error) => Err(approval_without_store(name, error)),
        };
    };
    // A journaled step has a call id and an idempotency key derived from its place in the
    // run, the same on every attempt.
    let n = journal.next_tool_step();
    let key = step_key(n, name);
    let call_id = format!("step_{n}");
    let call = ToolCallRequest::new(&call_id, name, input);
    let idempotency_key = match journal.tool_state(&key) {
        ToolReplay::Finished(obs) => return Ok(obs.content),
        ToolReplay::Started {
            idempotent: false,
            call_id,
            tool,
            ..
        } => {
            return Err(RunError::InDoubt {
                run_id: journal.record.run_id.clone(),
                call_id,
                tool,
                key,
            });
        }
        ToolReplay::Started {
            idempotency_key, ..
        } => idempotency_key,
        ToolReplay::Awaiting { ticket_id } => {
            let settled = settle_step_ticket(run, &callbacks, callback, &call, &key, &ticket_id);
            return Box::pin(settled).await;
        }
        ToolReplay::Fresh => {
            let idempotency_key = journal.idempotency_key(&key);
            journal
                .record_tool_started(
                    &key,
                    &call_id,
                    name,
                    &idempotency_key,
                    bound.meta().idempotent,
                )
                .await?;
            idempotency_key
        }
    };
    match step_call(
        run,
        name,
        callback,
        &call_id,
        input,
        Some(&idempotency_key),
        None,
    )
    .await?
    {
        StepCall::Done(obs, label) => {
            journal
                .record_tool_finished(&key, &call_id, name, label, &obs, false)
                .await?;
            Ok(obs.content)
        }
        StepCall::NeedsApproval(error) => {
            let ticket = open_ticket(run, journal, &key, &callbacks, &call, error).await?;
            Err(RunError::AwaitingApproval {
                run_id: journal.record.run_id.clone(),
                tickets: vec![ticket],
            })
        }
    }
}

/// A tool step of a resumed run waiting on `ticket_id`.
async fn settle_step_ticket(
    run: &RunState,
    callbacks: &[SharedToolCallback],
    callback: &SharedToolCallback,
    call: &ToolCallRequest,
    key: &str,
    ticket_id: &str,
) -> Result<String, RunError> {
    let journal = run.journal().expect("a ticket is journaled");
    let name = callback.metadata().tool.as_ref().map_or("", |m| &*m.name);
    let (obs, label) = match claim_ticket(run, callbacks, call, key, ticket_id).await? {
        Settle::Wait(ticket) => {
            return Err(RunError::AwaitingApproval {
                run_id: journal.record.run_id.clone(),
                tickets: vec![*ticket],
            });
        }
        Settle::Refused { refusal, channel } => {
            // No model reads a step's outcome: the refusal fails the step.
            let on = OnRejection::Failure;
            let obs = refuse(
                journal, on, name, call, key, ticket_id, refusal, channel, false,
            )
            .await?;
            return Ok(obs.content);
        }
        Settle::Run {
            grant,
            arguments,
            idempotency_key,
        } => {
            let input = arguments.as_deref().unwrap_or(&call.arguments);
            match step_call(
                run,
                name,
                callback,
                &call.id,
                input,
                Some(&idempotency_key),
                Some(&grant),
            )
            .await?
            {
                StepCall::Done(obs, label) => (obs, label),
                StepCall::NeedsApproval(error) => {
                    return Err(approval_without_store(name, error));
                }
            }
        }
    };
    journal
        .record_tool_finished(key, &call.id, &call.name, label, &obs, false)
        .await?;
    journal.tickets().complete(ticket_id).await?;
    Ok(obs.content)
}

/// One attempt of a tool step: its observation, its need for approval (journaled runs), or
/// the error that fails the step.
async fn step_call(
    run: &RunState,
    name: &str,
    callback: &SharedToolCallback,
    call_id: &str,
    input: &str,
    idempotency_key: Option<&str>,
    grant: Option<&ApprovalGrant>,
) -> Result<StepCall, RunError> {
    let invocation = ToolInvocation::new(call_id, input)
        .with_tenant(run.ctx().tenant.as_ref())
        .with_idempotency_key(idempotency_key)
        .with_approval(grant);
    admit_tool(run, name, name).await?;
    let outcome = run
        .or_cancel(super::nesting::calling(
            run.lent(),
            callback.call(invocation),
        ))
        .await?;
    let observed = observe(name, call_id, outcome, Reader::Step, &|t| {
        callback.mask_for_model(t)
    });
    let decision = observed.decision;
    let label = decision.label();
    run.emit(|| RunEvent::ToolCallDecision {
        step: name.to_string(),
        call_id: call_id.to_string(),
        tool: name.to_string(),
        decision,
    });
    match observed.verdict {
        Ok(obs) => {
            run.emit(|| RunEvent::ToolResult {
                step: name.to_string(),
                call_id: call_id.to_string(),
                tool: name.to_string(),
                content: obs.content.clone(),
                is_error: false,
                truncated: obs.truncated,
            });
            Ok(StepCall::Done(obs, label))
        }
        Err(error)
            if run.journal().is_some()
                && matches!(error.kind(), ToolCallErrorKind::ApprovalRequired { .. }) =>
        {
            Ok(StepCall::NeedsApproval(error))
        }
        Err(err) => Err(StepFailedError::from_tool_call(name, err).into()),
    }
}
